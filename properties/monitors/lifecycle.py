"""The foreground monitor: active state at the start, running after requires_action, idle at the
end with a fitting stop reason, nothing of the ended work after its idle.

Owns the rules of "Foreground and background work", "3. Agent reports output", "4. Report
completion", "Stop reasons", "Failures" (FAIL-03), "State transitions", "Waiting for user
action", "Work boundaries and local commands" and the idle side of "Cancellation". What the MUST
rules among them say is the model's (the foreground table, and the declarations of
``model.between`` named below): this monitor maps the wire to them. It judges by hand only the
SHOULDs of an ending idle's stop reason (FG-06 and its restatements; FAIL-03: an error object). A
message without a string messageId keys nothing here (``model.fields``: the table monitor judges
it).

What is certain in proxy order, and why
---------------------------------------
The reported state is the last ``state_update`` the Agent sent (``Facts``; sessions start idle,
a ``session/resume`` makes it unknown until the snapshot). Agent lines are in send order, so
"X was sent while the last reported state was S" is a plain fact.

*Evidence of foreground work* is model output: an ``agent_message`` / ``agent_thought`` (upsert or
chunk). Tool calls, terminals, subagents, permission requests, notices, usage and compaction are
not evidence: background activity may send them while idle (STATE-03, BG-04, "Foreground and
background work"). So:

- a message or thought under a new ID while the state is idle means foreground work is under way
  with no active state reported: ``model.between`` active_on_start (FG-02, restated as OUT-01), or
  own_work_foreground (FG-01) when no prompt waited for it (``Rules.start_rule``). Reported once
  per idle stretch. STATE-04 instead when the state is a custom one that
  followed idle and the Client's ``initialize`` could not have advertised custom states; and
  STATE-04 for output under a custom state that followed requires_action (running is required
  there);
- a repeated idle is a snapshot whatever stop reason it carries (State transitions: a repeat
  may bring new details without being a transition), so it is never taken as a completion of
  unreported work: the default of the reading ``repeated-idle-new-stop-reason``. Under its
  alternative ``completion``, a repeated idle (outside resume windows) whose string stop reason
  differs from the last one reported in the session completes work never reported active: FG-02;
- any message or thought content while the state is requires_action means the work progressed
  without running being reported: ``model.between`` running_on_progress (FG-04 and its
  restatements; the tool side is judged by the tool monitor), except, under the default of the
  reading ``output-while-requires-action`` (``late-chunk``), a chunk of a message first seen since
  the last idle was reported (``_Session.begun``) before that requires_action: the tail of output
  the work began before it blocked. Under ``progress`` that chunk is progress too; under
  ``pending-output`` no content is (``Rules.blocked_output_is_progress``);
- content for a message first seen during an ended foreground interval, sent while the session
  is still idle after it (``SessionFacts.still_idle``: also in a resume window that asked for no
  replay, before its snapshot; a window that asked for one re-sends history), is an update of
  the ended work after its idle: DONE-03, or CANCEL-14 when that idle confirmed a cancellation.
  That is the default of the reading ``patch-after-idle``; under ``patch-in-place`` such
  content is a patch in place (no finding).
  (Content of a tool call the ended work finished before its idle: the tool monitor's.)

*The idle that ends work* (active -> idle, outside resume windows) should carry a stop reason
(FG-06, SHOULD: the group ``stop-reason-on-ending-idle``). The Agent may omit it when it cannot
tell why the work stopped, which the wire does not show: an omitted one is a suspicion (kind
``suspect``, a warning), not a breach; when a ``session/cancel`` (or
``session/close``) was received while the work was active, the first idle after it must say
``cancelled`` (``model.between`` ``cancel_confirmed``, ``cancel_not_error`` when it says
``error``; the group ``cancelled-stop-reason``), judged at the idle its ``confirming_idle`` names:
the first idle after a ``session/cancel`` or ``session/close`` received while work was reported
active (``Facts.cancel_line``), whether it follows the active state or an unknown or
unrecognized state reported since, unless it is a resume snapshot. "Received" means delivered to
the Agent in proxy order: an Agent that finished on its own but sent its idle after the cancel
reached it is held to ``cancelled``; in forwarded order (``properties.engine``, "Client order")
only once the Agent's response to a request recorded at or after the cancel shows it read the
cancel (before that, a suspicion). That is the default of the reading ``cancel-takes-effect``
(``on-receipt``); under ``when-acted`` the Agent may have ended the work before acting on the
cancel, so the idle's stop reason is judged as for any ending idle (FG-06) and not held to
``cancelled``.

*What else of "corresponding" the wire shows* (FG-06 and the group
``stop-reason-on-ending-idle``): ``cancelled`` means the user or Client chose to stop the work,
with ``session/cancel``, by closing the session, or through an interaction the Agent offers (a
permission option that tells it to stop), not that the Agent hit a limit or failed. An idle that
ends active work with ``cancelled`` when, during that work, the Client neither cancelled nor
closed the session nor answered a permission request of the Agent is a suspect of FG-06 (a
warning: an interaction the Agent offers need not be a request on the wire). Any of these sent
to a parent session, while the child's work was under way, counts for the child's work, where
``model.between`` ``Rules.stop_reaches`` says that work is part of the parent's (a child its
parent does not list is the parent's tool execution; review50 N7). A cancel or close
received while a custom or unknown state was reported counts too (``Facts.stopping``: that
state may have replaced running, so the work it cancelled may be the one that ends). So does one
received while idle was reported after a prompt whose work the wire has not shown yet, for the
work that starts next (the first active state after it), unless every such prompt was refused
before then (``model.between`` ``Rules.stop_reaches_next_work``: the Agent may have inserted the
prompt before it read the stop, or did, when it accepted it first, and proxy order shows the stop
before the work's running; review51 F2). Such a prompt is one received while idle with no state
reported since, waiting for its answer or accepted (``await_active``, ``accepted``): a prompt
still unanswered after an active state may have been inserted into that work (its answer may
come after the work's idle), so the wire cannot tell one held for later work from it, and a stop
after that idle reaches no work (a cancelled idle then stays a suspect). The other stop reasons
name the Agent's own reasons, which the wire does not show.
Any idle's string stop reason must be standard or start with ``_`` (``model.between``
custom_stop_prefixed, STOP-03; an unknown one
without ``_`` is a breach under the reading ``future-stop-reason=custom``, the default, and a
suspect under ``future-stop-reason=may-be-future``: it may be a future variant); ``error`` should
carry a JSON-RPC error object (FAIL-03). Repeated snapshots are fine (TRANS-01), and idle at any
moment is fine (DONE-04).

*A requires_action stretch* (reported as work blocks or starts blocked, outside resume windows)
must be blocked on something the user can act on: ``model.between`` BLOCKED_ON_USER. A
user-action request of the session or of a child session it announced, or a child's child
(``Rules.blocks_workflow_of``, ``Facts.parents``; a permission request or an elicitation, ``Facts.asking``)
outstanding when it is reported, or asked since the last idle (its answer, seen here, may not
have reached the Agent when it reported requires_action: a recording made at the Client's end
shows it first), or asked before the stretch ends, justifies it (work that starts blocked may
report requires_action before its request). A stretch that ends with running
or idle without any is a breach, judged at that state; one still open at the end is an open
obligation (a breach at quiescence). A stretch cut by unknown or a custom state is not judged.

Closing a session cancels its foreground work: a successful ``session/close`` response sent while
work is still reported active breaks the rule ``Rules.close_leaves_work`` names (the schema puts
the closed work's idle before the close response): ``model.between`` cancelled_work_ends
(CANCEL-11) for work the close or an earlier cancel reached while it was reported active, else
idle_ends_work (work reported active again after an unknown the close came in). That is the
default of the reading ``close-response-ends-session`` (``last-message``); under
``work-may-follow`` the idle may follow the close response and is owed at the end like any
(``Rules.close_ends_session``). An idle resume snapshot sent before
the idle confirming a cancellation breaks cancelled_work_ends too (``Rules.snapshot_leaves_cancel``:
the snapshot shows the work over without being its completion, and no later idle can be).
Inside a resume window an idle is the snapshot unless it replaces an active state reported in
that window: then it is a transition, the work's own idle, judged as any (``Rules.resume_snapshot``;
a state_update is no replayed session entity). Under the reading ``resume-window-idle=may-be-live``
(not the default) an idle snapshot may also be the live idle ending the cancelled work
(``Rules.ends_in_window``) when another state reported in that window can be the snapshot; the one
idle of a window with no other state was the snapshot, judged at the successful resume response
(``Rules.window_leaves_cancel``). A cancel received inside a resume window before any state is
reported there reaches the work reported active before the resume (``SessionFacts.held``,
``Rules.cancel_reaches``: resume does not imply idle).

*Eventually*: a session left running or requires_action (the foreground table's obligation,
``model.between`` idle_ends_work: FG-05 and its restatements; cancelled_work_ends when a
cancellation is pending, ``Rules.never_idled``); a prompt accepted while the session was idle with
no active state reported after its receipt (accepted_work_reported, BOUND-02). Closed sessions
owe neither (but the idle of their work under ``close-response-ends-session=work-may-follow``).

Restated obligations (a declaration's ``restated``, ``catalogue.RESTATED`` for the SHOULD groups):
every ID of a group is exercised together; a finding names the group's first ID (where the spec
first states it), unless a more specific ID fits the case exactly (CANCEL-11: cancelled work never
idled; CANCEL-12: reported as error).

Must not know: request IDs of prompts beyond BOUND-02, tool calls, background lists.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from model import between as bw
from model import entity
from model import foreground as fgm
from model.clientview_parts import ACTIVE_STATES as ACTIVE
from model.clientview_parts import KNOWN_STATES as STANDARD_STATES
from model.core import ProtocolViolation
from properties.catalogue import RESTATED
from properties.monitor import Message, Record, on, rule_group
from properties.monitors.facts import SessionFacts, SessionMonitor
from properties.readings import (
    CANCEL_TAKES_EFFECT,
    CLOSE_RESPONSE_ENDS_SESSION,
    CUSTOM_STATE_ADVERTISEMENT,
    FUTURE_STOP,
    OUTPUT_WHILE_REQUIRES_ACTION,
    PATCH_AFTER_IDLE,
    REPEATED_IDLE_NEW_REASON,
    REQUIRES_ACTION_WITHOUT_REQUEST,
    RESUME_WINDOW_IDLE,
)
from properties.transcript import is_error_object

if TYPE_CHECKING:
    from properties.engine import MonitorSet

_IDLE_GROUP = bw.IDLE_ENDS_WORK.statements
_STOP_GROUP = RESTATED["stop-reason-on-ending-idle"]
_RA_GROUP = bw.RUNNING_ON_PROGRESS.statements
_STOP_RULE = _STOP_GROUP[0]
"""The first ID of the group ``stop-reason-on-ending-idle`` (FG-06), under which a ``cancelled``
no choice of the Client explains is suspected."""
_START_GROUP = bw.ACTIVE_ON_START.statements
OWN_WORK = bw.OWN_WORK_FOREGROUND.rule
_CANCEL_ENDS = bw.CANCELLED_WORK_ENDS.rule
_ACCEPTED = bw.ACCEPTED_WORK_REPORTED.rule
_NAMED_STOP = bw.CUSTOM_STOP_PREFIXED.rule
_QUIET = frozenset(
    state for state in fgm.STATES
    if any(row.guard is None for row in fgm.SPEC.cells.get((state, "output"), ()))
)  # fmt: skip
"""Reported states in which the model's foreground table allows output whatever the context (the
usual case: nothing to judge; a variant's table is fired every time)."""
_CUSTOM_STATES = fgm.SPEC.guard_rules["custom_states"]
"""The rule of the foreground table's guard on output under a custom state (advertised?)."""
_END_GROUPS_KEY = rule_group(*_IDLE_GROUP, *_STOP_GROUP)
"""Exercised by an idle that ends active work (with a string stop reason: ``_END_STOP_KEY``)."""
_END_STOP_KEY = rule_group(*_IDLE_GROUP, *_STOP_GROUP, _NAMED_STOP)
_RA_GROUP_KEY = rule_group(*_RA_GROUP)
_START_GROUP_KEY = rule_group(*_START_GROUP)
_CANCEL_GROUP_KEY = rule_group(*RESTATED["cancelled-stop-reason"])
_IDLE_GROUP_KEY = rule_group(*_IDLE_GROUP)


