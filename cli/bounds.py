"""The bound options: of a simulation (``explore`` and ``simulate``) and of a decidability sample
(``decidability`` and ``spec-report``), and the seeded-bug names ``--fault`` accepts.

Owns: the option names, their help text and their validation (bad values: ``UsageError``), so
the commands that share a group accept the same bounds, spelled and checked alike. A simulation's
bounds are a dict of ``simulator.peers.config.Config`` field changes (``bounds_from``); a sample's
are a ``simulator.analysis.decidability.Bound`` (``bound_of``), with ``--jobs``/``--cluster``,
``--time-budget``'s check and the ``--readings all|NAME,NAME|none`` value parser
(``reading_names``).

Must not know: which base configuration the changes apply to (each command decides), how the
sample is taken.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from cli.main import UsageError
from cli.options import add_pool_options, at_least
from simulator.peers.config import (
    DECIDABILITY_EXHAUSTIVE_STATES,
    DECIDABILITY_STEPS,
    DECIDABILITY_TWIN_NODES,
    DECIDABILITY_WALKS,
    FEATURES,
)

if TYPE_CHECKING:
    from simulator.analysis.decidability import Bound

BOUNDS = (
    ("prompts", "session/prompt requests the client may send per run"),
    ("tool-calls", "foreground tool calls the agent may start per run"),
    ("permissions", "permission requests per run"),
    ("background", "background items (terminal, background tool call, subagent) per run"),
    ("compactions", "context compactions per run"),
    ("hooks", "foreground intervals of hook work per run"),
    ("closes", "session/close requests the client may send per run"),
    ("resumes", "session/resume requests of a closed session the client may send per run"),
    ("capacity", "messages in flight per direction"),
)
"""``--<name>`` options, each a ``Config`` field of the same name (``-`` as ``_``)."""


def _lowest(name: str) -> int:
    """The least value of the bound option ``--name``: --capacity must be >= 1 (a message must
    fit in flight), the others >= 0."""
    return 1 if name == "capacity" else 0


def add_bound_options(group: Any, default: Callable[[str], str]) -> None:
    """Add the bound options to ``group``; ``default(field)`` says what a ``Config`` field is
    when its option is left out."""
    for name, what in BOUNDS:
        group.add_argument(
            f"--{name}",
            type=int,
            default=None,
            metavar="N",
            help=f"{what}, >= {_lowest(name)} (default: {default(name.replace('-', '_'))})",
        )
    group.add_argument(
        "--features",
        metavar="A,B",
        help="features switched on, comma-separated, from: "
        + ", ".join(FEATURES)
        + f" (default: {default('features')})",
    )
    group.add_argument(
        "--transport",
        choices=("fifo", "unordered"),
        default=None,
        help="fifo: both directions in order, like stdio; unordered: agent messages may overtake "
        f"each other (default: {default('transport')})",
    )


def bounds_from(args: argparse.Namespace) -> dict[str, Any]:
    """The ``Config`` changes the bound options ask for; ``UsageError`` for a bad value (an
    unknown feature of ``--features a,b,c`` is named)."""
    bounds: dict[str, Any] = {}
    for name, _ in BOUNDS:
        field = name.replace("-", "_")
        value = getattr(args, field)
        at_least((f"--{name}", value, _lowest(name)))
        if value is not None:
            bounds[field] = value
    if args.features is not None:
        names = frozenset(n.strip() for n in args.features.split(",") if n.strip())
        unknown = sorted(names - frozenset(FEATURES))
        if unknown:
            known = ", ".join(FEATURES)
            raise UsageError(f"--features: unknown feature(s) {', '.join(unknown)}; known: {known}")
        bounds["features"] = names
    if args.transport is not None:
        bounds["transport"] = args.transport
    return bounds


def faults_from(names: Iterable[str]) -> frozenset[str]:
    """The faults to switch on for ``--fault`` names: a fault, or a mutant (all its faults)."""
    from simulator.analysis.mutants import BY_NAME as MUTANTS
    from simulator.peers.world import ALL_FAULTS

    faults = frozenset(names)
    for name in names:
        mutant = MUTANTS.get(name)
        if mutant is not None:
            faults |= mutant.switched_on
    faults -= frozenset(MUTANTS) - ALL_FAULTS
    unknown = sorted(faults - ALL_FAULTS)
    if unknown:
        raise UsageError(f"unknown fault {unknown[0]!r} (see `acp-model mutants`)")
    return faults


DECIDABILITY_BOUND = (
    (
        "walks",
        DECIDABILITY_WALKS,
        0,
        "seeded random walks per rule, on top of every scenario (default %(default)s)",
    ),
    ("steps", DECIDABILITY_STEPS, 1, "choices per walk before it drains to quiescence (default %(default)s)"),
    ("seed", 0, 0, "first walk seed (default %(default)s)"),
    (
        "twin-nodes",
        DECIDABILITY_TWIN_NODES,
        1,
        "states the search for a conforming twin may visit (default %(default)s)",
    ),
    (
        "exhaustive-states",
        DECIDABILITY_EXHAUSTIVE_STATES,
        0,
        "states explored breadth-first in each explore slice with the seeded bug on, on top of the "
        "scenarios and walks (0: none; default %(default)s)",
    ),
)
"""``--<name>`` options of a sample: (name, default, lowest value, help), each a ``Bound`` field."""


def add_decidability_options(p: Any, title: str) -> None:
    """``--jobs`` and ``--cluster`` for the samples, then the sample's bounds in a group."""
    add_pool_options(p, "the decidability samples and the readings matrix", "every core")
    group = p.add_argument_group(title)
    for name, default, _, what in DECIDABILITY_BOUND:
        group.add_argument(f"--{name}", type=int, metavar="N", default=default, help=what)


def bound_of(args: argparse.Namespace) -> Bound:
    from simulator.analysis.decidability import Bound

    values = {name: getattr(args, name.replace("-", "_")) for name, *_ in DECIDABILITY_BOUND}
    for name, _, low, _ in DECIDABILITY_BOUND:
        if values[name] < low:
            raise UsageError(f"--{name} {values[name]}: must be >= {low}")
    return Bound(**{name.replace("-", "_"): value for name, value in values.items()})


def time_budget(args: argparse.Namespace) -> float | None:
    value: float | None = args.time_budget
    if value is not None and not value > 0:  # (nan too)
        raise UsageError(f"--time-budget {value}: must be > 0 seconds")
    return value


def reading_names(value: str) -> tuple[str, ...]:
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
        raise UsageError(f"--readings: unknown reading {bad!r} (see `acp-model readings`)")
    return names
