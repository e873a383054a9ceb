"""The simulated Agent's background work and compactions.

Owns: ``BackgroundWork``, the Agent's moves on background items (terminals, background tool
calls, a subagent child session) and on compactions, as their tables allow them.

Must not know: prompts, foreground work beyond starting follow-up work, channels, monitors, files.
"""

from __future__ import annotations

import copy
from functools import partialmethod
from typing import Any

from model import background as bgm
from model import compaction as cm
from model import foreground as fgm
from model import permission as pm
from model import session as sm
from model import terminal as tm
from model import toolcall as tcm
from properties.readings import TOOL_WITH_LISTED_TERMINAL, UNLISTED_TOOL_WHILE_BLOCKED
from simulator.peers import deviations, wire
from simulator.peers.agent_state import BOUNDED_COMPACTION, AgentState, Msg, _embedding, _put

CUSTOM_COMPACTION = "_deferred"
"""The custom compaction status the Agent may report (feature ``compaction``)."""
_COMPACTION_ACTIONS = {
    "compact_chunk": "summary_chunk",
    "compact_patch": "summary_patch",
    "compact_end": "complete",
    "compact_fail": "fail",
    "compact_cancel": "cancel",
    "compact_custom": "custom_status",
    "compact_progress": "progress",
}
"""The Agent's move making each compaction trigger (in the order it offers them; ``_compact``);
which ones it may take is the compaction table's (``_can``)."""
_COMPACTION_MOVE = {trigger: move for move, trigger in _COMPACTION_ACTIONS.items()}
_ENDS_COMPACTION = frozenset(
    r.trigger for r in cm.ROWS if r.dest in cm.TERMINAL and r.source not in cm.TERMINAL
)
"""The compaction triggers that end it (the table's rows into a terminal status)."""
_BACKGROUND_STATUSES = (tcm.PAUSED, tcm.PENDING, tcm.IN_PROGRESS)
"""The live statuses a background tool call may move between (feature ``bg_pause``)."""
_ENDS_ONCE = frozenset({"start", "complete"})
"""The compaction triggers one completed update fires (``_do_compact_start``)."""


