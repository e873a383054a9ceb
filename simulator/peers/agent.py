"""The simulated Agent: every choice the spec leaves to an Agent is an enabled event.

Theory of operation
-------------------
The Agent owns one session (``MAIN``) and, when it delegates, one child session (``CHILD``);
where several Agents share one connection (``simulator.peers.stdio_agent``), each is given its own
session IDs and a prefix for its permission requests' IDs (``sid``, ``child``, ``requests``).
``enabled()`` lists what it may do now, as
``("agent", name, arg)`` tuples in a fixed order; ``do(event)`` performs one choice and returns
the wire messages it sends, in send order; ``receive(message)`` reacts to a delivered client
message (reactions that the spec makes immediate, e.g. a session/cancel covering held prompts,
happen here; answers are later choices).

Its choices come from the machine tables: the moves it may offer on an entity are the agent
rows from the entity's state (``_can``: ``MachineSpec.allowed`` of its ``Config``'s tables, guards
read on the context it knows: the oldest waiting prompt, the reading in force), narrowed by its
own choices and bounds, each named in the docstring of the method that offers them
(``_prompt_events``, ``_active_events``, ``_tool_events``, ``_item_events``,
``_compaction_events``). So a row a variant adds is a move it offers.

The rules between machines are not written here: the Agent asks ``model.between`` (its
``Rules``, ``self.between``), whose functions the monitors call too (what is owed before an idle,
what an ending takes with it, the stop reasons of cancelled work, how a prompt is answered, what
a permission answer allows; ``tests/test_rule_in_one_place.py`` keeps their IDs out of here).
What narrows the tables' moves beyond that is named where it is offered: a bound (``Config``
counts, a move once per run), this Agent's own behaviour (a choice a real Agent makes one way),
or a reading's freedom (``rd``). Each step advances the model's machines through
``MachineSpec.fire``, so an agent that tried a move the tables forbid would raise the named
violation.

The tables it fires are its ``Config``'s (``Config.variant``, ``properties.variants.tables_of``):
the model's, or a variant's, where a removed row makes the move that needs it raise a violation flagged
``removed`` (``choices`` leaves such moves out) and a dropped rule's forbidden cell leaves the state.

The Agent is written in layers, a module each: its state and plumbing (``agent_state``), its
background work and compactions (``agent_background``), its foreground work and requests of the
user (``agent_work``), the freedoms no table row is about (``agent_freedoms``), the seeded bugs'
deviations (``agent_faults``); here the prompts, close and resume, and every choice's order.

Must not know: channels, the client, monitors, or files.
"""

from __future__ import annotations

import copy
from functools import partialmethod
from typing import Any

from model import background as bgm
from model import between as bw
from model import compaction as cm
from model import foreground as fgm
from model import prompt as prm
from model import session as sm
from model.core import ProtocolViolation
from properties.readings import BUSY_REFUSAL
from simulator.peers import deviations, wire
from simulator.peers.agent_faults import AGENT_FAULTS, Deviating
from simulator.peers.agent_freedoms import Freedoms
from simulator.peers.agent_state import _INSERTABLE, CHILD, FUTURE_STATE, MAIN, UNSEEN, Event, Msg, _put

__all__ = ["AGENT_FAULTS", "CHILD", "FUTURE_STATE", "MAIN", "Agent"]


