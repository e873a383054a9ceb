"""The options of ``acp-model explore``, checked (bad values: one line, exit 2) and turned into
``simulator.explore.run.Options`` and a worker pool.

Owns: ``options`` (the checked options of one run, every output checked before the run starts),
``pool`` (``--jobs``, its older name ``--workers``, and ``--cluster``) and ``matrix_plan`` (what
``--readings`` asks for: the readings of the matrix, and its pool). The options are declared in
``cli.explore_options``.

Must not know: how the run goes or how its report is printed (``cli.cmd_explore``).
"""

from __future__ import annotations

import argparse
from typing import Any

from cli.bounds import bounds_from, faults_from
from cli.main import UsageError
from cli.options import at_least, pool_of, variant_and_readings
from cli.outputs import STDOUT, check_file, check_folder
from simulator.workers import Workers


def options(args: argparse.Namespace) -> Any:
    """The run the options describe (after ``pool``: ``--workers`` is checked there), drawing its
    counterexamples as diagrams and pages."""
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
    at_least(
        ("--seed", args.seed, 0),
        ("--examples", args.examples, 0),
        ("--walks", args.walks, 0),
        ("--steps", args.steps, 1),
        ("--depth", args.depth, 0),
        ("--max-states", args.max_states, 1),
    )
    if args.mode in ("random", "both") and args.walks == 0 and args.examples == 0:
        raise UsageError(
            "--walks 0 and --examples 0 leave the random mode nothing to run (for the exhaustive "
            "search alone: --mode exhaustive)"
        )
    if args.time_budget is not None and args.time_budget <= 0:
        raise UsageError("--time-budget must be > 0")
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
        check_file(args.graph)
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


def pool(args: argparse.Namespace, default: int | None) -> Workers:
    """The pool of ``--jobs`` (or its older name ``--workers``) and ``--cluster``."""
    if args.workers is not None:
        if args.jobs is not None and args.jobs != args.workers:
            raise UsageError("--workers is the older name of --jobs: give one of them")
        if args.workers < 1:
            raise UsageError(f"--workers {args.workers}: must be >= 1")
        args.jobs = args.workers
    return pool_of(args, default)


def matrix_plan(args: argparse.Namespace) -> tuple[Workers, tuple[str, ...]]:
    """``explore --readings``: its pool and the readings it names (``all``: every reading)."""
    from properties.readings import ReadingError
    from simulator.analysis.matrix import cells

    if args.reading:
        raise UsageError("--reading and --readings do not combine: the matrix chooses every row's readings")
    if args.graph is not None:
        raise UsageError("--graph does not apply to --readings (each row is its own exploration)")
    workers = pool(args, None)
    names = tuple(n.strip() for n in args.readings.split(",") if n.strip())
    if not names or ("all" in names and len(names) > 1):
        raise UsageError("--readings: expected all or NAME,NAME (acp-model readings lists them)")
    try:
        cells(names)
    except ReadingError as exc:
        raise UsageError(f"--readings: {exc}") from None
    return workers, names
