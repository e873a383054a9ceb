"""matplotlib pictures (PNG and SVG) of one machine, drawn from a ``diagrams.layout.Plan``.

Theory of operation
-------------------
Headless: a bare ``matplotlib.figure.Figure`` on the Agg canvas, never pyplot, so nothing global
is touched and no display is needed. The axes fill the figure and one data unit is one inch,
so the plan's inch geometry (and matplotlib's ``arc3`` curves, which bend in display space)
come out exactly as planned. Text is measured with the same renderer and dpi before planning.

What the picture shows: states as rounded boxes (initial: thick border and an arrow from a black
dot; final: green with a double border); one arrow per bundle of rows, coloured by who fires it
(agent blue, client orange) and labelled with each row's ``trigger [guard]``; self-loops as loops
beside their state; a title line and a legend above the graph.

Byte-for-byte reproducible output: fixed ``svg.hashsalt``, no date or software version in the
metadata, text as paths in SVG, fixed dpi and sizes.

Must not know: where files go, or how machines execute.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Patch
from matplotlib.path import Path as MplPath

from diagrams.ir import Diagram
from diagrams.layout import LABEL_FONT, LABEL_PAD, MARKER_LEN, NODE_FONT, Bundle, Plan, loop_geometry, plan

DPI = 100
AGENT = "#2f5597"
CLIENT = "#c55a11"
NODE_FILL = "#f4f6fa"
NODE_EDGE = "#333333"
FINAL_FILL = "#e2f0d9"
FINAL_EDGE = "#385723"
MARGIN = 0.3
HEADER = 1.0
MIN_WIDTH = 10.0

RC: Any = {
    "svg.hashsalt": "acp-model-diagrams",
    "svg.fonttype": "path",
    "font.family": "DejaVu Sans",
    "path.simplify": False,
}
PNG_META: dict[str, str | None] = {"Software": None}
SVG_META: dict[str, str | None] = {"Date": None, "Creator": "acp-model diagrams"}


@lru_cache(maxsize=1024)
def measure(text: str, size: float) -> tuple[float, float]:
    """Width and height of ``text`` at ``size`` points, in inches (Agg renderer at ``DPI``)."""
    with rc_context(RC):
        fig = Figure(figsize=(4, 4), dpi=DPI)
        canvas = FigureCanvasAgg(fig)
        t = fig.text(0, 0, text, fontsize=size, linespacing=1.25)
        bb = t.get_window_extent(canvas.get_renderer())  # type: ignore[no-untyped-call]
    return bb.width / DPI, bb.height / DPI


def plan_of(d: Diagram) -> Plan:
    """The geometry handed to matplotlib (tests read its nodes and bundles)."""
    return plan(d, measure)


def _color(actor: str) -> str:
    return CLIENT if actor == "client" else AGENT


def figure_of(
    p: Plan, colour_of: Callable[[Bundle], str] | None = None, legend: list[Any] | None = None
) -> Figure:
    """The picture of a plan; ``colour_of`` colours each bundle of rows (default: by who fires
    it) and ``legend`` replaces the legend's entries (a coverage picture brings both)."""
    b = p.bounds()
    width = max(b.x1 - b.x0 + 2 * MARGIN, MIN_WIDTH)
    height = b.y1 - b.y0 + 2 * MARGIN + HEADER
    cx = (b.x0 + b.x1) / 2
    fig, ax = canvas(width, height, (cx - width / 2, cx + width / 2), (b.y0 - MARGIN, b.y1 + MARGIN + HEADER))

    patches: dict[str, FancyBboxPatch] = {}
    for n in p.nodes.values():
        fill, edge = (FINAL_FILL, FINAL_EDGE) if n.final else (NODE_FILL, NODE_EDGE)
        borders = [(0.0, 0.1, fill, 2.6 if n.initial else 1.3)] + [(0.045, 0.07, "none", 1.0)] * n.final
        for zorder, (inset, rounding, fc, lw) in enumerate(borders, 3):  # a final state's: double
            patch = FancyBboxPatch(
                (n.x - n.w / 2 + inset, n.y - n.h / 2 + inset),
                n.w - 2 * inset,
                n.h - 2 * inset,
                boxstyle=f"round,pad=0,rounding_size={rounding}",
                fc=fc,
                ec=edge,
                lw=lw,
                zorder=zorder,
            )
            ax.add_patch(patch)
            patches.setdefault(n.id, patch)
        ax.text(n.x, n.y, n.id, ha="center", va="center", fontsize=NODE_FONT, zorder=5, color="#111111")
        if n.initial:
            top = n.y + n.h / 2
            ax.plot([n.x], [top + MARKER_LEN], marker="o", ms=9, color="black", zorder=5)
            ax.add_patch(
                FancyArrowPatch(
                    (n.x, top + MARKER_LEN),
                    (n.x, top),
                    arrowstyle="-|>",
                    mutation_scale=14,
                    color="black",
                    lw=1.5,
                    shrinkA=4,
                    shrinkB=1,
                    zorder=4,
                )
            )

    for pb in p.bundles:
        bnd = pb.bundle
        color = colour_of(bnd) if colour_of is not None else _color(bnd.actor)
        style: dict[str, Any] = {"arrowstyle": "-|>", "color": color, "lw": 1.3, "zorder": 2}
        if bnd.self_loop:
            ctrl, _ = loop_geometry(p.nodes[bnd.source], pb.side)
            path = MplPath(ctrl, [MplPath.MOVETO, MplPath.CURVE4, MplPath.CURVE4, MplPath.CURVE4])
            arrow = FancyArrowPatch(path=path, mutation_scale=12, **style)
        else:
            a, c = p.nodes[bnd.source], p.nodes[bnd.dest]
            arrow = FancyArrowPatch(
                (a.x, a.y),
                (c.x, c.y),
                connectionstyle=f"arc3,rad={pb.rad:.4f}",
                mutation_scale=15,
                patchA=patches[a.id],
                patchB=patches[c.id],
                shrinkA=1,
                shrinkB=1,
                **style,
            )
        ax.add_patch(arrow)
        lx, ly = pb.label.center
        ax.text(
            lx,
            ly,
            bnd.text,
            ha="center",
            va="center",
            fontsize=LABEL_FONT,
            color=color,
            zorder=6,
            linespacing=1.25,
            multialignment="center",
            bbox={
                "boxstyle": f"round,pad={LABEL_PAD * 72 / LABEL_FONT * 0.8:.3f}",
                "fc": "white",
                "ec": color,
                "lw": 0.6,
            },
        )

    d = p.diagram
    top = b.y1 + MARGIN + HEADER
    guards = "  [g] guard, [!g] its negation" if any(e.guard for e in d.edges) else ""
    handles = legend or [
        Line2D([], [], color=AGENT, lw=2, label="agent fires"),
        Line2D([], [], color=CLIENT, lw=2, label="client fires"),
        Line2D([], [], color="black", marker="o", lw=0, ms=7, label="initial state (thick border)"),
        Patch(fc=FINAL_FILL, ec=FINAL_EDGE, lw=2, label="final state (double border)"),
    ]
    subtitle = f"one per {d.per}: {len(d.nodes)} states, {len(d.edges)} rows{guards}"
    legend_y = (top - 0.84 - (b.y0 - MARGIN)) / height
    heading(fig, (cx, top), (f"{d.name}: {d.title}", subtitle), handles, legend_y, (14, 4, 9.5, 1.8, 1.6))
    return fig


