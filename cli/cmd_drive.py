"""``acp-model drive``: model-based testing of a real Agent, with shrunk counterexamples.

Owns: the options (``--silence`` and its deprecated old name ``--quiet`` among them), the
progress lines on standard error, printing the report and the exit code (as ``check``: 0
nothing at the failing level, 1 findings, 2 unusable input or options). The campaign itself,
its runs, shrinking and files, is ``simulator.harness.campaign``; ``--replay SCRIPT`` plays one
script once instead.

Must not know: how a run is played or shrunk, or what the monitors check.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from cli.cmd_check import positive_int
from cli.cmd_record import agent_command, start_failure
from cli.main import EXIT_FINDINGS, EXIT_OK, UsageError
from cli.readings_option import add_reading_option, chosen_readings
from cli.util import dumps
from cli.workers_option import add_pool_options, cluster_failed, pool_of
from properties.checking import FAIL_SEVERITIES
from properties.outputs import unreadable
from simulator.drive import ScriptError, load_script
from simulator.harness.campaign import (
    Campaign,
    StartError,
    campaign,
    campaign_text,
    replay_report,
    replay_text,
    start,
)
from simulator.harness.drive import MAX_MESSAGES, Settings, run_once
from simulator.workers import ClusterError


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0: {text!r}")
    return value


class _Silence(argparse.Action):
    """``--silence SEC``; its old spelling ``--quiet SEC`` (which elsewhere turns progress off)
    still works and says it is deprecated."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        if option_string == "--quiet":
            sys.stderr.write(
                "acp-model drive: --quiet SEC is deprecated, say --silence SEC (the same setting)\n"
            )


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "drive",
        help="test a real Agent: play the model's Client against it, check live, shrink failures",
        description="Start AGENT_COMMAND afresh for each run and play the model's Client against "
        "it over stdio (initialize, session/new, prompts, cancels, $/cancel_request, permission "
        "answers, close, resume, extension notifications), checking every message live with the "
        "monitors of `acp-model check`. A failing run is shrunk and written as a transcript, a "
        "sequence diagram and a client script for --replay. Exit 0: no findings at the failing "
        "level; 1: findings; 2: unusable input.",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the first run (run i uses seed+i)")
    p.add_argument("--runs", type=positive_int, default=10, metavar="K", help="runs (default 10)")
    p.add_argument(
        "--steps", type=positive_int, default=30, metavar="S", help="choice points per run (default 30)"
    )
    p.add_argument(
        "--timeout",
        type=_seconds,
        default=5.0,
        metavar="SEC",
        help="how long the Agent may stay silent while it owes something (default 5)",
    )
    p.add_argument(
        "--startup",
        type=_seconds,
        default=10.0,
        metavar="SEC",
        help="how long the Agent may take to answer initialize after it starts (default 10; at "
        "least --timeout)",
    )
    p.add_argument(
        "--silence",
        "--quiet",
        dest="silence",
        action=_Silence,
        type=_seconds,
        default=0.05,
        metavar="SEC",
        help="seconds without a line from the Agent after which the driver takes its next choice "
        "(default 0.05; --quiet SEC is its old name, deprecated: it still works, with a note on "
        "standard error)",
    )
    p.add_argument(
        "--out", default="out/drive", metavar="DIR", help="where failing runs go (default out/drive)"
    )
    p.add_argument("--replay", metavar="SCRIPT", help="play this client script once instead of random runs")
    add_pool_options(p, "the runs (one job each; shrinking stays in this process)")
    p.add_argument("--json", action="store_true", help="print a JSON report instead of text")
    p.add_argument(
        "--fail-on",
        choices=sorted(FAIL_SEVERITIES),
        default="must",
        help="must (default): fail on errors; should: fail on warnings too",
    )
    p.add_argument(
        "--shrink-budget",
        type=positive_int,
        default=60,
        metavar="N",
        help="candidate scripts one shrink may try (default 60)",
    )
    p.add_argument("agent", nargs=argparse.REMAINDER, metavar="-- AGENT_COMMAND [ARGS...]")
    add_reading_option(p)
    return p


def _progress(text: str) -> None:
    sys.stderr.write(f"acp-model drive: {text}\n")
    sys.stderr.flush()


def run(args: argparse.Namespace) -> int:
    command = agent_command(args)
    settings = Settings(
        steps=args.steps,
        timeout=args.timeout,
        startup=args.startup,
        silence=args.silence,
        fail_on=args.fail_on,
        max_messages=MAX_MESSAGES,
        readings=chosen_readings(args),
    )
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out}: is not a directory")
    started = time.monotonic()
    try:
        if args.replay is not None:
            return _replay(args, settings, command, started)
        plan = Campaign(
            command, settings, args.seed, args.runs, out, args.shrink_budget, _diagram,
            None if args.json else _progress,
        )  # fmt: skip
        with pool_of(args) as pool:
            runs, rules = campaign(plan, pool)
    except ClusterError as exc:
        return cluster_failed("drive", exc)
    except StartError as exc:
        raise start_failure(exc.command, exc.error) from None
    code = EXIT_FINDINGS if rules else EXIT_OK
    seconds = time.monotonic() - started
    report = {
        "command": command,
        "runs": len(runs),
        "messages": sum(r.messages for r in runs),
        "seconds": round(seconds, 3),
        "findings": [rules[r] for r in sorted(rules)],
        "fail_on": args.fail_on,
        "exit_code": code,
    }
    sys.stdout.write(dumps(report) if args.json else campaign_text(report, seconds))
    return code


def _diagram(items: list[Any], title: str | None) -> str:
    from diagrams.sequence import transcript_to_mermaid

    return transcript_to_mermaid(items, title=title)


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
    result = run_once(start(command), settings, script=script)
    code = EXIT_FINDINGS if result.failing else EXIT_OK
    report = replay_report(path, result, time.monotonic() - started, code)
    sys.stdout.write(dumps(report) if args.json else replay_text(path, result))
    return code
