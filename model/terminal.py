"""One terminal: live from its first report until its exitStatus, exited for good after that.

Theory of operation
-------------------
A terminal is an ID-addressed entity (``terminalId``). Its first ``terminal_update`` or output
chunk creates it live (the row ``start``); a ``terminal_update`` carrying an ``exitStatus``
ends it (``exit``: a terminal "is live until its terminal_update reports exitStatus"). Once it
exited it stays exited: a later update that clears ``exitStatus`` (null) reports a live
terminal under the ID of one that ended, so the Agent gave that ID to a second terminal, which
no ID may be (``start`` refused: ENT-01). Updates of an exited terminal that leave its
``exitStatus`` alone, or report it again, change nothing (no move). Whether the terminal is
background work is the background item table's (``model.background``), not this one's.

Rows come from: Entity IDs; Background work.

Must not know: output bytes, background lists, foreground state.
"""

from __future__ import annotations

from model.core import MachineSpec, Row
from model.entity import REUSED_ID

LIVE, EXITED = "live", "exited"
STATES = (LIVE, EXITED)

ROWS = (
    Row("start", LIVE, LIVE, "Entity IDs", note="first report of its terminalId"),
    Row("exit", LIVE, EXITED, "Background work", note="terminal_update with exitStatus"),
)

SPEC = MachineSpec(
    name="terminal",
    title="Terminal",
    per="terminal (terminalId)",
    states=STATES,
    initial=LIVE,
    final=(EXITED,),
    rows=ROWS,
    forbidden={"start": REUSED_ID, "exit": REUSED_ID},
    description="Live until its exitStatus; an exited terminal's ID is never live again.",
)


def triggers_for(known: bool, current: str, has_exit_field: bool, exited: bool) -> tuple[str, ...]:
    """The triggers a ``terminal_update`` means for a terminal in ``current`` (``known``: seen
    before; ``has_exit_field``: the update names ``exitStatus``; ``exited``: with a value). A
    first report with an exitStatus starts the terminal and ends it."""
    if not known:
        return ("start", "exit") if exited else ("start",)
    if current == LIVE:
        return ("exit",) if exited else ()
    return ("start",) if has_exit_field and not exited else ()
