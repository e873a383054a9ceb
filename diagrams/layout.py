"""Where things go in a machine picture: layers, node positions, edge curves and label spots.

Theory of operation
-------------------
All geometry is in inches, so text measured once at the output dpi can be placed exactly:

1. **Bundles.** Rows with the same (source, target, actor) become one drawn arrow whose label
   lists each row on its own line (``trigger [guard]``); a state's self-loops become one loop per
   actor. Each bundle keeps its row edges, so nothing of the IR is lost.
2. **Layers**, top to bottom. A depth-first walk from the initial state (successors in table
   order) marks back edges; every state then sits one layer below its deepest predecessor along
   the remaining acyclic edges (longest-path layering). Final states without exits go to the
   bottom layer. Departure from plain BFS depth (the usual ``multipartite_layout`` recipe): BFS
   puts most states of the dense machines into one layer and draws their edges inside it;
   longest-path layers keep forward edges pointing down.
   A machine listed in ``LAYOUT_HINTS`` (foreground, prompt, tool_call, entity, session,
   elicitation: the dense ones, whose automatic layers read badly) gets its rows of states from
   the hint instead; a hint is used only while it names exactly the machine's states.
3. **Order in a layer**: spec order (the dense machines, where crossings would matter, have
   hints). Each layer is centred with a fixed column width (the widest state plus room for a
   label), the same multipartite arrangement ``nx.multipartite_layout`` gives, computed directly
   so spacing is in inches and exactly reproducible.
4. **Curves.** Bundles between the same two states get distinct ``arc3`` bends (a reverse pair
   bends to opposite sides). If a curve would pass through another state, its whole pair of
   bundles bends further (smallest extra bend that clears every other state).
5. **Self-loops and labels.** Each self-loop's side (right, left, bottom, top) is picked
   together with its label spot, loops first since they have few good spots. Then the other
   labels, short edges first: each tries spots along its curve (middle first) and beside it,
   and takes the first that overlaps no state, no placed label and no marker; among those it
   prefers spots that hide no other curve. ``Plan.overlaps()`` reports
   whatever could not be separated (a test keeps it empty for every machine).

Must not know: matplotlib artists (only text measurement is passed in), or how machines run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations, pairwise

import networkx as nx
import numpy as np
from matplotlib.bezier import BezierSegment
from numpy.typing import ArrayLike

from diagrams.ir import Diagram, Edge
from model.core import Actor

Measure = Callable[[str, float], tuple[float, float]]
"""(text, fontsize in points) -> (width, height) in inches."""

NODE_FONT = 11.0
LABEL_FONT = 9.0
NODE_PAD_X = 0.22
NODE_H = 0.42
LABEL_PAD = 0.05
COL_GAP = 1.35
ROW_GAP = 1.6
LOOP_OUT = 0.42
MARKER_LEN = 0.42
CLEAR = 0.10


@dataclass(frozen=True, slots=True)
class Box:
    x0: float
    y0: float
    x1: float
    y1: float

    @staticmethod
    def around(cx: float, cy: float, w: float, h: float) -> Box:
        return Box(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)

    def grow(self, m: float) -> Box:
        return Box(self.x0 - m, self.y0 - m, self.x1 + m, self.y1 + m)

    def overlap(self, o: Box) -> float:
        w = min(self.x1, o.x1) - max(self.x0, o.x0)
        h = min(self.y1, o.y1) - max(self.y0, o.y0)
        return w * h if w > 0 and h > 0 else 0.0

    def contains(self, p: tuple[float, float]) -> bool:
        return self.x0 <= p[0] <= self.x1 and self.y0 <= p[1] <= self.y1

    @property
    def center(self) -> tuple[float, float]:
        return ((self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2)


@dataclass(frozen=True, slots=True)
class Bundle:
    source: str
    dest: str
    actor: Actor
    edges: tuple[Edge, ...]

    @property
    def text(self) -> str:
        return "\n".join(e.label for e in self.edges)

    @property
    def self_loop(self) -> bool:
        return self.source == self.dest


@dataclass(slots=True)
class PlacedNode:
    id: str
    x: float
    y: float
    w: float
    h: float
    initial: bool
    final: bool

    @property
    def box(self) -> Box:
        return Box.around(self.x, self.y, self.w, self.h)


@dataclass(slots=True)
class PlacedBundle:
    bundle: Bundle
    rad: float = 0.0
    """arc3 bend for a curve between two states."""
    side: str = ""
    """For a self-loop: the side of the state it leaves from ("right", "left", "top", "bottom")."""
    points: list[tuple[float, float]] = field(default_factory=list)
    """Sample points along the drawn curve (for label placement and bounds)."""
    label: Box = Box(0, 0, 0, 0)


@dataclass(slots=True)
class Plan:
    diagram: Diagram
    nodes: dict[str, PlacedNode]
    bundles: list[PlacedBundle]
    markers: list[Box]
    """Areas labels must avoid besides states (the initial-state marker)."""

    def edges(self) -> list[Edge]:
        """Every IR edge drawn, in table order (a bundle holds one or more)."""
        return sorted((e for b in self.bundles for e in b.bundle.edges), key=lambda e: e.index)

    def bounds(self) -> Box:
        boxes = [n.box for n in self.nodes.values()] + [b.label for b in self.bundles] + self.markers
        xs = [v for b in boxes for v in (b.x0, b.x1)] + [p[0] for b in self.bundles for p in b.points]
        ys = [v for b in boxes for v in (b.y0, b.y1)] + [p[1] for b in self.bundles for p in b.points]
        return Box(min(xs), min(ys), max(xs), max(ys))

    def overlaps(self) -> list[str]:
        """Pairs of labels, states and markers that overlap (should be empty)."""
        named: list[tuple[str, Box]] = [(f"state {n.id}", n.box) for n in self.nodes.values()]
        named += [(f"marker {i}", m) for i, m in enumerate(self.markers)]
        named += [
            (f"label {b.bundle.source}->{b.bundle.dest} ({b.bundle.actor})", b.label) for b in self.bundles
        ]
        return [f"{na} overlaps {nb}" for (na, a), (nb, b) in combinations(named, 2) if a.overlap(b) > 1e-9]


# -- bundles and layers -------------------------------------------------------------------------


def bundles_of(d: Diagram) -> list[Bundle]:
    groups: dict[tuple[str, str, str], list[Edge]] = {}
    for e in d.edges:
        groups.setdefault((e.source, e.dest, e.actor), []).append(e)
    return [Bundle(s, t, a, tuple(es)) for (s, t, a), es in groups.items()]  # type: ignore[arg-type]


def layers_of(d: Diagram) -> list[list[str]]:
    order = [n.id for n in d.nodes]
    g = nx.DiGraph()
    g.add_nodes_from([d.initial, *order])  # the walk starts at the initial state, then spec order
    g.add_edges_from((e.source, e.dest) for e in d.edges if e.source != e.dest)
    sinks = [n.id for n in d.nodes if n.final and not g.out_degree(n.id)]
    pre = {s: i for i, s in enumerate(nx.dfs_preorder_nodes(g))}
    post = {s: i for i, s in enumerate(nx.dfs_postorder_nodes(g))}
    # a back edge leads to a state the walk is still inside (earlier in, later out)
    g.remove_edges_from([(s, t) for s, t in g.edges if pre[t] <= pre[s] and post[t] >= post[s]])
    # Kahn's generations: one below the deepest predecessor (longest-path layering)
    layer = {s: i for i, gen in enumerate(nx.topological_generations(g)) for s in gen}
    bottom = max(layer.values())
    layer.update({s: bottom for s in sinks})
    layer[d.initial] = 0
    layers = [[s for s in order if layer[s] == i] for i in range(max(layer.values()) + 1)]
    return [lay for lay in layers if lay]


# -- geometry helpers ---------------------------------------------------------------------------


def arc_points(
    a: tuple[float, float], b: tuple[float, float], rad: float, ts: ArrayLike
) -> list[tuple[float, float]]:
    """Points ``ts`` (0 to 1) of matplotlib's ``arc3`` quadratic curve from ``a`` to ``b``."""
    dx, dy = b[0] - a[0], b[1] - a[1]
    return bezier_points([a, ((a[0] + b[0]) / 2 + rad * dy, (a[1] + b[1]) / 2 - rad * dx), b], ts)


