"""The printed forms of the rule catalogue (``acp-model rules``): the table grouped by section
with its markers explained, one rule in full (every field, its decidability, the readings its
verdict depends on, where it is implemented, and its spec sentences quoted with their line
numbers), and a rule's JSON entry.

Owns also the committed wire-decidability figures of every rule that has a check: the location
of ``decidability.json`` beside this module (written by ``acp-model decidability --json >
properties/decidability.json`` at the default bound; a test keeps it current) and reading it
(``decidability_of``: rule ID -> (decidable, bound)). A missing or unreadable file gives no
figures (the rules listing then has none), never an error.

Must not know: how rules are checked or the figures computed (``simulator.analysis.
decidability``), files other than ``decidability.json``, the command line.
"""

from __future__ import annotations

import json
import textwrap
from functools import cache
from pathlib import Path
from typing import Any

from properties.catalogue import Rule
from properties.readings import READINGS
from properties.speclines import rule_sentences
from properties.trace import implemented_by

_PARAPHRASE_WIDTH = 72
DATA = Path(__file__).with_name("decidability.json")


@cache
def decidability_of() -> dict[str, tuple[str, str]]:
    try:
        data = json.loads(DATA.read_text(encoding="utf-8"))
        return {e["rule"]: (e["decidable"], e["bound"]) for e in data["rules"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _where(lines: tuple[int, ...]) -> str:
    return ("spec line " if len(lines) == 1 else "spec lines ") + ", ".join(map(str, lines))


MARKERS = (
    'Markers: * judged at the end of a run (an "eventually" rule: a state that must be left, '
    "an answer that must come); i informal (the spec states it without an uppercase keyword)."
)


def table(rules: tuple[Rule, ...], where: dict[str, tuple[int, ...]] | None) -> str:
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


def _field(text: str, label: str = "") -> list[str]:
    """A field of a rule in full, wrapped under its label."""
    return textwrap.wrap(text, 100, initial_indent=f"  {label}", subsequent_indent="    ")


def full(rule: Rule, spec_text: str | None, spec: str) -> list[str]:
    """``rule`` in full: every field, and the spec sentences that state it (quoted)."""
    flags = [
        *(["judged at the end of a run (eventually)"] if rule.eventually else []),
        *(["informal (no uppercase keyword)"] if rule.informal else []),
    ]
    out = [f"{rule.id}  {rule.level}  binds: {rule.side}  check: {rule.check}"]
    out.append(f"  section: {rule.section} ({rule.code})")
    out += _field(rule.paraphrase, "says: ")
    if rule.reason:
        out += _field(rule.reason, "why not checked: ")
    if flags:
        out.append(f"  {'; '.join(flags)}")
    decided = decidability_of().get(rule.id)
    if decided is not None:
        out += _field(f"decidable from the wire: {decided[0]} (sample: {decided[1]})")
    readings = [r.name for r in READINGS if rule.id in r.rules]
    if readings:
        out.append(f"  its verdict depends on the reading(s): {', '.join(readings)} (acp-model readings)")
    where = implemented_by(rule.id)
    if where:
        out += _field(", ".join(where), "implemented by: ")
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


def rule_json(rule: Rule, lines: dict[str, tuple[int, ...]] | None, text: str | None) -> dict[str, Any]:
    """A rule's JSON entry: its fields, its decidability, where it is implemented, its spec lines
    and, when the spec ``text`` is given, its sentences."""
    entry = rule.to_json()
    decided = decidability_of()
    if rule.id in decided:
        entry["decidable"], entry["decidable_bound"] = decided[rule.id]
    entry["implemented_by"] = list(implemented_by(rule.id))
    entry["spec_lines"] = None if lines is None else list(lines[rule.id])
    if text is not None:  # a rule asked for by ID: its sentences too
        entry["spec_sentences"] = [{"line": n, "text": t} for n, t in rule_sentences(rule, text)]
    return entry
