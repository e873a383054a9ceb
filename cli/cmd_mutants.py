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
import textwrap
from pathlib import Path
from typing import Any

from cli.main import UsageError
from cli.util import dumps, write_atomic
from cli.workers_option import add_pool_options, cluster_failed, pool_of


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
    p.add_argument("--json", action="store_true", help="print a JSON array instead of text (default: text)")
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
    p.add_argument("--quiet", action="store_true", help="no progress on standard error (default: off)")
    add_pool_options(p, "the seeded bugs (one job each)")
    p.add_argument(
        "--list",
        action="store_true",
        help="list the seeded bugs (name, side, the rule each breaks, what it does) without running "
        "them (default: run them)",
    )
    return p


HEAD = ("mutant", "side", "breaks", "verdict")
"""The header; under it, indented, what the seeded bug does."""
WIDTH = 100
"""Columns the text fits in."""
_INDENT = "    "


def _wrap(text: str, indent: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent)


def _rows(rows: list[tuple[str, str, str, str, str]], verdicts: bool = True) -> list[str]:
    """(name, side, rule, verdict, what it does) as lines of at most ``WIDTH`` columns: the
    first four in columns (the verdict wrapped in its own), what the bug does indented below;
    without ``verdicts`` (nothing was run), no verdict column."""
    widths = [max(len(r[i]) for r in [(*HEAD, ""), *rows]) for i in range(3)]
    at = sum(widths) + 2 * len(widths)
    head = "  ".join(f"{c:<{w}}" for c, w in zip(HEAD, widths, strict=False))
    lines = [(head + "  " + HEAD[-1]) if verdicts else head.rstrip(), f"{_INDENT}what the seeded bug does"]
    for row in rows:
        cells = "  ".join(f"{c:<{w}}" for c, w in zip(row, widths, strict=False)) + "  "
        verdict = textwrap.wrap(row[3], max(20, WIDTH - at)) or [""]
        lines.append((cells + verdict[0]).rstrip())
        lines += [" " * at + more for more in verdict[1:]]
        lines += _wrap(row[4], _INDENT)
    return lines


def _list(args: argparse.Namespace, chosen: list[Any]) -> int:
    """``--list``: the seeded bugs, not run."""
    if args.json:
        sys.stdout.write(
            dumps(
                [
                    {
                        "name": m.name,
                        "side": m.side,
                        "intended_rule": m.intended_rule,
                        "description": m.description,
                        **({"off_wire": m.off_wire} if m.off_wire else {}),
                    }
                    for m in chosen
                ]
            )
        )
        return 0
    lines = _rows([(m.name, m.side, m.intended_rule, "", m.description) for m in chosen], verdicts=False)
    lines.append("")
    lines += _wrap(
        f"{len(chosen)} seeded bugs; `acp-model mutants` runs them, `--fault NAME` of explore, "
        "simulate and agent switches one on.",
        "",
    )
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def run(args: argparse.Namespace) -> int:
    from cli.outputs import check_folder
    from cli.progress import make
    from simulator.analysis.mutants import BY_NAME, MUTANTS, judge_job
    from simulator.peers.wire import to_ndjson
    from simulator.workers import ClusterError

    walks, steps = args.walks, args.steps
    if walks < 0 or steps < 0:
        raise UsageError("--walks and --steps must be >= 0")
    for name in args.only:
        if name not in BY_NAME:
            raise UsageError(f"unknown mutant {name!r}; known: {', '.join(BY_NAME)}")
    chosen = [BY_NAME[n] for n in args.only] if args.only else list(MUTANTS)
    if args.list:
        return _list(args, chosen)
    if args.out:
        check_folder(args.out, "--out")
    pool = pool_of(args)
    progress = make(args.quiet)
    try:
        progress.phase("mutants", len(chosen) + 1)
        verdicts = []
        with pool:
            jobs = [(None, walks, steps)] + [(m.name, walks, steps) for m in chosen]
            for v in pool.map(judge_job, jobs):
                verdicts.append(v)
                progress.advance()
    except ClusterError as exc:
        return cluster_failed("mutants", exc)
    finally:
        progress.done()
    baseline = verdicts.pop(0)
    if args.out:
        from diagrams.html.runs import mutant_page

        out = Path(args.out)
        try:
            for v in verdicts:
                if v.shortest is not None and v.mutant is not None:
                    write_atomic(out / f"{v.mutant.name}.ndjson", to_ndjson(v.shortest))
                    write_atomic(out / f"{v.mutant.name}.html", mutant_page(v))
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
    rows: list[tuple[str, str, str, str, str]] = []
    for v in verdicts:
        assert v.mutant is not None
        verdict = "caught" if v.caught else "MISSED"
        also = sorted(set(v.caught_by) - {v.mutant.intended_rule})
        if also:
            verdict += f" (also {', '.join(also)})"
        if v.shortest:
            verdict += f", shortest {len(v.shortest)} lines ({v.shortest_source})"
        rows.append((v.mutant.name, v.mutant.side, v.mutant.intended_rule, verdict, v.mutant.description))
    lines = _rows(rows)
    caught = sum(v.caught for v in verdicts)
    lines.append("")
    for v in verdicts:
        if v.mutant is not None and v.mutant.off_wire:
            lines += _wrap(f"{v.mutant.name}: not detectable by `acp-model drive`: {v.mutant.off_wire}", "")
    lines += _wrap(
        f"{caught}/{len(verdicts)} mutants caught by their intended rule; "
        f"unmodified simulator: {baseline.runs} runs, {baseline.findings} findings"
        + (f" ({', '.join(sorted(baseline.caught_by))})" if baseline.findings else ""),
        "",
    )
    sys.stdout.write("\n".join(lines) + "\n")
    return 0 if ok else 1