@dataclass(slots=True, eq=False)
class _Session(Record):
    """One session's foreground record."""

    # every agent message ("m", ID) and thought ("t", ID) of the session -> interval first
    # seen in (-1: not active); kept while the session lives (DONE-03 may name any of them)
    outputs: dict[tuple[str, str], int] = field(default_factory=dict)
    # of those, the ones first seen since the last idle was reported (begun by the work under
    # way: ``Rules.blocked_output_is_progress``)
    begun: set[tuple[str, str]] = field(default_factory=set)
    last_end: int = 0  # interval ended by the last ending idle
    last_end_cancel: bool = False
    last_reason: str | None = None  # last string stop reason (kept under one reading)
    last_std: str = "idle"  # last of idle / running / requires_action reported
    flag_period: int = -1  # period in which a start / resume breach was reported
    # (idle line, cancel line): inside a resume window, an idle that may have been the live
    # idle ending cancelled work, with no other state reported in that window yet
    lone: tuple[int, int] | None = None
    done_period: int = -1  # period in which DONE-03 / CANCEL-14 was reported
    ra_line: int = 0  # line of a requires_action report with no user-action request yet
    asked: bool = False  # a user-action request was asked since the last idle
    # under a custom state, the standard (or unknown) state reported before it (what a custom state
    # the Client did not advertise leaves owed, and whether it followed idle); "idle" otherwise
    before_custom: str = "idle"
    # interval of active work in which the Client last made a choice that may explain a
    # ``cancelled`` stop reason: answered a permission request of the session, or stopped the
    # work of a session whose foreground work this one's is (a parent's: ``Rules.stop_reaches``)
    chosen: int = 0
    # of ``await_active`` and ``accepted``, those there when a session/cancel or session/close
    # came while idle was reported: the work that starts next may be theirs
    # (``Rules.stop_reaches_next_work``); until that work starts, less those then refused
    reach: set[Any] = field(default_factory=set)
    reached: bool = False  # the work under way is the one such a stop reached (until an idle)
    prompted: bool = False  # a prompt was received or accepted since the last ending idle
    # what work the session's reports allow: 0 none (only idle reported), 1 some other state
    # reported since the last idle (work may end at the next one), 2 an idle followed another
    # state (work may have ended: a stop reason may be carried for context)
    work: int = 0
    await_active: set[Any] = field(default_factory=set)  # prompts received while idle (request ids)
    accepted: dict[Any, int] = field(default_factory=dict)  # of those, accepted -> response line
    # only where ``model.between`` STEERING forbids steering: ("p", request id) received
    # during active work, ("m", messageId) its success returned, ("u", messageId) a user
    # message first reported during active work -> that work's interval
    steered: dict[tuple[str, Any], int] = field(default_factory=dict)

    def key(self, interval: int, period: int) -> tuple[Any, ...]:
        """Relative form: counters and line numbers only as the comparisons the checks make."""

        def rel(v: int) -> tuple[bool, bool, bool]:
            return (v > 0, v == self.last_end, v == interval)

        return (
            frozenset((k, rel(v)) for k, v in self.outputs.items()),
            frozenset(self.begun),
            self.last_end == interval,
            self.last_end_cancel,
            self.last_reason,
            self.last_std,
            self.flag_period == period,
            self.done_period == period,
            frozenset(self.await_active),
            frozenset(self.accepted),
            frozenset((k, interval - v) for k, v in self.steered.items()),
            self.ra_line > 0,
            self.lone is not None,
            self.asked,
            self.before_custom,
            self.prompted,
            self.work,
            self.chosen > 0,
            self.chosen == interval,
            frozenset(self.reach),
            self.reached,
        )


