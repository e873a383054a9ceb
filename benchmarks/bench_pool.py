"""Benchmark: one long command on one process, on two local processes and on two Ray workers.

Runs ``acp-model COMMAND ... --json`` (default: ``spec-report --quiet``, its defaults) as a fresh
process per setting: ``--jobs 1`` (the baseline), ``--jobs 2`` and ``--cluster local --jobs 2``,
interleaved ``--repeat`` times (every other round in the opposite order), and prints one JSON
object: each setting's wall seconds (best and all), its ratio to the baseline's best, the ratio
within each round (the settings of one round run back to back, so on a machine shared with other
work they see about the same load), the load average when each run started, and whether its
JSON equals the baseline's once the timing fields (keys ending in ``seconds`` or ``per_second``)
and the output paths are set aside.

    python benchmarks/bench_pool.py                      # spec-report, the issue's floor
    python benchmarks/bench_pool.py --command "decidability --walks 10" --repeat 2
    python benchmarks/bench_pool.py --no-cluster         # without Ray installed
    python benchmarks/bench_pool.py --before /tmp/base   # also the Ray setting with the code of
                                                         # /tmp/base (git archive of an older commit)
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SETTINGS = {
    "jobs 1": ["--jobs", "1"],
    "jobs 2": ["--jobs", "2"],
    "cluster local, jobs 2": ["--cluster", "local", "--jobs", "2"],
}


def _untimed(data: Any, out: str) -> Any:
    if isinstance(data, dict):
        return {k: _untimed(v, out) for k, v in data.items() if not k.endswith(("seconds", "per_second"))}
    if isinstance(data, list):
        return [_untimed(v, out) for v in data]
    return data.replace(out, "OUT") if isinstance(data, str) else data


def run(command: list[str], extra: list[str], tree: str | None = None) -> tuple[float, Any]:
    with tempfile.TemporaryDirectory() as out:
        as_json = [] if command[0] == "spec-report" else ["--json"]  # it writes DIR/report.json
        argv = [sys.executable, "-m", "cli", *command, *extra, *as_json, "--out", out]
        t0 = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, cwd=tree)
        seconds = time.perf_counter() - t0
        if done.returncode not in (0, 1):
            raise SystemExit(f"{shlex.join(argv)}: exit {done.returncode}: {done.stderr.strip()[-500:]}")
        report = Path(out) / "report.json"
        data = json.loads(report.read_text() if report.exists() else done.stdout)
        return seconds, _untimed(data, out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--command", default="spec-report", help="the command and its options (default %(default)s)"
    )
    ap.add_argument("--repeat", type=int, default=1, help="interleaved rounds (default %(default)s)")
    ap.add_argument("--no-cluster", action="store_true", help="leave out the Ray setting")
    ap.add_argument(
        "--before",
        metavar="DIR",
        help="also run the Ray setting with the source tree DIR (an older commit), in each round",
    )
    args = ap.parse_args()
    settings = {k: v for k, v in SETTINGS.items() if not (args.no_cluster and "cluster" in k)}
    trees: dict[str, str | None] = {k: None for k in settings}
    if args.before:
        settings["cluster local, jobs 2, before"] = SETTINGS["cluster local, jobs 2"]
        trees["cluster local, jobs 2, before"] = args.before
    times: dict[str, list[float]] = {k: [] for k in settings}
    loads: dict[str, list[float]] = {k: [] for k in settings}
    outputs: dict[str, Any] = {}
    for round_ in range(args.repeat):
        order = list(settings.items())  # every other round backwards: a load that rises or falls
        for name, extra in order if round_ % 2 == 0 else order[::-1]:  # favours no setting
            loads[name].append(round(os.getloadavg()[0], 1))
            seconds, data = run(shlex.split(args.command), extra, trees[name])
            times[name].append(round(seconds, 1))
            outputs.setdefault(name, data)
            print(f"{name}: {seconds:.1f} s (load {loads[name][-1]})", file=sys.stderr, flush=True)
    base = min(times["jobs 1"])
    print(
        json.dumps(
            {
                "command": args.command,
                "settings": {
                    name: {
                        "best_seconds": min(t),
                        "all_seconds": t,
                        "ratio_to_one_process": round(min(t) / base, 3),
                        "ratio_in_each_round": [
                            round(x / b, 3) for x, b in zip(t, times["jobs 1"], strict=True)
                        ],
                        "load_average_at_start": loads[name],
                        "same_json": outputs[name] == outputs["jobs 1"],
                    }
                    for name, t in times.items()
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
