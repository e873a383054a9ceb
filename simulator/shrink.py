"""Shrinking a failing event list to a short one that still breaks the same rule.

Theory of operation
-------------------
Delta debugging (Zeller's ddmin) over the list of events: try each chunk alone and each
complement of a chunk, keep any candidate that still breaks the rule, otherwise split finer.
A candidate is judged by ``explore_common.replay``: events that are not enabled when their turn
comes are dropped, the run is settled deterministically (agent moves and deliveries, oldest
first) so "eventually" rules are judged at quiescence, and the replay stops at the first breach
of the rule. What the replay actually performed becomes the new current list, so the result is
always an exact, replayable run (every event enabled in turn) that breaks the rule, never
longer than the input's performed events. The result is 1-minimal up to the replay budget: no
single event can be removed (checked with a last one-at-a-time pass).

Must not know: where the failing list came from (random walk, hypothesis, BFS), files.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from simulator.config import Config
from simulator.explore_common import replay
from simulator.world import Event

T = TypeVar("T")

MAX_REPLAYS = 3000
"""Replays one shrink may spend; past it the current (already failing) list is returned."""


class _Shrinker:
    def __init__(self, cfg: Config, faults: frozenset[str], rule: str, budget: int) -> None:
        self.cfg = cfg
        self.faults = faults
        self.rule = rule
        self.budget = budget
        self.replays = 0

    def test(self, candidate: list[Event]) -> list[Event] | None:
        """The performed events if ``candidate`` still breaks the rule, else None."""
        self.replays += 1
        run = replay(candidate, self.cfg, self.faults, stop_rule=self.rule, record=False)
        if any(b.rule == self.rule for b in run.breaches):
            return run.events
        return None

    @property
    def spent(self) -> bool:
        return self.replays >= self.budget


def shrink(
    events: list[Event],
    cfg: Config,
    faults: frozenset[str],
    rule: str,
    budget: int = MAX_REPLAYS,
) -> list[Event]:
    """A short exact run breaking ``rule``; ``events`` itself must break it (else returned as is)."""
    s = _Shrinker(cfg, faults, rule, budget)
    return ddmin(list(events), s.test, lambda: s.spent)


def ddmin(items: list[T], test: Callable[[list[T]], list[T] | None], spent: Callable[[], bool]) -> list[T]:
    """Delta debugging over ``items`` with ``test(candidate)``: the list a run actually performed
    when ``candidate`` still fails (it becomes the current list), else None. ``spent()`` says
    when to stop and return the current list. ``items`` itself must fail (else returned as is).
    Also used by ``acp-model drive``, whose test re-runs a real agent."""
    current = test(list(items))
    if current is None:
        return list(items)
    n = 2
    while len(current) >= 2 and not spent():
        size = max(1, len(current) // n)
        chunks = [current[i : i + size] for i in range(0, len(current), size)]
        reduced = False
        for i in range(len(chunks)):
            if spent():
                break
            for candidate in (chunks[i], [e for j, c in enumerate(chunks) if j != i for e in c]):
                if len(candidate) >= len(current):
                    continue
                got = test(candidate)
                if got is not None and len(got) < len(current):
                    current = got
                    n = 2 if candidate is chunks[i] else max(n - 1, 2)
                    reduced = True
                    break
            if reduced:
                break
        if not reduced:
            if n >= len(current):
                break
            n = min(len(current), n * 2)
    # last pass: no single event can go
    i = 0
    while i < len(current) and not spent():
        got = test(current[:i] + current[i + 1 :])
        if got is not None and len(got) < len(current):
            current = got
            continue
        i += 1
    return current
