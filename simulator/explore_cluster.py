"""The exhaustive search and the random walks on a Ray cluster, with the single process's answers.

Theory of operation
-------------------
Exhaustive (``search``): a level-synchronous breadth-first search over shards
(``simulator.explore_shard``; each owns the states whose key hashes to it). The driver runs
the levels: every shard expands its frontier and sends each successor to its owner in one batch
per (sender, owner) and level (``expand_level`` -> ``receive_level``; on Ray the batches go
from actor to actor through the object store, not through the driver); the driver ranks the
level's new tags (``parent << 16 | position``) and hands out global numbers (``commit``), the
numbers the single-process search gives. After the last level it merges the shards'
summaries: counts, coverage (sums of the memoized moves' use counts: each transition is taken
by exactly one shard), the first breach of each rule (smallest position), and, when the
search is complete, the edges for the strongly-connected-component analysis and the liveness
verdicts of ``simulator.explore_bfs`` (run here, on the merged edges). Paths to breaches are
walked back through the owners' parent pointers. So states, transitions, depth, findings with
their shortest counterexamples, coverage, quiescent states and liveness verdicts are the
single process's.

Partial-order reduction (``reduce="por"``, as ``simulator.explore_bfs`` has it): each level
takes a second exchange. The shards expand their states on the side ``simulator.explore_por``
picks and report the parents of successors that were already visited; the driver hands those
parents back to their owners (the frontier's owners are known from the level's ranking), which
expand the one-sided ones on their other side too (the cycle proviso) and send the further
successors; only then is the level ranked. Whether a successor was visited before the level's
new states are committed is exactly the single process's test (found at the state's depth or
above), and it does not depend on the order of the level, so the reduced graph, its numbering
and its findings are the single process's ``--reduce por`` ones (``explore_shard``).

Two bounds are checked between levels only: ``max_states`` (the search stops before the
first level that starts with at least that many states, so it may find up to one level more
than the single process, which stops inside a level) and the time budget.

Random (``cli.cluster.Session.map`` handed to ``simulator.explore_random`` and
``simulator.explore_hypothesis``): walks are cut into the same chunks as on a process pool,
hypothesis's examples into the same chunks as in one process (fixed sizes, never by worker
count); the chunks run as Ray tasks and are merged in chunk order. The walks' counterexamples
are shrunk on the driver, hypothesis's in the task that found them. So the merged report for a
seed does not depend on the number of workers.

Pools: ``LocalPool`` runs shards in this process (the tests); ``cli.cluster.RayPool`` puts each
shard in a Ray actor (``ShardActor``), and ``cli.cluster.Session`` starts or joins Ray: Ray is
imported only there, and only with ``--cluster``. A worker that dies ends the run with
``ClusterError`` carrying the statistics so far.

Must not know: Ray, connections, argument parsing, exit codes, printing (progress goes to a
callback).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from simulator.config import MAX_STATES, Config
from simulator.explore_bfs import BfsResult, _Found, _Search, counterexamples, judge_cycles
from simulator.explore_por import REDUCTIONS
from simulator.explore_shard import Shard
from simulator.world import Event


class ClusterError(Exception):
    """The cluster could not be used or lost a worker; ``partial`` holds the figures so far."""

    def __init__(self, message: str, partial: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.partial = partial or {}


class Pool(Protocol):
    size: int

    def each(self, method: str, args: list[tuple[Any, ...]] | None = None) -> list[Any]: ...

    def one(self, index: int, method: str, *args: Any) -> Any: ...

    def exchange(self, method: str = "expand_level", args: list[tuple[Any, ...]] | None = None) -> list[Any]:
        """Every shard's ``method`` (``expand_level``, or ``expand_more`` with ``args``), its
        batches delivered to their owners' ``receive_level``; the receivers' answers."""
        ...


class LocalPool:
    """Shards in this process, called one after another."""

    def __init__(self, shards: list[Shard]) -> None:
        self.shards = shards
        self.size = len(shards)

    def each(self, method: str, args: list[tuple[Any, ...]] | None = None) -> list[Any]:
        return [getattr(s, method)(*(args[i] if args else ())) for i, s in enumerate(self.shards)]

    def one(self, index: int, method: str, *args: Any) -> Any:
        return getattr(self.shards[index], method)(*args)

    def exchange(self, method: str = "expand_level", args: list[tuple[Any, ...]] | None = None) -> list[Any]:
        out = [getattr(s, method)(*(args[i] if args else ())) for i, s in enumerate(self.shards)]
        return [s.receive_level(*[out[j][i] for j in range(self.size)]) for i, s in enumerate(self.shards)]


def local_pool(
    workers: int,
    cfg: Config,
    faults: frozenset[str],
    symmetry: bool = False,
    monitors: bool = True,
    reduce: str = "none",
) -> LocalPool:
    return LocalPool([Shard(i, workers, cfg, faults, symmetry, monitors, reduce) for i in range(workers)])


# -- the search -----------------------------------------------------------------------------------


@dataclass
class _Level:
    states: int = 1
    depth: int = 0
    transitions: int = 0
    rss: list[int] = field(default_factory=list)


class _Paths(_Search):
    """Parent pointers that live in the shards (``explore_bfs`` walks them through ``path``)."""

    def __init__(self, pool: Pool, owner: np.ndarray) -> None:
        super().__init__()
        self._pool = pool
        self._owner = owner

    def path(self, state: int) -> list[Event]:
        out: list[Event] = []
        while state > 0:
            parent, ev = self._pool.one(int(self._owner[state]), "step_back", state)
            assert ev is not None
            out.append(ev)
            state = parent
        out.reverse()
        return out


def search(
    pool: Pool,
    cfg: Config,
    faults: frozenset[str] = frozenset(),
    *,
    depth: int | None = None,
    time_budget: float | None = None,
    symmetry: bool = False,
    monitors: bool = True,
    progress: Callable[[str], None] | None = None,
    name: str = "",
    max_states: int | None = MAX_STATES,
    reduce: str = "none",
) -> BfsResult:
    """The exhaustive search of ``simulator.explore_bfs.explore`` on the shards of ``pool``
    (made with the same ``reduce``)."""
    if reduce not in REDUCTIONS:
        raise ValueError(f"unknown reduction {reduce!r} ({', '.join(REDUCTIONS)})")
    if reduce != "none" and depth is not None:
        raise ValueError("the partial-order reduction does not combine with a depth limit")
    t0 = time.perf_counter()
    lv = _Level()
    try:
        return _search(
            pool, cfg, faults, depth, time_budget, symmetry, monitors, progress, name, max_states, t0, lv,
            reduce,
        )  # fmt: skip
    except ClusterError as exc:
        exc.partial.update(_partial(lv, name, t0))
        raise


def _partial(lv: _Level, name: str, t0: float) -> dict[str, Any]:
    return {
        "slice": name,
        "states": lv.states,
        "transitions": lv.transitions,
        "depth": lv.depth,
        "seconds": round(time.perf_counter() - t0, 2),
    }


def _search(
    pool: Pool,
    cfg: Config,
    faults: frozenset[str],
    depth: int | None,
    time_budget: float | None,
    symmetry: bool,
    monitors: bool,
    progress: Callable[[str], None] | None,
    name: str,
    max_states: int | None,
    t0: float,
    lv: _Level,
    reduce: str,
) -> BfsResult:
    owners = pool.each("seed")
    owner = np.array([owners.index(True)], dtype=np.int32)
    limit = max_states if max_states is not None else 1 << 62
    deepest = depth if depth is not None else 1 << 62
    chunks = [owner]
    while True:
        if lv.states >= limit:
            stop = "state limit"
            break
        if time_budget is not None and time.perf_counter() - t0 > time_budget:
            stop = "time budget"
            break
        if lv.depth >= deepest:
            stop = "depth limit" if any(pool.each("frontier_can_move")) else "complete"
            break
        got = pool.exchange()
        if reduce == "por":
            got = _proviso(pool, got, chunks[-1], lv.states - len(chunks[-1])) or got
        tags = [t for t, _ in got]
        lv.transitions = sum(f["transitions"] for _, f in got)
        lv.rss = [f["rss"] for _, f in got]
        sizes = [len(t) for t in tags]
        new = sum(sizes)
        if not new:
            stop = "complete"
            break
        ranks = np.empty(new, dtype=np.int64)
        ranks[np.argsort(np.concatenate(tags), kind="stable")] = np.arange(new, dtype=np.int64)
        numbers = lv.states + ranks
        bounds = np.cumsum([0, *sizes])
        pool.each("commit", [(numbers[bounds[i] : bounds[i + 1]],) for i in range(pool.size)])
        level_owner = np.empty(new, dtype=np.int32)
        level_owner[ranks] = np.repeat(np.arange(pool.size, dtype=np.int32), sizes)
        chunks.append(level_owner)
        lv.states += new
        lv.depth += 1
        if progress is not None:
            now = time.perf_counter()
            mem = ", ".join(f"{r / 2**20:,.0f}" for r in lv.rss)
            progress(
                f"bfs{' ' + name if name else ''} on {pool.size} worker(s): {lv.states:,} states, "
                f"{lv.transitions:,} transitions, depth {lv.depth}, frontier {new:,}, "
                f"{lv.states / (now - t0):,.0f} states/s, MB per worker {mem}"
            )
    complete = stop == "complete"
    sums = pool.each("summary", [(complete,)] * pool.size)
    s = _Paths(pool, np.concatenate(chunks))
    s.found = _merge_found(sums)
    transitions = sum(x["transitions"] for x in sums)
    sccs = nontrivial = bottom = unjudged = 0
    one_side = np.zeros(lv.states, dtype=np.bool_)
    for x in sums:
        one_side[x["one_sided"]] = True
    if complete:
        src = np.concatenate([x["edges"][0] for x in sums])
        pos = np.concatenate([x["edges"][1] for x in sums])
        dst = np.concatenate([x["edges"][2] for x in sums])
        order = np.lexsort((pos, src))
        sccs, nontrivial, bottom, unjudged = judge_cycles(
            lv.states,
            np.ascontiguousarray(src[order]),
            np.ascontiguousarray(dst[order]),
            s,
            cfg,
            faults,
            monitors,
            None if reduce == "none" else (lambda state: not one_side[state]),
        )
    events: Counter[str] = Counter()
    rows: Counter[Any] = Counter()
    entity: Counter[str] = Counter()
    foreground: Counter[str] = Counter()
    exercised: Counter[str] = Counter()
    ended: dict[bytes, Counter[str]] = {}
    for x in sums:
        events.update(x["events"])
        rows.update(x["rows"])
        entity.update(x["entity"])
        foreground.update(x["foreground"])
        exercised.update(x["exercised_steps"])
        for mid, c in x["exercised_ended"].items():
            ended.setdefault(mid, c)
    if monitors:
        exercised.update(sums[0]["exercised_base"])
        for c in ended.values():
            exercised.update(c)
    found_list = counterexamples(s, cfg, faults, name)
    seconds = time.perf_counter() - t0
    return BfsResult(
        cfg=cfg,
        faults=faults,
        symmetry=symmetry,
        states=lv.states,
        transitions=transitions,
        max_depth=lv.depth,
        seconds=seconds,
        complete=complete,
        stop=stop,
        depth_limit=depth,
        quiescent_states=sum(x["quiescent"] for x in sums),
        sccs=sccs,
        nontrivial_sccs=nontrivial,
        bottom_cycles=bottom,
        counterexamples=found_list,
        exercised=exercised if monitors else Counter(),
        events=events,
        foreground=foreground,
        name=name,
        entity=entity,
        rows=rows,
        reduce=reduce,
        one_side_states=int(one_side.sum()),
        unjudged_cycles=unjudged,
    )


def _proviso(pool: Pool, got: list[Any], frontier_owner: np.ndarray, first: int) -> list[Any] | None:
    """The cycle proviso of the reduction: the parents of successors already visited, back to
    their owners to be expanded on their other side too (``Shard.expand_more``); the receivers'
    answers after that, or None when no successor was visited."""
    seen = np.concatenate([f["seen"] for _, f in got])
    if not len(seen):
        return None
    owners = frontier_owner[seen - first]
    return pool.exchange("expand_more", [(seen[owners == i],) for i in range(pool.size)])


def _merge_found(sums: list[dict[str, Any]]) -> dict[str, _Found]:
    """The first breach of each rule over all shards, with the hits the single process counts:
    every unconditional one, plus the first conditional view breach if it came before them."""
    found: dict[str, _Found] = {}
    rules = {r for x in sums for r in (*x["first_u"], *x["first_c"])}
    for rule in rules:
        hits = sum(x["u_hits"][rule] for x in sums)
        firsts = [x["first_u"][rule] for x in sums if rule in x["first_u"]]
        maybes = [x["first_c"][rule] for x in sums if rule in x["first_c"]]
        first_u = min(firsts, key=lambda f: f[0]) if firsts else None
        first_c = min(maybes, key=lambda f: f[0]) if maybes else None
        if first_c is not None and (first_u is None or first_c[0] < first_u[0]):
            pos, breach, ev, many = first_c
            found[rule] = _Found(breach, pos[0], ev, hits + many)
        elif first_u is not None:
            pos, breach, ev = first_u
            found[rule] = _Found(breach, pos[0], ev, hits)
    return found


class TaskProgress:
    """Progress of independent explorations run as cluster tasks (the readings matrix, the two
    runs of a comparison): after each task, the tasks done, the states explored so far, states
    per second across the cluster (wall time since the first task was sent) and the peak
    resident memory of the worker process that ran it."""

    def __init__(self, progress: Any, what: str, total: int) -> None:
        self.progress = progress
        self.what = what
        self.total = total
        self.count = 0
        self.states = 0
        self.t0 = time.perf_counter()
        progress.phase(f"{what}: {total} exploration(s) as cluster tasks", total)

    def done(self, report: dict[str, Any], rss: int) -> None:
        self.count += 1
        self.states += int(report.get("exhaustive", {}).get("states", 0))
        rate = self.states / max(time.perf_counter() - self.t0, 1e-9)
        self.progress.advance()
        self.progress.note(
            f"{self.count}/{self.total} done, {self.states:,} states, {rate:,.0f} states/s across the "
            f"cluster, last task's worker peak {rss / 2**20:,.0f} MB"
        )


# -- Ray ------------------------------------------------------------------------------------------


class ShardActor(Shard):
    """A shard in its own process, kept for a whole run (``start`` begins each slice's search;
    the readings travel in its ``Config``), the cyclic collector off while a search runs (the
    process holds millions of small objects and frees none of them until the search ends)."""

    def __init__(self) -> None:
        pass

    def start(self, *args: Any) -> None:
        import gc

        self.__dict__.clear()
        gc.enable()
        gc.collect()
        gc.disable()
        Shard.__init__(self, *args)
