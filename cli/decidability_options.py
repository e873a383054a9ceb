"""The options that bound a decidability sample, shared by ``acp-model decidability`` and
``acp-model spec-report``.

Owns: ``--walks``, ``--steps``, ``--seed`` and ``--twin-nodes`` (their names, help and checks) and
the ``simulator.decidability.Bound`` they make. Bad values are one-line usage errors.

Must not know: how the sample is taken.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from cli.main import UsageError
from simulator.config import DECIDABILITY_STEPS, DECIDABILITY_TWIN_NODES, DECIDABILITY_WALKS

if TYPE_CHECKING:
    from simulator.decidability import Bound


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


def bound_of(args: argparse.Namespace) -> Bound:
    from simulator.decidability import Bound

    for name, low in (("walks", 0), ("steps", 1), ("seed", 0), ("twin_nodes", 1)):
        value = getattr(args, name)
        if value < low:
            raise UsageError(f"--{name.replace('_', '-')} {value}: must be >= {low}")
    return Bound(walks=args.walks, steps=args.steps, seed=args.seed, twin_nodes=args.twin_nodes)


def time_budget(args: argparse.Namespace) -> float | None:
    value: float | None = args.time_budget
    if value is not None and value <= 0:
        raise UsageError(f"--time-budget {value}: must be > 0 seconds")
    return value
