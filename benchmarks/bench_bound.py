"""Benchmark: one exhaustive search of a raised bound, bounded in time, with and without a reduction.

Runs the ``core`` slice with the bound changes given (default: three prompts) in this process,
with ``--reduce`` (none or por), stopped by ``--budget`` seconds or ``--max-states``, and prints
one JSON object: states, transitions, depth reached, seconds, states/s, peak RSS (``VmHWM``),
whether it completed, the states found per BFS level (the last level listed is the one being
discovered when the search stopped; the one before it, the one being expanded), and the
progress lines (one every ``--every`` seconds).

    python benchmarks/bench_bound.py --prompts 3 --reduce por --budget 240
    python benchmarks/bench_bound.py --prompts 2 --reduce none

``--slices`` instead searches every default slice with and without the partial-order
reduction, alternately, ``--repeat`` times in this process (after one untimed warm-up search),
and prints one markdown row per slice: states, transitions, quiescent states and the best
seconds of each, and the ratios.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import numpy as np

from simulator.explore import bfs as explore_bfs
from simulator.explore.common import rate
from simulator.workers import peak_rss


def run(
    bounds: dict[str, Any], reduce: str, budget: float, max_states: int | None, every: float
) -> dict[str, Any]:
    cfg = explore_bfs.SLICE_BY_NAME["core"].cfg.with_(**bounds)
    lines: list[str] = []
    t0 = time.perf_counter()
    last = [0.0]

    def progress(text: str) -> None:
        now = time.perf_counter() - t0
        if now - last[0] >= every:
            last[0] = now
            line = f"{now:7.1f} s  {text}  rss {peak_rss() / 2**20:,.0f} MB"
            lines.append(line)
            print(line, file=sys.stderr, flush=True)

    search = explore_bfs.search_states
    searched: list[Any] = []  # (parts, search) as ``search_states`` returns them: the depths

    def keeping(*args: Any, **kw: Any) -> Any:
        searched.append(search(*args, **kw))
        return searched[-1]

    explore_bfs.search_states = keeping
    try:
        res = explore_bfs.explore(
            cfg, time_budget=budget, progress=progress, name="core", max_states=max_states, reduce=reduce
        )
    finally:
        explore_bfs.search_states = search
    depth = searched[0][1].depth
    levels = np.bincount(np.frombuffer(depth, dtype=f"i{depth.itemsize}"))
    return {
        "bounds": bounds,
        "reduce": reduce,
        "states": res.states,
        "transitions": res.transitions,
        "max_depth": res.max_depth,
        "seconds": round(res.seconds, 1),
        "states_per_second": round(rate(res.states, res.seconds)),
        "complete": res.complete,
        "stop": res.stop,
        "one_side_states": res.one_side_states,
        "quiescent_states": res.quiescent_states,
        "peak_rss_mb": round(peak_rss() / 2**20),
        "levels": levels.tolist(),
        "progress": lines,
    }


def slices(repeat: int) -> None:
    explore_bfs.explore(explore_bfs.SLICE_BY_NAME["session"].cfg)  # warm-up: imports, tables
    print(
        "| slice | states | with por | ratio | transitions | with por | ratio | quiescent | seconds | "
        "with por | ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    total = [0, 0, 0, 0, 0.0, 0.0]
    for sl in explore_bfs.SLICES:
        best = {"none": float("inf"), "por": float("inf")}
        got: dict[str, explore_bfs.BfsResult] = {}
        for _ in range(repeat):
            for reduce in ("none", "por"):
                got[reduce] = explore_bfs.explore(sl.cfg, name=sl.name, reduce=reduce)
                best[reduce] = min(best[reduce], got[reduce].seconds)
        a, b = got["none"], got["por"]
        assert a.quiescent_states == b.quiescent_states
        for i, v in enumerate((a.states, b.states, a.transitions, b.transitions, best["none"], best["por"])):
            total[i] += v
        print(
            f"| {sl.name} | {a.states:,} | {b.states:,} | {b.states / a.states:.2f} | {a.transitions:,} | "
            f"{b.transitions:,} | {b.transitions / a.transitions:.2f} | {a.quiescent_states:,} | "
            f"{best['none']:.2f} | {best['por']:.2f} | {best['por'] / best['none']:.2f} |",
            flush=True,
        )
    s0, s1, t0, t1, c0, c1 = total
    print(
        f"| all | {s0:,} | {s1:,} | {s1 / s0:.2f} | {t0:,} | {t1:,} | {t1 / t0:.2f} | | "
        f"{c0:.2f} | {c1:.2f} | {c1 / c0:.2f} |"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--prompts", type=int, default=3)
    ap.add_argument("--reduce", choices=("none", "por"), default="por")
    ap.add_argument("--budget", type=float, default=240.0, help="seconds (default 240)")
    ap.add_argument("--max-states", type=int, default=None)
    ap.add_argument("--every", type=float, default=15.0, help="seconds between progress lines")
    ap.add_argument("--slices", action="store_true", help="every default slice, with and without por")
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    if args.slices:
        slices(args.repeat)
        return 0
    out = run({"prompts": args.prompts}, args.reduce, args.budget, args.max_states, args.every)
    sys.stdout.write(json.dumps(out) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
