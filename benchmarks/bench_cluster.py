"""The exhaustive search in one process against the same search on a local Ray cluster.

Run: ``python benchmarks/bench_cluster.py [--prompts N] [--max-states N] [--workers 1,2]
[--reduce none|por] [--json]`` from the repository root (needs ``pip install -e '.[cluster]'``).
``--reduce por``: every configuration with the partial-order reduction (the cluster's reduced
graph is the single process's).

On the ``core`` slice with ``--prompts`` prompts (default 2: 1,426,999 states), measured in
this one run, each configuration in a fresh child process (so peak memory is its own):

- **single**: ``explore_bfs.explore``, as ``acp-model explore`` without ``--cluster``;
- **cluster, W workers**: ``explore_cluster.search`` on ``W`` Ray actors of a private local
  Ray instance (``--cluster local --workers W``); Ray's start-up is measured apart and left out
  of the states/s.

Printed per configuration: states, transitions, seconds of the search, states/s, the ratio of
states/s to the single process's, and the peak RSS (``VmHWM``) of the driver and of each worker.
The answers (states, transitions, depth, findings) must agree; the script says if they do not.
Figures only, nothing asserted beyond that.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _one(kind: str, workers: int, prompts: int, max_states: int, reduce: str) -> dict[str, Any]:
    """One measurement, in this (fresh) process."""
    from simulator import explore_bfs
    from simulator.explore_shard import peak_rss

    cfg = explore_bfs.SLICE_BY_NAME["core"].cfg.with_(prompts=prompts)
    out: dict[str, Any] = {"kind": kind, "workers": workers}
    if kind == "single":
        t0 = time.perf_counter()
        r = explore_bfs.explore(cfg, max_states=max_states, name="core", reduce=reduce)
        out["seconds"] = time.perf_counter() - t0
        out["startup_seconds"] = 0.0
        out["worker_peak_rss"] = []
    else:
        from cli.cluster import Session
        from simulator import explore_cluster

        t0 = time.perf_counter()
        session = Session("local", workers)
        pool = session.pool(cfg, frozenset(), False, True, reduce)
        out["startup_seconds"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        r = explore_cluster.search(pool, cfg, max_states=max_states, name="core", reduce=reduce)
        out["seconds"] = time.perf_counter() - t1
        out["worker_peak_rss"] = pool.each("peak_rss")
        session.close()
    out["driver_peak_rss"] = peak_rss()
    out.update(
        states=r.states,
        transitions=r.transitions,
        max_depth=r.max_depth,
        complete=r.complete,
        findings=[(c.rule, len(c.events)) for c in r.counterexamples],
        states_per_second=r.states / out["seconds"],
    )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=2, help="prompts of the core slice (default %(default)s)")
    ap.add_argument(
        "--max-states", type=int, default=10**8, help="stop each search after N states (default %(default)s)"
    )
    ap.add_argument(
        "--workers", default="1,2", help="cluster sizes to measure, comma-separated (default 1,2)"
    )
    ap.add_argument("--reduce", choices=("none", "por"), default="none", help="reduction (default none)")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--child", nargs=2, metavar=("KIND", "WORKERS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(_one(args.child[0], int(args.child[1]), args.prompts, args.max_states, args.reduce)))
        return 0
    runs = [("single", 1)] + [("cluster", int(w)) for w in args.workers.split(",")]
    rows = []
    for kind, w in runs:
        cmd = [sys.executable, __file__, "--child", kind, str(w), "--prompts", str(args.prompts)]
        cmd += ["--max-states", str(args.max_states), "--reduce", args.reduce]
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
        if done.returncode != 0:
            print(f"{kind} {w}: failed\n{done.stderr[-2000:]}", file=sys.stderr)
            return 1
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    base = rows[0]["states_per_second"]
    for r in rows:
        r["ratio"] = r["states_per_second"] / base
    answers = {(r["states"], r["transitions"], r["max_depth"], json.dumps(r["findings"])) for r in rows}
    if args.json:
        print(
            json.dumps(
                {
                    "prompts": args.prompts,
                    "reduce": args.reduce,
                    "runs": rows,
                    "same_answers": len(answers) == 1,
                },
                indent=1,
            )
        )
        return 0
    print(f"core slice, {args.prompts} prompt(s), --reduce {args.reduce}; same answers: {len(answers) == 1}")
    head = "| run | states | transitions | start-up s | search s | states/s | x single |"
    print(head + " peak RSS MB (driver; workers) |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        name = "single process" if r["kind"] == "single" else f"--cluster local --workers {r['workers']}"
        workers = ", ".join(f"{m / 2**20:,.0f}" for m in r["worker_peak_rss"]) or "-"
        print(
            f"| {name} | {r['states']:,} | {r['transitions']:,} | {r['startup_seconds']:.1f} | "
            f"{r['seconds']:.1f} | {r['states_per_second']:,.0f} | {r['ratio']:.2f} | "
            f"{r['driver_peak_rss'] / 2**20:,.0f}; {workers} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