def bezier_points(ctrl: ArrayLike, ts: ArrayLike) -> list[tuple[float, float]]:
    return [(float(x), float(y)) for x, y in BezierSegment(np.array(ctrl))(np.array(ts))]


def loop_geometry(n: PlacedNode, side: str) -> tuple[list[tuple[float, float]], tuple[float, float]]:
    """Cubic control points of a self-loop on ``side`` of ``n`` and the loop's outer tip."""
    x, y, hw, hh = n.x, n.y, n.w / 2, n.h / 2
    out = LOOP_OUT
    if side in ("right", "left"):
        s = 1 if side == "right" else -1
        p0, p3 = (x + s * hw, y + hh * 0.45), (x + s * hw, y - hh * 0.45)
        c1, c2 = (x + s * (hw + out * 1.3), y + hh * 1.6), (x + s * (hw + out * 1.3), y - hh * 1.6)
        tip = (x + s * (hw + out), y)
    else:
        s = 1 if side == "top" else -1
        off = min(hw * 0.55, 0.35)
        p0, p3 = (x - off, y + s * hh), (x + off, y + s * hh)
        c1, c2 = (x - off * 1.9, y + s * (hh + out * 1.5)), (x + off * 1.9, y + s * (hh + out * 1.5))
        tip = (x, y + s * (hh + out * 1.1))
    return [p0, c1, c2, p3], tip


