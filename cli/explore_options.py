"""The options of ``acp-model explore``: declared, validated (bad values: one line, exit 2) and
turned into ``simulator.explore.run.Options`` and a worker pool.

Owns: ``add_parser`` (every option, its help and default), ``options`` (the checked options of
one run, every output checked before the run starts) and ``pool`` (``--jobs``, its older name
``--workers``, and ``--cluster``).

Must not know: how the run goes or how its report is printed (``cli.cmd_explore``).
"""

from __future__ import annotations

import argparse
from typing import Any

from cli.bounds import add_bound_options, bounds_from, faults_from
from cli.main import UsageError
from cli.outputs import STDOUT, check_file, check_folder
from cli.readings_option import add_reading_option
from cli.variant_option import add_variant_options, variant_and_readings
from cli.workers_option import CLUSTER_HELP, pool_of
from simulator.workers import Workers


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "explore",
        help="explore interleavings (exhaustive BFS, hypothesis, random walks) and report breaches",
        description="Explore the simulated agent and client: an exhaustive breadth-first search "
        "within small bounds, hypothesis stateful testing and many random walks. Every "
        "counterexample is shrunk and written as a transcript, a Mermaid diagram and a program.",
    )
    from simulator.peers import config

    p.add_argument(
        "--mode",
        choices=("random", "exhaustive", "both"),
        default=None,
        help="exhaustive: breadth-first search of small slices; random: hypothesis and seeded random "
        "walks (default both; with --readings: exhaustive)",
    )
    p.add_argument(
        "--json", action="store_true", help="print one JSON object instead of text (default: text)"
    )
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of hypothesis and the random walks, >= 0 (default %(default)s)",
    )
    p.add_argument(
        "--examples",
        type=int,
        default=config.EXPLORE_EXAMPLES,
        help="hypothesis examples per round, run in chunks of 100 seeded from --seed; the report "
        "says how many ran and why; 0: no hypothesis, the random walks only (default %(default)s)",
    )
    p.add_argument(
        "--walks",
        type=int,
        default=config.EXPLORE_WALKS,
        help="random walks; 0: none, hypothesis only (default %(default)s)",
    )
    p.add_argument(
        "--steps",
        type=int,
        default=config.EXPLORE_STEPS,
        help="steps per walk and per hypothesis example (default %(default)s)",
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="the older name of --jobs (it once counted the random walks' processes only; default: --jobs)",
    )
    p.add_argument("--cluster", metavar="local|ADDRESS", help=CLUSTER_HELP)
    p.add_argument(
        "--time-budget",
        type=float,
        default=None,
        metavar="S",
        help="stop the exhaustive search after S seconds; partial statistics are reported "
        "(default: no budget)",
    )
    p.add_argument(
        "--graph",
        metavar="PATH",
        help="write the exhaustive state graph as GraphML; - for standard output, the report then "
        "goes to standard error (default: not written)",
    )
    p.add_argument(
        "--out",
        default="out/explore",
        metavar="DIR",
        help="folder for report.json and the counterexample files (default %(default)s)",
    )
    p.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="NAME",
        help="explore a seeded bug: a fault or a mutant (all its faults); repeatable, see "
        "`acp-model mutants` (default: none)",
    )
    p.add_argument(
        "--database", metavar="DIR", help="folder of hypothesis's example database (default: none)"
    )
    p.add_argument(
        "--hypothesis-shrink",
        action="store_true",
        help="let hypothesis shrink a failing example before delta debugging does; slower (default: off)",
    )
    p.add_argument(
        "--symmetry",
        action="store_true",
        help="exhaustive: merge states that differ only by a renaming of message IDs (default: off)",
    )
    p.add_argument(
        "--reduce",
        choices=("none", "por"),
        default="none",
        help="exhaustive: por expands, where the agent's and the client's side both can act and one "
        "side's events are independent of all the other side can do, that side only (partial-order "
        "reduction: the same rules found, quiescent states and machine rows; fewer states); not "
        "with --depth (default %(default)s)",
    )
    p.add_argument(
        "--slice",
        action="append",
        default=[],
        metavar="NAME",
        help="exhaustive: explore only this default slice; repeatable (default: every slice)",
    )
    p.add_argument(
        "--quiet",
        action="store_true",
        help="no progress on standard error (default: off; progress is shown only on a terminal)",
    )
    bounds = p.add_argument_group(
        "bounds (exhaustive: SMALL with these changes, replacing the slices; random: DEFAULT with them)"
    )
    add_bound_options(bounds, _default)
    bounds.add_argument(
        "--depth",
        type=int,
        default=None,
        metavar="N",
        help="exhaustive: events from the start, at most (default: no limit)",
    )
    bounds.add_argument(
        "--max-states",
        type=int,
        default=config.MAX_STATES,
        metavar="N",
        help="exhaustive: stop a slice after N distinct states (default %(default)s)",
    )
    add_reading_option(p)
    add_variant_options(p, "simulate")
    p.add_argument(
        "--compare",
        action="store_true",
        help="explore the spec as written and the variant (--variant or --drop) at the same bounds "
        "and seed and report the differences; files under OUT/base and OUT/variant; exit 0 when "
        "the comparison ran (default: off)",
    )
    add_matrix_options(p)
    return p


