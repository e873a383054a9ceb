"""The prompt monitor: every session/prompt gets one fitting answer, and user messages add up.

Owns the rules of "2. Prompt accepted", "Prompts that are never inserted", "Prompts during active
work" and the prompt side of "Cancellation", "1. User message" (USER-04) and "Message IDs"
(MSGID-01 for user messages).

What is certain in proxy order, and why
---------------------------------------
*Insertion is not on the wire.* A user message names its messageId, but the only thing that ties
a messageId to a request is that request's success response. So this monitor never guesses which
request a user message belongs to; it counts. Whether a live user message (outside a
``session/resume`` replay window) always reports the insertion of a session/prompt of the same
session is the reading ``unaccounted-user-message`` (``properties.readings``). Under its default,
``prompt-only``, it does; the only other source the spec discusses is a delegated task in a child
session, which it discourages (SDM-05): a session that never had a prompt gets SDM-05 for a user
message, never anything stronger. Under ``other-sources`` the counting below proves nothing and
reports nothing (ACC-03, ACC-06, REJ-02 and SDM-05 findings name the reading).

A prompt can claim a user message only if it was received before the message was first reported
(no update may precede insertion, and insertion follows receipt). Keep, per session, the user
messages that no success response has claimed yet (with the line each was first seen) and the
prompts still waiting for an answer (with their receipt line). Each waiting prompt can claim at
most one of those messages, and only one first seen after its receipt: by Hall's theorem on
these nested candidate sets, the number of messages that can never be claimed is
``d = max_k (k - #waiting prompts received before the k-th oldest unclaimed message)``. ``d`` can
only grow through one of three events, and each increase is a certain breach:

- an error response removes a prompt that every complete matching needed: that prompt was
  inserted and then answered with an error (ACC-03);
- a new user message nobody can claim: its submission was answered with an error (REJ-02) when a
  prompt of the session received before it got an error, else it is an update about a user
  message under an ID no response returned (ACC-06); SDM-05 in a session without prompts;
- a success response whose messageId is not among the waiting messages leaves one stranded: the
  user message was reported under another ID than the response returned (ACC-06).

Also certain: a success response naming an ID first reported before the request was received
(ACC-07: the update preceded insertion); the same messageId returned for two requests of a
session (ACC-09); a success without a string messageId (ACC-04); a success for a prompt whose
content the Agent's initialize answer does not allow, or an error code other than -32602/-32800
for it (USER-04).

*-32800.* A prompt still waiting when the Agent received ``session/cancel`` (CANCEL-02),
``session/close`` (ACC-13) or a ``$/cancel_request`` naming it (REJ-03) must be answered with
-32800 or, if it had been inserted already, with success; another error code is a breach. A
prompt received after a ``session/cancel`` of its session and answered -32800 without any later
cancel, close or ``$/cancel_request`` covering it breaks CANCEL-16.
A prompt with unadvertised content that a session/cancel covers: which code answers it is the
reading ``cancelled-invalid-prompt`` (default ``cancelled``: -32800 only; ``either``: -32800 or
-32602; ``invalid``: -32602 only, USER-04 reports -32800).

*Held prompts.* Under the reading ``prompt-ahead-of-held=receipt-order`` (not the default), a
prompt answered with success while a prompt of the session received before it was still waiting
and not yet covered by a cancel, close or ``$/cancel_request``, when that earlier prompt is then
answered -32800 (so it was never inserted), was inserted ahead of it: ACTIVE-02.

*Busy-only refusals* (the prompt table's guard ``busy_only``) are not on the wire: the Agent's
reason for a refusal is its own. A well-formed prompt refused with -32600 ("not a valid
request") while the session reports running or requires_action is reported as a suspicion (kind
``suspect``, a warning) of that rule.

*Replay.* User messages inside a resume window are replayed history, not insertions. When the
session is seen from its creation (``MonitorSet.from_start`` or a ``session/new`` response in
the stream), a replayed user message under an ID never seen in the session breaks ACC-11.

*Eventually.* A prompt never answered: ACC-01 when an unclaimed user message reported after it
exists (it was probably inserted), else REJ-01. A returned messageId never reported by a
``user_message`` or ``user_message_chunk``: ACC-05 (not for sessions that were closed).

Must not know: foreground state, tool calls, background work, files.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from model import prompt as prm
from properties.engine import Handler, Message, MonitorSet, rule_group
from properties.monitors.common import INVALID_PARAMS, INVALID_REQUEST, REQUEST_CANCELLED
from properties.monitors.facts import Facts, SessionMonitor
from properties.readings import (
    CANCELLED_INVALID_PROMPT,
    PROMPT_AHEAD_OF_HELD,
    UNACCOUNTED_USER_MESSAGE,
)

_UNACCOUNTED = (UNACCOUNTED_USER_MESSAGE,)
BUSY_ONLY = prm.SPEC.guard_rules["busy_only"]
"""The rule the prompt table's guard ``busy_only`` states (refused only because work is
active): suspected here, never proven from the wire."""

# prompt record: (session, receipt line, cover rule or "", received after a cancel, bad types)
_Prompt = tuple[str, int, str, bool, tuple[str, ...]]


class _Session:
    """One session's prompt record."""

    __slots__ = (
        "cancel_seen",
        "claimed",
        "first_error",
        "pending",
        "prompted",
        "replay_unknown",
        "reported_d",
        "unclaimed",
        "unreported",
    )

    def __init__(self) -> None:
        self.pending: dict[Any, int] = {}  # request id -> receipt line (receipt order)
        self.unclaimed: dict[str, int] = {}  # user message ID -> first live line (in order)
        # every messageId a success returned in the session -> the request id it answered;
        # kept while the session lives (ACC-09 and MSGID-01 may name any of them)
        self.claimed: dict[str, Any] = {}
        self.unreported: dict[str, int] = {}  # claimed messageId -> response line, no report yet
        self.reported_d = 0
        self.prompted = False
        self.cancel_seen = False
        self.first_error = 0  # receipt line of the earliest prompt answered with an error
        self.replay_unknown: set[str] = set()

    def copy(self) -> _Session:
        new = _Session.__new__(_Session)
        new.pending = dict(self.pending)
        new.unclaimed = dict(self.unclaimed)
        new.claimed = dict(self.claimed)
        new.unreported = dict(self.unreported)
        new.reported_d = self.reported_d
        new.prompted = self.prompted
        new.cancel_seen = self.cancel_seen
        new.first_error = self.first_error
        new.replay_unknown = set(self.replay_unknown)
        return new

    def key(self) -> tuple[Any, ...]:
        """Relative form: waiting prompts and unclaimed messages merged in line order (all the
        checks compare), no line numbers."""
        merged = sorted(
            [(line, 0, repr(rid)) for rid, line in self.pending.items()]
            + [(line, 1, mid) for mid, line in self.unclaimed.items()]
        )
        return (
            tuple((kind, name) for _, kind, name in merged),
            frozenset(self.claimed),
            frozenset(self.unreported),
            self.reported_d,
            self.prompted,
            self.cancel_seen,
            bool(self.first_error),
            frozenset(self.replay_unknown),
        )

    def deficiency(self) -> int:
        """How many unclaimed user messages no waiting prompt can ever claim (see docstring)."""
        unclaimed = self.unclaimed
        if not unclaimed:
            return 0
        receipts = list(self.pending.values())
        n = len(receipts)
        j = worst = 0
        for k, first_seen in enumerate(self.unclaimed.values(), 1):
            while j < n and receipts[j] < first_seen:
                j += 1
            if k - j > worst:
                worst = k - j
        return worst


