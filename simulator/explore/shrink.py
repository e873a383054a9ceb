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

``minimise`` is the stronger search for a test that re-runs something slow and timing-bound (a
real Agent, ``acp-model drive``), where removing one early choice shifts everything after it and
plain ddmin gets stuck on long lists. Within one budget it tries, in this order: the shortest
failing prefix (a binary search on the length: what comes after the failure is usually
irrelevant, and a prefix leaves the run before its cut untouched), ddmin, removing single items
from the end towards the start (a late removal disturbs less of the run), then removing adjacent
pairs and any pairs (two choices that only go together, such as a request and its answer). A
candidate already tried is not tried again.

Must not know: where the failing list came from (random walk, hypothesis, BFS), files.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

from simulator.explore.common import replay
from simulator.peers.config import Config
from simulator.peers.world import Event

T = TypeVar("T")

MAX_REPLAYS = 3000
"""Replays one shrink may spend; past it the current (already failing) list is returned."""


def shrink(
    events: list[Event],
    cfg: Config,
    faults: frozenset[str],
    rule: str,
    budget: int | None = None,
) -> list[Event]:
    """A short exact run breaking ``rule`` within ``budget`` replays (None: ``MAX_REPLAYS``);
    ``events`` itself must break it (else returned as is)."""
    replays = 0
    limit = MAX_REPLAYS if budget is None else budget

    def test(candidate: list[Event]) -> list[Event] | None:
        """The performed events if ``candidate`` still breaks the rule, else None."""
        nonlocal replays
        replays += 1
        run = replay(candidate, cfg, faults, stop_rule=rule, record=False)
        return run.events if any(b.rule == rule for b in run.breaches) else None

    return ddmin(list(events), test, lambda: replays >= limit)


def ddmin(items: list[T], test: Callable[[list[T]], list[T] | None], spent: Callable[[], bool]) -> list[T]:
    """Delta debugging over ``items`` with ``test(candidate)``: the list a run actually performed
    when ``candidate`` still fails (it becomes the current list), else None. ``spent()``, asked
    before each test but the first, says when to stop and return the current list. ``items``
    itself must fail (else returned as is). Also used by ``acp-model drive``, whose test re-runs
    a real agent."""
    current = test(list(items))
    if current is None:
        return list(items)
    n = 2
    while len(current) >= 2 and not spent():
        size = max(1, len(current) // n)
        chunks = [current[i : i + size] for i in range(0, len(current), size)]
        reduced = False
        for i in range(len(chunks)):
            for candidate in (chunks[i], [e for j, c in enumerate(chunks) if j != i for e in c]):
                if len(candidate) >= len(current):
                    continue
                if spent():  # before each test: a budget of N tests runs no more
                    break
                got = test(candidate)
                if got is not None and len(got) < len(current):
                    current = got
                    n = 2 if candidate is chunks[i] else max(n - 1, 2)
                    reduced = True
                    break
            if reduced or spent():
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


def minimise(
    items: list[T],
    test: Callable[[list[T]], list[T] | None],
    spent: Callable[[], bool],
    key: Callable[[list[T]], Hashable] = lambda c: repr(c),
) -> list[T]:
    """``ddmin`` with a prefix search before it and single and pair removals after it (see the
    module docstring); ``test`` and ``spent`` as for ``ddmin``, ``key`` names a candidate for
    the cache of those tried."""
    tried: dict[Hashable, list[T] | None] = {}

    def cached(candidate: list[T]) -> list[T] | None:
        k = key(candidate)
        if k not in tried:
            tried[k] = test(candidate)
        return tried[k]

    first = cached(list(items))
    if first is None:
        return list(items)
    best = _descend(_prefix(first, cached, spent), cached, spent)
    if not spent():  # a local minimum with budget left: plain ddmin from the start may go lower
        other = _descend(first, cached, spent)
        if len(other) < len(best):
            best = other
    return best


def _prefix(
    current: list[T], test: Callable[[list[T]], list[T] | None], spent: Callable[[], bool]
) -> list[T]:
    """The shortest failing prefix, by a binary search on its length (``lo`` items do not fail as
    far as known, ``hi`` do)."""
    lo, hi = 0, len(current)
    while hi - lo > 1 and not spent():
        mid = (lo + hi) // 2
        got = test(current[:mid])
        if got is not None and len(got) < len(current):
            current = got
            hi = len(current)
        else:
            lo = mid
    return current


def _descend(
    current: list[T], test: Callable[[list[T]], list[T] | None], spent: Callable[[], bool]
) -> list[T]:
    """ddmin, then single removals from the end and pair removals until none helps."""
    current = ddmin(current, test, spent)

    def drop(positions: tuple[int, ...]) -> bool:
        nonlocal current
        got = test([c for i, c in enumerate(current) if i not in positions])
        if got is not None and len(got) < len(current):
            current = got
            return True
        return False

    def singles() -> bool:
        removed = False
        i = len(current) - 1
        while i >= 0 and not spent():
            removed |= drop((i,))
            i = min(i, len(current)) - 1
        return removed

    def pairs() -> bool:
        n = len(current)
        order = [(i, i + 1) for i in range(n - 2, -1, -1)]
        order += [(i, j) for j in range(n - 1, -1, -1) for i in range(j - 2, -1, -1)]
        for pair in order:
            if spent():
                return False
            if drop(pair):
                return True
        return False

    while not spent() and (singles() or pairs()):
        pass
    return current
