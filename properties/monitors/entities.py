"""The entity monitor: IDs are not reused for a second terminal, and compaction updates are well
formed ("Entity IDs", "Session compaction").

What is certain in proxy order, and why: the Agent's lines are in its send order, so an entity
seen to end (a terminal with an ``exitStatus``, a compaction with a terminal status) and then to
start over under the same type and ID was certainly given to a second entity:

- ENT-01: a ``terminal_update`` that clears ``exitStatus`` (null) after the terminal exited.
- (A compaction reopened after a terminal status, COMPACT-03, is judged by the compaction
  table of the model: ``properties.monitors.tables``; ENT-01 is exercised here with it.)
- COMPACT-02: ``compactionId`` and ``status`` are strings on every ``compaction_update``;
  ``compactionId`` a string and ``content`` an object on every ``compaction_summary_chunk``.
- (A compaction still in progress at the end, COMPACT-05, is an obligation of the compaction
  table's ``in_progress`` state, judged there too.)

Inside a ``session/resume`` window the Agent replays history: old updates of entities known
before the window are re-sent in their original order and are not transitions, so they are not
judged; an entity first seen in the window is recorded and its later updates there are judged
as live (a compaction that starts and completes before the resume response has ended).

A messageId returned
for two prompts is the prompt monitor's (ACC-09).

Tolerated: one compaction_update with ``completed`` and nothing else (COMPACT-01).

Must not know: foreground state, prompts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from properties.monitor import Handler, Message

if TYPE_CHECKING:
    from properties.engine import MonitorSet

from properties.monitors.common import COMPACTION_TERMINAL
from properties.monitors.facts import Facts, SessionMonitor


class _Session:
    __slots__ = ("compactions", "fresh", "terminals")

    def __init__(self) -> None:
        self.terminals: dict[str, bool] = {}  # terminal -> exited
        self.compactions: dict[str, str] = {}  # compaction -> last status
        self.fresh: frozenset[str] = frozenset()
        """Terminals and compactions (``"terminal ID"``, ``"compaction ID"``) first seen in the
        current resume window: their later updates there are live, not replayed history."""

    def copy(self) -> _Session:
        new = _Session.__new__(_Session)
        new.terminals = dict(self.terminals)
        new.compactions = dict(self.compactions)
        new.fresh = self.fresh
        return new

    def key(self) -> tuple[Any, ...]:
        return (frozenset(self.terminals.items()), frozenset(self.compactions.items()), self.fresh)

    def replayed(self, known: bool, name: str) -> bool:
        """Inside a resume window: whether an update of the entity ``name`` is replayed history
        (known before the window), recording a first-seen one as fresh."""
        if not known:
            self.fresh = self.fresh | {name}
            return False
        return name not in self.fresh


class EntityMonitor(SessionMonitor["_Session"]):
    """Entity ID reuse and compaction lifecycles (see module docstring)."""

    RULES = ("ENT-01", "COMPACT-02")
    TOLERATES = ("COMPACT-01",)
    SESSION = _Session
    REQUIRES = (Facts,)

    def handlers(self) -> Iterable[tuple[str, str, Handler]]:
        return (
            ("update", "terminal_update", self._terminal),
            ("update", "compaction_update", self._compaction),
            ("update", "compaction_summary_chunk", self._chunk),
            ("client-request", "session/resume", self._resume),
        )

    def _resume(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        es = self.sessions.get(sid) if sid is not None else None
        if es is not None and es.fresh:
            es.fresh = frozenset()  # a new window: what the last one showed is history now

    def _terminal(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        tid = upd.get("terminalId")
        if type(tid) is not str:
            return
        es = self._session(sid)
        if self.facts.replaying(sid) and es.replayed(tid in es.terminals, "terminal " + tid):
            return
        exited = es.terminals.get(tid, False)
        if exited:
            self._ex["ENT-01"] += 1
        if "exitStatus" not in upd:
            es.terminals.setdefault(tid, False)
            return
        now = upd["exitStatus"] is not None
        if exited and not now:
            self.breach(
                "ENT-01",
                line,
                sid,
                f"terminal {tid!r} had exited and is reported live again: a second terminal "
                "under the same ID",
                msg,
            )
        es.terminals[tid] = now

    def _compaction(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        cid = upd.get("compactionId")
        status = upd.get("status")
        self._ex["COMPACT-02"] += 1
        if type(cid) is not str or type(status) is not str:
            self.breach(
                "COMPACT-02",
                line,
                sid,
                f"compaction_update needs string compactionId and status (got {cid!r}, {status!r})",
                msg,
            )
            if type(cid) is not str:
                return
        es = self._session(sid)
        prev = es.compactions.get(cid)
        if self.facts.replaying(sid) and es.replayed(prev is not None, "compaction " + cid):
            return
        if prev is not None and prev in COMPACTION_TERMINAL:  # reopening it is the table's (model.compaction)
            self._ex["ENT-01"] += 1
        if type(status) is str:
            es.compactions[cid] = status

    def _chunk(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        cid = upd.get("compactionId")
        content = upd.get("content")
        self._ex["COMPACT-02"] += 1
        if type(cid) is not str or type(content) is not dict:
            self.breach(
                "COMPACT-02",
                line,
                sid,
                "compaction_summary_chunk needs a string compactionId and a content block",
                msg,
            )
            if type(cid) is not str:
                return
        es = self._session(sid)
        es.compactions.setdefault(cid, "in_progress")

    def clone(self, owner: MonitorSet) -> EntityMonitor:
        new = EntityMonitor.__new__(EntityMonitor)
        new._attach(owner)
        new.facts = owner.get(Facts)
        new.sessions = {k: v.copy() for k, v in self.sessions.items()}
        return new

    def state_key(self) -> Any:
        return tuple(sorted((k, v.key()) for k, v in self.sessions.items()))
