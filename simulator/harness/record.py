"""``acp-model record``'s proxy: the Agent started with pipes, every byte passed on unchanged
and every line recorded before its line end is passed on.

Owns: starting the Agent command with pipes for its standard input and output (its standard
error is the caller's), in a process group of its own; two pumps (Client -> Agent in a thread,
Agent -> Client in the calling thread) that record each line (``simulator.harness.proxy``)
before passing on its line end, so the transcript holds a line before the other peer can act on
it (proxy order); forwarding SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 to the Agent
(a terminal's signals reach it once, through us); closing the Agent's input at the end of ours;
and the Agent's exit code (128 + N when a signal N ended it).

Must not know: argument parsing, what the monitors check.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from typing import Any

from simulator.harness.proxy import LinePump, StartError, TranscriptWriter

FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")
_READ = 1 << 16


def spawn(command: list[str]) -> subprocess.Popen[bytes]:
    """Start the Agent with piped standard input and output, in a process group of its own;
    ``StartError`` when the command cannot be started."""
    try:
        return subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, process_group=0
        )
    except OSError as exc:
        raise StartError(command, exc) from None


def _writer(fd: int) -> Any:
    """A function writing all of its bytes to ``fd``; after the first failure it drops them."""
    broken = False

    def write(data: bytes) -> None:
        nonlocal broken
        if broken:
            return
        try:
            while data:
                data = data[os.write(fd, data) :]
        except OSError:
            broken = True

    return write


def _pump(fd_from: int, pump: LinePump, at_end: Any = None) -> None:
    while True:
        try:
            data = os.read(fd_from, _READ)
        except OSError:
            data = b""
        if not data:
            break
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
    """Run the Agent ``proc`` (from ``spawn``) between the Client's file descriptors, recording
    every line with ``writer``; its exit code (128 + N for signal N) and whether the Client's
    input was still open when the Agent's output ended (the Agent exited on its own)."""
    _forward_signals(proc)
    assert proc.stdin is not None and proc.stdout is not None
    to_agent = proc.stdin.fileno()
    client_pump = LinePump(lambda line, cut: writer.record("client", line, cut), _writer(to_agent))
    agent_pump = LinePump(lambda line, cut: writer.record("agent", line, cut), _writer(client_out))
    client_left = threading.Event()

    def close_agent_input() -> None:
        client_left.set()  # before the Agent can see its input end
        assert proc.stdin is not None
        proc.stdin.close()

    feeder = threading.Thread(target=_pump, args=(client_in, client_pump, close_agent_input), daemon=True)
    feeder.start()
    _pump(proc.stdout.fileno(), agent_pump)
    client_still_connected = not client_left.is_set()
    code = proc.wait()
    return (128 - code if code < 0 else code), client_still_connected
