"""The partial-order reduction of the exhaustive search (``--reduce por``) reports what the full
search reports: the same rules found, the same quiescent states, every machine row fired; the
side it expands is persistent (nothing the other side does alone enables a further event of
it, nor disables one); the cycle proviso expands a state on both sides where a cycle closes.

Fast tests use small slices; every default slice and every seeded bug on them are ``deep``.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from simulator.analysis.mutants import MUTANTS
from simulator.explore import bfs as explore_bfs
from simulator.explore.bfs import SLICE_BY_NAME, SLICES, BfsResult, Child, expander
from simulator.explore.por import BOTH, ample
from simulator.explore.state import State
from simulator.peers.config import SMALL, Config

TWO = SMALL.with_(
    tool_calls=0, permissions=0, background=0, capacity=2, features=frozenset({"cancel", "hold"})
)
"""A few thousand states where two messages may be in flight each way: many independent events."""


def _same_report(full: BfsResult, por: BfsResult) -> None:
    assert por.reduce == "por" and full.reduce == "none"
    assert por.complete and full.complete
    assert sorted(c.rule for c in por.counterexamples) == sorted(c.rule for c in full.counterexamples)
    assert por.quiescent_states == full.quiescent_states
    assert set(full.rows) <= set(por.rows)
    assert set(full.exercised) <= set(por.exercised)
    assert por.states <= full.states and por.transitions <= full.transitions
    assert por.unjudged_cycles == 0 and por.bottom_cycles == full.bottom_cycles


@pytest.mark.parametrize("faults", [frozenset(), frozenset({"cancel-as-end-turn"})])
def test_reduction_keeps_findings_quiescent_states_and_rows(faults: frozenset[str]) -> None:
    full = explore_bfs.explore(TWO, faults)
    por = explore_bfs.explore(TWO, faults, reduce="por")
    _same_report(full, por)
    assert por.states < 0.8 * full.states, (por.states, full.states)
    assert por.one_side_states > 0
    if faults:
        assert [c.rule for c in por.counterexamples] == ["TRANS-04"]


def test_reduction_on_a_slice_with_cycles() -> None:
    """``tools`` has cycles (a tool call paused and resumed): the proviso keeps them honest."""
    sl = SLICE_BY_NAME["tools"]
    full = explore_bfs.explore(sl.cfg)
    por = explore_bfs.explore(sl.cfg, reduce="por")
    _same_report(full, por)
    assert full.nontrivial_sccs > 0 and por.nontrivial_sccs > 0


def test_reduction_keeps_a_client_view_fault() -> None:
    """A faulty client view is judged on the client side: its breach is still found."""
    view_fault = frozenset({"omitted-background-is-empty"})
    tiny = SMALL.with_(
        tool_calls=0, permissions=0, background=1, outputs=0, capacity=2, features=frozenset({"terminal"})
    )
    full = explore_bfs.explore(tiny, view_fault)
    por = explore_bfs.explore(tiny, view_fault, reduce="por")
    _same_report(full, por)
    assert [(c.rule, c.source) for c in por.counterexamples] == [("BG-08", "view")]
    assert por.states < full.states


def _successors(expand: Any, st: Any, sides: int) -> list[Child]:
    out: list[Child] = []
    expand(st, out, sides)
    return out


@pytest.mark.parametrize("cfg", [TWO, TWO.with_(transport="unordered"), SLICE_BY_NAME["tools"].cfg])
def test_the_side_expanded_alone_is_persistent(cfg: Config) -> None:
    """From every state where ``ample`` picks one side, the other side alone (up to 4 steps)
    neither enables nor disables an event of the picked side, and the two orders commute."""
    parts = State(cfg, frozenset(), True)
    with parts.stepping():
        expand, _ = expander(parts, cfg)
        side = ample(parts, cfg)
        seen = {parts.root()}
        frontier = [parts.root()]
        checked = 0
        while frontier and checked < 150:
            st = frontier.pop(0)
            for _, child, _, _ in _successors(expand, st, BOTH):
                if child is not None and child not in seen:
                    seen.add(child)
                    frontier.append(child)
            picked = side(st)
            if picked == BOTH:
                continue
            checked += 1
            other = BOTH ^ picked
            mine = {ev: child for ev, child, _, _ in _successors(expand, st, picked)}
            walk = [(st, 0)]
            while walk:
                s2, n = walk.pop()
                here = {ev: child for ev, child, _, _ in _successors(expand, s2, picked)}
                assert set(here) == set(mine), (st, s2)
                if n == 4:
                    continue
                for ev, nxt, _, _ in _successors(expand, s2, other):
                    if nxt is None:
                        continue
                    if n == 0:  # commutation: (mine, then ev) == (ev, then mine)
                        for ev_m, via_m in mine.items():
                            if via_m is None:
                                continue
                            back = {e: c for e, c, _, _ in _successors(expand, via_m, other)}
                            assert back[ev] == {e: c for e, c, _, _ in _successors(expand, nxt, picked)}[ev_m]
                    walk.append((nxt, n + 1))
    assert checked > 20


def _cli(argv: list[str]) -> tuple[int, str]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(argv)
    return code, buf.getvalue()


def test_cli_reduce_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["explore", "--mode", "exhaustive", "--quiet", "--slice", "bg_requests", "--out", str(tmp_path)]
    code, out = _cli([*base, "--json", "--reduce", "por"])
    assert code == 0
    ex = json.loads(out)["exhaustive"]
    assert ex["reduce"] == "por" and ex["slices"][0]["reduce"] == "por"
    assert 0 < ex["slices"][0]["one_side_states"] < ex["states"]
    code, out = _cli([*base, "--json"])
    full = json.loads(out)["exhaustive"]
    assert full["reduce"] == "none" and full["states"] > ex["states"]
    assert full["quiescent_states"] == ex["quiescent_states"]
    code, out = _cli([*base, "--reduce", "por"])
    assert "partial-order reduction on" in out
    capsys.readouterr()
    # with or without --cluster (the pool changes nothing in what is refused)
    for extra in (["--depth", "3"], ["--depth", "3", "--cluster", "local"]):
        assert _cli([*base, "--reduce", "por", *extra])[0] == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "--reduce por" in err[0], err


def test_unknown_reduction_and_depth_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown reduction"):
        explore_bfs.explore(TWO, reduce="sleep")
    with pytest.raises(ValueError, match="depth"):
        explore_bfs.explore(TWO, reduce="por", depth=3)


# -- deep -------------------------------------------------------------------------------------


@pytest.mark.deep
@pytest.mark.parametrize("name", [s.name for s in SLICES])
def test_every_default_slice_reports_the_same_with_the_reduction(name: str) -> None:
    cfg = SLICE_BY_NAME[name].cfg
    _same_report(explore_bfs.explore(cfg, name=name), explore_bfs.explore(cfg, name=name, reduce="por"))


@pytest.mark.deep
@pytest.mark.parametrize("name", [m.name for m in MUTANTS])
def test_every_seeded_bug_is_found_alike_with_the_reduction(name: str) -> None:
    """Each mutant on every default slice: the same rules, quiescent states and rows with and
    without the reduction. A seeded bug can make a slice large or infinite (one reopens a
    compaction forever; a client-view fault adds the view to the state, and the three largest
    slices, ``core``, ``output`` and ``tools``, pass the cap): a slice whose full search passes
    ``DEEP_CAP`` states is left out, at most three are, and the mutant's intended rule is found
    with the reduction wherever it is found without."""
    from simulator.analysis.mutants import BY_NAME

    mutant = BY_NAME[name]
    faults = mutant.switched_on
    compared = 0
    for sl in SLICES:
        full = explore_bfs.explore(sl.cfg, faults, name=sl.name, max_states=DEEP_CAP)
        if not full.complete:
            continue
        por = explore_bfs.explore(sl.cfg, faults, name=sl.name, reduce="por", max_states=DEEP_CAP)
        _same_report(full, por)
        compared += 1
    assert compared >= len(SLICES) - 3, compared


DEEP_CAP = 400_000
"""States of a full search beyond which a seeded bug's slice is not compared (see above)."""
