"""The simulated Agent's freedoms that no table row is about: a reading's, and its own.

Readings (``cfg.readings``): where the alternatives of a reading give an Agent different
freedoms, the Agent takes those of the alternative in force, so exploring under a reading explores
that reading's protocol. What each alternative lets the Agent do is the reading's ``peers`` text in
the catalogue (``properties.readings``, ``acp-model readings``); each use in the Agent's modules is
marked with the reading's name (``rd``).

Owns: ``Freedoms``, the moves only a reading's alternative gives, and the Agent's own
once-per-run freedoms (``_own_events``). A reading's freedom within a table's move is taken where
that move is offered, in the module of its layer.

Must not know: channels, monitors, or files.
"""

from __future__ import annotations

from typing import Any

from model import foreground as fgm
from model import prompt as prm
from model import session as sm
from model import toolcall as tcm
from simulator.peers import deviations, wire
from simulator.peers.agent_state import NO_MESSAGE, Event, Msg, _put
from simulator.peers.agent_work import ForegroundWork

_RESTATED = (fgm.END_TURN, fgm.MAX_TOKENS)
"""Stop reasons the Agent may repeat on an idle of its own (the ones it restates as new)."""

_PLACED = {fgm.IDLE: "idle", fgm.UNKNOWN: "other", fgm.UNRECOGNIZED: "other"}
"""Where ``model.between`` own_user_message places the Agent's own user message, by the state
reported (``_may_announce``: the states it may announce from)."""


