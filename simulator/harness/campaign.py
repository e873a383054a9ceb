"""A campaign of runs against a real Agent (``acp-model drive``): K seeds, each failing rule
reported once, shrunk, and written down.

Owns: ``Campaign`` (what to run: the Agent's command, the run settings, the seeds, where the
files go, the shrinking budget), ``campaign`` (the runs as jobs of a worker pool, in seed order,
then per rule the first run that broke it shrunk in this process and its files written: the
transcript ``.ndjson``, a sequence diagram ``.mmd`` and the replayable client script
``.script.json``, atomically), ``play`` (one run: a seed's, or a client script played once:
``drive --replay``) and the JSON and text reports of both (the text says which findings are of a
client rule the driver breaks on purpose: not the Agent's). Run i draws its choices with seed
``seed + i``, each with a fresh Agent process; a run the Agent crashed in, or one that failed
before any choice, is not shrunk (``not_shrunk``).
Everything but the ``seconds`` is the same for the same options, whatever the pool, when the
Agent moves in the driver's turns (``lockstep``, as ``acp-model agent`` does); an Agent that
does not may make the same seeds run differently (the text report says so).

Must not know: argument parsing, exit codes, how a sequence diagram is drawn (the caller hands
in ``Campaign.draw``), how a run is played (``simulator.harness.drive``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from properties.check_report import finding_text
from properties.findings import Finding
from properties.outputs import write_atomic
from simulator.harness.child import ProcessPeer
from simulator.harness.drive import CRASHED, RunResult, run_once, transcript_item
from simulator.harness.drive_shrink import Shrunk, not_shrunk, shrink_run
from simulator.harness.settings import Settings
from simulator.peers.driver_client import CLIENT_RULES_ON_PURPOSE, Choice, script_json
from simulator.workers import Workers

Say = Callable[[str], None]
NOT_LOCKSTEP = "the agent did not move in the driver's turns: its timing may change what the same seeds find"


@dataclass(frozen=True)
class Campaign:
    command: list[str]
    settings: Settings
    seed: int
    runs: int
    out: Path
    shrink_budget: Any
    draw: Callable[[list[Any], str | None], str]
    """A transcript's items and a title -> a sequence diagram (Mermaid text)."""
    say: Say | None = None
    """Progress lines (None: silent, as with ``--json``)."""


def play(job: tuple[list[str], Settings, int | None, list[Choice] | None]) -> RunResult:
    """One run of the Agent ``command`` in a fresh Agent process: the choices of ``seed`` (a job of
    the worker pool: ``simulator.workers``), or the client ``script`` played once (``drive
    --replay``)."""
    command, settings, seed, script = job
    return run_once(ProcessPeer(command), settings, seed=seed, script=script)


def campaign(c: Campaign, pool: Workers) -> tuple[list[RunResult], dict[str, dict[str, Any]]]:
    """Every run, and per failing rule its report (sorted by rule when shown)."""
    runs: list[RunResult] = []
    rules: dict[str, dict[str, Any]] = {}
    jobs = [(c.command, c.settings, c.seed + i, None) for i in range(c.runs)]
    for i, result in enumerate(pool.map(play, jobs)):
        runs.append(result)
        _take_run(c, i, result, rules)
    return runs, rules


def write_failure(c: Campaign, stem: str, result: RunResult, about: dict[str, Any]) -> dict[str, str]:
    """The transcript, its sequence diagram and the client script of one run."""
    files = {
        "transcript": str(c.out / f"{stem}.ndjson"),
        "diagram": str(c.out / f"{stem}.mmd"),
        "script": str(c.out / f"{stem}.script.json"),
    }
    write_atomic(files["transcript"], b"".join(result.lines))
    items = [item for item in (transcript_item(line) for line in result.lines) if item is not None]
    write_atomic(files["diagram"], c.draw(items, about.get("rule")))
    write_atomic(files["script"], script_json(result.choices, **about))
    return files


def _safe(rule: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in rule)


def _take_run(c: Campaign, i: int, result: RunResult, rules: dict[str, dict[str, Any]]) -> None:
    """Report run ``i`` and shrink the first failing run of each rule it is the first to break
    (in this process, while the pool plays the next runs)."""
    say = c.say or (lambda text: None)
    seed = c.seed + i
    status = ", ".join(result.rules) if result.failing else "no findings"
    say(
        f"run {i + 1}/{c.runs} (seed {seed}): {len(result.choices)} choices, "
        f"{result.messages} agent messages, {result.stop}: {status} ({result.seconds:.2f} s)"
    )
    for rule in result.rules:
        if rule in rules:
            rules[rule]["hits"] += 1
            continue
        first = next(f for f in result.failing if f.rule == rule)
        say(f"  {finding_text('run', first)}")
        for line in result.stderr_tail if rule == CRASHED else ():
            say(f"    agent stderr: {line}")
        shrunk = not_shrunk(result)
        if shrunk is None:
            say(f"  shrinking {rule} from {len(result.choices)} choices ...")
            shrunk = shrink_run(
                lambda: ProcessPeer(c.command),
                c.settings,
                rule,
                result.choices,
                budget=c.shrink_budget,
                progress=None if c.say is None else lambda text: say(f"    {text}"),
            )
        shown = shrunk.result if shrunk.result is not None else result
        about = {"rule": rule, "seed": seed, "command": c.command}
        files = write_failure(c, f"seed{seed}-{_safe(rule)}", shown, about)
        entry = rule_report(rule, first, i + 1, seed, shrunk, files)
        if rule == CRASHED:
            entry.update(agent_status=result.crashed, stderr_tail=result.stderr_tail)
        entry["hits"] = 1
        rules[rule] = entry
        say(
            f"  {rule}: not shrunk ({shrunk.skipped}); {files['script']}"
            if shrunk.skipped
            else f"  {rule}: {len(result.choices)} -> {len(shrunk.choices)} choices, reproduced "
            f"{shrunk.reproduced}/{shrunk.replays} replays; {files['script']}"
        )


