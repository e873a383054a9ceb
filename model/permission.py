"""One ``session/request_permission`` request, from the Agent's ask to the Client's answer.

Theory of operation
-------------------
The Agent asks; the request is pending until the Client answers with a selected option or the
cancelled outcome, or with a JSON-RPC error instead of a result (``errored``: nothing was
approved, so the Agent treats it as declined). The Agent may withdraw it with
``$/cancel_request`` (the Client still answers, usually with the cancelled outcome). When the
Agent stops the foreground work the request belongs to, it stops waiting and treats the request
as not approved; a late answer is then ignored rather than used to resume that work. A request
is resolved once answered. A request not approved is owed a withdrawal (or the Client's answer),
so the Client can dismiss it (``eventually``); when it falls due, at the idle confirming the
cancellation or only at the end, is ``model.between`` cancelled_permissions_withdrawn's (the
reading permission-withdrawal-deadline).

Rows come from: 5. Tool invocation and status reporting; Waiting for user action; Cancellation.

Must not know: foreground state (a request alone never changes it), tool call status.
"""

from __future__ import annotations

from model.core import MachineSpec, Row

PENDING, WITHDRAWN, NOT_APPROVED, SELECTED, CANCELLED, ERRORED = (
    "pending",
    "withdrawn",
    "not_approved",
    "selected",
    "cancelled",
    "errored",
)
STATES = (PENDING, WITHDRAWN, NOT_APPROVED, SELECTED, CANCELLED, ERRORED)

TOOL = "5. Tool invocation and status reporting"
CANCEL = "Cancellation"
WAIT = "Waiting for user action"

ROWS = (
    Row("select", PENDING, SELECTED, TOOL, actor="client", note="allow or deny option"),
    Row("answer_cancelled", PENDING, CANCELLED, CANCEL, actor="client"),
    Row("withdraw", PENDING, WITHDRAWN, CANCEL, note="$/cancel_request"),
    Row("abandon", PENDING, NOT_APPROVED, CANCEL, note="its work was cancelled"),
    Row("withdraw", NOT_APPROVED, WITHDRAWN, CANCEL),
    Row("select", WITHDRAWN, SELECTED, WAIT, actor="client", note="late answer, ignored"),
    Row("answer_cancelled", WITHDRAWN, CANCELLED, CANCEL, actor="client"),
    Row("select", NOT_APPROVED, SELECTED, WAIT, actor="client", note="late answer, ignored"),
    Row("answer_cancelled", NOT_APPROVED, CANCELLED, CANCEL, actor="client"),
    Row("error", PENDING, ERRORED, WAIT, actor="client", note="a JSON-RPC error, no outcome"),
    Row("error", WITHDRAWN, ERRORED, WAIT, actor="client"),
    Row("error", NOT_APPROVED, ERRORED, WAIT, actor="client"),
)

SPEC = MachineSpec(
    name="permission",
    title="Permission request",
    per="session/request_permission request",
    states=STATES,
    initial=PENDING,
    final=(SELECTED, CANCELLED, ERRORED),
    rows=ROWS,
    forbidden={
        "select": "INTRO-02",
        "answer_cancelled": "INTRO-02",
        "error": "INTRO-02",
        "withdraw": "CANCEL-07",
        "abandon": "CANCEL-06",
    },
    eventually={NOT_APPROVED: "CANCEL-07"},
    description="A permission request until the Client's one answer.",
)
