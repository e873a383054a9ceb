"""Every row of every machine is fired by exploration: the spec's freedoms are the simulated
peers' choices, so exploration covers the whole model, not a smaller one.

The exhaustive slices alone (``explore_bfs.SLICES``, each searched once per test process:
``tests.explored``) are the fast check; the
union of the default ``acp-model explore`` modes is the deep one. The fast check also holds the
slices to taking every freedom (MAY rule) the catalogue maps to peer moves, each of those moves
at least once (``KNOWN_UNTAKEN`` aside). ``KNOWN_UNFIRED`` names each
row that is still not fired and why: a new gap fails the test, and so does a gap that closed
(remove it from the list).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from simulator.explore import bfs as explore_bfs
from simulator.explore.coverage import freedom_coverage, machine_coverage
from simulator.explore.run import Options
from simulator.explore.run import run as run_explore
from tests.explored import default_slice

KNOWN_UNFIRED: dict[str, dict[str, str]] = {}
KNOWN_UNTAKEN: dict[str, str] = {
    "agent.reject[empty]": "USER-02: only a seeded Client bug (empty-prompt) sends an empty prompt",
}
"""The moves ``properties.catalogue.FREEDOMS`` names that the exhaustive slices never take, and
why (as ``KNOWN_UNFIRED``: a new one fails the test, and so does one that is now taken)."""


def _missed(machines: list[dict[str, object]]) -> dict[str, set[str]]:
    return {
        str(m["name"]): set(m["transitions_missed"])  # type: ignore[call-overload]
        for m in machines
        if m.get("transitions_missed")
    }


def _known() -> dict[str, set[str]]:
    return {name: set(rows) for name, rows in KNOWN_UNFIRED.items()}


def test_the_exhaustive_slices_fire_every_row_and_take_every_freedom() -> None:
    rows: Counter[tuple[str, str, str, str]] = Counter()
    events: Counter[str] = Counter()
    for s in explore_bfs.SLICES:
        res = default_slice(s.name)
        assert res.complete, s.name
        rows.update(res.rows)
        events.update(res.events)
    machines = machine_coverage(rows)
    assert _missed(machines) == _known()
    triggers = next(m for m in machines if m["name"] == "entity")
    assert triggers["triggers_missed"] == []
    freedoms = freedom_coverage(events, [(s.cfg, frozenset()) for s in explore_bfs.SLICES])
    assert freedoms["never_taken"] == [] and freedoms["beyond_bounds"] == ["USER-02"]
    untaken = {move for moves in freedoms["by_move"].values() for move, n in moves.items() if not n}
    assert untaken == set(KNOWN_UNTAKEN)


ROWS_BEHIND_READINGS = (
    ("bg_requests", "waited-on-background", "becomes-foreground",
     ("background_item", "listed", "adopt", "announced")),
    ("cancels", "rejected-after-cancel-request", "own-reason",
     ("prompt", "cancel_requested", "reject", "rejected")),
)  # fmt: skip


@pytest.mark.parametrize(("slice_name", "reading", "alt", "row"), ROWS_BEHIND_READINGS)
def test_a_row_behind_a_reading_fires_under_it(
    slice_name: str, reading: str, alt: str, row: tuple[str, str, str, str]
) -> None:
    """A row whose move only a reading's alternative allows is a freedom of that reading's
    peers: exploring the slice under the alternative fires it, and under the default it never
    fires."""
    sl = next(s for s in explore_bfs.SLICES if s.name == slice_name)
    under = replace(sl.cfg, readings=((reading, alt),))
    assert explore_bfs.explore(under, name=sl.name).rows[row] > 0
    assert default_slice(sl.name).rows[row] == 0


@pytest.mark.deep
def test_the_default_explore_fires_every_row(tmp_path: Path) -> None:
    report = run_explore(Options(out=str(tmp_path)))
    assert report["findings"] == []
    per_mode = [_missed(cov["machines"]) for cov in report["coverage"].values()]
    union = {
        name: set.intersection(*(m.get(name, set()) for m in per_mode))
        for name in {n for m in per_mode for n in m}
    }
    assert {k: v for k, v in union.items() if v} == _known()


def test_the_reading_rows_slice_keeps_its_readings_under_other_readings() -> None:
    """A run's non-default readings win; the slice keeps the alternatives its rows need for the
    others (a readings-matrix cell or a complete readings map still fires those rows)."""
    from simulator.explore.run import exhaustive_slices

    given = {"cancel-takes-effect": "when-acted", "waited-on-background": "final-status"}
    chosen = exhaustive_slices(replace(Options(), slices=("reading_rows",), readings=given))
    cfg = chosen[0].cfg
    assert cfg.reading_map()["cancel-takes-effect"] == "when-acted"
    assert cfg.reading_map()["rejected-after-cancel-request"] == "own-reason"  # the slice's own
    # a default given (as a complete readings map does for every reading) does not override it
    assert cfg.reading_map()["waited-on-background"] == "becomes-foreground"
    other = explore_bfs.SLICE_BY_NAME["prompts"].cfg.under({"cancel-takes-effect": "when-acted"})
    assert other.reading_map()["cancel-takes-effect"] == "when-acted"
