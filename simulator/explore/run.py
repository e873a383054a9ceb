"""One ``acp-model explore`` run: choose the bounds, run the modes, assemble the report.

Theory of operation
-------------------
Two modes, both by default:

- ``exhaustive``: breadth-first search (``simulator.explore.bfs``). Default bound: every slice
  of ``explore_bfs.SLICES`` (small configurations that together switch on every feature; each
  explored completely). ``--slice`` picks slices; any bound option (``--prompts`` ...) replaces
  them by one ``custom`` slice: ``SMALL`` with those changes.
- ``random``: hypothesis's stateful testing (``simulator.explore.hypothesis_runs``) and many seeded
  random walks (``simulator.explore.random_walks``), on ``DEFAULT`` with the same bound changes (or on
  the bounds a registered seeded bug brings, see ``random_config``).

Counterexamples of every mode are written by ``simulator.explore.report`` to the output folder, with a
``report.json`` that holds the whole report without its timing fields. A write that fails
(the caller checked the paths before the run, but a disk can fill up) does not lose the run:
the report says which file could not be written (``write_errors``) and is still returned.

Long phases report to a ``simulator.progress.Progress`` (the exhaustive slices, hypothesis
rounds, random walks, shrinking, writing the graph).

Under a variant (``Options.variant``, ``properties.variants``) every run has it in its ``Config``,
and each mode explores every behaviour set of ``simulator.explore.variant_runs.behaviours``: the spec's,
and the dropped rules' seeded bugs switched on (the exhaustive mode explores each slice once per
set, named ``SLICE+dropped`` for the second; the random mode splits its walks and hypothesis
examples). The report names the variant and what it gives the peers (``variant``).

Must not know: argument parsing, exit codes (``cli.cmd_explore`` owns them).
"""

from __future__ import annotations

import gc
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from properties.engine import SET_ASIDE
from properties.outputs import dumps, write_atomic
from properties.readings import resolve
from properties.variants import Variant
from simulator.explore import bfs as explore_bfs
from simulator.explore import hypothesis_runs as explore_hypothesis
from simulator.explore import random_walks as explore_random
from simulator.explore.common import Counterexample, keep_shortest, monitor_rules, rate
from simulator.explore.coverage import freedom_coverage, machine_coverage, rule_coverage
from simulator.explore.report import (
    FAIRNESS,
    LIVENESS,
    CounterexamplePage,
    Diagram,
    findings_json,
    strip_timing,
    write_error,
)
from simulator.explore.variant_runs import behaviours, notes
from simulator.peers.config import (
    EXPLORE_EXAMPLES,
    EXPLORE_STEPS,
    EXPLORE_WALKS,
    SMALL,
    Config,
    faults_config,
)
from simulator.progress import NULL, Progress
from simulator.workers import TaskProgress, Workers, peak_rss

Coverage = tuple[Counter[Any], Counter[str]]
"""Machine rows fired, rules exercised."""
Taken = tuple[Counter[str], list[tuple[Config, frozenset[str]]]]
"""Events taken (``coverage.freedom_coverage``'s counts), and the configurations and seeded bugs
they were taken under."""