def _curve(a: PlacedNode, b: PlacedNode, rad: float) -> list[tuple[float, float]]:
    return arc_points((a.x, a.y), (b.x, b.y), rad, np.linspace(0, 1, 25))


def _loop(n: PlacedNode, side: str) -> list[tuple[float, float]]:
    return bezier_points(loop_geometry(n, side)[0], np.linspace(0, 1, 17))


def _clears(points: Sequence[tuple[float, float]], others: Sequence[Box]) -> bool:
    return not any(box.contains(p) for box in others for p in points)


# -- the plan -----------------------------------------------------------------------------------


LAYOUT_HINTS: dict[str, tuple[tuple[str | None, ...], ...]] = {
    # Rows top to bottom; each entry is a slot half a column wide (None: empty slot). Used only
    # when a hint names exactly the machine's states (a test checks every hint still does), so a
    # changed table falls back to the automatic layers instead of drawing a stale picture.
    # foreground: every state reaches every other; the working triangle on top, the two
    # "cannot tell" states below it.
    "foreground": (
        (None, None, "idle", None, None),
        ("running", None, None, None, "requires_action"),
        (None, None, None, None, None),
        ("unknown", None, None, None, "unrecognized"),
    ),
    # prompt: the not-yet-inserted states run down the left; where they can end up, right.
    "prompt": (
        (None, "received", None, None, None),
        (None, "held", None, None, "rejected"),
        (None, "cancel_requested", None, "inserted", None),
        ("covered", None, "closed_out", None, None),
        (None, "withdrawn", None, "answered", None),
    ),
    # session: one cycle (open, close, resume, back to open), drawn as a ring.
    "session": (
        ("open", None, None, None, "closing"),
        ("synced", None, None, None, "closed"),
        ("replaying", None, None, None, "resuming"),
    ),
    # entity: from unseen to either content state; the two then move between each other.
    "entity": (
        (None, "unseen", None),
        ("empty", None, "with_content"),
    ),
    # elicitation: the answers of a pending one beside it; the URL accept (or a completion
    # ahead of it) and the cancelled work's abandonment below, then where they end; late
    # answers at the bottom.
    "elicitation": (
        ("declined", None, "pending", None, "accepted"),
        ("awaiting_completion", None, "completed_unanswered", None, "abandoned"),
        ("completed", None, "withdrawn", None, "cancelled"),
        (None, None, "late", None, None),
    ),
    # tool_call: the three live statuses reach each other; the three final ones sit below.
    "tool_call": (
        (None, None, "pending", None, None),
        (None, "in_progress", None, "paused", None),
        ("completed", None, "failed", None, "cancelled"),
    ),
}


def hint_for(d: Diagram) -> tuple[tuple[str | None, ...], ...] | None:
    hint = LAYOUT_HINTS.get(d.name)
    if hint is None:
        return None
    named = [s for row in hint for s in row if s is not None]
    if sorted(named) != sorted(n.id for n in d.nodes) or len(set(named)) != len(named):
        return None
    return hint