def rule_report(
    rule: str, first: Finding, run_no: int, seed: int, shrunk: Shrunk, files: dict[str, str]
) -> dict[str, Any]:
    """The JSON of one failing rule: where it was first broken, how its run shrank, its files."""
    data: dict[str, Any] = {
        "rule": rule,
        "level": first.level,
        "severity": first.severity,
        "explanation": first.explanation,
        "run": run_no,
        "seed": seed,
        "original_length": len(shrunk.original),
        "shrunk_length": len(shrunk.choices),
        "reproduced": shrunk.reproduced,
        "replays": shrunk.replays,
        "shrink_runs": shrunk.runs,
        "nondeterministic": shrunk.nondeterministic,
        "original_replays": shrunk.checks,
        "original_reproduced": shrunk.checked,
        "runs_per_candidate": shrunk.per_candidate,
        "undone": shrunk.undone,
    }
    if shrunk.skipped:
        data["not_shrunk"] = shrunk.skipped
    data["files"] = files
    return data


def campaign_report(
    c: Campaign, runs: list[RunResult], rules: dict[str, dict[str, Any]], seconds: float, exit_code: int
) -> dict[str, Any]:
    """The JSON of a campaign: its runs, and each failing rule's report (sorted by rule)."""
    return {
        "command": c.command,
        "runs": len(runs),
        "messages": sum(r.messages for r in runs),
        "seconds": round(seconds, 3),
        "findings": [rules[r] for r in sorted(rules)],
        "fail_on": c.settings.fail_on,
        "exit_code": exit_code,
        "lockstep": bool(runs) and all(r.lockstep for r in runs),
    }


def campaign_text(report: dict[str, Any], seconds: float) -> str:
    """The text form of a campaign's report."""
    findings = report["findings"]
    lines = [
        f"acp-model drive: {report['runs']} runs, {report['messages']} agent messages, "
        f"{seconds:.1f} s; findings: {len(findings) or 'none'}"
    ]
    if report["runs"] and not report["lockstep"]:
        lines.append(f"  {NOT_LOCKSTEP}")
    for r in findings:
        if r.get("not_shrunk"):
            how = f"{r.get('original_length')} choices, not shrunk: {r['not_shrunk']}" + "".join(
                f"\n    agent stderr: {line}" for line in r.get("stderr_tail", ())
            )
        else:
            how = (
                f"shrunk {r.get('original_length')} -> {r.get('shrunk_length')} choices, reproduced "
                f"{r.get('reproduced')}/{r.get('replays')}"
            )
            if r.get("nondeterministic"):
                how += (
                    f" (nondeterministic: the original failed {r.get('original_reproduced')}/"
                    f"{r.get('original_replays')} replays, {r.get('runs_per_candidate')} run(s) per "
                    f"candidate, {r.get('undone')} reduction(s) undone)"
                )
        lines.append(
            f"  {r['rule']} [{r['level']}] {r['explanation']}\n"
            f"    first in run {r['run']} (seed {r['seed']}), {r['hits']} failing run(s); {how}\n"
            f"    files: {', '.join(r['files'].values())}"
        )
    return "\n".join(lines) + "\n"


def replay_report(path: str, result: RunResult, seconds: float, exit_code: int) -> dict[str, Any]:
    """The JSON of one client script played once (``drive --replay``)."""
    return {
        "script": path,
        "choices": len(result.choices),
        "messages": result.messages,
        "stop": result.stop,
        "agent": result.ended,
        "seconds": round(seconds, 3),
        "findings": [f.to_json() for f in result.findings if f.kind != "open"],
        "failing_rules": result.rules,
        "exit_code": exit_code,
        "lockstep": result.lockstep,
    }


def _on_purpose(f: Finding) -> str:
    """What the text adds to a finding of a client rule the driver breaks on purpose
    (``CLIENT_RULES_ON_PURPOSE``: never a failing one): it is not the Agent's."""
    if f.rule in CLIENT_RULES_ON_PURPOSE and f.kind == "rule":
        return " (the driver breaks this client rule on purpose: not a finding against the Agent)"
    return ""


def replay_text(path: str, result: RunResult) -> str:
    """The text form of a replay's report."""
    lines = [
        f"acp-model drive --replay {path}: {len(result.choices)} choices, {result.messages} agent "
        f"messages, {result.stop}; agent {result.ended}"
    ]
    lines += [f"  {finding_text('replay', f)}{_on_purpose(f)}" for f in result.findings if f.kind != "open"]
    lines.append(f"  failing rules: {', '.join(result.rules) or 'none'}")
    return "\n".join(lines) + "\n"
