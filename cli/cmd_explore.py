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

from cli.explore_checks import matrix_plan, options, pool
from cli.explore_options import add_parser as add_parser  # the command's parser: cli.main asks here
from cli.main import EXIT_USAGE, UsageError
from cli.options import chosen_readings, variant_lines
from cli.outputs import STDOUT
from cli.progress import shown
from properties.outputs import dumps
from properties.readings import describe


def run(args: argparse.Namespace) -> int:
    from simulator.analysis.matrix import readings_matrix
    from simulator.explore import compare, report
    from simulator.explore import run as explore_run

    if args.readings is not None:
        workers, names = matrix_plan(args)
        args.mode = args.mode or "exhaustive"  # the matrix's states column; --mode both adds the random modes
    else:
        workers, names = pool(args, 1), ()
        args.mode = args.mode or "both"
    opts = options(args)
    if args.compare and not names and args.graph is not None:
        raise UsageError("--graph does not apply to --compare")
    shown_on = sys.stdout
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
        # with the graph on standard output, the report goes to standard error
        shown_on = sys.stderr if args.graph == STDOUT else sys.stdout
        lines = [describe(result["readings"]), *variant_lines(opts.variant)]
        text = dumps(result) if args.json else report.render_text(result) + "".join(f"{x}\n" for x in lines)
        errors, code = result["write_errors"], 1 if result["findings"] else 0
    # each file the run could not write is a line on standard error (exit 2)
    shown_on.write(text)
    shown_on.flush()
    for line in errors:
        sys.stderr.write(f"acp-model explore: {line}\n")
    return EXIT_USAGE if errors else code
