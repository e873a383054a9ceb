"""``acp-model rules``: print the rule catalogue, as a table or as JSON.

Owns: the presentation of ``properties.catalogue`` (a table grouped by section, or a JSON array)
and the ``--level`` / ``--section`` filters. ``implemented_by`` comes from
``properties.trace.implemented_by``; ``spec_lines`` (where each rule is stated in the spec text)
from ``properties.speclines``, when the spec text can be read (otherwise the output says so and has no
line numbers).

``decidable`` and ``decidable_bound`` (JSON, every rule that has a check) are read from
``properties/decidability.json``: the output of ``acp-model decidability --json`` at the default
bound, committed (a test keeps it current), so that listing rules never re-runs the sample.

Must not know: how rules are checked.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import Any

from cli.main import EXIT_OK, UsageError
from cli.util import dumps
from properties.catalogue import Rule, rules_for
from properties.decidability_data import decidability_of
from properties.speclines import default_spec, spec_lines
from properties.trace import implemented_by

_PARAPHRASE_WIDTH = 72


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "rules",
        help="list the catalogued rules of the spec",
        description="List the rule catalogue: one entry per normative statement of the spec, "
        "paraphrased, with its level, the peer it binds, how it is checked and the lines of the "
        "spec text that state it.",
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
        default=str(default_spec()),
        help="the spec text, for line numbers (default %(default)s)",
    )
    return parser


def _select(args: argparse.Namespace) -> tuple[Rule, ...]:
    try:
        return rules_for(level=args.level, section=args.section)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _lines(path: str, rules: tuple[Rule, ...]) -> tuple[dict[str, tuple[int, ...]] | None, str]:
    """Each rule's spec lines, or None and why not."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return None, f"no spec line numbers: {path}: {why} (see README, Set-up)"
    return spec_lines(rules, text), ""


def _where(lines: tuple[int, ...]) -> str:
    return ("spec line " if len(lines) == 1 else "spec lines ") + ", ".join(map(str, lines))


def _table(rules: tuple[Rule, ...], where: dict[str, tuple[int, ...]] | None) -> str:
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
        if where is not None and where.get(rule.id):
            wrapped.append(f"[{_where(where[rule.id])}]")
        flags = "*" if rule.eventually else " "
        flags += "i" if rule.informal else " "
        head = f"{rule.id:<{id_w}}  {rule.level:<10}  {rule.side:<6}  {rule.check:<13} {flags} "
        lines.append(head + wrapped[0])
        lines.extend(" " * len(head) + more for more in wrapped[1:])
    lines.append("")
    lines.append(f"{len(rules)} rules. * judged at the end of a run; i informal (no uppercase keyword).")
    if where is not None:
        lines.append("Spec lines: in the spec text (acp-v2-prompt-lifecycle.txt), counted from 1.")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    rules = _select(args)
    if not rules:
        raise UsageError("no rule matches the given --level and --section")
    lines, why = _lines(args.spec, rules)
    if why:
        sys.stderr.write(f"acp-model rules: {why}\n")
    if args.json:
        entries = []
        decided = decidability_of()
        for rule in rules:
            entry = rule.to_json()
            if rule.id in decided:
                entry["decidable"], entry["decidable_bound"] = decided[rule.id]
            entry["implemented_by"] = list(implemented_by(rule.id))
            entry["spec_lines"] = None if lines is None else list(lines[rule.id])
            entries.append(entry)
        sys.stdout.write(dumps(entries))
    else:
        sys.stdout.write(_table(rules, lines))
    return EXIT_OK
