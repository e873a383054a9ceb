"""The observer layer: which trigger of which machine of the model a wire message fires.

Owns: the mapping from an Agent's ``session/update`` to ``(machine, entity key, trigger)``
for the per-entity machines whose every step shows on the wire (tool calls, compactions).
Each trigger is chosen by the machine's own vocabulary (``model.toolcall.STATUS_TRIGGER``,
``model.compaction.trigger_for``), so what a status means is stated once, in ``model/``; the
table monitor (``properties.monitors.tables``) fires the tables with these observations, and
a forbidden cell is the finding.

Machines whose steps are partly hidden from a proxy (foreground state against a cancel's
arrival, a prompt held or decided) are not observed here yet: their rules are still judged by
the hand-written monitors.

Must not know: findings, monitors' records, or how the tables are executed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from model import compaction, toolcall
from model.core import MachineSpec

Observation = tuple[MachineSpec, str, str]
"""(machine, entity key within the session, trigger)."""
StateOf = Callable[[MachineSpec, str], str]
"""The current state of an entity (the machine's initial state when it was never seen)."""

OBSERVED: tuple[MachineSpec, ...] = (toolcall.SPEC, compaction.SPEC)
"""The machines this layer drives from the wire."""


def _tool_call(upd: dict[str, Any], state_of: StateOf) -> Iterator[Observation]:
    tid = upd.get("toolCallId")
    if type(tid) is not str:
        return
    status = upd.get("status")
    if type(status) is str and status in toolcall.STATUS_TRIGGER and status != state_of(toolcall.SPEC, tid):
        yield toolcall.SPEC, tid, toolcall.STATUS_TRIGGER[status]
    if "content" in upd:
        yield toolcall.SPEC, tid, "replace_content"


def _tool_call_chunk(upd: dict[str, Any], state_of: StateOf) -> Iterator[Observation]:
    tid = upd.get("toolCallId")
    if type(tid) is str:
        yield toolcall.SPEC, tid, "append_content"


def _compaction(upd: dict[str, Any], state_of: StateOf) -> Iterator[Observation]:
    cid = upd.get("compactionId")
    if type(cid) is not str:
        return
    status = upd.get("status")
    if type(status) is str:
        trigger = compaction.trigger_for(state_of(compaction.SPEC, cid), status)
        if trigger is not None:
            yield compaction.SPEC, cid, trigger
    if "summary" in upd:
        yield compaction.SPEC, cid, "summary_patch"


def _compaction_chunk(upd: dict[str, Any], state_of: StateOf) -> Iterator[Observation]:
    cid = upd.get("compactionId")
    if type(cid) is str:
        yield compaction.SPEC, cid, "summary_chunk"


UPDATES: dict[str, Callable[[dict[str, Any], StateOf], Iterator[Observation]]] = {
    "tool_call_update": _tool_call,
    "tool_call_content_chunk": _tool_call_chunk,
    "compaction_update": _compaction,
    "compaction_summary_chunk": _compaction_chunk,
}
"""``sessionUpdate`` variant -> its observations, in the order they apply."""


def observe(upd: dict[str, Any], state_of: StateOf) -> Iterator[Observation]:
    """The observations an Agent update makes, given the entities' current states."""
    variant = upd.get("sessionUpdate")
    found = UPDATES.get(variant) if type(variant) is str else None
    if found is not None:
        yield from found(upd, state_of)
