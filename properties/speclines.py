"""Where each catalogued rule is in the spec text: line numbers for `acp-model rules` and the pages.

Owns: the mapping from a rule to the lines of ``../shared/spec/acp-v2-prompt-lifecycle.txt``
that state it, computed from the catalogue and the text, never stored (read by ``acp-model rules``
and by the HTML pages of ``diagrams.html``):

- a rule with uppercase keywords (``Rule.occurrences``: global indices of the spec's keyword
  tokens, as ``properties.catalogue.keyword_occurrences`` counts them) is on the lines holding
  those tokens, counted the same way;
- an informal rule (no keyword) is on the line of the first sentence of its own section that
  holds the words ``properties.catalogue.INFORMAL_WORDING`` gives for it (every informal rule
  has them; a test holds each to the text), nowhere when the text no longer holds them.

Line numbers are 1-based, as editors show them. ``default_spec`` is where the spec sits
(``properties.shared``: ``$ACP_MODEL_SHARED``, else ``../shared`` next to a checkout, see the
README); ``rule_sentences`` gives one rule's sentences (``acp-model rules RULE-ID`` quotes them).

Must not know: how rules are checked or printed.
"""

from __future__ import annotations

import re

from properties.catalogue import INFORMAL_WORDING, INTRO, Rule, headings, keyword_occurrences
from properties.shared import default_spec

__all__ = ["default_spec", "rule_sentences", "spec_lines", "spec_sentences"]

_SENTENCE_END = re.compile(r"(?<=[.!?:])\s+")


def _sections(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Heading -> (first, last) 0-based line index of its body; INTRO is before the first heading."""
    found = headings("\n".join(lines))
    starts = [(0, INTRO)] + [(i + 1, h) for i, h in found]
    ends = [i for i, _ in found] + [len(lines)]
    return {h: (start, end - 1) for (start, h), end in zip(starts, ends, strict=True)}


def spec_lines(rules: tuple[Rule, ...], spec_text: str) -> dict[str, tuple[int, ...]]:
    """Rule ID -> the 1-based lines of ``spec_text`` that state it (see the module docstring)."""
    return {
        rid: tuple(sorted({line for line, _ in found}))
        for rid, found in spec_sentences(rules, spec_text).items()
    }


def spec_sentences(rules: tuple[Rule, ...], spec_text: str) -> dict[str, tuple[tuple[int, str], ...]]:
    """Rule ID -> (1-based line, sentence) of each place of ``spec_text`` that states it, by line:
    the sentences holding the rule's keyword tokens, or the informal rule's sentence (see the
    module docstring). A line of the text may hold several sentences."""
    lines = spec_text.splitlines()
    occurrence: list[tuple[int, int]] = []  # keyword token -> (line index, its index in the line)
    for i, line in enumerate(lines):  # the catalogue's own count, one line at a time
        occurrence.extend((i, k) for k in range(len(keyword_occurrences(line))))
    sections = _sections(lines)
    out: dict[str, tuple[tuple[int, str], ...]] = {}
    for rule in rules:
        if rule.occurrences:
            found: dict[tuple[int, str], None] = {}
            for n in rule.occurrences:
                if n <= len(occurrence):
                    i, k = occurrence[n - 1]
                    found.setdefault((i + 1, _holding(lines[i], k)), None)
            out[rule.id] = tuple(sorted(found))
            continue
        first, last = sections.get(rule.section, (0, -1))
        named = INFORMAL_WORDING[rule.id][0] if rule.id in INFORMAL_WORDING else None
        at = [
            (i + 1, sentence.strip())
            for i in range(first, last + 1)
            for sentence in _SENTENCE_END.split(lines[i])
            if named is not None and named in sentence
        ]
        out[rule.id] = tuple(at[:1])
    return out


def rule_sentences(rule: Rule, spec_text: str) -> list[tuple[int, str]]:
    """(1-based line, sentence) of each place of ``spec_text`` that states ``rule``."""
    return list(spec_sentences((rule,), spec_text)[rule.id])


def _holding(line: str, k: int) -> str:
    """The sentence of ``line`` that holds its ``k``-th keyword token (0-based)."""
    for sentence in _SENTENCE_END.split(line):
        count = len(keyword_occurrences(sentence))
        if k < count:
            return sentence.strip()
        k -= count
    return line.strip()
