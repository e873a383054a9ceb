"""One ``session/prompt`` request, from receipt to its single answer.

Theory of operation
-------------------
The Agent receives a prompt and either inserts it at once or holds it; held prompts are
inserted in the order received (guard ``oldest_held``). Insertion is acceptance: only then may
the Agent answer, and then only with success (the inserted user message's messageId). Before
insertion the Agent may reject the request with a JSON-RPC error (invalid params -32602, a hook
rejection, an early failure), but never only because foreground work is active (guard
``busy_only``). A prompt not yet inserted is withdrawn with -32800 when the Client asks
(``$/cancel_request``: the Agent may still insert it instead), when a ``session/cancel`` covers
it, or when a ``session/close`` stops it (then -32800 is the only answer; inserting, answering or
rejecting it breaks the cancellation rule or the close rule, whichever stopped it first).
Cancellation never undoes an insertion: the cancel and close triggers are self-loops once a
prompt is inserted or answered, and an error after a success breaks the prompt rule too. After a
``$/cancel_request`` the Agent may refuse the prompt for its own reason only under the reading
``rejected-after-cancel-request=own-reason`` (guard ``own_reason``).

Holding and inserting are hidden (``MachineSpec.hidden``): the wire shows the request, the
Client's cancels and closes, the answer and, separately, a user message that no field ties to
the request. A prompt not yet answered must be answered in the end: with success once inserted
(ACC-01), with -32800 once a ``session/close`` stopped it (ACC-13: "if closing prevents
insertion, the request receives -32800"), else with an error (REJ-01).

Rows come from: 1. User message; 2. Prompt accepted; Prompts during active work; Prompts that are
never inserted; Cancellation.

Must not know: foreground state, message content, or the transport.
"""

from __future__ import annotations

from model import between
from model.core import MachineSpec, Row, flags

RECEIVED, HELD, CANCEL_REQUESTED, COVERED, CLOSED_OUT, INSERTED, ANSWERED, REJECTED, WITHDRAWN = (
    "received",
    "held",
    "cancel_requested",
    "covered",
    "closed_out",
    "inserted",
    "answered",
    "rejected",
    "withdrawn",
)
STATES = (RECEIVED, HELD, CANCEL_REQUESTED, COVERED, CLOSED_OUT, INSERTED, ANSWERED, REJECTED, WITHDRAWN)
PENDING = (RECEIVED, HELD, CANCEL_REQUESTED, COVERED, CLOSED_OUT)
"""Not yet inserted."""
SETTLED = (ANSWERED, REJECTED, WITHDRAWN)
"""Given its one answer: a cancel or close changes nothing."""

ACC = "2. Prompt accepted"
ACTIVE = "Prompts during active work"
NEVER = "Prompts that are never inserted"
CANCEL = "Cancellation"