class Freedoms(ForegroundWork):
    __slots__ = ()

    def _synthetic_events(self, add: Any) -> None:
        """A user message no prompt accounts for, once per run, as running work's first output
        (``_do_synthetic_user``): under ``unaccounted-user-message=other-sources``, or under
        ``agent-initiated`` in work the Agent started itself (``model.between``
        OWN_USER_MESSAGE) as the wire shows it (the start of work begun unseen, ``_unseen``,
        was never reported) while no prompt waits for its answer. Feature ``own_text``: also
        later in that work, after its other output, with its own text or the text of a prompt
        it received (``rid``: an insertion of its own whose content is its choice; "Clients must
        not infer the association from content", 2. Prompt accepted); and in work a prompt
        started, once no prompt waits (``_after_answer``)."""
        if "synthetic" in self.extras:
            return
        own = "initiated" in self.extras and "unseen" not in self.extras
        if (
            self.real == fgm.RUNNING
            and (
                self.rd["unaccounted-user-message"] == "other-sources"
                or (
                    self.rd["unaccounted-user-message"] == "agent-initiated"
                    and own
                    and self.between.own_user_message(
                        "active" if self.reported in (fgm.RUNNING, fgm.REQUIRES_ACTION) else "other", own
                    )
                    and all(p[0] in prm.SPEC.final for p in self.prompts.values())
                )
            )
        ) or self._after_answer():
            later = "own_text" in self.cfg.features
            if self.turn_outputs == 0 or later:
                add(("agent", "synthetic_user", None))
            for rid in self.prompts if later else ():
                add(("agent", "synthetic_user", rid))

    def _after_answer(self) -> bool:
        """Feature ``own_text`` (the decidability twins' only): its own user message also in
        active work it did not start itself, reported active as it really is, once no prompt
        waits and outside resume windows: ``model.between`` own_user_message allows it in any
        work but a refused prompt's (one waiting at the work's start, ``waited:`` in ``extras``,
        since answered with an error, and none waiting then answered with success:
        ``refused_work``)."""
        active = (fgm.RUNNING, fgm.REQUIRES_ACTION)
        return (
            "own_text" in self.cfg.features
            and self.real in active
            and self.reported == self.real
            and "unseen" not in self.extras
            and self.resume_rid is None
            and self.session == sm.OPEN
            and self.rd["unaccounted-user-message"] == "agent-initiated"
            and all(p[0] in prm.SPEC.final for p in self.prompts.values())
            and bool(
                self.between.own_user_message(
                    "active",
                    False,
                    refused_work=self.between.refused_work(
                        self._waited_answered((prm.REJECTED, prm.WITHDRAWN)),
                        self._waited_answered((prm.ANSWERED,)),
                    ),
                )
            )
        )

    def _waited_answered(self, states: tuple[str, ...]) -> bool:
        """A prompt that waited at the start of the current work (``waited:`` in ``extras``) is
        now in one of ``states``."""
        return any(f"waited:{r}" in self.extras and p[0] in states for r, p in self.prompts.items())

    def _late_output_events(self, add: Any) -> None:
        """A patch of the ended work's message after its idle (``_do_late_output``): where the
        reading allows it (``_may_patch_ended``), or where a seeded bug sends it although
        updates_before_idle forbids it (``deviations.Offer``): after the idle, while the session
        is still reported idle (not once unknown or new work is shown). The seeded bug patches
        only what the ended work reported (its message, or a tool call it finished): output
        under an ID the wire has not seen is new work to a Client (FG-01/FG-02), not an update
        of the ended work (DONE-03)."""
        if self._may_patch_ended():
            add(("agent", "late_output", None))
        elif (
            self.deviations
            and self.reported == fgm.IDLE
            and deviations.offered(self.deviations, "late_output", self.session)
        ):
            if self.ended_output != NO_MESSAGE:  # the ended work began a message
                add(("agent", "late_output", None))
            for tid, t in self.tools.items():  # content of a tool call the ended work finished
                if not t[1] and t[2] is None and t[0] in tcm.FINAL:  # (begun running, asking nothing)
                    add(("agent", "late_output", (tid, True)))
                    add(("agent", "late_output", (tid, False)))

    def _idle_reading_events(self, add: Any) -> None:
        """A repeated idle, once per run, where the reading lets a repeat bring a stop reason
        (``repeated-idle-new-stop-reason=snapshot``): a new one, or the last one again where the
        resume's snapshot left it out (``unstated``: within this Agent's bounds, the one place a
        repeat tells the Client something). Under ``completion`` a stop reason the idle before
        it did not carry completes work, so the Agent never sends one there: it would report
        running first."""
        if self.last_stop is None or self.reported != fgm.IDLE or "restated" in self.extras:
            return
        if self.rd["repeated-idle-new-stop-reason"] != "snapshot":
            return
        if "unstated" in self.extras and self.last_stop in _RESTATED:
            add(("agent", "restate_idle", self.last_stop))
        if self._restated_reason() is not None:
            add(("agent", "restate_idle", None))

    def _carried_events(self, add: Any) -> None:
        for tid, t in self.tools.items():
            if t[1] == "carried" and t[0] in tcm.LIVE:
                add(("agent", "carried_done", tid))
        if (
            "correct" in self.cfg.features
            and "corrected" not in self.extras
            and self.rd[tcm.FINAL_CHANGE] == "reopen-only"
        ):
            for tid, t in self.tools.items():
                if t[0] in tcm.FINAL:
                    add(("agent", "tool_correct", tid))

    def _do_tool_correct(self, tid: str) -> list[Msg]:
        """``final-status-change=reopen-only``: a finished tool call's outcome is corrected to
        another final status (completed to failed, failed or cancelled to completed), once per run
        (feature ``correct``). It starts no work: no move of the tool-call
        table, whose call stays final."""
        self.extras = self.extras | {"corrected"}
        status = tcm.FAILED if self.tools[tid][0] == tcm.COMPLETED else tcm.COMPLETED
        _put(self.tools, tid, 0, status)
        return [wire.tool_call(self.sid, tid, status)]

    def _restated_reason(self) -> str | None:
        if self.last_stop != fgm.END_TURN:
            return fgm.END_TURN
        return fgm.MAX_TOKENS if "limits" in self.cfg.features else None

    def _own_events(self, add: Any, active: bool, ev: list[Event]) -> None:
        """Freedoms of the Agent no table row is about, each once per run:
        - ``goal``: foreground work it starts itself while idle, no prompt waiting (pursuing a
          goal: StateUpdate, "foreground work ... can start with a prompt or be agent-initiated");
        - ``commands``: an ``available_commands_update``;
        - ``snapshot``: the state reported repeated, once per stretch of it (``repeat``,
          ``_repeatable``);
        - ``bare_error``: ending (or stopping) work with the error stop reason and no ``error``
          field;
        - (any run with ``fail``) ending work with the error stop reason while an in_progress tool
          call carries on past it (``_may_carry_past_error``);
        - ``stop_unlisted``: while it carries out a cancel, stopping a terminal it does not list."""
        features = self.cfg.features
        if self.cancelling and "stop_unlisted" in features and self.session in (sm.OPEN, sm.CLOSING):
            self._stop_unlisted_events(add)
        if active and "bare_error" in features and "fail" in features:  # a closing session's work too
            if ("agent", "end", "error") in ev:
                add(("agent", "end_bare_error", None))
            if ("agent", "stop", "error") in ev:
                add(("agent", "end_bare_error", "stop"))
        if self.session != sm.OPEN:
            return
        if not active and "goal" in features and self._goal_events(add) and self._may_announce():
            add(("agent", "synthetic_user", "announce"))
        if "commands" in features and "commands" not in self.extras:
            add(("agent", "commands", None))
        if "snapshot" in features and self._repeatable():
            add(("agent", "repeat", None))
        if active and ("agent", "end", "error") in ev and self._may_carry_past_error():
            add(("agent", "end_error_carrying", None))

    def _repeatable(self) -> bool:
        """Feature ``snapshot``: the state reported may be reported again with nothing new (the
        same state, the current background list, no stop reason), once per stretch of that
        state (``repeated``, cleared by the next transition reported: ``_report``). State
        transitions: an Agent may repeat a current-state snapshot, which the Client applies
        idempotently, starting or ending no work ("Agents MAY repeat current-state snapshots");
        so running repeated while a cancel is carried out is no new work, requires_action
        repeated no new block, idle repeated after a prompt was sent no completion of it, and
        right after the session/new response it is the optional initial idle (Initial state and
        synchronization: "A separate initial idle notification is optional"). Not a custom state
        the Client did not advertise (feature ``unadvertised``): a snapshot there restores the
        known state (``_snapshot_now``)."""
        if "repeated" in self.extras:
            return False
        return self.reported != fgm.UNRECOGNIZED or "unadvertised" not in self.cfg.features

    def _do_repeat(self, _: Any) -> list[Msg]:
        self.extras = self.extras | {"repeated"}
        return [self._state(self.reported)]

    def _goal_events(self, add: Any) -> bool:
        """Whether work of its own may start now, offered (``start_goal``; also unseen,
        ``_unseen``): none started yet, the foreground table lets work start, no prompt waits."""
        if (
            "goal" in self.extras
            or "start" not in self._can("foreground", self.real, self.fg_ctx)
            or self._oldest_waiting() is not None
            or self._inserted_waiting()
        ):
            return False
        add(("agent", "start_goal", None))
        if self._unseen():
            add(("agent", "start_goal", "unseen"))
        return True

    def _may_announce(self) -> bool:
        """Feature ``announce``: before starting work of its own (``start_goal``) from idle, the
        Agent reports its own user message for it (``synthetic_user``), outside work, and then
        reports that work starting next (model.between OWN_USER_MESSAGE: not yet known at the
        message, allowed when the Agent's own work is reported starting next, which it then
        must). Also while unknown or a custom state is reported (no work placed: ``other``), its
        own work then starting unseen where it may (``_unseen``) and shown later (``restore``)."""
        shown = _PLACED.get(self.reported)
        return (
            shown is not None
            and "announce" in self.cfg.features
            and "synthetic" not in self.extras
            and self.rd["unaccounted-user-message"] == "agent-initiated"
            and self.between.own_user_message(shown, False) is None
        )

    def _do_start_goal(self, unseen: str | None) -> list[Msg]:
        self.extras = (self.extras - {"announced"}) | {"goal"}
        self.followup = True  # work of its own, as after a background task finished
        return self._do_start(unseen)

    def _do_commands(self, _: Any) -> list[Msg]:
        self.extras = self.extras | {"commands"}
        command = {"type": "command", "name": "review", "description": "Review the open changes"}
        return [
            wire.update(
                self.sid, {"sessionUpdate": "available_commands_update", "availableCommands": [command]}
            )
        ]

    def _do_end_bare_error(self, move: str | None) -> list[Msg]:
        """An error idle without its ``error`` field: of ``end``, or (``move`` "stop") of ``stop``."""
        out = self._do_stop(fgm.ERROR) if move == "stop" else self._settle_end(fgm.ERROR)
        out[-1]["params"]["update"].pop("error", None)  # the error stop reason alone
        return out

    def _meta_patch_events(self, add: Any) -> None:
        """Feature ``meta``: once per run, while idle after work that sent a message, a patch of
        that message's metadata only (Entity IDs: later updates patch an entity in place, after
        idle too; no content, so nothing the ended work owed comes after its idle)."""
        if (
            "meta" in self.cfg.features
            and "meta" not in self.extras
            and self.real == self.reported == fgm.IDLE
            and self.ended_output not in (None, NO_MESSAGE)
        ):
            add(("agent", "meta_patch", None))

    def _do_meta_patch(self, _: Any) -> list[Msg]:
        self.extras = self.extras | {"meta"}
        mid = self.ended_output
        assert mid is not None
        upd = {"sessionUpdate": "agent_message", "messageId": mid, "_meta": {"acp-model/rated": "helpful"}}
        return [wire.update(self.sid, upd)]

    def _do_synthetic_user(self, how: str | int | None) -> list[Msg]:
        """``unaccounted-user-message=other-sources`` (or ``agent-initiated``, in a follow-up the
        Agent started itself while no prompt waits for its answer): a user message of the Agent's
        own running work (an Agent-side insertion), which no session/prompt accounts for; once per
        run, before the work's other output, or (``how`` a prompt's request ID, feature
        ``own_text``) at any point of that work with that prompt's text. ``announce``
        (``_may_announce``): sent from idle (or while unknown or a custom state is shown), its
        own work to start next, under an ID of its own that takes no number from the message
        IDs of prompts (it mints IDs as it likes)."""
        announce = how == "announce"
        self.extras = self.extras | ({"synthetic", "announced"} if announce else {"synthetic"})
        mid = "msg_x_own" if announce else self._msg_id("msg_x")
        content = self._echo(how) if isinstance(how, int) else [wire.text("continue")]
        msg = wire.message("user_message", self.sid, mid, content)
        self.history.append(msg)
        return [msg]

    def _do_restate_idle(self, same: str | None) -> list[Msg]:
        """A repeated idle: the last stop reason again (``same``), or
        (``repeated-idle-new-stop-reason=snapshot``) with updated information, a new one."""
        self.extras = (self.extras - {"unstated"}) | {"restated"}
        reason = same or self._restated_reason()
        self.last_stop = reason
        return [self._state(fgm.IDLE, reason)]

    def _do_carried_done(self, tid: str) -> list[Msg]:
        """``tool-updates-after-idle=background``: a tool call that carried on after the idle
        ends as independent work."""
        return [self._tool_update(tid, "complete")]

    def _may_carry_past_error(self) -> bool:
        """``tool-updates-after-idle=background``: an in_progress tool call of the failing work may
        carry on past its error idle as independent work, where no background list would leave it
        out (``model.between`` FAILED_TOOLS_FINAL: the Agent reports no list)."""
        return (
            self.between.carries_on_after_idle(self.rd["tool-updates-after-idle"])
            and not self.between.failed_work_tool(self._bg_list() is not None)
            and any(self.tools[t][0] == tcm.IN_PROGRESS for t in self._fg_tools_live())
        )

    def _do_end_error_carrying(self, _: Any) -> list[Msg]:
        """The error idle, an in_progress tool call carrying on past it (``_may_carry_past_error``)."""
        return self._settle_end(fgm.ERROR, carry_past_error=True)

    def _may_patch_ended(self) -> bool:
        """While idle, a chunk may patch the ended work's agent message where ``model.between``
        says so (``patch_allowed``: the reading ``patch-after-idle``)."""
        return (
            self.between.patch_allowed(self.rd["patch-after-idle"])
            and self.ended_output not in (None, NO_MESSAGE)
            and self.real == self.reported == fgm.IDLE
            and self.session == sm.OPEN
        )

    def _do_late_output(self, tool: tuple[str, bool] | None) -> list[Msg]:
        """Output of the ended work after its idle: a patch the reading allows, else (a seeded
        bug's ``Offer``: more of the message the ended work began, or content of a tool call it
        had finished, ``tool``: (its id, replaced rather than appended)) the breach
        ``model.between`` names (``Rules.late_update``)."""
        late = self.between.late_update(self.last_stop in self.between.confirming_reasons()).rule
        if tool is not None:
            if not self.between.patch_allowed(self.rd["patch-after-idle"]):
                self._breach(late)
            self.ended_output = None
            tid, replace = tool
            if replace:
                content = [{"type": "content", "content": wire.text("late")}]
                return [wire.tool_call(self.sid, tid, content=content)]
            return [wire.tool_content_chunk(self.sid, tid, "late")]
        mid = self.ended_output
        assert mid is not None and mid != NO_MESSAGE  # (``_late_output_events``)
        if not self._may_patch_ended():
            self._breach(late)
        self.ended_output = None
        return [wire.chunk("agent_message_chunk", self.sid, mid, wire.text(" (late)"))]
