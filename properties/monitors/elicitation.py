"""The elicitation monitor: ``elicitation/create`` requests, their answers, their completions and
their withdrawal ("Lifecycle examples", "Waiting for user action", "Cancellation", "5. Tool
invocation and status reporting").

What it judges, and why it can
------------------------------
- The elicitation table (``model.elicitation``), fired with what the wire shows: the Client's
  answer (``accept``, ``decline``, ``cancel``; an action the schema does not name is handled as
  ``cancel``, as the schema tells Agents to), the Agent's ``elicitation/complete`` (by
  ``elicitationId``) and its ``$/cancel_request`` (by request ID). As for permission requests,
  only what the Agent cannot do by a race is reported from the wire: a completion of an
  elicitation not accepted in URL mode (the ``complete`` cell's rule, EX-01: the Agent learns of
  an accept only from the answer, which the proxy has seen by then). A second answer, or a
  withdrawal of an elicitation already answered (the answer may have crossed it), leaves the
  state as it is here: those cells bind the simulated peers (the model), as the permission
  table's do.
- The composition with cancellation, as for permission requests (``properties.monitors.tools``):
  an elicitation still pending when the idle confirming a cancellation ends the work is
  abandoned by the Agent (the table's hidden ``abandon``; one awaiting its external completion
  becomes late), unless it is about a tool call the latest background list names (work the
  cancel does not cover). An abandoned one is owed a withdrawal (the table's ``eventually``,
  CANCEL-19), judged at the end; a Client's answer resolves it too.
- ``model.between`` LATE_ANSWERS_IGNORED (CANCEL-10): an elicitation about a tool call
  (``toolCallId``) abandoned at the idle confirming a cancellation, that the Client then accepts
  or the Agent then reports completed (late), after which that tool call goes ``in_progress``:
  the late answer or completion was used to run the cancelled work. An elicitation tied to no
  tool call has nothing on the wire its use would move (new work after it may be the Agent's
  own, "Foreground and background work").
- TOOL-07: an elicitation in a mode the Client's ``initialize`` did not advertise
  (``clientCapabilities``' ``elicitation.form`` / ``elicitation.url``). Judged only when that
  ``initialize`` is in the transcript; without it, the capabilities are unknown.

The composition with foreground state (an elicitation that blocks foreground work: requires_action,
then running when progress resumes) is the foreground monitor's, as for permission requests: a
request alone never changes the state, and resuming is judged by the output that follows.

Resume windows: elicitations are requests, never replayed; nothing here changes in a window.

Must not know: prompts, messages; of tool calls, only the in_progress of one a late answer
freed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from model import between as bw
from model import elicitation as em
from model.core import ProtocolViolation
from properties.monitor import Message, on

if TYPE_CHECKING:
    from properties.engine import MonitorSet

from properties.monitors.common import ACTIVE
from properties.monitors.facts import FactsMonitor

_ANSWERS = frozenset({"accept", "decline", "cancel"})
_JUDGED = "complete"
"""The one trigger whose refusal is reported from the wire (see the module docstring)."""
ADVERTISED = bw.ADVERTISED_MODES.rule
"""Elicitations only in the modes the Client advertised (``model.between`` ADVERTISED_MODES)."""

# an elicitation: request id -> (session, mode, state, tool call or None, elicitationId or None, line)
_Elicit = tuple[str, str, str, Any, Any, int]


class ElicitationMonitor(FactsMonitor):
    """Elicitation requests (see module docstring)."""

    RULES = (
        em.SPEC.forbidden[_JUDGED],
        *em.SPEC.eventually.values(),
        ADVERTISED,
        bw.LATE_ANSWERS_IGNORED.rule,
    )
    TOLERATES = ("EX-02", "CANCEL-20")
    TABLES = (em.SPEC,)

    def __init__(self, owner: MonitorSet) -> None:
        super().__init__(owner)
        self.elicits: dict[Any, _Elicit] = {}
        self.modes: frozenset[str] | None = None
        """The modes the Client's initialize advertised (None: its initialize not seen)."""
        self.owed: dict[Any, int] = {}
        """Abandoned elicitations owed a withdrawal: request id -> line of the idle."""
        self.ended: frozenset[Any] = frozenset()
        """Elicitations about a tool call abandoned with cancelled work (request ids)."""
        self.late: dict[tuple[str, Any], int] = {}
        """(session, tool call) -> line of the late answer or completion that came for it."""

    # -- handlers ------------------------------------------------------------------------
    @on("client-request", "initialize")
    def _initialize(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        caps = params.get("capabilities")
        found = caps.get("elicitation") if type(caps) is dict else None
        if type(found) is not dict:
            self.modes = frozenset()
            return
        self.modes = frozenset(m for m in em.MODES if type(found.get(m)) is dict)

    @on("agent-request", "elicitation/create")
    def _ask(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        mode = params.get("mode")
        if sid is None or type(mode) is not str:
            return  # a request-scoped elicitation (outside a session) or no mode: not judged here
        self._ex[ADVERTISED] += 1
        if self.modes is not None and not self.between.mode_advertised(mode, self.modes):
            shown = ", ".join(sorted(self.modes)) or "none"
            self.breach(
                ADVERTISED, line, sid,
                f"elicitation {msg['id']!r} in {mode} mode, which the Client's initialize did not "
                f"advertise (advertised: {shown}) (agent broke {ADVERTISED})",
                msg,
            )  # fmt: skip
        self.elicits[msg["id"]] = (
            sid,
            mode,
            em.SPEC.initial,
            params.get("toolCallId"),
            params.get("elicitationId"),
            line,
        )

    @on("client-response", "elicitation/create")
    def _answered(self, sid: str | None, request: Message, line: int, msg: Message) -> None:
        rid = msg["id"]
        rec = self.elicits.get(rid)
        if rec is None:
            return
        self.owed.pop(rid, None)
        result = msg.get("result")
        action = result.get("action") if type(result) is dict else None
        if "error" in msg:
            action = "cancel"  # an error answer ends the request like a cancel
        trigger = action if action in _ANSWERS else "cancel"  # the schema: handle as cancel
        self._fire(rid, rec, trigger, line, msg)
        if trigger == "accept" and rid in self.ended:
            self._freed(rec, line)

    @on("agent-notification", "elicitation/complete")
    def _complete(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        eid = params.get("elicitationId")
        for rid, rec in self.elicits.items():
            if rec[4] == eid and rec[1] == "url":
                self._fire(rid, rec, "complete", line, msg)
                if rid in self.ended:
                    self._freed(rec, line)
                return

    @on("agent-notification", "$/cancel_request")
    def _withdrawn(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        rid = params.get("requestId")
        rec = self.elicits.get(rid) if type(rid) is int or type(rid) is str else None
        if rec is not None:
            self.owed.pop(rid, None)
            self._fire(rid, rec, "withdraw", line, msg)

    @on("update", "state_update")
    def _state(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        """The idle confirming a cancellation: the cancelled work's elicitations are abandoned."""
        if not self.elicits or upd.get("state") != "idle":
            return
        fs = self.facts.sessions.get(sid)
        if fs is None or fs.state not in ACTIVE or fs.resuming or not fs.cancel_line:
            return
        keys = self.facts.background(upd)
        listed = frozenset(keys) if keys is not None else (fs.listed or frozenset())
        spec = self.table(em.SPEC)
        for rid, rec in list(self.elicits.items()):
            if rec[0] != sid or rec[2] not in em.BLOCKING or ("tool_call", rec[3]) in listed:
                continue
            after = spec.successor(rec[2], "abandon")
            if after is None:
                continue
            self.elicits[rid] = (*rec[:2], after, *rec[3:])
            if type(rec[3]) is str:
                self.ended = self.ended | {rid}
            owes = spec.eventually.get(after)
            if owes is not None:
                self._ex[owes] += 1
                if owes not in spec.relaxed:
                    self.owed[rid] = line

    def _freed(self, rec: _Elicit, line: int) -> None:
        """A late answer or completion came for an elicitation of cancelled work about a tool call."""
        self._ex[bw.LATE_ANSWERS_IGNORED.rule] += 1
        self.late[(rec[0], rec[3])] = line

    @on("update", "tool_call_update")
    def _tool(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        """The tool call a late answer came for goes in_progress: the answer was used."""
        if not self.late:
            return
        key = (sid, upd.get("toolCallId"))
        if upd.get("status") != "in_progress" or key not in self.late or self.facts.replaying(sid):
            return
        since = self.late.pop(key)
        rule = bw.LATE_ANSWERS_IGNORED.rule
        self.breach(
            rule, line, sid,
            f"tool call {key[1]!r} went in_progress after the late answer or completion at line "
            f"{since} of an elicitation of the cancelled work about it: the Agent ignores it rather "
            f"than run the cancelled work (model.between late_answers_ignored, {rule})",
            msg,
        )  # fmt: skip

    def _fire(self, rid: Any, rec: _Elicit, trigger: str, line: int, msg: Message) -> None:
        spec = self.table(em.SPEC)
        state = rec[2]
        ctx = {"url": rec[1] == "url"}
        if trigger != _JUDGED:  # not reported from the wire (see the module docstring)
            self.elicits[rid] = (*rec[:2], spec.successor(state, trigger, ctx) or state, *rec[3:])
            return
        self._ex[spec.rule_of(state, trigger)] += 1
        try:
            after = spec.fire(state, trigger, ctx)
        except ProtocolViolation as broke:
            self.breach(
                broke.rule, line, rec[0],
                f"elicitation {rid!r} ({rec[1]} mode) is {state}: the model has no {trigger!r} there "
                f"({broke.actor} broke {broke.rule})",
                msg,
            )  # fmt: skip
            return
        self.elicits[rid] = (*rec[:2], after, *rec[3:])

    # -- end -----------------------------------------------------------------------------
    def at_end(self, quiescent: bool) -> None:
        spec = self.table(em.SPEC)
        for rid, line in self.owed.items():
            rec = self.elicits[rid]
            rule = spec.eventually.get(rec[2])
            if rule is not None:
                self.eventually(
                    rule, quiescent, line, rec[0],
                    f"elicitation {rid!r} of the cancelled work was neither withdrawn with "
                    "$/cancel_request nor answered",
                )  # fmt: skip

    # -- explorers -----------------------------------------------------------------------
    def state_key(self) -> Any:
        return (
            frozenset((rid, rec[:5]) for rid, rec in self.elicits.items()),
            self.modes,
            frozenset(self.owed),
            self.ended,
            frozenset(self.late),
        )
