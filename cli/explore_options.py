"""The options of ``acp-model explore``, declared.

Owns: ``add_parser`` (every option, its help and default) and ``COUNTS``, the counts of a run
with the lowest value each takes.

Must not know: their checks, how the run goes or how its report is printed (``cli.cmd_explore``).
"""

from __future__ import annotations

import argparse
from typing import Any

from cli.bounds import add_bound_options
from cli.options import (
    add_fault_option,
    add_json_option,
    add_pool_options,
    add_quiet_option,
    add_reading_option,
    add_variant_options,
)
from simulator.peers import config

COUNTS = (
    ("seed", 0, 0, "seed of hypothesis and the random walks, >= 0 (default %(default)s)"),
    (
        "examples",
        config.EXPLORE_EXAMPLES,
        0,
        "hypothesis examples per round, run in chunks of 100 seeded from --seed; the report says how "
        "many ran and why; 0: no hypothesis, the random walks only (default %(default)s)",
    ),
    ("walks", config.EXPLORE_WALKS, 0, "random walks; 0: none, hypothesis only (default %(default)s)"),
    ("steps", config.EXPLORE_STEPS, 1, "steps per walk and per hypothesis example (default %(default)s)"),
)
"""``--<name>`` options of a run: (name, default, lowest value, help); ``cli.cmd_explore`` checks
the lowest."""


def add_parser(sub: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(
        "explore",
        help="explore interleavings (exhaustive BFS, hypothesis, random walks) and report breaches",
        description="Explore the simulated agent and client: an exhaustive breadth-first search "
        "within small bounds, hypothesis stateful testing and many random walks. Every "
        "counterexample is shrunk and written as a transcript, a Mermaid diagram and a program.",
    )
    p.add_argument(
        "--mode",
        choices=("random", "exhaustive", "both"),
        default=None,
        help="exhaustive: breadth-first search of small slices; random: hypothesis and seeded random "
        "walks (default both; with --readings: exhaustive)",
    )
    add_json_option(p, "one JSON object")
    for name, default, _, what in COUNTS:
        p.add_argument(f"--{name}", type=int, default=default, help=what)
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="the older name of --jobs (it once counted the random walks' processes only; default: --jobs)",
    )
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
    add_fault_option(
        p,
        "explore a seeded bug: a fault or a mutant (all its faults); repeatable, see "
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
    add_quiet_option(p)
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
    p.add_argument(
        "--readings",
        metavar="all|NAME,NAME",
        default=None,
        help="the readings matrix: explore every alternative of every reading against the defaults "
        "of the others (all), or the product of the named readings' alternatives, and print "
        "reading x alternative -> findings, states, seconds (default: off)",
    )
    add_pool_options(
        p,
        "the jobs of the run: the slices of the exhaustive search, the random-walk and hypothesis "
        "chunks, the explorations of --readings and --compare",
        "1; with --readings: every core",
    )
    return p


def _default(field: str) -> str:
    from simulator.peers.config import DEFAULT, SMALL

    small, default = getattr(SMALL, field), getattr(DEFAULT, field)
    if field == "transport":
        return str(default)
    if field == "features":
        small, default = ",".join(sorted(small)), "all"
    return f"exhaustive: each slice's own, or {small} in the custom slice; random: {default}"
