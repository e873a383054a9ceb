"""Coverage drawn on a machine diagram: which rows of the table a run fired, and which never.

Theory of operation
-------------------
``coverage_png(d, fired)`` is the machine's matplotlib picture (``diagrams.render_mpl``, the same
layout as the committed machine diagrams) with every arrow coloured by coverage instead of by
actor: green when every row it carries fired, red when none did, amber when only some did (an
arrow carries the rows between one pair of states fired by one peer). ``coverage_mermaid(d,
fired)`` is a Mermaid ``flowchart`` of the same table (state diagrams cannot colour their
arrows): one link per row, fired links green, never-fired links red and dashed.

``fired`` holds ``(source, trigger, dest)`` rows.

Must not know: how the rows were counted, or files.
"""

from __future__ import annotations

from collections.abc import Collection

from matplotlib import rc_context
from matplotlib.lines import Line2D

from diagrams.ir import Diagram
from diagrams.layout import Bundle
from diagrams.render_mermaid import escape, state_id
from diagrams.render_mpl import RC, figure_of, plan_of, png

FIRED = "#2e7d32"
NEVER = "#c00000"
SOME = "#d68910"

Row = tuple[str, str, str]


def coverage_png(d: Diagram, fired: Collection[Row]) -> bytes:
    def colour(b: Bundle) -> str:
        hit = [(e.source, e.trigger, e.dest) in fired for e in b.edges]
        return FIRED if all(hit) else (NEVER if not any(hit) else SOME)

    legend = [
        Line2D([], [], color=FIRED, lw=2, label="every row fired"),
        Line2D([], [], color=SOME, lw=2, label="some rows fired"),
        Line2D([], [], color=NEVER, lw=2, label="never fired"),
    ]
    with rc_context(RC):
        return png(figure_of(plan_of(d), colour, legend))


def coverage_mermaid(d: Diagram, fired: Collection[Row]) -> str:
    out = [
        "flowchart TB",
        f"    %% {d.name}: rows fired (green) and never fired (red, dashed)",
    ]
    for n in d.nodes:
        out.append(f'    {state_id(n.id)}(["{escape(n.id)}"])')
    hit: list[int] = []
    miss: list[int] = []
    for i, e in enumerate(d.edges):
        out.append(f'    {state_id(e.source)} -->|"{escape(e.label)}"| {state_id(e.dest)}')
        (hit if (e.source, e.trigger, e.dest) in fired else miss).append(i)
    if hit:
        out.append(f"    linkStyle {','.join(map(str, hit))} stroke:{FIRED},stroke-width:2px")
    if miss:
        out.append(
            f"    linkStyle {','.join(map(str, miss))} stroke:{NEVER},stroke-width:2px,stroke-dasharray:5 5"
        )
    return "\n".join(out) + "\n"