def plan(d: Diagram, measure: Measure) -> Plan:
    sizes = {n.id: measure(n.id, NODE_FONT) for n in d.nodes}
    loop_room = [
        measure(b.text, LABEL_FONT)[0] + 2 * LABEL_PAD + LOOP_OUT + 0.3 for b in bundles_of(d) if b.self_loop
    ]
    col = max(w for w, _ in sizes.values()) + 2 * NODE_PAD_X + max([COL_GAP, *loop_room])
    hint = hint_for(d)
    if hint is not None:
        slots = [
            {s: (k - (len(row) - 1) / 2) / 2 for k, s in enumerate(row) if s is not None} for row in hint
        ]
    else:
        slots = [{s: k - (len(lay) - 1) / 2 for k, s in enumerate(lay)} for lay in layers_of(d)]
    nodes: dict[str, PlacedNode] = {}
    for i, row in enumerate(slots):
        for s, x in row.items():
            w = sizes[s][0] + 2 * NODE_PAD_X
            nodes[s] = PlacedNode(
                s, x * col, -i * (NODE_H + ROW_GAP), w, NODE_H, d.node(s).initial, d.node(s).final
            )
    nodes = {n.id: nodes[n.id] for n in d.nodes}
    init = nodes[d.initial]
    markers = [Box(init.x - 0.12, init.y + init.h / 2, init.x + 0.12, init.y + init.h / 2 + MARKER_LEN + 0.1)]
    placed = [PlacedBundle(b) for b in bundles_of(d)]
    _route_pairs(placed, nodes, markers)
    _place_labels(placed, nodes, markers, measure)
    return Plan(d, nodes, placed, markers)


