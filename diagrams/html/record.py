"""Recording a check for its page: every message, and what changed in the machines and the client
view after each one.

Owns: ``Recording``, filled in by a hook the check calls before judging each message (so the
monitors hold the state after the previous message), and ``recorded_check``, which runs
``properties.checking.check_stream`` with that hook and hands back the report and the recording.
State is kept as deltas (rows set or removed after each message, ``diagrams.html.states``):
a page for a long transcript stays small, and the page rebuilds the state at any line.

Must not know: HTML, files, the command line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, BinaryIO

from diagrams.html.states import Rows, answered_prompts, machine_rows, prompt_sets, view_rows
from properties.checking import FileReport, MessageHook, check_stream
from properties.clientview import ClientView
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
        self._answered: Rows = {}
        self._prompts: dict[str, frozenset[str]] = {}
        self._snaps: dict[str, Any] = {}
        self._view_rows: dict[str, Rows] = {}

    def hook(self, line: int, sender: str, message: Any) -> None:
        """Called before the monitors judge ``message``: settle the previous message's machines,
        then apply this one to the client view."""
        if len(self.machines) < len(self.messages):
            self._settle()
        self.messages.append((line, sender, message))
        self.view.apply(sender, message)
        changed: Delta = []
        for sid, snap in self.view.snapshot():
            if self._snaps.get(sid) is snap:
                continue
            self._snaps[sid] = snap
            rows = view_rows(sid, self.view.session_json(sid))
            changed += delta(self._view_rows.get(sid, {}), rows)
            self._view_rows[sid] = rows
        self.views.append(sorted(changed))

    def finish(self) -> None:
        """Settle the last message's machines (after the check returned)."""
        if len(self.machines) < len(self.messages):
            self._settle()

    def state_after(self, index: int) -> tuple[Rows, Rows]:
        """(machine rows, client view rows) after message ``index`` (-1: before any), rebuilt
        from the deltas as the page's script rebuilds them."""
        machines: Rows = {}
        views: Rows = {}
        for i in range(index + 1):
            for rows, changes in ((machines, self.machines[i]), (views, self.views[i])):
                for key, value in changes:
                    if value is None:
                        rows.pop(key, None)
                    else:
                        rows[key] = value
        return machines, views

    def _settle(self) -> None:
        rows = machine_rows(self.monitors)
        message = self.messages[len(self.machines)][2]
        if isinstance(message, dict):
            self._answered.update(answered_prompts(self._prompts, rows, message))
        self._prompts = prompt_sets(self.monitors)
        for key in [k for k in self._answered if k in rows]:
            del self._answered[key]  # a new prompt under the same id
        rows = {**self._answered, **rows}
        self.machines.append(delta(self._machine_rows, rows))
        self._machine_rows = rows


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
