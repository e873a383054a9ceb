"""The resume monitor: a state snapshot between ``session/resume`` and its success response
("Initial state and synchronization").

What is certain in proxy order: the request line is when the Agent received it and the response
line when it sent it, so "no state_update for that session was sent in between" is a plain
fact: SYNC-02. Replayed content and live updates inside the window cannot be told apart, so the
order "snapshot after the replay" is not judged beyond this. (Replayed user messages keeping
their IDs, ACC-11, is judged by the prompt monitor.)

Must not know: what the snapshot says.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from properties.engine import Handler, Message, Monitor, MonitorSet


class ResumeMonitor(Monitor):
    """session/resume answers only after a state snapshot (see module docstring)."""

    RULES = ("SYNC-02",)
    GATES = (("_state", "windows"),)  # state_update matters only while a resume is unanswered

    def __init__(self, owner: MonitorSet) -> None:
        super().__init__(owner)
        self.windows: dict[Any, tuple[str, bool]] = {}  # resume request -> (session, snapshot seen)

    def handlers(self) -> Iterable[tuple[str, str, Handler]]:
        return (
            ("client-request", "session/resume", self._resume),
            ("update", "state_update", self._state),
            ("agent-response", "session/resume", self._answer),
        )

    def _resume(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        if sid is not None:
            regate = not self.windows
            self.windows[msg["id"]] = (sid, False)
            if regate:
                self.regate()

    def _state(self, sid: str, upd: dict[str, Any], line: int, msg: Message) -> None:
        if self.windows:
            for rid, (wsid, seen) in list(self.windows.items()):
                if wsid == sid and not seen:
                    self.windows[rid] = (sid, True)

    def _answer(self, sid: str | None, request: Message, line: int, msg: Message) -> None:
        window = self.windows.pop(msg["id"], None)
        if window is None:
            return
        if not self.windows:
            self.regate()
        if "result" not in msg:
            return
        self._ex["SYNC-02"] += 1
        if not window[1]:
            self.breach(
                "SYNC-02", line, window[0],
                "session/resume answered successfully before any state_update snapshot of the "
                "session was sent after the request",
                msg,
            )

    def clone(self, owner: MonitorSet) -> ResumeMonitor:
        new = ResumeMonitor.__new__(ResumeMonitor)
        new._attach(owner)
        new.windows = dict(self.windows)
        return new

    def state_key(self) -> Any:
        return frozenset(self.windows.items())