def _route_pairs(placed: list[PlacedBundle], nodes: dict[str, PlacedNode], markers: list[Box]) -> None:
    pairs: dict[tuple[str, str], list[PlacedBundle]] = {}
    order = list(nodes)
    for pb in placed:
        b = pb.bundle
        if b.self_loop:
            continue
        a, c = sorted((b.source, b.dest), key=order.index)
        pairs.setdefault((a, c), []).append(pb)
    xs = [n.x for n in nodes.values()]
    ys = [n.y for n in nodes.values()]
    centre = ((min(xs) + max(xs)) / 2, (min(ys) + max(ys)) / 2)
    for (a, c), group in pairs.items():
        na, nc = nodes[a], nodes[c]
        k = len(group)
        base = [0.0] if k == 1 else [(i - (k - 1) / 2) * 0.24 for i in range(k)]
        # Positive bends move the curve towards (dy, -dx) of a -> c; try the outward side first.
        dx, dy = nc.x - na.x, nc.y - na.y
        mx, my = (na.x + nc.x) / 2 - centre[0], (na.y + nc.y) / 2 - centre[1]
        out = 1.0 if (dy * mx - dx * my) >= 0 else -1.0
        others = [n.box.grow(CLEAR) for s, n in nodes.items() if s not in (a, c)] + markers
        shift = 0.0
        for step in range(0, 31):
            mag = 0.07 * ((step + 1) // 2)
            shift = 0.0 if step == 0 else mag * (out if step % 2 else -out)
            ok = all(
                _clears(
                    _curve(nodes[pb.bundle.source], nodes[pb.bundle.dest], _rad(pb, a, side + shift)), others
                )
                for pb, side in zip(group, base, strict=True)
            )
            if ok:
                break
        for pb, side in zip(group, base, strict=True):
            pb.rad = _rad(pb, a, side + shift)
            pb.points = _curve(nodes[pb.bundle.source], nodes[pb.bundle.dest], pb.rad)


def _rad(pb: PlacedBundle, canonical_source: str, bend: float) -> float:
    """The arc3 rad that bends a bundle by ``bend`` towards the canonical side of its pair."""
    return round(bend if pb.bundle.source == canonical_source else -bend, 4)


def _label_size(pb: PlacedBundle, measure: Measure) -> tuple[float, float]:
    w, h = measure(pb.bundle.text, LABEL_FONT)
    return w + 2 * LABEL_PAD, h + 2 * LABEL_PAD


def _score(
    box: Box, hard: Sequence[Box], labels: Sequence[Box], soft: Sequence[tuple[float, float]]
) -> float:
    cost = sum(box.overlap(o) for o in hard) + sum(box.overlap(o.grow(0.03)) for o in labels)
    return cost * 1000 + sum(box.contains(p) for p in soft)


def _place_labels(
    placed: list[PlacedBundle], nodes: dict[str, PlacedNode], markers: list[Box], measure: Measure
) -> None:
    """Self-loops first, each with its side and label spot picked together (loops have few good
    spots); then the other labels, short curves first."""
    hard = [n.box.grow(0.04) for n in nodes.values()] + markers
    labels: list[Box] = []
    taken: dict[str, list[str]] = {}
    curves = [p for pb in placed if not pb.bundle.self_loop for p in pb.points]
    for pb in (pb for pb in placed if pb.bundle.self_loop):
        n = nodes[pb.bundle.source]
        others = [m.box.grow(CLEAR) for s, m in nodes.items() if s != n.id] + markers
        w, h = _label_size(pb, measure)
        candidates: list[tuple[float, str, Box]] = []
        for side in ("right", "left", "bottom", "top"):
            if side in taken.get(n.id, []):
                continue
            pb.side = side
            pts = _loop(n, side)
            loop_cost = 1000.0 * sum(not _clears(pts, [o]) for o in others)
            loop_cost += 3 * sum(Box(*_extent(pts)).grow(0.05).contains(p) for p in curves)
            for cx, cy in _label_spots(pb, nodes, w, h):
                box = Box.around(cx, cy, w, h)
                candidates.append((loop_cost + _score(box, hard, labels, curves), side, box))
        _, pb.side, pb.label = min(candidates, key=lambda c: c[0])  # the first of least score
        taken.setdefault(n.id, []).append(pb.side)
        pb.points = _loop(n, pb.side)
        labels.append(pb.label)
        curves.extend(pb.points)

    def length(pb: PlacedBundle) -> float:
        return sum(math.dist(p, q) for p, q in pairwise(pb.points))

    pairs = sorted(
        (pb for pb in placed if not pb.bundle.self_loop),
        key=lambda pb: (length(pb), pb.bundle.edges[0].index),
    )
    for pb in pairs:
        w, h = _label_size(pb, measure)
        # The label may hide its own curve but should not sit on another one.
        soft = [p for o in placed if o is not pb for p in o.points]
        best = (math.inf, Box(0, 0, 0, 0))
        for cx, cy in _label_spots(pb, nodes, w, h):  # the first of least score (none is below 0)
            box = Box.around(cx, cy, w, h)
            best = min(best, (_score(box, hard, labels, soft), box), key=lambda b: b[0])
            if best[0] == 0:
                break
        pb.label = best[1]
        labels.append(pb.label)


def _extent(pts: Sequence[tuple[float, float]]) -> tuple[float, float, float, float]:
    return (min(p[0] for p in pts), min(p[1] for p in pts), max(p[0] for p in pts), max(p[1] for p in pts))


def _label_spots(
    pb: PlacedBundle, nodes: dict[str, PlacedNode], w: float, h: float
) -> list[tuple[float, float]]:
    b = pb.bundle
    if b.self_loop:
        n = nodes[b.source]
        _, (tx, ty) = loop_geometry(n, pb.side)
        gap = 0.05
        if pb.side in ("right", "left"):
            s = 1 if pb.side == "right" else -1
            x = tx + s * (w / 2 + gap)
            return [
                (x, ty),
                (x, ty + h / 2),
                (x, ty - h / 2),
                (tx, ty + n.h / 2 + h / 2 + 0.1),
                (tx, ty - n.h / 2 - h / 2 - 0.1),
            ]
        s = 1 if pb.side == "top" else -1
        y = ty + s * (h / 2 + gap)
        return [(tx, y), (tx + w / 2 + 0.3, ty), (tx - w / 2 - 0.3, ty), (tx + w / 3, y), (tx - w / 3, y)]
    a, c = nodes[b.source], nodes[b.dest]
    on = arc_points((a.x, a.y), (c.x, c.y), pb.rad, (0.5, 0.42, 0.58, 0.34, 0.66, 0.27, 0.73, 0.21, 0.79))
    near = arc_points((a.x, a.y), (c.x, c.y), pb.rad, (0.5, 0.4, 0.6, 0.3, 0.7, 0.24, 0.76))
    beside = ((w / 2 + 0.06, 0), (-w / 2 - 0.06, 0), (0, h / 2 + 0.06), (0, -h / 2 - 0.06))
    return on + [(px + dx, py + dy) for px, py in near for dx, dy in beside]
