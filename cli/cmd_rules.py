"""``acp-model rules``: print the rule catalogue, as a table or as JSON.

Owns: the presentation of ``properties.catalogue`` (a table grouped by section, or a JSON array)
and the ``--level`` / ``--section`` filters. ``implemented_by`` comes from
``properties.trace.implemented_by``.

Must not know: how rules are checked.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any

from cli.main import EXIT_OK, UsageError
from cli.util import dumps
from properties.catalogue import Rule, rules_for
from properties.trace import implemented_by

_PARAPHRASE_WIDTH = 72


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "rules",
        help="list the catalogued rules of the spec",
        description="List the rule catalogue: one entry per normative statement of the spec.",
    )
    parser.add_argument("--json", action="store_true", help="print a JSON array instead of a table")
    parser.add_argument(
        "--level",
        metavar="L",
        help='only this level: MUST, "MUST NOT", SHOULD, "SHOULD NOT" or MAY (any case)',
    )
    parser.add_argument(
        "--section", metavar="S", help="only this section: its heading or its code (any case)"
    )
    return parser


def _select(args: argparse.Namespace) -> tuple[Rule, ...]:
    try:
        return rules_for(level=args.level, section=args.section)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _table(rules: tuple[Rule, ...]) -> str:
    id_w = max(len(r.id) for r in rules)
    lines: list[str] = []
    section = None
    for rule in rules:
        if rule.section != section:
            section = rule.section
            if lines:
                lines.append("")
            lines.append(f"== {section} ({rule.code})")
        wrapped = textwrap.wrap(rule.paraphrase, _PARAPHRASE_WIDTH) or [""]
        if rule.reason:
            wrapped += textwrap.wrap(f"(not checkable: {rule.reason})", _PARAPHRASE_WIDTH)
        flags = "*" if rule.eventually else " "
        flags += "i" if rule.informal else " "
        head = f"{rule.id:<{id_w}}  {rule.level:<10}  {rule.side:<6}  {rule.check:<13} {flags} "
        lines.append(head + wrapped[0])
        lines.extend(" " * len(head) + more for more in wrapped[1:])
    lines.append("")
    lines.append(f"{len(rules)} rules. * judged at the end of a run; i informal (no uppercase keyword).")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    rules = _select(args)
    if not rules:
        raise UsageError("no rule matches the given --level and --section")
    if args.json:
        entries = []
        for rule in rules:
            entry = rule.to_json()
            entry["implemented_by"] = list(implemented_by(rule.id))
            entries.append(entry)
        sys.stdout.write(dumps(entries))
    else:
        sys.stdout.write(_table(rules))
    return EXIT_OK
