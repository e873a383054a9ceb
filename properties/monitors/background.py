"""The background monitor: the ``background`` list of every state_update, against the items' own
updates ("Background work").

What is certain in proxy order, and why: agent lines are in send order, so "the item's own update
was sent before the snapshot" is a plain fact, and so is "the snapshot carries no background".

- BG-07: once a concrete list was reported in a session, a later state_update without a list
  (field omitted, null or not an array) breaks it. Whether the state_updates before the first
  list are held to it too is the reading ``state-updates-before-first-list``: under ``every``
  (not the default) the first list of a session that sent a state_update without one is a
  breach.
- BG-10: an item (terminal, tool call, subagent) newly listed in a snapshot must have had its own
  update (``terminal_update`` / ``tool_call_update`` / ``subagent_update``) before.
- BG-11: a terminal or tool call dropped from the list (compared with the last concrete list)
  must have had its ``exitStatus`` / final status before that snapshot. Under the reading
  ``waited-on-background=becomes-foreground`` (not the default) an unfinished item dropped by a
  snapshot whose state is running or requires_action may have become foreground work (which is
  not listed): no breach.
- BG-13: a tool call listed together with a terminal that its content embeds. Whether such a
  tool call's only live work is that terminal is the reading ``tool-with-listed-terminal``: by
  default (``only-live-work``) it is, and listing both is a breach; under
  ``may-have-other-work`` the tool call may have live work the wire does not show (no breach).
- BG-17: an item listed twice in one snapshot, or newly listed when it has already finished
  (exited terminal, tool call with a final status). An item that finishes *while* listed may
  stay listed until the snapshot that removes it (finalized before removed).
- BG-09 (eventually, SHOULD): a listed item that has finished should be dropped by a later
  snapshot; one still listed at the end is reported.

Tolerated: a tool call opened for background work without one of its own, even while idle
(BG-04); cancellation stopping unlisted background activity (CANCEL-03). Unknown item types are
skipped (they still count as background work).

Cost: the state_update handler is gated until some session has a record here (``GATES``);
until then the facts tracker wakes it for a state_update that carries ``background``
(``WAKES``), so a transcript without background work does not call it at all.

Must not know: foreground state, prompts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from properties.engine import Handler, Message, MonitorSet
from properties.monitors.common import ACTIVE, TOOL_FINAL, Key, terminal_refs
from properties.monitors.facts import Facts, SessionMonitor
from properties.readings import (
    STATE_UPDATES_BEFORE_FIRST_LIST,
    TOOL_WITH_LISTED_TERMINAL,
    WAITED_ON_BACKGROUND,
)

_NONE: frozenset[Key] = frozenset()


class _Session:
    __slots__ = ("last", "reported", "subs", "terminals", "tool_terms", "tools")

    def __init__(self) -> None:
        self.terminals: dict[str, bool] = {}  # announced terminal -> exited
        self.tools: dict[str, bool] = {}  # announced tool call -> final status
        self.tool_terms: dict[str, frozenset[str]] = {}  # tool call -> terminals its content embeds
        self.subs: set[str] = set()  # announced subagent children
        self.last: frozenset[Key] = _NONE  # items of the last concrete list
        self.reported = False

    def copy(self) -> _Session:
        new = _Session.__new__(_Session)
        new.terminals = dict(self.terminals)
        new.tools = dict(self.tools)
        new.tool_terms = dict(self.tool_terms)
        new.subs = set(self.subs)
        new.last = self.last
        new.reported = self.reported
        return new

    def key(self) -> tuple[Any, ...]:
        return (
            frozenset(self.terminals.items()),
            frozenset(self.tools.items()),
            frozenset(self.tool_terms.items()),
            frozenset(self.subs),
            self.last,
            self.reported,
        )

    def finished(self, key: Key) -> bool:
        kind, ident = key
        if kind == "terminal":
            return self.terminals.get(ident, False)
        if kind == "tool_call":
            return self.tools.get(ident, False)
        return False

    def announced(self, key: Key) -> bool:
        kind, ident = key
        if kind == "terminal":
            return ident in self.terminals
        if kind == "tool_call":
            return ident in self.tools
        return ident in self.subs


class BackgroundMonitor(SessionMonitor["_Session"]):
    """Background lists against the items' own updates (see module docstring)."""

    RULES = ("BG-07", "BG-09", "BG-10", "BG-11", "BG-13", "BG-17")
    TOLERATES = ("BG-04", "CANCEL-03")
    SESSION = _Session
    REQUIRES = (Facts,)
    GATES = (("_state", "sessions"),)
    """Until some session has a record (an item's own update, or a background list), a
    state_update has nothing to judge here: no list reported, no item announced."""
    WAKES = (("_state", "background"),)
    """The first background list may come in any state_update: it wakes the handler."""

    def handlers(self) -> Iterable[tuple[str, str, Handler]]:
        return (
            ("update", "state_update", self._state),
            ("update", "terminal_update", self._terminal),
            ("update", "tool_call_update", self._tool),
            ("update", "subagent_update", self._subagent),
        )

    def _session(self, sid: str) -> _Session:
        found = self.sessions.get(sid)
        if found is None:
            first = not self.sessions
            found = self.sessions[sid] = _Session()
            if first:
                self.regate()
        return found

    # -- items ---------------------------------------------------------------------------
    def _terminal(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        ident = upd.get("terminalId")
        if type(ident) is not str:
            return
        bs = self._session(sid)
        if ident in bs.terminals and self.facts.replaying(sid):
            return  # replayed history: announces, but does not undo an exit
        if "exitStatus" in upd:
            exited = upd["exitStatus"] is not None
            if exited and ("terminal", ident) in bs.last:
                self._ex["BG-09"] += 1
            bs.terminals[ident] = exited
        elif ident not in bs.terminals:
            bs.terminals[ident] = False

    def _tool(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        ident = upd.get("toolCallId")
        if type(ident) is not str:
            return
        bs = self.sessions.get(sid)
        if bs is None:
            bs = self._session(sid)
        if ident in bs.tools and self.facts.replaying(sid):
            return  # replayed history: announces, but does not undo a final status
        status = upd.get("status")
        if type(status) is str:
            final = status in TOOL_FINAL
            if final and bs.last and ("tool_call", ident) in bs.last:
                self._ex["BG-09"] += 1
            bs.tools[ident] = final
        elif ident not in bs.tools:
            bs.tools[ident] = False
        if "content" in upd:
            refs = terminal_refs(upd["content"])
            if refs:
                bs.tool_terms[ident] = refs
            else:
                bs.tool_terms.pop(ident, None)

    def _subagent(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        child = upd.get("sessionId")
        if type(child) is str:
            self._session(sid).subs.add(child)

    # -- snapshots -----------------------------------------------------------------------
    def _state(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        bs = self.sessions.get(sid)
        if bs is None:
            if "background" not in upd:
                return  # nothing reported yet, nothing reported now
            bs = self._session(sid)
        raw = upd.get("background")
        if bs.reported:
            self._ex["BG-07"] += 1
            if type(raw) is not list:
                what = "omits background" if "background" not in upd else f"has background {raw!r}"
                self.breach(
                    "BG-07", line, sid,
                    f"state_update {what} after this session reported a background list", msg,
                )
        keys = self.facts.background(upd)
        if keys is None:
            return
        if not bs.reported:
            fs = self.facts.sessions.get(sid)
            if fs is not None and fs.bare_line:
                self._ex["BG-07"] += 1
                self.breach(
                    "BG-07", line, sid,
                    f"the session's first background list comes after a state_update without one "
                    f"(line {fs.bare_line})",
                    msg, (STATE_UPDATES_BEFORE_FIRST_LIST,),
                )
        bs.reported = True
        cur = frozenset(keys) if keys else _NONE
        self._ex["BG-17"] += 1
        if len(cur) != len(keys):
            twice = sorted({k for k in keys if keys.count(k) > 1})
            self.breach("BG-17", line, sid, f"background lists {_names(twice)} more than once", msg)
        prev = bs.last
        if cur != prev:
            for key in sorted(cur - prev):
                self._ex["BG-10"] += 1
                if not bs.announced(key):
                    self.breach(
                        "BG-10", line, sid,
                        f"background lists {_names([key])} before any update announced it", msg,
                    )
                elif bs.finished(key):
                    self.breach(
                        "BG-17", line, sid,
                        f"background newly lists {_names([key])}, which has already finished", msg,
                    )
            state = upd.get("state")
            active = type(state) is str and state in ACTIVE
            for key in sorted(prev - cur):
                if key[0] == "subagent":
                    continue
                self._ex["BG-11"] += 1
                if not bs.finished(key) and not (
                    active and self.reading(WAITED_ON_BACKGROUND) == "becomes-foreground"
                ):
                    what = "exitStatus" if key[0] == "terminal" else "final status"
                    self.breach(
                        "BG-11", line, sid,
                        f"background drops {_names([key])} before its {what} was sent", msg,
                        (WAITED_ON_BACKGROUND,) if active else (),
                    )
        if bs.tool_terms and self.reading(TOOL_WITH_LISTED_TERMINAL) == "only-live-work":
            for kind, ident in cur:
                terms = bs.tool_terms.get(ident) if kind == "tool_call" else None
                if terms:
                    self._ex["BG-13"] += 1
                    both = sorted(t for t in terms if ("terminal", t) in cur)
                    if both:
                        self.breach(
                            "BG-13", line, sid,
                            f"background lists tool call {ident!r} and the terminal "
                            f"{', '.join(map(repr, both))} it runs: list the terminal only",
                            msg, (TOOL_WITH_LISTED_TERMINAL,),
                        )
        bs.last = cur

    # -- end -----------------------------------------------------------------------------
    def at_end(self, quiescent: bool) -> None:
        for sid, bs in self.sessions.items():
            done = sorted(k for k in bs.last if bs.finished(k))
            if done:
                self.eventually(
                    "BG-09", quiescent, None, sid,
                    f"background still lists finished {_names(done)}: no snapshot dropped it",
                )

    # -- explorers -----------------------------------------------------------------------
    def clone(self, owner: MonitorSet) -> BackgroundMonitor:
        new = BackgroundMonitor.__new__(BackgroundMonitor)
        new._attach(owner)
        new.facts = owner.get(Facts)
        new.sessions = {k: v.copy() for k, v in self.sessions.items()}
        return new

    def state_key(self) -> Any:
        return tuple(sorted((k, v.key()) for k, v in self.sessions.items()))


def _names(keys: Iterable[Key]) -> str:
    return ", ".join(f"{kind} {ident!r}" for kind, ident in keys)
