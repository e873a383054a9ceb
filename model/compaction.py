"""One reported context compaction: in_progress, completed, failed, cancelled, or custom.

Theory of operation
-------------------
A compaction is an ID-addressed timeline entity. The first notification for a new compactionId
starts it in_progress (the Client's initial value: the row ``start``), then applies the update,
so a single ``compaction_update`` with status completed is a whole lifecycle. ``status`` is an open enum:
``_``-prefixed values are implementation extensions and other unknown values are reserved for
future statuses; both are held as ``custom`` and imply no lifecycle: before a terminal status
they make the compaction custom, after one they change nothing. Once a terminal status
(completed, failed, cancelled) is reported the compaction is over: reporting it in progress
again would reuse its ID for another compaction, which is forbidden. Whether another terminal
status after it is such a reuse is the reading ``final-status-change`` (``properties.readings``,
the one tool calls answer too): under ``reopen-only`` (the default) it corrects the same
compaction's outcome and is no move of this table (``trigger_for`` fires nothing: the compaction
stays over), under ``final-is-final`` it is fired, with the reading in its context, and refused
like any status after a terminal one (the table has no row between terminal statuses). A
compaction in progress owes a terminal status in the end (``eventually``, COMPACT-05); a custom
status implies no lifecycle, so a custom one owes nothing.
The summary follows patch, chunk and clear rules (self-loops here; the arithmetic is in
``model.entity``).

Rows come from: Session compaction.

Must not know: usage, foreground state.
"""

from __future__ import annotations

from model.core import MachineSpec, Row
from model.toolcall import FINAL_CHANGE

IN_PROGRESS, CUSTOM, COMPLETED, FAILED, CANCELLED = (
    "in_progress",
    "custom",
    "completed",
    "failed",
    "cancelled",
)
STATES = (IN_PROGRESS, CUSTOM, COMPLETED, FAILED, CANCELLED)
TERMINAL = (COMPLETED, FAILED, CANCELLED)
SEC = "Session compaction"

_END = {COMPLETED: "complete", FAILED: "fail", CANCELLED: "cancel"}

ROWS = (
    Row("start", IN_PROGRESS, IN_PROGRESS, SEC, note="first report of its compactionId"),
    Row("custom_status", IN_PROGRESS, CUSTOM, SEC, note="`_` or future status"),
    Row("progress", CUSTOM, IN_PROGRESS, SEC),
    *(Row(_END[t], s, t, SEC) for s in (IN_PROGRESS, CUSTOM) for t in TERMINAL),
    *(Row("custom_status", t, t, SEC, note="implies no lifecycle") for t in TERMINAL),
    *(Row("summary_patch", s, s, SEC, note="summary replace / clear") for s in STATES),
    *(Row("summary_chunk", s, s, SEC, note="compaction_summary_chunk appends") for s in STATES),
)

SPEC = MachineSpec(
    name="compaction",
    title="Compaction",
    per="compaction (compactionId)",
    states=STATES,
    initial=IN_PROGRESS,
    final=TERMINAL,
    rows=ROWS,
    eventually={IN_PROGRESS: "COMPACT-05"},
    forbidden=dict.fromkeys(
        ("start", "custom_status", "progress", *_END.values(), "summary_patch", "summary_chunk"), "COMPACT-03"
    ),
    description="A compaction's status; terminal statuses are never reopened.",
)

KNOWN_STATUS = ("in_progress", *TERMINAL)


def trigger_for(current: str, status: str, final_change: str = "reopen-only") -> str | None:
    """The trigger a reported status means in ``current``; None when it changes nothing: a
    terminal status after another one under the reading ``final-status-change`` in force
    (``final_change``) other than ``final-is-final`` (see the module docstring)."""
    target = status if status in KNOWN_STATUS else CUSTOM
    if target == current:
        return None
    if target in _END:
        if current in TERMINAL and final_change != "final-is-final":
            return None  # a corrected outcome of the same compaction
        return _END[target]
    return "progress" if target == IN_PROGRESS else "custom_status"


def final_change_context(current: str, trigger: str, final_change: str) -> dict[str, str] | None:
    """The context a move fired in ``current`` carries: a terminal status after another one (fired
    only under ``final-status-change=final-is-final``, ``trigger_for``) names that reading, on
    which its finding depends; None for any other move (no context)."""
    if current in TERMINAL and trigger in _END.values():
        return {FINAL_CHANGE: final_change}
    return None
