"""Benchmark: memory of the exhaustive search per state, as `acp-model explore` runs it.

Runs ``explore`` (``simulator.explore.run.run``: mode exhaustive, every monitor, the
counterexample files written to a temporary folder) on one custom slice (default ``--prompts 2
--tool-calls 2``, the bound of issue 35 that reaches the default 100,000-state cap in under a
second) stopped at each of a few state caps, each in a fresh process so that its peak resident
memory (``VmHWM``) is its own. Prints one JSON line per cap (states, seconds, peak RSS) and then
the bytes per state: the slope of peak RSS against states between the smallest and the largest
cap (what one more state costs; the interpreter, the model's tables and the monitors are the
intercept), and the peak RSS divided by the states at the largest cap.

    python benchmarks/bench_state_memory.py
    python benchmarks/bench_state_memory.py --caps 100000,400000,1000000 --reduce por

Figures only, nothing asserted.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def one(cap: int, prompts: int, tool_calls: int, reduce: str) -> dict[str, Any]:
    """One search, in this process."""
    from simulator.explore import run as explore_run
    from simulator.workers import peak_rss

    with tempfile.TemporaryDirectory() as tmp:
        opts = explore_run.Options(
            mode="exhaustive",
            bounds={"prompts": prompts, "tool_calls": tool_calls},
            max_states=cap,
            reduce=reduce,
            out=tmp,
        )
        t0 = time.perf_counter()
        report = explore_run.run(opts)
        seconds = time.perf_counter() - t0
    ex = report["exhaustive"]
    return {
        "cap": cap,
        "states": ex["states"],
        "complete": ex["complete"],
        "seconds": round(seconds, 2),
        "peak_rss_bytes": peak_rss(),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--caps", default="50000,100000,200000,400000", help="state caps, comma-separated")
    ap.add_argument("--prompts", type=int, default=2)
    ap.add_argument("--tool-calls", type=int, default=2)
    ap.add_argument("--reduce", choices=("none", "por"), default="none")
    ap.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)  # a child's cap
    args = ap.parse_args()
    if args.one is not None:
        sys.stdout.write(json.dumps(one(args.one, args.prompts, args.tool_calls, args.reduce)) + "\n")
        return 0
    rows = []
    for cap in (int(c) for c in args.caps.split(",")):
        cmd = [sys.executable, __file__, "--one", str(cap), "--prompts", str(args.prompts),
               "--tool-calls", str(args.tool_calls), "--reduce", args.reduce]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=ROOT)
        row = json.loads(done.stdout)
        rows.append(row)
        print(json.dumps(row), flush=True)
    first, last = rows[0], rows[-1]
    if last["states"] > first["states"]:
        slope = (last["peak_rss_bytes"] - first["peak_rss_bytes"]) / (last["states"] - first["states"])
        print(
            f"bytes per state (slope between {first['states']:,} and {last['states']:,} states): {slope:,.0f}"
        )
    per = last["peak_rss_bytes"] / last["states"]
    mib = last["peak_rss_bytes"] / 2**20
    print(f"peak RSS per state at {last['states']:,} states: {per:,.0f} bytes ({mib:,.0f} MiB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
