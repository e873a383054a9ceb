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
from simulator.peers.scenarios import SCENARIOS
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
    assert body["files"][0]["complete"] is True
    code, out, _ = run_cli(["check", "--complete", str(path)])
    assert code == 1 and "judged complete (--complete)" in out


@pytest.mark.parametrize(
    "name",
    ["basic_turn", "mon_conforming", "seq_permission_cancel", "view_two_sessions"],
)
def test_complete_conforming_data_gives_no_finding(name: str) -> None:
    with open(f"{DATA}/{name}.ndjson", "rb") as f:
        report = check_stream(f, name, complete=True)
    assert [f for f in report.findings if f.severity == "error"] == []


@pytest.mark.parametrize("name", [s.name for s in SCENARIOS])
def test_complete_conforming_scenarios_give_no_finding(name: str) -> None:
    run = next(s for s in SCENARIOS if s.name == name).run()
    report = check_stream(io.BytesIO(_bytes(run.world.transcript)), name, complete=True)
    assert [(f.rule, f.line) for f in report.findings if f.kind == "rule"] == []


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


def test_complete_conforming_walks_give_no_error() -> None:
    """Seeded walks of the conforming simulator, drained to quiescence (nothing more can
    happen): their transcripts are complete, and --complete finds no breach in them."""
    from simulator.peers.config import DEFAULT
    from simulator.peers.schedulers import random_walk

    for seed in range(40):
        run = random_walk(seed, 60, DEFAULT, frozenset(), None)
        assert run.world.quiescent()
        report = check_stream(io.BytesIO(_bytes(run.world.transcript)), f"seed {seed}", complete=True)
        assert [(f.rule, f.line) for f in report.findings if f.severity == "error"] == [], seed


# -- what is owed before an idle ---------------------------------------------------------------
CANCELLED_TURN = [*TURN[:4], tool("t1", "in_progress"), cancel()]


def test_a_cancelled_idle_that_leaves_a_foreground_tool_call_running_is_a_breach_there() -> None:
    """Cancellation: the Agent gives the unfinished tool calls of the cancelled work (all but
    those in the latest background list or referencing a listed terminal) their final status,
    and sends the idle confirming the cancellation after every ongoing operation was aborted
    and the pending updates were sent. An idle that leaves one in progress breaks CANCEL-17 at
    that idle, complete transcript or not. The idle's background list (empty) says t1 is not
    background work."""
    lines = [*CANCELLED_TURN, state("idle", stop="cancelled", bg=[])]
    report = check(lines)
    assert errors(report) == [("CANCEL-17", 7)]
    assert report.findings[0].readings == ("unlisted-tool-at-cancelled-idle",)
    assert report.open == []
    assert errors(check(lines, unlisted_tool_at_cancelled_idle="may-be-background")) == []
    finished = [*CANCELLED_TURN, tool("t1", "cancelled"), state("idle", stop="cancelled", bg=[])]
    assert errors(check(finished, complete=True)) == []


def test_a_suspect_kept_only_by_the_reading_names_it() -> None:
    """Under may-be-background the idle's empty list does not settle t1: a suspect, a breach of a
    complete transcript that names both readings its verdict depends on; so does a suspect no
    list ruled on (under every-unlisted it is a breach at the idle instead)."""
    ruled = [*CANCELLED_TURN, state("idle", stop="cancelled", bg=[])]
    found = check(ruled, complete=True, unlisted_tool_at_cancelled_idle="may-be-background").findings
    assert [(f.rule, f.readings) for f in found if f.severity == "error"] == [
        ("CANCEL-17", ("tool-updates-after-idle", "unlisted-tool-at-cancelled-idle"))
    ]
    unruled = [*CANCELLED_TURN, state("idle", stop="cancelled")]
    found = check(unruled, complete=True).findings
    assert [(f.rule, f.line, f.readings) for f in found if f.severity == "error"] == [
        ("CANCEL-17", 7, ("tool-updates-after-idle", "unlisted-tool-at-cancelled-idle"))
    ]
    strict = check(unruled, unlisted_tool_at_cancelled_idle="every-unlisted")
    assert errors(strict) == [("CANCEL-17", 7)]
    assert "no background list has named it since its first report" in strict.findings[0].explanation


