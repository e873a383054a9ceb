"""Session setup before prompts (INTRO-01) and one answer for every request at the end
(INTRO-02): cases found by the review of stop 46 (tests/data copies of its cases 77, 185, 165
and 174), worked out from the spec text (introduction: "Before sending prompts, Clients MUST
first complete the initialization phase and session setup") and the README's format contract
("Sessions are assumed initialized unless the transcript shows initialize / session/new /
session/resume").

Must not know: the monitors' internals.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson

from properties.checking import FileReport, check_stream
from tests.wire_dsl import (
    answer,
    ask,
    close,
    created,
    fail,
    initialize,
    initialized,
    new_session,
    ok,
    prompt,
    resume,
    state,
    subagent,
    user,
)

Line = tuple[str, dict[str, Any]]
DATA = Path(__file__).resolve().parent / "data"


def _check(data: bytes, complete: bool) -> FileReport:
    return check_stream(io.BytesIO(data), "t.ndjson", complete=complete)


def check(lines: list[Line], complete: bool = False) -> FileReport:
    return _check(b"".join(orjson.dumps({"from": s, "message": m}) + b"\n" for s, m in lines), complete)


def check_file(name: str, complete: bool = False) -> FileReport:
    return _check((DATA / name).read_bytes(), complete)


def errors(report: FileReport) -> list[tuple[str, int | None]]:
    return sorted((f.rule, f.line) for f in report.findings if f.severity == "error")


def opened(report: FileReport) -> list[tuple[str, int | None]]:
    return sorted((f.rule, f.line) for f in report.open)


HANDSHAKE = [initialize("i"), initialized("i")]


# -- INTRO-01: a prompt for a session nothing set up -------------------------------------------
def test_a_prompt_for_a_session_no_setup_created_is_intro_01() -> None:
    """The transcript starts with initialize, so it shows every session setup of the connection:
    a prompt for 'nope', which no session/new, session/fork or session/resume set up, was sent
    before that session's setup (review case 77)."""
    assert errors(check_file("setup_unset_session.ndjson")) == [("INTRO-01", 5)]


def test_a_stream_that_starts_later_assumes_its_sessions_set_up() -> None:
    """Without the initialize the transcript may start mid-connection: unchanged."""
    lines = [prompt(1, "nope"), fail(1, -32602)]
    assert errors(check(lines)) == []
    assert errors(check([new_session("n"), created("n"), *lines])) == []  # no initialize first


def test_sessions_set_up_by_fork_resume_or_a_child_announcement_may_be_prompted() -> None:
    fork = ("client", {"jsonrpc": "2.0", "id": "f", "method": "session/fork", "params": {"sessionId": "s1"}})
    forked = ok("f", sessionId="s2")
    ways: list[list[Line]] = [
        [new_session("n"), created("n", "s2")],
        [new_session("n"), created("n"), fork, forked],
        [resume("r", "s2", replay=False), state("idle", "s2"), ok("r")],
        [new_session("n"), created("n"), subagent("s2")],
    ]
    for setup in ways:
        assert errors(check([*HANDSHAKE, *setup, prompt(1, "s2"), fail(1, -32602)])) == [], setup


def test_a_failed_resume_sets_nothing_up() -> None:
    lines = [*HANDSHAKE, resume("r", "s2", replay=False), state("idle", "s2"), fail("r", -32602)]
    assert errors(check([*lines, prompt(1, "s2"), fail(1, -32602)])) == [("INTRO-01", 6)]


def test_a_setup_step_repeated_is_incomplete_until_answered() -> None:
    """Review48 case 147 (left as it is): a prompt inside the window of a session/resume of a
    session session/new set up on this connection precedes that setup's completion, as one sent
    while a repeated initialize is answered does (the latest one is authoritative): until the
    response the Client knows neither whether the resume succeeded nor the snapshot it "MUST use"
    (Initial state and synchronization). Once answered, prompts may follow."""
    opened = [*HANDSHAKE, new_session("n"), created("n")]
    window = [resume("r", replay=False), prompt(1), state("idle"), ok("r")]
    assert errors(check([*opened, *window, fail(1, -32602)])) == [("INTRO-01", 6)]
    after = [resume("r", replay=False), state("idle"), ok("r"), prompt(1), fail(1, -32602)]
    assert errors(check([*opened, *after])) == []
    again = [initialize("j"), prompt(1), initialized("j"), fail(1, -32602)]
    assert errors(check([*opened, *again])) == [("INTRO-01", 6)]


def test_a_prompt_before_setup_is_reported_once() -> None:
    """At its line (before the initialize was answered), not again at the session/new response
    that creates its session."""
    lines = [initialize("i"), prompt(1), initialized("i"), new_session("n"), created("n"), fail(1, -32602)]
    assert errors(check(lines)) == [("INTRO-01", 2)]


def test_a_prompt_before_an_initialize_that_follows_it_is_left_alone() -> None:
    """Review case 185: the transcript does not start with initialize, so it may start
    mid-connection (the spec text does not say the handshake happens once per connection):
    no finding."""
    assert errors(check_file("setup_prompt_before_late_initialize.ndjson", complete=True)) == []


# -- INTRO-02: requests never answered -----------------------------------------------------------
def test_an_unanswered_resume_or_close_is_open_then_a_breach_when_complete() -> None:
    """Each request gets exactly one response (review cases 165 and 174)."""
    assert opened(check_file("unanswered_resume.ndjson")) == [("INTRO-02", 12)]
    assert errors(check_file("unanswered_resume.ndjson", complete=True)) == [("INTRO-02", 13)]
    assert opened(check_file("unanswered_close.ndjson")) == [("INTRO-02", 10)]
    assert errors(check_file("unanswered_close.ndjson", complete=True)) == [("INTRO-02", 10)]


def test_requests_a_table_owes_an_answer_are_not_reported_twice() -> None:
    """A prompt never answered is the prompt table's (REJ-01); a permission request the user has
    not answered is the permission table's, which owes nothing from pending."""
    assert errors(check([prompt(1)], complete=True)) == [("REJ-01", 1)]
    pending = [
        prompt(1),
        state("running"),
        user("u1"),
        answer(1, "u1"),
        ask("p1", "tc1"),
        state("requires_action"),
    ]
    assert [r for r, _ in errors(check(pending, complete=True))] == ["FG-05"]
    assert errors(check([*HANDSHAKE, new_session("n"), created("n"), close(5), ok(5)], complete=True)) == []
