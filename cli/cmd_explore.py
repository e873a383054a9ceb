"""``acp-model explore``: search the simulated sessions for rule breaches, exhaustively and at random.

Owns: the options, their validation (bad values: one line, exit 2) and the exit code (0 no
findings, 1 findings). The work is done by ``simulator.explore_run``; the report is printed as
text or, with ``--json``, as one JSON object.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cli.main import UsageError


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "explore",
        help="explore interleavings (exhaustive BFS, hypothesis, random walks) and report breaches",
        description="Explore the simulated agent and client: an exhaustive breadth-first search "
        "within small bounds, hypothesis stateful testing and many random walks. Every "
        "counterexample is shrunk and written as a transcript, a Mermaid diagram and a program.",
    )
    p.add_argument("--mode", choices=("random", "exhaustive", "both"), default="both")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument("--seed", type=int, default=0, help="seed of hypothesis and the random walks (default 0)")
    p.add_argument("--examples", type=int, default=None, help="hypothesis examples (default 300)")
    p.add_argument("--walks", type=int, default=None, help="random walks (default 2000)")
    p.add_argument(
        "--steps", type=int, default=None, help="steps per walk and per hypothesis example (default 60)"
    )
    p.add_argument("--workers", type=int, default=1, help="processes for the random walks (default 1)")
    p.add_argument(
        "--time-budget",
        type=float,
        default=None,
        metavar="S",
        help="stop the exhaustive search after S seconds (partial statistics are reported)",
    )
    p.add_argument("--graph", metavar="PATH", help="write the exhaustive state graph as GraphML")
    p.add_argument("--out", default="out/explore", metavar="DIR", help="output folder (default out/explore)")
    p.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="NAME",
        help="explore a seeded bug: a fault or a mutant (all its faults), see `acp-model mutants`",
    )
    p.add_argument("--database", metavar="DIR", help="hypothesis example database (default: none)")
    p.add_argument(
        "--hypothesis-shrink",
        action="store_true",
        help="let hypothesis shrink a failing example before delta debugging does (slower)",
    )
    p.add_argument(
        "--symmetry",
        action="store_true",
        help="exhaustive: merge states that differ only by a renaming of message IDs",
    )
    p.add_argument(
        "--slice",
        action="append",
        default=[],
        metavar="NAME",
        help="exhaustive: explore only this default slice (repeatable)",
    )
    bounds = p.add_argument_group("bounds (exhaustive: SMALL with these changes; random: DEFAULT with them)")
    for name in ("prompts", "tool-calls", "permissions", "background", "compactions", "hooks", "capacity"):
        bounds.add_argument(f"--{name}", type=int, default=None, metavar="N")
    bounds.add_argument("--features", metavar="A,B", help="features switched on (comma-separated)")
    bounds.add_argument("--depth", type=int, default=None, metavar="N", help="exhaustive depth limit")
    bounds.add_argument(
        "--max-states",
        type=int,
        default=None,
        metavar="N",
        help="exhaustive: stop a slice after N distinct states (default 100,000)",
    )
    bounds.add_argument("--transport", choices=("fifo", "unordered"), default=None)
    return p


def _options(args: argparse.Namespace) -> Any:
    from simulator.explore_bfs import SLICE_BY_NAME
    from simulator.explore_run import Options, parse_features
    from simulator.world import ALL_FAULTS

    faults = frozenset(args.fault)
    try:
        from simulator.mutants import BY_NAME as MUTANTS
    except ImportError:  # pragma: no cover - mutants are part of the simulator
        MUTANTS = {}
    for name in args.fault:  # a mutant made of several faults switches them all on
        mutant = MUTANTS.get(name)
        if mutant is not None:
            faults |= getattr(mutant, "switched_on", frozenset({name}))
    unknown = sorted(faults - ALL_FAULTS)
    if unknown:
        raise UsageError(f"unknown fault {unknown[0]!r} (see `acp-model mutants`)")
    for name in args.slice:
        if name not in SLICE_BY_NAME:
            raise UsageError(f"unknown slice {name!r}; known: {', '.join(SLICE_BY_NAME)}")
    for flag, value, low in (
        ("--seed", args.seed, 0),
        ("--examples", args.examples, 1),
        ("--walks", args.walks, 0),
        ("--steps", args.steps, 1),
        ("--workers", args.workers, 1),
        ("--depth", args.depth, 0),
        ("--max-states", args.max_states, 1),
    ):
        if value is not None and value < low:
            raise UsageError(f"{flag} must be >= {low}")
    if args.time_budget is not None and args.time_budget <= 0:
        raise UsageError("--time-budget must be > 0")
    if args.graph is not None:
        if args.mode == "random":
            raise UsageError("--graph needs the exhaustive mode (--mode exhaustive or both)")
        if Path(args.graph).is_dir():
            raise UsageError(f"{args.graph}: is a folder, not a file")
    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise UsageError(f"{args.out}: is a file, not a folder")
    bounds: dict[str, Any] = {}
    for name in ("prompts", "tool_calls", "permissions", "background", "compactions", "hooks", "capacity"):
        value = getattr(args, name)
        if value is not None:
            if value < (1 if name == "capacity" else 0):
                raise UsageError(f"--{name.replace('_', '-')} must be >= {1 if name == 'capacity' else 0}")
            bounds[name] = value
    if args.features is not None:
        try:
            bounds["features"] = parse_features(args.features)
        except ValueError as exc:
            raise UsageError(f"--features: {exc}") from None
    if args.transport is not None:
        bounds["transport"] = args.transport
    opts = Options(
        mode=args.mode,
        seed=args.seed,
        workers=args.workers,
        time_budget=args.time_budget,
        graph=args.graph,
        out=args.out,
        faults=faults,
        database=args.database,
        symmetry=args.symmetry,
        hypothesis_shrink=args.hypothesis_shrink,
        slices=tuple(args.slice),
        bounds=bounds,
        depth=args.depth,
    )
    if args.examples is not None:
        opts.examples = args.examples
    if args.walks is not None:
        opts.walks = args.walks
    if args.steps is not None:
        opts.steps = args.steps
    if args.max_states is not None:
        opts.max_states = args.max_states
    return opts


def run(args: argparse.Namespace) -> int:
    from cli.util import dumps
    from diagrams.sequence import transcript_to_mermaid
    from simulator.report import render_text

    opts = _options(args)
    opts.diagram = transcript_to_mermaid
    from simulator import explore_run

    def progress(line: str) -> None:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

    try:
        report = explore_run.run(opts, progress)
    except OSError as exc:
        where = getattr(exc, "filename", None) or opts.out
        raise UsageError(f"{where}: cannot write ({exc.strerror or exc})") from None
    sys.stdout.write(dumps(report) if args.json else render_text(report))
    return 1 if report["findings"] else 0
