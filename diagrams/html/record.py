"""Recording a check for its page: every message, and what changed in the machines and the client
view after each one.

Owns: ``Recording``, filled in by a hook the check calls before judging each message (so the
monitors hold the state after the previous message), and ``recorded_check``, which runs
``properties.checking.check_stream`` with that hook and hands back the report and the recording.
State is kept as deltas (rows set or removed after each message, ``diagrams.html.states``):
a page for a long transcript stays small, and the page rebuilds the state at any line.

Cost: the machines are read again after every message (what the checker keeps live: open
sessions, waiting prompts, tracked entities); the client view is followed through the
snapshots it caches, so a row is made again only for an entity whose snapshot changed, but
finding them is still one pass over the entities of the session the message changed
(``benchmarks/bench_html.py``: 1,000 messages in 0.1 to 0.15 s, one session of 10,000 in 10 s).

Must not know: HTML, files, the command line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, BinaryIO

from diagrams.html.states import Rows, answered_prompt, entity_row, header_rows, machine_rows
from model.clientview import ClientView
from properties.checking import FileReport, MessageHook, check_stream
from properties.engine import MonitorSet

Delta = list[tuple[str, str | None]]
"""Rows set (text) or removed (None) by one message, in key order."""


def delta(before: Rows, after: Rows) -> Delta:
    """What turns ``before`` into ``after``, in key order."""
    changed: Delta = [(k, v) for k, v in after.items() if before.get(k) != v]
    changed += [(k, None) for k in before if k not in after]
    return sorted(changed)


@dataclass
class Recording:
    """The messages of one check and the state after each (see the module docstring)."""

    monitors: MonitorSet
    messages: list[tuple[int, str, Any]] = field(default_factory=list)
    """(line, sender, message) of every message the check used, in order."""
    machines: list[Delta] = field(default_factory=list)
    """Per message: the machine rows it changed."""
    views: list[Delta] = field(default_factory=list)
    """Per message: the client view rows it changed."""

    def __post_init__(self) -> None:
        self.view = ClientView(readings=self.monitors.readings)
        self._machine_rows: Rows = {}
        """The live machine rows after the last message settled."""
        self._snaps: dict[str, Any] = {}
        self._headers: dict[str, tuple[Any, Rows]] = {}
        self._entities: dict[str, list[tuple[str, str, Any]]] = {}
        self._entity_rows: Rows = {}

    def hook(self, line: int, sender: str, message: Any) -> None:
        """Called before the monitors judge ``message``: settle the previous message's machines,
        then apply this one to the client view."""
        self.finish()
        self.messages.append((line, sender, message))
        self.view.apply(sender, message)
        changed: Delta = []
        for sid, snap in self.view.snapshot():
            if self._snaps.get(sid) is not snap:
                self._snaps[sid] = snap
                changed += self._view_session(sid)
        self.views.append(sorted(changed))

    def _view_session(self, sid: str) -> Delta:
        """What changed in the rows of one session of the client view: its header rows, and
        the rows of the entities whose snapshot is a new object (``ClientView.timeline_snapshots``)."""
        view = self.view
        state = view.session_state(sid)
        old_header = self._headers.get(sid)
        header = header_rows(sid, state, view.preserved_count(sid), old_header)
        changed = delta(old_header[1] if old_header is not None else {}, header)
        self._headers[sid] = (state, header)
        now = view.timeline_snapshots(sid)
        self._entity_pass(sid, self._entities.get(sid, []), now, changed)
        self._entities[sid] = now
        return list(dict(changed).items())  # the last change of each key (removed, then set: set)

    def _entity_pass(self, sid: str, old: list[Any], now: list[Any], changed: Delta) -> None:
        """Add to ``changed`` the rows of the entities whose snapshot is not the one ``old``
        has at their place; when an entity moved (a faulty view) or went, every row again."""
        rows = self._entity_rows
        moved = (o[0] != n[0] or o[1] != n[1] for o, n in zip(old, now, strict=False) if o is not n)
        if len(now) < len(old) or any(moved):
            old = self._forget(sid, old, changed)
        for n, snap in enumerate(now, 1):
            if n <= len(old) and old[n - 1] is snap:
                continue
            etype, eid = snap[0], snap[1]
            key, text = entity_row(sid, n, etype, eid, self.view.entity_json(sid, etype, eid))
            if rows.get(key) != text:
                rows[key] = text
                changed.append((key, text))

    def _forget(self, sid: str, old: list[Any], changed: Delta) -> list[Any]:
        """Remove the rows of the entities of ``old``; an empty list."""
        for n, snap in enumerate(old, 1):
            key = entity_row(sid, n, snap[0], snap[1], {})[0]
            self._entity_rows.pop(key, None)
            changed.append((key, None))
        return []

    def finish(self) -> None:
        """Settle the last message's machine rows, unless settled already (called before each
        message and after the check returned): the live ones are read again and compared; a
        prompt the message answered leaves them, its row set to how it was answered (that row then
        stays: the live rows never hold it again, so a long transcript does not compare its
        answered prompts at every message)."""
        if len(self.machines) == len(self.messages):
            return
        live = machine_rows(self.monitors)
        message = self.messages[len(self.machines)][2]
        answered = answered_prompt(self.monitors, message) if isinstance(message, dict) else None
        changes = delta(self._machine_rows, live)
        if answered is not None:  # the prompt it answered leaves the live rows: how it ended
            changes = [(k, answered[1] if v is None and k.endswith(answered[0]) else v) for k, v in changes]
        self.machines.append(changes)
        self._machine_rows = live


def recorded_check(
    stream: BinaryIO,
    path: str,
    *,
    monitors: MonitorSet | None = None,
    on_message: MessageHook | None = None,
    **options: Any,
) -> tuple[FileReport, Recording]:
    """``check_stream`` (same arguments: the others are passed on as they are) with a recording."""
    monitor_set = monitors if monitors is not None else MonitorSet()
    recording = Recording(monitor_set)

    def hook(line: int, sender: str, message: dict[str, Any]) -> None:
        recording.hook(line, sender, message)
        if on_message is not None:
            on_message(line, sender, message)

    report = check_stream(stream, path, monitors=monitor_set, on_message=hook, **options)
    recording.finish()
    return report, recording
