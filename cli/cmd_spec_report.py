"""``acp-model spec-report``: the page a spec author brings to a review of the spec.

Owns: the command line of ``diagrams.spec_report`` (output folder, readings, variant, decidability
bound, jobs, time budget) and the progress lines on standard error: only when it is a terminal
and without ``--quiet``, each with the wall and CPU seconds so far (CPU: this process and the
worker processes that have ended, ``resource.getrusage(RUSAGE_CHILDREN)``: a worker still
running is counted when it ends). The closing line naming what was written is printed whenever
``--quiet`` is not given.

Must not know: what the page holds (``diagrams.spec_report`` builds it).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from cli.bounds import add_decidability_options, bound_of, reading_names, time_budget
from cli.main import EXIT_OK
from cli.options import (
    add_reading_option,
    add_variant_options,
    chosen_readings,
    pool_of,
    variant_and_readings,
)
from cli.outputs import check_folder
from cli.progress import lines_shown


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "spec-report",
        help="write the spec report: wire decidability, contradictions, coverage (index.md, report.json)",
        description="Write DIR/index.md (GitHub Markdown, pictures beside it) and DIR/report.json: "
        "rules by level and check, wire decidability with witnesses, contradictions of the rules "
        "found by exploring the conforming model, rules never exercised, coverage per machine. With "
        "--variant, the same page for the variant, opening with its differences from the spec as "
        "written. The same options give the same bytes.",
    )
    p.add_argument(
        "--out", metavar="DIR", default="out/spec-report", help="output folder (default %(default)s)"
    )
    p.add_argument(
        "--time-budget",
        type=float,
        metavar="SECONDS",
        help="stop each part at its share of this budget; the page says which parts are partial "
        "(default: none)",
    )
    add_reading_option(p)
    p.add_argument(
        "--readings",
        default="all",
        metavar="all|NAME,NAME|none",
        help="readings of the readings matrix section (every alternative of all readings, of the "
        "named ones: their product) and of the decidability under each other alternative; none "
        "leaves both out (default %(default)s)",
    )
    p.add_argument(
        "--quiet",
        action="store_true",
        help="print nothing on standard error, not even the closing line (default: progress on a "
        "terminal, the closing line always)",
    )
    add_variant_options(p, "report")
    add_decidability_options(p, "decidability bounds")
    return p


def run(args: argparse.Namespace) -> int:
    from diagrams.spec_report import Options, build  # matplotlib and the explorers: only when run

    check_folder(args.out, "--out")
    variant, readings = variant_and_readings(args)
    opts = Options(Path(args.out), readings, bound_of(args), time_budget(args))
    opts.matrix = reading_names(args.readings)
    opts.pool = pool_of(args, None)
    if variant is not None:
        opts.variant = variant
        opts.base_readings = chosen_readings(args)
    w0, c0 = time.perf_counter(), cpu_seconds()
    shown = lines_shown(args.quiet)

    def line(text: str) -> None:
        sys.stderr.write(
            f"acp-model spec-report: [{time.perf_counter() - w0:6.1f} s wall, "
            f"{cpu_seconds() - c0:6.1f} s CPU] {text}\n"
        )
        sys.stderr.flush()

    def progress(text: str) -> None:
        if shown:
            line(text)

    report = build(opts, progress)
    if not args.quiet:
        line(
            f"wrote {Path(args.out) / 'index.md'} and report.json"
            + (f" (partial: {', '.join(report['partial'])})" if report["partial"] else "")
        )
    return EXIT_OK


def cpu_seconds() -> float:
    """CPU seconds of this process and of its child processes that have ended (and were waited
    for): a worker pool's processes count once the pool is closed."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX: this process only
        return time.process_time()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime
