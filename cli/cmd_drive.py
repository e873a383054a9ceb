"""``acp-model drive``: model-based testing of a real Agent, with shrunk counterexamples.

Owns: the progress lines on standard error (only on a terminal, as every long command's
progress: ``cli.progress.lines_shown``; none with ``--json`` or ``--quiet``), printing the
report and the exit code (as ``check``: 0 nothing at the failing level, 1 findings, 2 unusable
input or options); the options are ``cli.drive_options``. The campaign itself, its runs,
shrinking and files, is ``simulator.harness.campaign``; ``--replay SCRIPT`` plays one script once
instead.

Must not know: how a run is played or shrunk, or what the monitors check.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from cli.cmd_record import agent_command, start_failure
from cli.drive_options import add_parser as add_parser  # the command's parser: cli.main asks here
from cli.main import EXIT_FINDINGS, EXIT_OK, UsageError
from cli.options import chosen_readings, pool_of
from cli.outputs import check_folder, show
from cli.progress import lines_shown
from properties.outputs import dumps, unreadable
from simulator.harness.campaign import (
    Campaign,
    campaign,
    campaign_report,
    campaign_text,
    play,
    replay_report,
    replay_text,
)
from simulator.harness.child import StartError
from simulator.harness.settings import Settings
from simulator.peers.driver_client import ScriptError, load_script


def _progress(text: str) -> None:
    sys.stderr.write(f"acp-model drive: {text}\n")
    sys.stderr.flush()


def run(args: argparse.Namespace) -> int:
    from diagrams.sequence import transcript_to_mermaid

    command = agent_command(args)
    same = "steps timeout startup silence fail_on elicitation"  # options named as the fields
    settings = Settings(
        **{name: getattr(args, name) for name in same.split()}, readings=chosen_readings(args)
    )
    check_folder(args.out, "--out")  # before any run: a failing run is written there
    out = Path(args.out)
    started = time.monotonic()
    try:
        if args.replay is not None:
            return _replay(args, settings, command, started)
        plan = Campaign(
            command, settings, args.seed, args.runs, out, args.shrink_budget, transcript_to_mermaid,
            _progress if lines_shown(args.quiet or args.json) else None,
        )  # fmt: skip
        with pool_of(args) as pool:
            runs, rules = campaign(plan, pool)
    except StartError as exc:
        raise start_failure(exc.command, exc.error) from None
    code = EXIT_FINDINGS if rules else EXIT_OK
    seconds = time.monotonic() - started
    report = campaign_report(plan, runs, rules, seconds, code)
    show(dumps(report) if args.json else campaign_text(report, seconds))
    return code


def _replay(args: argparse.Namespace, settings: Settings, command: list[str], started: float) -> int:
    path = args.replay
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(unreadable(path, exc)) from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: cannot read ({exc})") from None
    try:
        script = load_script(text)
    except ScriptError as exc:
        raise UsageError(f"{path}: {exc}") from None
    result = play((command, settings, None, script))
    code = EXIT_FINDINGS if result.failing else EXIT_OK
    report = replay_report(path, result, time.monotonic() - started, code)
    show(dumps(report) if args.json else replay_text(path, result))
    return code