def add_matrix_options(p: argparse.ArgumentParser) -> None:
    """``--readings`` and ``--jobs``: the readings matrix (``simulator.analysis.matrix``)."""
    p.add_argument(
        "--readings",
        metavar="all|NAME,NAME",
        default=None,
        help="the readings matrix: explore every alternative of every reading against the defaults "
        "of the others (all), or the product of the named readings' alternatives, and print "
        "reading x alternative -> findings, states, seconds (default: off)",
    )
    p.add_argument(
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="worker processes (with --cluster: Ray workers) for the jobs of the run: the slices of "
        "the exhaustive search, the random-walk and hypothesis chunks, the explorations of "
        "--readings and --compare; the answers are the same for any number (default 1; with "
        "--readings: every core)",
    )


def _default(field: str) -> str:
    from simulator.peers.config import DEFAULT, SMALL

    small, default = getattr(SMALL, field), getattr(DEFAULT, field)
    if field == "transport":
        return str(default)
    if field == "features":
        small, default = ",".join(sorted(small)), "all"
    return f"exhaustive: each slice's own, or {small} in the custom slice; random: {default}"


def options(args: argparse.Namespace) -> Any:
    from simulator.explore.bfs import SLICE_BY_NAME
    from simulator.explore.run import Options

    faults = faults_from(args.fault)
    variant, readings = variant_and_readings(args)
    if args.compare and variant is None:
        raise UsageError("--compare needs a variant: --variant FILE or --drop RULE-ID")
    for name in args.slice:
        if name not in SLICE_BY_NAME:
            raise UsageError(f"unknown slice {name!r}; known: {', '.join(SLICE_BY_NAME)}")
    for flag, value, low in (
        ("--seed", args.seed, 0),
        ("--examples", args.examples, 0),
        ("--walks", args.walks, 0),
        ("--steps", args.steps, 1),
        ("--workers", args.workers, 1),
        ("--depth", args.depth, 0),
        ("--max-states", args.max_states, 1),
    ):
        if value is not None and value < low:
            raise UsageError(f"{flag} must be >= {low}")
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
    return Options(
        mode=args.mode,
        seed=args.seed,
        examples=args.examples,
        walks=args.walks,
        steps=args.steps,
        workers=1,
        time_budget=args.time_budget,
        graph=args.graph,
        out=args.out,
        faults=faults,
        database=args.database,
        symmetry=args.symmetry,
        reduce=args.reduce,
        hypothesis_shrink=args.hypothesis_shrink,
        slices=tuple(args.slice),
        bounds=bounds,
        depth=args.depth,
        max_states=args.max_states,
        readings=readings,
        variant=variant,
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
