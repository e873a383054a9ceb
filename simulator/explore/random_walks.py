"""Random exploration for volume: many seeded random walks, optionally on a process pool.

Theory of operation
-------------------
Walk ``i`` of a run with base seed ``s`` uses the seed ``walk_seed(s, i)``; a walk makes the
choices of ``simulator.peers.schedulers.random_walk`` (``next_event``: uniform choice among
enabled events, rare events re-drawn once, ``steps`` choices, then draining to quiescence), in a
loop of its own so that a breach never loses the events that led to it: every step is checked
(``explore_common.step_checked``: monitor findings, client-view divergence, model violations)
and the "eventually" rules are judged at the end. A test keeps the two schedulers in step.

Walks are cut into chunks of consecutive indices; the chunks run as jobs of the caller's
worker pool (``simulator.workers``: processes or a Ray cluster), or here. Chunk results are
merged in index order, so the statistics, the chosen failing walk per rule (shortest, then
lowest index) and therefore every output are the same for any number of workers. Each rule's
chosen walk is then shrunk (``simulator.explore.shrink``) in this process.

Must not know: hypothesis, the exhaustive search, files or printing.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from simulator.explore.common import (
    Breach,
    Counterexample,
    Replay,
    add_counts,
    judge_end,
    make_counterexample,
    new_monitors,
    step_checked,
)
from simulator.explore.coverage import Row, recording
from simulator.explore.shrink import shrink
from simulator.peers.config import EXPLORE_STEPS, EXPLORE_WALKS, Config
from simulator.peers.schedulers import next_event
from simulator.peers.world import Event, World, event_counts
from simulator.progress import NULL, Progress


def walk_seed(base: int, index: int) -> int:
    """The seed of walk ``index`` (distinct for every (base, index) pair with index < 2**32)."""
    return base * 2**32 + index


def walk(
    seed: int,
    steps: int,
    cfg: Config,
    faults: frozenset[str] = frozenset(),
    monitors: bool = True,
) -> Replay:
    """One checked random walk; same choices as ``schedulers.random_walk(seed, steps, ...)``
    (``stop``: why it stopped, as that scheduler says)."""
    rng = random.Random(seed)
    world = World(cfg, faults, new_monitors(True, cfg) if monitors else None, record=False, views=False)
    # the world lists each event it performs
    out = Replay(world, world.events)
    breaches = out.breaches
    n = 0
    while True:
        ev = next_event(rng, world.enabled(), n, steps)
        if isinstance(ev, str):
            break
        n += 1
        found = step_checked(world, ev)
        if found:
            breaches.extend(found)
            if any(b.source == "model" for b in found):
                out.stop = "model violation"
                return out
    breaches.extend(judge_end(world))
    out.stop = ev
    return out


@dataclass
class _Hit:
    index: int
    breach: Breach
    events: list[Event]

    def keep(self, first: dict[str, _Hit]) -> None:
        """Put this walk in ``first`` for its rule if it is shorter (lower index on ties)."""
        mine = first.get(self.breach.rule)
        if mine is None or (len(self.events), self.index) < (len(mine.events), mine.index):
            first[self.breach.rule] = self


@dataclass
class ChunkResult:
    walks: int = 0
    steps: int = 0
    events: Counter[str] = field(default_factory=Counter)
    stops: Counter[str] = field(default_factory=Counter)
    exercised: Counter[str] = field(default_factory=Counter)
    hits: Counter[str] = field(default_factory=Counter)
    rows: Counter[Row] = field(default_factory=Counter)
    first: dict[str, _Hit] = field(default_factory=dict)
    """rule -> the shortest failing walk in the chunk (lowest index on ties)."""

    def merge(self, other: ChunkResult) -> None:
        add_counts(self, other)
        for hit in other.first.values():
            hit.keep(self.first)


def run_chunk(args: tuple[int, int, int, int, Config, frozenset[str], bool]) -> ChunkResult:
    """Walks ``start .. start+count-1`` (module-level so a process pool can pickle it)."""
    base, start, count, steps, cfg, faults, monitors = args
    res = ChunkResult()
    taken: list[Event] = []  # every walk's events, counted at the end (``event_counts``)
    with recording() as rows:
        for index in range(start, start + count):
            w = walk(walk_seed(base, index), steps, cfg, faults, monitors)
            res.walks += 1
            res.steps += len(w.events)
            taken += w.events
            res.stops[w.stop] += 1
            if w.world.monitors is not None:
                res.exercised.update(w.world.monitors.exercised)
            seen: set[str] = set()
            for b in w.breaches:
                if b.rule in seen:
                    continue
                seen.add(b.rule)
                res.hits[b.rule] += 1
                _Hit(index, b, w.events).keep(res.first)
    res.rows.update(rows)
    res.events.update(event_counts(taken))
    return res


@dataclass
class RandomResult(ChunkResult):
    """Every chunk merged, and one shrunk counterexample per rule broken."""

    seed: int = 0
    steps_per_walk: int = 0
    seconds: float = 0.0
    shrink_seconds: float = 0.0
    counterexamples: list[Counterexample] = field(default_factory=list)

    def stats_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "walks": self.walks,
            "steps_per_walk": self.steps_per_walk,
            "walk_steps": self.steps,
            "stops": dict(sorted(self.stops.items())),
            "events": dict(sorted(self.events.items())),
        }


CHUNK_WALKS = 250
"""Walks per chunk (never cut by a number of workers, so merged results never depend on it)."""


def explore(
    cfg: Config,
    faults: frozenset[str] = frozenset(),
    *,
    seed: int = 0,
    walks: int = EXPLORE_WALKS,
    steps: int = EXPLORE_STEPS,
    monitors: bool = True,
    shrink_budget: int | None = None,
    progress: Progress = NULL,
    chunk_map: Callable[[Callable[[Any], ChunkResult], list[Any]], Iterable[ChunkResult]] | None = None,
) -> RandomResult:
    """Run ``walks`` checked walks and shrink one failing walk per broken rule. ``chunk_map``
    (``run_chunk``, the chunks) runs the chunks elsewhere (``simulator.workers.Workers.map``:
    worker processes or a Ray cluster), yielding their results in chunk order; None: here."""
    t0 = time.perf_counter()
    jobs = [
        (seed, start, min(CHUNK_WALKS, walks - start), steps, cfg, faults, monitors)
        for start in range(0, walks, CHUNK_WALKS)
    ]
    total = RandomResult(seed=seed, steps_per_walk=steps)
    progress.phase("random walks", walks)
    run_all = chunk_map if chunk_map is not None else map
    for res in run_all(run_chunk, jobs):
        total.merge(res)
        progress.advance(res.walks)
    total.seconds = time.perf_counter() - t0
    t1 = time.perf_counter()
    if total.first:
        progress.phase("random walks, shrinking counterexamples", len(total.first))
    for rule in sorted(total.first):
        hit = total.first[rule]
        small = shrink(hit.events, cfg, faults, rule, shrink_budget)
        total.counterexamples.append(
            make_counterexample(
                rule,
                small,
                cfg,
                faults,
                fallback=hit.breach,
                mode="random",
                found_by=f"walk {hit.index} (seed {walk_seed(seed, hit.index)})",
                original_length=len(hit.events),
                hits=total.hits[rule],
            )
        )
        progress.advance()
    progress.done()
    total.shrink_seconds = time.perf_counter() - t1
    return total
