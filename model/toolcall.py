"""One tool call: pending, in_progress, paused, completed, failed, cancelled.

Theory of operation
-------------------
A tool call is created by its first ``tool_call_update`` (or content chunk) and starts pending
(the row ``start``: the first report of its toolCallId).
The live statuses (pending, in_progress, paused) may follow each other in any order, as the
Agent asks permission, runs, suspends or schedules the work. completed, failed and cancelled
are final: a final status is never reopened; the Agent starts a new tool call instead. Whether
a change from one final status to another is a reopening is the reading ``final-status-change``
(``properties.readings``): under ``reopen-only`` (the default) it is no move of this table (the
call stays final: an observer fires nothing), under ``final-is-final`` it is fired and refused
like any status after a final one (the table has no row from a final status but the content
self-loops).
A custom status (a value beginning with ``_``) is the Agent's own; the schema says a Client
treats a tool call with a status it does not recognise as still in progress, so a custom status
moves a live call to in_progress (``custom_status``) and, like any status, never reopens a final
one.
What a live status reported for a call with a final status is, the wire cannot tell: the same
call reopened (refused: BG-05, "The Agent does not reopen a tool call that has a final status. It
starts a new one instead", Background work) or a new tool call under the ended one's ID, which
starts over (``start`` refused from any state but the first: ENT-01, "The Agent MUST NOT reuse an
ID for a different entity of the same type within a session", Entity IDs). Which one the
observer fires is the reading ``tool-call-after-final`` (``properties.readings``; ``after_final``
picks the trigger): ``reopened`` (the default) fires the status's trigger, ``new-call`` fires
``start``.
Content is replaced by a ``tool_call_update`` that carries content and appended by a
``tool_call_content_chunk``; both leave the status alone (self-loops), on live and final calls.

Rows come from: 5. Tool invocation and status reporting; Background work; Failures; Cancellation;
Entity IDs.

Must not know: permissions, foreground state, or who is waiting on the call.
"""

from __future__ import annotations

from model.core import MachineSpec, Row
from model.entity import REUSED_ID

PENDING, IN_PROGRESS, PAUSED, COMPLETED, FAILED, CANCELLED = (
    "pending",
    "in_progress",
    "paused",
    "completed",
    "failed",
    "cancelled",
)
STATES = (PENDING, IN_PROGRESS, PAUSED, COMPLETED, FAILED, CANCELLED)
LIVE = (PENDING, IN_PROGRESS, PAUSED)
FINAL = (COMPLETED, FAILED, CANCELLED)

TOOL = "5. Tool invocation and status reporting"
BG = "Background work"
ENT = "Entity IDs"

_SET = {PENDING: "set_pending", IN_PROGRESS: "run", PAUSED: "pause"}
_END = {COMPLETED: "complete", FAILED: "fail", CANCELLED: "cancel"}

ROWS = (
    Row("start", PENDING, PENDING, ENT, note="first report of its toolCallId"),
    *(
        Row(_SET[dest], src, dest, TOOL if dest == IN_PROGRESS else BG)
        for src in LIVE
        for dest in LIVE
        if src != dest
    ),
    *(Row(_END[dest], src, dest, TOOL) for src in LIVE for dest in FINAL),
    *(
        Row("custom_status", src, IN_PROGRESS, TOOL, note="_-prefixed: read as still in progress")
        for src in LIVE
    ),
    *(Row("replace_content", s, s, TOOL, note="tool_call_update with content") for s in STATES),
    *(Row("append_content", s, s, TOOL, note="tool_call_content_chunk") for s in STATES),
)

SPEC = MachineSpec(
    name="tool_call",
    title="Tool call",
    per="tool call (toolCallId)",
    states=STATES,
    initial=PENDING,
    final=FINAL,
    rows=ROWS,
    forbidden={
        **dict.fromkeys(
            (*_SET.values(), *_END.values(), "custom_status", "replace_content", "append_content"), "BG-05"
        ),
        "start": REUSED_ID,
    },
    description="Status of one tool call; final statuses are final.",
)

FINAL_CHANGE: str = "final-status-change"
"""The reading (``properties.readings``) that says whether a move between final statuses is
fired at all (see the module docstring)."""

AFTER_FINAL: str = "tool-call-after-final"
"""The reading (``properties.readings``) that says whether a live status reported for a call
with a final status reopens it or starts a new call under its ID (see the module docstring)."""
NEW_CALL: str = "new-call"
"""The alternative of ``AFTER_FINAL`` under which it is a new call (ENT-01)."""

STATUS_TRIGGER = {**_SET, **_END}
"""Reported status -> trigger (a repeated status is no trigger)."""
CUSTOM_STATUS = "_queued"
"""The custom status the simulated Agent reports (any ``_``-prefixed value fires the same row)."""


def status_trigger(status: str) -> str | None:
    """The trigger a reported status fires: a standard status's, ``custom_status`` for a value
    beginning with ``_``, None for a value reserved for future variants (not judged)."""
    found = STATUS_TRIGGER.get(status)
    if found is None and status.startswith("_"):
        return "custom_status"
    return found


_LIVE_TRIGGERS = frozenset((*_SET.values(), "custom_status"))
"""The triggers to a live status (a custom status is read as in progress)."""


def after_final(current: str, trigger: str, reading: str) -> str:
    """The trigger a status's ``trigger`` fires for a call in ``current`` under the reading
    ``AFTER_FINAL`` in force (``reading``): ``start`` (a new call under an ended call's ID) for a
    live status of a call with a final status under ``new-call``, else ``trigger`` itself."""
    if current in FINAL and trigger in _LIVE_TRIGGERS and reading == NEW_CALL:
        return "start"
    return trigger
