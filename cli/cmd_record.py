"""``acp-model record``: a transparent stdio proxy that writes the transcript of a live session.

Owns: starting the Agent command with pipes for its standard input and output (its standard
error is ours), two pumps (Client -> Agent in a thread, Agent -> Client in the main thread)
that pass every byte on unchanged and record each line (``simulator.harness.proxy``) before passing on its
line end, so the transcript holds a line before the other peer can act on it (proxy order);
forwarding SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 to the Agent (started in a
process group of its own, so a terminal's signals reach it once, through us); closing the
Agent's input at the end of ours; and ending with the Agent's exit code (128 + N when a signal
N ended it). With ``--check``, findings go to standard error as the live check makes them, and
a summary when the Agent has exited. The recording is judged complete (open obligations are
breaches at its last line) when the Agent's output ended while the Client's input was still
open (the Agent exited on its own), else for the sessions that were closed.

Must not know: what the monitors check, the model.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import threading
from typing import Any, BinaryIO

from cli.main import UsageError
from cli.readings_option import add_reading_option, chosen_readings
from properties.check_report import finding_text, summary_text
from properties.engine import MonitorSet
from properties.findings import Finding
from properties.live import LiveCheck, closed_sessions
from simulator.harness.proxy import LinePump, TranscriptWriter

FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")
_READ = 1 << 16


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "record",
        help="run an Agent behind a transparent stdio proxy and record the session's transcript",
        description="Start AGENT_COMMAND and pass standard input and output through unchanged, "
        "appending every line to the transcript (NDJSON, proxy order, flushed per line). The "
        "exit code is the Agent's.",
    )
    p.add_argument("--out", required=True, metavar="FILE.ndjson", help="transcript to write")
    p.add_argument(
        "--check",
        action="store_true",
        help="check the session live: findings on standard error as they are made, a summary at exit",
    )
    p.add_argument("agent", nargs=argparse.REMAINDER, metavar="-- AGENT_COMMAND [ARGS...]")
    add_reading_option(p)
    return p


def agent_command(args: argparse.Namespace) -> list[str]:
    command = list(args.agent)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise UsageError("no agent command (give it after --)")
    return command


def spawn(command: list[str]) -> subprocess.Popen[bytes]:
    """Start the Agent with piped standard input and output, in a process group of its own."""
    try:
        return subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0, process_group=0
        )
    except OSError as exc:
        raise start_failure(command, exc) from None


def start_failure(command: list[str], exc: OSError) -> UsageError:
    """The one-line usage error for an agent command that could not be started."""
    if isinstance(exc, FileNotFoundError):
        return UsageError(f"{command[0]}: no such command")
    if isinstance(exc, PermissionError):
        return UsageError(f"{command[0]}: permission denied")
    return UsageError(f"{command[0]}: cannot start ({exc.strerror or exc})")


def open_out(path: str) -> BinaryIO:
    if os.path.isdir(path):
        raise UsageError(f"{path}: is a directory")
    try:
        return open(path, "wb", buffering=0)
    except OSError as exc:
        raise UsageError(f"{path}: cannot write ({exc.strerror or exc})") from None


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


def run(args: argparse.Namespace) -> int:
    command = agent_command(args)
    readings = chosen_readings(args)
    if sys.stdin is None or sys.stdout is None:
        raise UsageError("standard input or output is closed")
    out = open_out(args.out)
    live: LiveCheck | None = None
    writer = TranscriptWriter(out)
    if args.check:

        def show(finding: Finding) -> None:
            sys.stderr.write(finding_text(args.out, finding, writer.unparsed) + "\n")
            sys.stderr.flush()

        live = LiveCheck(show, monitors=MonitorSet(readings=readings))
        writer.live = live
    try:
        proc = spawn(command)
    except UsageError:
        out.close()
        raise
    _forward_signals(proc)
    assert proc.stdin is not None and proc.stdout is not None
    to_agent = proc.stdin.fileno()
    client_pump = LinePump(lambda line, cut: writer.record("client", line, cut), _writer(to_agent))
    agent_pump = LinePump(lambda line, cut: writer.record("agent", line, cut), _writer(sys.stdout.fileno()))
    client_left = threading.Event()

    def close_agent_input() -> None:
        client_left.set()  # before the Agent can see its input end
        assert proc.stdin is not None
        proc.stdin.close()

    feeder = threading.Thread(
        target=_pump, args=(sys.stdin.fileno(), client_pump, close_agent_input), daemon=True
    )
    feeder.start()
    _pump(proc.stdout.fileno(), agent_pump)
    client_still_connected = not client_left.is_set()
    code = proc.wait()
    if live is not None:
        # the Agent exited on its own: nothing more can come; else the sessions it closed
        live.close(complete=True if client_still_connected else closed_sessions(live.monitors))
        if live.error is not None:
            sys.stderr.write(f"acp-model record: live check stopped: {live.error!r}\n")
        sys.stderr.write(summary_text(args.out, live) + "\n")
    out.close()
    if code < 0:
        return 128 - code
    return code
