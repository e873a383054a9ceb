"""The readings matrix as a picture: one bar a row (reading = alternative), its length the states
the exhaustive search explored under that choice, red where the peers broke a rule (the readings
contradict), green where they broke none.

Theory of operation
-------------------
``matrix_png(rows)`` takes ``(label, states, rules broken)`` triples in the matrix's order and
draws a horizontal bar chart with matplotlib under the committed diagrams' settings (``RC``, no
metadata), so the same rows give the same bytes.

Must not know: how the matrix was explored, files.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from matplotlib import rc_context
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from diagrams.coverage import FIRED, NEVER
from diagrams.render_mpl import PNG_META, RC

Bar = tuple[str, int, Sequence[str]]
"""(row label, states explored, rules broken)."""


def matrix_png(rows: Sequence[Bar]) -> bytes:
    with rc_context(RC):
        fig = Figure(figsize=(9.0, 0.9 + 0.32 * max(1, len(rows))))
        ax = fig.add_subplot()
        labels = [label for label, _, _ in rows][::-1]
        states = [n for _, n, _ in rows][::-1]
        colours = [NEVER if broken else FIRED for _, _, broken in rows][::-1]
        ax.barh(range(len(rows)), states, color=colours, height=0.6)
        for y, (n, (_, _, broken)) in enumerate(zip(states, list(rows)[::-1], strict=True)):
            note = f"{n:,}" + (f"  breaks {', '.join(broken)}" if broken else "")
            ax.text(n, y, " " + note, va="center", fontsize=8)
        ax.set_yticks(range(len(rows)), labels, fontsize=8)
        ax.set_xlabel("states explored (exhaustive, default slices)")
        ax.set_xlim(0, max(states or [1]) * 1.35)
        handles = [Patch(color=FIRED, label="no rule broken"), Patch(color=NEVER, label="rules contradict")]
        ax.legend(handles=handles, loc="lower right", fontsize=8)
        fig.tight_layout()
        out = io.BytesIO()
        fig.savefig(out, format="png", dpi=100, metadata=PNG_META)
    return out.getvalue()
