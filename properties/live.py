"""Live checking: the engine of ``acp-model check``, fed transcript lines while they are made.

Theory of operation
-------------------
``check`` runs it too, reading a recorded transcript to its end (``properties.checking.check_stream``).
A proxy (``acp-model record``) or a driver (``acp-model drive``) writes transcript lines one at
a time. ``LiveCheck`` judges them as they come with the transcript reader
(``properties.transcript.read_items``, which splits lines, decodes them, pairs responses with
requests and reports unusable lines as input findings) and a ``MonitorSet``. The reader pulls
bytes; here it reads the lines pushed so far, and where there are none it stops, to go on from
there at the next ``push``. So every complete line is judged by the time ``push`` returns, in
the pushing thread, and every finding (input, schema or rule) has gone to the ``on_finding``
callback, in the order the findings were made. So a proxy relays a line once it is judged (the
monitors take microseconds per message), and a callback that blocks (a report written to a
stderr pipe nobody drains) holds the relay up, as it would hold up the real Agent writing to
that pipe.

``open_now()`` lists the obligations open so far, judged on a copy of the set, and ``close``
ends the input and judges the "eventually" rules once (``MonitorSet.finish``); a recording is
complete for the sessions it saw closed (``closed_sessions``).

Must not know: where the lines come from, files, processes, how findings are shown.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from properties.engine import Completeness, MonitorSet
from properties.findings import Finding
from properties.monitors.facts import Facts
from properties.transcript import DEFAULT_MAX_LINE_BYTES, Read, TranscriptStats, read_items

if TYPE_CHECKING:  # the schema checker (and jsonschema) is imported only when a schema is given
    from properties.schema_check import SchemaChecker

FindingHook = Callable[[Finding], None]
MessageHook = Callable[[int, str, dict[str, Any]], None]
"""``hook(line, sender, message)``: sees every message that was used, before it is judged."""


class LiveCheck:
    """Judge transcript lines as they are pushed (see the module docstring), or as ``read`` gives
    them (``check_stream``)."""

    def __init__(
        self,
        on_finding: FindingHook | None = None,
        *,
        monitors: MonitorSet | None = None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        read: Read | None = None,
        schema: SchemaChecker | None = None,
        on_message: MessageHook | None = None,
        max_findings: int | None = None,
    ) -> None:
        self.monitors = monitors if monitors is not None else MonitorSet()
        self.stats = TranscriptStats()
        self.findings: list[Finding] = []
        """Rule, schema and input findings, in the order they were made (at most
        ``max_findings``: None, all)."""
        self.open: list[Finding] = []
        """Obligations open at the end (``close(quiescent=False)``)."""
        self.cut: Counter[str] = Counter()
        """Findings not kept because ``max_findings`` was reached, by severity."""
        self.on_finding = on_finding
        self.error: BaseException | None = None
        """What stopped the judging, if anything did (a bug: reported by the caller)."""
        self.schema = schema
        self._on_message = on_message
        self.max_findings = max_findings
        self.complete = False
        """``close`` was told the input is complete for every session (``check --complete``)."""
        self._chunks: deque[bytes] = deque()
        self._lock = threading.Lock()  # one thread at a time judges, copies or snapshots
        self._closed = False
        self._items = read_items(read or self._read1, max_line_bytes, self.stats)

    def _read1(self, n: int) -> bytes | None:
        """At most ``n`` bytes of those pushed; None while there are none, b"" once closed."""
        if not self._chunks:
            return b"" if self._closed else None
        data = self._chunks.popleft()
        if 0 < n < len(data):
            self._chunks.appendleft(data[n:])
            data = data[:n]
        return data

    def _emit(self, found: list[Finding]) -> None:
        """Keep ``found`` after the findings the monitors made before it (the set's ``push``
        leaves them waiting, so the findings are kept in the order they were made)."""
        for finding in (*self.monitors.take_new(), *found):
            if finding.kind == "open":
                self.open.append(finding)
            elif self.max_findings is None or len(self.findings) < self.max_findings:
                self.findings.append(finding)
            else:
                self.cut[finding.severity] += 1
            if self.on_finding is not None:
                self.on_finding(finding)

    def _judge(self) -> None:
        """Judge every complete line pushed (or read) so far (and, once closed, the rest)."""
        push, schema, on_message = self.monitors.push, self.schema, self._on_message
        try:
            for item in self._items:
                if not isinstance(item, tuple):  # an input finding, or None
                    if item is None:  # every line pushed so far is judged
                        break
                    self._emit([item])  # an input finding
                    continue
                line, sender, msg = item
                if on_message is not None:
                    on_message(line, sender, msg)
                if schema is not None:
                    problem = schema.check(sender, msg, line)
                    if problem is not None:
                        self._emit([problem])
                push(sender, msg, line)
            self._emit([])
        except BaseException as exc:  # pragma: no cover - a bug in a monitor; the caller reports it
            self.error = exc

    def push(self, line: bytes) -> None:
        """One or more whole transcript lines (each ending with a line feed), judged at once."""
        with self._lock:
            if not self._closed and self.error is None:
                self._chunks.append(line)
                self._judge()

    def open_now(self) -> list[Finding]:
        """The obligations open after the lines pushed so far (judged on a copy of the set)."""
        with self._lock:
            copy = self.monitors.clone()
        return [f for f in copy.finish(quiescent=False) if f.kind == "open"]

    def close(self, quiescent: bool = False, complete: Completeness = False) -> None:
        """End the input; judge the "eventually" rules (breaches when ``quiescent``, or at the
        last line for the sessions ``complete`` accepts: ``MonitorSet.finish``)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self.complete = complete is True
            if self.error is None:
                self._judge()
            if self.error is None:
                last = self.stats.lines or None
                self._emit(self.monitors.finish(quiescent=quiescent, complete=complete, last_line=last))

    def snapshot(self) -> tuple[list[Finding], list[Finding]]:
        """Copies of (findings, open) as they stand."""
        with self._lock:
            return list(self.findings), list(self.open)


def closed_sessions(monitors: MonitorSet) -> Callable[[str | None], bool]:
    """The completeness of a recording that goes on no further for the sessions it saw closed
    (a successful ``session/close``, not reopened by a resume): what they still owe can no
    longer come (``MonitorSet.finish(complete=...)``)."""
    facts = monitors.get(Facts)

    def closed(sid: str | None) -> bool:
        fs = facts.sessions.get(sid) if sid is not None else None
        return fs is not None and fs.closed

    return closed
