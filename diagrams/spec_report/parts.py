"""The parts of the spec report: what it computes before anything is drawn.

Owns: ``Options``, ``Context`` (the options, the parts' results, the files to write),
``Section`` (what a section builder returns), the parts (decidability, explore, ladder,
matrix: ``PARTS``, each with its share of the time budget) and ``view_against_truth``.

Must not know: how the page is laid out (``diagrams.spec_report.sections``).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from properties.variants import Variant
from simulator.analysis import decidability as dec
from simulator.explore import bfs as explore_bfs
from simulator.explore import random_walks as explore_random
from simulator.explore.common import Counterexample, keep_shortest, monitor_rules
from simulator.explore.coverage import machine_coverage
from simulator.peers.agent import MAIN
from simulator.peers.config import DEFAULT, EXPLORE_STEPS, Config, long_session
from simulator.peers.schedulers import random_walk
from simulator.workers import Workers

REPORT_WALKS = 400
"""Random walks of the conforming model (default bounds) after the exhaustive slices."""
LADDER: tuple[tuple[str, int, int], ...] = (
    ("default bounds, 400 walks x 60 steps", 400, 60),
    ("long session (budgets for 200 steps), 400 walks x 200 steps", 400, 200),
)
"""Larger bounds tried, smallest first, for rules the exhaustive slices never exercise."""
LADDER_CHUNK = 50
"""Walks of a ladder bound run between two looks at the time budget (chunk ``k`` is seeded ``k``)."""
SOURCE_KIND = {
    "monitor": "a conforming move the checker rejects",
    "eventually": "an obligation no conforming move can discharge (the run is over)",
    "cycle": "a liveness failure (a cycle that never discharges the obligation)",
    "view": "the client's view disagrees with the agent's truth",
    "model": "a move the peer made that the tables refuse",
}


@dataclass
class Options:
    out: Path
    readings: dict[str, str] = field(default_factory=dict)
    bound: dec.Bound = dec.DEFAULT_BOUND
    time_budget: float | None = None
    rules: tuple[str, ...] | None = None
    """Rules whose decidability is computed (None: every rule with a check)."""
    slices: tuple[str, ...] | None = None
    """Exhaustive slices of the explore part and of the readings matrix (None: all)."""
    walks: int = REPORT_WALKS
    ladder: tuple[tuple[str, int, int], ...] = LADDER
    pictures: bool = True
    """Draw the PNG pictures (matplotlib); without, the page links the Mermaid files only."""
    matrix: tuple[str, ...] = ("all",)
    """Readings of the readings matrix (``("all",)``, reading names, or ``()`` for no matrix);
    the decidability of every rule is also computed under each other alternative of them."""
    pool: Workers | None = None
    """The worker pool of the decidability samples, the readings matrix, the explore part's
    exhaustive slices and chunks of random walks (its own, the client's view against the agent's
    truth, the ladder's) (``--jobs``, ``--cluster``; started and closed by ``build``). None: every
    core of this machine."""
    variant: Variant | None = None
    """The variant the page is for (None: the spec as written); its readings are in ``readings``."""
    base_readings: dict[str, str] | None = None
    """For a variant: the readings of the spec as written it is compared with (None: ``readings``)."""


@dataclass
class Section:
    key: str
    title: str
    lines: list[str]
    data: Any


@dataclass
class Context:
    opts: Options
    progress: Callable[[str], None]
    results: dict[str, Any] = field(default_factory=dict)
    partial: dict[str, bool] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    """Files to write, by path relative to the output folder."""
    readings: dict[str, str] = field(default_factory=dict)
    drawings: dict[str, tuple[Callable[..., bytes], tuple[Any, ...]]] = field(default_factory=dict)
    """Pictures still to draw, by path relative to the output folder: (a module-level function
    returning the PNG bytes, its arguments). ``draw_all`` draws them on the pool."""

    @property
    def pool(self) -> Workers:
        """Where the parts run their jobs (this process when the options name no pool)."""
        return self.opts.pool if self.opts.pool is not None else Workers(1)

    def add(self, rel: str, data: str | bytes) -> str:
        self.files[rel] = data.encode("utf-8") if isinstance(data, str) else data
        return rel

    def draw(self, rel: str, fn: Callable[..., bytes], *args: Any) -> str:
        """A picture ``fn(*args)`` to write at ``rel``, drawn later as a job of the pool
        (``draw_all``): the page only needs its path."""
        self.drawings[rel] = (fn, args)
        return rel

    def draw_all(self) -> None:
        """Draw every picture of ``draw`` as jobs of the pool (each a pure function of its
        arguments: the same bytes on any worker) and add them to the files."""
        rels = sorted(self.drawings)
        jobs = [self.drawings[rel] for rel in rels]
        for rel, png in zip(rels, self.pool.map(_drawn, jobs), strict=True):
            self.files[rel] = png
        self.drawings.clear()


def _drawn(job: tuple[Callable[..., bytes], tuple[Any, ...]]) -> bytes:
    fn, args = job
    return fn(*args)


# -- parts ---------------------------------------------------------------------------------------


def part_decidability(ctx: Context, budget: float | None) -> bool:
    rules = ctx.opts.rules or tuple(r.id for r in dec.rules_with_check())
    alts = dec.alternatives(ctx.opts.matrix, ctx.readings) if ctx.opts.matrix else None
    verdicts, complete = dec.decide_all(
        rules,
        ctx.opts.bound,
        ctx.readings,
        ctx.progress,
        budget,
        by_reading=alts,
        pool=ctx.pool,
        variant=ctx.opts.variant,
    )
    ctx.results["alternatives"] = alts
    ctx.results["decidability"] = verdicts
    return complete


def _cfg(ctx: Context, cfg: Config) -> Config:
    """``cfg`` under the report's readings and variant (the simulated peers and monitors take
    them from it)."""
    return cfg.with_(readings=ctx.opts.readings, variant=ctx.opts.variant)


def part_explore(ctx: Context, budget: float | None) -> bool:
    """The conforming model explored by ``simulator.explore.run`` (seed 0, no seeded bug, the
    report's readings and variant, every behaviour set of the variant): its exhaustive slices,
    then, if the budget is not spent, its random walks at the default bounds (no hypothesis
    examples) and the client's view against the agent's truth (``view_against_truth``)."""
    from simulator.explore import run as explore_run

    t0 = time.perf_counter()
    chosen = ctx.opts.slices
    opts = explore_run.Options(
        mode="exhaustive",
        examples=0,
        walks=ctx.opts.walks,
        time_budget=budget,
        slices=tuple(s.name for s in explore_bfs.SLICES if chosen is None or s.name in chosen),
        readings=ctx.opts.readings,
        variant=ctx.opts.variant,
        pool=ctx.pool,
    )
    ctx.progress(f"explore: {len(opts.slices)} exhaustive slices")
    runs = [explore_run.compute(opts)]
    ex = runs[0].report["exhaustive"]
    complete: bool = ex["complete"]
    walks = ctx.opts.walks
    if budget is not None and time.perf_counter() - t0 > budget:
        walks, complete = 0, False
    if walks:
        ctx.progress(f"explore: {walks} random walks at the default bounds")
        runs.append(explore_run.compute(replace(opts, mode="random")))
    cexs: dict[str, Counterexample] = {}
    for done in runs:
        keep_shortest(cexs, done.counterexamples)
    if walks:
        ctx.progress(f"explore: {walks} walks, the client's view against the agent's truth")
        for c in view_against_truth(walks, _cfg(ctx, DEFAULT), ctx.pool):
            cexs.setdefault(c.rule, c)
    slice_rows, slice_exercised = runs[0].covered["exhaustive"]
    rows = explore_run.union(cov for done in runs for cov in done.covered.values())[0]
    ctx.results["explore"] = {
        "slices": ex["slices"],
        "walks": walks,
        "rows": rows,
        "machines": machine_coverage(rows, ctx.opts.variant),
        "slice_exercised": slice_exercised,
        "slice_rows": slice_rows,
        "counterexamples": [cexs[r] for r in sorted(cexs)],
    }
    return complete


VIEW_TRUTH = "VIEW-TRUTH"
"""The name a disagreement between the client's view and the agent's truth is reported under."""


VIEW_CHUNK = 50
"""Walks of ``view_against_truth`` per job of the pool."""


def view_against_truth(
    walks: int, cfg: Config = DEFAULT, pool: Workers | None = None
) -> list[Counterexample]:
    """Seeded conforming walks at the default bounds: at quiescence (everything delivered), the
    foreground state in the client's view of the session must be the one the agent is really in;
    the shortest disagreement, if any (the first seed's among the shortest). The walks run in
    chunks of ``VIEW_CHUNK`` seeds as jobs of ``pool`` (None: here): the same answer for any pool."""
    pool = pool if pool is not None else Workers(1)
    jobs = [(range(s, min(s + VIEW_CHUNK, walks)), cfg) for s in range(0, walks, VIEW_CHUNK)]
    found = [c for c in pool.map(_view_chunk, jobs) if c is not None]
    return [min(found, key=lambda c: len(c.events))] if found else []  # min: the first shortest


def _view_chunk(job: tuple[range, Config]) -> Counterexample | None:
    """``view_against_truth`` for the seeds of ``job``: the first shortest disagreement."""
    seeds, cfg = job
    best: Counterexample | None = None
    for seed in seeds:
        run = random_walk(seed, EXPLORE_STEPS, cfg)
        world = run.world
        if run.stop != "quiescent" or world.agent.session != "open":
            continue
        seen = world.client.view.to_json().get(MAIN, {}).get("session", {}).get("state")
        truth = world.agent.real
        if seen != truth and (best is None or len(run.events) < len(best.events)):
            best = Counterexample(
                VIEW_TRUTH,
                "view",
                f"the client's view says {seen}, the agent is {truth}",
                "random",
                f"seed {seed}",
                list(run.events),
                DEFAULT,
                frozenset(),
                len(run.events),
                transcript=list(world.transcript),
            )
    return best


LadderJob = tuple[Config, int, int, int, float | None]
"""(bounds, seed, walks, steps, deadline as ``time.time()``): one chunk of a ladder bound."""


def ladder_chunk(job: LadderJob) -> Counter[str] | None:
    """The rules a chunk of seeded walks exercises, as a job of the report's pool (None: the
    deadline passed before it started). Only what the walks exercise is read: no counterexample
    is shrunk."""
    cfg, seed, walks, steps, deadline = job
    if deadline is not None and time.time() > deadline:
        return None
    w = explore_random.explore(cfg, frozenset(), seed=seed, walks=walks, steps=steps, shrink_budget=0)
    return w.exercised


def part_ladder(ctx: Context, budget: float | None) -> bool:
    t0 = time.perf_counter()
    deadline = None if budget is None else time.time() + budget
    rules = monitor_rules()
    ex = ctx.results.get("explore")
    seen = ex["slice_exercised"] if ex else Counter()
    missing = [r for r in rules if not seen[r]]
    smallest: dict[str, str | None] = {r: None for r in missing}
    complete = True
    for name, walks, steps in ctx.opts.ladder:
        todo = [r for r in missing if smallest[r] is None]
        if not todo:
            break
        if budget is not None and time.perf_counter() - t0 > budget:
            complete = False
            break
        ctx.progress(f"ladder: {name}")
        cfg = _cfg(ctx, long_session(steps) if steps > EXPLORE_STEPS else DEFAULT)
        jobs = [
            (cfg, chunk, min(LADDER_CHUNK, walks - chunk), steps, deadline)
            for chunk in range(0, walks, LADDER_CHUNK)
        ]
        for exercised in ctx.pool.map(ladder_chunk, jobs):
            if exercised is None:  # the budget ended before this chunk started
                complete = False
                continue
            for r in todo:
                if exercised[r] and smallest[r] is None:
                    smallest[r] = name
    ctx.results["ladder"] = smallest
    return complete


def part_matrix(ctx: Context, budget: float | None) -> bool:
    """The readings matrix (``simulator.analysis.matrix``) at the report's slices, exhaustive, seed 0:
    every alternative of the chosen readings, peers and checker under it."""
    if not ctx.opts.matrix:
        return True
    import tempfile

    from simulator.analysis.matrix import readings_matrix
    from simulator.explore import run as explore_run

    with tempfile.TemporaryDirectory() as tmp:
        opts = explore_run.Options(
            mode="exhaustive", seed=0, out=tmp, variant=ctx.opts.variant, slices=ctx.opts.slices or ()
        )
        ctx.results["matrix"] = readings_matrix(ctx.opts.matrix, opts, ctx.pool)
    return True


PARTS: tuple[tuple[str, Callable[[Context, float | None], bool], float], ...] = (
    ("decidability", part_decidability, 0.5),
    ("explore", part_explore, 0.2),
    ("ladder", part_ladder, 0.2),
    ("matrix", part_matrix, 0.1),
)
"""(name, function, share of the time budget), run in this order."""
