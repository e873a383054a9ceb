"""``acp-model rules``: print the rule catalogue, as a table or as JSON.

Owns: the presentation of ``properties.catalogue`` (a table grouped by section, with a header
row and its markers explained above it, or a JSON array), the ``--level`` / ``--section``
filters, and one or more rules in full (``acp-model rules RULE-ID ...``: every field, the
readings its verdict depends on, and the spec sentences that state it, quoted from the user's
copy of the spec text with their line numbers; JSON: ``spec_sentences``). An unknown rule ID is
a one-line usage error (exit 2). ``implemented_by`` comes from
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
from properties.catalogue import RULES_BY_ID, Rule, rules_for
from properties.decidability_data import decidability_of
from properties.speclines import default_spec, rule_sentences, spec_lines
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
        default=str(default_spec()),
        help="the spec text, for line numbers (default %(default)s)",
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


def _lines(path: str, rules: tuple[Rule, ...]) -> tuple[dict[str, tuple[int, ...]] | None, str]:
    """Each rule's spec lines, or None and why not."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return None, f"no spec line numbers: {path}: {why} (see README, Set-up)"
    return spec_lines(rules, text), ""


def _spec_text(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _where(lines: tuple[int, ...]) -> str:
    return ("spec line " if len(lines) == 1 else "spec lines ") + ", ".join(map(str, lines))


MARKERS = (
    'Markers: * judged at the end of a run (an "eventually" rule: a state that must be left, '
    "an answer that must come); i informal (the spec states it without an uppercase keyword)."
)


def _table(rules: tuple[Rule, ...], where: dict[str, tuple[int, ...]] | None) -> str:
    id_w = max(len(r.id) for r in rules)
    lines: list[str] = [*textwrap.wrap(MARKERS, 100)]
    header = f"{'rule':<{id_w}}  {'level':<10}  {'binds':<6}  {'check':<13} {'**':<2} what it says"
    lines += ["", header.replace("**", "  ") + (" [where in the spec]" if where is not None else "")]
    section = None
    for rule in rules:
        if rule.section != section:
            section = rule.section
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


def _readings_of(rule: Rule) -> list[str]:
    from properties.readings import READINGS

    return [r.name for r in READINGS if rule.id in r.rules]


def _full(rule: Rule, spec_text: str | None, spec: str) -> list[str]:
    """``rule`` in full: every field, and the spec sentences that state it (quoted)."""
    flags = [
        *(["judged at the end of a run (eventually)"] if rule.eventually else []),
        *(["informal (no uppercase keyword)"] if rule.informal else []),
    ]
    out = [f"{rule.id}  {rule.level}  binds: {rule.side}  check: {rule.check}"]
    out.append(f"  section: {rule.section} ({rule.code})")
    out += textwrap.wrap(rule.paraphrase, 100, initial_indent="  says: ", subsequent_indent="    ")
    if rule.reason:
        out += textwrap.wrap(rule.reason, 100, initial_indent="  why not checked: ", subsequent_indent="    ")
    if flags:
        out.append(f"  {'; '.join(flags)}")
    decided = decidability_of().get(rule.id)
    if decided is not None:
        out += textwrap.wrap(
            f"decidable from the wire: {decided[0]} (sample: {decided[1]})",
            100,
            initial_indent="  ",
            subsequent_indent="    ",
        )
    readings = _readings_of(rule)
    if readings:
        out.append(f"  its verdict depends on the reading(s): {', '.join(readings)} (acp-model readings)")
    where = implemented_by(rule.id)
    if where:
        out += textwrap.wrap(
            ", ".join(where), 100, initial_indent="  implemented by: ", subsequent_indent="    "
        )
    if spec_text is None:
        out.append("  the spec text: not read (see the note on standard error)")
    else:
        found = rule_sentences(rule, spec_text)
        out.append(f"  the spec text ({spec}):" if found else f"  the spec text ({spec}): no sentence found")
        for line, sentence in found:
            out += textwrap.wrap(
                f'"{sentence}"', 100, initial_indent=f"    line {line}: ", subsequent_indent=" " * 6
            )
    return out


def run(args: argparse.Namespace) -> int:
    rules = _select(args)
    if not rules:
        raise UsageError("no rule matches the given --level and --section")
    lines, why = _lines(args.spec, rules)
    if why:
        sys.stderr.write(f"acp-model rules: {why}\n")
    text = _spec_text(args.spec) if args.ids and lines is not None else None
    if args.ids and not args.json:
        sys.stdout.write("\n\n".join("\n".join(_full(r, text, args.spec)) for r in rules) + "\n")
        return EXIT_OK
    if args.json:
        entries = []
        decided = decidability_of()
        for rule in rules:
            entry = rule.to_json()
            if rule.id in decided:
                entry["decidable"], entry["decidable_bound"] = decided[rule.id]
            entry["implemented_by"] = list(implemented_by(rule.id))
            entry["spec_lines"] = None if lines is None else list(lines[rule.id])
            if text is not None:  # a rule asked for by ID: its sentences too
                entry["spec_sentences"] = [{"line": n, "text": t} for n, t in rule_sentences(rule, text)]
            entries.append(entry)
        sys.stdout.write(dumps(entries))
    else:
        sys.stdout.write(_table(rules, lines))
    return EXIT_OK
