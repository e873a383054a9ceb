"""The simulated Agent's foreground work: starting it, its output and tool calls, the requests
it makes of the user (permissions, elicitations), and ending it.

Owns: ``ForegroundWork``: the foreground table's moves of active work (``_active_events``), the
tool-call, permission and elicitation tables' moves, and how an ending settles what the work owes
and takes with it (``_settle_end``).

Must not know: prompts beyond which wait for work, channels, monitors, or files.
"""

from __future__ import annotations

from functools import partialmethod
from typing import Any

from model import background as bgm
from model import between as bw
from model import elicitation as em
from model import foreground as fgm
from model import permission as pm
from model import toolcall as tcm
from properties.bugs import rule_of
from simulator.peers import deviations, wire
from simulator.peers.agent_background import BackgroundWork
from simulator.peers.agent_state import (
    CUSTOM_STOP,
    FUTURE_STOP,
    NO_MESSAGE,
    Msg,
    _put,
    _seen,
)

_URL = {"url": True}
"""The guard context of a URL elicitation (its completion may come before the accept)."""
_PLAIN_MOVES = {(tcm.PENDING, tcm.IN_PROGRESS), (tcm.IN_PROGRESS, tcm.COMPLETED)}
"""Tool-call moves the plain events ``tool_run`` and ``tool_done`` already make."""
_NOT_RUN = ("ended-e", "late-e", "stopped")
"""Marks of a foreground tool call whose status this Agent does not move on its own: waiting on a
seeded bug's late answer, or one the user chose to stop (it is cancelled with its work)."""
TIED = "tool_call"
"""The second part of an ``elicit`` move's argument ``(mode, TIED)``: about a tool call."""
WAITING = "waiting"
"""The second part of an ``end`` move's argument ``(reason, WAITING)``: a seeded bug (one that
does not apply ``cancelled_permissions``) first gives the calls pending on their open permission
requests their cancelled status, and keeps those requests to use a late approval."""


def _unapproved(tool: tuple[Any, ...]) -> bool:
    """A foreground tool call that asked for permission, never ran, and was not approved (its
    request still pending, or declined, or an approval taken as a refusal): work that stops on
    its own gives it up (``Agent._stop_events``)."""
    return (
        not tool[1]
        and tool[2] is not None
        and tool[0] == tcm.PENDING
        and tool[3] in (None, "denied", "raced", "stopped")
    )


