"""``acp-model mutants``: run every seeded-bug agent and client; each must be caught by its rule."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cli.main import UsageError
from cli.util import dumps, write_atomic


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "mutants", help="prove every monitor can fail: run the seeded-bug agents and clients"
    )
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--walks", type=int, default=None, help="seeded random walks per mutant (default 200)")
    p.add_argument("--steps", type=int, default=None, help="steps per walk (default 60)")
    p.add_argument("--only", action="append", default=[], metavar="NAME", help="run only these mutants")
    p.add_argument(
        "--out", metavar="DIR", help="write each mutant's shortest transcript to DIR/<name>.ndjson"
    )
    return p


def run(args: argparse.Namespace) -> int:
    from simulator.mutants import BY_NAME, MUTANTS, STEPS, WALKS, judge
    from simulator.wire import to_ndjson

    walks = WALKS if args.walks is None else args.walks
    steps = STEPS if args.steps is None else args.steps
    if walks < 0 or steps < 0:
        raise UsageError("--walks and --steps must be >= 0")
    for name in args.only:
        if name not in BY_NAME:
            raise UsageError(f"unknown mutant {name!r}; known: {', '.join(BY_NAME)}")
    chosen = [BY_NAME[n] for n in args.only] if args.only else list(MUTANTS)
    baseline = judge(None, walks, steps)
    verdicts = [judge(m, walks, steps) for m in chosen]
    if args.out:
        out = Path(args.out)
        try:
            for v in verdicts:
                if v.shortest is not None and v.mutant is not None:
                    write_atomic(out / f"{v.mutant.name}.ndjson", to_ndjson(v.shortest))
        except OSError as exc:
            raise UsageError(f"{args.out}: cannot write ({exc.strerror or exc})") from None
    ok = baseline.findings == 0 and all(v.caught for v in verdicts)
    if args.json:
        sys.stdout.write(dumps([v.to_json() for v in verdicts]))
        sys.stderr.write(
            f"unmodified simulator: {baseline.runs} runs, {baseline.findings} findings "
            f"({', '.join(sorted(baseline.caught_by)) or 'none'})\n"
        )
        return 0 if ok else 1
    lines = []
    width = max(len(v.mutant.name) for v in verdicts if v.mutant) if verdicts else 10
    for v in verdicts:
        assert v.mutant is not None
        status = "caught" if v.caught else "MISSED"
        also = sorted(set(v.caught_by) - {v.mutant.intended_rule})
        extra = f" (also {', '.join(also)})" if also else ""
        shortest = f", shortest {len(v.shortest)} lines ({v.shortest_source})" if v.shortest else ""
        lines.append(
            f"{v.mutant.name:<{width}}  {v.mutant.side:<6} {v.mutant.intended_rule:<11} {status}{extra}"
            f"{shortest}"
        )
    caught = sum(v.caught for v in verdicts)
    lines.append("")
    lines.append(
        f"{caught}/{len(verdicts)} mutants caught by their intended rule; "
        f"unmodified simulator: {baseline.runs} runs, {baseline.findings} findings"
        + (f" ({', '.join(sorted(baseline.caught_by))})" if baseline.findings else "")
    )
    sys.stdout.write("\n".join(lines) + "\n")
    return 0 if ok else 1
