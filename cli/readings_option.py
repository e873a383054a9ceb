"""The ``--reading NAME=ALTERNATIVE`` option, shared by the commands that judge or simulate
(``acp-model readings --help`` lists them, derived from their parsers).

Owns: adding the option to a parser and turning its values into a checked mapping (an unknown
reading or alternative, or a malformed value, is a one-line usage error, exit 2).

Must not know: what any reading changes (``properties.readings`` and the monitors do).
"""

from __future__ import annotations

import argparse

from cli.main import UsageError
from properties.readings import ReadingError, parse


def add_reading_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--reading",
        action="append",
        default=[],
        metavar="NAME=ALTERNATIVE",
        help="read an ambiguous spec sentence this way (repeatable; `acp-model readings` lists "
        "them; default: every reading's default)",
    )


def chosen_readings(args: argparse.Namespace) -> dict[str, str]:
    """The ``--reading`` choices, checked (a UsageError names the bad one)."""
    try:
        return parse(getattr(args, "reading", None) or [])
    except ReadingError as exc:
        raise UsageError(str(exc)) from None