class PromptMonitor(SessionMonitor["_Session"]):
    """Answers to session/prompt and the accounting of user messages (see module docstring)."""

    RULES = (
        "ACC-01",
        "ACC-03",
        "ACC-04",
        "ACC-05",
        "ACC-06",
        "ACC-07",
        "ACC-09",
        "ACC-11",
        "ACC-13",
        "REJ-01",
        "REJ-02",
        "REJ-03",
        "CANCEL-02",
        "CANCEL-16",
        "USER-04",
        "SDM-05",
        "MSGID-01",
        "ACTIVE-02",
    )
    TOLERATES = ("USER-02", "ACTIVE-01")
    SESSION = _Session
    REQUIRES = (Facts,)

    def __init__(self, owner: MonitorSet) -> None:
        super().__init__(owner)
        self.prompts: dict[Any, _Prompt] = {}
        self.overtaken: dict[Any, tuple[Any, int]] = {}
        """Under ``prompt-ahead-of-held=receipt-order``: waiting prompt -> (the later prompt
        answered with success while it waited, that response's line)."""

    def handlers(self) -> Iterable[tuple[str, str, Handler]]:
        return (
            ("client-request", "session/prompt", self._prompt),
            ("agent-response", "session/prompt", self._answer),
            ("client-notification", "session/cancel", self._cancel),
            ("client-request", "session/close", self._close),
            ("client-notification", "$/cancel_request", self._cancel_request),
            ("update", "user_message", self._user),
            ("update", "user_message_chunk", self._user),
        )

    # -- requests ------------------------------------------------------------------------
    def _prompt(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        rid = msg["id"]
        if sid is None or (type(rid) is not int and type(rid) is not str):
            return
        ps = self.sessions.get(sid)
        if ps is None:
            ps = self.sessions[sid] = _Session()
        ps.prompted = True
        facts = self.facts
        # disallowed_types finds nothing before the Agent's initialize answer
        bad = () if facts.prompt_types is None else tuple(facts.disallowed_types(params.get("prompt")))
        self.prompts[rid] = (sid, line, "", ps.cancel_seen, bad)
        ps.pending[rid] = line

    def _cover(self, ps: _Session, rule: str) -> None:
        prompts = self.prompts
        for rid in ps.pending:
            rec = prompts[rid]
            if not rec[2]:
                prompts[rid] = (rec[0], rec[1], rule, rec[3], rec[4])

    def _cancel(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        if sid is not None:
            ps = self._session(sid)
            ps.cancel_seen = True
            self._cover(ps, "CANCEL-02")

    def _close(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        if sid is not None:
            self._cover(self._session(sid), "ACC-13")

    def _cancel_request(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        rid = params.get("requestId")
        if type(rid) is not int and type(rid) is not str:
            return
        rec = self.prompts.get(rid)
        if rec is not None and not rec[2]:
            self.prompts[rid] = (rec[0], rec[1], "REJ-03", rec[3], rec[4])

    # -- answers -------------------------------------------------------------------------
    def _answer(self, sid: str | None, request: Message, line: int, msg: Message) -> None:
        rid = msg["id"]
        rec = self.prompts.pop(rid, None)
        if rec is None:
            return
        sid = rec[0]
        ps = self.sessions[sid]
        del ps.pending[rid]
        if "error" in msg:
            self._gx[_ANSWERED_KEY] += 1
            self._error(ps, sid, rid, rec, line, msg)
            return
        self._success(ps, sid, rid, rec, line, msg)

    def _error(self, ps: _Session, sid: str, rid: Any, rec: _Prompt, line: int, msg: Message) -> None:
        err = msg.get("error")
        code = err.get("code") if type(err) is dict else None
        cover = rec[2]
        invalid = bool(rec[4]) and cover == "CANCEL-02"
        alt = self.reading(CANCELLED_INVALID_PROMPT) if invalid else "cancelled"
        if self.overtaken:
            ahead = self.overtaken.pop(rid, None)
            if ahead is not None and code == REQUEST_CANCELLED:
                self._ex["ACTIVE-02"] += 1
                self.breach(
                    "ACTIVE-02", line, sid,
                    f"prompt {rid!r} was never inserted (answered -32800), yet prompt {ahead[0]!r} "
                    f"received after it was inserted while it waited (success at line {ahead[1]})",
                    msg, (PROMPT_AHEAD_OF_HELD,),
                )
        if cover:
            self._ex[cover] += 1
            if code != REQUEST_CANCELLED and not (alt != "cancelled" and code == INVALID_PARAMS):
                self.breach(
                    cover, line, sid,
                    f"prompt {rid!r} was still waiting when {_COVER_WHAT[cover]} reached the Agent "
                    f"(line {rec[1]} received it) but was answered with error {code}, not -32800",
                    msg, (CANCELLED_INVALID_PROMPT,) if invalid else (),
                )
        elif rec[3]:
            self._ex["CANCEL-16"] += 1
            if code == REQUEST_CANCELLED:
                self.breach(
                    "CANCEL-16", line, sid,
                    f"prompt {rid!r} reached the Agent after a session/cancel and nothing later "
                    "cancelled it, yet it was answered -32800",
                    msg,
                )
        if rec[4]:
            self._ex["USER-04"] += 1
            if code != INVALID_PARAMS and (code != REQUEST_CANCELLED or alt == "invalid"):
                self.breach(
                    "USER-04", line, sid,
                    f"prompt {rid!r} carries content the Agent did not advertise "
                    f"({', '.join(rec[4])}) and was refused with {code}, not -32602",
                    msg, (CANCELLED_INVALID_PROMPT,) if invalid else (),
                )
        if code == INVALID_REQUEST and self.facts.active(sid) and not rec[4]:
            self.suspect(
                BUSY_ONLY, line, sid,
                f"prompt {rid!r} is a well-formed request, yet it was refused with -32600 (not a "
                "valid request) while the session reported active work: this looks like a refusal "
                "only because work is active, which the wire cannot prove (the Agent's reason is "
                "not on it)",
                msg,
            )
        if not ps.first_error or rec[1] < ps.first_error:
            ps.first_error = rec[1]
        self._ex["ACC-03"] += 1
        if self._settle(ps) and self._counting():
            self.breach(
                "ACC-03", line, sid,
                f"prompt {rid!r} was answered with an error after insertion: a user message "
                "reported after it was received can now be claimed by no prompt that may still "
                "succeed",
                msg, _UNACCOUNTED,
            )

    def _success(self, ps: _Session, sid: str, rid: Any, rec: _Prompt, line: int, msg: Message) -> None:
        if self.overtaken:
            self.overtaken.pop(rid, None)  # it was inserted after all
        if ps.pending and self.reading(PROMPT_AHEAD_OF_HELD) == "receipt-order":
            for earlier, received in ps.pending.items():
                if received < rec[1] and not self.prompts[earlier][2]:
                    self.overtaken.setdefault(earlier, (rid, line))
        result = msg.get("result")
        mid = result.get("messageId") if type(result) is dict else None
        if rec[2]:
            self._ex[rec[2]] += 1
        if rec[4]:
            self._ex["USER-04"] += 1
            self.breach(
                "USER-04", line, sid,
                f"prompt {rid!r} carries content the Agent did not advertise ({', '.join(rec[4])}) "
                "but was accepted",
                msg,
            )
        if type(mid) is not str:
            self._gx[_SUCCESS_KEY] += 1
            self.breach(
                "ACC-04", line, sid,
                f"success response to prompt {rid!r} has no string messageId ({mid!r})", msg,
            )
        else:
            self._gx[_RETURNED_KEY] += 1
            other = ps.claimed.get(mid)
            if other is not None:
                self.breach(
                    "ACC-09", line, sid,
                    f"messageId {mid!r} returned for prompt {rid!r} was already returned for "
                    f"prompt {other!r}: distinct submissions need distinct IDs",
                    msg,
                )
            else:
                ps.claimed[mid] = rid
                first = ps.unclaimed.pop(mid, 0)
                if first:
                    self._ex["ACC-07"] += 1
                    if first < rec[1]:
                        self.breach(
                            "ACC-07", line, sid,
                            f"user message {mid!r} was reported at line {first}, before prompt "
                            f"{rid!r} that it answers was received (line {rec[1]})",
                            msg,
                        )
                else:
                    ps.unreported[mid] = line
        if not ps.unclaimed:
            ps.reported_d = 0
        elif self._settle(ps) and self._counting():
            self.breach(
                "ACC-06", line, sid,
                f"prompt {rid!r} returned messageId {mid!r}, but a user message reported after it "
                "was received is under another ID that no waiting prompt can claim",
                msg, _UNACCOUNTED,
            )

    # -- user messages -------------------------------------------------------------------
    def _user(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        mid = upd.get("messageId")
        if type(mid) is not str:
            self._ex["MSGID-01"] += 1
            self.breach("MSGID-01", line, sid, f"{upd['sessionUpdate']} without a string messageId", msg)
            return
        ps = self.sessions.get(sid)
        if ps is None:
            ps = self.sessions[sid] = _Session()
        elif mid in ps.unclaimed:  # (then not in claimed: see _answer)
            self._ex["MSGID-01"] += 1
            return
        elif mid in ps.claimed:
            self._ex["MSGID-01"] += 1
            if ps.unreported:
                ps.unreported.pop(mid, None)
            return
        unclaimed = ps.unclaimed
        fs = self.facts.sessions.get(sid)
        if fs is not None and fs.resuming:
            self._ex["MSGID-01"] += 1
            self._replayed(ps, sid, mid, line, msg)
            return
        unclaimed[mid] = line
        if not ps.prompted:
            rule, why = "SDM-05", "in a session that never received a session/prompt (a delegated task?)"
        elif ps.first_error and ps.first_error < line:
            rule, why = "REJ-02", "and a prompt received before it was answered with an error"
        else:
            self._gx[_NEW_USER_KEY] += 1
            if self._settle(ps) and self._counting():
                self.breach(
                    "ACC-06", line, sid,
                    f"user message {mid!r} reported under an ID that no prompt response returned "
                    "or can still return",
                    msg, _UNACCOUNTED,
                )
            return
        self._ex["MSGID-01"] += 1
        self._ex[rule] += 1
        if self._settle(ps) and self._counting():
            self.breach(rule, line, sid, f"user message {mid!r} reported {why}", msg, _UNACCOUNTED)

    def _replayed(self, ps: _Session, sid: str, mid: str, line: int, msg: Message) -> None:
        if not self.facts.from_start(sid):
            return
        self._ex["ACC-11"] += 1
        if mid not in ps.replay_unknown:
            ps.replay_unknown.add(mid)
            self.breach(
                "ACC-11", line, sid,
                f"session/resume replays user message {mid!r}, an ID never used live in this "
                "session: a replayed message must keep its ID",
                msg,
            )

    def _counting(self) -> bool:
        """Whether an unclaimed user message is a breach (reading ``unaccounted-user-message``)."""
        return self.reading(UNACCOUNTED_USER_MESSAGE) == "prompt-only"

    @staticmethod
    def _settle(ps: _Session) -> bool:
        """Update the session's deficiency; whether it grew (a breach of the caller's rule)."""
        d = ps.deficiency()
        grew = d > ps.reported_d
        ps.reported_d = d
        return grew

    # -- end -----------------------------------------------------------------------------
    def at_end(self, quiescent: bool) -> None:
        for rid, rec in self.prompts.items():
            sid, received = rec[0], rec[1]
            ps = self.sessions[sid]
            inserted = any(first > received for first in ps.unclaimed.values())
            rule = "ACC-01" if inserted else "REJ-01"
            self.eventually(rule, quiescent, received, sid, f"prompt {rid!r} was never answered")
        for sid, ps in self.sessions.items():
            fs = self.facts.sessions.get(sid)
            if fs is not None and fs.closed:
                continue
            for mid, line in ps.unreported.items():
                self.eventually(
                    "ACC-05", quiescent, line, sid,
                    f"messageId {mid!r} was returned, but no user_message or user_message_chunk "
                    "reported it",
                )

    # -- explorers -----------------------------------------------------------------------
    def clone(self, owner: MonitorSet) -> PromptMonitor:
        new = PromptMonitor.__new__(PromptMonitor)
        new._attach(owner)
        new.facts = owner.get(Facts)
        new.prompts = dict(self.prompts)
        new.overtaken = dict(self.overtaken)
        new.sessions = {k: v.copy() for k, v in self.sessions.items()}
        return new

    def state_key(self) -> Any:
        return (
            frozenset((rid, (r[0], r[2], r[3], r[4])) for rid, r in self.prompts.items()),
            tuple(sorted((k, v.key()) for k, v in self.sessions.items())),
            frozenset((rid, o[0]) for rid, o in self.overtaken.items()),
        )


_ANSWERED = ("REJ-01", "ACC-01")
_SUCCESS = (*_ANSWERED, "ACC-04", "ACC-06")
"""Exercised by every success response (with those of every answer)."""
_RETURNED = (*_SUCCESS, "ACC-09", "ACC-05")
"""Exercised by a success response that returns a string messageId."""
_NEW_USER = ("MSGID-01", "ACC-06")
"""Exercised by a live user message under a new ID in a session with prompts and no error."""
_ANSWERED_KEY = rule_group(*_ANSWERED)
_SUCCESS_KEY = rule_group(*_SUCCESS)
_RETURNED_KEY = rule_group(*_RETURNED)
_NEW_USER_KEY = rule_group(*_NEW_USER)
_COVER_WHAT = {
    "CANCEL-02": "a session/cancel",
    "ACC-13": "a session/close",
    "REJ-03": "a $/cancel_request for it",
}
