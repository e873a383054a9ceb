"""Small defects a user met (review51 A5, A6, A7; the docs helper's findings of stop 54), each pinned
by the behaviour the user sees."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from properties.engine import MonitorSet


def test_update_after_idle_updates_only_what_the_ended_work_reported() -> None:
    """review51 A6: the seeded bug of DONE-03 sends an update of the ended work after its idle
    (more of the message it began, or content of a tool call it finished), never output under a
    message ID the wire has not seen: that is new work to a Client (FG-01/FG-02), so ``drive``
    found the bug under rules it does not break. Every finding of its walks is DONE-03 or, after
    a cancel, CANCEL-14 (``Rules.late_update``)."""
    from properties.seeded import BY_NAME
    from simulator.analysis.mutants import Mutant, sample

    mutant = Mutant(BY_NAME["update-after-idle"])
    rules: set[str] = set()
    for _, _, make in sample((), mutant.switched_on, mutant.cfg, 60, 60, monitors=MonitorSet):
        run = make()
        rules |= {f.rule for f in run.findings if f.kind == "rule"}
    assert "DONE-03" in rules
    assert rules <= {"DONE-03", "CANCEL-14"}, rules


def test_drive_finds_update_after_idle_by_its_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """review51 A6 as the user met it: ``drive -- acp-model agent --fault update-after-idle``
    (in process, as tests/test_drive.py runs it; seed 17 is the run of ``--seed 0 --runs 30`` that
    breaks it) reports DONE-03, the rule ``mutants --list`` names, and nothing else."""
    import json

    from cli.main import main
    from simulator.harness import campaign
    from tests.test_drive import _simulated_agent

    monkeypatch.setattr(campaign, "ProcessPeer", _simulated_agent)
    argv = ["drive", "--runs", "1", "--seed", "17", "--steps", "30", "--timeout", "0.05"]
    argv += ["--silence", "0.001", "--shrink-budget", "4", "--json", "--out", str(tmp_path)]
    assert main([*argv, "--", "acp-model", "agent", "--fault", "update-after-idle"]) == 1
    assert [f["rule"] for f in json.loads(capsys.readouterr().out)["findings"]] == ["DONE-03"]


def _said(*argv: str) -> list[str]:
    from cli import cmd_agent
    from cli.main import build_parser

    return cmd_agent.build(build_parser().parse_args(["agent", *argv]))[1]


def test_the_common_path_says_a_seeded_bug_it_never_takes_there() -> None:
    """review51 A7: docs/testing-clients.md, "With `--common-path` a seeded bug shows only where
    the common path goes: one about compactions ... never does"; the common path says so at the
    start, as the default mode says which bugs never show on the wire. A bug that shows there,
    and the same bug without --common-path, get no such note."""
    never = [
        line for line in _said("--common-path", "--fault", "compaction-never-ends") if "never showed" in line
    ]
    assert never == [
        "seeded bug compaction-never-ends never showed in 200 seeded runs of the common path (it "
        "needs a freedom the common path does not take): run it without --common-path"
    ]
    assert not [line for line in _said("--common-path", "--fault", "cancel-as-end-turn") if "never" in line]
    assert not [line for line in _said("--fault", "compaction-never-ends") if "never" in line]


def test_a_dropped_rule_whose_findings_were_set_aside_is_not_unexercised() -> None:
    """Stop 54's docs finding: ``explore --variant variants/no-background-list.toml --compare``
    listed BG-09 both as set aside and as not exercised. Its findings were set aside (the bug of
    BG-07, dropped with it, breaks it too), so the drop changed the runs: it is said once, as set
    aside."""
    from properties.variants import load
    from simulator.explore.compare import unexercised

    variant = load("variants/no-background-list.toml")
    base: dict[str, object] = {"coverage": {}, "variant": {"set_aside": []}}
    seen = {"coverage": {}, "variant": {"set_aside": ["BG-07", "BG-09"]}}
    assert unexercised(base, seen, variant) == []
    unseen = {"coverage": {}, "variant": {"set_aside": []}}
    assert [c["rule"] for c in unexercised(base, unseen, variant)] == ["BG-07", "BG-09"]


def test_drive_replay_says_the_drivers_own_client_breach_is_on_purpose() -> None:
    """Stop 54's docs finding: ``drive --replay`` printed the driver's own USER-03 (its image
    prompts, unadvertised on purpose) as a plain ``[error]`` line beside the Agent's findings.
    The line now says it is the driver's, on purpose; the JSON keeps its shape."""
    from properties.findings import Finding
    from simulator.harness.campaign import replay_report, replay_text
    from simulator.harness.drive import RunResult

    own = Finding("USER-03", "MUST", 16, "sess_1", "prompt content of type image was not allowed")
    agents = Finding("CANCEL-14", "MUST", 36, "sess_1", "agent_message_chunk after the idle")
    result = RunResult(findings=[own, agents], failing=[agents], stop="finding", ended="exit code 0")
    lines = replay_text("s.json", result).splitlines()
    assert lines[1].endswith(
        "USER-03 (MUST) [error] prompt content of type image was not allowed "
        "(the driver breaks this client rule on purpose: not a finding against the Agent)"
    )
    assert lines[2].endswith("after the idle") and lines[3] == "  failing rules: CANCEL-14"
    report = replay_report("s.json", result, 1.0, 1)
    assert [f["rule"] for f in report["findings"]] == ["USER-03", "CANCEL-14"]
    assert set(report["findings"][0]) == set(agents.to_json())


def test_the_readme_record_example_sends_what_the_schema_accepts(tmp_path: Path) -> None:
    """Stop 54's docs finding: README's ``record`` example sent an ``initialize`` without
    ``info`` (required by the schema's InitializeRequest), which ``check --schema`` reported. Its
    lines, recorded in front of the simulated Agent as the example does, now check clean."""
    from cli.main import main
    from tests.check_support import REPO, schema_path

    schema = schema_path()
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```sh\n(.*?)```", readme, re.S) if "| acp-model record" in b]
    sent = "".join(f"{line}\n" for line in re.findall(r"'(\{.*?\})'", block))
    assert sent.count("\n") == 2
    out = tmp_path / "capture.ndjson"
    cli = [sys.executable, "-m", "cli"]
    done = subprocess.run(
        [*cli, "record", "--out", str(out), "--", *cli, "agent"],
        input=sent, capture_output=True, text=True, timeout=120, cwd=REPO,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert main(["check", "--schema", str(schema), "--json", str(out)]) == 0


@pytest.mark.parametrize(
    "argv",
    [
        ["agent", "--bogus"],
        ["agent", "--seed", "x"],
        ["check", "--fail-on", "never", "x.ndjson"],
        ["drive", "--runs", "0", "--", "true"],
        ["explore", "--depth", "x"],
    ],
)
def test_an_argparse_error_of_any_command_is_one_line(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """review51 A5 (fixed in 7ae3fe5; agent was not among the commands tested): one line on
    standard error, nothing on standard output, exit 2; --help still prints the usage."""
    from cli.main import main

    with pytest.raises(SystemExit) as exit_:
        main(argv)
    out, err = capsys.readouterr()
    assert exit_.value.code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"acp-model {argv[0]}: error: "), err
    with pytest.raises(SystemExit) as exit_:
        main([argv[0], "--help"])
    assert exit_.value.code == 0 and capsys.readouterr().out.startswith(f"usage: acp-model {argv[0]} ")
