"""One item of background work: a terminal, a background tool call, or a subagent child.

Theory of operation
-------------------
Background work is listed in the ``background`` snapshot of state updates. An item must be
announced (``terminal_update``, ``tool_call_update`` or ``subagent_update``) before the first
snapshot that lists it, and finalized (a terminal's exitStatus, a tool call's final status,
a child that is idle with an empty background list of its own) before the snapshot that removes
it. Work that finishes before it was ever listed is simply done. A listed item stays listed in
repeated snapshots (not transitions); a finished item is never listed again.

Rows come from: Background work.

Must not know: which kind of item it is (the finalizing event differs; the lifecycle does not),
foreground state.
"""

from __future__ import annotations

from model.core import MachineSpec, Row

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
    Row("finalize", LISTED, FINALIZED, SEC, note="exitStatus / final status / child idle+[]"),
    Row("unlist", FINALIZED, DONE, SEC, note="snapshot that removes it"),
    Row("finalize", ANNOUNCED, DONE, SEC, note="finished before it was listed"),
)

SPEC = MachineSpec(
    name="background_item",
    title="Background item",
    per="background item (terminal, tool call or subagent child)",
    states=STATES,
    initial=UNANNOUNCED,
    final=(DONE,),
    rows=ROWS,
    forbidden={
        "announce": "BG-10",
        "list": "BG-10",
        "finalize": "BG-11",
        "unlist": "BG-11",
    },
    description="Announced before listed, finalized before removed.",
)
