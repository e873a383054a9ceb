"""Throughput of the explorers (simulator/explore_*.py), next to hand-written baselines.

Run: ``python benchmarks/bench_explore.py [--quick] [--json] [--no-symmetry]`` from the repository root.

Measured in this one process, one core, after one untimed warm-up search (the first search of
a process also pays one-time imports and table building, about 0.1 s):

1. **BFS states/s**: ``explore_bfs.explore`` (all monitors) on the ``core`` and ``prompts``
   slices, on the first 300,000 states of ``core`` with two prompts, and on ``core`` without
   monitors (what the search itself costs), next to ``tuple_bfs``: a minimal hand-written
   breadth-first search over a plain-tuple model of the same protocol core (prompt, hold,
   insert, answer, cancel, a permission request, work start and end, two FIFO channels of
   capacity 1), with no monitors, no wire messages and no objects. The ratio says what the
   executable model costs over the cheapest possible search. Peak traced memory per distinct
   state (``tracemalloc``: the state index, parent pointers, edges and the interned parts with
   their memoized moves) is printed for both. The explorer pauses CPython's cyclic garbage
   collector while it searches; the tuple BFS runs with it on (the plain program the issue's
   reference figure describes) and, for comparison, again with it paused.
2. **random-walk steps/s** with all monitors and with none (ratio = the monitors' cost).
3. **hypothesis rule executions/s** on the unmodified model.
4. **symmetry**: distinct states of each slice with and without message-ID symmetry reduction.

``--growth`` instead prints the cost-growth table of docs/exploring.md: distinct states and
seconds of the exhaustive search (all monitors) as each bound grows from the ``core`` slice,
one bound at a time, each point stopped by ``--budget`` seconds (then marked ``>``).

Figures only, nothing asserted (the shared machine's load moves them by tens of percent).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import tracemalloc
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from simulator.explore import bfs as explore_bfs
from simulator.explore import hypothesis_runs as explore_hypothesis
from simulator.explore import random_walks as explore_random
from simulator.explore.common import rate
from simulator.peers.config import DEFAULT

# -- the hand-written baseline -------------------------------------------------------------------
# state: (prompts, fg, perm, cancels_left, sent, to_agent, to_client)
#   prompts: tuple of per-prompt states: 0 unsent, 1 in flight, 2 received, 3 held, 4 covered,
#            5 inserted, 6 answered, 7 withdrawn
#   fg: 0 idle, 1 running, 2 requires_action, 3 cancelling
#   perm: 0 none, 1 pending, 2 answered
#   to_agent / to_client: tuples of tokens (FIFO)


def _put(t: tuple[int, ...], i: int, v: int) -> tuple[int, ...]:
    return (*t[:i], v, *t[i + 1 :])


def tuple_successors(state: tuple[Any, ...], cap: int) -> Iterator[tuple[Any, ...]]:
    prompts, fg, perm, cancels, to_agent, to_client = state
    if len(to_agent) < cap:
        for i, p in enumerate(prompts):
            if p == 0:
                yield (
                    _put(prompts, i, 1),
                    fg,
                    perm,
                    cancels,
                    (*to_agent, ("p", i)),
                    to_client,
                )
                break
        if cancels:
            yield (prompts, fg, perm, cancels - 1, (*to_agent, ("c",)), to_client)
        if perm == 1:
            yield (prompts, fg, 2, cancels, (*to_agent, ("a",)), to_client)
    if to_agent:
        msg, rest = to_agent[0], to_agent[1:]
        if msg[0] == "p":
            i = msg[1]
            yield (_put(prompts, i, 2), fg, perm, cancels, rest, to_client)
        elif msg[0] == "c":
            ps = tuple(4 if p in (2, 3) else p for p in prompts)
            yield (ps, 3 if fg in (1, 2) else fg, perm, cancels, rest, to_client)
        else:
            yield (prompts, 1 if fg == 2 else fg, perm, cancels, rest, to_client)
    if to_client:
        yield (prompts, fg, perm, cancels, to_agent, to_client[1:])
    if len(to_client) < cap:
        oldest = next((i for i, p in enumerate(prompts) if p in (2, 3)), None)
        if oldest is not None:
            p = prompts[oldest]
            if p == 2:
                yield (
                    _put(prompts, oldest, 3),
                    fg,
                    perm,
                    cancels,
                    to_agent,
                    to_client,
                )
            yield (_put(prompts, oldest, 5), fg, perm, cancels, to_agent, to_client)
        for i, p in enumerate(prompts):
            if p == 5:
                yield (
                    _put(prompts, i, 6),
                    fg,
                    perm,
                    cancels,
                    to_agent,
                    (*to_client, ("r", i)),
                )
            if p == 4:
                yield (
                    _put(prompts, i, 7),
                    fg,
                    perm,
                    cancels,
                    to_agent,
                    (*to_client, ("w", i)),
                )
        if fg == 0 and any(p in (5, 6) for p in prompts):
            yield (prompts, 1, perm, cancels, to_agent, (*to_client, ("s", 1)))
        if fg == 1 and perm == 0:
            yield (prompts, 2, 1, cancels, to_agent, (*to_client, ("q",)))
        if fg in (1, 3) and perm != 1:
            yield (prompts, 0, perm, cancels, to_agent, (*to_client, ("s", 0)))


def tuple_bfs(prompts: int, cap: int) -> tuple[int, int]:
    root = ((0,) * prompts, 0, 0, 1, (), ())
    seen = {root: None}
    queue = deque([root])
    transitions = 0
    while queue:
        s = queue.popleft()
        for t in tuple_successors(s, cap):
            transitions += 1
            if t not in seen:
                seen[t] = None
                queue.append(t)
    return len(seen), transitions


# -- measurement helpers --------------------------------------------------------------------------


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def traced_peak(fn: Callable[[], Any]) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def traced_bfs(cfg: Any) -> tuple[int, int, int]:
    """(states, peak bytes, bytes still held right after the search) for one exhaustive search
    (read as ``search_states`` returns: the state index, parent pointers, depths and edges)."""
    search = explore_bfs.search_states
    held: list[int] = []

    def measured(*args: Any, **kw: Any) -> Any:
        got = search(*args, **kw)
        held.append(tracemalloc.get_traced_memory()[0])
        return got

    tracemalloc.start()
    explore_bfs.search_states = measured
    try:
        base = tracemalloc.get_traced_memory()[0]
        res = explore_bfs.explore(cfg)
        peak = tracemalloc.get_traced_memory()[1] - base
        return res.states, peak, held[0] - base
    finally:
        explore_bfs.search_states = search
        tracemalloc.stop()


GROWTH: tuple[tuple[str, str, tuple[Any, ...]], ...] = (
    ("prompts", "prompts", (1, 2, 3)),
    ("tool_calls", "tool_calls", (0, 1, 2)),
    ("permissions", "permissions", (0, 1, 2)),
    ("background", "background", (0, 1, 2)),
    ("cancels", "cancels", (0, 1, 2)),
    ("outputs", "outputs", (0, 1, 2)),
    ("capacity", "capacity", (1, 2, 3)),
    ("transport", "transport", ("fifo", "unordered")),
)


def growth(budget: float) -> list[dict[str, Any]]:
    base = explore_bfs.SLICE_BY_NAME["core"].cfg
    rows = []
    for label, field_name, values in GROWTH:
        for value in values:
            cfg = base.with_(**{field_name: value})
            if field_name == "permissions" and value > cfg.tool_calls:
                cfg = cfg.with_(tool_calls=value)
            res = explore_bfs.explore(cfg, time_budget=budget, max_states=None)
            rows.append(
                {
                    "bound": label,
                    "value": value,
                    "states": res.states,
                    "transitions": res.transitions,
                    "max_depth": res.max_depth,
                    "seconds": res.seconds,
                    "complete": res.complete,
                }
            )
            mark = "" if res.complete else ">"
            print(
                f"| {label} | {value} | {mark}{res.states:,} | {mark}{res.transitions:,} | "
                f"{res.max_depth} | {res.seconds:.1f} |",
                flush=True,
            )
            if not res.complete:
                break
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller runs")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--growth", action="store_true", help="print the cost-growth table instead")
    ap.add_argument("--no-symmetry", action="store_true", help="skip the symmetry section (the longest)")
    ap.add_argument("--budget", type=float, default=120.0, help="seconds per growth point (default 120)")
    args = ap.parse_args()
    out: dict[str, Any] = {}
    if args.growth:
        print("| bound | value | states | transitions | max depth | seconds |")
        print("|---|---:|---:|---:|---:|---:|")
        rows = growth(args.budget)
        if args.json:
            sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        return 0

    # 0. warm-up, untimed: first-time imports (numpy, the catalogue) and table building, which
    # the first search of a process pays once
    explore_bfs.explore(explore_bfs.SLICE_BY_NAME["session"].cfg)
    tuple_bfs(2, 1)

    # 1. BFS versus the tuple baseline
    size = 3 if args.quick else 4
    (states, trans), secs = timed(lambda: tuple_bfs(size, 2))
    tuple_mem = traced_peak(lambda: tuple_bfs(size, 2))
    gc.disable()  # the explorer pauses the cyclic collector while it searches: time the baseline so too
    try:
        _, secs_no_gc = timed(lambda: tuple_bfs(size, 2))
    finally:
        gc.enable()
    out["tuple_bfs"] = {
        "prompts": size,
        "states": states,
        "transitions": trans,
        "seconds": secs,
        "states_per_second": states / secs,
        "states_per_second_collector_paused": states / secs_no_gc,
        "peak_bytes_per_state": tuple_mem / states,
    }
    out["bfs"] = []
    core = explore_bfs.SLICE_BY_NAME["core"].cfg
    runs: list[tuple[str, Any, bool, int | None]] = [
        (name, explore_bfs.SLICE_BY_NAME[name].cfg, True, None)
        for name in (("prompts",) if args.quick else ("core", "prompts"))
    ]
    runs.append(("core, no monitors", core, False, None))
    if not args.quick:
        runs.append(("core with 2 prompts, first 300,000 states", core.with_(prompts=2), True, 300_000))
    for name, cfg, monitors, cap in runs:
        res = explore_bfs.explore(cfg, name=name, monitors=monitors, max_states=cap)
        traced = None if args.quick or not monitors or cap else traced_bfs(cfg)
        out["bfs"].append(
            {
                "slice": name,
                "monitors": monitors,
                "states": res.states,
                "transitions": res.transitions,
                "seconds": res.seconds,
                "states_per_second": rate(res.states, res.seconds),
                "ratio_to_tuple_bfs": rate(res.states, res.seconds) / out["tuple_bfs"]["states_per_second"],
                "peak_bytes_per_state": traced[1] / traced[0] if traced else None,
                "stored_bytes_per_state": traced[2] / traced[0] if traced else None,
            }
        )

    # 2. random walks with and without monitors (after a full collection: the searches above
    # left their monitor sets, reference cycles, to the collector's next full run)
    gc.collect()
    walks = 300 if args.quick else 1500
    with_m = explore_random.explore(DEFAULT, walks=walks, steps=60)
    without = explore_random.explore(DEFAULT, walks=walks, steps=60, monitors=False)
    out["random"] = {
        "walks": walks,
        "steps": with_m.steps,
        "steps_per_second_monitors": rate(with_m.steps, with_m.seconds),
        "steps_per_second_no_monitors": rate(without.steps, without.seconds),
        "monitor_cost_ratio": rate(without.steps, without.seconds) / rate(with_m.steps, with_m.seconds),
    }

    # 3. hypothesis
    hyp = explore_hypothesis.explore(DEFAULT, examples=60 if args.quick else 300, steps=50)
    out["hypothesis"] = {
        "examples": hyp.stats.examples,
        "rule_executions": hyp.stats.rule_executions,
        "seconds": hyp.seconds,
        "rule_executions_per_second": hyp.rule_executions_per_second,
    }

    # 4. symmetry
    out["symmetry"] = []
    for sl in () if args.no_symmetry else explore_bfs.SLICES:
        if args.quick and sl.name in ("core", "prompts"):
            continue
        plain = explore_bfs.explore(sl.cfg)
        reduced = explore_bfs.explore(sl.cfg, symmetry=True)
        out["symmetry"].append(
            {
                "slice": sl.name,
                "states": plain.states,
                "states_symmetry": reduced.states,
                "seconds": plain.seconds,
                "seconds_symmetry": reduced.seconds,
            }
        )

    if args.json:
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
        return 0
    t = out["tuple_bfs"]
    print(
        f"tuple BFS ({t['prompts']} prompts, capacity 2): {t['states']:,} states, "
        f"{t['states_per_second']:,.0f} states/s ({t['states_per_second_collector_paused']:,.0f} with the "
        f"cyclic collector paused), {t['peak_bytes_per_state']:,.0f} peak bytes/state"
    )
    for b in out["bfs"]:
        per = b["peak_bytes_per_state"]
        note = (
            f", {per:,.0f} peak bytes/state, {b['stored_bytes_per_state']:,.0f} stored bytes/state"
            if per
            else ""
        )
        print(
            f"explore BFS {b['slice']}: {b['states']:,} states in {b['seconds']:.2f} s, "
            f"{b['states_per_second']:,.0f} states/s = {b['ratio_to_tuple_bfs']:.3f} x tuple BFS{note}"
        )
    r = out["random"]
    print(
        f"random walks: {r['steps_per_second_monitors']:,.0f} steps/s with all monitors, "
        f"{r['steps_per_second_no_monitors']:,.0f} without ({r['monitor_cost_ratio']:.2f}x)"
    )
    h = out["hypothesis"]
    print(
        f"hypothesis: {h['rule_executions']:,} rule executions in {h['seconds']:.1f} s, "
        f"{h['rule_executions_per_second']:,.0f}/s"
    )
    for s in out["symmetry"]:
        print(
            f"symmetry {s['slice']}: {s['states']:,} -> {s['states_symmetry']:,} states, "
            f"{s['seconds']:.2f} s -> {s['seconds_symmetry']:.2f} s"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
