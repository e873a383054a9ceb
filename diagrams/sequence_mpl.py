"""matplotlib pictures (PNG) of a sequence diagram: the same steps the Mermaid text draws.

Theory of operation
-------------------
``sequence_png(items, title, notes)`` draws ``diagrams.sequence.steps``: two lifelines (Client
left, Agent right), one numbered arrow per message (requests solid, notifications solid with an
open head, responses dashed), grey bands for foreground changes, and hidden steps (breach
markers, moves that put nothing on the wire) as coloured boxes beside their lane: the run named
``breaking`` in red, any other run in green. Headless (a bare ``Figure`` on the Agg canvas) and
byte-for-byte reproducible (no software name in the PNG metadata, fixed sizes and dpi).

Must not know: the rules, the simulator, or files.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from matplotlib import rc_context
from matplotlib.patches import FancyArrowPatch

from diagrams.render_mpl import AGENT, CLIENT, FINAL_EDGE, FINAL_FILL, NODE_EDGE, NODE_FILL, RC, canvas, png
from diagrams.sequence import Notes, steps
from properties.outputs import clip

ROW = 0.34
"""Inches per step."""
WIDTH = 9.0
LANE = {"C": 2.6, "A": 6.4}
HIDDEN_X = {"C": 1.25, "A": 7.75}
RUN_COLOURS = {"breaking": ("#fde2e1", "#c00000")}
OTHER_RUN = (FINAL_FILL, FINAL_EDGE)


def sequence_png(items: Iterable[tuple[str, Any]], title: str, notes: Notes | None = None) -> bytes:
    drawn = steps(items, notes)
    height = 1.2 + ROW * (len(drawn) + 1)
    with rc_context(RC):
        fig, ax = canvas(WIDTH, height, (0, WIDTH), (0, height))
        text = partial(ax.text, ha="center", va="center")
        top = height - 0.55
        text(WIDTH / 2, height - 0.25, title, fontsize=11, weight="bold")
        for lane, name in (("C", "Client"), ("A", "Agent")):
            x = LANE[lane]
            text(
                x,
                top,
                name,
                fontsize=10,
                bbox={"boxstyle": "round,pad=0.3", "fc": NODE_FILL, "ec": NODE_EDGE},
            )
            ax.plot([x, x], [top - 0.2, 0.2], color="#999999", lw=0.8, zorder=1)
        number = 0
        for i, st in enumerate(drawn):
            y = top - ROW * (i + 1)
            if st.kind == "note":
                text(
                    (LANE["C"] + LANE["A"]) / 2,
                    y,
                    st.label,
                    fontsize=7.5,
                    color="#444444",
                    bbox={"boxstyle": "round,pad=0.2", "fc": "#eeeeee", "ec": "none"},
                )
                continue
            if st.kind == "hidden":
                fill, edge = RUN_COLOURS.get(st.style, OTHER_RUN)
                text(
                    HIDDEN_X[st.src],
                    y,
                    f"{st.style}: {st.label}",
                    fontsize=7,
                    color=edge,
                    wrap=True,
                    bbox={"boxstyle": "round,pad=0.25", "fc": fill, "ec": edge, "lw": 0.8},
                    zorder=4,
                )
                continue
            number += 1
            x0, x1 = LANE[st.src], LANE[st.dst]
            ax.add_patch(
                FancyArrowPatch(
                    (x0, y - 0.06),
                    (x1, y - 0.06),
                    arrowstyle="-|>" if st.kind == "request" else "->",
                    mutation_scale=10,
                    lw=1.0,
                    ls="--" if st.kind == "response" else "-",
                    color=AGENT if st.src == "A" else CLIENT,
                    zorder=2,
                )
            )
            label = clip(st.label, 58)
            ax.text(
                (x0 + x1) / 2, y + 0.06, f"{number}. {label}", ha="center", va="bottom", fontsize=7, zorder=3
            )
        return png(fig)
