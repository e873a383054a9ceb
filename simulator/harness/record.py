"""``acp-model record``'s proxy: the Agent started with pipes, every byte passed on unchanged
and every line recorded before its line end is passed on.

Owns: two pumps (Client -> Agent in a thread, Agent -> Client in the calling thread) that
record each line (``simulator.harness.proxy``) before passing on its line end, so the transcript
holds a line before the other peer can act on it (proxy order); forwarding SIGINT, SIGTERM,
SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 to the Agent (a terminal's signals reach it once, through
us); closing the Agent's input at the end of ours; the Agent's exit code; and when the
recording is complete (``record``). The Agent's
process (started with pipes for its standard input and output, its standard error the
caller's, in a process group of its own) is ``simulator.harness.child``.

Must not know: argument parsing, what the monitors check.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
from typing import IO, Any

from properties.live import closed_sessions
from simulator.harness.child import Sink, chunks, exit_code, start
from simulator.harness.proxy import LinePump, TranscriptWriter

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
