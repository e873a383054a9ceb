"""Live checking: the engine of ``acp-model check``, fed transcript lines while they are made.

Theory of operation
-------------------
A proxy (``acp-model record``) or a driver (``acp-model drive``) writes transcript lines one at
a time. ``LiveCheck`` judges them as they come with the very pieces ``check`` runs: the
transcript reader (``properties.transcript.read_transcript``, which splits lines, decodes them,
pairs responses with requests and reports unusable lines as input findings) and a
``MonitorSet``. The reader pulls bytes from a stream, so it runs in a thread of its own, over a
stream (``_Feed``) that hands it the lines pushed so far and blocks while there are none. Each
message goes to the set's ``feed``, as in ``check``; every finding (input or rule) goes to the
``on_finding`` callback the moment it is made, from the reader's thread.

``sync()`` waits until every line pushed so far is judged (the reader asked for more bytes with
none left, so it has used every complete line); ``open_now()`` then lists the obligations open
at this point, judged on a copy of the set (``MonitorSet.clone``), so the live set goes on
untouched. ``close(quiescent, complete)`` ends the input and judges the "eventually" rules once:
as open obligations (information, as ``check`` does at the end of a file), or as breaches when
the caller knows nothing more can happen (a driver whose agent stayed silent past its timeout),
or as breaches at the last line for the sessions the caller declares complete (the Agent exited
while its Client was still connected; a session that was closed: ``closed_sessions``).

Must not know: where the lines come from, files, processes, how findings are shown.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import BinaryIO, cast

from properties.engine import Completeness, MonitorSet
from properties.findings import Finding
from properties.monitors.facts import Facts
from properties.transcript import DEFAULT_MAX_LINE_BYTES, TranscriptStats, read_transcript

FindingHook = Callable[[Finding], None]


class _Feed:
    """A byte stream fed by ``push`` from one thread and read by the transcript reader in another.

    ``read1`` returns whatever was pushed (at most ``n`` bytes), blocks while nothing is, and
    returns ``b""`` once ``close`` was called and everything was read."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._chunks: deque[bytes] = deque()
        self._closed = False
        self._waiting = False  # the reader is blocked in read1 with nothing left to read

    def push(self, data: bytes) -> None:
        with self._cond:
            self._chunks.append(data)
            self._waiting = False
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def read1(self, n: int = -1) -> bytes:
        with self._cond:
            while not self._chunks and not self._closed:
                self._waiting = True
                self._cond.notify_all()
                self._cond.wait()
            if not self._chunks:
                return b""
            data = self._chunks.popleft()
            if 0 < n < len(data):
                self._chunks.appendleft(data[n:])
                data = data[:n]
            return data

    def wait_used(self, alive: Callable[[], bool]) -> None:
        """Block until the reader waits for bytes with none left (or its thread has ended)."""
        with self._cond:
            while not (self._waiting and not self._chunks) and alive():
                self._cond.wait(0.05)


class LiveCheck:
    """Judge transcript lines as they are pushed (see the module docstring)."""

    def __init__(
        self,
        on_finding: FindingHook | None = None,
        *,
        monitors: MonitorSet | None = None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        self.monitors = monitors if monitors is not None else MonitorSet()
        self.stats = TranscriptStats()
        self.findings: list[Finding] = []
        """Rule and input findings, in the order they were made."""
        self.open: list[Finding] = []
        """Obligations open at the end (``close(quiescent=False)``)."""
        self.on_finding = on_finding
        self.error: BaseException | None = None
        """What stopped the reader's thread, if anything did (a bug: reported by the caller)."""
        self._feed = _Feed()
        self._lock = threading.Lock()
        self._closed = False
        self._thread = threading.Thread(
            target=self._read, args=(max_line_bytes,), name="acp-model live check", daemon=True
        )
        self._thread.start()

    # -- the reader's thread ---------------------------------------------------------------------
    def _emit(self, found: list[Finding]) -> None:
        for finding in found:
            with self._lock:
                (self.open if finding.kind == "open" else self.findings).append(finding)
            if self.on_finding is not None:
                self.on_finding(finding)

    def _read(self, max_line_bytes: int) -> None:
        ms = self.monitors
        try:
            stream = cast(BinaryIO, self._feed)
            for item in read_transcript(stream, max_line_bytes, stats=self.stats):
                if isinstance(item, Finding):
                    self._emit([item])  # an input finding
                else:
                    line, sender, msg = item
                    self._emit(ms.feed(sender, msg, line))
            self._emit(ms.take_new())
        except BaseException as exc:  # pragma: no cover - a bug in a monitor; the caller reports it
            self.error = exc

    # -- the writer's side -----------------------------------------------------------------------
    def push(self, line: bytes) -> None:
        """One or more whole transcript lines (each ending with a line feed)."""
        if not self._closed:
            self._feed.push(line)

    def sync(self) -> None:
        """Wait until every line pushed so far is judged."""
        self._feed.wait_used(self._thread.is_alive)

    def open_now(self) -> list[Finding]:
        """The obligations open after the lines pushed so far (judged on a copy of the set)."""
        self.sync()
        return [f for f in self.monitors.clone().finish(quiescent=False) if f.kind == "open"]

    def close(self, quiescent: bool = False, complete: Completeness = False) -> None:
        """End the input; judge the "eventually" rules (breaches when ``quiescent``, or at the
        last line for the sessions ``complete`` accepts: ``MonitorSet.finish``)."""
        if self._closed:
            return
        self._closed = True
        self._feed.close()
        self._thread.join()
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
    longer come (``MonitorSet.finish(complete=...)``). A set without the shared facts knows of
    no closed session."""
    try:
        facts = monitors.get(Facts)
    except KeyError:
        return lambda sid: False

    def closed(sid: str | None) -> bool:
        fs = facts.sessions.get(sid) if sid is not None else None
        return fs is not None and fs.closed

    return closed
