"""Transcript lines made live: what ``acp-model record`` and ``acp-model drive`` write as they go,
and ``record``'s proxy.

Owns: the record made of one line a peer wrote (``entry``), the transcript file written one
flushed line at a time (``TranscriptWriter``: a crash loses nothing already written; a lock
keeps the lines of two pumping threads whole and in the order they were recorded), the optional
live check fed the same bytes, and the splitting of a byte stream into lines while the bytes
are passed on (``LinePump``).

Record kinds (one JSON object per line, the transcript format):

- ``{"from": SENDER, "message": M}``: the line was JSON; ``M`` is the line's own bytes,
  unchanged (so unknown and custom fields and variants are kept exactly). ``acp-model check``
  reports an ``M`` that is not a JSON-RPC message as an input finding at that line.
- ``{"from": SENDER, "unparsed": TEXT}``: the line was not JSON (or not UTF-8, or cut at the
  size limit: then ``"bytes"`` gives its full length). ``TEXT`` is the line decoded as UTF-8
  with undecodable bytes written as ``\\xNN``. ``acp-model check`` reports it as an input
  finding (``input.not-jsonrpc``, missing "message") at that line, so the evidence is never
  dropped and checking goes on.

``record`` starts the Agent (``simulator.harness.child``: pipes for its standard input and output,
its standard error the caller's, a process group of its own) and passes every byte on unchanged
with two pumps (Client -> Agent in a thread, Agent -> Client in the calling thread) that record
each line before passing on its line end, so the transcript holds a line before the other peer
can act on it (proxy order); it forwards SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 to
the Agent (a terminal's signals reach it once, through us), closes the Agent's input at the end
of ours, and returns the Agent's exit code, the recording judged complete or not (``record``).

Must not know: argument parsing, what the monitors check, how findings are shown.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
from collections.abc import Callable
from typing import IO, Any, BinaryIO

import orjson

from properties.live import LiveCheck, closed_sessions
from simulator.harness.child import Sink, chunks, exit_code, start
from simulator.peers.wire import json_line


def _is_json(raw: bytes) -> bool:
    try:
        orjson.loads(raw)
    except (ValueError, RecursionError):
        return False
    return True


MAX_LINE_BYTES = 16 * 1024 * 1024
"""Longest line recorded whole; a longer one is still passed on whole, and recorded cut."""


def entry(sender: str, raw: bytes, length: int | None = None) -> bytes:
    """The transcript line (with its line feed) recording ``raw``, one line ``sender`` wrote
    (without its line feed). ``length``: the line's full length when ``raw`` was cut."""
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    if length is None and raw.strip() and not raw.startswith(b"\xef\xbb\xbf") and _is_json(raw):
        return b'{"from":"' + sender.encode() + b'","message":' + raw.strip() + b"}\n"
    record: dict[str, Any] = {"from": sender, "unparsed": raw.decode("utf-8", "backslashreplace")}
    if length is not None:
        record["bytes"] = length
    return json_line(record).encode()


class TranscriptWriter:
    """Append transcript lines to a file (flushed per line) and to a live check, in one order."""

    def __init__(self, out: BinaryIO | None, live: LiveCheck | None = None) -> None:
        self.out = out
        self.live = live
        self.lines = 0
        self.unparsed: list[int] = []
        """Line numbers of ``unparsed`` records."""
        self._lock = threading.Lock()

    def write(self, line: bytes) -> int:
        """Record one transcript line; its 1-based line number."""
        with self._lock:
            self.lines += 1
            if line.startswith((b'{"from":"agent","unparsed"', b'{"from":"client","unparsed"')):
                self.unparsed.append(self.lines)
            if self.out is not None:
                self.out.write(line)
                self.out.flush()
            if self.live is not None:
                self.live.push(line)
            return self.lines

    def record(self, sender: str, raw: bytes, length: int | None = None) -> int:
        return self.write(entry(sender, raw, length))


class LinePump:
    """Split what one peer writes into lines while passing every byte on.

    ``feed(data)`` passes ``data`` on through ``forward``, but each line end only after the line
    it ends is recorded (``record(line, full_length_or_None)``): the other peer can never act
    on a line before the transcript holds it. Bytes of an unfinished line are passed on at once.
    A line over ``limit`` bytes is kept cut for the record (passed on whole)."""

    def __init__(
        self,
        record: Callable[[bytes, int | None], Any],
        forward: Callable[[bytes], Any],
        limit: int = MAX_LINE_BYTES,
    ) -> None:
        self._record = record
        self._forward = forward
        self._limit = limit
        self._buf = bytearray()
        self._length = 0  # full length of the unfinished line

    def _keep(self, piece: bytes) -> None:
        room = self._limit - len(self._buf)
        if room > 0:
            self._buf += piece[:room]
        self._length += len(piece)

    def _flush(self) -> None:
        cut = self._length if self._length > len(self._buf) else None
        self._record(bytes(self._buf), cut)
        self._buf.clear()
        self._length = 0

    def feed(self, data: bytes) -> None:
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            self._keep(data[start:end])
            self._flush()
            self._forward(data[start : end + 1])
            start = end + 1
        if start < len(data):
            self._keep(data[start:])
            self._forward(data[start:])

    def end(self) -> None:
        """At end of input: an unfinished last line is recorded as it is."""
        if self._length:
            self._flush()


FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")


def _forward_signals(proc: subprocess.Popen[bytes], forwarded: threading.Event) -> None:
    def forward(signum: int, _frame: Any) -> None:
        forwarded.set()
        with contextlib.suppress(OSError):
            proc.send_signal(signum)

    for name in FORWARDED:
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, forward)


def record(command: list[str], writer: TranscriptWriter, client_in: IO[Any], client_out: IO[Any]) -> int:
    """Start the Agent ``command`` (``StartError`` when it cannot be) and proxy it between the
    Client's streams, recording every line with ``writer``; its exit code (128 + N for signal N).
    The live check of ``writer``, if any, is then closed: the recording is complete when the
    Agent's output ended while the Client's input was still open and no signal was passed on to
    it (the Agent exited on its own: nothing more can come; one the user stopped through us owes
    nothing it was stopped from doing), else for the sessions that were closed."""
    proc = start(command)
    signalled = threading.Event()
    _forward_signals(proc, signalled)
    stdin, stdout = proc.stdin, proc.stdout
    assert stdin is not None and stdout is not None
    client_left = threading.Event()

    def pump(sender: str, fd_from: int, fd_to: int) -> None:
        lines = LinePump(lambda line, cut: writer.record(sender, line, cut), Sink(fd_to))
        for data in chunks(fd_from):
            lines.feed(data)
        lines.end()

    def client_to_agent() -> None:
        pump("client", client_in.fileno(), stdin.fileno())
        client_left.set()  # before the Agent can see its input end
        stdin.close()

    threading.Thread(target=client_to_agent, daemon=True).start()
    pump("agent", stdout.fileno(), client_out.fileno())
    client_still_connected = not client_left.is_set()
    code = exit_code(proc.wait())
    on_its_own = client_still_connected and not signalled.is_set()
    live = writer.live
    if live is not None:
        live.close(complete=True if on_its_own else closed_sessions(live.monitors))
    return code
