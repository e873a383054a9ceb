"""Where each catalogued rule is in the spec text: line numbers for ``acp-model rules``.

Owns: the mapping from a rule to the lines of ``../shared/spec/acp-v2-prompt-lifecycle.txt``
that state it, computed from the catalogue and the text, never stored:

- a rule with uppercase keywords (``Rule.occurrences``: global indices of the spec's keyword
  tokens, as ``properties.catalogue.keyword_occurrences`` counts them) is on the lines holding
  those tokens, counted the same way;
- an informal rule (no keyword) is on the line of the sentence of its own section most alike
  its paraphrase: the highest Dice coefficient of their words (words of four letters or more,
  compared by their first five letters, so "reports" meets "reported"), which favours a short
  sentence saying just that over a long one that also says it; the earliest on a tie.

``rule_sentences`` gives the sentences themselves (``acp-model rules RULE-ID`` quotes them from
the user's copy of the spec). Line numbers are 1-based, as editors show them. ``default_spec``
is where the spec sits (``cli.shared``: ``$ACP_MODEL_SHARED``, else ``../shared`` next to a
checkout, see the README).

Must not know: how rules are checked or printed.
"""

from __future__ import annotations

import re

from cli.shared import SPEC_NAME, default_spec
from properties.catalogue import INTRO, Rule, headings, keyword_occurrences

__all__ = ["SPEC_NAME", "default_spec", "rule_sentences", "spec_lines"]

_WORD = re.compile(r"[A-Za-z_$/]{4,}")
_SENTENCE_END = re.compile(r"(?<=[.!?:])\s+")


def _stems(text: str) -> set[str]:
    return {w.lower()[:5] for w in _WORD.findall(text)}


def _sections(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Heading -> (first, last) 0-based line index of its body; INTRO is before the first heading."""
    found = headings("\n".join(lines))
    starts = [(0, INTRO)] + [(i + 1, h) for i, h in found]
    ends = [i for i, _ in found] + [len(lines)]
    return {h: (start, end - 1) for (start, h), end in zip(starts, ends, strict=True)}


def _best_sentence(
    rule: Rule, lines: list[str], sections: dict[str, tuple[int, int]]
) -> tuple[int, str] | None:
    """(1-based line, sentence) of the sentence of the rule's section most alike its paraphrase."""
    first, last = sections.get(rule.section, (0, -1))
    want = _stems(rule.paraphrase)
    best: tuple[float, int, str] | None = None  # (score, line, sentence)
    for i in range(first, last + 1):
        for sentence in _SENTENCE_END.split(lines[i]):
            words = _stems(sentence)
            score = 2 * len(want & words) / (len(want) + len(words)) if words else 0.0
            if score and (best is None or score > best[0]):
                best = (score, i + 1, sentence)
    return (best[1], best[2]) if best is not None else None


def rule_sentences(rule: Rule, spec_text: str) -> list[tuple[int, str]]:
    """The sentences of ``spec_text`` that state ``rule``, with their 1-based lines, in order:
    each sentence holding one of its keyword tokens (``Rule.occurrences``), or, for an informal
    rule, the sentence ``spec_lines`` places it on."""
    lines = spec_text.splitlines()
    if not rule.occurrences:
        found = _best_sentence(rule, lines, _sections(lines))
        return [found] if found is not None else []
    wanted = set(rule.occurrences)
    out: list[tuple[int, str]] = []
    seen = 0
    for i, line in enumerate(lines):
        for sentence in _SENTENCE_END.split(line):
            n = len(keyword_occurrences(sentence))
            if wanted & set(range(seen + 1, seen + n + 1)):
                out.append((i + 1, sentence.strip()))
            seen += n
    return out


def spec_lines(rules: tuple[Rule, ...], spec_text: str) -> dict[str, tuple[int, ...]]:
    """Rule ID -> the 1-based lines of ``spec_text`` that state it (see the module docstring)."""
    lines = spec_text.splitlines()
    occurrence_line: list[int] = []
    for i, line in enumerate(lines):  # the catalogue's own count, one line at a time
        occurrence_line.extend([i + 1] * len(keyword_occurrences(line)))
    sections = _sections(lines)
    out: dict[str, tuple[int, ...]] = {}
    for rule in rules:
        if rule.occurrences:
            out[rule.id] = tuple(
                sorted({occurrence_line[n - 1] for n in rule.occurrences if n <= len(occurrence_line)})
            )
            continue
        best = _best_sentence(rule, lines, sections)
        out[rule.id] = (best[0],) if best is not None else ()
    return out
