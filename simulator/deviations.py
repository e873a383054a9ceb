"""Seeded bugs that are deviations from a machine table, stated as data.

Theory of operation
-------------------
The simulated Agent chooses its moves for an entity from the table (``MachineSpec.moves``). A
seeded bug of this module changes that choice in one named way, instead of a branch inside the
Agent:

- ``Withhold``: the Agent never takes some moves of a machine, so an obligation is skipped (a
  compaction that never ends, an inserted prompt never answered). The broken rule is the
  table's obligation for the state left (``MachineSpec.eventually``) or, where the obligation
  is judged by a monitor and not by the table, the rule named here; the Agent marks it once the
  world is quiescent (``Agent.omitted``), when the move is certainly never going to happen.
- ``Forbidden``: the Agent fires one forbidden cell of a table: ``trigger`` in ``source``,
  going to ``dest`` as the faulty Agent means it to (reusing a compaction's ID reopens it in
  progress). The broken rule is the cell's rule in the table (``MachineSpec.rule_of``), never
  a literal here. With ``wire`` the move goes out, so the checker sees the breach on the wire;
  without it the model refuses the move (``ProtocolViolation``) and the run ends there.

``withheld`` and ``forced`` are what the Agent asks, per machine, for the faults it runs with.

Must not know: the Agent's records, wire messages, monitors.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Withhold:
    name: str
    machine: str
    triggers: frozenset[str]
    rule: str | None = None
    """The obligation skipped, when no ``eventually`` of the table states it."""


@dataclass(frozen=True, slots=True)
class Forbidden:
    name: str
    machine: str
    source: str
    trigger: str
    dest: str
    wire: bool = True


DEVIATIONS: tuple[Withhold | Forbidden, ...] = (
    Withhold("compaction-never-ends", "compaction", frozenset({"complete", "fail", "cancel"}), "COMPACT-05"),
    Withhold("never-answer-inserted", "prompt", frozenset({"answer"})),
    Forbidden("reuse-compaction-id", "compaction", "completed", "progress", "in_progress"),
    Forbidden("reopen-tool-call", "tool_call", "completed", "run", "in_progress"),
    Forbidden("held-not-withdrawn", "prompt", "covered", "insert", "inserted", wire=False),
)
BY_NAME = {d.name: d for d in DEVIATIONS}


def of(faults: Iterable[str]) -> tuple[Withhold | Forbidden, ...]:
    """The deviations among ``faults``, in this module's order."""
    names = set(faults)
    return tuple(d for d in DEVIATIONS if d.name in names)


def withheld(deviations: Iterable[Withhold | Forbidden], machine: str) -> frozenset[str]:
    """Triggers of ``machine`` the Agent never takes."""
    out: set[str] = set()
    for d in deviations:
        if isinstance(d, Withhold) and d.machine == machine:
            out |= d.triggers
    return frozenset(out)


def forced(deviations: Iterable[Withhold | Forbidden], machine: str, state: str) -> tuple[Forbidden, ...]:
    """Forbidden cells of ``machine`` in ``state`` the Agent may fire."""
    return tuple(
        d for d in deviations if isinstance(d, Forbidden) and d.machine == machine and d.source == state
    )