ROWS = (
    Row("hold", RECEIVED, HELD, ACTIVE, note="agent holds it for later"),
    Row("insert", RECEIVED, INSERTED, ACC),
    Row("insert", HELD, INSERTED, ACTIVE, guard="oldest_held", note="held prompts go in order"),
    Row("insert", CANCEL_REQUESTED, INSERTED, ACC, guard="oldest_held", note="the request was not cancelled"),
    Row("answer", INSERTED, ANSWERED, ACC, note="success with the messageId"),
    Row("reject", RECEIVED, REJECTED, NEVER, guard="!busy_only", note="-32602, hook or early failure"),
    Row("reject", HELD, REJECTED, NEVER, guard="!busy_only"),
    Row(
        "reject",
        CANCEL_REQUESTED,
        REJECTED,
        NEVER,
        guard="own_reason",
        note="refused for a reason of its own (reading rejected-after-cancel-request)",
    ),
    Row("cancel_request", RECEIVED, CANCEL_REQUESTED, ACTIVE, actor="client", note="$/cancel_request"),
    Row("cancel_request", HELD, CANCEL_REQUESTED, ACTIVE, actor="client"),
    Row("cancel_request", CANCEL_REQUESTED, CANCEL_REQUESTED, ACTIVE, actor="client"),
    Row("cancel_request", COVERED, COVERED, ACTIVE, actor="client"),
    Row("cancel_request", INSERTED, INSERTED, ACC, actor="client", note="too late: still succeeds"),
    *(Row("cancel_request", s, s, ACC, actor="client", note="ignored") for s in SETTLED),
    Row("cover", RECEIVED, COVERED, CANCEL, actor="client", note="session/cancel"),
    Row("cover", HELD, COVERED, CANCEL, actor="client"),
    Row("cover", CANCEL_REQUESTED, COVERED, CANCEL, actor="client"),
    Row("cover", COVERED, COVERED, CANCEL, actor="client"),
    Row("cover", INSERTED, INSERTED, CANCEL, actor="client", note="insertion is not undone"),
    *(Row("cover", s, s, CANCEL, actor="client") for s in (*SETTLED, CLOSED_OUT)),
    Row("close", RECEIVED, CLOSED_OUT, ACC, actor="client", note="session/close"),
    Row("close", HELD, CLOSED_OUT, ACC, actor="client"),
    Row("close", CANCEL_REQUESTED, CLOSED_OUT, ACC, actor="client"),
    Row("close", COVERED, COVERED, ACC, actor="client", note="a cancel stopped it first"),
    Row("close", INSERTED, INSERTED, ACC, actor="client", note="insertion is not undone"),
    *(Row("close", s, s, ACC, actor="client") for s in (*SETTLED, CLOSED_OUT)),
    Row("cancel_request", CLOSED_OUT, CLOSED_OUT, ACC, actor="client"),
    Row("withdraw", CANCEL_REQUESTED, WITHDRAWN, ACTIVE, note="-32800"),
    Row("withdraw", COVERED, WITHDRAWN, CANCEL, note="-32800"),
    Row("withdraw", CLOSED_OUT, WITHDRAWN, ACC, note="-32800"),
)


OWN_REASON: str = "rejected-after-cancel-request"
"""The reading (``properties.readings``) the guard ``own_reason`` answers for: whether a prompt
the Client withdrew with ``$/cancel_request`` may still be refused for the Agent's own reason
(``own-reason``) or only answered -32800 (``cancelled-only``)."""


SPEC = MachineSpec(
    name="prompt",
    title="Prompt submission",
    per="session/prompt request",
    states=STATES,
    initial=RECEIVED,
    final=(ANSWERED, REJECTED, WITHDRAWN),
    rows=ROWS,
    guards=flags(oldest_held=True, busy_only=False, own_reason=False),
    guard_rules={"oldest_held": between.HELD_IN_ORDER.rule, "busy_only": "ACTIVE-03", "own_reason": "REJ-03"},
    forbidden={
        "hold": between.HELD_IN_ORDER.rule,
        "insert": "ACC-01",
        (COVERED, "insert"): "CANCEL-02",
        "answer": "ACC-01",
        (RECEIVED, "answer"): "ACC-02",
        (HELD, "answer"): "ACC-02",
        (CANCEL_REQUESTED, "answer"): "ACC-02",
        (COVERED, "answer"): "CANCEL-02",
        "reject": "REJ-01",
        (INSERTED, "reject"): "ACC-03",
        (COVERED, "reject"): "CANCEL-02",
        (CLOSED_OUT, "insert"): between.CLOSE_STOPS_PROMPTS.rule,
        (CLOSED_OUT, "answer"): between.CLOSE_STOPS_PROMPTS.rule,
        (CLOSED_OUT, "reject"): between.CLOSE_STOPS_PROMPTS.rule,
        "close": between.CLOSE_STOPS_PROMPTS.rule,
        "cancel_request": "REJ-03",
        "cover": "CANCEL-02",
        "withdraw": "REJ-03",
        (INSERTED, "withdraw"): "ACC-03",
        (ANSWERED, "reject"): "ACC-03",
        (ANSWERED, "withdraw"): "ACC-03",
    },
    hidden=("hold", "insert"),
    eventually={
        **{state: "REJ-01" for state in PENDING},
        CLOSED_OUT: between.CLOSE_STOPS_PROMPTS.rule,
        INSERTED: "ACC-01",
    },
    description="A session/prompt request from receipt to its one answer.",
)