class ForegroundWork(BackgroundWork):
    __slots__ = ()

    def _hook_possible(self) -> bool:
        """Hook work may start: a prompt waits for insertion, within the ``hooks`` bound."""
        return "hook" in self.cfg.features and self._room("hooks") and self._oldest_waiting() is not None

    def _count_hook(self, followup_may_start: bool) -> None:
        """Called as foreground work starts: count it as hook work when only a waiting prompt
        justifies it (``followup_may_start``: pending follow-up work would justify this start
        too; it does ``start`` but not ``start_blocked``)."""
        if followup_may_start and self.followup:
            return
        if not self._inserted_waiting() and self._hook_possible():
            self._use("hooks")

    def _active_events(self, add: Any, doing: frozenset[str]) -> None:
        """Active work's moves: the foreground table's rows from the state the work is really in
        (``output`` where model output is progress; ``block``, ``resume``, ``end``), within
        the Agent's bounds (``Config.outputs``, ``tool_calls``, ``permissions``, ``elicitations``)
        and the rules between machines it asks ``model.between`` (the stop reasons of work a
        cancel reached; ``_can_end``: what is owed before the idle). Its own behaviour, not rules:
        it blocks only while the work waits on the user and resumes only once nothing is waited
        on (``_blocked``), and work it is cancelling starts no new tool call, background work or
        elicitation; its output then is the bounded flush of ``_output_room``.
        ``doing``: the foreground table's agent triggers from the state the work is in."""
        features = self.cfg.features
        blocked = self._blocked()
        producing = "output" in doing
        if (
            self.real == fgm.REQUIRES_ACTION
            and self.reported == fgm.REQUIRES_ACTION
            and self.cur_msg is not None  # (begun by this work: since its start, after the last idle)
            and "chunks" in self.cfg.features  # (an Agent that streams its messages has a chunk to flush)
            and self._output_room()
            and not self.between.blocked_output_is_progress(
                self.rd["output-while-requires-action"], chunk=True, begun=True
            )
        ):
            add(("agent", "pending_say", None))
        if producing and self._output_room():
            add(("agent", "say", None))
            if "thought" in features:
                add(("agent", "think", None))
            if "plan" in features:
                add(("agent", "plan", None))
            if "clear" in features and self.cur_msg is not None:
                add(("agent", "clear", "empty"))  # (``_do_clear``)
                add(("agent", "clear", "null"))
        if producing and not self.cancelling:
            if self._room("tool_calls"):
                add(("agent", "tool", None))
                if "shared_ids" in features and self.cur_msg is not None and self.cur_msg not in self.tools:
                    add(("agent", "tool", "shared"))  # (``_do_tool``)
                if "permission" in features and self._room("permissions"):
                    add(("agent", "tool_ask", None))
                    if "multi_request" in features:
                        add(("agent", "tool_ask_running", None))
            if "plan" in self.extras and "plan_removed" not in self.extras:
                add(("agent", "plan_removed", None))
            if self._room("elicitations"):
                for mode in em.MODES:  # ``model.between`` ADVERTISED_MODES
                    if self.between.mode_advertised(mode, self.elicit_modes) or not self._applies(
                        bw.ADVERTISED_MODES.rule
                    ):
                        add(("agent", "elicit", mode))
                        # also about a tool call it starts (a seeded bug already ties every one)
                        if self._room("tool_calls") and self._applies(bw.LATE_ANSWERS_IGNORED.rule):
                            add(("agent", "elicit", (mode, TIED)))
        if "block" in doing and not self.cancelling:
            # ``model.between`` BLOCKED_ON_USER: requires_action needs a request outstanding; this
            # Agent blocks when its work waits on one (``blocked``), a seeded bug with none
            justified = self.between.blocked_on_user(self._asking())
            if blocked if justified else not self._applies(bw.BLOCKED_ON_USER.rule):
                add(("agent", "block", None))
        if producing:
            self._tool_events(add, "pause" in features)
        if "pause" in features and self._room("tool_updates"):
            for tid, t in self.tools.items():
                if not t[1]:
                    add(("agent", "tool_content", (tid, True)))
                    add(("agent", "tool_content", (tid, False)))
        if not blocked and "resume" in doing:
            add(("agent", "resume", None))
        if "end" not in doing or self.between.user_messages_owed(self._unreported()):
            return  # (every end: the user messages of inserted prompts go before its idle)
        if "user_stop" in features and not self.cancelling and self._stopped_by_user():
            add(("agent", "user_stop", None))
        if self.cancelling:  # ``model.between`` CANCEL_CONFIRMED: the confirming stop reasons
            waiting = self._waiting_calls() if not self._applies(bw.CANCELLED_PERMISSIONS.rule) else ()
            for reason in self.between.confirming_reasons():
                add(("agent", "end", reason))
                if waiting:  # a seeded bug: or those calls get their final status first
                    add(("agent", "end", (reason, WAITING)))
            if not self.between.own_end_after_cancel(self.rd["cancel-takes-effect"]) and self._cancel_seen():
                return
            # own_end_after_cancel (when-acted): the work may have ended before the Agent acted on
            # the cancel; unobserved: before the cancel came (``_start_cancelling``)
        self._stop_events(add)
        if self._can_end():
            add(("agent", "end", fgm.END_TURN))
            if "limits" in features:
                for reason in (fgm.MAX_TOKENS, fgm.MAX_TURN_REQUESTS, fgm.REFUSAL):
                    add(("agent", "end", reason))
            if "custom_stop" in features:
                add(("agent", "end", CUSTOM_STOP))
                if self.between.future_reason_possible(self.rd["future-stop-reason"]):
                    add(("agent", "end", FUTURE_STOP))
            if "omit_stop" in features:
                add(("agent", "end", None))
        if "fail" in features and not self.between.owed_before_idle((), (), self._unlisted_work()):
            add(("agent", "end", fgm.ERROR))  # failing work owes no tool result (``_settle_end``)

    def _stopped_by_user(self) -> bool:
        """The user chose the option of a permission request that tells the Agent to stop the
        work (feature ``user_stop``, ``wire.STOP_OPTION``), and the call it asked about is still
        pending: the work may stop now, ending ``cancelled`` (``_do_user_stop``). Nothing else
        may be owed before that idle (``model.between`` owed_before_idle: unlisted background
        work; the live tool calls get their cancelled status)."""
        return any(not t[1] and t[3] == "stopped" and t[0] == tcm.PENDING for t in self.tools.values()) and (
            not self.between.owed_before_idle((), (), self._unlisted_work())
        )

    def _do_user_stop(self, _: Any) -> list[Msg]:
        """Stop reasons: cancelled when "the user or Client chose to stop the work: ... through an
        interaction the Agent offers, such as a permission option that tells the Agent to stop".
        No session/cancel was sent: the Agent ends the work as a cancellation does (its live tool
        calls cancelled, its other requests no longer waited on: ``_settle_end``) and reports
        the cancelled idle."""
        return self._settle_end(fgm.CANCELLED)

    def _output_room(self) -> bool:
        """Whether the work may send model output now (``say``, ``think``, ``plan``; the
        foreground table's ``output`` is already in ``doing``): within the interval's bound
        (``Config.outputs``), or, while it carries out a cancel (``cancelling``), with feature
        ``cancel_output``, one output more per cancellation, the flush of what the model had
        produced (``flushed``, marked by ``_count_output``). Cancellation: the Agent may still
        send content (and tool-call updates) after receiving session/cancel, provided they come
        before the idle that reports the cancellation ("The Agent MAY send session/update
        notifications with content or tool call updates after receiving the session/cancel
        notification"); that idle waits for nothing the flush sends (``_settle_end``)."""
        if self.cancelling:
            return "cancel_output" in self.cfg.features and "flushed" not in self.extras
        return self.turn_outputs < self.cfg.outputs

    def _tool_events(self, add: Any, pause: bool) -> None:
        """Status moves of foreground tool calls: the tool-call table's rows from each call's
        status (``_can``), made as ``tool_run`` / ``tool_done`` (pending -> in_progress ->
        completed, with content; a paused call, which only a background call foreground work
        adopted can be without feature ``pause``, runs again by ``tool_run``) or, with feature
        ``pause``, as a bare status update (``tool_status``, ``_offers_status``)."""
        waiting = self._elicited_tools() if self.elicits else frozenset()
        for tid, t in self.tools.items():
            if t[1] or self.perms.get(t[2]) == pm.PENDING or tid in waiting or t[3] in _NOT_RUN:
                continue
            allowed = self._can("tool_call", t[0])
            if "run" in allowed and (t[0] == tcm.PENDING or (t[0] == tcm.PAUSED and not pause)):
                add(("agent", "tool_run", tid))  # paused: a background call adopted (bg_adopt)
            elif t[0] == tcm.IN_PROGRESS and "complete" in allowed:
                add(("agent", "tool_done", tid))
            if not pause:
                continue
            for status, trigger in (*tcm.STATUS_TRIGGER.items(), (tcm.CUSTOM_STATUS, "custom_status")):
                plain = (t[0], status) in _PLAIN_MOVES
                if not plain and self._offers_status(t, status) and trigger in allowed:
                    add(("agent", "tool_status", (tid, status)))

    def _offers_status(self, tool: tuple[Any, ...], status: str) -> bool:
        """Whether the Agent offers ``status`` as a bare status update of a foreground tool call:
        not where ``model.between`` APPROVED_RUNS forbids it (a granted call completing before it
        ran), and, a bound of this Agent rather than a rule, on a call with a permission request
        only failed or cancelled: such a call runs and completes by ``tool_run`` and
        ``tool_done`` (which also fail a refused call), so bare moves would only repeat them."""
        granted = tool[3] == "allowed" and tool[0] == tcm.PENDING
        if self.between.completes_unrun(granted, status):
            return False
        return tool[2] is None or status in (tcm.FAILED, tcm.CANCELLED)

    def _can_end(self) -> bool:
        """Whether the work may end on its own (a stop reason of its own, not error): nothing is
        owed before the idle (``model.between`` UPDATES_BEFORE_IDLE, ``owed_before_idle``: tool
        results, user messages, unlisted background work; ``may_carry_on``: an in_progress tool
        call that may go on after the idle). Not a rule but this Agent's own behaviour: work that
        waits on the user's answer (``_blocked``) does not end on its own; it may fail or be
        cancelled."""
        return not self._owes_before_idle(stopping=False) and not self._blocked()

    def _owes_before_idle(self, stopping: bool) -> bool:
        """``model.between`` owed_before_idle for an end_turn idle now: the live tool calls that
        may not carry on past it (``may_carry_on``: none where the idle carries a background list,
        which would leave it out), besides the unapproved ones a ``stop``
        cancels (``stopping``), the unreported user messages, the unlisted background work."""
        carry = self.rd["tool-updates-after-idle"]
        left_out = self._bg_list() is not None  # the idle's list would not name a carried call
        live = [
            t
            for t in self._fg_tools_live()
            if not (stopping and _unapproved(self.tools[t]))
            and not self.between.may_carry_on(
                self.tools[t][0], fgm.END_TURN, self.cancelling, carry, left_out=left_out
            )
        ]
        return self.between.owed_before_idle(live, self._unreported(), self._unlisted_work())

    def _stop_events(self, add: Any) -> None:
        """The Agent stops its work on its own while it waits on the user or after a refusal:
        "Agents MAY stop foreground work at any point" (4.), "or idle if the work ends without
        resuming" (5.). The tool calls that asked and were not approved (``_unapproved``) are
        cancelled, "cancelled before it completed" (the schema's ToolCallStatus), as the pending
        updates owed before the idle; the requests it waited on are no longer waited on
        (``_settle_end``), their late answers ignored (Waiting for user action). The idle says
        the work finished (end_turn), or, with ``fail``, that it then failed. Within this
        Agent's bounds: only where nothing else is owed or waited on (an elicitation); with
        feature ``stop``."""
        if (
            "stop" not in self.cfg.features
            or not any(_unapproved(t) for t in self.tools.values())
            or any(e[0] in em.BLOCKING for e in self.elicits.values())
            or self._owes_before_idle(stopping=True)
        ):
            return
        add(("agent", "stop", fgm.END_TURN))
        if "fail" in self.cfg.features:
            add(("agent", "stop", fgm.ERROR))

    def _do_stop(self, reason: Any) -> list[Msg]:
        reason, seen = _seen(reason)
        out = [self._tool_update(tid, "cancel") for tid, t in self.tools.items() if _unapproved(t)]
        return out + self._settle_end(reason, seen=seen)

    def _ends_unseen(self) -> bool:
        """Feature ``unseen_end``: while the state reported owes no idle (the foreground table's
        ``eventually``: unknown, an unrecognized state; not idle, where no work is shown to hide),
        the work may end unobserved: unknown is an "actual loss of observability" (Session
        states), and "a later current-state snapshot restores a known state without implying
        that work started or ended while it was unobservable" (Initial state and
        synchronization). It settles what the work owes as its idle would (``_settle_end``), but
        reports nothing for the end itself; not work a session/cancel or session/close reached
        while it was reported active, whose confirming idle no later message could stand in for
        (``model.between`` snapshot_leaves_cancel, asked of the resume snapshot that would
        follow)."""
        if "unseen_end" not in self.cfg.features or self.reported == fgm.IDLE:
            return False
        if self.specs["foreground"].eventually.get(self.reported) is not None:
            return False
        return not self.between.snapshot_leaves_cancel(self._cancel_seen(), resume_snapshot=True)

    def _request_events(self, add: Any) -> None:
        """The Agent's moves on its requests of the user, while the session is open or closing.

        A tool call of cancelled work whose late approval, accept or completion a seeded bug
        uses runs (``late_run``: offered only where the Agent does not apply
        ``cancelled_permissions`` or ``late_answers_ignored``); where it does not apply
        ``cancelled_permissions``, it may also give a call waiting on its open request its
        cancelled status as it ends the cancelled work (``end`` with ``WAITING``), and reopens it
        to run it on a late approval (``late_run``).

        On its elicitations, the elicitation table's agent rows from each
        one's state (``_can``), within its own choices: the external completion of an accepted
        URL elicitation (``elicit_complete``; once more after its work ended, then ignored), and
        the withdrawal (``elicit_withdraw``) of one abandoned with cancelled work (also while it
        carries the cancel out, before its idle: it stops waiting for it, the table's abandon,
        then withdraws it: Cancellation, "It SHOULD cancel each of them with $/cancel_request",
        and "The same rules apply to permissions and both elicitation modes", Lifecycle
        examples; under permission-withdrawal-deadline=by-idle ``_settle_end`` withdraws the
        ones still pending as it stops that work, so after the idle it is offered only under
        eventually), or of a pending one it no longer needs while its work goes on.

        On its permission requests, the permission table's withdraw; a pending request of
        foreground work is not withdrawn while its work goes on (cancelling the work abandons
        it first; under permission-withdrawal-deadline=by-idle ``_settle_end`` withdraws it
        then, before the confirming idle, so it is offered here only under eventually or for
        work ended otherwise)."""
        if not self._applies(bw.CANCELLED_PERMISSIONS.rule) or not self._applies(
            bw.LATE_ANSWERS_IGNORED.rule
        ):
            for tid, t in self.tools.items():
                if (t[3] in ("late", "late-e") and t[0] == tcm.PENDING) or (
                    t[3] == "late" and t[0] == tcm.CANCELLED
                ):
                    add(("agent", "late_run", tid))  # (a cancelled one reopened)
        for rid, e in self.elicits.items():
            allowed = self._can("elicitation", e[0])
            if "complete" in allowed and e[2] and not e[3]:
                add(("agent", "elicit_complete", rid))
            elif e[1] == "url" and not e[3] and "complete" in self._can("elicitation", e[0], _URL):
                add(("agent", "elicit_complete", rid))  # the user finished before the accept came
            if "withdraw" in allowed:
                add(("agent", "elicit_withdraw", rid))
        for rid, st in self.perms.items():
            background = st != pm.PENDING or self.tools[self._tool_of(rid)][1]
            if background and "withdraw" in self._can("permission", st):
                add(("agent", "perm_withdraw", rid))

    def _declined_events(self, add: Any) -> None:
        """Waiting for user action: "declining or cancelling a request may lead to resumed work, a
        fallback, or completion". While requires_action is reported, a tool call whose request
        was declined (or failed) may be given up as failed without the work resuming: no
        progress, so running is not owed (the work may then end from requires_action)."""
        if self.real != fgm.REQUIRES_ACTION or self._blocked():
            return
        for tid, t in self.tools.items():
            if not t[1] and t[3] == "denied" and "fail" in self._can("tool_call", t[0]):
                add(("agent", "tool_status", (tid, tcm.FAILED)))

    def _unseen(self) -> bool:
        """Feature ``unseen``: while the state reported is unknown or unrecognized, work may start
        without running being reported (unknown is an "actual loss of observability", Session
        states): the report stays as it is until the Agent reports the real state (``restore``)
        or the work's idle. Within this Agent's bounds, only work it starts itself
        (``start_goal``): a prompt's work started unseen and ended (end_turn) leaves the prompt
        monitor counting the prompt as still awaiting its work, so that the Agent's own user
        message in its next work is taken for ACC-06 (an open question for the checker, not a
        rule of this Agent)."""
        return "unseen" in self.cfg.features and self.reported in (fgm.UNKNOWN, fgm.UNRECOGNIZED)

    def _unseen_prompt(self) -> bool:
        """Feature ``unadvertised``: while a custom state is reported, a prompt's work may start
        without running being reported at once. Session states leaves custom states to the
        Agent, advertised or not ("Unless the Client has advertised support for a custom or
        future state, Agents MUST still report running ... where the state transitions require
        them": still, beside them); the Client shows generic busy until a known state arrives,
        and this Agent reports running later (``restore``) or the work's idle."""
        return "unadvertised" in self.cfg.features and self.reported == fgm.UNRECOGNIZED

    def _do_start(self, unseen: str | None) -> list[Msg]:
        # started by the Agent itself (model.between OWN_USER_MESSAGE)
        initiated = self.followup and self.between.own_work(self._uninserted(), self._inserted_waiting())
        self._count_hook(followup_may_start=True)
        self._begin(fgm.RUNNING, initiated)
        self.followup = False
        self._mark_handled()
        if unseen is not None:  # not observed: the state reported stays as it is (``_unseen``)
            self.extras = self.extras | {"unseen"}
            return []
        if "ended_unseen" in self.extras:  # running after the unknown reads as restored, no start
            self.extras = self.extras | {"unseen"}
        return [self._report(fgm.RUNNING)]

    def _do_start_blocked(self, _: Any) -> list[Msg]:
        self._count_hook(followup_may_start=False)
        self._begin(fgm.REQUIRES_ACTION, initiated=False)
        self._mark_handled()
        return self._do_tool_ask(None)

    def _output(self) -> None:
        """Model output, counted in the interval's (``turn_outputs``): the foreground table's
        ``output`` from the reported state (custom states count as advertised when the Client may
        extend them, feature ``future``). A seeded bug
        that left running unreported sends its output anyway: its breach is already marked."""
        self.specs["foreground"].fire(self.reported, "output", self.fg_ctx)
        self._count_output()

    def _count_output(self) -> None:
        """One output of the interval (``turn_outputs``); while a cancel is carried out, the one
        flush it may send (``_output_room``)."""
        self.turn_outputs += 1
        if self.cancelling:
            self.extras = self.extras | {"flushed"}

    def _do_say(self, _: Any) -> list[Msg]:
        self._output()
        if self.cur_msg is None and self.cur_thought is not None and "chunks" in self.cfg.features:
            # the message derived from the same model output as the thought streams under its
            # messageId: one ID, thought chunks and message chunks (Entity IDs: two entities)
            self.cur_msg = self.cur_thought
            msg = wire.chunk("agent_message_chunk", self.sid, self.cur_msg, wire.text("Hello"))
        elif self.cur_msg is None or "chunks" not in self.cfg.features:
            self.cur_msg = self._msg_id("msg_a")
            msg = wire.message("agent_message", self.sid, self.cur_msg, [wire.text("Hello")])
        else:
            msg = wire.chunk("agent_message_chunk", self.sid, self.cur_msg, wire.text(" more"))
        self.history.append(msg)
        return [msg]

    def _do_clear(self, how: str) -> list[Msg]:
        """The current agent message's content cleared (feature ``clear``): Message
        IDs, "content: [] or content: null clears" it, and a concrete array replaces the previous
        content; so an Agent may take back what it streamed (the model's output withdrawn). An
        update of the work's output (``_output``: progress, counted in the interval's bound);
        retained, so a replay shows the message cleared too."""
        self._output()
        assert self.cur_msg is not None
        msg = wire.message("agent_message", self.sid, self.cur_msg, [] if how == "empty" else None)
        self.history.append(msg)
        return [msg]

    def _do_pending_say(self, _: Any) -> list[Msg]:
        """``output-while-requires-action`` (``late-chunk``, ``pending-output``): a chunk of the
        current message, which the work began before it blocked (``cur_msg``: first sent since the
        work started, after the last idle, and never while requires_action is reported: this
        Agent outputs only while running), sent while requires_action is reported: no progress, so
        the foreground table's ``output`` is not fired, but counted in the output bound as the
        chunk ``say`` sends is, and the same chunk. By an Agent that streams its messages (feature
        ``chunks``: off in the exhaustive slices that block work, which it would push past their
        state cap; the random walks and tests/test_readings_peers.py take it)."""
        self._count_output()
        assert self.cur_msg is not None
        msg = wire.chunk("agent_message_chunk", self.sid, self.cur_msg, wire.text(" more"))
        self.history.append(msg)
        return [msg]

    def _do_think(self, _: Any) -> list[Msg]:
        self._output()
        if self.cur_thought is None:
            # A thought derived from the same model output as the current message may share
            # its messageId: it is still a separate entity (Entity IDs).
            self.cur_thought = self.cur_msg or self._msg_id("msg_t")
            return [wire.chunk("agent_thought_chunk", self.sid, self.cur_thought, wire.text("hmm"))]
        return [wire.message("agent_thought", self.sid, self.cur_thought, [wire.text("hmm, yes")])]

    def _do_plan(self, _: Any) -> list[Msg]:
        self._count_output()
        self.next_plan += 1
        if "extras" in self.cfg.features:
            self.extras = self.extras | {"plan"}  # a plan exists that can be removed
        return [wire.plan(self.sid, "plan_1", self.next_plan)]

    def _do_tool(self, how: str | None = None, ask: bool = False) -> list[Msg]:
        """A foreground tool call, pending; ``"shared"`` (feature ``shared_ids``): under the
        current agent message's ID, an entity of another type ("An ID is unique among entities
        of the same type within a session, not across all entity types, so the same string can
        identify one entity of each type", Entity IDs)."""
        n = self._use("tool_calls")
        tid = self.cur_msg if how == "shared" and self.cur_msg is not None else f"tc_{n}"
        out = [wire.tool_call(self.sid, tid, "pending", title="Edit file", kind="edit")]
        self.tools[tid] = (self._fire("tool_call", tcm.PENDING, "start"), False, None, None)
        self.history.append(out[0])
        return [*out, *self._do_bg_ask(tid)] if ask else out

    _do_tool_ask_running = partialmethod(_do_tool, ask=True)
    """Ask permission and keep running: other foreground work still progresses (Waiting for
    user action), so several requests can be outstanding."""

    def _do_tool_ask(self, _: Any) -> list[Msg]:
        out = self._do_tool(ask=True)
        self.real = fgm.REQUIRES_ACTION
        out.append(self._report(fgm.REQUIRES_ACTION))
        return out

    def _do_block(self, _: Any) -> list[Msg]:
        if not self.between.blocked_on_user(self._asking()):
            self._breach(bw.BLOCKED_ON_USER.rule)  # blocked on no request (a seeded bug: Unchecked)
        self.real = fgm.REQUIRES_ACTION
        return [self._report(fgm.REQUIRES_ACTION)]

    def _do_tool_status(self, arg: tuple[str, str]) -> list[Msg]:
        """A tool call pauses, goes back to pending, resumes, or ends (5. Tool invocation and
        status reporting; Background work: pending and paused calls are live)."""
        tid, status = arg
        return [self._tool_update(tid, tcm.status_trigger(status) or "", status)]

    def _do_tool_content(self, arg: tuple[str, bool]) -> list[Msg]:
        """Content of a tool call, live or final: replaced by an update, appended by a chunk."""
        tid, replace = arg
        self._use("tool_updates")
        trigger = "replace_content" if replace else "append_content"
        _put(self.tools, tid, 0, self.specs["tool_call"].fire(self.tools[tid][0], trigger))
        if replace:
            return [
                wire.tool_call(self.sid, tid, content=[{"type": "content", "content": wire.text("diff")}])
            ]
        return [wire.tool_content_chunk(self.sid, tid, "more")]

    def _do_plan_removed(self, _: Any) -> list[Msg]:
        self.extras = self.extras | {"plan_removed"}
        return [wire.update(self.sid, {"sessionUpdate": "plan_removed", "planId": "plan_1"})]

    def _do_bg_ask(self, tid: str) -> list[Msg]:
        """A permission request for tool call ``tid`` (the move: of background work, the
        foreground state does not change)."""
        self.extras = self.extras | {"asked"}
        rid = f"{self.requests}{self._use('permissions')}"
        self.perms[rid] = pm.PENDING
        _put(self.tools, tid, 2, rid)
        stop = "user_stop" in self.cfg.features and not self.tools[tid][1]  # of foreground work: it may stop
        return [wire.request_permission(rid, self.sid, tid, stop)]

    def _do_perm_withdraw(self, rid: str) -> list[Msg]:
        self.perms[rid] = self._fire("permission", self.perms[rid], "withdraw")
        return [wire.cancel_request(rid)]

    def _do_elicit(self, arg: str | tuple[str, str]) -> list[Msg]:
        """Ask the user for input (form or URL mode): the request alone does not change the
        foreground state; the work is blocked from now on (``_blocked``: ``block`` reports it).
        With ``(mode, TIED)`` it is about a tool call it starts pending (the schema's optional
        ``toolCallId``: input the tool needs, such as an MCP server's elicitation), which waits
        for the answer (``_elicited_tools``); cancelled work gives that call its final status, and
        a late answer or completion is ignored (``model.between`` LATE_ANSWERS_IGNORED)."""
        mode, tied = arg if isinstance(arg, tuple) else (arg, None)
        if not self.between.mode_advertised(mode, self.elicit_modes):  # a seeded bug: Unchecked
            self._breach(bw.ADVERTISED_MODES.rule)
        self.extras = self.extras | {"asked"}
        rid = f"{self.requests.replace('perm_', 'elicit_', 1)}{self._use('elicitations')}"
        out: list[Msg] = []
        tid = None
        if tied or not self._applies(bw.LATE_ANSWERS_IGNORED.rule):  # (a seeded bug: always, run late)
            out = self._do_tool()
            tid = f"tc_{self.used['tool_calls']}"
        self.elicits[rid] = (em.PENDING, mode, False, False, tid)
        return [*out, wire.elicitation_create(rid, self.sid, mode, f"{rid}_url", tid)]

    def _answered(self, msg: Msg) -> None:
        """The Client's answer to a request of the Agent's: an elicitation's (``_elicit_answered``)
        or a permission request's, the permission table's row for it; an approval is marked on
        its tool call (``raced`` where it came after the cancel of its work and the reading
        ``approval-racing-cancel`` takes it as a refusal; ``late`` where a seeded bug uses an
        approval of cancelled work)."""
        rid = msg["id"]
        if rid in self.elicits:
            self._elicit_answered(rid, msg)
            return
        was = self.perms.get(rid)
        if was is None:
            return
        outcome = msg.get("result", {}).get("outcome", {})
        trig = "select" if outcome.get("outcome") == "selected" else "answer_cancelled"
        if "error" in msg:  # no outcome at all: nothing approved
            trig = "error"
        self.perms[rid] = self.specs["permission"].fire(was, trig)
        tid = self._tool_of(rid)
        if was == pm.PENDING:
            raced = (  # an approval after the cancel of its work (``model.between``)
                self.cancelling
                and not self.tools[tid][1]
                and not self.between.racing_approval_used(self.rd["approval-racing-cancel"])
            )
            allow = outcome.get("optionId") == "allow"
            stop = outcome.get("optionId") == wire.STOP_OPTION["optionId"]  # (``_stopped_by_user``)
            mark = "raced" if allow and raced else "allowed" if allow else "stopped" if stop else "denied"
            _put(self.tools, tid, 3, mark)
        elif (
            was in (pm.NOT_APPROVED, pm.WITHDRAWN)
            and outcome.get("optionId") == "allow"
            and not self.tools[tid][1]
            and self.tools[tid][0] in (tcm.PENDING, tcm.CANCELLED)
            and not self._applies(bw.CANCELLED_PERMISSIONS.rule)
        ):
            _put(self.tools, tid, 3, "late")  # not treated as refused (withdrawn or not): used

    def _elicit_answered(self, rid: str, msg: Msg) -> None:
        """The Client's answer: the elicitation table's row for it (an action the schema does not
        name is handled as cancel); an answer after the work ended is late, and ignored."""
        e = self.elicits[rid]
        result = msg.get("result")
        action = result.get("action") if isinstance(result, dict) else None
        trigger = action if action in ("accept", "decline") else "cancel"
        url = e[1] == "url"
        spec = self.specs["elicitation"]
        if spec.successor(e[0], trigger, {"url": url}) is None:
            return  # only after a seeded bug's move (a second completion): done with it
        after = spec.fire(e[0], trigger, {"url": url})
        outside = url and trigger == "accept"  # the user goes on to the URL
        self.elicits[rid] = (after, e[1], outside, *e[3:])
        if trigger == "accept" and after == em.LATE:
            self._late_elicitation(e)

    def _do_elicit_complete(self, rid: str) -> list[Msg]:
        """The user finished a URL elicitation outside the Client (after the work ended: late, and
        the work is not resumed)."""
        e = self.elicits[rid]
        after = self._fire("elicitation", e[0], "complete", {"url": e[1] == "url"})
        self.elicits[rid] = (after, e[1], e[2], True, e[4])
        if after == em.LATE:
            self._late_elicitation(e)
        return [wire.elicitation_complete(f"{rid}_url")]

    def _late_elicitation(self, e: tuple[Any, ...]) -> None:
        """A late accept or external completion of an elicitation of cancelled work: ignored,
        unless a seeded bug left its tool call pending to run it now (``late_run``)."""
        tid = e[4]
        if tid is not None and self.tools[tid][0] == tcm.PENDING and self.tools[tid][3] == "ended-e":
            _put(self.tools, tid, 3, "late-e")

    def _elicited_tools(self) -> frozenset[str]:
        """Tool calls an elicitation about them still blocks (the tool waits for the answer)."""
        return frozenset(e[4] for e in self.elicits.values() if e[4] and e[0] in em.BLOCKING)

    def _do_elicit_withdraw(self, rid: str) -> list[Msg]:
        e = self.elicits[rid]
        state = e[0]
        if state == em.PENDING and self.cancelling:  # the cancelled work's: no longer waited on
            state = self._fire("elicitation", state, "abandon")
        _put(self.elicits, rid, 0, self._fire("elicitation", state, "withdraw"))
        return [wire.cancel_request(rid)]

    def _do_resume(self, _: Any) -> list[Msg]:
        self.real = fgm.RUNNING
        return [self._report(fgm.RUNNING)]

    def _do_tool_run(self, tid: str) -> list[Msg]:
        """Run the tool; a refused call (or one whose approval raced the cancel, taken as not
        approved: ``receive``) fails instead, this Agent's fallback."""
        t = self.tools[tid]
        if t[3] in ("denied", "raced"):  # raced: an approval taken as a refusal
            return [self._tool_update(tid, "fail")]
        return [self._tool_update(tid, "run"), wire.tool_content_chunk(self.sid, tid, "working")]

    def _do_late_run(self, tid: str) -> list[Msg]:
        """A late approval of a request of cancelled work runs its tool call (offered only where
        the Agent does not apply ``cancelled_permissions``): a call left pending, or one given its
        cancelled status (``end`` with ``WAITING``), reopened (the tool call table's refusal too)."""
        self._breach(
            self.between.late_answer("elicitation" if self.tools[tid][3] == "late-e" else "permission").rule
        )
        if self.tools[tid][0] == tcm.CANCELLED:
            reopen = self.specs["tool_call"].written_refusal(tcm.CANCELLED, "run")
            if reopen is not None:
                self._breach(reopen)
            self.tools[tid] = (tcm.IN_PROGRESS, *self.tools[tid][1:3], None)
            return [wire.tool_call(self.sid, tid, tcm.IN_PROGRESS)]
        _put(self.tools, tid, 3, None)
        return [self._tool_update(tid, "run")]

    def _do_tool_done(self, tid: str) -> list[Msg]:
        return [
            self._tool_update(tid, "complete", content=[{"type": "content", "content": wire.text("done")}])
        ]

    def _do_end(self, reason: Any) -> list[Msg]:
        first: list[Msg] = []
        if isinstance(reason, tuple) and reason[1:] == (WAITING,):  # a seeded bug (``_active_events``)
            reason = reason[0]
            first = [self._tool_update(tid, "cancel") for tid in self._waiting_calls()]
        reason, seen = _seen(reason)
        return [*first, *self._settle_end(reason, seen=seen)]

    def _waiting_calls(self) -> tuple[str, ...]:
        """Foreground tool calls still pending on their open permission request."""
        return tuple(
            tid
            for tid, t in self.tools.items()
            if not t[1] and t[0] == tcm.PENDING and self.perms.get(t[2]) == pm.PENDING
        )

    def _settle_end(self, reason: str, carry_past_error: bool = False, seen: bool = True) -> list[Msg]:
        """End foreground work as ``model.between`` says what it owes and takes with it: its live
        tool calls get a final status before the idle (CANCELLED_TOOLS_FINAL, UPDATES_BEFORE_IDLE;
        ``may_carry_on``: one may carry on after it, unless the idle's background list leaves it
        out; past an error idle only in the move that chooses it, ``carry_past_error``), the
        Agent stops waiting on the permission requests of the work it ends (``ends_with_work``,
        CANCELLED_PERMISSIONS: the permission table's abandon) and stops the listed work a cancel
        covers (CANCEL_COVERS), then idles (not ``seen``: the work ends unobserved, the state
        reported stays as it is, ``_ends_unseen``)."""
        out: list[Msg] = []
        confirms = reason in self.between.confirming_reasons()
        carry = self.rd["tool-updates-after-idle"]
        trigger = "cancel" if confirms else "fail"
        # a seeded bug that withholds the failed status deviates at an error idle (FAIL-04's), not at
        # an idle that ends work for another reason (its tool calls may carry on, or are owed anyway)
        withheld = [
            rule_of(d)
            for d in deviations.matching(self.deviations, deviations.Withhold, machine="tool_call")
            if trigger in d.triggers and (confirms or reason == fgm.ERROR)
        ]
        elicited = self._elicited_tools() if self.elicits else frozenset()
        left_out = self._bg_list() is not None  # the idle's list does not name a carried call
        for tid in self._fg_tools_live():
            if withheld:  # a seeded bug never gives the work's tool calls this final status
                self._breach(withheld[0])
                continue
            t = self.tools[tid]
            if (
                confirms
                and self.perms.get(t[2]) == pm.PENDING
                and not self._applies(bw.CANCELLED_PERMISSIONS.rule)
            ):
                self._breach(bw.CANCELLED_TOOLS_FINAL.rule)  # waiting on its permission request: left pending
                continue
            if confirms and tid in elicited and not self._applies(bw.LATE_ANSWERS_IGNORED.rule):
                self._breach(bw.CANCELLED_TOOLS_FINAL.rule)  # waiting on its elicitation: left pending
                _put(self.tools, tid, 3, "ended-e")
                continue
            if self.between.may_carry_on(t[0], reason, confirms, carry, carry_past_error, left_out):
                _put(self.tools, tid, 1, "carried")  # it carries on after the idle as independent work
                continue
            out.append(self._tool_update(tid, trigger))
        # the idle after a cancel that reached the work abandons its requests whatever its stop
        # reason (under cancel-takes-effect=when-acted the work may end with its own): the
        # withdrawal goes before it as before a confirming one
        by_idle = (confirms or self.cancelling) and self.between.withdrawal_by_idle(
            self.rd["permission-withdrawal-deadline"]
        )
        for rid, st in self.perms.items():
            if st == pm.PENDING and self.between.ends_with_work(
                bool(self.tools[self._tool_of(rid)][1]), confirms
            ):
                # not approved now; the $/cancel_request that lets the Client dismiss it goes
                # before the idle confirming a cancellation (CANCELLED_PERMISSIONS_WITHDRAWN,
                # by-idle), else it is a later choice (``perm_withdraw``), and the Client may
                # answer first
                self.perms[rid] = after = self.specs["permission"].fire(st, "abandon")
                if not by_idle:
                    continue
                if "withdraw" in self._can("permission", after):
                    out += self._do_perm_withdraw(rid)
                elif "withdraw" in self.specs["permission"].allowed(after, "agent"):
                    self._breach(bw.CANCELLED_PERMISSIONS_WITHDRAWN.rule)  # a seeded bug withholds it
        if self.between.ends_with_work(listed=True, cancelled=confirms):  # a cancel covering listed work
            for key in [k for k in self.listed if self.items.get(k) == bgm.LISTED]:
                if self.items.get(key) == bgm.LISTED:  # (an embedding tool call ends with its terminal)
                    out += self._do_bg_finish(key)
            for key in [k for k in self.listed if self.items.get(k) == bgm.FINALIZED]:
                self._unlist(key)  # the idle's own list removes it
        for n in self.prompts:  # the work the waiting prompts were received in ends
            if self.prompts[n][5]:
                _put(self.prompts, n, 5, False)
        for rid, e in self.elicits.items():
            if e[0] in em.BLOCKING:  # no longer waited on
                _put(self.elicits, rid, 0, after := self.specs["elicitation"].fire(e[0], "abandon"))
                # withdrawn before the idle confirming a cancellation (CANCELLED_ELICITATIONS_WITHDRAWN,
                # by-idle), else later (``elicit_withdraw``), and the Client may answer first
                if not by_idle or "withdraw" not in self.specs["elicitation"].allowed(after, "agent"):
                    continue  # (an accepted URL one is late: nothing to withdraw)
                if "withdraw" in self._can("elicitation", after):
                    out += self._do_elicit_withdraw(rid)
                else:
                    self._breach(bw.CANCELLED_ELICITATIONS_WITHDRAWN.rule)  # a seeded bug withholds it
        err = (
            {"code": wire.INTERNAL_ERROR, "message": "model request failed"} if reason == fgm.ERROR else None
        )
        self.real = fgm.IDLE
        self.cancelling = False
        # (BLOCKED_ON_USER: a new stretch of asking)
        self.extras = self.extras - {"asked", "unobserved", "unseen", "flushed"}
        self.last_stop = reason
        if seen:
            out.append(self._report(fgm.IDLE, reason, err))
        else:  # work started next is shown as running after the unknown: no start (``_do_start``)
            self.extras = self.extras | {"ended_unseen"}
        self.ended_output = self.cur_msg or NO_MESSAGE
        self.cur_msg = self.cur_thought = None
        self.turn_outputs = 0
        return out
