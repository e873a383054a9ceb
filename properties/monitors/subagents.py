"""The subagent monitor: a parent mirrors its exposed child's state ("Session states").

An exposed child is one announced by a ``subagent_update`` in its parent. The child reports its
own state with ``state_update`` in its own session; the parent's ``subagent_update.state`` should
show the same state. Mirroring may lag, so this is judged at the end (STATE-01, SHOULD,
eventually): the last state the child reported must equal the ``state`` inside the parent's
latest ``subagent_update.state`` for it.

Must not know: anything else about either session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from properties.monitor import Message, Monitor, on

if TYPE_CHECKING:
    from properties.engine import MonitorSet


_UNSET: Any = "<never mirrored>"


class SubagentMonitor(Monitor):
    """Parent mirrors of child state (see module docstring)."""

    RULES = ("STATE-01",)

    def __init__(self, owner: MonitorSet) -> None:
        super().__init__(owner)
        self.parents: dict[str, str] = {}  # child -> parent
        self.mirrored: dict[str, Any] = {}  # child -> state the parent last showed
        self.own: dict[str, Any] = {}  # child -> state it last reported itself
        self.lines: dict[str, int] = {}  # child -> line of its last own report

    @on("update", "subagent_update")
    def _subagent(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        child = upd.get("sessionId")
        if type(child) is not str:
            return
        self.parents.setdefault(child, sid)
        if "state" in upd:
            snap = upd["state"]
            self.mirrored[child] = snap.get("state") if type(snap) is dict else None

    @on("update", "state_update")
    def _state(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        if sid in self.parents:
            self._ex["STATE-01"] += 1
            self.own[sid] = upd.get("state")
            self.lines[sid] = line

    def at_end(self, quiescent: bool) -> None:
        for child, state in self.own.items():
            shown = self.mirrored.get(child, _UNSET)
            if shown != state:
                self.eventually(
                    "STATE-01",
                    quiescent,
                    self.lines.get(child),
                    self.parents[child],
                    f"child {child!r} last reported {state!r}, its parent's subagent_update shows {shown!r}",
                )

    def state_key(self) -> Any:
        return (
            frozenset(self.parents.items()),
            frozenset((k, repr(v)) for k, v in self.mirrored.items()),
            frozenset((k, repr(v)) for k, v in self.own.items()),
        )