class BackgroundWork(AgentState):
    __slots__ = ()

    def _background_events(self, add: Any, active: bool) -> None:
        """Background work: start (``_start_events``), list, finalize, remove. While the session
        is closing, live items are finalized and removed (closing stops them)."""
        if self.session == sm.OPEN and not self.cancelling and self._room("background"):
            self._start_events(add)
        for key, st in self.items.items():
            if key[0] == "tool_call" and key[1].startswith("tc_term"):
                continue  # a tool call embedding a terminal lives and is listed with it
            self._item_events(add, key, st, active)

    def _start_events(self, add: Any) -> None:
        """Background work starting while the session is open and no cancel is carried out:
        from running foreground work, a terminal (also with the tool call that runs it), a
        background tool call, the subagent child. With feature ``bg_idle``, from idle or
        requires_action too, a tool call of its own for work no tool call started (one a hook
        started): Background work, the Agent may start a tool call of its own for such work and
        list it, sending it like any other before the first list that names it, "even while the
        session is idle"; background work runs independently of the foreground state (Foreground
        and background work), so requires_action does not stop it either."""
        features = self.cfg.features
        if self.real != fgm.RUNNING:
            if "bg_idle" in features:
                add(("agent", "bg_start", "tool_call"))
            return
        if "terminal" in features:
            add(("agent", "bg_start", "terminal"))
            if (
                not self.between.terminal_alone_binds(self.rd[TOOL_WITH_LISTED_TERMINAL])
                or "embed" in features
            ):
                add(("agent", "bg_start", "terminal+tool"))
        if "bg_tool" in features:
            add(("agent", "bg_start", "tool_call"))
        if "subagent" in features and ("subagent", self.child) not in self.items:
            add(("agent", "bg_start", "subagent"))  # one child; a finished one runs again

    def _item_events(self, add: Any, key: tuple[str, str], st: str, active: bool) -> None:
        """The Agent's moves on one background item: the background table's rows from its state
        (``_can``; guard ``child``: it is the subagent child; ``becomes_foreground``: the
        reading ``waited-on-background`` is ``becomes-foreground``), in this order, within its
        own choices:

        - ``list``: a snapshot naming an announced item (``bg_list``), or a finished child
          given new work, at most ``Config.reruns`` times while the session is open
          (``bg_rerun``);
        - ``finalize``: the item finishes (``bg_finish``), or, with feature ``bg_fail``, fails
          (``bg_fail``), unless it waits on a permission request; besides finishing, a live
          item may ask and stream (``_live_item_events``);
        - ``adopt``: foreground work that really runs, reported so, not being cancelled, starts
          waiting on a listed background tool call (``bg_adopt``);
        - ``unlist``: a snapshot removing a finished item (``bg_unlist``), with known follow-up
          work reported in it when the session is idle (``bg_unlist_followup``, feature
          ``followup``)."""
        ctx = {
            "child": key[0] == "subagent",
            "becomes_foreground": self.rd[bgm.WAITED_ON] == "becomes-foreground",
        }
        allowed = self._can("background_item", st, ctx)
        if "list" in allowed:
            if st != bgm.DONE:
                add(("agent", "bg_list", key))
            elif self.session == sm.OPEN and self._room("reruns"):
                add(("agent", "bg_rerun", key))  # a detached child gets work again
        if "finalize" in allowed:
            if not self._awaits_permission(key):
                if not self._granted_unrun(key):
                    add(("agent", "bg_finish", key))
                if "bg_fail" in self.cfg.features:
                    add(("agent", "bg_fail", key))
            self._live_item_events(add, key)
        if (
            "adopt" in allowed
            and key[0] == "tool_call"
            and self.real == self.reported
            and self.real in (fgm.RUNNING, fgm.REQUIRES_ACTION)
            and not self.cancelling
            and self.session == sm.OPEN
        ):
            add(("agent", "bg_adopt", key))
        if "unlist" in allowed:
            add(("agent", "bg_unlist", key))
            if "followup" in self.cfg.features and not active and self.session == sm.OPEN:
                add(("agent", "bg_unlist_followup", key))

    def _awaits_permission(self, key: tuple[str, str]) -> bool:
        if key[0] != "tool_call" or key[1] not in self.tools:
            return False
        return self.perms.get(self.tools[key[1]][2]) == pm.PENDING

    def _granted_unrun(self, key: tuple[str, str]) -> bool:
        """``model.between`` APPROVED_RUNS for a background tool call the Agent would complete:
        its permission was granted and it is not in_progress (gone pending or paused, feature
        ``bg_pause``); this Agent reports it in_progress again before completing it (it does not
        tell whether it ran since the grant, so it takes every such call as unrun)."""
        t = self.tools.get(key[1]) if key[0] == "tool_call" else None
        return t is not None and self.between.completes_unrun(
            t[3] == "allowed" and t[0] != tcm.IN_PROGRESS, tcm.COMPLETED
        )

    def _live_item_events(self, add: Any, key: tuple[str, str]) -> None:
        """What a live background item may do besides finishing: ask permission (a background
        tool call, even while idle: Foreground and background work), stream output (a
        terminal's ``terminal_output_chunk``, a child's ``session_message_chunk``); with feature
        ``bg_pause``, a listed background tool call goes pending (scheduled) or paused (suspended)
        and back to in_progress, as the tool-call table allows (``tool_status``): Background work,
        "pending and paused tool calls are still live", and a list of only such calls means work
        is scheduled or suspended but nothing runs now. Only once listed, unless
        ``model.between`` running_on_progress (``tool_progress``) under the reading
        ``unlisted-tool-while-blocked`` lets a call no list has left out be background work
        (``may-be-background``): then also before its first list, while the session has reported
        no list at all (so none has left it out). Under ``foreground-unless-listed`` a tool call
        announced during active work reads on the wire as the work's own until listed, so its
        going in_progress while the work is blocked would show as the work's progress. While
        the session is closing, only back to in_progress (a call whose permission was granted is
        completed from there: ``_granted_unrun``)."""
        kind, ident = key
        features = self.cfg.features
        if (
            kind == "tool_call"
            and "bg_permission" in features
            and self._room("permissions")
            and ident in self.tools
            and self.tools[ident][2] is None
            and self.session == sm.OPEN
        ):
            add(("agent", "bg_ask", ident))
        if kind == "tool_call" and "bg_pause" in features and ident in self.tools and self._may_pause(key):
            status = self.tools[ident][0]
            allowed = self._can("tool_call", status)
            for to in _BACKGROUND_STATUSES:  # while closing, only back to in_progress (to end it)
                if (
                    to != status
                    and tcm.STATUS_TRIGGER[to] in allowed
                    and (self.session == sm.OPEN or to == tcm.IN_PROGRESS)
                ):
                    add(("agent", "tool_status", (ident, to)))
        if "extras" in features and "out:" + ident not in self.extras and self.session == sm.OPEN:
            if kind == "terminal":
                add(("agent", "terminal_output", ident))
            elif kind == "subagent" and self.child_msg is not None:
                add(("agent", "child_chunk", ident))

    def _may_pause(self, key: tuple[str, str]) -> bool:
        """Whether the background tool call ``key`` may move between its live statuses
        (``_live_item_events``): listed, or announced while no list was ever reported and its
        running is no progress of blocked work then (``tool_progress`` of an unruled call)."""
        if key in self.listed:
            return True
        return (
            self.items.get(key) == bgm.ANNOUNCED
            and self._bg_list() is None
            and not self.between.tool_progress(True, False, True, self.rd[UNLISTED_TOOL_WHILE_BLOCKED])
        )

    def _compaction_events(self, add: Any) -> None:
        """Compaction, also while idle: it ends completed, failed, cancelled; a custom status
        (``_``) before or after its end implies no lifecycle; its summary is patched and
        streamed in any status (Session compaction)."""
        if self._room("compactions") and self.session == sm.OPEN:
            add(("agent", "compact_start", None))
            if "compact_once" in self.cfg.features and self._can("compaction", cm.IN_PROGRESS) >= _ENDS_ONCE:
                add(("agent", "compact_start", "summary"))  # one completed update, with its summary
                add(("agent", "compact_start", "bare"))  # without one
        if not self.compactions:
            return
        started = self.used["compactions"]
        for cid, st in self.compactions.items():
            allowed = self._can("compaction", st)
            for move, trigger in _COMPACTION_ACTIONS.items():
                if trigger in allowed and not (
                    trigger in BOUNDED_COMPACTION and self.used[trigger] >= started
                ):
                    add(("agent", move, cid))
                    if trigger == "complete" and "compact_once" in self.cfg.features:
                        add(("agent", move, (cid, "bare")))  # completed, its summary omitted

    def _stop_unlisted_events(self, add: Any) -> None:
        """Cancellation: "The Agent MAY stop background activity it does not list". While it
        carries out a cancel, a terminal it announced and never listed may be stopped (killed:
        it exits with a signal)."""
        for key in self._unlisted_work():
            if key[0] == "terminal":
                add(("agent", "bg_stop", key))

    def _do_bg_stop(self, key: tuple[str, str]) -> list[Msg]:
        out = self._do_bg_finish(key)
        out[0]["params"]["update"]["exitStatus"] = {"signal": "SIGTERM"}
        return out

    def _do_bg_adopt(self, key: tuple[str, str]) -> list[Msg]:
        """``waited-on-background=becomes-foreground``: foreground work starts waiting on a listed
        background tool call, which becomes foreground work and leaves the list unfinished (the
        table's ``adopt`` row). From then on this Agent runs it as foreground work only."""
        self._fire("background_item", self.items[key], "adopt", {"becomes_foreground": True})
        del self.items[key]
        self.listed = tuple(k for k in self.listed if k != key)
        _put(self.tools, key[1], 1, False)
        return [self._snapshot_now()]

    def _do_terminal_output(self, ident: str) -> list[Msg]:
        """A live item's output (once per item): a terminal's, or (``_do_child_chunk``) a child's."""
        self.extras = self.extras | {"out:" + ident}
        if ident == self.child:
            assert self.child_msg is not None
            return [wire.chunk("session_message_chunk", ident, self.child_msg, wire.text(" and report back"))]
        update = {"sessionUpdate": "terminal_output_chunk", "terminalId": ident, "data": "b2sK"}
        return [wire.update(self.sid, update)]

    _do_child_chunk = _do_terminal_output

    def _do_bg_start(self, kind: str) -> list[Msg]:
        n = self._use("background")
        with_tool = kind == "terminal+tool"  # tool-with-listed-terminal=may-have-other-work
        if with_tool:
            kind = "terminal"
        if kind == "terminal":
            fresh = f"term_{n}"
            ident = self._new_id("terminal", fresh)
            msgs = [wire.terminal(self.sid, ident)]
            reuse = deviations.matching(self.deviations, deviations.Reuse, kind="terminal")
            if ident != fresh and reuse:  # an exited terminal's ID: it starts over
                msgs[0]["params"]["update"].update(copy.deepcopy(dict(reuse[0].reset)))
            else:
                self._fire("terminal", tm.LIVE, "start")  # a fresh terminal is live
        elif kind == "tool_call":
            self._use("tool_calls")
            ident = f"tc_bg_{n}"
            self.tools[ident] = (tcm.IN_PROGRESS, True, None, None)
            msgs = [wire.tool_call(self.sid, ident, "in_progress", title="Watch files", kind="execute")]
        else:
            ident = self.child
            msgs = [wire.subagent(self.sid, self.child), *self._task("Summarize the logs")]
        key = (kind, ident)
        self.items[key] = self.specs["background_item"].fire(bgm.UNANNOUNCED, "announce")
        if with_tool:
            self._use("tool_calls")
            tid = _embedding(ident)
            self.tools[tid] = (tcm.IN_PROGRESS, True, None, None)
            msgs.insert(
                0,
                wire.tool_call(
                    self.sid, tid, "in_progress", content=[{"type": "terminal", "terminalId": ident}]
                ),
            )
            if not self.between.terminal_alone_binds(self.rd[TOOL_WITH_LISTED_TERMINAL]):
                self.items[("tool_call", tid)] = bgm.ANNOUNCED  # listed with its terminal
            # else (feature ``embed``): the terminal is all that keeps it alive, so only the
            # terminal is listed; it ends with the terminal (``_do_bg_finish``)
        return msgs

    def _do_bg_list(self, key: tuple[str, str]) -> list[Msg]:
        """A snapshot naming the item (an item not yet started only for a seeded bug that lists
        before announcing: its ID is then taken; one already listed, named twice)."""
        child = {"child": key[0] == "subagent"}
        was = self.items.get(key, bgm.UNANNOUNCED)
        if was == bgm.UNANNOUNCED:
            self._use("background")
        self.items[key] = self._fire("background_item", was, "list", child)
        self.bg_reported = True
        extra: list[tuple[str, str]] = [key]
        tc = ("tool_call", _embedding(key[1]))
        if key[0] == "terminal" and self.items.get(tc) == bgm.ANNOUNCED:
            if TOOL_WITH_LISTED_TERMINAL in self.misread:  # a seeded bug misreads the reading
                self._breach(self.misread[TOOL_WITH_LISTED_TERMINAL].rule)
            self.items[tc] = bgm.LISTED
            extra.append(tc)
        self.listed = (*self.listed, *extra)
        return [self._snapshot_now()]

    def _do_bg_rerun(self, key: tuple[str, str]) -> list[Msg]:
        """A child that finished gets a new task: it reports running, and is listed while it runs."""
        self._use("reruns")
        return self._task("Check the logs again") + self._do_bg_list(key)

    def _task(self, text: str) -> list[Msg]:
        """A task given to the child, which runs it: the outgoing view in this session and the
        incoming view in the child's, independent messages the Agent gives the same new ID (IDs
        are scoped to a session); the child running; then the two views linked, each naming the
        other's messageId."""
        mid = self.child_msg = self._msg_id("msg_s")
        content = [wire.text(text)]
        return [
            wire.session_message(self.sid, mid, None, content, recipient=self.child),
            wire.session_message(self.child, mid, self.sid, content),
            wire.state_update(self.child, "running", []),
            wire.subagent(self.sid, self.child, {"state": "running", "background": []}),
            wire.link(self.sid, mid, "recipientMessageId", mid),
            wire.link(self.child, mid, "senderMessageId", mid),
        ]

    def _do_bg_finish(self, key: tuple[str, str], failed: bool = False) -> list[Msg]:
        """A background item finishes: a terminal exits (code 0), a tool call completes, the
        child's work ends (end_turn); ``failed`` (``_do_bg_fail``): the terminal exits with code
        1, the tool call fails, the child's work ends with the error stop reason."""
        kind, ident = key
        self.items[key] = self._fire("background_item", self.items[key], "finalize")
        ending = "fail" if failed else "complete"
        if kind == "terminal":
            self._fire("terminal", tm.LIVE, "exit")
            out = [wire.terminal(self.sid, ident, exit_code=int(failed))]
        elif kind == "tool_call":
            out = [self._tool_update(ident, ending)]
        else:
            reason = fgm.ERROR if failed else fgm.END_TURN
            err = {"code": wire.INTERNAL_ERROR, "message": "subagent failed"} if failed else None
            child_idle = wire.state_update(self.child, "idle", [], reason, err)
            idle = {k: v for k, v in child_idle["params"]["update"].items() if k != "sessionUpdate"}
            out = [child_idle, wire.subagent(self.sid, self.child, idle)]
        tc = ("tool_call", _embedding(ident))
        embedding = self.tools.get(tc[1]) if kind == "terminal" else None
        if embedding is not None and embedding[0] in tcm.LIVE:
            # the tool call that embeds the terminal ends with it
            out.append(self._tool_update(tc[1], ending))
            if tc in self.items:  # listed with its terminal (may-have-other-work)
                self.items[tc] = bgm.FINALIZED if tc in self.listed else bgm.DONE
        if self.items[key] == bgm.DONE:
            self.followup = "followup" in self.cfg.features and self.real == fgm.IDLE
        return out

    _do_bg_fail = partialmethod(_do_bg_finish, failed=True)
    """A background item fails (feature ``bg_fail``), whatever the foreground state. Failures:
    a failure of background activity while the Agent is idle is no stop reason, since no
    foreground work ended, so the session's state does not change ("A failure in background
    activity while the Agent is idle is not a stop reason"); nor is it part of failing
    foreground work while work runs ("Listed background work ... not part of the failed
    work"). The item is finalized with its failed outcome (``_do_bg_finish``) and removed by
    a later snapshot as any finished item (Background work)."""

    def _unlist(self, key: tuple[str, str]) -> None:
        self.items[key] = self._fire("background_item", self.items[key], "unlist")
        drop = {key}
        tc = ("tool_call", _embedding(key[1]))
        if key[0] == "terminal" and self.items.get(tc) == bgm.FINALIZED:
            drop.add(tc)  # the embedding tool call leaves the list with its terminal
            self.items[tc] = bgm.DONE
        self.listed = tuple(k for k in self.listed if k not in drop)

    def _state(self, state: str, stop: str | None = None, err: dict[str, Any] | None = None) -> Msg:
        """Every snapshot names again each item still listed: the background table's ``keep``,
        allowed while it runs. A finished item may not be kept (a list is of the work currently
        running, Background work), so the snapshot removes it (``unlist``)."""
        for key in tuple(self.listed):
            if key not in self.listed:
                continue  # an embedding tool call, removed with its terminal
            st = self.items[key]
            if "keep" in self._can("background_item", st):
                self.items[key] = self._fire("background_item", st, "keep")
            else:
                self._unlist(key)
        return super()._state(state, stop, err)

    def _do_bg_unlist(self, key: tuple[str, str]) -> list[Msg]:
        self._unlist(key)
        return [self._snapshot_now()]

    def _do_bg_unlist_followup(self, key: tuple[str, str]) -> list[Msg]:
        """Known follow-up work is reported with the removal: running in the same snapshot."""
        self._unlist(key)
        self._begin(fgm.RUNNING, self.between.own_work(self._uninserted(), self._inserted_waiting()))
        return [self._report(fgm.RUNNING)]

    def _do_compact_start(self, once: str | None) -> list[Msg]:
        """A compaction reported in progress (``once`` None: no summary yet), or by one update,
        already completed (feature ``compact_once``; ``once``: ``summary``, with its summary, or
        ``bare``, without): Session compaction says one compaction_update with status completed
        is enough, progress is optional and so is the summary. Its first report starts it in
        progress and its status completes it (the table's ``start``, then ``complete``), as the
        checker reads such an update."""
        cid = f"cmp_{self._use('compactions')}"
        st = self.compactions[cid] = self._fire("compaction", cm.IN_PROGRESS, "start")
        if once is None:
            return [wire.compaction(self.sid, cid, "in_progress", summary=[])]  # no summary yet
        self.compactions[cid] = self._fire("compaction", st, "complete")
        summary = [wire.text("Summary of earlier turns")] if once == "summary" else None
        msg = wire.compaction(self.sid, cid, cm.COMPLETED, summary)
        self.history.append(msg)
        return [msg]

    def _compact(self, arg: str | tuple[str, str], trigger: str) -> list[Msg]:
        """A compaction move (``_COMPACTION_ACTIONS``) on compaction ``arg``: a summary chunk, a
        summary patch (``summary: []`` clears what was streamed, also after the end), or a
        status: the state the table moves it to, a custom status its own (the ended ones are
        retained history). Completed, it carries its summary; ``(cid, "bare")`` (feature
        ``compact_once``) omits it: Session compaction, summary content is optional, and an update
        may omit ``summary`` to retain what was streamed."""
        cid, bare = arg if isinstance(arg, tuple) else (arg, None)
        if trigger in BOUNDED_COMPACTION:
            self._use(trigger)
        st = self.compactions[cid] = self._fire("compaction", self.compactions[cid], trigger)
        if trigger == "summary_chunk":
            return [wire.compaction_chunk(self.sid, cid, "Kept: the plan. ")]
        status = CUSTOM_COMPACTION if st == cm.CUSTOM or trigger == "custom_status" else st
        summary = [wire.text("Summary of earlier turns")] if trigger == "complete" and not bare else None
        if trigger == "summary_patch":
            summary = []
        msg = wire.compaction(self.sid, cid, status, summary)
        if trigger in _ENDS_COMPACTION:
            self.history.append(msg)
        return [msg]


for _move, _trigger in _COMPACTION_ACTIONS.items():  # ``_do_compact_chunk`` ... : ``_compact``
    setattr(BackgroundWork, f"_do_{_move}", partialmethod(BackgroundWork._compact, trigger=_trigger))