class ForegroundMonitor(SessionMonitor["_Session"]):
    """Foreground state reporting (see module docstring)."""

    RULES = (
        OWN_WORK,
        *_START_GROUP,
        *_RA_GROUP,
        *_IDLE_GROUP,
        *_STOP_GROUP,
        _CANCEL_ENDS,
        _NAMED_STOP,
        "FAIL-03",
        bw.UPDATES_BEFORE_IDLE.rule,
        bw.CANCEL_UPDATES_BEFORE_IDLE.rule,
        bw.STEERING.rule,
        bw.BLOCKED_ON_USER.rule,
        _CUSTOM_STATES,
        _ACCEPTED,
        bw.CANCEL_CONFIRMED.rule,
        bw.CANCEL_NOT_ERROR.rule,
    )
    TABLES = (fgm.SPEC,)
    TOLERATES = ("DONE-04", "TRANS-01", "STATE-03", "CANCEL-13", "OUT-03")
    SESSION = _Session

    def __init__(self, owner: MonitorSet) -> None:
        super().__init__(owner)
        self.spec = self.table(fgm.SPEC)
        """The foreground table in force (the variant's, else the model's)."""
        self.quiet_states = _QUIET if self.spec is fgm.SPEC else frozenset()
        """``_QUIET`` under the model's table (a variant's is fired every time)."""
        self.new_reason_completes = self.reading(REPEATED_IDLE_NEW_REASON) == "completion"
        """The reading ``repeated-idle-new-stop-reason`` in force is ``completion``."""
        self.takes_effect = self.reading(CANCEL_TAKES_EFFECT)
        """The alternative in force of the reading ``cancel-takes-effect``."""
        self.steer = self.between.steer
        """Whether the rules in force allow steering (``model.between`` STEERING)."""

    @on("agent-request", "session/request_permission", "elicitation/create")
    def _asked(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        """A user-action request of the session: it justifies the requires_action stretch."""
        if sid is None:
            return
        for owner in (sid, *self.sessions):  # the session's and its ancestors' stretches
            if owner == sid or self.between.blocks_workflow_of(owner, sid, self.facts.parents):
                st = self._session(owner)
                st.asked = True
                st.ra_line = 0

    # -- output --------------------------------------------------------------------------
    @on("update", "agent_message", "agent_message_chunk", "agent_thought", "agent_thought_chunk")
    def _output(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        mid = upd.get("messageId")
        variant: str = upd["sessionUpdate"]
        if not entity.keyed(mid):  # it keys no message (the table monitor judges model.fields)
            return
        st = self.sessions.get(sid) or self._session(sid)
        key = (variant[6], mid)
        fs = self.facts.sessions.get(sid) or self.facts.of(sid)
        state = fs.state
        seen = st.outputs.get(key)
        if seen is None:
            st.outputs[key] = fs.interval if state in ACTIVE else -1
            st.begun.add(key)
        if state in self.quiet_states and not fs.before:  # the common case: running work
            return
        if fs.closed or (
            fs.resuming and (seen is None or not fs.still_idle or self.facts.replaying(sid))
        ):  # (in a window only this: an update of ended work, idle still reported, no replay)
            return
        if fs.still_idle and seen is not None:
            if seen > 0:  # an update of ended work after its idle: is it one the work owed?
                cancelled = seen == st.last_end and st.last_end_cancel
                late = self.between.late_update(cancelled).rule
                self._ex[late] += 1
                if (
                    (variant[-1] == "k" or "content" in upd)
                    and not self.between.patch_allowed(self.reading(PATCH_AFTER_IDLE))
                    and st.done_period != fs.period
                ):
                    st.done_period = fs.period
                    what = "the cancellation" if cancelled else "that work"
                    self.breach(
                        late,
                        line,
                        sid,
                        f"{variant} {mid!r} of foreground work that already ended is sent after "
                        f"the idle that reported {what}",
                        msg,
                        (PATCH_AFTER_IDLE,),
                    )
            return
        # progress of foreground work: the foreground table's output from the reported state
        custom = state not in STANDARD_STATES
        if state == fgm.REQUIRES_ACTION:
            self._gx[_RA_GROUP_KEY] += 1
            if not self.between.blocked_output_is_progress(
                self.reading(OUTPUT_WHILE_REQUIRES_ACTION),
                variant.endswith("_chunk"),
                seen is not None and key in st.begun,  # (begun before this message: begun is in outputs)
            ):
                return  # may be output of the work from before it blocked
        rule = self._refused_output(state)
        if rule is None:
            return
        what = f"{variant} {mid!r}"
        if state == "idle" or (custom and seen is None and st.last_std == "idle"):
            after = f" after the custom state {state!r} replaced running" if custom else " sent while idle"
            self._started(sid, rule, line, what + after, msg)
            return
        where = fgm.UNRECOGNIZED if custom else state
        if where != fgm.REQUIRES_ACTION:
            self._ex[rule] += 1
        if st.flag_period != fs.period:
            st.flag_period = fs.period
            if custom:
                why = (
                    f"under the custom state {state!r}, which the Client did not advertise "
                    "(running is required there)"
                )
            elif where == fgm.REQUIRES_ACTION:
                why = "after requires_action, without running reported"
            else:
                why = f"while {where} is reported"
            self.breach(
                rule,
                line,
                sid,
                f"{what} shows foreground progress {why} ({rule}: the foreground "
                f"table has no output in {where})",
                msg,
                (OUTPUT_WHILE_REQUIRES_ACTION,) if where == fgm.REQUIRES_ACTION else self._advertised(rule),
            )

    def _refused_output(self, state: str) -> str | None:
        """The rule the foreground table's output while ``state`` is reported breaks (None: it
        allows it). A custom state is the table's unrecognized one, whose guard asks whether the
        Client could have advertised custom states."""
        where = fgm.UNRECOGNIZED if state not in STANDARD_STATES else state
        if where == fgm.UNRECOGNIZED:  # the cell's guard is judged
            self._ex[_CUSTOM_STATES] += 1
        try:
            self.spec.fire(where, "output", {"custom_states": self._custom_states()})
        except ProtocolViolation as broke:
            return broke.rule
        return None

    def _asking(self, sid: str, st: _Session) -> list[Any]:
        """What ``model.between`` blocked_on_user is given for a requires_action report of
        ``sid``: a user-action request asked since its last idle (``asked``: its answer may not
        have reached the Agent yet), and the outstanding ones ``Rules.blocks_workflow_of`` counts
        (the session's own and its descendants')."""
        found: list[Any] = ["asked"] if st.asked else []
        parents = self.facts.parents
        counts = self.between.blocks_workflow_of
        found += [rid for rid, a in self.facts.asking.items() if counts(sid, a.session, parents)]
        return found

    def _custom_states(self) -> bool:
        """The foreground table's guard ``custom_states``: the Client could have advertised custom
        states (``model.between`` ``Rules.custom_states_possible``)."""
        client = self.facts.client
        return client is None or self.between.custom_states_possible(
            self.reading(CUSTOM_STATE_ADVERTISEMENT), client.may_extend, client.states_key
        )

    def _advertised(self, rule: str) -> tuple[str, ...]:
        """The reading a finding of ``rule`` depends on when it is STATE-04 and the Client's
        capabilities carry ``_meta`` (``custom-state-advertisement`` counts it or not)."""
        client = self.facts.client
        if rule == _CUSTOM_STATES and client is not None and client.may_extend:
            return (CUSTOM_STATE_ADVERTISEMENT,)
        return ()

    def _owed(self, sid: str, fs: SessionFacts) -> str | None:
        """The foreground table's obligation still open on the session's reported state: its
        ``eventually``, or under a custom state the one of the state before it unless the Client
        could have advertised custom states (``fgm.owed_through_custom``)."""
        table = self.spec
        owed = table.eventually.get(fs.state)
        st = self.sessions.get(sid)
        if owed is None and fs.state not in STANDARD_STATES and st is not None:
            return fgm.owed_through_custom(table, st.before_custom, self._custom_states())
        return owed

    def _started(
        self, sid: str, rule: str, line: int, what: str, msg: Message, readings: tuple[str, ...] = ()
    ) -> None:
        """Foreground work under way with no active state reported (``rule``: the one the
        foreground table's output under the reported state breaks): a prompt's, else (no prompt
        waits, ``_prompt_waits``, and the state is no custom one) work the Agent started itself
        (``Rules.start_rule``)."""
        st = self.sessions[sid]
        fs = self.facts.sessions[sid]
        if fs.state in STANDARD_STATES and not self._prompt_waits(sid, st):
            rule = self.between.start_rule(rule, False)
            self._ex[rule] += 1
            what += " with no prompt waiting (work the Agent started itself)"
        self._gx[_START_GROUP_KEY] += 1
        if rule not in _START_GROUP:
            self._ex[rule] += 1
        if st.flag_period != fs.period:
            st.flag_period = fs.period
            why = f"{what}: foreground work started without running being reported"
            self.breach(rule, line, sid, why, msg, readings + self._advertised(rule))

    def _prompt_waits(self, sid: str, st: _Session) -> bool:
        """A prompt of ``sid`` came or was accepted since the last ending idle (answered or not:
        work that starts now may be its work; a prompt held through that idle and accepted after
        it included), or one received earlier is still unanswered (held through that idle);
        otherwise the Agent started the work itself (FG-01). (``await_active`` and ``accepted``
        hold only prompts that also set ``prompted``.)"""
        return st.prompted or self._owner.client_awaits("session/prompt", sid)

    # -- state ---------------------------------------------------------------------------
    @on("update", "state_update")
    def _state(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        """The reported state: work starting, blocking, resuming and ending; an idle's stop
        reason. Once a standard state replaces the custom ones, the state before them
        (``before_custom``) is forgotten (read only under a custom state: no explorer state
        differs by it elsewhere)."""
        fs = self.facts.sessions.get(sid) or self.facts.of(sid)
        st = self.sessions.get(sid) or self._session(sid)
        prev = fs.state
        new = upd.get("state")
        if type(new) is not str:
            new = "?"
        if st.lone is not None and fs.resuming:
            st.lone = None  # another state of the window: it can be the snapshot
        if new != prev:
            if new not in STANDARD_STATES and prev in STANDARD_STATES:
                # what a custom state the Client did not advertise leaves owed (one it may have
                # advertised leaves nothing and allows output: kept as "idle", no state to tell apart)
                st.before_custom = "idle" if self._custom_states() else prev
            since, st.ra_line = st.ra_line, 0
            if since and prev == "requires_action" and new in ("running", "idle"):
                # the requires_action stretch with no user-action request ends: judged when it
                # ends with running or idle (cut by unknown, a custom state or a resume, it is not)
                rule = bw.BLOCKED_ON_USER.rule
                self.breach(
                    rule,
                    line,
                    sid,
                    f"requires_action reported at line {since} until this {new}, while no permission "
                    "request or elicitation of the session or of a child session it announced was "
                    "outstanding: the work was blocked on nothing the user could act on "
                    f"(model.between blocked_on_user, {rule})",
                    msg,
                    (REQUIRES_ACTION_WITHOUT_REQUEST,),
                )
            if new == "requires_action" and prev in ("running", "idle") and not fs.resuming:
                self._ex[bw.BLOCKED_ON_USER.rule] += 1
                if not self.between.unseen_user_action(
                    self.reading(REQUIRES_ACTION_WITHOUT_REQUEST)
                ) and not self.between.blocked_on_user(self._asking(sid, st)):
                    st.ra_line = line
        if new != "idle":
            if new in STANDARD_STATES:
                st.before_custom = "idle"
            if not st.work:
                st.work = 1
            st.await_active.clear()
            st.accepted.clear()
            if new in ACTIVE:
                st.last_std = new
                if prev not in ACTIVE and st.reach:
                    st.reached = True  # the work a stop received while idle may reach
                    st.reach.clear()
                if fs.resuming:  # a resume snapshot reports the state, it is no transition
                    return
                if prev == "idle" and not self._prompt_waits(sid, st):
                    self._ex[OWN_WORK] += 1  # work the Agent started itself, reported as foreground work
                if prev not in ACTIVE:
                    self._gx[_START_GROUP_KEY] += 1
                elif prev == "requires_action" and new == "running":
                    self._gx[_RA_GROUP_KEY] += 1
            return
        before_custom, st.before_custom = st.before_custom, "idle"
        reached, st.reached = st.reached, False
        st.last_std = "idle"
        st.asked = False
        st.begun.clear()  # (a message first seen after it is not begun by the work it ended)
        reason = upd.get("stopReason")
        named = type(reason) is str
        completed = st.work == 2
        if st.work == 1 or (fs.resuming and named):
            st.work = 2  # (a resume snapshot's stop reason may be of work that ended out of view)
        # a resume snapshot reports the state, it is no transition (an idle that replaces an
        # active state reported in the same window is one: the work ended there)
        if self.between.resume_snapshot(fs.resuming > 0, fs.shown and prev in ACTIVE):
            self._window_idle(fs, st, reason, sid, line, msg)
            if named and self.new_reason_completes:
                st.last_reason = reason  # it may carry the last stop reason for context
            return
        if type(reason) is str and not self.between.stop_reason_named(reason):
            why = f"stop reason {reason!r} is not a standard one and does not start with '_'"
            future = self.between.future_reason_possible(self.reading(FUTURE_STOP))
            if future:  # it may be a future ACP variant
                why += " (it may be a future ACP stop reason)"
            self.breach(_NAMED_STOP, line, sid, why, msg, (FUTURE_STOP,), "suspect" if future else "rule")
        if prev in ACTIVE:
            self._gx[_END_STOP_KEY if named else _END_GROUPS_KEY] += 1
            self._ends(sid, st, fs, upd, line, msg)
        else:
            if prev == "idle":
                self._ex["TRANS-01"] += 1
            if named:  # no work reported active ends here: does the idle still report a completion?
                self._ex[_NAMED_STOP] += 1
                self._unreported_end(sid, reason, completed, before_custom, line, msg)
                if prev == "idle" and self.new_reason_completes:
                    st.last_reason = reason
        if self.between.confirming_idle(fs.cancel_line > 0, False):
            self._confirmation(fs, reason, sid, line, msg)
        if prev in ACTIVE and reason == fgm.CANCELLED:  # (see "What else of corresponding ...")
            self._ex[_STOP_RULE] += 1
            if not fs.stopping and not reached and st.chosen != fs.interval:  # (a cancel_line is stopping)
                parent = " (nor did any of these to a parent session whose work this is)" if fs.child else ""
                self.breach(
                    _STOP_RULE,
                    line,
                    sid,
                    "the idle ends the work with stop reason 'cancelled', but during that work the "
                    "Client neither sent session/cancel nor closed the session nor answered a "
                    f"permission request{parent}: cancelled means the user or Client chose to stop "
                    "the work (the Agent's own reasons are a limit, refusal or error)",
                    msg,
                    kind="suspect",
                )

    def _window_idle(
        self, fs: SessionFacts, st: _Session, reason: Any, sid: str, line: int, msg: Message
    ) -> None:
        """An idle resume snapshot (``Rules.resume_snapshot``) while a cancellation may be pending
        (``fs.cancel_line``): sent before the idle confirming the cancellation
        (``Rules.snapshot_leaves_cancel``), unless under ``resume-window-idle=may-be-live`` it may
        be that live idle (``Rules.ends_in_window``) and another state of the window can be the
        snapshot (one before it, ``fs.shown``; one after it clears ``st.lone``, else ``_resumed``
        judges it)."""
        pending = bool(fs.cancel_line)
        window = self.reading(RESUME_WINDOW_IDLE)
        if pending and self.between.ends_in_window(reason, self.takes_effect, window):
            self._ex[_CANCEL_ENDS] += 1
            if not fs.shown:
                st.lone = (line, fs.cancel_line)
            return
        if self.between.snapshot_leaves_cancel(pending, True):
            self._ex[_CANCEL_ENDS] += 1
            self.breach(
                _CANCEL_ENDS,
                line,
                sid,
                "this resume snapshot reports idle while the work cancelled at line "
                f"{fs.cancel_line} was never ended with the idle confirming it: the "
                "snapshot creates no completion or cancellation, whatever stop reason it "
                "carries, and no later idle can",
                msg,
                (RESUME_WINDOW_IDLE,),
                premise=fs.cancel_line,
            )

    @on("agent-response", "session/resume")
    def _resumed(self, sid: str | None, request: Message, line: int, msg: Message) -> None:
        """The end of a resume handshake: an idle that may have been the live idle ending the
        cancelled work, alone in its window (``st.lone``), was the snapshot the successful
        response needed (``Rules.window_leaves_cancel``)."""
        if sid is None:
            return
        st = self.sessions.get(sid)
        if st is None or st.lone is None:
            return
        idle, cancel = st.lone
        fs = self.facts.sessions[sid]
        if "result" not in msg and fs.resuming > 1:
            return  # the other handshake under way still owes its snapshot
        st.lone = None
        if self.between.window_leaves_cancel(True, "result" in msg):
            self.breach(
                _CANCEL_ENDS,
                line,
                sid,
                f"the idle at line {idle} was the only state reported in this resume window, so it "
                f"was the resume snapshot: the work cancelled at line {cancel} was never ended with "
                "the idle confirming it (the snapshot creates no completion or cancellation, "
                "whatever stop reason it carries, and no later idle can)",
                msg,
                (RESUME_WINDOW_IDLE,),
                premise=cancel,
            )

    def _unreported_end(
        self, sid: str, reason: Any, completed: bool, before_custom: str, line: int, msg: Message
    ) -> None:
        """An idle that ends no work reported active (a repeated idle, or one after a custom state
        that followed idle) but reports a completion all the same (``model.foreground``
        idle_reports_completion: a stop reason with no earlier completion in the session to
        carry, or under ``repeated-idle-new-stop-reason=completion`` a new one): the work it
        ended was under way in the state reported before it, judged as the foreground table
        judges output there (FG-02, FG-01 with no prompt waiting; STATE-04 under a custom state
        the Client did not advertise; ``before_custom``: the session's, before this idle)."""
        st = self.sessions[sid]
        prev = self.facts.sessions[sid].state  # (the facts are updated after this message)
        custom = prev not in STANDARD_STATES
        if prev != "idle" and not (custom and before_custom == "idle"):
            return  # (``last_std`` is already this idle's: the state before the custom one decides)
        completed = completed or not self.facts.from_start(sid)
        if not fgm.idle_reports_completion(reason, st.last_reason, completed, self.new_reason_completes):
            return
        rule = self._refused_output(prev)
        if rule is None:
            return
        if completed:
            what = f"repeated idle with the new stop reason {reason!r} (was {st.last_reason!r})"
        else:
            what = f"idle with the stop reason {reason!r}, while no work of the session had ended,"
        what += " completes work"
        if custom:
            what += f" that ran under the custom state {prev!r}, which replaced running"
        readings = (REPEATED_IDLE_NEW_REASON,) if completed else ()
        self._started(sid, rule, line, what, msg, readings)

    def _ends(
        self, sid: str, st: _Session, fs: SessionFacts, upd: dict[str, Any], line: int, msg: Message
    ) -> None:
        """The idle ending active work (the caller counted ``_END_GROUPS_KEY``)."""
        prev = fs.state  # (the facts are updated after this message)
        reason = upd.get("stopReason")
        st.prompted = False
        if prev == "requires_action":
            self._gx[_RA_GROUP_KEY] += 1
        st.last_end = fs.interval
        if self.new_reason_completes:
            st.last_reason = reason if type(reason) is str else None
        st.last_end_cancel = fs.cancel_line > 0 and self.between.confirms_cancellation(
            reason, self.takes_effect
        )
        # The stop reason is judged here (FG-06) unless a cancel reached the work and the work
        # cannot have ended on its own first: then ``_confirmation`` judges it (cancel_confirmed).
        judged_here = not fs.cancel_line or self.between.own_end_after_cancel(self.takes_effect)
        if judged_here and type(reason) is not str:
            # FG-06 is breached only if the Agent could tell why the work stopped, which the wire
            # does not show: a suspicion (a warning)
            self.breach(
                "FG-06",
                line,
                sid,
                f"the idle that ends {prev} work has no stop reason: the Agent should name one unless "
                "it cannot tell why the work stopped (which the wire does not show)",
                msg,
                kind="suspect",
            )
        if reason == fgm.ERROR:
            self._ex["FAIL-03"] += 1
            err = upd.get("error")
            if err is None:
                # omission and null both say the Agent supplied no failure details; whether it
                # had any to give is not on the wire, so this is a suspicion
                self.breach(
                    "FAIL-03",
                    line,
                    sid,
                    "idle with stop reason 'error' supplies no failure details (no error object): "
                    "the Agent should include them when it has them",
                    msg,
                    kind="suspect",
                )
            elif not is_error_object(err):
                self.breach(
                    "FAIL-03",
                    line,
                    sid,
                    "idle with stop reason 'error' carries an error that is no error object",
                    msg,
                )

    @on("client-response", "session/request_permission")
    def _permission_answered(self, sid: str | None, request: Message, line: int, msg: Message) -> None:
        if sid is not None and self.facts.active(sid):
            self._session(sid).chosen = self.facts.sessions[sid].interval
            if self.facts.parents:
                self._stop_reaches_children(sid, closing=False)

    @on("client-notification", "session/cancel")
    @on("client-request", "session/close")
    def _stopped(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        """A session/cancel or session/close received while idle was reported, with prompts of the
        session received while idle and no state reported since, waiting for their answer or
        accepted (``await_active``, ``accepted``): it may reach the work they start next
        (``Rules.stop_reaches_next_work``). And a session/cancel of work reported under way (not
        idle), or a session/close, of a session that announced children: a choice of the Client
        that reaches their foreground work."""
        if sid is None:
            return
        fs = self.facts.sessions.get(sid)
        st = self.sessions.get(sid)
        if (
            fs is not None
            and fs.state == "idle"
            and st is not None
            and self.between.stop_reaches_next_work(bool(st.await_active or st.accepted))
        ):
            st.reach.update(st.await_active, st.accepted)
        if not self.facts.parents:
            return
        closing = msg["method"] == "session/close"
        if closing or (fs is not None and fs.state != "idle"):
            self._stop_reaches_children(sid, closing)

    def _stop_reaches_children(self, sid: str, closing: bool) -> None:
        """The Client's stop of the work of ``sid`` (``closing``: a session/close) reaches the work
        under way in each descendant session that ``Rules.stop_reaches`` says is part of it (not
        detached: in its parent's latest background list): a ``cancelled`` idle ending that work
        is explained (the Client chose to stop it: Stop reasons)."""
        for child in self.facts.reached(sid, closing):
            cfs = self.facts.sessions.get(child)
            if cfs is not None and cfs.state != "idle":
                self._session(child).chosen = cfs.interval

    def _confirmation(self, fs: SessionFacts, reason: Any, sid: str, line: int, msg: Message) -> None:
        """The idle that ends the work a cancel covered (``model.between`` ``confirming_idle``):
        its stop reason confirms the cancellation (``confirmation_breach``)."""
        self._gx[_CANCEL_GROUP_KEY] += 1
        if self.between.own_end_after_cancel(self.takes_effect):
            return  # the work may have ended on its own before the Agent acted on the cancel
        broken = self.between.confirmation_breach(reason)
        if broken is None:
            return
        after = (
            ""
            if fs.state in ACTIVE
            else f" (reported after {fs.state!r}, which is no outcome and no cancellation: the "
            "cancelled work still owed this confirmation)"
        )
        self.breach(
            broken.rule,
            line,
            sid,
            f"the idle that ends work after the cancellation received at line {fs.cancel_line} has "
            f"stop reason {reason!r}, not {self.between.confirming_reasons()[0]!r}{after}",
            msg,
            (CANCEL_TAKES_EFFECT,),
            premise=fs.cancel_line,
        )

    # -- cancellation and prompts --------------------------------------------------------
    @on("agent-response", "session/close")
    def _closed(self, sid: str | None, request: Message, line: int, msg: Message) -> None:
        if sid is None or "result" not in msg:
            return
        fs = self.facts.of(sid)
        owed = self.spec.eventually.get(fs.state)
        if fs.resuming or owed is None:
            return
        if not self.between.close_ends_session(self.reading(CLOSE_RESPONSE_ENDS_SESSION)):
            return  # its idle may still follow: owed at the end (at_end)
        rule = self.between.close_leaves_work(fs.state in ACTIVE, bool(fs.cancel_line), owed)
        if rule is None:
            return
        self._gx[_CANCEL_GROUP_KEY if rule == _CANCEL_ENDS else _IDLE_GROUP_KEY] += 1
        cancelled = f" it cancelled (line {fs.cancel_line})" if fs.cancel_line else ""
        self.breach(
            rule,
            line,
            sid,
            f"session/close succeeded while the {fs.state} work{cancelled} was never ended with idle",
            msg,
            (CLOSE_RESPONSE_ENDS_SESSION,),
        )

    @on("client-request", "session/prompt")
    def _prompt(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        if sid is None:
            return
        fs = self.facts.sessions.get(sid) or self.facts.of(sid)
        st = self.sessions.get(sid) or self._session(sid)
        st.prompted = True
        if fs.state == "idle" and not fs.resuming:
            st.await_active.add(msg["id"])
        elif not self.steer and fs.state in ACTIVE and not fs.resuming:
            st.steered[("p", msg["id"])] = fs.interval

    @on("agent-response", "session/prompt")
    def _answer(self, sid: str | None, request: Message, line: int, msg: Message) -> None:
        if sid is None:
            return
        st = self.sessions.get(sid) or self._session(sid)
        rid = msg["id"]
        if "result" in msg and not self.facts.active(sid):
            st.prompted = True  # its work may start now, even one held through the last idle
        received_while_idle = rid in st.await_active
        st.await_active.discard(rid)
        if "result" not in msg:
            st.reach.discard(rid)  # refused: never inserted, it starts no work
        if self.between.owes_lifecycle(received_while_idle, "result" in msg):
            self._ex[_ACCEPTED] += 1
            st.accepted[rid] = line
        if st.steered:
            self._steering_answer(st, sid, rid, line, msg)

    def _steering_answer(self, st: _Session, sid: str, rid: Any, line: int, msg: Message) -> None:
        """The answer of a prompt received during active work, where steering is not allowed:
        its messageId ties it to a user message reported during that same work (a breach), or
        to one not reported yet (judged then)."""
        steered = st.steered
        received = steered.pop(("p", rid), None)
        result = msg.get("result")
        mid = result.get("messageId") if type(result) is dict else None
        if received is None:
            return
        if type(mid) is str:
            seen = steered.get(("u", mid))
            if seen == received:
                self._steered(sid, rid, mid, line, msg)
            elif seen is None and self.facts.active(sid) and self.facts.sessions[sid].interval == received:
                steered[("m", mid)] = received  # that work goes on: judged when the message is reported
        if not any(k[0] == "p" and v == received for k, v in steered.items()):
            for key in [k for k, v in steered.items() if k[0] == "u" and v == received]:
                del steered[key]  # no prompt of that work is left to claim them

    @on("update", "user_message", "user_message_chunk")
    def _user(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        """A user message first reported during active work, where steering is not allowed
        (``model.between`` STEERING with steer false)."""
        if self.steer:
            return
        mid = upd.get("messageId")
        fs = self.facts.sessions.get(sid)
        if type(mid) is not str or fs is None or fs.state not in ACTIVE or fs.resuming:
            return
        st = self._session(sid)
        if ("u", mid) in st.steered:
            return
        if st.steered.pop(("m", mid), None) == fs.interval:
            self._steered(sid, None, mid, line, msg)
        elif any(k[0] == "p" and v == fs.interval for k, v in st.steered.items()):
            st.steered[("u", mid)] = fs.interval  # a prompt received in this work may claim it

    def _steered(self, sid: str, rid: Any, mid: str, line: int, msg: Message) -> None:
        rule = bw.STEERING.rule
        self._ex[rule] += 1
        which = f"prompt {rid!r}" if rid is not None else "the prompt whose response returned it"
        self.breach(
            rule,
            line,
            sid,
            f"user message {mid!r} of {which}, received during active work, is reported during "
            "that same work: it was inserted into it, while the rule between machines steering "
            "(steer = false) says it waits for that work's idle",
            msg,
        )

    # -- end -----------------------------------------------------------------------------
    def at_end(self, quiescent: bool) -> None:
        idle_may_follow = not self.between.close_ends_session(self.reading(CLOSE_RESPONSE_ENDS_SESSION))
        for sid, fs in self.facts.sessions.items():
            if fs.closed and not idle_may_follow:
                continue  # judged at the close response
            owed = self._owed(sid, fs)
            if owed is not None and not fs.resuming:
                rule = self.between.never_idled(owed, bool(fs.cancel_line))
                reported = fs.state
                if fs.state not in STANDARD_STATES:
                    before = self.sessions[sid].before_custom
                    reported = (
                        f"{before}, then the custom state {fs.state!r} the Client did not advertise "
                        f"(it stands for no standard state, {_CUSTOM_STATES}),"
                    )
                self.eventually(
                    rule,
                    quiescent,
                    fs.state_line,
                    sid,
                    f"foreground work reported {reported} was never ended with idle"
                    + (f" after the cancellation at line {fs.cancel_line}" if fs.cancel_line else "")
                    + (" (the session was closed before it)" if fs.closed else ""),
                    readings=(CLOSE_RESPONSE_ENDS_SESSION,) if fs.closed else (),
                )
            st = self.sessions.get(sid)
            if st is None or fs.closed:
                continue  # a closed session owes nothing else
            if st.ra_line and fs.state == "requires_action":
                self.eventually(
                    bw.BLOCKED_ON_USER.rule,
                    quiescent,
                    st.ra_line,
                    sid,
                    "requires_action was reported while no permission request or elicitation of the "
                    "session or of a child session it announced was outstanding, and none was asked since",
                    readings=(REQUIRES_ACTION_WITHOUT_REQUEST,),
                )
            for rid, line in st.accepted.items():
                self.eventually(
                    _ACCEPTED,
                    quiescent,
                    line,
                    sid,
                    f"prompt {rid!r} was accepted while idle, but no active state followed",
                )

    # -- explorers -----------------------------------------------------------------------
    def state_key(self) -> Any:
        return self._keys_in_interval()
