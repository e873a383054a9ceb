"""The text forms of ``acp-model mutants``: the seeded bugs as a table (``--list``) and their
verdicts, each row fitting ``WIDTH`` columns with what the bug does indented below it.

Must not know: how a seeded bug is run or judged (``simulator.analysis.mutants``).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import Any

HEAD = ("mutant", "side", "breaks", "verdict")
"""The header; under it, indented, what the seeded bug does."""
WIDTH = 100
"""Columns the text fits in."""
_INDENT = "    "


def _wrap(text: str, indent: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent)


def _rows(rows: list[tuple[str, str, str, str, str]], verdicts: bool = True) -> list[str]:
    """(name, side, rule, verdict, what it does) as lines of at most ``WIDTH`` columns: the
    first four in columns (the verdict wrapped in its own), what the bug does indented below;
    without ``verdicts`` (nothing was run), no verdict column."""
    widths = [max(len(r[i]) for r in [(*HEAD, ""), *rows]) for i in range(3)]
    at = sum(widths) + 2 * len(widths)
    head = "  ".join(f"{c:<{w}}" for c, w in zip(HEAD, widths, strict=False))
    lines = [(head + "  " + HEAD[-1]) if verdicts else head.rstrip(), f"{_INDENT}what the seeded bug does"]
    for row in rows:
        cells = "  ".join(f"{c:<{w}}" for c, w in zip(row, widths, strict=False)) + "  "
        verdict = textwrap.wrap(row[3], max(20, WIDTH - at)) or [""]
        lines.append((cells + verdict[0]).rstrip())
        lines += [" " * at + more for more in verdict[1:]]
        lines += _wrap(row[4], _INDENT)
    return lines


def list_json(chosen: Sequence[Any]) -> list[dict[str, Any]]:
    """``--list --json``: each seeded bug, not run."""
    return [
        {
            "name": m.name,
            "side": m.side,
            "intended_rule": m.intended_rule,
            "description": m.description,
            **({"off_wire": m.off_wire} if m.off_wire else {}),
        }
        for m in chosen
    ]


def list_text(chosen: Sequence[Any]) -> str:
    """``--list``: the seeded bugs as a table, not run."""
    lines = _rows([(m.name, m.side, m.intended_rule, "", m.description) for m in chosen], verdicts=False)
    lines.append("")
    lines += _wrap(
        f"{len(chosen)} seeded bugs; `acp-model mutants` runs them, `--fault NAME` of explore, "
        "simulate and agent switches one on.",
        "",
    )
    return "\n".join(lines) + "\n"


def verdicts_text(verdicts: Sequence[Any], baseline: Any) -> str:
    """Each seeded bug's verdict (caught by its intended rule, by others too, the shortest
    breaking run) and the closing count with the unmodified simulator's runs."""
    rows: list[tuple[str, str, str, str, str]] = []
    off_wire: list[str] = [""]
    for v in verdicts:
        m = v.mutant
        also = sorted(set(v.caught_by) - {m.intended_rule})
        verdict = ("caught" if v.caught else "MISSED") + (f" (also {', '.join(also)})" if also else "")
        if v.shortest:
            verdict += f", shortest {len(v.shortest)} lines ({v.shortest_source})"
        rows.append((m.name, m.side, m.intended_rule, verdict, m.description))
        off_wire += (
            _wrap(f"{m.name}: not detectable by `acp-model drive`: {m.off_wire}", "") if m.off_wire else []
        )
    lines = _rows(rows) + off_wire
    lines += _wrap(
        f"{sum(v.caught for v in verdicts)}/{len(verdicts)} mutants caught by their intended rule; "
        f"unmodified simulator: {baseline.runs} runs, {baseline.findings} findings"
        + (f" ({', '.join(sorted(baseline.caught_by))})" if baseline.findings else ""),
        "",
    )
    return "\n".join(lines) + "\n"
