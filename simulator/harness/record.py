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
from collections.abc import Callable
from typing import IO, Any

from properties.live import closed_sessions
from simulator.harness.child import Sink, chunks, exit_code, start
from simulator.harness.proxy import LinePump, TranscriptWriter

FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")


def _pump(fd_from: int, pump: LinePump, at_end: Callable[[], None] | None = None) -> None:
    for data in chunks(fd_from):
        pump.feed(data)
    pump.end()
    if at_end is not None:
        at_end()


def _forward_signals(proc: subprocess.Popen[bytes]) -> None:
    def forward(signum: int, _frame: Any) -> None:
        with contextlib.suppress(OSError):
            proc.send_signal(signum)

    for name in FORWARDED:
        sig = getattr(signal, name, None)
        if sig is not None:
            signal.signal(sig, forward)


def proxy(
    proc: subprocess.Popen[bytes], writer: TranscriptWriter, client_in: int, client_out: int
) -> tuple[int, bool]:
    """Run the Agent ``proc`` (``child.start``) between the Client's file descriptors, recording
    every line with ``writer``; its exit code (128 + N for signal N) and whether the Client's
    input was still open when the Agent's output ended (the Agent exited on its own)."""
    _forward_signals(proc)
    assert proc.stdin is not None and proc.stdout is not None
    to_agent = proc.stdin.fileno()
    client_pump = LinePump(lambda line, cut: writer.record("client", line, cut), Sink(to_agent))
    agent_pump = LinePump(lambda line, cut: writer.record("agent", line, cut), Sink(client_out))
    client_left = threading.Event()

    def close_agent_input() -> None:
        client_left.set()  # before the Agent can see its input end
        assert proc.stdin is not None
        proc.stdin.close()

    feeder = threading.Thread(target=_pump, args=(client_in, client_pump, close_agent_input), daemon=True)
    feeder.start()
    _pump(proc.stdout.fileno(), agent_pump)
    client_still_connected = not client_left.is_set()
    return exit_code(proc.wait()), client_still_connected


def record(command: list[str], writer: TranscriptWriter, client_in: IO[Any], client_out: IO[Any]) -> int:
    """Start the Agent ``command`` (``StartError`` when it cannot be) and proxy it between the
    Client's streams; its exit code. The live check of ``writer``, if any, is then closed: the
    recording is complete when the Agent's output ended while the Client's input was still open
    (the Agent exited on its own: nothing more can come), else for the sessions that were closed."""
    proc = start(command)
    code, client_still_connected = proxy(proc, writer, client_in.fileno(), client_out.fileno())
    live = writer.live
    if live is not None:
        live.close(complete=True if client_still_connected else closed_sessions(live.monitors))
    return code
