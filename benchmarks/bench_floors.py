"""The explorers' issue 15 floors, measured as ratios in one process (benchmarks/README.md).

Run: ``python benchmarks/bench_floors.py [--rounds N] [--json]`` from the repository root.

Each round, after one untimed warm-up, times in turn: the hand-written tuple BFS of
``bench_explore`` (the baseline), the exhaustive search of the ``core`` and ``prompts`` slices
(all monitors), the tuple BFS again, and the random walks (1,500 walks of 60 steps on the
default configuration) with all monitors and without. A search's ratio is its states/s over
the mean of the two tuple-BFS figures around it, so a load that changes during a round moves
both sides. Printed: every round's figures, the medians, the load average before and after,
and the process's CPU seconds beside the clock for the walks (the floor there is an absolute
50,000 steps/s, which the clock cannot judge on a loaded machine; CPU time is still slowed by
the other CPU's load through the shared caches).

``--instructions core|prompts|walks`` runs one warm-up and then that work once, for
``valgrind --tool=cachegrind``: run it also with ``--instructions none`` (the warm-up alone) and
subtract, which gives instructions per state or per step independent of the load.

Figures only, nothing asserted.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_explore import tuple_bfs

from simulator.explore import bfs as explore_bfs
from simulator.explore import random_walks as explore_random
from simulator.explore.common import rate
from simulator.peers.config import DEFAULT

WALKS = 1500
STEPS = 60


def _tuple_rate() -> float:
    t0 = time.perf_counter()
    states, _ = tuple_bfs(4, 2)
    return states / (time.perf_counter() - t0)


def _search_rate(name: str) -> float:
    res = explore_bfs.explore(explore_bfs.SLICE_BY_NAME[name].cfg, name=name)
    return rate(res.states, res.seconds)


def _walk_rates(monitors: bool) -> tuple[float, float]:
    """(steps per second of the clock, steps per CPU second) of the walks."""
    gc.collect()
    c0 = time.process_time()
    res = explore_random.explore(DEFAULT, walks=WALKS, steps=STEPS, monitors=monitors)
    cpu = time.process_time() - c0
    return rate(res.steps, res.seconds), res.steps / cpu


def one_round() -> dict[str, float]:
    before = _tuple_rate()
    core = _search_rate("core")
    prompts = _search_rate("prompts")
    after = _tuple_rate()
    base = (before + after) / 2
    walks, walks_cpu = _walk_rates(True)
    bare, bare_cpu = _walk_rates(False)
    return {
        "tuple_bfs": base,
        "core": core,
        "prompts": prompts,
        "core_ratio": core / base,
        "prompts_ratio": prompts / base,
        "walks": walks,
        "walks_cpu": walks_cpu,
        "walks_no_monitors": bare,
        "walks_no_monitors_cpu": bare_cpu,
    }


def warm_up() -> None:
    explore_bfs.explore(explore_bfs.SLICE_BY_NAME["session"].cfg)
    tuple_bfs(2, 1)
    explore_random.explore(DEFAULT, walks=20, steps=STEPS)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="rounds (default 3)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--instructions", choices=("none", "tuple", "core", "prompts", "walks"), help="see above")
    args = ap.parse_args()
    warm_up()
    if args.instructions is not None:
        if args.instructions in ("core", "prompts"):
            explore_bfs.explore(explore_bfs.SLICE_BY_NAME[args.instructions].cfg)
        elif args.instructions == "tuple":
            tuple_bfs(4, 2)
        elif args.instructions == "walks":
            gc.collect()
            explore_random.explore(DEFAULT, walks=300, steps=STEPS)
        return 0
    load = [os.getloadavg()[0]]
    rounds = [one_round() for _ in range(args.rounds)]
    load.append(os.getloadavg()[0])
    medians = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    out: dict[str, Any] = {"rounds": rounds, "median": medians, "load": load}
    if args.json:
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return 0
    print(f"load average (1 min) {load[0]:.2f} before, {load[1]:.2f} after")
    for label, r in [*((f"round {i + 1}", r) for i, r in enumerate(rounds)), ("median", medians)]:
        print(
            f"{label}: tuple BFS {r['tuple_bfs']:,.0f} states/s; core {r['core']:,.0f} "
            f"({r['core_ratio']:.3f}x); prompts {r['prompts']:,.0f} ({r['prompts_ratio']:.3f}x); walks "
            f"{r['walks']:,.0f} steps/s ({r['walks_cpu']:,.0f} per CPU s), no monitors "
            f"{r['walks_no_monitors']:,.0f} ({r['walks_no_monitors_cpu']:,.0f})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
