"""Every catalogued rule can be dropped in every command that simulates peers (issue 35, defect 1).

Dropping a rule switches on the seeded bug that breaks it (``simulator.explore.variant_runs``); a bug
that fires a forbidden cell used to look the cell's rule up in the variant's tables, where the
dropped rule no longer forbids it, and raised (``reopen-tool-call: the tool_call table allows run
in completed``). The fast sweep covers the eleven rules that crashed and a sample of the others
at tiny bounds (in process); the ``deep`` sweep covers the whole catalogue.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from properties.catalogue import RULES_BY_ID
from simulator.analysis.mutants import breaking
from simulator.workers import Workers

CRASHED = (
    "BG-05", "BG-10", "BG-11", "BG-17", "ACC-03", "ACC-13", "ACTIVE-03", "REJ-03", "COMPACT-03", "SYNC-02",
    "CANCEL-02",
)  # fmt: skip
"""The rules whose ``--drop`` raised a traceback before the fix."""
EVERY = tuple(sorted(RULES_BY_ID))
VIEW = ("BG-08",)
"""A client-view rule: the exhaustive search reported its view breaches though the rule was
dropped (``World`` set them aside, the search's ``State.compare`` did not)."""
SAMPLE = tuple(dict.fromkeys((*CRASHED, *VIEW, *EVERY[::17])))
TINY = ["--walks", "3", "--examples", "1", "--steps", "15", "--prompts", "1", "--tool-calls", "1",
        "--max-states", "400", "--quiet", "--json"]  # fmt: skip


def _run(args: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(args)
    return code, out.getvalue()


def _reported(report: dict[str, Any]) -> set[str]:
    return {f["rule"] for f in report["findings"]}


def _simulate_and_explore(rule: str, tmp_path: Path) -> None:
    transcript = str(tmp_path / "s.ndjson")
    code, _ = _run(["simulate", "--drop", rule, "--steps", "25", "--quiet", "--out", transcript])
    assert code == 0
    code, out = _run(["check", "--json", "--drop", rule, transcript])
    assert code in (0, 1) and rule not in {f["rule"] for f in json.loads(out)["files"][0]["findings"]}
    code, out = _run(["explore", "--drop", rule, "--mode", "both", *TINY, "--out", str(tmp_path / "e")])
    assert code in (0, 1), out
    report = json.loads(out)
    assert report["variant"]["drop"] == [rule] and rule not in _reported(report)
    labels = [b["label"] for b in report["variant"]["behaviours"]]
    assert labels == (["spec", "dropped"] if breaking(rule) is not None else ["spec"])
    assert any(s["name"].endswith("+dropped") for s in report["exhaustive"]["slices"]) == (len(labels) == 2)


def _compare(rule: str, tmp_path: Path) -> None:
    args = ["explore", "--drop", rule, "--compare", "--mode", "both", *TINY, "--out", str(tmp_path / "c")]
    code, out = _run(args)
    assert code in (0, 1), out
    body = json.loads(out)["compare"]
    assert rule not in body["variant"]["findings"]


def _agent(rule: str) -> None:
    from cli import cmd_agent
    from cli.main import build_parser
    from simulator.harness.drive import run_once
    from simulator.harness.settings import Settings
    from tests.scripted_client import TURN_TIMEOUT, InProcessPeer

    agent, _said = cmd_agent.build(build_parser().parse_args(["agent", "--drop", rule]))
    result = run_once(InProcessPeer(agent), Settings(steps=20, timeout=TURN_TIMEOUT), seed=1)
    assert result.messages > 0 and result.stop != "agent exited"  # the driver judges by the spec as written


@pytest.mark.parametrize("rule", SAMPLE)
def test_a_dropped_rule_runs_in_simulate_explore_and_agent(rule: str, tmp_path: Path) -> None:
    _simulate_and_explore(rule, tmp_path)
    _agent(rule)


@pytest.mark.parametrize("rule", CRASHED[::3])
def test_a_dropped_rule_runs_in_explore_compare(rule: str, tmp_path: Path) -> None:
    _compare(rule, tmp_path)


@pytest.mark.deep
@pytest.mark.parametrize("rule", EVERY)
def test_every_catalogued_rule_can_be_dropped(rule: str, tmp_path: Path) -> None:
    _simulate_and_explore(rule, tmp_path)
    _compare(rule, tmp_path)
    _agent(rule)


def test_a_dropped_rules_forbidden_cell_is_fired_and_marked_with_the_rule_as_written() -> None:
    """Under ``--drop BG-05`` the Agent reopens a completed tool call once (the seeded bug
    reopen-tool-call), marks BG-05 and moves as the bug does; the spec as written refuses it."""
    from properties.variants import from_drops
    from simulator.explore.variant_runs import added_faults
    from simulator.peers.agent import Agent
    from simulator.peers.config import SMALL

    variant = from_drops(["BG-05"])
    agent = Agent(SMALL.with_(variant=variant), added_faults(variant))
    agent.tools["tc_1"] = ("completed", False, None, None)
    assert ("agent", "tool_status", ("tc_1", "in_progress")) in agent.enabled()
    agent.do("tool_status", ("tc_1", "in_progress"))
    assert agent.marks == ("BG-05",) and agent.tools["tc_1"][0] == "in_progress"
    agent.tools["tc_1"] = ("completed", False, None, None)
    assert ("agent", "tool_status", ("tc_1", "in_progress")) not in agent.enabled()  # once is enough


def test_the_variants_doc_shows_what_simulate_says_under_drops(tmp_path: Path) -> None:
    """docs/variants.md's ``simulate --drop`` example is the command's real output."""
    doc = (Path(__file__).resolve().parent.parent / "docs" / "variants.md").read_text(encoding="utf-8")
    prompt = "$ acp-model simulate --drop ACTIVE-03 --drop BG-09 --drop CANCEL-02 --out v.ndjson\n"
    shown = doc[doc.index(prompt) + len(prompt) :].split("```", 1)[0].splitlines()
    out = tmp_path / "v.ndjson"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(
            ["simulate", "--drop", "ACTIVE-03", "--drop", "BG-09", "--drop", "CANCEL-02", "--out", str(out)]
        )
    assert code == 0
    assert buf.getvalue().replace(str(out), "v.ndjson").splitlines() == shown


def test_the_spec_report_of_a_variant_dropping_the_rules_that_crashed(tmp_path: Path) -> None:
    """``spec-report --drop`` crashed after its first parts (44 s) for the eleven rules; at tiny
    bounds the page is written, for the variant that drops them all."""
    from diagrams.spec_report import Options, build
    from properties.variants import from_drops

    opts = Options(tmp_path, rules=("BG-05", "CANCEL-02"), slices=("cancels",), walks=1, ladder=(),
                   pictures=False, matrix=(), pool=Workers(1), variant=from_drops(CRASHED))  # fmt: skip
    report = build(opts, lambda _: None)
    assert report["variant"]["drop"] == sorted(CRASHED)
    assert (tmp_path / "index.md").is_file() and (tmp_path / "report.json").is_file()
