"""One session: open, closing, closed, and resume with optional history replay.

Theory of operation
-------------------
A session is open once initialized (sessions in a transcript are assumed initialized unless
it shows the setup). ``session/close`` ends it once the Agent answers. ``session/resume``
(of a closed session, or of one still open: the spec does not restrict it to closed sessions)
starts a resume: the Agent optionally replays history, then MUST send a snapshot of the
foreground state, and only then answers the resume successfully; the snapshot after replay and
before the response is what the Client uses (it must not infer activity from replay). The text
asks for a snapshot "following any requested history replay and before the successful resume
response", and "Agents MAY repeat current-state snapshots": a snapshot sent before (or inside)
the replay breaks nothing, but replayed history after it sends the handshake back to replaying,
so that the response again needs a snapshot after the last replayed update. No rule
forbids another ``session/close`` while the session is closing or once it is closed: it changes
nothing, and the Agent answers it. Nor does one forbid a ``session/close`` while a resume is
being answered (the session closes: the resume can no longer succeed and is answered with an
error) or a second ``session/resume`` while one is being answered (the handshake under way goes
on; the later request is answered with an error).

Rows come from: Initial state and synchronization; 2. Prompt accepted (close); Cancellation.

Must not know: prompts, entities, or foreground activity itself (only that a snapshot was sent).
"""

from __future__ import annotations

from model import between
from model.core import MachineSpec, Row

OPEN, CLOSING, CLOSED, RESUMING, REPLAYING, SYNCED = (
    "open",
    "closing",
    "closed",
    "resuming",
    "replaying",
    "synced",
)
STATES = (OPEN, CLOSING, CLOSED, RESUMING, REPLAYING, SYNCED)
SYNC = "Initial state and synchronization"
ACC = "2. Prompt accepted"

ROWS = (
    Row("close", OPEN, CLOSING, ACC, actor="client", note="session/close"),
    Row("close", CLOSING, CLOSING, ACC, actor="client", note="another session/close: no rule forbids it"),
    Row("close", CLOSED, CLOSED, ACC, actor="client", note="a close of a closed session changes nothing"),
    Row("closed", CLOSED, CLOSED, ACC, note="its response"),
    Row("closed", CLOSING, CLOSED, ACC, note="close response"),
    Row("resume", CLOSED, RESUMING, SYNC, actor="client", note="session/resume"),
    Row("resume", OPEN, RESUMING, SYNC, actor="client", note="session/resume of a session still open"),
    Row("replay", RESUMING, REPLAYING, SYNC, note="history replay starts"),
    Row("replay", REPLAYING, REPLAYING, SYNC, note="more replayed updates"),
    Row("snapshot", RESUMING, SYNCED, SYNC, note="state after resuming"),
    Row("snapshot", REPLAYING, SYNCED, SYNC, note="state after the replay"),
    Row("snapshot", SYNCED, SYNCED, SYNC, note="repeated snapshot"),
    Row("replay", SYNCED, REPLAYING, SYNC, note="history replayed after a snapshot: another must follow"),
    Row("resumed", SYNCED, OPEN, SYNC, note="successful resume response"),
    Row("close", RESUMING, CLOSING, ACC, actor="client", note="session/close during a resume"),
    Row(
        "resume", RESUMING, RESUMING, SYNC, actor="client", note="a second resume: refused, this one goes on"
    ),
)

SPEC = MachineSpec(
    name="session",
    title="Session",
    per="session",
    states=STATES,
    initial=OPEN,
    final=(),
    rows=ROWS,
    home=OPEN,
    forbidden={
        "close": between.CLOSE_STOPS_PROMPTS.rule,
        "closed": between.CLOSE_STOPS_PROMPTS.rule,
        "resume": "SYNC-02",
        "replay": "SYNC-02",
        "snapshot": "SYNC-02",
        "resumed": "SYNC-02",
    },
    description="Session open/close and the resume handshake.",
)