@dataclass
class Options:
    mode: str = "both"
    seed: int = 0
    examples: int = EXPLORE_EXAMPLES
    walks: int = EXPLORE_WALKS
    steps: int = EXPLORE_STEPS
    time_budget: float | None = None
    graph: str | None = None
    out: str = "out/explore"
    faults: frozenset[str] = frozenset()
    database: str | None = None
    symmetry: bool = False
    reduce: str = "none"
    """The exhaustive search's reduction: none or por (``simulator.explore.por``)."""
    hypothesis_shrink: bool = False
    slices: tuple[str, ...] = ()
    bounds: dict[str, Any] = field(default_factory=dict)
    """Bound changes (``Config`` field -> value), including ``transport`` and ``features``."""
    depth: int | None = None
    max_states: int | None = explore_bfs.MAX_STATES
    pool: Workers | None = None
    """The worker pool (``simulator.workers.Workers``, made by the command for ``--jobs`` or
    ``--cluster``; the caller closes it): the slices of the exhaustive search, the random-walk
    and hypothesis chunks run as its jobs. None: everything runs in this process."""
    readings: dict[str, str] = field(default_factory=dict)
    """Readings of ambiguous spec text (``properties.readings``) the run explores under (put in
    every slice's and the random modes' ``Config``); absent ones take their defaults."""
    variant: Variant | None = None
    """The variant in force for the whole run (None: the spec as written); its readings are
    merged under ``readings`` by the caller."""
    diagram: Diagram | None = None
    """Renders a counterexample's transcript as a sequence diagram (the command hands in
    ``diagrams.sequence.transcript_to_mermaid``); None writes no diagram."""
    page: CounterexamplePage | None = None
    """Makes a counterexample's HTML page (the command hands in
    ``diagrams.html.runs.counterexample_page``); None writes no page."""


def exhaustive_slices(opts: Options) -> list[explore_bfs.Slice]:
    """The slices the exhaustive mode explores for these options (under the run's readings and
    variant)."""
    shape = {k: v for k, v in opts.bounds.items() if k != "transport"}
    if shape:
        chosen = [explore_bfs.Slice("custom", SMALL.with_(**shape), "SMALL with the given bounds")]
    else:
        chosen = [explore_bfs.SLICE_BY_NAME[n] for n in opts.slices] or list(explore_bfs.SLICES)
    transport = {k: v for k, v in opts.bounds.items() if k == "transport"}
    return [
        explore_bfs.Slice(s.name, s.cfg.with_(**transport).under(opts.readings, opts.variant), s.purpose)
        for s in chosen
    ]


def random_config(opts: Options) -> Config:
    """``DEFAULT`` with the bound changes; a seeded bug with bounds of its own (e.g. two terminals)
    brings those instead of ``DEFAULT`` (``simulator.peers.config.faults_config``)."""
    base = faults_config(opts.faults)
    cfg = base.with_(**opts.bounds) if opts.bounds else base
    if opts.readings or opts.variant is not None:
        cfg = cfg.with_(readings=opts.readings, variant=opts.variant)
    return cfg


def run(opts: Options, progress: Progress = NULL) -> dict[str, Any]:
    """Run the chosen modes; write the counterexample files; the report as a JSON object.
    The readings of ``opts`` travel in the runs' ``Config`` (``exhaustive_slices``,
    ``random_config``) to every monitor set, client view and simulated peer, worker processes
    and cluster workers included; the variant of ``opts`` is in force for the whole run
    (``Config.variant``, the same way). ``compute`` then ``write``."""
    return write(opts, compute(opts, progress))


@dataclass
class Computed:
    """A run's results before anything is written (``compute``): plain data, so a cluster task
    can compute it and the command's process write it (``write``)."""

    report: dict[str, Any]
    """The report without what ``write`` adds: its ``findings`` (the files of ``counterexamples``)
    and what comes after them are set there."""
    counterexamples: list[Counterexample]
    write_errors: list[str]
    seconds: float
    covered: dict[str, Coverage] = field(default_factory=dict)
    """Per mode, the counts the report's ``coverage`` is made of (the spec report draws the rows
    fired)."""