def test_a_list_reported_after_the_tool_call_rules_on_it() -> None:
    """A concrete list reported after t1's first report (here while running) leaves it out: it is
    not background work, so the idle without a list (BG-07 as well: once a list was reported,
    every state_update carries one) still owes its final status."""
    lines = [*CANCELLED_TURN[:5], state("running", bg=[]), cancel(), state("idle", stop="cancelled")]
    assert sorted(errors(check(lines))) == [("BG-07", 8), ("CANCEL-17", 8)]


def test_a_tool_call_no_list_ruled_on_is_owed_by_the_end() -> None:
    """Background work: the Agent sends a background tool call before the first list that names
    it, and with no list reported a Client may treat nothing as abandoned. So at an idle without
    a list, t1 (never listed) may still be background work announced early: nothing certain at
    the idle; if it never gets a final status nor a list, a complete transcript breaks CANCEL-17
    at its last line."""
    lines = [*CANCELLED_TURN, state("idle", stop="cancelled")]
    assert errors(check(lines)) == []
    assert opened(check(lines)) == ["CANCEL-17"]
    assert errors(check(lines, complete=True)) == [("CANCEL-17", 7)]
    listed_later = [*lines, state("idle", bg=[item("tool_call", "t1")])]
    assert errors(check(listed_later, complete=True)) == []


@pytest.mark.parametrize(
    "listed",
    [
        [state("idle", stop="cancelled", bg=[item("tool_call", "t1")])],
        [state("running", bg=[item("tool_call", "t1")]), state("idle", stop="cancelled", bg=None)],
    ],
)
def test_a_tool_call_in_the_latest_background_list_is_not_of_the_cancelled_work(listed: list[Line]) -> None:
    """Cancellation: work in the latest background list is not covered and keeps running (the
    idle's own list when it carries one, else the last one reported)."""
    found = errors(check([*CANCELLED_TURN, *listed]))
    assert "CANCEL-17" not in [rule for rule, _ in found]


def test_under_when_acted_an_idle_with_the_works_own_reason_is_no_confirmation() -> None:
    """cancel-takes-effect=when-acted: the work may have ended before the cancel was acted on,
    so an end_turn idle after the cancel does not confirm it (nothing is owed at it)."""
    lines = [*CANCELLED_TURN, state("idle", stop="end_turn")]
    assert "CANCEL-17" not in [r for r, _ in errors(check(lines, cancel_takes_effect="when-acted"))]


def test_a_tool_call_approved_under_requires_action_that_completes_needs_running() -> None:
    """3. Agent reports output / Waiting for user action: once requires_action is reported, the
    Agent MUST report running when progress resumes. A tool call first seen in a permission
    request's subject (the Client applies it like a tool_call_update) is approved and then
    completes: the tool ran, so the blocked work progressed, without running being reported.
    (That it was not marked in_progress first is TOOL-04, a SHOULD: a warning.)"""
    lines = [
        *TURN[:4],
        ask("p1", "t1"),
        state("requires_action"),
        permission_answer("p1", "allow"),
        tool("t1", "completed"),
        state("idle", stop="end_turn"),
    ]
    report = check(lines)
    assert errors(report) == [("FG-04", 8)]
    assert [f.rule for f in report.findings if f.severity == "warning"] == ["TOOL-04"]
    resumed = [*lines[:7], state("running"), tool("t1", "completed"), state("idle", stop="end_turn")]
    assert errors(check(resumed, complete=True)) == []


def test_a_tool_call_that_fails_after_a_refusal_is_no_progress() -> None:
    """Waiting for user action: declining may lead to a fallback or completion without resuming."""
    lines = [
        *TURN[:4],
        ask("p1", "t1"),
        state("requires_action"),
        permission_answer("p1", "deny"),
        tool("t1", "failed"),
        state("idle", stop="end_turn"),
    ]
    assert errors(check(lines, complete=True)) == []


