"""``acp-model rules``: print the rule catalogue, as a table or as JSON.

Owns: the presentation of ``properties.catalogue`` (a table grouped by section, with a header
row and its markers explained above it, or a JSON array), the ``--level`` / ``--section``
filters, and one or more rules in full (``acp-model rules RULE-ID ...``: every field, the
readings its verdict depends on, and the spec sentences that state it, quoted from the user's
copy of the spec text with their line numbers; JSON: ``spec_sentences``). An unknown rule ID is
a one-line usage error (exit 2). ``implemented_by`` comes from
``properties.trace.implemented_by``; ``spec_lines`` (where each rule is stated in the spec text)
from ``properties.speclines``, when the spec text can be read (otherwise the output says so and has no
line numbers; a ``--spec`` given on the command line that cannot be read is a usage error).

``decidable`` and ``decidable_bound`` (JSON, every rule that has a check) are read from
``properties/decidability.json``: the output of ``acp-model decidability --json`` at the default
bound, committed (a test keeps it current), so that listing rules never re-runs the sample.

Must not know: how rules are checked.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cli.main import EXIT_OK, UsageError
from cli.outputs import show
from properties.catalogue import RULES_BY_ID, Rule, rules_for
from properties.catalogue_text import full, rule_json, table
from properties.outputs import dumps
from properties.speclines import default_spec, spec_lines


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "rules",
        help="list the catalogued rules of the spec",
        description="List the rule catalogue: one entry per normative statement of the spec, "
        "paraphrased, with its level, the peer it binds, how it is checked and the lines of the "
        "spec text that state it.",
    )
    parser.add_argument(
        "ids",
        nargs="*",
        metavar="RULE-ID",
        help="show these rules in full, with the spec sentences that state them quoted from the "
        "spec text (default: the table of every rule)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print a JSON array instead of a table (default: table)"
    )
    parser.add_argument(
        "--level",
        metavar="L",
        help='only this level: MUST, "MUST NOT", SHOULD, "SHOULD NOT" or MAY, any case (default: all)',
    )
    parser.add_argument(
        "--section", metavar="S", help="only this section: its heading or its code, any case (default: all)"
    )
    parser.add_argument(
        "--spec",
        metavar="PATH",
        help=f"the spec text, for line numbers (default {default_spec()}; without it the table has no "
        "line numbers, a path given that cannot be read is an error)".replace("%", "%%"),
    )
    return parser


def _select(args: argparse.Namespace) -> tuple[Rule, ...]:
    try:
        chosen = rules_for(level=args.level, section=args.section)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not args.ids:
        return chosen
    wanted: list[Rule] = []
    for given in args.ids:
        rule = RULES_BY_ID.get(given.strip().upper())
        if rule is None:
            raise UsageError(f"unknown rule {given!r} (acp-model rules lists them)")
        if rule in chosen and rule not in wanted:
            wanted.append(rule)
    return tuple(wanted)


def _spec_text(path: str) -> tuple[str | None, str]:
    """The spec text, or None and why it cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8"), ""
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return None, f"{path}: {why}"


def run(args: argparse.Namespace) -> int:
    rules = _select(args)
    if not rules:
        raise UsageError("no rule matches the given --level and --section")
    path = str(default_spec()) if args.spec is None else args.spec  # the default may be unreadable
    spec, why = _spec_text(path)
    if why and args.spec is not None:
        raise UsageError(f"--spec {why}")
    if why:
        sys.stderr.write(f"acp-model rules: no spec line numbers: {why} (see README, Set-up)\n")
    lines = spec_lines(rules, spec) if spec is not None else None
    text = spec if args.ids else None
    if args.json:
        show(dumps([rule_json(rule, lines, text) for rule in rules]))
    elif args.ids:
        show("\n\n".join("\n".join(full(r, text, path)) for r in rules) + "\n")
    else:
        show(table(rules, lines))
    return EXIT_OK
