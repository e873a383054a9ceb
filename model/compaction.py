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
again, or another terminal status, would reuse its ID for another compaction, which is
forbidden. A compaction in progress owes a terminal status in the end (``eventually``, COMPACT-05);
a custom status implies no lifecycle, so a custom one owes nothing.
The summary follows patch, chunk and clear rules (self-loops here; the arithmetic is in
``model.entity``).

Rows come from: Session compaction.

Must not know: usage, foreground state.
"""

from __future__ import annotations

from model.core import MachineSpec, Row

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


def trigger_for(current: str, status: str) -> str | None:
    """The trigger a reported status means in ``current``; None when it changes nothing."""
    target = status if status in KNOWN_STATUS else CUSTOM
    if target == current:
        return None
    if target in _END:
        return _END[target]
    return "progress" if target == IN_PROGRESS else "custom_status"