def compute(opts: Options, progress: Progress = NULL) -> Computed:
    """The chosen modes run; nothing written but the state graph (``--graph``)."""
    t0 = time.perf_counter()
    pool = opts.pool or Workers(1)
    rules = monitor_rules()
    cexs: list[Counterexample] = []
    report: dict[str, Any] = {
        "command": "explore",
        "mode": opts.mode,
        "seed": opts.seed,
        "faults": sorted(opts.faults),
        "monitors": len(rules),
        "readings": resolve(opts.readings),
    }
    if opts.variant is not None:
        report["variant"] = {
            **opts.variant.to_json(),
            "behaviours": [
                {"label": k, "faults": sorted(f)} for k, f in behaviours(opts.variant, opts.faults)
            ],
            "notes": notes(opts.variant),
        }
    coverage: dict[str, Any] = {}
    covered: dict[str, Coverage] = {}
    aside_before = Counter(SET_ASIDE)
    warnings: list[str] = []
    info: list[str] = []
    write_errors: list[str] = []
    for mode, explore in (("exhaustive", _exhaustive), ("random", _random)):
        if opts.mode not in (mode, "both"):
            continue
        if mode == "random" and opts.mode == "both":
            # the exhaustive search left its monitor sets (reference cycles) to the collector's
            # next full run; have it now rather than in the middle of the random walks
            gc.collect()
        report[mode], found, covered[mode], (events, runs) = explore(opts, progress, pool, write_errors)
        rows, exercised = covered[mode]
        coverage[mode] = {
            "machines": machine_coverage(rows, opts.variant),
            "rules": rule_coverage(exercised, rules),
        }
        if mode == "exhaustive":  # the random modes' are ``random.walk`` and ``random.hypothesis`` events
            coverage[mode]["events"] = {k: n for k, n in sorted(events.items()) if "[" not in k}
        coverage[mode]["freedoms"] = freedom_coverage(events, runs, opts.variant, mode == "exhaustive")
        cexs += found
    slices = report["exhaustive"]["slices"] if "exhaustive" in report else []
    if not all(s["complete"] for s in slices):
        warnings.append(
            "the exhaustive search is incomplete ("
            + ", ".join(f"{s['name']}: {s['stop']}" for s in slices if not s["complete"])
            + "): liveness in cycles was not judged there"
        )
    if any(s["stop"] == "state limit" for s in slices):
        info.append(further(opts))
    unjudged = [s for s in slices if s["unjudged_cycles"]]
    if unjudged:
        warnings.append(
            "liveness was not judged in "
            + ", ".join(f"{s['unjudged_cycles']} bottom cycle(s) of {s['name']}" for s in unjudged)
            + " (a state of them was expanded on one side only by --reduce por; "
            "--reduce none judges them)"
        )
    if opts.variant is not None:
        # which dropped rules the explored behaviours broke (their findings were set aside);
        # counted in this process only: with --workers the walks in other processes are not
        report["variant"]["set_aside"] = sorted(r for r in SET_ASIDE if SET_ASIDE[r] > aside_before[r])
    for mode, cov in coverage.items():
        never = cov["rules"]["never_exercised"]
        if not never:
            continue
        if not opts.bounds and (mode == "random" or not opts.slices):
            # no correct run within the default bounds triggers them (a seeded bug does): a
            # fact about the bounds, not a problem of this run
            info.append(f"rules not exercised by the default bounds of the {mode} mode: {', '.join(never)}")
        else:
            warnings.append(f"rules never exercised by the {mode} mode: {', '.join(never)}")
    never_taken = coverage.get("exhaustive", {}).get("freedoms", {}).get("never_taken")
    if never_taken:  # a complete search takes every move its bounds allow; the random modes sample
        warnings.append(f"freedoms never taken by the exhaustive mode: {', '.join(never_taken)}")
    report.update(findings=None, coverage=coverage, warnings=warnings, info=info)  # findings: ``write``
    return Computed(report, cexs, write_errors, time.perf_counter() - t0, covered)


BYTES_PER_STATE = 600
"""Peak memory of the exhaustive search per state, rounded (``benchmarks/bench_state_memory.py``:
540 bytes a state more, 596 in all at 1.5 million states of ``--prompts 2 --tool-calls 2``)."""


def further(opts: Options) -> str:
    """How to search past the state cap (a slice stopped at it)."""
    cap = f"{opts.max_states:,}" if opts.max_states is not None else "no"
    ways = [
        f"raise the cap with --max-states N (now {cap} states per slice; the search holds about "
        f"{BYTES_PER_STATE} bytes a state, so a million states take about "
        f"{BYTES_PER_STATE * 10**6 / 1e9:.1f} GB)"
    ]
    if opts.reduce != "por":
        ways.append("--reduce por (fewer states, the same rules found, quiescent states and rows)")
    ways.append(
        "split the search into slices (--slice, or bounds of their own) run as jobs of --jobs N or "
        "--cluster, each holding its own states"
    )
    return "to go further than the state cap: " + "; ".join(ways) + " (docs/exploring.md, Bigger bounds)"


