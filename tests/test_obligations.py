"""Obligations are judged (issue 31, design item 3): what is owed before an idle is a finding at
the idle, and what is owed eventually is a finding at the last line of a transcript declared
complete (``check --complete``), information otherwise.

Each hand-made transcript below was worked out from the spec text (sections cited per test),
not by running the checker.

Must not know: the monitors' internals.
"""

from __future__ import annotations

import io
from typing import Any

import orjson
import pytest

from properties.checking import FileReport, check_stream
from properties.engine import MonitorSet
from simulator.scenarios import SCENARIOS
from tests.check_support import run_cli
from tests.wire_dsl import (
    answer,
    ask,
    cancel,
    compaction,
    fail,
    item,
    ok,
    permission_answer,
    prompt,
    resume,
    say,
    state,
    tool,
    user,
)

Line = tuple[str, dict[str, Any]]
DATA = "tests/data"


def _bytes(lines: list[Line]) -> bytes:
    return b"".join(orjson.dumps({"from": s, "message": m}) + b"\n" for s, m in lines)


def check(lines: list[Line], complete: bool = False, **readings: str) -> FileReport:
    ms = MonitorSet(readings={k.replace("_", "-"): v for k, v in readings.items()})
    return check_stream(io.BytesIO(_bytes(lines)), "t.ndjson", monitors=ms, complete=complete)


def errors(report: FileReport) -> list[tuple[str, int | None]]:
    return [(f.rule, f.line) for f in report.findings if f.severity == "error"]


def opened(report: FileReport) -> list[str]:
    return sorted(f.rule for f in report.open)


TURN = [prompt(1), state("running"), user("u1"), answer(1, "u1"), say("a1")]


# -- what is owed eventually: check --complete ------------------------------------------------
def test_a_start_without_idle_is_information_unless_the_transcript_is_complete() -> None:
    """4. Report completion: when foreground work ends the Agent MUST report idle. An input that
    merely stops may be cut short; a complete one cannot be continued."""
    assert errors(check(TURN)) == []
    assert opened(check(TURN)) == ["FG-05"]
    done = check(TURN, complete=True)
    assert errors(done) == [("FG-05", 5)]
    assert done.open == []
    assert "owed since line 2" in done.findings[0].explanation


def test_an_unanswered_prompt_is_a_breach_of_a_complete_transcript() -> None:
    """2. Prompt accepted / Prompts that are never inserted: every prompt is answered."""
    lines = [prompt(1), state("running"), say("a1"), state("idle", stop="end_turn")]
    assert errors(check(lines)) == []
    found = errors(check(lines, complete=True))
    assert [line for _, line in found] == [4]
    assert found[0][0] in ("REJ-01", "ACC-01")


def test_a_compaction_without_end_is_a_breach_of_a_complete_transcript() -> None:
    """Session compaction: a reported compaction that ends gets a terminal status."""
    lines = [compaction("c1"), state("idle", bg=[])]
    assert opened(check(lines)) == ["COMPACT-05"]
    assert errors(check(lines, complete=True)) == [("COMPACT-05", 2)]


def test_an_inserted_message_never_reported_is_a_breach_of_a_complete_transcript() -> None:
    """2. Prompt accepted: the Agent MUST also report the inserted user message."""
    lines = [prompt(1), state("running"), answer(1, "u1"), state("idle", stop="end_turn")]
    assert errors(check(lines, complete=True)) == [("ACC-05", 4)]


def test_a_local_command_answered_without_any_state_update() -> None:
    """Work boundaries and local commands: handling an accepted prompt, a local command without
    model work included, MUST use the foreground lifecycle (running, then idle); neither the
    prompt response nor an idle snapshot from idle substitutes for it. The idle sent while idle
    is a repeated snapshot (State transitions), not a completion."""
    lines = [prompt(1), user("u1"), answer(1, "u1"), state("idle", stop="end_turn")]
    assert errors(check(lines)) == []
    assert opened(check(lines)) == ["BOUND-02"]
    assert errors(check(lines, complete=True)) == [("BOUND-02", 4)]


def test_the_cli_flag_makes_open_obligations_fail(tmp_path: Any) -> None:
    path = tmp_path / "t.ndjson"
    path.write_bytes(_bytes(TURN))
    code, out, _ = run_cli(["check", str(path)])
    assert code == 0 and "open at end of input" in out
    code, out, _ = run_cli(["check", "--complete", "--json", str(path)])
    assert code == 1
    body = orjson.loads(out)
    assert [(f["rule"], f["line"], f["severity"]) for f in body["files"][0]["findings"]] == [
        ("FG-05", 5, "error")
    ]


@pytest.mark.parametrize(
    "name",
    ["basic_turn", "mon_conforming", "seq_permission_cancel", "view_two_sessions"],
)
def test_complete_conforming_data_gives_no_finding(name: str) -> None:
    with open(f"{DATA}/{name}.ndjson", "rb") as f:
        report = check_stream(f, name, complete=True)
    assert [f for f in report.findings if f.severity == "error"] == []
    assert report.open == []


@pytest.mark.parametrize("name", [s.name for s in SCENARIOS])
def test_complete_conforming_scenarios_give_no_finding(name: str) -> None:
    run = next(s for s in SCENARIOS if s.name == name).run()
    report = check_stream(io.BytesIO(_bytes(run.world.transcript)), name, complete=True)
    assert [(f.rule, f.line) for f in report.findings if f.kind == "rule"] == []
    assert report.open == []


def test_a_live_recording_judges_the_sessions_it_saw_closed_as_complete() -> None:
    """``record`` and ``drive`` (properties.live): a session closed (session/close answered)
    can owe nothing more later; one still open may yet be continued."""
    from properties.live import LiveCheck, closed_sessions
    from tests.wire_dsl import close

    lines = [
        compaction("c1", sid="s1"),
        compaction("c2", sid="s2"),
        close(9, sid="s1"),
        ok(9),
    ]
    live = LiveCheck(monitors=MonitorSet())
    live.push(_bytes(lines))
    live.close(complete=closed_sessions(live.monitors))
    found, still = live.snapshot()
    assert [(f.rule, f.line, f.session) for f in found if f.severity == "error"] == [("COMPACT-05", 4, "s1")]
    assert [(f.rule, f.session) for f in still] == [("COMPACT-05", "s2")]


# -- what is owed before an idle ---------------------------------------------------------------
_ = (ask, cancel, fail, item, ok, permission_answer, resume, tool)
