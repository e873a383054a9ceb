"""The response monitor: every request gets exactly one response (JSON-RPC 2.0 under ACP).

What is certain in proxy order: a request line is when the Agent received it (client requests)
or sent it (its own), and a response line when it was sent or received, so a second response to
an id already answered is a plain fact, and a breach of its sender:

- INTRO-02: a second response to the same request (the rule as the permission table states it:
  a permission request answered once, ``model.permission``, whose table is fired for a second
  answer to ``session/request_permission``; every other request is held to the same rule);
- when the request is a ``session/prompt`` that was answered successfully and the second response
  is an error, the prompt table's rule for an error after a success instead (the cell of the
  table's answered state, ``model.prompt``);
- eventually, ``model.between`` REQUESTS_ANSWERED: a request of either side never answered
  (``session/resume``, ``session/close``, ``initialize``, ``session/new``, a custom method, ...),
  open at the end of the input, a breach at the last line of one declared complete for the
  request's session (the connection, for a request that names none). Not the requests whose own
  table follows them to their answer (``TABLED``: a prompt, the prompt table's REJ-01 or ACC-01;
  a permission request or an elicitation, whose tables owe an answer or a withdrawal
  once their work was stopped, CANCEL-07 and CANCEL-19, and nothing while the user has not
  answered yet).

The reader passes second responses on (a response to an id never requested is unusable input).
The other monitors see only the first response of a request. Which request a response answers
is the monitor set's pairing (``properties.engine``): this monitor takes every response (the
``*`` handlers) and keeps, per side and id, how the latest request with that id was answered (a
response to an id used again pairs with the new request: the set's pairing, not this record).
The requests still unanswered at the end are the set's own record of requests awaiting a
response (``MonitorSet.pending_client`` / ``pending_agent``), read there, not kept again here.

Must not know: what any request is about beyond its method (and, for a prompt, the prompt
table's cell for an error after a success).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from model import between as bw
from model import permission as pm
from model import prompt as prm
from model.core import ProtocolViolation
from properties.monitor import Message, Monitor, on

if TYPE_CHECKING:
    from properties.engine import MonitorSet


_ONCE = pm.SPEC.rule_of(pm.SELECTED, "select")
"""One response per request, as the permission table states it (a request answered once)."""
TABLED = frozenset({"session/prompt", "session/request_permission", "elicitation/create"})
"""Requests a machine table follows to their answer (``model.prompt``, ``model.permission``,
``model.elicitation``): what they owe at the end is the table's."""
_ANSWERED = bw.REQUESTS_ANSWERED.rule
_KINDS: dict[tuple[str, bool], tuple[str, bool]] = {}
"""One (method, success) pair per kind of answer, for every set of the process: a long transcript
keeps one entry per answered request, and this spares each its own pair and method text."""


class ResponseMonitor(Monitor):
    """One response per request (see module docstring)."""

    RULES = (_ONCE, prm.SPEC.rule_of(prm.ANSWERED, "reject"))  # (_ANSWERED is _ONCE's rule)
    TABLES = (prm.SPEC, pm.SPEC)

    def __init__(self, owner: MonitorSet) -> None:
        super().__init__(owner)
        # (the side that sent the request, its id) -> (method, success) of its first answer (an
        # id used again once answered: of the latest request's first answer)
        self.answered: dict[tuple[str, Any], tuple[str, bool]] = {}

    @on("agent-response", "*")
    def _agent_answers(self, sid: str | None, request: Message | None, line: int, msg: Message) -> None:
        self._answers("agent", "client", request, line, msg)

    @on("client-response", "*")
    def _client_answers(self, sid: str | None, request: Message | None, line: int, msg: Message) -> None:
        self._answers("client", "agent", request, line, msg)

    def _answers(self, sender: str, asker: str, request: Message | None, line: int, msg: Message) -> None:
        rid = msg["id"]
        success = "result" in msg
        if request is not None:  # the first response
            if success or "error" in msg:
                kind = (request["method"], success)
                self.answered[(asker, rid)] = _KINDS.setdefault(kind, kind)
                self._ex[_ONCE] += 1
            return
        first = self.answered.get((asker, rid))
        if first is None:
            return
        asked, first_ok = first
        if asked == "session/prompt" and first_ok and not success:
            spec = self.table(prm.SPEC)
            self._ex[spec.rule_of(prm.ANSWERED, "reject")] += 1
            try:
                spec.fire(prm.ANSWERED, "reject")
            except ProtocolViolation as broke:
                self.breach(
                    broke.rule,
                    line,
                    None,
                    f"session/prompt {rid!r} was answered successfully (its message was inserted) "
                    f"and is now answered again with an error: the prompt table has no 'reject' once "
                    f"answered ({broke.actor} broke {broke.rule})",
                    msg,
                )
            return
        rule = _ONCE
        if asked == "session/request_permission":
            spec = self.table(pm.SPEC)
            try:
                spec.fire(pm.SELECTED, "select")
                return  # a variant lets the Client answer again
            except ProtocolViolation as broke:
                rule = broke.rule
        self.breach(
            rule, line, None,
            f"{sender} sends a second response to the {asked} request {rid!r} of the {asker}", msg,
        )  # fmt: skip

    def at_end(self, quiescent: bool) -> None:
        """Every request still awaiting its response that ``Rules.answer_owed_at_end`` holds to it
        (its own table's obligation for a request in ``TABLED``), in the order of their lines."""
        owner = self._owner
        owed = (self.between.answer_owed_at_end(False), self.between.answer_owed_at_end(True))
        waiting = [
            (line, asker, rid, request["method"], sid)
            for asker, pending in (("client", owner.pending_client), ("agent", owner.pending_agent))
            for rid, (request, sid, line) in pending.items()
            if owed[request["method"] in TABLED]
        ]
        for line, asker, rid, method, sid in sorted(waiting, key=lambda w: w[0]):
            answerer = "agent" if asker == "client" else "client"
            self.eventually(
                _ANSWERED,
                quiescent,
                line,
                sid,
                f"{answerer} never answered the {method} request {rid!r} of the {asker}",
            )

    def state_key(self) -> Any:
        return frozenset(self.answered.items())