def write(opts: Options, done: Computed) -> dict[str, Any]:
    """Write the counterexample files and ``report.json`` of a computed run under ``opts.out``;
    the whole report."""
    t0 = time.perf_counter()
    out = Path(opts.out)
    report = done.report
    write_errors = done.write_errors
    report["findings"] = findings_json(done.counterexamples, out, opts.diagram, write_errors, opts.page)
    report["output"] = str(out)
    report["report_file"] = str(out / "report.json")
    report["write_errors"] = write_errors
    report["timing"] = {"total_seconds": done.seconds + time.perf_counter() - t0}
    try:
        write_atomic(out / "report.json", dumps(strip_timing(report)))
    except OSError as exc:
        report["report_file"] = None
        write_errors.append(write_error(out / "report.json", exc))
    return report


def run_each(runs: list[Options], pool: Workers, progress: Progress, what: str) -> Iterator[dict[str, Any]]:
    """The reports of ``run`` on each of ``runs``, in order (the readings matrix's cells, a
    comparison's two explorations). On a parallel pool each is a job that computes the run
    (every mode in the job's process) and this process writes its files, so they land here even
    when the job ran on another node; otherwise they run here one after the other."""
    if not pool.parallel:
        for i, opts in enumerate(runs, 1):
            progress.phase(f"{what}: {i}/{len(runs)}")
            yield run(opts, progress)
            gc.collect()  # an exploration leaves cyclic garbage that the collector's thresholds let pile up
        return
    tasks = TaskProgress(progress, what, len(runs))
    jobs = [replace(opts, pool=None) for opts in runs]
    for opts, (done, rss) in zip(runs, pool.map(compute_job, jobs), strict=True):
        report = write(opts, done)
        tasks.done(int(report.get("exhaustive", {}).get("states", 0)), rss)
        yield report
    progress.done()


def compute_job(opts: Options) -> tuple[Computed, int]:
    """One run computed as a job of a pool, nothing written; and the peak resident memory of the
    job's process. The job's cyclic garbage is collected before the worker takes its next job."""
    done = compute(opts)
    gc.collect()
    return done, peak_rss()


SliceJob = tuple[explore_bfs.Slice, frozenset[str], str, Options, float | None]
"""(slice, faults, name, options, deadline as ``time.time()``): one slice's search as a job."""


def search_slice(job: SliceJob, note: Any = None) -> tuple[explore_bfs.BfsResult, int]:
    """One slice's exhaustive search (in this process or a worker's); the result and the
    peak resident memory of the process that ran it."""
    sl, faults, name, opts, deadline = job
    budget = None if deadline is None else max(0.0, deadline - time.time())
    result = explore_bfs.explore(
        sl.cfg,
        faults,
        depth=opts.depth,
        time_budget=budget,
        symmetry=opts.symmetry,
        graph=opts.graph is not None,
        progress=note,
        name=name,
        max_states=opts.max_states,
        reduce=opts.reduce,
    )
    return result, peak_rss()


