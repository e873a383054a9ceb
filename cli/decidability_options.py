"""The options that bound a decidability sample, shared by ``acp-model decidability`` and
``acp-model spec-report``.

Owns: ``--walks``, ``--steps``, ``--seed``, ``--twin-nodes`` and ``--exhaustive-states`` (their
names, help and checks) and the ``simulator.analysis.decidability.Bound`` they make; ``--jobs``; the
``--readings all|NAME,NAME|none`` value parser (``reading_names``). Bad values are one-line usage
errors.

Must not know: how the sample is taken.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from cli.main import UsageError
from cli.workers_option import add_pool_options, pool_of
from simulator.peers.config import (
    DECIDABILITY_EXHAUSTIVE_STATES,
    DECIDABILITY_STEPS,
    DECIDABILITY_TWIN_NODES,
    DECIDABILITY_WALKS,
)
from simulator.workers import Workers

if TYPE_CHECKING:
    from simulator.analysis.decidability import Bound


def add_bound_options(group: Any) -> None:
    group.add_argument(
        "--walks",
        type=int,
        metavar="N",
        default=DECIDABILITY_WALKS,
        help="seeded random walks per rule, on top of every scenario (default %(default)s)",
    )
    group.add_argument(
        "--steps",
        type=int,
        metavar="N",
        default=DECIDABILITY_STEPS,
        help="choices per walk before it drains to quiescence (default %(default)s)",
    )
    group.add_argument(
        "--seed", type=int, metavar="N", default=0, help="first walk seed (default %(default)s)"
    )
    group.add_argument(
        "--twin-nodes",
        type=int,
        metavar="N",
        default=DECIDABILITY_TWIN_NODES,
        help="states the search for a conforming twin may visit (default %(default)s)",
    )
    group.add_argument(
        "--exhaustive-states",
        type=int,
        metavar="N",
        default=DECIDABILITY_EXHAUSTIVE_STATES,
        help="states explored breadth-first in each explore slice with the seeded bug on, on top "
        "of the scenarios and walks (0: none; default %(default)s)",
    )


def add_jobs_option(p: Any) -> None:
    """``--jobs`` and ``--cluster`` (``cli.workers_option``) for the decidability samples."""
    add_pool_options(p, "the decidability samples and the readings matrix", "every core")


def pool_from(args: argparse.Namespace) -> Workers:
    """The worker pool of ``--jobs`` (default: every core) and ``--cluster``."""
    return pool_of(args, None)


def reading_names(value: str, option: str = "--readings") -> tuple[str, ...]:
    """``all|NAME,NAME|none``: ("all",), the named readings, or () for none (an unknown name
    is a usage error)."""
    from properties.readings import BY_NAME

    if value == "none":
        return ()
    if value == "all":
        return ("all",)
    names = tuple(n.strip() for n in value.split(",") if n.strip())
    unknown = [n for n in names if n not in BY_NAME]
    if unknown or not names:
        bad = unknown[0] if unknown else value
        raise UsageError(f"{option}: unknown reading {bad!r} (see `acp-model readings`)")
    return names


def bound_of(args: argparse.Namespace) -> Bound:
    from simulator.analysis.decidability import Bound

    for name, low in (("walks", 0), ("steps", 1), ("seed", 0), ("twin_nodes", 1), ("exhaustive_states", 0)):
        value = getattr(args, name)
        if value < low:
            raise UsageError(f"--{name.replace('_', '-')} {value}: must be >= {low}")
    return Bound(
        walks=args.walks,
        steps=args.steps,
        seed=args.seed,
        twin_nodes=args.twin_nodes,
        exhaustive_states=args.exhaustive_states,
    )


def time_budget(args: argparse.Namespace) -> float | None:
    value: float | None = args.time_budget
    if value is not None and value <= 0:
        raise UsageError(f"--time-budget {value}: must be > 0 seconds")
    return value
