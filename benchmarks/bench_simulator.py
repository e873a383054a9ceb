"""Throughput of the simulator (simulator/peers/world.py driven by simulator/schedulers.random_walk).

Run: ``python benchmarks/bench_simulator.py [WALKS] [STEPS]`` (defaults 1000 walks of 60 steps).
Pins itself to one core where the OS allows it, then times, best of 5 repeats each:

* ``walks``: seeded random walks with the default Config, no monitors (events per second,
  an event being one ``World.step``: a client or agent choice or one delivery);
* ``walks+unordered``: the same with the unordered transport;
* ``walks+monitors``: the same walks with ``MonitorSet()`` fed every message, when
  ``properties.monitors`` exists (otherwise the line says it was skipped);
* ``baseline``: a plain Python loop doing ``rng.choice`` over a fixed list of event tuples and
  appending the pick to a list, as many times as the walks had events. Every figure is also
  given as a ratio to it, so results compare across machines.

Figures only: no asserts, no timing thresholds.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from anywhere without installing

from cli.options import positive_int
from simulator.peers.config import DEFAULT, Config
from simulator.peers.schedulers import random_walk

REPEATS = 5


def _pin_one_core() -> str:
    if hasattr(os, "sched_setaffinity") and hasattr(os, "sched_getaffinity"):
        cores = sorted(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cores[0]})
        return f"pinned to core {cores[0]}"
    return "not pinned (no sched_setaffinity on this OS)"


def _best(work: Callable[[], int]) -> tuple[float, int]:
    """Best wall time of REPEATS runs of ``work`` and the event count it returned."""
    best, events = float("inf"), 0
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        events = work()
        best = min(best, time.perf_counter() - t0)
    return best, events


def _walks(walks: int, steps: int, cfg: Config, monitored: bool) -> Callable[[], int]:
    def work() -> int:
        total = 0
        for seed in range(walks):
            monitors: Any = None
            if monitored:
                from properties.engine import MonitorSet

                monitors = MonitorSet()
            total += random_walk(seed, steps, cfg, monitors=monitors).world.steps
        return total

    return work


def _baseline(n: int) -> Callable[[], int]:
    pool: list[tuple[str, str, Any]] = [("client", "prompt", None), ("agent", "say", None)]
    pool += [("agent", "end", "end_turn")]
    pool += [("net", "to_client", 0), ("net", "to_agent", 0), ("agent", "insert", 1)]

    def work() -> int:
        rng = random.Random(0)
        choose = rng.choice
        out: list[tuple[str, str, Any]] = []
        add = out.append
        for _ in range(n):
            add(choose(pool))
        return len(out)

    return work


def _monitors_present() -> bool:
    try:
        return importlib.util.find_spec("properties.monitors") is not None
    except ImportError:
        return False


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n", 1)[0])
    ap.add_argument(
        "walks", nargs="?", type=positive_int, default=1000, help="seeded walks (default %(default)s)"
    )
    ap.add_argument(
        "steps", nargs="?", type=positive_int, default=60, help="steps per walk (default %(default)s)"
    )
    args = ap.parse_args(argv)
    walks, steps = args.walks, args.steps
    print(f"bench_simulator: {walks} walks x {steps} steps, best of {REPEATS}; {_pin_one_core()}")
    rows: list[tuple[str, float, int]] = []
    for label, cfg in (("walks", DEFAULT), ("walks+unordered", DEFAULT.with_(transport="unordered"))):
        t, n = _best(_walks(walks, steps, cfg, monitored=False))
        rows.append((label, t, n))
    if _monitors_present():
        t, n = _best(_walks(walks, steps, DEFAULT, monitored=True))
        rows.append(("walks+monitors", t, n))
    else:
        print("walks+monitors: skipped (properties.monitors is not present)")
    t_base, n_base = _best(_baseline(rows[0][2]))
    base_rate = n_base / t_base
    print(f"{'run':<16} {'events':>8} {'best s':>8} {'events/s':>11} {'x baseline':>10} {'cost':>6}")
    for label, t, n in rows:
        rate = n / t
        print(
            f"{label:<16} {n:>8} {t:>8.3f} {rate:>11,.0f} {rate / base_rate:>10.4f} {base_rate / rate:>6.1f}"
        )
    print(f"{'baseline':<16} {n_base:>8} {t_base:>8.3f} {base_rate:>11,.0f} {1.0:>10.4f} {1.0:>6.1f}")
    print("x baseline: events/s over baseline picks/s; cost: baseline picks one simulator event takes")


if __name__ == "__main__":
    main()