def canvas(
    width: float, height: float, xlim: tuple[float, float], ylim: tuple[float, float]
) -> tuple[Figure, Any]:
    """A white figure of ``width`` x ``height`` inches on the Agg canvas and its one axes, which
    fill it (no axis drawn) and show ``xlim`` x ``ylim``."""
    fig = Figure(figsize=(width, height), dpi=DPI, facecolor="white")
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.axis("off")
    return fig, ax


def heading(
    fig: Figure,
    at: tuple[float, float],
    lines: tuple[str, str],
    handles: list[Any],
    legend_y: float,
    sizes: tuple[float, int, float, float, float],
) -> None:
    """A picture's title and the line under it, centred below ``at`` (the top middle, in data
    units), and its legend centred at ``legend_y`` (a fraction of the height); ``sizes``: the
    title's font size, then the legend's columns, font size, handle length and column spacing."""
    (cx, top), (title, subtitle), (size, ncol, fontsize, handlelength, columnspacing) = at, lines, sizes
    ax = fig.axes[0]
    ax.text(cx, top - 0.28, title, ha="center", va="center", fontsize=size, weight="bold")
    ax.text(cx, top - 0.55, subtitle, ha="center", va="center", fontsize=9.5, color="#444444")
    fig.legend(
        handles=handles,
        loc="center",
        bbox_to_anchor=(0.5, legend_y),
        ncol=ncol,
        frameon=False,
        fontsize=fontsize,
        handlelength=handlelength,
        columnspacing=columnspacing,
    )


