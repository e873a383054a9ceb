"""``acp-model explore``: search the simulated sessions for rule breaches, exhaustively and at random.

Owns: which run the options ask for (one exploration, the readings matrix, a comparison with a
variant), printing its report as text or, with ``--json``, as one JSON object, and the exit code
(0 no findings, 1 findings, 2 unusable options or outputs). The options are
``cli.explore_options`` (declared) and ``cli.explore_checks`` (checked); the work is
``simulator.explore.run``, ``simulator.analysis.matrix`` and ``simulator.explore.compare``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from cli.explore_checks import matrix_plan, options, pool
from cli.explore_options import add_parser as add_parser  # the command's parser: cli.main asks here
from cli.main import EXIT_USAGE, UsageError
from cli.outputs import STDOUT
from cli.readings_option import chosen_readings
from properties.readings import describe
from simulator.workers import Workers


def _options(args: argparse.Namespace) -> Any:
    """The run the options describe, drawing its counterexamples as diagrams and pages."""
    from diagrams.html.runs import counterexample_page
    from diagrams.sequence import transcript_to_mermaid

    opts = options(args)
    opts.diagram = transcript_to_mermaid
    opts.page = counterexample_page
    return opts


def _show(out: TextIO, text: str, errors: list[str], code: int) -> int:
    """Print a report; each file it could not write is a line on standard error (exit 2)."""
    out.write(text)
    out.flush()
    for line in errors:
        sys.stderr.write(f"acp-model explore: {line}\n")
    return EXIT_USAGE if errors else code


def run_matrix(args: argparse.Namespace) -> int:
    """``explore --readings``: the readings matrix, as text or JSON (exit 1 when a row has findings)."""
    from cli.progress import make
    from properties.outputs import dumps
    from simulator.analysis.matrix import readings_matrix

    workers, names = matrix_plan(args)
    if args.mode is None:
        args.mode = "exhaustive"  # the matrix's states column; --mode both adds the random modes
    opts = _options(args)
    progress = make(args.quiet)
    try:
        with workers:
            matrix = readings_matrix(names, opts, workers, progress)
    finally:
        progress.done()
    text = dumps(matrix.to_json()) if args.json else matrix.to_text()
    return _show(sys.stdout, text, matrix.write_errors(), 1 if matrix.contradicting() else 0)


def run(args: argparse.Namespace) -> int:
    if args.readings is not None:
        return run_matrix(args)
    if args.mode is None:
        args.mode = "both"
    from cli.progress import make
    from properties.outputs import dumps
    from simulator.explore import run as explore_run
    from simulator.explore.report import render_text

    workers = pool(args, 1)
    opts = _options(args)
    progress = make(args.quiet)
    if args.compare:
        return _compare(args, opts, progress, workers)
    try:
        with workers:
            opts.pool = workers
            report = explore_run.run(opts, progress)
    finally:
        progress.done()
    # with the graph on standard output, the report goes to standard error
    shown = sys.stderr if args.graph == STDOUT else sys.stdout
    text = render_text(report) + describe(report["readings"]) + "\n"
    if "variant" in report:
        v = report["variant"]
        text += "".join(f"{line}\n" for line in opts.variant.describe())
        text += "".join(f"  note: {n}\n" for n in v["notes"])
    return _show(
        shown, dumps(report) if args.json else text, report["write_errors"], 1 if report["findings"] else 0
    )


def _compare(args: argparse.Namespace, opts: Any, progress: Any, workers: Workers) -> int:
    from properties.outputs import dumps
    from simulator.explore.compare import compare, render_text

    if args.graph is not None:
        raise UsageError("--graph does not apply to --compare")
    try:
        with workers:
            result = compare(opts, opts.variant, chosen_readings(args), progress, workers)
    finally:
        progress.done()
    errors = result.pop("write_errors")
    return _show(sys.stdout, dumps(result) if args.json else render_text(result), errors, 0)
