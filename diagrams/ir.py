"""The one intermediate form every diagram renderer reads.

Theory of operation
-------------------
``from_spec(spec)`` turns a ``model.core.MachineSpec`` into a ``Diagram``: one ``Node`` per state
(spec order, with initial/final flags) and one ``Edge`` per table row (row order, with trigger,
guard, actor, spec section and note). Nothing is merged or dropped here: renderers that bundle
edges (the matplotlib renderer draws one label per state pair) do so themselves and keep the
row edges inside their bundles, so a test can check nodes == states and edges == rows for every
renderer.

Guards are kept as the model writes them (``g`` or ``!g``); ``guard_label`` is the one place
that decides how a guard reads in a picture or a table.

Must not know: how any renderer draws, or how machines execute.
"""

from __future__ import annotations

from dataclasses import dataclass

from model.core import Actor, MachineSpec


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    """The state name (a Python identifier in every machine of the model)."""
    initial: bool
    final: bool


@dataclass(frozen=True, slots=True)
class Edge:
    index: int
    """Position of the row in the machine table."""
    source: str
    dest: str
    trigger: str
    guard: str | None
    actor: Actor
    section: str
    note: str

    @property
    def label(self) -> str:
        """Trigger with its guard, e.g. ``insert [oldest_held]``."""
        return self.trigger if self.guard is None else f"{self.trigger} {guard_label(self.guard)}"


@dataclass(frozen=True, slots=True)
class Diagram:
    name: str
    title: str
    per: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    hidden: tuple[str, ...] = ()
    """Triggers no message shows (``MachineSpec.hidden``)."""
    obligations: tuple[tuple[str, str], ...] = ()
    """(state, rule): states an entity must leave in the end (``MachineSpec.eventually``)."""

    @property
    def initial(self) -> str:
        return next(n.id for n in self.nodes if n.initial)

    @property
    def finals(self) -> tuple[str, ...]:
        return tuple(n.id for n in self.nodes if n.final)

    def node(self, state: str) -> Node:
        return next(n for n in self.nodes if n.id == state)


def guard_label(guard: str) -> str:
    """``[g]`` for a guard, ``[!g]`` for its negation."""
    return f"[{guard}]"


def from_spec(spec: MachineSpec) -> Diagram:
    finals = set(spec.final)
    nodes = tuple(Node(s, s == spec.initial, s in finals) for s in spec.states)
    edges = tuple(
        Edge(i, r.source, r.dest, r.trigger, r.guard, r.actor, r.section, r.note)
        for i, r in enumerate(spec.rows)
    )
    obligations = tuple(spec.eventually.items())
    return Diagram(spec.name, spec.title, spec.per, nodes, edges, spec.hidden, obligations)


def all_diagrams() -> tuple[Diagram, ...]:
    from model.registry import MACHINES

    return tuple(from_spec(m) for m in MACHINES)
