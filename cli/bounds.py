"""The bound options shared by ``acp-model explore`` and ``acp-model simulate``, and the seeded-bug
names both accept.

Owns: the option names, their help text and their validation (bad values: ``UsageError``), so
the two commands accept the same bounds, spelled and checked alike. The result is a dict of
``simulator.peers.config.Config`` field changes.

Must not know: which base configuration the changes apply to (each command decides).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from typing import Any

from cli.main import UsageError

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


def add_bound_options(group: Any, default: Callable[[str], str]) -> None:
    """Add the bound options to ``group``; ``default(field)`` says what a ``Config`` field is
    when its option is left out."""
    from simulator.peers.config import FEATURES

    for name, what in BOUNDS:
        low = 1 if name == "capacity" else 0
        group.add_argument(
            f"--{name}",
            type=int,
            default=None,
            metavar="N",
            help=f"{what}, >= {low} (default: {default(name.replace('-', '_'))})",
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
    """The ``Config`` changes the bound options ask for; ``UsageError`` for a bad value."""
    from simulator.explore.run import parse_features

    bounds: dict[str, Any] = {}
    for name, _ in BOUNDS:
        field = name.replace("-", "_")
        value = getattr(args, field)
        if value is not None:
            low = 1 if name == "capacity" else 0
            if value < low:
                raise UsageError(f"--{name} must be >= {low}")
            bounds[field] = value
    if args.features is not None:
        try:
            bounds["features"] = parse_features(args.features)
        except ValueError as exc:
            raise UsageError(f"--features: {exc}") from None
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