class Agent(Freedoms, Deviating):
    __slots__ = ()

    def _start_cancelling(self, trigger: str) -> None:
        """A session/cancel (``trigger`` cover) or session/close (close) reached the prompts (the
        prompt table says what it means in each state) and any active work. When it came while the
        reported state was unknown or unrecognized (``unobserved``), the Agent could not see the
        work at the time: it may have ended on its own, unobserved, before the cancel took effect
        (unknown: "actual loss of observability", Session states), so the work may still end with
        its own stop reason (``model.between`` confirming_idle asks for cancelled only after a
        cancel received while work was reported active)."""
        for rid in self.prompts:
            self._prompt_fire(rid, trigger)
        if self.real == fgm.IDLE:
            return
        if self.reported in (fgm.RUNNING, fgm.REQUIRES_ACTION):  # this one covers work it saw
            self.extras = self.extras - {"unobserved"}
        elif not self.cancelling:
            self.extras = self.extras | {"unobserved"}
        self.cancelling = True

    def receive(self, msg: Msg) -> None:
        method = msg.get("method")
        if method == "session/prompt":
            rid = msg["id"]
            content = msg["params"].get("prompt")
            # "empty": the Agent may reject it (-32602) or insert it; "unadvertised": it must reject
            invalid = "" if content else "empty"
            if content and self.between.unadvertised((b.get("type") for b in content), self.allowed):
                invalid = "unadvertised"
            # (whether it came during active work matters only where steering is not allowed)
            during = self.real != fgm.IDLE and not self.between.steer
            self.prompts[rid] = (prm.RECEIVED, None, False, False, invalid, during)
            if self.contents is not None:
                self.contents[rid] = content
            if self.cancelling:  # a seeded bug takes it as covered by the cancel being carried out
                for d in deviations.matching(self.deviations, deviations.Stretch, machine="prompt"):
                    self._breach(d.rule)
                    self._prompt_fire(rid, d.trigger)
        elif method == "session/cancel":
            self._start_cancelling("cover")
        elif method == "$/cancel_request":
            rid = msg["params"]["requestId"]
            if rid in self.prompts:
                self._prompt_fire(rid, "cancel_request")
        elif method == "session/close":
            self.close_rids = (*self.close_rids, msg["id"])
            self.session = self.specs["session"].fire(self.session, "close")
            if self.resume_rid is not None:  # closed during the resume: it cannot succeed now
                self.refusing, self.resume_rid = (*self.refusing, self.resume_rid), None
            self._start_cancelling("close")
        elif method == "session/resume":
            self.session = self.specs["session"].fire(self.session, "resume")
            if self.resume_rid is not None:  # a second resume: this handshake goes on
                self.refusing = (*self.refusing, msg["id"])
            else:
                self.resume_rid = msg["id"]
                self.replay = "replayFrom" in msg["params"]
        elif "id" in msg and "method" not in msg:
            self._answered(msg)

    def enabled(self) -> list[Event]:
        ev: list[Event] = []
        add = ev.append
        if self.refusing:  # answered before anything else: the window of a refused resume
            add(("agent", "refuse_resume", None))  # holds no other message (``_do_refuse_resume``)
            return ev
        if self.session == sm.RESUMING:
            return self._resume_events()
        if self.session == "closed":
            if self.close_rids:  # a session/close that reached the closed session
                add(("agent", "close_response", None))
            for rid in self.prompts:  # those a close stopped: -32800 after the close response
                if self.prompts[rid][0] in self._answered_after_close():  # (no order binds them)
                    self._prompt_events(add, rid, None, False)
            return ev
        if "announced" in self.extras:  # its own user message sent: its own work starts next
            self._goal_events(add)
            return ev
        waiting = self._oldest_waiting()
        active = self.real != fgm.IDLE
        features = self.cfg.features
        open_ = self.session == sm.OPEN
        for rid in self.prompts:
            p = self.prompts[rid]
            st = p[0]
            self._prompt_events(add, rid, waiting, open_)
            if self.between.user_message_reportable(st in (prm.INSERTED, prm.ANSWERED)) and not p[2]:
                add(("agent", "user_message", rid))
                if "chunks" in features:
                    add(("agent", "user_chunks", rid))
                # ``user-message-content=upsert``: an update about an inserted user message may
                # carry content a later one replaces (``model.between``)
                interim = self.between.user_content_replaceable(self.rd["user-message-content"])
                if "interim" in features and "interim" not in self.extras and interim:
                    add(("agent", "user_message", (rid, "interim")))
                if "live_only" in features:  # reported live, not retained: no replay shows it
                    add(("agent", "user_message", (rid, "live")))
        # the close response, once the session table allows it; that everything else is settled
        # first (work ended and reported idle, prompts answered or stopped, compactions ended,
        # background work finished and unlisted) is this Agent's own behaviour (closing stops
        # its work), not a rule: only the prompts' answers are ACC-13's (the prompt table)
        if (
            not active
            and self._closes_as_reported()
            and "closed" in self._can("session", self.session)
            and all(
                self.prompts[r][0] in (*prm.SPEC.final, *self._answered_after_close()) for r in self.prompts
            )
            and (
                all(st in cm.TERMINAL for st in self.compactions.values())
                or "complete" in deviations.withheld(self.deviations, "compaction")
            )
            and all(st == bgm.DONE for st in self.items.values())
            and not self.between.user_messages_owed(self._unreported())  # closing discharges no report
        ):
            add(("agent", "close_response", None))
        doing = self._can("foreground", self.real, self.fg_ctx)  # what the work really in it may do
        if not active:
            if open_ and "start" in doing:
                work = self._inserted_waiting() or self._hook_possible()
                if work or self.followup:
                    add(("agent", "start", None))
                    if work and self._unseen_prompt():
                        add(("agent", "start", "unseen"))
                    if (
                        work
                        and "start_blocked" in doing
                        and "permission" in features
                        and self._room("permissions")
                    ):
                        add(("agent", "start_blocked", None))
        else:
            self._active_events(add, doing)
            if self._ends_unseen():  # each end offered, also unobserved
                for e in [e for e in ev if e[:2] in (("agent", "end"), ("agent", "stop"))]:
                    add((*e[:2], (e[2], UNSEEN)))
            self._declined_events(add)
        if self.session in (sm.OPEN, sm.CLOSING):
            self._background_events(add, active)
            self._request_events(add)
            if "compaction" in features:
                self._compaction_events(add)
        if open_:
            self._synthetic_events(add)
        for feature, bound in (("notice", "notices"), ("usage", "usages")):
            if feature in features and self._room(bound) and open_:
                add(("agent", feature, None))
                if feature == "notice" and "notice_detail" in features:
                    add(("agent", "notice", "info"))  # (``_do_notice``)
                    add(("agent", "notice", "custom"))
        # what the state reported may become (what the real one may, when they are the same)
        shown = doing if self.reported == self.real else self._can("foreground", self.reported, self.fg_ctx)
        if open_ and "unknown" in features and self._room("losses") and "lose" in shown:
            add(("agent", "lose", None))
        custom = "future" in features or "unadvertised" in features
        future = open_ and custom and self._room("futures")
        if future and "future_state" in shown:
            add(("agent", "future_state", None))
        if self.reported in (fgm.UNKNOWN, fgm.UNRECOGNIZED):  # reporting the real (known) state again
            restore = fgm.trigger_for(self.reported, self.real)  # the table's restore_<state>
            if self.session in ("open", "closing") and restore in shown:
                add(("agent", "restore", None))  # also before answering a close: a known state
        if self.ended_output is not None:
            self._late_output_events(add)
        if not active and open_:
            self._idle_reading_events(add)
            self._meta_patch_events(add)
        if self.session in ("open", "closing"):
            self._carried_events(add)
        self._own_events(add, active, ev)
        if self.deviations:
            self._deviation_events(add)
        return ev

    def choices(self) -> list[Event]:
        """``enabled()``, less the moves that need a row the run's variant removed (``prune``):
        each tried on a copy, whose tables refuse it with a violation flagged ``removed``."""
        if not self.prune:
            return self.enabled()
        found = []
        for event in self.enabled():
            try:
                self.clone().do(event[1], event[2])
            except ProtocolViolation as v:
                if v.removed:
                    continue
            found.append(event)
        return found

    def _prompt_events(self, add: Any, rid: int, waiting: int | None, open_: bool) -> None:
        """The Agent's answers to one prompt: the prompt table's rows from its state
        (``_can``; guard ``oldest_held``: it is the oldest prompt still waiting; ``own_reason``:
        the reading ``rejected-after-cancel-request``), in the order hold, insert, reject,
        withdraw, answer, and within the Agent's own choices:

        - it holds a prompt only when every prompt received before it and still waiting is held
          (feature ``hold``): it decides on its prompts in the order they came (the order of
          insertion is ``model.between`` HELD_IN_ORDER's, which the guard ``oldest_held`` states);
        - it refuses a prompt not yet asked to stop (received or held) only with feature
          ``fail`` (the oldest held one) or when the prompt's content is invalid;
        - it inserts a received prompt only when it is the oldest waiting, or under
          ``prompt-ahead-of-held=held-only`` ahead of held ones, never while the session is not
          open, and never one whose content it did not advertise;
        - a covered prompt with unadvertised content is answered -32602 or -32800 as
          ``model.between`` says under the reading ``cancelled-invalid-prompt``
          (``covered_invalid_answers``: ``withdraw_invalid`` / ``withdraw``).
        """
        p = self.prompts[rid]
        st = p[0]
        allowed = self._can("prompt", st, self.prompt_ctx[rid == waiting])
        if not allowed:
            return
        unadvertised = p[4] == "unadvertised"
        features = self.cfg.features
        if "hold" in allowed and "hold" in features and all(s == prm.HELD for s in self._waiting_before(rid)):
            add(("agent", "hold", rid))
        if (
            "insert" in allowed
            and open_
            and (st != prm.RECEIVED or rid == waiting or self._may_overtake(rid))
            and (not unadvertised or not self._applies(bw.CONTENT_ADVERTISED.rule))
            and self.between.may_insert_now(p[5], self.real != fgm.IDLE)
        ):
            add(("agent", "insert", rid))
        if "reject" in allowed:
            first = st == prm.RECEIVED or rid == waiting  # received, or the oldest still waiting
            if (
                "hook_refusal" in features
                and not p[4]
                and first
                and self.real != fgm.IDLE
                and "hook_refused" not in self.extras
                and self.rd[BUSY_REFUSAL] == "may-have-other-reason"
            ):
                add(("agent", "reject_hook", rid))  # -32600, for a reason of its own
            if p[4] or st not in (prm.RECEIVED, prm.HELD) or ("fail" in features and first):
                add(("agent", "reject", rid))
        if "withdraw" in allowed:
            # how a covered prompt with unadvertised content may be answered (``model.between``)
            answers = self.between.covered_invalid_answers(self.rd["cancelled-invalid-prompt"])
            if st == prm.COVERED and unadvertised and "invalid" in answers:
                add(("agent", "withdraw_invalid", rid))  # -32602
            if not (st == prm.COVERED and unadvertised and "cancelled" not in answers):
                add(("agent", "withdraw", rid))
        if "answer" in allowed:
            add(("agent", "answer", rid))

    def _answered_after_close(self) -> tuple[str, ...]:
        """The states of prompts the Agent may answer after the session/close response: those the
        close stopped (-32800), and, with feature ``answer_after_close``, inserted ones (their
        success response): 2. Prompt accepted, "If the message has already been inserted, it
        receives a successful messageId response. Prompt responses need not precede the close
        response." """
        if "answer_after_close" in self.cfg.features:
            return (prm.CLOSED_OUT, prm.INSERTED)
        return (prm.CLOSED_OUT,)

    def _may_overtake(self, rid: int) -> bool:
        """A newly received prompt may be inserted at once ahead of held ones where
        ``model.between`` says so (``may_overtake_held``: the reading ``prompt-ahead-of-held``);
        every prompt received before it and still waiting is held (or asked to be withdrawn)."""
        if not self.between.may_overtake_held(self.rd["prompt-ahead-of-held"]):
            return False
        waiting = self._waiting_before(rid)
        return bool(waiting) and prm.RECEIVED not in waiting

    def _waiting_before(self, rid: int) -> list[str]:
        """The states of the prompts received before ``rid`` that may still be inserted."""
        before = [p[0] for p in self.prompts.values()][: list(self.prompts).index(rid)]
        return [st for st in before if st in _INSERTABLE]

    def _closes_as_reported(self) -> bool:
        """Whether the session/close response may come with the state reported now (the work
        really over, ``enabled``): idle; with feature ``unseen_end``, any state that
        ``model.between`` close_leaves_work lets a close response leave (unknown, an unrecognized
        state: the work ended unseen, ``_ends_unseen``), as the foreground table's obligation on
        it says (``eventually``)."""
        if self.reported == fgm.IDLE:
            return True
        if "unseen_end" not in self.cfg.features:
            return False
        owed = self.specs["foreground"].eventually.get(self.reported)
        active = self.reported in (fgm.RUNNING, fgm.REQUIRES_ACTION)
        return owed is None or self.between.close_leaves_work(active, self._cancel_seen(), owed) is None

    def _resume_events(self) -> list[Event]:
        """The resume handshake, one step along the session table's rows: the history replay
        when the Client asked for it and there is history (``replay``: resuming, then replaying
        for every further update), the snapshot (``resync`` without a replay), the snapshot
        repeated where the table lets a synced session take another (``again``), or sent before
        the replay as well where the table lets replay follow a snapshot (``early``: the replay
        then needs the snapshot after it again), the response;
        or the response before any snapshot where the table has that row (a variant's; the
        seeded bug response-before-snapshot fires that forbidden cell: ``_fire``)."""
        ev: list[Event] = []
        can = self._can
        if self.replay and self.history:
            move = "replay"
            replaying = can("session", sm.REPLAYING)
            more = len(self.history) == 1 or "replay" in replaying
            ready = "replay" in can("session", sm.RESUMING) and more and "snapshot" in replaying
        else:
            move, ready = "resync", "snapshot" in can("session", sm.RESUMING)
        synced = can("session", sm.SYNCED)
        if ready and "resumed" in synced:
            ev.append(("agent", move, None))
            if "snapshot" in synced:
                ev.append(("agent", move, "again"))  # the snapshot repeated before the response
            if move == "replay" and "replay" in synced and "snapshot" in can("session", sm.RESUMING):
                ev.append(("agent", move, "early"))  # a snapshot before the replay as well
        if self._forced("session", sm.RESUMING) or "resumed" in can("session", sm.RESUMING):
            ev.append(("agent", "resume_early", None))
        return ev

    def _do_refuse_resume(self, _: Any) -> list[Msg]:
        """Answering a session/resume that cannot succeed (``refusing``): a second one received
        while one is answered, or one a session/close interrupted; an error response, in the
        order they came (it changes no machine: a refused resume leaves the session as it is)."""
        rid, self.refusing = self.refusing[0], self.refusing[1:]
        return [wire.error(rid, wire.INVALID_REQUEST, "session is being resumed or closed")]

    def _do_hold(self, rid: int) -> list[Msg]:
        self._prompt_fire(rid, "hold")
        return []

    def _do_insert(self, rid: int) -> list[Msg]:
        p = self.prompts[rid]
        if p[4] == "unadvertised":  # content_advertised not applied (a seeded bug: Unchecked)
            self._breach(bw.CONTENT_ADVERTISED.rule)
        # A seeded bug that inserts a covered prompt (a forbidden cell): the prompt machine
        # refuses it with the cell's violation, as it would any agent (``_fire``).
        self._prompt_fire(rid, "insert", oldest_held=self._oldest_waiting() == rid)
        _put(self.prompts, rid, 1, self._new_id("user_message", self._msg_id("msg_u")))
        return []

    def _do_answer(self, rid: int) -> list[Msg]:
        self._prompt_fire(rid, "answer")
        p = self.prompts[rid]
        return [wire.result(rid, {"messageId": p[1]})]

    def _refuse(self, rid: int, trigger: str, code: int, text: str) -> list[Msg]:
        """An error answer to prompt ``rid``: the prompt table's ``reject`` (never only because
        work is active: guard ``busy_only`` false; ``own_reason``: the reading
        ``rejected-after-cancel-request``) or ``withdraw``."""
        own = self.prompt_ctx[0]["own_reason"]
        self._prompt_fire(
            rid, trigger, **{"busy_only": False, "own_reason": own} if trigger == "reject" else {}
        )
        return [wire.error(rid, code, text)]

    _do_reject = partialmethod(_refuse, trigger="reject", code=wire.INVALID_PARAMS, text="prompt rejected")
    _do_withdraw = partialmethod(
        _refuse, trigger="withdraw", code=wire.REQUEST_CANCELLED, text="request cancelled"
    )
    _do_withdraw_invalid = partialmethod(
        _refuse, trigger="withdraw", code=wire.INVALID_PARAMS, text="unsupported prompt content"
    )
    """``cancelled-invalid-prompt=invalid`` or ``either``: the content rule decides the answer of a
    covered prompt with unadvertised content (-32602)."""

    def _do_reject_hook(self, rid: int) -> list[Msg]:
        """``busy-refusal=may-have-other-reason``: while work is active, a hook of the Agent refuses
        a well-formed prompt with -32600 (feature ``hook_refusal``, once per run): a reason of its own, not
        the active work (the prompt table's guard busy_only is false)."""
        self.extras = self.extras | {"hook_refused"}
        return self._refuse(rid, "reject", wire.INVALID_REQUEST, "refused by a hook")

    def _do_user_message(self, arg: int | tuple[int, str]) -> list[Msg]:
        """The inserted user message of prompt ``arg``; ``(rid, "interim")`` (feature ``interim``,
        once per run): reported first with text of the Agent's own (a placeholder), its content
        still owed (a later ``user_message`` or ``user_chunks`` replaces it); ``(rid, "live")``
        (feature ``live_only``): reported live and not retained, as a locally handled command's
        live-only message, so a later replay leaves it out ("Agents are not required to persist
        it or retain it", "replay may omit live-only or discarded messages", 2. Prompt accepted)."""
        if isinstance(arg, tuple) and arg[1] == "interim":
            self.extras = self.extras | {"interim"}
            return [
                wire.message("user_message", self.sid, self.prompts[arg[0]][1], [wire.text("(inserting)")])
            ]
        rid = arg[0] if isinstance(arg, tuple) else arg
        _put(self.prompts, rid, 2, True)
        msg = wire.message("user_message", self.sid, self.prompts[rid][1], self._echo(rid))
        if not isinstance(arg, tuple):
            self.history.append(msg)
        return [msg]

    def _do_user_chunks(self, rid: int) -> list[Msg]:
        """The user message streamed, one chunk per block of the prompt's content where the Agent
        echoes it (an empty prompt: a full message with no content), else two chunks."""
        full = self._do_user_message(rid)  # reported, and retained whole
        mid = self.prompts[rid][1]
        if self.contents is None:
            return [
                wire.chunk("user_message_chunk", self.sid, mid, wire.text(t)) for t in ("prompt ", str(rid))
            ]
        return [
            wire.chunk("user_message_chunk", self.sid, mid, copy.deepcopy(b)) for b in self.contents[rid]
        ] or full

    def _do_notice(self, kind: str | None) -> list[Msg]:
        """A notice: a warning (``kind`` None); with feature ``notice_detail``, one of the other
        severities with the optional fields: ``info`` with a description and ``_meta``, or a
        custom ``_`` severity with a null description (Session notices: severity is an open
        enum, ``_`` values the implementation's own; description optional and nullable)."""
        self._use("notices")
        if kind == "info":
            return [
                wire.notice(
                    self.sid, "info", "Context compacted", description="Older turns summarized", _meta={}
                )
            ]
        if kind == "custom":
            return [wire.notice(self.sid, "_quota", "Quota at 80%", description=None)]
        return [wire.notice(self.sid, "warning", "Model request retried")]

    def _do_usage(self, _: Any) -> list[Msg]:
        self._use("usages")
        return [wire.usage(self.sid, 1200, 200000, 0.01)]

    def _do_lose(self, _: Any, bound: str = "losses", state: str = fgm.UNKNOWN) -> list[Msg]:
        """Unknown reported (or, ``future_state``, the custom state), within its bound."""
        self._use(bound)
        return [self._report(state)]

    _do_future_state = partialmethod(_do_lose, bound="futures", state=FUTURE_STATE)

    def _do_restore(self, _: Any) -> list[Msg]:
        return [self._report(self.real)]

    def _do_close_response(self, _: Any) -> list[Msg]:
        """Closed: every session/close received while closing is answered, in order."""
        self.session = self.specs["session"].fire(self.session, "closed")
        rids, self.close_rids = self.close_rids, ()
        return [wire.result(rid, {}) for rid in rids]

    def _replayed(self) -> list[Msg]:
        """The retained history: the messages themselves, or copies when a seeded bug rewrites the
        replay's messages (the live ones stay as they were sent)."""
        if self.deviations and deviations.matching(self.deviations, deviations.Rewrite, action="replay"):
            return copy.deepcopy(self.history)
        return list(self.history)

    def _do_resync(self, again: str | None, replay: bool = False) -> list[Msg]:
        """The history replay (``_do_replay``), then the snapshot (``again``: sent twice, a
        repeated snapshot is no transition; ``early``: sent before the replay too), then the
        response: one step."""
        out = self._replayed() if replay else []
        rid = self._take_resume()
        session = self.specs["session"]
        first: list[Msg] = []
        if again == "early":  # a snapshot before the replay too: the replay needs one after it again
            self.session = session.fire(self.session, "snapshot")
            first, again = [self._state(self.real)], None
        for _ in out:  # each replayed update: the first starts the replay, the others go on
            self.session = session.fire(self.session, "replay")
        synced = session.fire(self.session, "snapshot")
        # with a repeated snapshot, both carry the last stop reason (a resume or repeated idle
        # may carry it for context, creating no completion)
        stop = self.last_stop if again is not None and self.real == fgm.IDLE else None
        out.append(self._state(self.real, stop))
        if stop is None and self.real == fgm.IDLE and self.last_stop is not None:
            self.extras = self.extras | {"unstated"}  # the snapshot left the last stop reason out
        if again is not None:
            synced = session.fire(synced, "snapshot")
            out.append(self._state(self.real, stop))
        self.session = session.fire(synced, "resumed")
        self.reported = self.real
        if self.real == fgm.IDLE:  # the snapshot shows the end of work that ended unseen
            self.extras = self.extras - {"ended_unseen"}
        out.append(wire.result(rid, {}))
        return [*first, *out]

    _do_replay = partialmethod(_do_resync, replay=True)

    def _take_resume(self) -> int:
        """The session/resume request being answered (answered now: no longer ``resume_rid``)."""
        rid, self.resume_rid = self.resume_rid, None
        assert rid is not None
        return rid

    def _do_resume_early(self, _: Any) -> list[Msg]:
        """The response before the snapshot, then the state (a variant's row, or the seeded bug
        response-before-snapshot firing the forbidden cell)."""
        rid = self._take_resume()
        self.session = self._fire("session", self.session, "resumed")
        return [wire.result(rid, {}), self._state(self.real)]
