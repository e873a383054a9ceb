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
        frac = (
            "" if e["fraction"] is None else f" ({round(100 * e['fraction'])} % flagged of {e['breaking']})"
        )
        line = f"{e['rule']:<11} {e['decidable']}{frac}"
        if v.flagged_complete > v.flagged and v.breaking:
            line += f" ({round(100 * v.flagged_complete / v.breaking)} % with check --complete)"
        if e["note"]:
            line += f": {e['note']}"
        out.append(line + "\n")
        for r in e.get("by_reading", []):
            frac = "" if r["fraction"] is None else f" ({round(100 * r['fraction'])} % flagged)"
            out.append(f"{'':12}under {r['reading']}={r['alternative']}: {r['decidable']}{frac}\n")
        w = e["witness"]
        if w is not None and w.get("breaking"):
            out.append(
                f"{'':12}witness: {w['breaking']}"
                + (f", {w['conforming']}" if w.get("conforming") else "")
                + "\n"
            )
    counts = dec.counts(list(verdicts))
    out.append(
        f"\n{len(entries)} rules: "
        + ", ".join(f"{k} {n}" for k, n in counts.items())
        + f". Bound: {bound.text()}.{'' if complete else ' Incomplete: the time budget ended it.'}\n"
    )
    if alts is not None:
        differ = sum(1 for e in entries if e.get("by_reading"))
        out.append(
            f"Under {len(alts)} other reading alternative(s): {differ} rule(s) have a verdict that differs.\n"
        )
    return "".join(out)