def test_the_answer_of_a_covered_prompt_is_owed_by_the_end_not_before_the_idle() -> None:
    """Cancellation: the Agent MUST answer the prompts a cancel covers with -32800; 2. Prompt
    accepted: a prompt's response has no fixed order relative to the session updates, the idle
    included. So an idle confirming the cancellation before that answer breaks nothing; a
    complete transcript without the answer does (at its last line)."""
    lines = [*TURN[:4], prompt(2), cancel(), state("idle", stop="cancelled", bg=[])]
    assert errors(check(lines)) == []
    assert opened(check(lines)) == ["REJ-01"]
    assert errors(check(lines, complete=True)) == [("REJ-01", 7)]
    answered = [*lines, fail(2, -32800)]
    assert errors(check(answered, complete=True)) == []


# -- resume windows ------------------------------------------------------------------------------
def test_a_compaction_that_starts_and_completes_inside_a_resume_window_has_ended() -> None:
    """Session compaction / Initial state and synchronization: replayed history re-sends updates
    of entities known before the resume; a compaction first seen in the window and completed
    before the resume response has completed, whether replayed or live."""
    lines = [resume(7), compaction("c1"), compaction("c1", "completed"), state("idle"), ok(7)]
    report = check(lines, complete=True)
    assert report.findings == []


def test_a_known_compaction_replayed_in_a_window_is_still_not_a_transition() -> None:
    """A compaction known before the window, re-sent in progress there, is history: no reopen."""
    known = [compaction("c1"), compaction("c1", "completed")]
    lines = [*known, resume(7), compaction("c1"), state("idle"), ok(7)]
    report = check(lines, complete=True)
    assert report.findings == []


def test_a_snapshot_before_the_requested_replay_of_unseen_messages() -> None:
    """Initial state and synchronization: the Agent sends the foreground snapshot after any
    requested history replay and before the resume response. A user message under an ID the
    checker never saw, after the snapshot, with no prompt left to insert, can only be replayed
    history (a live user message reports a prompt's insertion): SYNC-02 at the response, which
    no snapshot after it preceded."""
    lines = [resume(7), state("idle"), user("u9"), ok(7)]
    report = check(lines)
    assert errors(report) == [("SYNC-02", 4)]
    assert report.findings[0].readings == ("unaccounted-user-message", "resume-replay-window")
    assert errors(check(lines, resume_replay_window="known-ids")) == []
    assert errors(check(lines, unaccounted_user_message="other-sources")) == []
    in_order = [resume(7), user("u9"), state("idle"), ok(7)]
    assert errors(check(in_order, complete=True)) == []
    no_replay = [resume(7, replay=False), state("idle"), user("u9"), ok(7)]
    assert "SYNC-02" not in [r for r, _ in errors(check(no_replay))]


def test_a_pending_prompt_may_be_inserted_after_the_snapshot() -> None:
    """Prompts during active work: a prompt received before the resume may be inserted later;
    its user message after the snapshot is a live insertion, not replay."""
    lines = [prompt(1), resume(7), state("running"), user("u1"), answer(1, "u1"), ok(7)]
    assert "SYNC-02" not in [r for r, _ in errors(check(lines))]


def test_a_tool_call_first_seen_in_a_resume_window_keeps_its_updates_there() -> None:
    """t1 first appears inside the window and goes in_progress there: that update is live, so
    t1 was in progress when its permission was granted, and completing it breaks no TOOL-04
    (5. Tool invocation: in_progress after the grant, before completed)."""
    lines = [
        resume(7),
        tool("t1", "pending"),
        tool("t1", "in_progress"),
        state("running"),
        ok(7),
        ask("p1", "t1"),
        permission_answer("p1", "allow"),
        tool("t1", "completed"),
        state("idle", stop="end_turn"),
    ]
    assert [f.rule for f in check(lines, complete=True).findings] == []