def png(fig: Figure) -> bytes:
    """The PNG bytes of a figure (no software name in the metadata); call under ``RC``."""
    out = io.BytesIO()
    fig.savefig(out, format="png", dpi=DPI, metadata=PNG_META)
    return out.getvalue()


def render(d: Diagram) -> tuple[bytes, bytes]:
    """PNG and SVG bytes for one machine."""
    with rc_context(RC):
        fig = figure_of(plan_of(d))
        picture, svg = png(fig), io.BytesIO()
        fig.savefig(svg, format="svg", metadata=SVG_META)
    return picture, svg.getvalue()


FG_COLORS = {"idle": "#70ad47", "running": "#2f5597", "requires_action": "#c00000"}


def composed_png(g: Any, title: str) -> bytes:
    """A dot picture of a composed state graph: one column per distance from the start state,
    dots coloured by foreground state, quiescent states ringed, moves as thin lines."""
    depth: dict[str, int] = dict(g.nodes(data="depth"))
    columns: dict[int, list[str]] = {}
    for n in sorted(g.nodes, key=lambda n: (depth[n], n)):
        columns.setdefault(depth[n], []).append(n)
    tallest = max(len(c) for c in columns.values())
    step_y, step_x = 0.11, 1.45
    pos = {
        n: (k * step_x, (i - (len(col) - 1) / 2) * step_y)
        for k, col in columns.items()
        for i, n in enumerate(col)
    }
    width = max(MIN_WIDTH, (len(columns) - 1) * step_x + 2 * MARGIN + 1.0)
    height = tallest * step_y + 2 * MARGIN + HEADER + 0.3
    cx = (len(columns) - 1) * step_x / 2
    bottom = -(tallest - 1) / 2 * step_y - MARGIN - 0.3
    with rc_context(RC):
        fig, ax = canvas(width, height, (cx - width / 2, cx + width / 2), (bottom, bottom + height))
        for actor, color in (("agent", AGENT), ("client", CLIENT)):
            segs = [(pos[u], pos[v]) for u, v, a in sorted(g.edges(data="actor")) if a == actor and u != v]
            ax.add_collection(LineCollection(segs, colors=color, linewidths=0.35, alpha=0.35, zorder=1))
        for state, color in FG_COLORS.items():
            pts = [pos[n] for n in sorted(g.nodes) if g.nodes[n]["foreground"] == state]
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=14, color=color, zorder=3, linewidths=0)
        quiet = [pos[n] for n in sorted(g.nodes) if g.nodes[n]["quiescent"]]
        ax.scatter(
            [p[0] for p in quiet],
            [p[1] for p in quiet],
            s=60,
            facecolors="none",
            edgecolors="black",
            linewidths=1.0,
            zorder=4,
        )
        for k in sorted(columns):
            ax.text(
                k * step_x,
                bottom + 0.15,
                f"depth {k}: {len(columns[k])}",
                ha="center",
                fontsize=8.5,
                color="#444444",
            )
        handles = [
            Line2D([], [], color=c, marker="o", lw=0, ms=6, label=f"foreground {s}")
            for s, c in FG_COLORS.items()
        ] + [
            Line2D([], [], color="black", marker="o", mfc="none", lw=0, ms=8, label="quiescent"),
            Line2D([], [], color=AGENT, lw=1.5, label="agent move"),
            Line2D([], [], color=CLIENT, lw=1.5, label="client move"),
        ]
        moves = f"{g.number_of_nodes()} states, {g.number_of_edges()} moves"
        lines = (title, f"{moves}; columns: distance from the start state")
        heading(fig, (cx, bottom + height), lines, handles, (height - 0.84) / height, (13, 6, 9, 1.5, 1.2))
        return png(fig)
