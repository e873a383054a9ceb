"""One item of background work: a terminal, a background tool call, or a subagent child.

Theory of operation
-------------------
Background work is listed in the ``background`` snapshot of state updates. An item must be
announced (``terminal_update``, ``tool_call_update`` or ``subagent_update``) before the first
snapshot that lists it, and finalized (a terminal's exitStatus, a tool call's final status,
a child that is idle with an empty background list of its own) before the snapshot that removes
it. Work that finishes before it was ever listed is simply done. A listed item stays listed in
repeated snapshots (not transitions). A finished terminal or tool call is never listed again; a
detached subagent child is listed whenever it is not idle, so a child that runs again after it
was removed is listed again (guard ``child``: the caller says whether the item is a child).

Rows come from: Background work.

Must not know: which kind of item it is (the finalizing event differs; the lifecycle does not),
foreground state.
"""

from __future__ import annotations

from model.core import Context, MachineSpec, Row

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
    Row("list", DONE, LISTED, SEC, guard="child", note="a detached child that runs again"),
)


def _child(ctx: Context) -> bool:
    return bool(ctx.get("child", False))


SPEC = MachineSpec(
    name="background_item",
    title="Background item",
    per="background item (terminal, tool call or subagent child)",
    states=STATES,
    initial=UNANNOUNCED,
    final=(DONE,),
    rows=ROWS,
    guards={"child": _child},
    guard_rules={"child": "BG-17"},
    forbidden={
        "announce": "BG-10",
        "list": "BG-10",
        "finalize": "BG-11",
        "unlist": "BG-11",
    },
    description="Announced before listed, finalized before removed.",
)
