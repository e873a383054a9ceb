"""The Agent as a child process: starting its command, the bytes to and from its pipes, and how
it ended.

Owns: ``start`` (``StartError`` when the command cannot be started), ``Sink``, ``read``,
``chunks`` and ``drain`` (the bytes of a descriptor), ``exit_code`` and ``status_text`` (how it
ended, as a shell and as a report say it), and ``ProcessPeer``: the Agent of one ``drive`` run,
NDJSON lines sent and read with time-outs, its standard error passed on with its last lines
kept, and the lockstep pipes offered to it (an Agent that takes them, ``acp-model agent``, moves
in the driver's turns: ``simulator.harness.serve``).

Used by ``proxy`` (``record``), ``drive`` and ``campaign`` (a fresh Agent per run) and ``serve``
(the model served as an Agent: there the descriptors are our own).

Must not know: transcripts, the monitors, what the lines mean.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator

READ = 1 << 16
"""Bytes asked of one read."""
STDERR_TAIL = 8
"""Lines of a crashed Agent's standard error the report quotes."""
_TAIL_WIDTH = 240
"""Characters of each quoted line (longer ones are cut)."""
LOCKSTEP = "ACP_MODEL_LOCKSTEP"
"""The environment variable naming the lockstep descriptors of a driven Agent: ``TURN,DONE``
(decimal; ``simulator.harness.serve`` says what goes through them)."""
HELLO = b"L\n"
"""What a lockstep Agent writes on DONE at its start; after each turn it writes there how many
lines the turn wrote on its output (decimal, and a line feed; 0: it has no move left)."""
TURN = b"t"
"""What the driver writes on TURN: one turn."""


class StartError(Exception):
    """The Agent's command could not be started (``error`` is the ``OSError``)."""

    def __init__(self, command: list[str], error: OSError) -> None:
        super().__init__(str(error))
        self.command = command
        self.error = error


