"""The text form of ``acp-model decidability``: a line per rule (its verdict, the fraction of
breaking runs flagged, the note), the verdicts under other reading alternatives, the witness
files, and the closing counts.

Must not know: how verdicts are reached (``simulator.analysis.decidability``), where files go.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from simulator.analysis import decidability as dec


def render_text(
    verdicts: Sequence[dec.Verdict],
    entries: Sequence[dict[str, Any]],
    bound: dec.Bound,
    complete: bool,
    alts: Sequence[tuple[str, str]] | None,
) -> str:
    """``entries``: each verdict's JSON (``Verdict.to_json``), in the same order."""
    out: list[str] = []
    for v, e in zip(verdicts, entries, strict=True):
        line = f"{e['rule']:<11} {e['decidable']}"
        if e["fraction"] is not None:
            line += f" ({round(100 * e['fraction'])} % flagged of {e['breaking']})"
        if v.flagged_complete > v.flagged and v.breaking:
            line += f" ({round(100 * v.flagged_complete / v.breaking)} % with check --complete)"
        out.append(line + (f": {e['note']}" if e["note"] else "") + "\n")
        for r in e.get("by_reading", []):
            frac = "" if r["fraction"] is None else f" ({round(100 * r['fraction'])} % flagged)"
            out.append(f"{'':12}under {r['reading']}={r['alternative']}: {r['decidable']}{frac}\n")
        w = e["witness"]
        if w is not None and w.get("breaking"):
            out.append(f"{'':12}witness: {', '.join(filter(None, (w['breaking'], w.get('conforming'))))}\n")
    counts = ", ".join(f"{k} {n}" for k, n in dec.counts(verdicts).items())
    out.append(
        f"\n{len(entries)} rules: {counts}. Bound: {bound.text()}."
        + ("" if complete else " Incomplete: the time budget ended it.")
        + "\n"
    )
    if alts is not None:
        differ = sum(1 for e in entries if e.get("by_reading"))
        out.append(
            f"Under {len(alts)} other reading alternative(s): {differ} rule(s) have a verdict that differs.\n"
        )
    return "".join(out)
