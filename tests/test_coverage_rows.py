"""Every row of every machine is fired by exploration: the spec's freedoms are the simulated
peers' choices, so exploration covers the whole model, not a smaller one.

The exhaustive slices alone (``explore_bfs.SLICES``, a few seconds) are the fast check; the
union of the default ``acp-model explore`` modes is the deep one. ``KNOWN_UNFIRED`` names each
row that is still not fired and why: a new gap fails the test, and so does a gap that closed
(remove it from the list).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from simulator import explore_bfs
from simulator.explore_coverage import machine_coverage
from simulator.explore_run import Options
from simulator.explore_run import run as run_explore

KNOWN_UNFIRED = {
    "background_item": {
        "listed --adopt--> announced": "taken only under the reading waited-on-background="
        "becomes-foreground (its guard reads the reading): fired under it by "
        "test_a_row_behind_a_reading_fires_under_it",
    },
    "prompt": {
        "cancel_requested --reject--> rejected": "behind the off-by-default feature "
        "reject_cancel_requested: the REJ-03 monitor wants -32800 once a $/cancel_request arrived",
        "closed_out --close--> closed_out": "the simulated client sends one session/close per "
        "session (closes=1 in every slice): a second close of a closing session is not explored",
    },
    "session": {
        "replaying --replay--> replaying": "the session machine is counted from event names and "
        "the agent replays its history in one step",
        "synced --snapshot--> synced": "the agent sends one snapshot before the resume response",
    },
}


def _missed(machines: list[dict[str, object]]) -> dict[str, set[str]]:
    return {
        str(m["name"]): set(m["transitions_missed"])  # type: ignore[call-overload]
        for m in machines
        if m.get("transitions_missed")
    }


def _known() -> dict[str, set[str]]:
    return {name: set(rows) for name, rows in KNOWN_UNFIRED.items()}


def test_the_exhaustive_slices_fire_every_row() -> None:
    rows: Counter[tuple[str, str, str, str]] = Counter()
    events: Counter[str] = Counter()
    entity: Counter[str] = Counter()
    for s in explore_bfs.SLICES:
        res = explore_bfs.explore(s.cfg, name=s.name)
        assert res.complete, s.name
        rows.update(res.rows)
        events.update(res.events)
        entity.update(res.entity)
    machines = machine_coverage(rows, events, entity)
    assert _missed(machines) == _known()
    triggers = next(m for m in machines if m["name"] == "entity")
    assert triggers["triggers_missed"] == []


def test_a_row_behind_a_reading_fires_under_it() -> None:
    """A row whose guard reads a reading is a freedom of that reading's peers: exploring the
    slice under the alternative fires it (and under the default reading it never fires)."""
    bg = next(s for s in explore_bfs.SLICES if s.name == "bg_requests")
    adopt = ("background_item", "listed", "adopt", "announced")
    under = replace(bg.cfg, readings=(("waited-on-background", "becomes-foreground"),))
    assert explore_bfs.explore(under, name=bg.name).rows[adopt] > 0
    assert explore_bfs.explore(bg.cfg, name=bg.name).rows[adopt] == 0


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
