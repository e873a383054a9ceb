"""``acp-model record``: a transparent stdio proxy that writes the transcript of a live session.

Owns: the options, the output file, the live check: with ``--check``, findings go to standard
error as the live check makes them (its Client lines in the order the proxy forwarded them:
``properties.engine``, "Client order"), and a summary when the Agent has exited; ending with the
Agent's exit code (128 + N when a signal N ended it). The proxy itself (pipes, pumps, signals,
when the recording is complete) is ``simulator.harness.proxy.record``.

Must not know: what the monitors check, the model.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, BinaryIO

from cli.main import UsageError
from cli.options import add_reading_option, chosen_readings
from cli.outputs import check_file
from properties.check_report import finding_text, summary_text
from properties.engine import MonitorSet
from properties.findings import Finding
from properties.live import LiveCheck
from simulator.harness.child import StartError
from simulator.harness.proxy import TranscriptWriter, record


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
    check_file(path, "--out")  # a path under a file: said as every command says it
    try:
        return open(path, "wb", buffering=0)
    except OSError as exc:
        raise UsageError(f"{path}: cannot write ({exc.strerror or exc})") from None


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
            sys.stderr.write(finding_text(args.out, finding) + "\n")
            sys.stderr.flush()

        # (a proxy: its Client lines are in the order it forwarded them, properties.engine)
        live = LiveCheck(show, monitors=MonitorSet(readings=readings, client_order="forwarded"))
        writer.live = live
    try:
        code = record(command, writer, sys.stdin, sys.stdout)
    except StartError as exc:
        out.close()
        raise start_failure(exc.command, exc.error) from None
    if live is not None:
        if live.error is not None:
            sys.stderr.write(f"acp-model record: live check stopped: {live.error!r}\n")
        sys.stderr.write(summary_text(args.out, live) + "\n")
    out.close()
    return code
