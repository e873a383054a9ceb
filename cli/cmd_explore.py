"""``acp-model explore``: search the simulated sessions for rule breaches, exhaustively and at random.

Owns: which run the options ask for (one exploration, the readings matrix, a comparison with a
variant), the options checked (bad values: one line, exit 2; every output checked before the run
starts) and turned into ``simulator.explore.run.Options`` and a worker pool (``--jobs``, its older
name ``--workers``, and ``--cluster``), printing its report as text or, with ``--json``, as one
JSON object, and the exit code (0 no findings, 1 findings, 2 unusable options or outputs). The
options are declared in ``cli.explore_options``; the work is ``simulator.explore.run``,
``simulator.analysis.matrix`` and ``simulator.explore.compare``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cli.bounds import bounds_from, faults_from, time_budget
from cli.explore_options import COUNTS
from cli.explore_options import add_parser as add_parser  # the command's parser: cli.main asks here
from cli.main import EXIT_USAGE, UsageError
from cli.options import at_least, chosen_readings, pool_of, variant_and_readings, variant_lines
from cli.outputs import STDOUT, check_file, check_folder
from cli.progress import shown
from properties.outputs import dumps
from properties.readings import describe
from simulator.workers import Workers


def run(args: argparse.Namespace) -> int:
    from simulator.analysis.matrix import readings_matrix
    from simulator.explore import compare, report
    from simulator.explore import run as explore_run

    if args.readings is not None:
        workers, names = matrix_plan(args)
        args.mode = args.mode or "exhaustive"  # the matrix's states column; --mode both adds the random modes
    else:
        workers, names = pool_of(args), ()
        args.mode = args.mode or "both"
    opts = options(args)
    if args.compare and not names and args.graph is not None:
        raise UsageError("--graph does not apply to --compare")
    with shown(args.quiet) as progress, workers:
        if names:
            matrix = readings_matrix(names, opts, workers, progress)
        elif args.compare:
            result = compare.compare(opts, opts.variant, chosen_readings(args), progress, workers)
        else:
            opts.pool = workers
            result = explore_run.run(opts, progress)
    if names:
        text = dumps(matrix.to_json()) if args.json else matrix.to_text()
        errors, code = matrix.write_errors(), 1 if matrix.contradicting() else 0
    elif args.compare:
        errors, code = result.pop("write_errors"), 0
        text = dumps(result) if args.json else compare.render_text(result)
    else:
        lines = [describe(result["readings"]), *variant_lines(opts.variant)]
        text = dumps(result) if args.json else report.render_text(result) + "".join(f"{x}\n" for x in lines)
        errors, code = result["write_errors"], 1 if result["findings"] else 0
    # with the graph on standard output, the report goes to standard error; each file the run
    # could not write is a line on standard error (exit 2)
    shown_on = sys.stderr if args.graph == STDOUT else sys.stdout
    shown_on.write(text)
    shown_on.flush()
    for line in errors:
        sys.stderr.write(f"acp-model explore: {line}\n")
    return EXIT_USAGE if errors else code


def options(args: argparse.Namespace) -> Any:
    """The run the options describe (after ``pool_of``: ``--workers`` is checked there), drawing
    its counterexamples as diagrams and pages."""
    from diagrams.html.runs import counterexample_page
    from diagrams.sequence import transcript_to_mermaid
    from simulator.explore.bfs import SLICE_BY_NAME
    from simulator.explore.run import Options

    faults = faults_from(args.fault)
    variant, readings = variant_and_readings(args)
    if args.compare and variant is None:
        raise UsageError("--compare needs a variant: --variant FILE or --drop RULE-ID")
    for name in args.slice:
        if name not in SLICE_BY_NAME:
            raise UsageError(f"unknown slice {name!r}; known: {', '.join(SLICE_BY_NAME)}")
    counts = [(f"--{name}", getattr(args, name), low) for name, _, low, _ in COUNTS]
    at_least(*counts, ("--depth", args.depth, 0), ("--max-states", args.max_states, 1))
    if args.mode in ("random", "both") and args.walks == 0 and args.examples == 0:
        raise UsageError(
            "--walks 0 and --examples 0 leave the random mode nothing to run (for the exhaustive "
            "search alone: --mode exhaustive)"
        )
    time_budget(args)
    if args.reduce != "none" and args.depth is not None:
        raise UsageError(
            "--reduce por does not combine with --depth (a reduced search may need more steps to reach "
            "a situation)"
        )
    bounds = bounds_from(args)
    # every output is checked before the run starts, so a long run never ends unable to write
    if args.graph is not None:
        if args.mode == "random":
            raise UsageError("--graph needs the exhaustive mode (--mode exhaustive or both)")
        if args.graph == STDOUT and args.json:
            raise UsageError("--graph - and --json both want standard output; give --graph a file")
        check_file(args.graph, "--graph")
    check_folder(args.out, "--out")
    if args.database is not None:
        check_folder(args.database, "--database")
    same = "mode seed examples walks steps time_budget graph out database symmetry reduce depth max_states"
    return Options(
        **{name: getattr(args, name) for name in same.split()},
        hypothesis_shrink=args.hypothesis_shrink,
        faults=faults,
        slices=tuple(args.slice),
        bounds=bounds,
        readings=readings,
        variant=variant,
        diagram=transcript_to_mermaid,
        page=counterexample_page,
    )


def matrix_plan(args: argparse.Namespace) -> tuple[Workers, tuple[str, ...]]:
    """``explore --readings``: its pool and the readings it names (``all``: every reading)."""
    from properties.readings import ReadingError
    from simulator.analysis.matrix import cells

    if args.reading:
        raise UsageError("--reading and --readings do not combine: the matrix chooses every row's readings")
    if args.graph is not None:
        raise UsageError("--graph does not apply to --readings (each row is its own exploration)")
    workers = pool_of(args, None)
    names = tuple(n.strip() for n in args.readings.split(",") if n.strip())
    if not names or ("all" in names and len(names) > 1):
        raise UsageError("--readings: expected all or NAME,NAME (acp-model readings lists them)")
    try:
        cells(names)
    except ReadingError as exc:
        raise UsageError(f"--readings: {exc}") from None
    return workers, names
