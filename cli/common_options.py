"""The options several commands share, each declared once.

Owns: ``--json`` (``add_json_option``: each command names what its JSON is), ``--quiet`` (no
progress), ``--fail-on`` (the failing level; each command words its help), ``--fault`` (a seeded
bug; each command says what it does with one), ``--max-findings`` and ``--html`` (``check`` and
``replay``), and the value type ``positive_int`` (a bad value: one line, exit 2).

Must not know: what a command does with them.
"""

from __future__ import annotations

import argparse

from properties.checking import DEFAULT_MAX_FINDINGS, FAIL_SEVERITIES


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def add_json_option(p: argparse.ArgumentParser, what: str = "a JSON report") -> None:
    p.add_argument("--json", action="store_true", help=f"print {what} instead of text (default: text)")


def add_quiet_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quiet", action="store_true", help="no progress on standard error (default: off)")


def add_fail_on_option(p: argparse.ArgumentParser, help_text: str) -> None:
    p.add_argument("--fail-on", choices=sorted(FAIL_SEVERITIES), default="must", help=help_text)


def add_fault_option(p: argparse.ArgumentParser, help_text: str) -> None:
    p.add_argument("--fault", action="append", default=[], metavar="NAME", help=help_text)


def add_max_findings(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-findings",
        type=positive_int,
        default=DEFAULT_MAX_FINDINGS,
        metavar="N",
        help="findings kept per file; the rest are counted in the summary and still set the exit "
        "code (default: %(default)s)",
    )


def add_html_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--html",
        metavar="OUT.html",
        help="also write one self-contained HTML page of the input (one FILE only): the messages as "
        "a sequence diagram, each finding at its line with its spec sentence, the machines' state "
        "and the client view after any line (default: no page)",
    )
