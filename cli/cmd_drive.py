"""``acp-model drive``: model-based testing of a real Agent, with shrunk counterexamples.

Owns: the options, the runs (run i draws its choices with seed ``--seed + i``, each with a fresh
Agent process), shrinking the first failing run of each rule (not a run the Agent crashed in
or one that failed before any choice: ``simulator.harness.drive.not_shrunk``), the files written for it (the
transcript ``.ndjson``, a Mermaid sequence diagram ``.mmd`` and the replayable client script
``.script.json``, written atomically), the progress lines on standard error (shrinking's
too), ``--silence`` and its deprecated old name ``--quiet``, the text and
``--json`` reports and the exit code (as ``check``: 0 nothing at the failing level, 1 findings,
2 unusable input or options). ``--replay SCRIPT`` plays one script once instead.

Must not know: how a run is played (``simulator/harness/drive.py``) or what the monitors check.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from cli.cmd_check import positive_int
from cli.cmd_record import agent_command, start_failure
from cli.live_report import UNPARSED_NOTE, finding_text
from cli.main import EXIT_FINDINGS, EXIT_OK, UsageError
from cli.readings_option import add_reading_option, chosen_readings
from cli.util import dumps, write_atomic
from cli.workers_option import add_pool_options, cluster_failed, pool_of
from properties.checking import FAIL_SEVERITIES
from properties.findings import Finding
from properties.outputs import unreadable
from simulator.drive import ScriptError, load_script, script_json
from simulator.harness.drive import (
    CRASHED,
    MAX_MESSAGES,
    ProcessPeer,
    RunResult,
    Settings,
    Shrunk,
    not_shrunk,
    run_once,
    shrink_run,
    transcript_item,
)
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


def _peer_factory(command: list[str]) -> Any:
    def make() -> ProcessPeer:
        try:
            return ProcessPeer(command)
        except OSError as exc:
            raise start_failure(command, exc) from None

    return make


def _progress(text: str) -> None:
    sys.stderr.write(f"acp-model drive: {text}\n")
    sys.stderr.flush()


def _safe(rule: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in rule)


def write_failure(out: Path, stem: str, result: RunResult, about: dict[str, Any]) -> dict[str, str]:
    """The transcript, its sequence diagram and the client script of one run."""
    from diagrams.sequence import transcript_to_mermaid

    files = {
        "transcript": str(out / f"{stem}.ndjson"),
        "diagram": str(out / f"{stem}.mmd"),
        "script": str(out / f"{stem}.script.json"),
    }
    write_atomic(files["transcript"], b"".join(result.lines))
    items = [item for item in (transcript_item(line) for line in result.lines) if item is not None]
    write_atomic(files["diagram"], transcript_to_mermaid(items, title=about.get("rule")))
    write_atomic(files["script"], script_json(result.choices, **about))
    return files


def _finding_json(f: Finding) -> dict[str, Any]:
    return f.to_json()


def _report_rule(
    rule: str,
    first: Finding,
    run_no: int,
    seed: int | None,
    shrunk: Shrunk | None,
    files: dict[str, str] | None,
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "rule": rule,
        "level": first.level,
        "severity": first.severity,
        "explanation": first.explanation,
        "run": run_no,
        "seed": seed,
    }
    if shrunk is not None:
        data.update(
            original_length=len(shrunk.original),
            shrunk_length=len(shrunk.choices),
            reproduced=shrunk.reproduced,
            replays=shrunk.replays,
            shrink_runs=shrunk.runs,
            nondeterministic=shrunk.nondeterministic,
            original_replays=shrunk.checks,
            original_reproduced=shrunk.checked,
            runs_per_candidate=shrunk.per_candidate,
            undone=shrunk.undone,
        )
        if shrunk.skipped:
            data["not_shrunk"] = shrunk.skipped
    if files is not None:
        data["files"] = files
    return data


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
    make_peer = _peer_factory(command)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"{out}: is not a directory")
    started = time.monotonic()
    if args.replay is not None:
        return _replay(args, settings, make_peer, out, started)
    runs: list[RunResult] = []
    rules: dict[str, dict[str, Any]] = {}
    pool = pool_of(args)
    try:
        with pool:
            jobs = [(command, settings, args.seed + i) for i in range(args.runs)]
            for i, result in enumerate(pool.map(drive_seed, jobs)):
                _take_run(args, command, settings, make_peer, out, i, result, runs, rules)
    except ClusterError as exc:
        return cluster_failed("drive", exc)
    failing = bool(rules)
    code = EXIT_FINDINGS if failing else EXIT_OK
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
    if args.json:
        sys.stdout.write(dumps(report))
    else:
        lines = [
            f"acp-model drive: {report['runs']} runs, {report['messages']} agent messages, "
            f"{seconds:.1f} s; findings: {len(rules) or 'none'}"
        ]
        for r in report["findings"]:
            if r.get("not_shrunk"):
                lines.append(
                    f"  {r['rule']} [{r['level']}] {r['explanation']}\n"
                    f"    first in run {r['run']} (seed {r['seed']}), {r['hits']} failing run(s); "
                    f"{r.get('original_length')} choices, not shrunk: {r['not_shrunk']}"
                    + "".join(f"\n    agent stderr: {line}" for line in r.get("stderr_tail", ()))
                    + f"\n    files: {', '.join(r['files'].values())}"
                )
                continue
            lines.append(
                f"  {r['rule']} [{r['level']}] {r['explanation']}\n"
                f"    first in run {r['run']} (seed {r['seed']}), {r['hits']} failing run(s); shrunk "
                f"{r.get('original_length')} -> {r.get('shrunk_length')} choices, reproduced "
                f"{r.get('reproduced')}/{r.get('replays')}"
                + (
                    f" (nondeterministic: the original failed {r.get('original_reproduced')}/"
                    f"{r.get('original_replays')} replays, {r.get('runs_per_candidate')} run(s) per "
                    f"candidate, {r.get('undone')} reduction(s) undone)"
                    if r.get("nondeterministic")
                    else ""
                )
                + f"\n    files: {', '.join(r['files'].values())}"
            )
        sys.stdout.write("\n".join(lines) + "\n")
    return code


def drive_seed(job: tuple[list[str], Settings, int]) -> RunResult:
    """One run of the Agent ``command`` with the choices of ``seed``, in a fresh Agent process
    (a job of the worker pool: ``simulator.workers``)."""
    command, settings, seed = job
    return run_once(_peer_factory(command)(), settings, seed=seed)


def _take_run(
    args: argparse.Namespace,
    command: list[str],
    settings: Settings,
    make_peer: Any,
    out: Path,
    i: int,
    result: RunResult,
    runs: list[RunResult],
    rules: dict[str, dict[str, Any]],
) -> None:
    """Report run ``i`` and shrink the first failing run of each rule it is the first to break
    (in this process, while the pool plays the next runs)."""
    seed = args.seed + i
    runs.append(result)
    status = ", ".join(result.rules) if result.failing else "no findings"
    if not args.json:
        _progress(
            f"run {i + 1}/{args.runs} (seed {seed}): {len(result.choices)} choices, "
            f"{result.messages} agent messages, {result.stop}: {status} ({result.seconds:.2f} s)"
        )
    for rule in result.rules:
        if rule in rules:
            rules[rule]["hits"] += 1
            continue
        first = next(f for f in result.failing if f.rule == rule)
        if first.kind == "input" and first.line in result.unparsed:
            first = replace(first, explanation=first.explanation + UNPARSED_NOTE)
        if not args.json:
            _progress(f"  {finding_text('run', first)}")
            for line in result.stderr_tail if rule == CRASHED else ():
                _progress(f"    agent stderr: {line}")
        shrunk = not_shrunk(result)
        if shrunk is None:
            if not args.json:
                _progress(f"  shrinking {rule} from {len(result.choices)} choices ...")
            shrunk = shrink_run(
                make_peer,
                settings,
                rule,
                result.choices,
                budget=args.shrink_budget,
                progress=None if args.json else lambda text: _progress(f"    {text}"),
            )
        shown = shrunk.result if shrunk.result is not None else result
        stem = f"seed{seed}-{_safe(rule)}"
        about = {"rule": rule, "seed": seed, "command": command}
        files = write_failure(out, stem, shown, about)
        entry = _report_rule(rule, first, i + 1, seed, shrunk, files)
        if rule == CRASHED:
            entry.update(agent_status=result.crashed, stderr_tail=result.stderr_tail)
        entry["hits"] = 1
        rules[rule] = entry
        if not args.json:
            _progress(
                f"  {rule}: not shrunk ({shrunk.skipped}); {files['script']}"
                if shrunk.skipped
                else f"  {rule}: {len(result.choices)} -> {len(shrunk.choices)} choices, reproduced "
                f"{shrunk.reproduced}/{shrunk.replays} replays; {files['script']}"
            )


def _replay(args: argparse.Namespace, settings: Settings, make_peer: Any, out: Path, started: float) -> int:
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
    result = run_once(make_peer(), settings, script=script)
    code = EXIT_FINDINGS if result.failing else EXIT_OK
    report = {
        "script": path,
        "choices": len(result.choices),
        "messages": result.messages,
        "stop": result.stop,
        "agent": result.ended,
        "seconds": round(time.monotonic() - started, 3),
        "findings": [_finding_json(f) for f in result.findings if f.kind != "open"],
        "failing_rules": result.rules,
        "exit_code": code,
    }
    if args.json:
        sys.stdout.write(dumps(report))
    else:
        lines = [
            f"acp-model drive --replay {path}: {len(result.choices)} choices, {result.messages} agent "
            f"messages, {result.stop}; agent {result.ended}"
        ]
        lines += [
            f"  {finding_text('replay', f, result.unparsed)}" for f in result.findings if f.kind != "open"
        ]
        lines.append(f"  failing rules: {', '.join(result.rules) or 'none'}")
        sys.stdout.write("\n".join(lines) + "\n")
    return code