def _exhaustive(
    opts: Options, progress: Progress, pool: Workers, write_errors: list[str]
) -> tuple[dict[str, Any], list[Counterexample], Coverage, Taken]:
    t0 = time.perf_counter()
    deadline = None if opts.time_budget is None else time.time() + opts.time_budget
    bare = replace(opts, pool=None, diagram=None, page=None)  # what a job needs, picklable
    work: list[SliceJob] = [
        (sl, faults, sl.name if label == "spec" else f"{sl.name}+{label}", bare, deadline)
        for sl in exhaustive_slices(opts)
        for label, faults in behaviours(opts.variant, opts.faults)
    ]
    results: list[explore_bfs.BfsResult] = []
    if pool.parallel and len(work) > 1:
        tasks = TaskProgress(progress, "exhaustive slices", len(work))
        for result, rss in pool.map(search_slice, work):
            results.append(result)
            tasks.done(result.states, rss)
    else:
        for job in work:
            progress.phase(f"exhaustive, slice {job[2]}")
            results.append(search_slice(job, progress.note)[0])
    seconds = time.perf_counter() - t0
    states = sum(r.states for r in results)
    best: dict[str, Counterexample] = {}
    keep_shortest(best, (c for r in results for c in r.counterexamples))
    covered = union((r.rows, r.exercised) for r in results)
    progress.done()
    ex: dict[str, Any] = {
        "states": states,
        "transitions": sum(r.transitions for r in results),
        "max_depth": max((r.max_depth for r in results), default=0),
        "seconds": seconds,
        "states_per_second": rate(states, seconds),
        "bounds": [r.cfg.to_json() for r in results],
        "depth_limit": opts.depth,
        "max_states": opts.max_states,
        "complete": all(r.complete for r in results),
        "symmetry": opts.symmetry,
        "reduce": opts.reduce,
        "quiescent_states": sum(r.quiescent_states for r in results),
        "bottom_cycles": sum(r.bottom_cycles for r in results),
        "fairness": FAIRNESS,
        "liveness": LIVENESS,
        "slices": [
            {
                **r.stats_json(),
                "purpose": sl.purpose,
                "seconds": r.seconds,
                "states_per_second": rate(r.states, r.seconds),
            }
            for (sl, *_), r in zip(work, results, strict=True)
        ],
    }
    if opts.graph is not None:
        progress.phase("writing the state graph (GraphML)")
        ex["graph"] = opts.graph
        try:
            ex["graph_bytes"] = _write_graph(opts.graph, results)
        except OSError as exc:
            ex["graph_bytes"] = None  # the report says it could not be written (``write_errors``)
            write_errors.append(write_error(opts.graph, exc))
        progress.done()
    events: Counter[str] = Counter()
    for r in results:
        events.update(r.events)
    # the configurations that could have taken a freedom: those searched completely
    runs = [(r.cfg, job[1]) for job, r in zip(work, results, strict=True) if r.complete]
    return ex, [best[r] for r in sorted(best)], covered, (events, runs)


def union(parts: Iterable[Coverage]) -> Coverage:
    """The coverage of several runs: every count summed."""
    total: Coverage = (Counter(), Counter())
    for part in parts:
        for into, counts in zip(total, part, strict=True):
            into.update(counts)
    return total


def _write_graph(path: str, results: list[explore_bfs.BfsResult]) -> int:
    """Write the slices' state graphs as one GraphML file (``-``: standard output); its size in
    bytes (the report says it: a graph of the default slices is tens of megabytes)."""
    import io

    import networkx as nx

    merged = nx.union_all([r.graph for r in results])
    for key in ("states", "transitions", "quiescent_states", "sccs", "nontrivial_sccs", "bottom_cycles"):
        merged.graph[key] = sum(getattr(r, key) for r in results)
    merged.graph["complete"] = all(r.complete for r in results)
    merged.graph["slices"] = ",".join(r.name for r in results)
    buf = io.BytesIO()
    nx.write_graphml(merged, buf)
    if path == "-":  # standard output
        import sys

        sys.stdout.buffer.write(buf.getvalue())
        sys.stdout.flush()
    else:
        write_atomic(path, buf.getvalue())
    return len(buf.getvalue())


