"""One ``elicitation/create`` request of a session, from the Agent's ask to its end.

Theory of operation
-------------------
The Agent asks the Client for input in one of two modes: a form the Client renders (``form``)
or a URL the user visits outside the Client (``url``). The request is pending until the Client
answers with accept, decline or cancel. In form mode an accept ends it. In URL mode an accept
only says the user agreed to go: the user still has to finish outside, so the request waits
(``awaiting_completion``) until the Agent reports the external completion with
``elicitation/complete`` (Lifecycle examples: an accept in URL mode leaves requires_action as it
is). A completion is only ever of a URL elicitation the Client has not declined or cancelled. It may
come before the Client's accept (``completed_unanswered``): the text orders the two nowhere, and
an Agent whose server sees the user finish can report it while the accept is still on its way
(both directions race on the wire, and a proxy records either order); the accept then ends it.
For the same reason a completion recorded after a decline or cancel of a URL elicitation may
have crossed that answer, and changes nothing. A completion of a form, of one completed already,
or of one the Agent withdrew is a breach (EX-01).

Like a permission request, an elicitation that blocks foreground work keeps that work blocked
(requires_action) while it is pending or awaiting its completion; the blocking itself is the
Agent's (``simulator.peers.agent``: ``_blocked``), never this table's. When cancelled foreground work
stops, the Agent stops waiting for its elicitations (``abandon``, a hidden step) and owes the
Client a withdrawal with ``$/cancel_request`` so it can dismiss the prompt (``eventually``); when
it falls due, at the idle confirming the cancellation or only at the end, is ``model.between``
cancelled_elicitations_withdrawn's (the reading permission-withdrawal-deadline, as for permission
requests). One accepted in URL mode and awaiting its external completion has its answer: it is
no longer pending, owes no withdrawal, and its completion is late (``abandon`` makes it late). The
Agent may also withdraw a pending elicitation it no longer needs. Answers and external
completions that arrive after the work ended are late: they are ignored (``late``), never used
to resume the work.

Rows come from: Lifecycle examples; Waiting for user action; Cancellation.

Must not know: foreground state (a request alone never changes it), tool calls, prompts,
JSON-RPC ids, or which modes the Client advertised (a monitor judges that).
"""

from __future__ import annotations

from model import between
from model.core import MachineSpec, Row, flags

PENDING, AWAITING, ABANDONED, WITHDRAWN = "pending", "awaiting_completion", "abandoned", "withdrawn"
EARLY = "completed_unanswered"
ACCEPTED, COMPLETED, DECLINED, CANCELLED, LATE = "accepted", "completed", "declined", "cancelled", "late"
STATES = (PENDING, AWAITING, EARLY, ABANDONED, WITHDRAWN, ACCEPTED, COMPLETED, DECLINED, CANCELLED, LATE)
MODES = ("form", "url")
"""The elicitation modes, as the schema names them (``mode`` of ``elicitation/create``)."""
BLOCKING = frozenset({PENDING, AWAITING})
"""States in which an elicitation still holds its foreground work blocked on the user."""

EX = "Lifecycle examples"
WAIT = "Waiting for user action"
CANCEL = "Cancellation"


ROWS = (
    Row("accept", PENDING, ACCEPTED, EX, actor="client", guard="!url", note="form: the content"),
    Row("accept", PENDING, AWAITING, EX, actor="client", guard="url", note="url: user finishes outside"),
    Row("decline", PENDING, DECLINED, EX, actor="client"),
    Row("cancel", PENDING, CANCELLED, EX, actor="client"),
    Row("complete", AWAITING, COMPLETED, EX, note="elicitation/complete"),
    Row("complete", PENDING, EARLY, EX, guard="url", note="completion ahead of the accept"),
    Row("accept", EARLY, COMPLETED, EX, actor="client", note="the accept it crossed"),
    Row("decline", EARLY, DECLINED, EX, actor="client", note="the answer it crossed"),
    Row("cancel", EARLY, CANCELLED, EX, actor="client", note="the answer it crossed"),
    Row("complete", DECLINED, DECLINED, EX, guard="url", note="it crossed the decline on the wire"),
    Row("complete", CANCELLED, CANCELLED, EX, guard="url", note="it crossed the cancel on the wire"),
    Row("withdraw", PENDING, WITHDRAWN, CANCEL, note="$/cancel_request: no longer needed"),
    Row("abandon", PENDING, ABANDONED, CANCEL, note="its work was cancelled"),
    Row("abandon", AWAITING, LATE, CANCEL, note="its work was cancelled: a completion is ignored"),
    Row("withdraw", ABANDONED, WITHDRAWN, CANCEL, note="$/cancel_request"),
    Row("accept", ABANDONED, LATE, WAIT, actor="client", note="late answer, ignored"),
    Row("decline", ABANDONED, LATE, WAIT, actor="client", note="late answer, ignored"),
    Row("cancel", ABANDONED, CANCELLED, CANCEL, actor="client"),
    Row("accept", WITHDRAWN, LATE, WAIT, actor="client", note="late answer, ignored"),
    Row("decline", WITHDRAWN, LATE, WAIT, actor="client", note="late answer, ignored"),
    Row("cancel", WITHDRAWN, CANCELLED, CANCEL, actor="client"),
    Row("complete", LATE, LATE, CANCEL, note="external completion after the work ended, ignored"),
)

SPEC = MachineSpec(
    name="elicitation",
    title="Elicitation",
    per="elicitation/create request",
    states=STATES,
    initial=PENDING,
    final=(ACCEPTED, COMPLETED, DECLINED, CANCELLED, LATE),
    rows=ROWS,
    forbidden={
        "accept": between.ONE_ANSWER.rule,
        "decline": between.ONE_ANSWER.rule,
        "cancel": between.ONE_ANSWER.rule,
        "complete": "EX-01",
        "withdraw": between.CANCELLED_ELICITATIONS_WITHDRAWN.rule,
        "abandon": between.CANCELLED_ELICITATIONS_WITHDRAWN.rule,
    },
    guards=flags(url=False),  # the elicitation is in URL mode (the caller passes ``{"url": ...}``)
    eventually={ABANDONED: between.CANCELLED_ELICITATIONS_WITHDRAWN.rule},
    description="An elicitation (form or URL mode) until its answer, completion or withdrawal.",
)
