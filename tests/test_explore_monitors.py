"""The exhaustive search's monitor table (simulator/explore_monitors.py): steps composed from
one monitor at a time agree with feeding the whole monitor set.

``check=True`` makes the table feed the whole set beside every composed step and compare the
monitor numbers, the pending requests, the breaches (in order) and the exercise counts. These
tests run it over every slice and over the seeded bugs, and show that it does catch a wrong
composition.
"""

from __future__ import annotations

from typing import Any

import pytest

from properties.engine import MonitorSet
from simulator import explore_bfs, explore_monitors, explore_parts
from simulator.config import DEFAULT
from simulator.explore_intern import Messages
from simulator.explore_monitors import MonitorTable
from simulator.mutants import MUTANTS
from simulator.schedulers import random_walk


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(explore_monitors, "CHECK", True)


BOUND = 6_000
"""States of each slice the fast test below checks: the slices above it (``core``, ``prompts``,
``requests``, ``background``, ``output``, ``compaction``) are cut there, after every row of
their machines has fired; the deep test checks every slice whole."""


@pytest.mark.parametrize("name", [s.name for s in explore_bfs.SLICES])
def test_composed_steps_agree_with_whole_sets_on_every_slice(name: str, checked: None) -> None:
    res = explore_bfs.explore(explore_bfs.SLICE_BY_NAME[name].cfg, name=name, max_states=BOUND)
    assert res.states > 500 and (res.complete or res.states >= BOUND)


@pytest.mark.deep
@pytest.mark.parametrize("name", [s.name for s in explore_bfs.SLICES])
def test_composed_steps_agree_with_whole_sets_on_every_whole_slice(name: str, checked: None) -> None:
    res = explore_bfs.explore(explore_bfs.SLICE_BY_NAME[name].cfg, name=name)
    assert res.complete and res.states > 500


FAST = {"error-after-insert": "cancels", "withdraw-wrong-code": "cancels", "prompt-during-resume": "session"}
"""Two agents that break rules on the wire and a client that sends too early, each on a slice
where it breaks its rule; every seeded bug, client-view faults included, is in the deep test
below."""


@pytest.mark.parametrize("mutant", [m for m in MUTANTS if m.name in FAST], ids=lambda m: m.name)
def test_composed_steps_agree_with_whole_sets_under_seeded_bugs(mutant: Any, checked: None) -> None:
    """Faulty agents and clients break rules: the composed breaches are the whole set's (the
    check raises inside the search when they are not)."""
    res = explore_bfs.explore(explore_bfs.SLICE_BY_NAME[FAST[mutant.name]].cfg, frozenset(mutant.switched_on))
    assert res.complete
    assert mutant.intended_rule in {c.rule for c in res.counterexamples}


def test_the_whole_set_check_catches_a_monitor_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    """A composition that forgets to step one monitor on the messages it handles must fail."""
    table = MonitorTable(MonitorSet(), Messages(), check=True)
    prompt = next(i for i, m in enumerate(table.root.monitors) if type(m).__name__ == "PromptMonitor")
    real = MonitorTable._movers

    def forgetful(self: MonitorTable, sender: str, msg: Any, request: Any) -> tuple[tuple[int, ...], bool]:
        movers, block = real(self, sender, msg, request)
        return tuple(i for i in movers if i != prompt), block

    monkeypatch.setattr(MonitorTable, "_movers", forgetful)
    transcript = random_walk(1, 60, DEFAULT, frozenset()).world.transcript
    mid = 0
    with pytest.raises(AssertionError, match="monitor numbers"):
        for sender, msg in transcript:
            mid = table.step(mid, table.msgs.intern(sender, msg))[0]


def test_most_steps_are_composed_without_feeding_a_monitor(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the ``core`` slice most new (state, message) steps are put together from steps
    already taken one monitor at a time; whole sets are built only to judge quiescence."""
    tables: list[MonitorTable] = []

    class Recorded(MonitorTable):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            tables.append(self)

    monkeypatch.setattr(explore_parts, "MonitorTable", Recorded)
    res = explore_bfs.explore(explore_bfs.SLICES[0].cfg)
    (table,) = tables
    fed = len(table._local)
    # (3x since the table monitor follows every entity update too: the entity machine runs there)
    assert len(table.steps) > 3 * fed, (len(table.steps), fed)
    built = sum(s is not None for s in table.sets)
    assert built < len(table.sets) / 2, (built, len(table.sets))
    assert res.quiescent_states > 0 and len(table.ends) > 0


@pytest.mark.deep
@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_composed_steps_agree_with_whole_sets_for_every_seeded_bug_on_three_slices(
    mutant: Any, checked: None
) -> None:
    for sl in explore_bfs.SLICES[:3]:
        explore_bfs.explore(sl.cfg, frozenset(mutant.switched_on), max_states=50_000)