def _random(
    opts: Options, progress: Progress, pool: Workers, write_errors: list[str]
) -> tuple[dict[str, Any], list[Counterexample], Coverage, Taken]:
    cfg = random_config(opts)
    sets = behaviours(opts.variant, opts.faults)
    hyps: list[explore_hypothesis.HypothesisResult] = []
    walks_: list[explore_random.RandomResult] = []
    for i, (_label, faults) in enumerate(sets):
        hyps.append(
            explore_hypothesis.explore(
                cfg,
                faults,
                seed=opts.seed,
                examples=_share(opts.examples, i, len(sets), 1 if opts.examples else 0),
                steps=opts.steps,
                database=opts.database,
                hypothesis_shrink=opts.hypothesis_shrink,
                progress=progress,
                chunk_map=pool.map if pool.parallel else None,
            )
        )
        walks_.append(
            explore_random.explore(
                cfg,
                faults,
                seed=opts.seed,
                walks=_share(opts.walks, i, len(sets), 0),
                steps=opts.steps,
                progress=progress,
                chunk_map=pool.map,
            )
        )
    hyp, walks = hyps[0], walks_[0]
    hyp_seconds = sum(h.seconds for h in hyps)
    walk_seconds = sum(w.seconds for w in walks_)
    rule_executions = sum(h.stats.rule_executions for h in hyps)
    walk_steps = sum(w.steps for w in walks_)
    rnd = {
        "seed": opts.seed,
        "bounds": cfg.to_json(),
        "examples": sum(h.stats.examples for h in hyps),
        "examples_asked": opts.examples,
        "examples_explained": explain_examples(hyp.stats_json(), hyp.max_examples),
        "rule_executions": rule_executions,
        "rule_executions_per_second": rate(rule_executions, hyp_seconds),
        "walks": sum(w.walks for w in walks_),
        "walk_steps": walk_steps,
        "walk_steps_per_second": rate(walk_steps, walk_seconds),
        "steps": walk_steps + sum(h.stats.steps for h in hyps),
        "seconds": hyp_seconds + walk_seconds + sum(w.shrink_seconds for w in walks_),
        "hypothesis": {**hyp.stats_json(), "seconds": hyp.seconds},
        "walk": {**walks.stats_json(), "seconds": walks.seconds, "shrink_seconds": walks.shrink_seconds},
    }
    if len(sets) > 1:
        rnd["behaviours"] = [
            {
                "label": label,
                "faults": sorted(faults),
                "examples": h.stats.examples,
                "walks": w.walks,
                "walk_steps": w.steps,
            }
            for (label, faults), h, w in zip(sets, hyps, walks_, strict=True)
        ]
    covered = union(
        [(h.stats.rows, h.stats.exercised) for h in hyps] + [(w.rows, w.exercised) for w in walks_]
    )
    # one counterexample per rule and mode: the shortest of the behaviour sets
    best: dict[str, Counterexample] = {}
    cexs = [c for h in hyps for c in h.counterexamples] + [c for w in walks_ for c in w.counterexamples]
    keep_shortest(best, cexs, key=lambda c: f"{c.rule} {c.mode}")
    events: Counter[str] = Counter()
    for h, w in zip(hyps, walks_, strict=True):
        events.update(h.stats.events)
        events.update(w.events)
    return rnd, [best[k] for k in sorted(best)], covered, (events, [(cfg, f) for _, f in sets])


def _share(total: int, i: int, parts: int, low: int) -> int:
    """Part ``i`` of ``total`` split in ``parts`` (the first parts take the remainder), at least ``low``."""
    return max(low, total // parts + (1 if i < total % parts else 0))


def explain_examples(hyp: dict[str, Any], asked: int) -> str:
    """What hypothesis was asked for, what it ran and why the two differ, in one sentence."""
    if asked == 0:
        return "no examples asked (--examples 0): the random walks only"
    by = hyp["examples_by_outcome"]
    ran = sum(by.values())
    parts = ", ".join(f"{n:,} {explore_hypothesis.OUTCOMES[k]}" for k, n in by.items())
    text = f"{asked:,} examples asked per round, {ran:,} ran in {hyp['rounds']} round(s) ({parts})"
    why = []
    if any(k not in ("completed", "failed") for k in by):
        why.append("hypothesis counts only the examples that run to their end towards the number asked")
    if by.get("failed"):
        why.append("it runs a failing example once more to report it")
    if hyp["rounds"] > 1:
        why.append("each round after a rule is found asks for the examples again")
    if ran != asked and why:
        text += ": " + "; ".join(why)
    return text