def start(
    command: list[str],
    stderr: int | None = None,
    pass_fds: tuple[int, ...] = (),
    env: dict[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """Start ``command`` with piped standard input and output (standard error: ``stderr``, by
    default the caller's), unbuffered, in a process group of its own (``pass_fds`` and ``env``
    as ``subprocess.Popen`` takes them)."""
    try:
        return subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            bufsize=0,
            process_group=0,
            pass_fds=pass_fds,
            env=env,
        )
    except OSError as exc:
        raise StartError(command, exc) from None


class Sink:
    """Write all of some bytes to ``fd`` (``sink(data)``: whether they all went); after the first
    failure the rest is dropped."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.broken = False

    def __call__(self, data: bytes) -> bool:
        if not self.broken:
            try:
                while data:
                    data = data[os.write(self.fd, data) :]
            except OSError:
                self.broken = True
        return not self.broken


def read(fd: int) -> bytes:
    """What ``fd`` gives in one read; ``b""`` at its end or on a read error (a non-blocking
    ``fd`` with nothing to give raises ``BlockingIOError``)."""
    try:
        return os.read(fd, READ)
    except BlockingIOError:
        raise
    except OSError:
        return b""


def chunks(fd: int) -> Iterator[bytes]:
    """What ``fd`` gives, read after read, until its end."""
    while data := read(fd):
        yield data


def drain(fd: int) -> tuple[bytes, bool]:
    """What the non-blocking ``fd`` gives without waiting, and whether it ended; it returns after
    a short read or 16 full ones (1 MiB), so a peer that writes without pause cannot keep the
    caller here (its deadlines and flood checks run between calls)."""
    pieces: list[bytes] = []
    while True:
        try:
            data = read(fd)
        except BlockingIOError:
            return b"".join(pieces), False
        if not data:
            return b"".join(pieces), True
        pieces.append(data)
        if len(data) < READ or len(pieces) == 16:
            return b"".join(pieces), False


def exit_code(code: int) -> int:
    """A ``returncode`` as a shell gives it: 128 + N for signal N."""
    return 128 - code if code < 0 else code


def status_text(code: int) -> str:
    """How a process ended, from its ``returncode``."""
    return f"exit code {code}" if code >= 0 else f"ended by signal {-code}"


def _pipe() -> tuple[int, int]:
    """A pipe whose two descriptors are above standard error (a process started with one of
    0, 1, 2 closed would otherwise get it, and hand it on as that stream)."""
    fds = []
    for fd in os.pipe():
        if fd <= 2:
            moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
            os.close(fd)
            fd = moved
        fds.append(fd)
    return fds[0], fds[1]


class ProcessPeer:
    """The Agent as a child process on pipes (the peer of ``simulator.harness.drive``). Its
    standard error passes through to ours as it comes (a thread copies it), and its last
    ``STDERR_TAIL`` lines are kept for the report of a crash; ``returncode`` is its exit status
    once ``stop`` has waited for it.

    It is offered the lockstep pipes (``LOCKSTEP``). ``lockstep`` is None until the Agent's
    first byte: True when ``HELLO`` came first (a lockstep Agent writes it before anything
    else), False when a line came without it. In lockstep each ``receive`` is one turn: ``TURN``
    written (unless the last turn is still unfinished: its ``timeout`` ran out first), then the
    Agent's lines until as many came as it says the turn wrote (``quiescent``: none, no move
    left), so a pipe or a process between the Agent and this one changes nothing. Otherwise
    ``receive`` waits for the Agent's next lines as long as ``timeout``."""

    def __init__(self, command: list[str]) -> None:
        turn_r, turn_w = _pipe()
        done_r, done_w = _pipe()
        env = {**os.environ, LOCKSTEP: f"{turn_r},{done_w}"}
        try:
            self.proc = start(command, stderr=subprocess.PIPE, pass_fds=(turn_r, done_w), env=env)
        except StartError:
            for fd in (turn_r, turn_w, done_r, done_w):
                os.close(fd)
            raise
        os.close(turn_r)
        os.close(done_w)
        assert self.proc.stdout is not None and self.proc.stdin is not None
        self._out = self.proc.stdout.fileno()
        self._stdin = self.proc.stdin
        self._in = Sink(self._stdin.fileno())
        os.set_blocking(self._out, False)
        self._turn_w, self._done = turn_w, done_r
        self._turns = Sink(turn_w)
        os.set_blocking(done_r, False)
        self.lockstep: bool | None = None
        """Whether the Agent moves in turns (None: not known yet)."""
        self.quiescent = False
        """Whether the last turn wrote nothing: the Agent said it has no move left."""
        self._turn_open = False
        self._owed: int | None = None
        """How many lines the open turn wrote (None: the Agent has not said yet)."""
        self._given = 0
        """How many of them were handed out before the turn ended (its timeout ran out)."""
        self._said = b""
        self._done_eof = False
        self._pending = b""
        self.bytes_read = 0
        """Bytes of the Agent's output taken so far (``drive`` tells a line in transit from silence)."""
        self._eof = False
        self.returncode: int | None = None
        self.killed = False
        """Whether ``stop`` had to end it."""
        self._tail: deque[bytes] = deque(maxlen=STDERR_TAIL)
        self._errors = threading.Thread(target=self._copy_stderr, name="agent-stderr", daemon=True)
        self._errors.start()

    def _copy_stderr(self) -> None:
        """Pass the Agent's standard error on, line by line, keeping the last lines."""
        err = self.proc.stderr
        assert err is not None
        partial = b""
        for data in chunks(err.fileno()):
            with contextlib.suppress(OSError, ValueError):
                sys.stderr.write(data.decode("utf-8", "replace"))
                sys.stderr.flush()
            *lines, partial = (partial + data).split(b"\n")
            self._tail.extend(line for line in lines if line.strip())
        if partial.strip():
            self._tail.append(partial)
        with contextlib.suppress(OSError):
            err.close()

    def stderr_tail(self) -> list[str]:
        """The last lines the Agent wrote on standard error (complete once ``stop`` returned)."""
        return [line.decode("utf-8", "replace").rstrip("\r")[:_TAIL_WIDTH] for line in self._tail]

    def send(self, data: bytes) -> None:
        self._in(data)

    def _read(self) -> None:
        """Take what the Agent wrote, without waiting (``_eof`` at the end of its output)."""
        data, ended = drain(self._out)
        self._pending += data
        self.bytes_read += len(data)
        self._eof = self._eof or ended

    def _heard(self, signals: bytes) -> None:
        """Take the Agent's signals: whether it moves in turns, how many lines a turn wrote. An
        Agent that closes DONE is listened to from then on."""
        self._said += signals
        *said, self._said = self._said.split(b"\n")
        if self.lockstep is None:
            if said[:1] == [HELLO.strip()]:
                self.lockstep, said = True, said[1:]
            elif said or self._done_eof or self._pending or self._eof:
                self.lockstep = False
        for word in said:
            if self._turn_open and word.isdigit():
                self._owed = int(word)
        if self._done_eof and self.lockstep:
            self.lockstep, self._turn_open = False, False

    def _turn_ended(self) -> bool:
        """Whether the open turn's lines have all come (it is then closed)."""
        if (
            self._turn_open
            and self._owed is not None
            and self._pending.count(b"\n") + self._given >= self._owed
        ):
            self._turn_open, self.quiescent = False, self._owed == 0
        return not self._turn_open

    def receive(self, timeout: float) -> list[bytes] | None:
        """The complete lines the Agent wrote: in lockstep, those of one turn; else waiting up to
        ``timeout`` seconds for one (``[]``: none came); None once its output ended. A turn not
        finished within ``timeout`` gives the lines it wrote so far and is waited for next time."""
        deadline = time.monotonic() + timeout
        turned = False
        while True:
            if self.lockstep and not self._turn_open and not self._eof and not turned:
                turned, self.quiescent, self._owed, self._given = True, False, None, 0
                self._turn_open = self._turns(TURN)
                if not self._turn_open:  # it no longer reads its turns
                    self.lockstep = False
            busy = self.lockstep is None or (self.lockstep and not self._turn_ended())
            if not busy or self._eof:
                if b"\n" in self._pending:
                    *lines, self._pending = self._pending.split(b"\n")
                    return lines
                if self._eof:
                    if self._pending:
                        last, self._pending = self._pending, b""
                        return [last]
                    return None
                if self.lockstep:
                    return []
            left = deadline - time.monotonic()
            if left <= 0:
                return self._so_far()
            watched = [self._out] + (
                [self._done] if self.lockstep is not False and not self._done_eof else []
            )
            ready, _, _ = select.select(watched, [], [], left)
            if self._out in ready:
                self._read()
            if ready and self.lockstep is not False:
                signals, ended = drain(self._done)
                self._done_eof = self._done_eof or ended
                self._heard(signals)

    def partial_line(self) -> int:
        """How many bytes of a line not yet ended the Agent has written."""
        return len(self._pending) - self._pending.rfind(b"\n") - 1

    def written(self) -> list[bytes]:
        """The complete lines the Agent has already written and ``receive`` has not returned,
        without waiting (the end of its output is left for ``receive`` to report)."""
        if not self._eof:
            self._read()
        return self._so_far()

    def _so_far(self) -> list[bytes]:
        """The complete lines read and not yet returned, counted as handed out of the open turn,
        if one is (its timeout ran out)."""
        *lines, self._pending = self._pending.split(b"\n")
        self._given += len(lines)
        return lines

    def stop(self, grace: float = 2.0) -> str:
        """Close the Agent's input; end it if it has not exited within ``grace`` seconds."""
        with contextlib.suppress(OSError):
            os.close(self._turn_w)
        try:
            with contextlib.suppress(OSError):
                self._stdin.close()
            try:
                self.returncode = self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                except OSError:
                    self.proc.kill()
                self.returncode, self.killed = self.proc.wait(), True
        finally:
            if self.proc.stdout is not None:
                self.proc.stdout.close()
            with contextlib.suppress(OSError):
                os.close(self._done)
            self._errors.join(1.0)  # the rest of its standard error (a child may hold it open)
        if self.killed:
            return f"killed after {grace:g} s without exiting at end of input"
        return status_text(self.returncode)
