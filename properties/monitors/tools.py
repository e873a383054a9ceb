"""The tool monitor: tool-call statuses and the user-action requests, permission requests and
elicitations ("5. Tool invocation and status reporting", "Failures", "Cancellation", "Background
work", "Lifecycle examples", "Waiting for user action").

What is certain in proxy order, and why
---------------------------------------
- (A tool call reopened after a final status, BG-05, is judged by the tool call table of the
  model: ``properties.monitors.tables``.)
- ``model.between`` RUNNING_ON_PROGRESS (FG-04 and its restatements, reported under FG-04): while
  the reported state is requires_action, a foreground tool call (first reported during active
  work, not in the latest background list, nor, under the reading ``unlisted-tool-while-blocked``
  = ``may-be-background``, announced since the last concrete list: ``Rules.tool_progress``)
  moving to ``in_progress``,
  or completing after its permission was granted (the tool ran: a refusal's fallback that fails
  or cancels it is no progress), shows progress without running reported. New tool calls are
  not evidence: background work may announce them at any time. Once per stretch. A permission
  request's subject tool call is applied like a ``tool_call_update`` (the schema's
  ToolCallPermissionSubject: a first-seen ID creates it), so a tool call first seen there is
  tracked like any other.
- ``model.between`` APPROVED_RUNS (TOOL-04, a SHOULD): after the Client selects an ``allow_*``
  option of a permission request about a tool call, that call should go ``in_progress`` before it
  is ``completed``. Failing or being cancelled without running is fine.
- FAIL-04 (SHOULD): when an idle with stop reason ``error`` ends active work, every tool call first
  reported during that work and still unfinished should have had a final status before; tool
  calls in the background list and those embedding a listed terminal are exempt. A background
  tool call may be announced before it is first listed, so an unfinished, unlisted call is only
  a suspect at the idle: it is cleared if any later snapshot lists it or its status changes later
  (work that carries on after the idle was independent of the failed work), and reported at the
  end (a breach at quiescence). That a later status change means background work is the default
  of the reading ``tool-updates-after-idle`` (``background``). Under ``foreground-owed`` it does
  not clear the suspicion, and a status change of a tool call first reported during ended
  foreground work, sent while the session is still idle after it, neither listed nor embedding a
  listed terminal, is an update of the ended work after its idle: DONE-03, or CANCEL-14 when
  that idle confirmed a cancellation (once per tool call). Under ``background`` too when the idle
  that ended the work on its own (no cancel received, no error: those idles judge such calls
  themselves, FAIL-04 and CANCEL-17) carried a concrete background list that leaves the call out
  (``Rules.carries_on``: that list is the snapshot of the work running independently, "[] means
  no background work is running", so the call did not carry on as background work). The rule is
  exercised by such an idle in a session that reported tool calls (in one that reported none,
  there is nothing it could require).
- The permission table's ``abandon`` rule (CANCEL-06, a request of cancelled work is treated as
  not approved): a permission request of cancelled work (still open at the idle confirming a
  cancellation, or withdrawn with ``$/cancel_request`` while that cancel was pending: the Agent
  stopped waiting on it; a withdrawal after the idle changes nothing either) that the Client
  then answers with an ``allow_*`` option, and whose tool call afterwards goes ``in_progress``:
  the late answer was used as an approval, whatever final status the call had meanwhile (a
  reopen is also the tool call table's BG-05).
  An allow answer that arrives after the cancel but before that idle raced the cancel and may
  be used, unless the Agent had withdrawn that request already (then it had stopped waiting on
  it: the answer came too late under any reading, review50 N4): the default of the reading
  ``approval-racing-cancel`` (``may-be-used``); under
  ``not-approved`` a tool call of the cancelled work that goes ``in_progress`` after such an
  answer breaks the rule too.
- ``model.between`` UPDATES_BEFORE_IDLE / CANCEL_UPDATES_BEFORE_IDLE for tool call content, under
  the reading ``patch-after-idle`` (its default ``ended-work``): a tool call first reported during
  active work that got its final status before the work's idle (while the session was not
  reported idle; neither listed nor embedding a listed terminal then: ``done``) has nothing
  left to send after that idle;
  its content (a ``tool_call_content_chunk``, or a ``tool_call_update`` carrying ``content``)
  sent while the session is still idle after it, the call not listed now, is an update of the
  ended work after its idle: DONE-03, or CANCEL-14 when that idle came after a cancel (once per
  tool call), as the foreground monitor judges message content. Under ``patch-in-place`` it is a
  patch in place. A call that carries on past the idle, or is first seen after it, is not done.
- CANCEL-17 (a MUST, judged at the idle): when the idle confirming a cancellation ends active
  work, every tool call first reported during that work and still unfinished, neither in the
  latest background list (the idle's own when it carries one) nor embedding a listed terminal,
  was owed its final status before that idle ("Cancellation": the Agent gives those tool calls
  their final status; its idle follows the abort of every ongoing operation and the pending
  updates): a breach at the idle when a concrete background list reported after the tool
  call's first report (the idle's own included) leaves it out, the default of the reading
  ``unlisted-tool-at-cancelled-idle`` (``owed-before-idle``). A tool call no list has ruled on
  yet may be background work announced before its first list ("Background work"), and with no
  list reported a Client may treat nothing as abandoned: a suspect, cleared and reported
  exactly as the FAIL-04 suspects are (at the end: a breach of a complete transcript); under
  ``every-unlisted`` it is a breach at the idle too. Under ``may-be-background`` every such
  call is a suspect. An idle after the cancel that does not
  confirm it (``cancel-takes-effect=when-acted`` and a stop reason other than cancelled)
  leaves suspects only.
- Not owed before the idle: the -32800 answers of the prompts the cancel covers (a prompt's
  response has no fixed order relative to the updates, "2. Prompt accepted"); the prompt table
  owes them eventually (judged at the end, a breach of a complete transcript).
- The permission table's obligation on ``not_approved`` (``model.between``
  CANCELLED_PERMISSIONS_WITHDRAWN): permission requests still open when the idle confirming a
  cancellation was sent (and not about a tool call listed then), of the session or of a child
  session whose foreground work is part of the cancelled work (``Rules.stop_reaches``: announced
  with subagent_update, not listed as background work by its parent), are abandoned (the
  table's ``abandon``) and should be withdrawn with ``$/cancel_request``; an answer from the
  Client resolves them too (CANCEL-08). Under the reading ``permission-withdrawal-deadline``'s
  default ``by-idle`` the withdrawal was due before that idle: a request still open there is a
  finding at the idle, whatever comes after (in proxy order the Agent sent its idle before the
  Client's answer reached it, and had not withdrawn the request), unless it is about a tool
  call still unfinished that no concrete list has ruled on since its first report (it may be
  background work announced before its first list: ``Rules.withdrawal_due_at_idle``); such a
  request, and every one under ``eventually``, is judged at the end: a breach when it was
  neither withdrawn nor answered, not when a later list names its tool call. A withdrawal while
  the cancel is pending exercises the rule.

Tolerated: a permission request before running a tool (TOOL-01), progress updates while a tool
runs (TOOL-05).

Resume windows: a status update of a tool call known before a ``session/resume`` is replayed
history until the resume is answered (not judged); a tool call first seen in the window is
live there, its later updates are transitions.

A ``state_update`` is judged only once this monitor knows a tool call or an open permission
request. Before that an idle has nothing to judge here: no tool call can be a suspect and no
permission request can be owed.

Elicitations
------------
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
- The composition with cancellation, as for permission requests: an elicitation still pending
  when the idle confirming a cancellation ends the work is abandoned by the Agent (the table's
  hidden ``abandon``; one accepted in URL mode and awaiting its external completion is answered,
  becomes late and owes nothing), unless it is about a tool call the latest background list names
  (work the cancel does not cover). An abandoned one is owed a withdrawal (``model.between``
  CANCELLED_ELICITATIONS_WITHDRAWN, the table's ``eventually``); a Client's answer resolves it
  too. Under the reading ``permission-withdrawal-deadline``'s default ``by-idle`` it was due
  before that idle: one still pending there is a finding at the idle, unless it is about a tool
  call still unfinished that no concrete list has ruled on since its first report
  (``Rules.withdrawal_due_at_idle``, as for permission requests); such an elicitation, and every
  one under ``eventually``, is judged at the end. A withdrawal while the cancel is pending
  exercises the rule.
- ``model.between`` LATE_ANSWERS_IGNORED (CANCEL-10): an elicitation about a tool call
  (``toolCallId``) abandoned at the idle confirming a cancellation (or withdrawn before it and not
  answered by then), that the Client then accepts
  or the Agent then reports completed (late), after which that tool call goes ``in_progress``:
  the late answer or completion was used to run the cancelled work. An elicitation tied to no
  tool call has nothing on the wire its use would move (new work after it may be the Agent's
  own, "Foreground and background work").
- TOOL-07 (``model.between`` ADVERTISED_MODES): an elicitation in a mode the Client's latest
  successful ``initialize`` did not advertise (``clientCapabilities``' ``elicitation.form`` /
  ``elicitation.url``; a custom ``_`` mode where its ``elicitation._meta`` is empty). Judged only
  when such an ``initialize`` and its answer are in the transcript; without them, the
  capabilities are unknown.

The composition with foreground state (an elicitation that blocks foreground work:
requires_action, then running when progress resumes) is the foreground monitor's, as for
permission requests: a request alone never changes the state, and resuming is judged by the
output that follows. Elicitations are requests, never replayed: nothing of theirs changes in a
resume window. Tolerated: EX-02, CANCEL-20.

Must not know: prompts, messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from model import between as bw
from model import elicitation as em
from model import foreground, permission, toolcall
from model.clientview_parts import ACTIVE_STATES as ACTIVE
from model.clientview_parts import FINAL_TOOL as TOOL_FINAL
from model.core import ProtocolViolation
from properties.monitor import Message, Record, on, rule_group

if TYPE_CHECKING:
    from properties.engine import MonitorSet

from properties.monitors.facts import SessionFacts, SessionMonitor, subject_call, terminal_refs
from properties.observe import background_keys
from properties.readings import (
    APPROVAL_RACING_CANCEL,
    CANCEL_TAKES_EFFECT,
    PATCH_AFTER_IDLE,
    PERMISSION_WITHDRAWAL_DEADLINE,
    TOOL_UPDATES_AFTER_IDLE,
    UNLISTED_TOOL_AT_CANCELLED_IDLE,
    UNLISTED_TOOL_AT_FAILED_IDLE,
    UNLISTED_TOOL_WHILE_BLOCKED,
)

# tool record: (status, interval it was first reported in (0: not during active work), grant)
# grant: 0 no permission granted, 1 granted and not yet in_progress since, 2 in_progress since,
# 3 (_LATE_GRANT) granted by a late answer to a request of cancelled work (not an approval)
# 4 (_RACED_GRANT) granted by an answer that arrived after a session/cancel of the active work,
#   before the idle confirming it (an approval only under approval-racing-cancel=may-be-used)
# 5 (_WITHDRAWN_GRANT) granted by an answer to a request of cancelled work the Agent withdrew with
#   $/cancel_request before the idle confirming the cancellation (not an approval)
_LATE_GRANT = 3
_RACED_GRANT = 4
_WITHDRAWN_GRANT = 5
_VOID_GRANTS = (_LATE_GRANT, _RACED_GRANT, _WITHDRAWN_GRANT)
APPROVED = bw.APPROVED_RUNS.rule
_FAILED = bw.FAILED_TOOLS_FINAL.rule
ABANDONED = bw.CANCELLED_PERMISSIONS.rule
"""A request of cancelled work is not approved (``model.between`` cancelled_permissions, whose rule
is the one the permission table's ``abandon`` cell names)."""
_WITHDRAWN = bw.CANCELLED_PERMISSIONS_WITHDRAWN.rule
_ELICIT_WITHDRAWN = bw.CANCELLED_ELICITATIONS_WITHDRAWN.rule
"""A permission request or an elicitation of cancelled work withdrawn before the idle confirming
the cancellation (``model.between`` cancelled_permissions_withdrawn, _elicitations_withdrawn)."""
_ASKED = permission.SPEC.initial
_Tool = tuple[str, int, int]
_RA_GROUP = bw.RUNNING_ON_PROGRESS.statements
_RA_GROUP_KEY = rule_group(*_RA_GROUP)
_ANSWERS = frozenset({"accept", "decline", "cancel"})
_JUDGED = "complete"
"""The one trigger of the elicitation table whose refusal is reported from the wire."""
ADVERTISED = bw.ADVERTISED_MODES.rule
_Elicit = tuple[str, str, str, Any, Any]
"""An elicitation: (session, mode, state, tool call or None, elicitationId or None)."""


@dataclass(slots=True, eq=False)
class _Session(Record):
    tools: dict[str, _Tool] = field(default_factory=dict)
    ra_period: int = -1
    fresh: frozenset[str] = frozenset()
    """Tool calls first reported since the session's last concrete background list: no list
    has said yet whether they run as background work."""
    window: frozenset[str] = frozenset()
    """Tool calls first reported in the current resume window: their later updates there are
    live, not replayed history."""
    done: frozenset[str] = frozenset()
    """Tool calls first reported during active work that reached a final status before its
    idle (while the session was not reported idle; not listed, nor embedding a listed terminal,
    then): nothing of theirs is owed after that work's idle (``_late_content``)."""
    cancel_end: int = 0  # interval last ended by an idle after a cancel of active work
    late: frozenset[str] = frozenset()  # tool calls already reported late
    left_out: frozenset[str] = frozenset()
    """Tool calls first reported during the work the last ending idle ended on its own (no
    cancel, no error), unfinished then, that the idle's own concrete background list left out
    (neither listed nor embedding a listed terminal): not carrying on as background work
    (``Rules.carries_on``)."""

    def key(self, interval: int, period: int) -> tuple[Any, ...]:
        return (
            frozenset((k, (v[0], v[1] > 0, v[1] == interval, v[2])) for k, v in self.tools.items()),
            self.ra_period == period,
            self.cancel_end == interval,
            self.late,
            self.done,
            self.fresh,
            self.window,
            self.left_out,
        )


class ToolMonitor(SessionMonitor["_Session"]):
    """Tool-call statuses and permission requests (see module docstring)."""

    RULES = (
        *_RA_GROUP,
        APPROVED,
        _FAILED,
        bw.CANCELLED_TOOLS_FINAL.rule,
        ABANDONED,
        *permission.SPEC.eventually.values(),
        bw.UPDATES_BEFORE_IDLE.rule,
        bw.CANCEL_UPDATES_BEFORE_IDLE.rule,
        em.SPEC.forbidden[_JUDGED],
        *em.SPEC.eventually.values(),
        ADVERTISED,
        bw.LATE_ANSWERS_IGNORED.rule,
    )
    TOLERATES = ("TOOL-01", "TOOL-05", "EX-02", "CANCEL-20")
    TABLES = (permission.SPEC, foreground.SPEC, em.SPEC)
    SESSION = _Session

    def __init__(self, owner: MonitorSet) -> None:
        super().__init__(owner)
        self.owed: dict[Any, tuple[str, int, str]] = {}
        """Requests the permission table moved (``abandon``) into a state it must leave: rid ->
        (sid, line of the idle confirming the cancellation, the obligation's rule)."""
        self.suspects: dict[tuple[str, str], tuple[int, str, bool]] = {}
        """Tool calls unfinished at the idle that ended their failed or cancelled work and not (yet)
        known to be background: (session, tool call) -> (line of the idle, rule it owes: that of
        ``model.between`` FAILED_TOOLS_FINAL or CANCELLED_TOOLS_FINAL, whether a later status
        change clears it: the call may have carried on past that idle, ``Rules.may_carry_on``)."""
        self.elicits: dict[Any, _Elicit] = {}
        self.elicit_owed: dict[Any, int] = {}
        """Abandoned elicitations owed a withdrawal: request id -> line of the idle."""
        self.ended: frozenset[Any] = frozenset()
        """Elicitations about a tool call abandoned with cancelled work (request ids)."""
        self.freed: dict[tuple[str, Any], int] = {}
        """(session, tool call) -> line of the late answer or completion that came for it."""
        self.void: dict[Any, tuple[str, str, int]] = {}
        """Permission requests of cancelled work not yet answered: request id -> (session, its tool
        call, the grant an allow gives it: ``_LATE_GRANT`` for one abandoned at the idle confirming
        the cancellation, ``_WITHDRAWN_GRANT`` for one withdrawn with ``$/cancel_request`` while
        that cancel was pending, 0 until that idle comes). A withdrawal does not make a later allow
        an approval."""

    @on("client-request", "session/resume")
    def _resume(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        ts = self.sessions.get(sid) if sid is not None else None
        if ts is not None and ts.window:
            ts.window = frozenset()  # a new window: what the last one showed is history now

    # -- tool calls ----------------------------------------------------------------------
    @on("update", "tool_call_update")
    def _tool_update(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        if "content" in upd and self.sessions:
            self._late_content(sid, upd, line, msg)
        self._tool(sid, upd, line, msg)
        if self.freed:
            self._late_answer_used(sid, upd, line, msg)

    def _tool(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        """A tool call's update (or a permission request's subject, applied like one)."""
        tid = upd.get("toolCallId")
        if type(tid) is not str:
            return
        ts = self.sessions.get(sid) or self._session(sid)
        status = upd.get("status")
        if type(status) is not str:
            status = None
        rec = ts.tools.get(tid)
        fs = self.facts.of(sid)
        if rec is None:
            ts.tools[tid] = (status or "pending", fs.interval if fs.state in ACTIVE else 0, 0)
            if status in TOOL_FINAL:
                self._finished(ts, fs, tid, upd)
            ts.fresh = ts.fresh | {tid}
            if fs.resuming:
                ts.window = ts.window | {tid}
            return
        if fs.resuming and tid not in ts.window and self.facts.replaying(sid):
            return  # replayed history re-sends old updates
        old, created, grant = rec
        asked = grant != 0  # a permission request of the work named it and was allowed
        if old in TOOL_FINAL:  # reopening it is the table's (model.toolcall, BG-05) ...
            if status == "in_progress" and grant in _VOID_GRANTS:
                self._unapproved_run(sid, tid, grant, line, msg)  # ... running it on that answer, CANCEL-06's
                ts.tools[tid] = (old, created, 0)
            if status is not None and status not in TOOL_FINAL and tid in ts.done:
                ts.done = ts.done - {tid}  # reopened: work on it again
            return
        if status is None or status == old:
            return
        owed = not self.between.carries_on(self.reading(TOOL_UPDATES_AFTER_IDLE), tid in ts.left_out)
        if owed:
            if created > 0:
                self._late(ts, sid, tid, created, _embeds(fs, tid, upd), upd, line, msg, True)
        elif self.suspects:
            suspect = self.suspects.get((sid, tid))
            if suspect is not None and suspect[2]:  # it carried on: independent of the ended work
                del self.suspects[(sid, tid)]
        if status == "in_progress":
            if grant == 1:
                grant = 2
            elif grant in _VOID_GRANTS:
                self._unapproved_run(sid, tid, grant, line, msg)
                grant = 0
            ran = "went in_progress"
        elif self.between.completes_unrun(grant == 1, status):
            self.breach(
                APPROVED,
                line,
                sid,
                f"tool call {tid!r} completed after its permission was granted without being "
                "marked in_progress",
                msg,
            )
            ran = "completed after its permission was granted"  # progress of the work it blocked
        else:
            ran = ""
        ts.tools[tid] = (status, created, grant)
        if status in TOOL_FINAL and created:
            self._finished(ts, fs, tid, upd)
        if not ran or fs.state != foreground.REQUIRES_ACTION or fs.resuming:
            return
        # a foreground tool call ran: progress of the foreground work, which needs running
        # reported after requires_action (the foreground table's output from requires_action)
        listed = fs.listed
        unruled = tid in ts.fresh  # announced, and no concrete list has left it out since
        reading = self.reading(UNLISTED_TOOL_WHILE_BLOCKED)
        if not self.between.tool_progress(
            created > 0, listed is not None and ("tool_call", tid) in listed, unruled, reading, asked
        ):
            return  # (maybe) background work: not progress of the blocked foreground work
        self._gx[_RA_GROUP_KEY] += 1
        if ts.ra_period == fs.period:
            return
        ts.ra_period = fs.period
        try:  # progress of the blocked work: the foreground table's output
            self.table(foreground.SPEC).fire(foreground.REQUIRES_ACTION, "output")
        except ProtocolViolation as broke:
            self.breach(
                broke.rule,
                line,
                sid,
                f"tool call {tid!r} of the blocked foreground work {ran}, but running was not "
                "reported after requires_action",
                msg,
                (UNLISTED_TOOL_WHILE_BLOCKED,) if unruled and not asked else (),
            )

    def _finished(self, ts: _Session, fs: SessionFacts, tid: str, upd: dict[str, Any]) -> None:
        """Tool call ``tid`` reaches a final status: while the session is not reported idle (the
        work may be unobservable: unknown, or a custom state) and it is not listed work, the work
        it was first reported in is done with it (``done``)."""
        if fs.state == "idle" or fs.resuming:
            return
        if not _exempt(tid, _embeds(fs, tid, upd), fs.listed or frozenset()):
            ts.done = ts.done | {tid}

    @on("update", "tool_call_content_chunk")
    def _content_chunk(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        if self.sessions:
            self._late_content(sid, upd, line, msg)

    def _late_content(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        """Content (a chunk, or an update carrying ``content``) for a tool call the ended work was
        done with before its idle (``done``): ``_late`` judges it."""
        ts = self.sessions.get(sid)
        tid = upd.get("toolCallId")
        if ts is not None and type(tid) is str and tid in ts.done:  # (a malformed ID: model.fields)
            self._late(ts, sid, tid, ts.tools[tid][1], self.facts.of(sid).terms, upd, line, msg)

    def _unapproved_run(self, sid: str, tid: str, grant: int, line: int, msg: Message) -> None:
        """Tool call ``tid`` goes in_progress on an allow the Agent must treat as none (``grant``:
        a late answer to a request of cancelled work, or one that raced the cancel): CANCEL-06,
        whatever final status the call had meanwhile or the request's withdrawal."""
        why = (
            " by an answer that arrived after the session/cancel of its work: the Agent treats the "
            "cancelled work's requests as not approved"
            if grant == _RACED_GRANT
            else ", but that request belonged to cancelled work and was "
            + ("open at" if grant == _LATE_GRANT else "withdrawn with $/cancel_request before")
            + " the idle confirming the cancellation: the Agent treats it as not approved and "
            "ignores the late answer"
        )
        self._ex[ABANDONED] += 1
        self.breach(
            ABANDONED, line, sid,
            f"tool call {tid!r} went in_progress after its permission was granted{why}",
            msg, (APPROVAL_RACING_CANCEL,) if grant == _RACED_GRANT else (),
        )  # fmt: skip

    def _late(
        self,
        ts: _Session,
        sid: str,
        tid: str,
        created: int,
        terms: Mapping[str, frozenset[str]],
        upd: dict[str, Any],
        line: int,
        msg: Message,
        changed: bool = False,
    ) -> None:
        """Tool call ``tid`` of ended foreground work (first reported in interval ``created``)
        updated while the session is still idle after that work (``SessionFacts.still_idle``:
        also in a resume window that asked for no replay, before its snapshot), neither listed nor embedding a
        listed terminal (``terms``: what tool calls embed once ``upd`` applies): an update of the
        ended work after its idle (DONE-03, CANCEL-14 when that idle came after a cancel), once
        per tool call. ``changed``: a status change (under ``tool-updates-after-idle=foreground-owed``,
        or of a call that idle's own list left out: ``Rules.carries_on``); else content, unless
        the reading ``patch-after-idle`` takes it as a patch in place."""
        fs = self.facts.of(sid)
        if (
            not fs.still_idle
            or fs.closed
            or (fs.resuming and self.facts.replaying(sid))
            or _exempt(tid, terms, fs.listed or frozenset())
        ):
            return
        cancelled = created == ts.cancel_end
        rule = self.between.late_update(cancelled).rule
        self._ex[rule] += 1
        if tid in ts.late or (not changed and self.between.patch_allowed(self.reading(PATCH_AFTER_IDLE))):
            return
        ts.late = ts.late | {tid}
        what = "the cancellation" if cancelled else "that work"
        listed_out = (
            ", whose background list did not name it (so it was not running as background work)"
            if changed and tid in ts.left_out
            else ""
        )
        text = (
            f"tool call {tid!r} of foreground work that already ended changes status after the idle "
            f"that reported {what}{listed_out}"
            if changed
            else f"{upd['sessionUpdate']} for tool call {tid!r}, which had its final status before the "
            f"idle that reported {what}, is content of foreground work that already ended sent after "
            "that idle"
        )
        self.breach(rule, line, sid, text, msg, (TOOL_UPDATES_AFTER_IDLE if changed else PATCH_AFTER_IDLE,))

    # -- the idle that ends work ---------------------------------------------------------
    @on("update", "state_update")
    def _state(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        """A concrete background list rules on the work it names; an idle ends active work."""
        asking = self.facts.asking  # (usually empty)
        judged = bool(self.sessions) or (bool(asking) and any(a.permission for a in asking.values()))
        if not judged and not self.elicits:
            return  # (no tool call, permission request or elicitation to judge)
        keys = background_keys(upd.get("background"))
        if judged and keys and (self.suspects or self.owed or self.void or self.elicit_owed):
            self._listed(sid, keys)
        if upd.get("state") == "idle":
            fs = self.facts.sessions.get(sid)  # (a session without facts is idle)
            if fs is not None and fs.state in ACTIVE and not fs.resuming:
                listed = frozenset(keys) if keys is not None else (fs.listed or frozenset())
                if judged:
                    self._ended(sid, fs, upd, keys, listed, line, msg)
                if self.elicits and fs.cancel_line:
                    self._abandon_elicitations(sid, fs, listed, keys is not None, line, msg)
        if judged and keys is not None:
            ts = self.sessions.get(sid)
            if ts is not None and ts.fresh:
                ts.fresh = frozenset()

    def _ended(
        self, sid: str, fs: SessionFacts, upd: dict[str, Any], keys: list[Any] | None, listed: frozenset[Any],
        line: int, msg: Message,
    ) -> None:  # fmt: skip
        """The idle that ends active work (``listed``: the latest background list, the idle's own
        when it carries one): what a failure or a cancellation leaves owed."""
        error = upd.get("stopReason") == foreground.ERROR
        if fs.cancel_line:
            self._session(sid).cancel_end = fs.interval
        ts = self.sessions.get(sid)
        terms = fs.terms
        own_end = not error and not fs.cancel_line
        if ts is not None and (ts.left_out or keys is not None):
            # the work ends on its own: a call its idle's list leaves out does not carry on
            # (Rules.carries_on); after a failure or a cancel the idle already judges such calls
            # (FAILED_TOOLS_FINAL, CANCELLED_TOOLS_FINAL, under their own readings)
            ts.left_out = frozenset(
                tid
                for tid, (status, created, _) in ts.tools.items()
                if own_end
                and keys is not None
                and created == fs.interval
                and status not in TOOL_FINAL
                and not _exempt(tid, terms, listed)
            )
        if own_end:
            return  # the usual end of work: nothing owed
        if ts is not None:
            owed = _FAILED if error else bw.CANCELLED_TOOLS_FINAL.rule
            self._ex[owed] += 1
            cancelled = not error
            unlisted = UNLISTED_TOOL_AT_CANCELLED_IDLE if cancelled else UNLISTED_TOOL_AT_FAILED_IDLE
            alt = self.reading(unlisted)
            at_idle = alt != "may-be-background" and (
                error
                or self.between.confirms_cancellation(
                    upd.get("stopReason"), self.reading(CANCEL_TAKES_EFFECT)
                )
            )
            for tid, (status, created, _) in ts.tools.items():
                exempt = _exempt(tid, terms, listed)  # listed work: covered only as cancel_covers says
                covered = self.between.ends_with_work(exempt, cancelled)
                ours = created == fs.interval or exempt
                if ours and self.between.owes_final(status, TOOL_FINAL, covered):
                    # a list reported since its first report (the idle's own included) says it
                    # is not background work; before any, it may be background not listed yet
                    ruled = keys is not None or tid not in ts.fresh
                    if at_idle and (
                        self.between.failed_work_tool(ruled) if error else ruled or alt == "every-unlisted"
                    ):
                        self.breach(
                            owed,
                            line,
                            sid,
                            _unfinished(fs, tid, status, exempt, ruled, error),
                            msg,
                            (unlisted,),
                            premise=0 if error else fs.cancel_line,
                        )
                    else:  # a CANCEL-17 suspect's verdict depends on the reading (where it is judged)
                        # a later status change shows it carried on past the idle only where
                        # it may (an error idle: model.between may_carry_on; a cancelled one:
                        # background work announced before its first list)
                        # (a status the Client does not recognise reads as still in progress:
                        # the tool-call table's custom_status row)
                        state = status if status in toolcall.STATES else toolcall.IN_PROGRESS
                        carries = cancelled or self.between.may_carry_on(
                            state, foreground.ERROR, False, self.reading(TOOL_UPDATES_AFTER_IDLE), True
                        )
                        self.suspects[(sid, tid)] = (line, owed, carries)
        if fs.cancel_line:
            spec = self.table(permission.SPEC)
            by_idle = self.between.withdrawal_by_idle(self.reading(PERMISSION_WITHDRAWAL_DEADLINE))
            # the work's descendants' requests are the cancelled work's (review50 N7b)
            delegated = self.facts.reached(sid, False) if self.facts.parents else ()
            for rid, asked in self.facts.asking.items():
                about = asked.tool
                if not asked.permission or (asked.session != sid and asked.session not in delegated):
                    continue
                if asked.session == sid:
                    listed_work = about is not None and ts is not None and _exempt(about, terms, listed)
                else:  # a child's request: listed in the child's own list, it is not the work's
                    cfs = self.facts.of(asked.session)
                    listed_work = about is not None and _exempt(about, cfs.terms, cfs.listed or frozenset())
                if self.between.covered(listed_work):
                    # the cancelled work's request: the Agent stops waiting (the table's abandon)
                    if about is not None:
                        self.void[rid] = (asked.session, about, _LATE_GRANT)
                    owes = spec.eventually.get(spec.fire(_ASKED, "abandon"))
                    if owes is not None:
                        self._ex[owes] += 1
                        if owes in spec.relaxed:
                            continue
                        own_list = asked.session == sid and keys is not None
                        if by_idle and self._withdrawal_due(asked.session, about, own_list):
                            self.breach(
                                owes, line, asked.session,
                                f"idle confirming the cancellation received at line {fs.cancel_line} "
                                f"while permission request {rid!r} of the cancelled work is still open: "
                                "the Agent stops waiting for it and should withdraw it with "
                                "$/cancel_request before this idle so the Client can dismiss it (it "
                                "was neither withdrawn nor answered)",
                                msg, (PERMISSION_WITHDRAWAL_DEADLINE,), premise=fs.cancel_line,
                            )  # fmt: skip
                        else:
                            self.owed[rid] = (asked.session, line, owes)
            for rid, (psid, about, grant) in list(self.void.items()):
                if psid == sid and not grant:  # withdrawn while the cancel was pending
                    if self.between.covered(_exempt(about, terms, listed)):
                        self.void[rid] = (sid, about, _WITHDRAWN_GRANT)
                    else:
                        del self.void[rid]

    def _withdrawal_due(self, sid: str, about: str | None, idle_lists: bool) -> bool:
        """``model.between`` cancelled_permissions_withdrawn: whether a request of session ``sid``
        about tool call ``about`` (None: about none), still open at the idle confirming the
        cancellation, certainly is the cancelled work's (``withdrawal_due_at_idle``): a concrete
        list has ruled on its tool call when ``idle_lists`` (the idle's own, of the request's
        session) or the call is not announced since the session's last one."""
        ts = self.sessions.get(sid) if about is not None else None
        rec = ts.tools.get(about) if ts is not None and about is not None else None
        finished = rec is not None and rec[0] in TOOL_FINAL
        ruled = ts is not None and (idle_lists or about not in ts.fresh)
        return self.between.withdrawal_due_at_idle(about is not None, finished, ruled)

    def _listed(self, sid: str, keys: list[Any]) -> None:
        """Work listed as background was never part of the foreground work that ended."""
        ts = self.sessions.get(sid)
        if ts is None:
            return
        terms = self.facts.of(sid).terms
        listed = frozenset(keys)
        for key in [k for k in self.suspects if k[0] == sid and _exempt(k[1], terms, listed)]:
            del self.suspects[key]
        for rid, (psid, _, _) in list(self.owed.items()):
            about = self.facts.asking[rid].tool  # owed requests are still open
            if psid == sid and about is not None and _exempt(about, terms, listed):
                del self.owed[rid]
        for rid, (psid, about, _) in list(self.void.items()):
            if psid == sid and _exempt(about, terms, listed):
                del self.void[rid]
        for rid in list(self.elicit_owed):
            esid, about = self.elicits[rid][0], self.elicits[rid][3]
            if esid == sid and ("tool_call", about) in listed:  # as at the idle's abandon
                del self.elicit_owed[rid]

    # -- permission requests -------------------------------------------------------------
    @on("agent-request", "session/request_permission")
    def _ask(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        if sid is None:
            return
        call = subject_call(params)  # applied like a tool_call_update, as the Client does
        if call is not None:
            self._tool(sid, call, line, msg)

    @on("client-response", "session/request_permission")
    def _answered(self, sid: str | None, request: Message, line: int, msg: Message) -> None:
        rid = msg["id"]
        perm = self.facts.asking.get(rid)  # (the facts drop it after this message)
        self.owed.pop(rid, None)
        void = self.void.pop(rid, None)
        if void is not None:  # cancelled work's (withdrawn, maybe: the facts forgot it then)
            psid, about, late = void
            late = late or _WITHDRAWN_GRANT  # withdrawn while the cancel was pending: no race
        elif perm is not None and perm.tool is not None:
            psid, about, late = perm.session, perm.tool, 0
        else:
            return
        result = msg.get("result")
        outcome = result.get("outcome") if type(result) is dict else None
        if type(outcome) is not dict or outcome.get("outcome") != "selected":
            return
        chosen = outcome.get("optionId")
        options = request.get("params", {}).get("options")
        kind = None
        if type(options) is list:
            for option in options:
                if type(option) is dict and option.get("optionId") == chosen:
                    kind = option.get("kind")
        if type(kind) is not str or not kind.startswith("allow"):
            return
        self._ex[APPROVED] += 1
        if late:  # an approval of cancelled work's request: the Agent treats it as none
            self._ex[ABANDONED] += 1
        ts = self.sessions.get(psid)
        rec = ts.tools.get(about) if ts is not None else None
        if ts is not None and rec is not None:
            grant = late or (2 if rec[0] == "in_progress" else 1)
            if grant == 1 and not self.between.racing_approval_used(self.reading(APPROVAL_RACING_CANCEL)):
                fs = self.facts.sessions.get(psid)
                if (
                    fs is not None
                    and fs.cancel_line
                    and fs.state in ACTIVE
                    and rec[1] == fs.interval
                    and not _exempt(about, fs.terms, fs.listed or frozenset())
                ):
                    grant = _RACED_GRANT  # the cancelled work's request: not approved
            if grant == _RACED_GRANT:
                self._ex[ABANDONED] += 1  # an approval the Agent must treat as none: judged here
            if rec[0] not in TOOL_FINAL or grant in _VOID_GRANTS:
                # (a final call keeps only an allow it may not run on: reopened, CANCEL-06 too)
                ts.tools[about] = (rec[0], rec[1], grant)

    def _cancelling(self, sid: str) -> SessionFacts | None:
        """The facts of session ``sid`` while a cancel it received is pending and its work is
        reported active (outside a resume window): a request of that work withdrawn now is the
        withdrawal the cancellation asks for, unless it is about listed work; else None."""
        fs = self.facts.sessions.get(sid)
        if fs is None or not fs.cancel_line or fs.state not in ACTIVE or fs.resuming:
            return None
        return fs

    @on("agent-notification", "$/cancel_request")
    def _withdrawn(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        rid = params.get("requestId")
        if type(rid) is not int and type(rid) is not str:
            return
        self.owed.pop(rid, None)  # (still void: a later allow is no approval)
        perm = self.facts.asking.get(rid)  # (the facts drop it after this message)
        if perm is not None and perm.permission and rid not in self.void:
            fs = self._cancelling(perm.session)
            if fs is not None and self.between.covered(
                perm.tool is not None and _exempt(perm.tool, fs.terms, fs.listed or frozenset())
            ):
                # the cancelled work's request withdrawn before its idle: the withdrawal that
                # cancelled_permissions_withdrawn asks for, given
                self._ex[_WITHDRAWN] += 1
                if perm.tool is not None:
                    self.void[rid] = (perm.session, perm.tool, 0)  # the Agent stops waiting on it
        rec = self.elicits.get(rid)
        if rec is not None:
            if rec[2] == em.PENDING:
                fs = self._cancelling(rec[0])
                if fs is not None and ("tool_call", rec[3]) not in (fs.listed or frozenset()):
                    # the cancelled work's elicitation withdrawn before its idle: the withdrawal
                    # cancelled_elicitations_withdrawn asks for, given
                    self._ex[_ELICIT_WITHDRAWN] += 1
            self._fire_elicitation(rid, rec, "withdraw", line, msg)

    # -- elicitations --------------------------------------------------------------------
    @on("agent-request", "elicitation/create")
    def _elicit(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        mode = params.get("mode")
        if sid is None or type(mode) is not str:
            return  # a request-scoped elicitation (outside a session) or no mode: not judged here
        self._ex[ADVERTISED] += 1
        caps = self.facts.client
        if caps is not None and not self.between.mode_advertised(mode, caps.modes, caps.custom_modes_ok):
            shown = (
                ", ".join([*sorted(caps.modes), *(["custom (_meta)"] if caps.custom_modes_ok else [])])
                or "none"
            )
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
        )

    @on("client-response", "elicitation/create")
    def _elicitation_answered(self, sid: str | None, request: Message, line: int, msg: Message) -> None:
        rid = msg["id"]
        rec = self.elicits.get(rid)
        if rec is None:
            return
        result = msg.get("result")
        action = result.get("action") if type(result) is dict else None
        if "error" in msg:
            action = "cancel"  # an error answer ends the request like a cancel
        trigger = action if type(action) is str and action in _ANSWERS else "cancel"  # the schema: as cancel
        self._fire_elicitation(rid, rec, trigger, line, msg)

    @on("agent-notification", "elicitation/complete")
    def _complete(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        eid = params.get("elicitationId")
        for rid, rec in self.elicits.items():
            if rec[4] == eid and rec[1] == "url":
                self._fire_elicitation(rid, rec, "complete", line, msg)
                return

    def _abandon_elicitations(
        self, sid: str, fs: SessionFacts, listed: frozenset[Any], idle_lists: bool, line: int, msg: Message
    ) -> None:
        """The idle confirming a cancellation: the cancelled work's elicitations are abandoned; one
        still pending owes its withdrawal (``model.between`` CANCELLED_ELICITATIONS_WITHDRAWN) by
        this idle under ``permission-withdrawal-deadline=by-idle`` where it is certainly the
        cancelled work's (``_withdrawal_due``), else at the end."""
        spec = self.table(em.SPEC)
        by_idle = self.between.withdrawal_by_idle(self.reading(PERMISSION_WITHDRAWAL_DEADLINE))
        for rid, rec in list(self.elicits.items()):
            if rec[0] != sid or ("tool_call", rec[3]) in listed:
                continue
            if rec[2] == em.WITHDRAWN and type(rec[3]) is str:
                self.ended = self.ended | {rid}  # withdrawn before the idle: a later answer is late
            if rec[2] not in em.BLOCKING:
                continue
            after = spec.successor(rec[2], "abandon")
            if after is None:
                continue
            self.elicits[rid] = (*rec[:2], after, *rec[3:])
            if type(rec[3]) is str:
                self.ended = self.ended | {rid}
            owes = spec.eventually.get(after)
            if owes is None:
                continue  # (accepted in URL mode: answered, its completion now late)
            self._ex[owes] += 1
            if owes in spec.relaxed:
                continue
            about = rec[3] if type(rec[3]) is str else None
            if by_idle and self._withdrawal_due(sid, about, idle_lists):
                self.breach(
                    owes, line, sid,
                    f"idle confirming the cancellation received at line {fs.cancel_line} while "
                    f"elicitation {rid!r} ({rec[1]} mode) of the cancelled work is still pending: the "
                    "Agent stops waiting for it and should withdraw it with $/cancel_request before "
                    "this idle so the Client can dismiss it (it was neither withdrawn nor answered)",
                    msg, (PERMISSION_WITHDRAWAL_DEADLINE,), premise=fs.cancel_line,
                )  # fmt: skip
            else:
                self.elicit_owed[rid] = line

    def _late_answer_used(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        """The tool call a late answer came for goes in_progress: the answer was used."""
        key = (sid, upd.get("toolCallId"))
        if upd.get("status") != "in_progress" or key not in self.freed or self.facts.replaying(sid):
            return
        since = self.freed.pop(key)
        rule = bw.LATE_ANSWERS_IGNORED.rule
        self.breach(
            rule, line, sid,
            f"tool call {key[1]!r} went in_progress after the late answer or completion at line "
            f"{since} of an elicitation of the cancelled work about it: the Agent ignores it rather "
            f"than run the cancelled work (model.between late_answers_ignored, {rule})",
            msg,
        )  # fmt: skip

    def _fire_elicitation(self, rid: Any, rec: _Elicit, trigger: str, line: int, msg: Message) -> None:
        """An answer or withdrawal (which ends what the elicitation owes) or a completion. A late
        answer or completion of one about a tool call, abandoned with cancelled work, is kept to
        judge that tool call's later run (``_late_answer_used``)."""
        spec = self.table(em.SPEC)
        state = after = rec[2]
        ctx = {"url": rec[1] == "url"}
        if trigger != _JUDGED:  # not reported from the wire (see the module docstring)
            self.elicit_owed.pop(rid, None)
            after = spec.successor(state, trigger, ctx) or state
        else:
            self._ex[spec.rule_of(state, trigger)] += 1
            try:
                after = spec.fire(state, trigger, ctx)
            except ProtocolViolation as broke:
                self.breach(
                    broke.rule, line, rec[0],
                    f"elicitation {rid!r} ({rec[1]} mode) is {state}, and the spec allows no "
                    f"{trigger!r} from that state ({broke.actor} broke {broke.rule})",
                    msg,
                )  # fmt: skip
        self.elicits[rid] = (*rec[:2], after, *rec[3:])
        if trigger in (_JUDGED, "accept") and rid in self.ended:
            self._ex[bw.LATE_ANSWERS_IGNORED.rule] += 1
            self.freed[(rec[0], rec[3])] = line

    # -- end -----------------------------------------------------------------------------
    def at_end(self, quiescent: bool) -> None:
        for (sid, tid), (line, owed, _) in self.suspects.items():
            what = "with stop reason 'error'" if owed == _FAILED else "confirming the cancellation"
            work = "failed" if owed == _FAILED else "cancelled"
            self.eventually(
                owed,
                quiescent,
                line,
                sid,
                f"idle {what} while tool call {tid!r} of the {work} work had no final status before it (and "
                "it was never listed as background work)",
                readings=(
                    TOOL_UPDATES_AFTER_IDLE,
                    UNLISTED_TOOL_AT_FAILED_IDLE if owed == _FAILED else UNLISTED_TOOL_AT_CANCELLED_IDLE,
                ),
            )
        owes = self.table(em.SPEC).eventually
        requests: list[tuple[str, str, int, str | None]]
        requests = [(f"permission request {rid!r}", *owed) for rid, owed in self.owed.items()]
        requests += [
            (f"elicitation {rid!r}", self.elicits[rid][0], line, owes.get(self.elicits[rid][2]))
            for rid, line in self.elicit_owed.items()
        ]
        for what, sid, line, rule in requests:
            if rule is not None:
                self.eventually(
                    rule, quiescent, line, sid,
                    f"{what} of the cancelled work was neither withdrawn with $/cancel_request nor answered",
                )  # fmt: skip

    # -- explorers -----------------------------------------------------------------------
    def state_key(self) -> Any:
        return (
            self._keys_in_interval(),
            frozenset((rid, o[0]) for rid, o in self.owed.items()),
            frozenset(self.void.items()),
            frozenset((key, *rest) for key, (_, *rest) in self.suspects.items()),
            (
                frozenset(self.elicits.items()),
                frozenset(self.elicit_owed),
                self.ended,
                frozenset(self.freed),
            ),
        )


def _unfinished(fs: SessionFacts, tid: str, status: str, exempt: bool, ruled: bool, error: bool) -> str:
    """The finding of a tool call of the failed (``model.between`` FAILED_TOOLS_FINAL) or cancelled
    (CANCELLED_TOOLS_FINAL) work still unfinished at the idle that ends it."""
    if error:
        return (
            f"idle with stop reason 'error' while tool call {tid!r} of the failed work is still "
            f"{status}: the Agent should give it a terminal status (failed when it did not "
            "complete) before reporting the failure (it is not in the latest background list, and "
            "it embeds no listed terminal)"
        )
    why = (
        "the cancel covers the listed background work too"
        if exempt
        else "it is not in the latest background list, and it embeds no listed terminal"
        if ruled
        else "no background list has named it since its first report, and it embeds no listed terminal"
    )
    return (
        f"idle confirming the cancellation received at line {fs.cancel_line} while tool call {tid!r} "
        f"of the cancelled work is still {status}: the Agent owed it a final status before this idle ({why})"
    )


def _embeds(fs: SessionFacts, tid: str, upd: dict[str, Any]) -> Mapping[str, frozenset[str]]:
    """Tool call -> the terminals its content embeds once ``upd`` of ``tid`` applies (the facts
    follow it after this message)."""
    return {tid: terminal_refs(upd["content"])} if "content" in upd else fs.terms


def _exempt(tid: str, terms: Mapping[str, frozenset[str]], listed: frozenset[Any]) -> bool:
    """Listed as background, or embeds a listed terminal (``terms``: tool call -> the terminals
    its content embeds, ``SessionFacts.terms``)."""
    if ("tool_call", tid) in listed:
        return True
    embeds = terms.get(tid)
    return bool(embeds) and any(("terminal", t) in listed for t in embeds or ())
