"""One item of background work: a terminal, a background tool call, or a subagent child.

Theory of operation
-------------------
Background work is listed in the ``background`` snapshot of state updates. An item must be
announced (``terminal_update``, ``tool_call_update`` or ``subagent_update``) before the first
snapshot that lists it, and finalized (a terminal's exitStatus, a tool call's final status,
a child that is idle with an empty background list of its own) before the snapshot that removes
it. Work that finishes before it was ever listed is simply done. A listed item that finished
should be removed by a later snapshot (the eventual obligation of ``finalized``), and no later
snapshot names it still: a list is a snapshot of the work currently running, and only
background work is listed (``keep``: a snapshot naming an item the previous list named too, no
transition; allowed while the item runs). A listed item is listed only once: an item already
listed is not listed again in the same snapshot. A finished terminal or tool call is never listed again;
a detached subagent child is listed whenever it is not idle, so a child that runs again after
it was removed is listed again (guard ``child``: the caller says whether the item is a child).

Work that foreground work waits on is foreground work and is not listed. Whether a listed item
that foreground work starts waiting on may leave the list unfinished is the reading
``waited-on-background`` (``properties.readings``): the row ``adopt`` is taken only when the
caller says that its alternative ``becomes-foreground`` is in force and the snapshot's state is
running or requires_action (guard ``becomes_foreground``); otherwise dropping an unfinished item
breaks BG-11 like any other removal. The item is then announced but not listed, as before its
first listing.

Rows come from: Background work.

Must not know: which kind of item it is (the finalizing event differs; the lifecycle does not),
foreground state.
"""

from __future__ import annotations

from typing import Final

from model.core import MachineSpec, Row, flags

UNANNOUNCED, ANNOUNCED, LISTED, FINALIZED, DONE = (
    "unannounced",
    "announced",
    "listed",
    "finalized",
    "done",
)
STATES = (UNANNOUNCED, ANNOUNCED, LISTED, FINALIZED, DONE)
SEC = "Background work"

ROWS = (
    Row("announce", UNANNOUNCED, ANNOUNCED, SEC, note="terminal/tool_call/subagent update"),
    Row("list", ANNOUNCED, LISTED, SEC, note="first snapshot naming it"),
    Row("keep", LISTED, LISTED, SEC, note="a later snapshot naming it still"),
    Row("finalize", LISTED, FINALIZED, SEC, note="exitStatus / final status / child idle+[]"),
    Row("unlist", FINALIZED, DONE, SEC, note="snapshot that removes it"),
    Row("finalize", ANNOUNCED, DONE, SEC, note="finished before it was listed"),
    Row("list", DONE, LISTED, SEC, guard="child", note="a detached child that runs again"),
    Row(
        "adopt", LISTED, ANNOUNCED, SEC, guard="becomes_foreground",
        note="dropped unfinished: foreground work waits on it (reading waited-on-background)",
    ),
)  # fmt: skip

ID_FIELD: Final = {"terminal": "terminalId", "tool_call": "toolCallId", "subagent": "sessionId"}
"""Item type -> the field of a ``background`` list item that holds its ID (an item of another
type is valid and names nothing the Client tracks)."""

WAITED_ON: str = "waited-on-background"
"""The reading (``properties.readings``) the guard ``becomes_foreground`` answers for."""


SPEC = MachineSpec(
    name="background_item",
    title="Background item",
    per="background item (terminal, tool call or subagent child)",
    states=STATES,
    initial=UNANNOUNCED,
    final=(DONE,),
    rows=ROWS,
    eventually={FINALIZED: "BG-09"},
    guards=flags(child=False, becomes_foreground=False),
    guard_rules={"child": "BG-17", "becomes_foreground": "BG-11"},
    forbidden={
        (LISTED, "list"): "BG-17",
        (FINALIZED, "list"): "BG-17",
        "keep": "BG-17",
        "announce": "BG-10",
        "list": "BG-10",
        "finalize": "BG-11",
        "unlist": "BG-11",
        "adopt": "BG-11",
    },
    description="Announced before listed, finalized before removed.",
)
