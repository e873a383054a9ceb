"""``acp-model mutants``: run every seeded-bug agent and client; each must be caught by its rule.

Owns: the options, the table printed for people, within 100 columns (a header, then per seeded
bug a line with its name, side, intended rule and verdict, and below it, indented, what the bug
does; then, for a bug that never shows on the wire, why ``acp-model drive`` cannot find it),
``--list`` (the same table without running anything; JSON: name, side, intended_rule,
description, off_wire) and the exit code (0 every mutant
caught and the unmodified simulator clean, 1 otherwise). The runs are ``simulator.analysis.mutants``'s.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cli.main import UsageError
from cli.options import add_json_option, add_pool_options, add_quiet_option, pool_of
from cli.outputs import check_folder, show, write
from cli.progress import shown
from properties.outputs import dumps


def add_parser(sub: Any) -> argparse.ArgumentParser:
    from simulator.peers.config import MUTANT_STEPS, MUTANT_WALKS

    p: argparse.ArgumentParser = sub.add_parser(
        "mutants",
        help="prove every monitor can fail: run the seeded-bug agents and clients",
        description="Run every seeded bug (a faulty agent or client, each written to break one "
        "rule) through the named scenarios and seeded random walks with every monitor on: each "
        "must be caught by the rule it breaks, and the unmodified simulator must give no finding. "
        "The names are what `--fault` of explore and simulate accept.",
    )
    add_json_option(p, "a JSON array")
    p.add_argument(
        "--walks", type=int, default=MUTANT_WALKS, help="seeded random walks per mutant (default %(default)s)"
    )
    p.add_argument("--steps", type=int, default=MUTANT_STEPS, help="steps per walk (default %(default)s)")
    p.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help="run only this mutant; repeatable (default: every mutant)",
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        help="write each mutant's shortest transcript to DIR/<name>.ndjson and its page to "
        "DIR/<name>.html (default: not written)",
    )
    add_quiet_option(p)
    add_pool_options(p, "the seeded bugs (one job each)")
    p.add_argument(
        "--list",
        action="store_true",
        help="list the seeded bugs (name, side, the rule each breaks, what it does) without running "
        "them (default: run them)",
    )
    return p


def run(args: argparse.Namespace) -> int:
    from simulator.analysis.mutants import BY_NAME, MUTANTS, judge_job
    from simulator.analysis.mutants_text import list_json, list_text, verdicts_text
    from simulator.peers.wire import to_ndjson

    walks, steps = args.walks, args.steps
    if walks < 0 or steps < 0:
        raise UsageError("--walks and --steps must be >= 0")
    for name in args.only:
        if name not in BY_NAME:
            raise UsageError(f"unknown mutant {name!r}; known: {', '.join(BY_NAME)}")
    chosen = [BY_NAME[n] for n in args.only] if args.only else list(MUTANTS)
    if args.list:
        show(dumps(list_json(chosen)) if args.json else list_text(chosen))
        return 0
    if args.out is not None:
        check_folder(args.out, "--out")
    pool = pool_of(args)
    verdicts = []
    with shown(args.quiet) as progress:
        progress.phase("mutants", len(chosen) + 1)
        with pool:
            for v in pool.map(judge_job, [(None, walks, steps)] + [(m.name, walks, steps) for m in chosen]):
                verdicts.append(v)
                progress.advance()
    baseline = verdicts.pop(0)
    if args.out:
        from diagrams.html.runs import mutant_page

        for v in verdicts:
            if v.shortest is not None and v.mutant is not None:
                write(Path(args.out, f"{v.mutant.name}.ndjson"), to_ndjson(v.shortest), args.out)
                write(Path(args.out, f"{v.mutant.name}.html"), mutant_page(v), args.out)
    code = 0 if baseline.findings == 0 and all(v.caught for v in verdicts) else 1
    if not args.json:
        show(verdicts_text(verdicts, baseline))
        return code
    show(dumps([v.to_json() for v in verdicts]))
    sys.stderr.write(
        f"unmodified simulator: {baseline.runs} runs, {baseline.findings} findings "
        f"({', '.join(sorted(baseline.caught_by)) or 'none'})\n"
    )
    return code
