"""A user message reported during foreground work the Agent started itself while a prompt waits,
and which unclaimed user message a finding names (review 46, section 3: cases 158, 171, 213,
copied to tests/data/own_work_message_*.ndjson).

"Foreground and background work": "Agent-initiated work does not require a session/prompt
request or a synthetic user message", so such work may report one; under the default reading
``unaccounted-user-message=agent-initiated`` that holds also when a prompt received during the
work waits (the prompt may still return the message's ID, and need not). Under ``prompt-only``
every live user message is counted against the waiting prompts, and a finding names a message
only once it is certain that no waiting prompt can claim it ("2. Prompt accepted": the response
returns the inserted message's messageId).

Must not know: the monitors' internals.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from model import between as bw
from tests.check_support import check_lines as check
from tests.wire_dsl import answer, fail, ok, prompt, resume, say, state, user

DATA = Path(__file__).resolve().parent / "data"


def _case(number: int, complete: bool, reading: str) -> list[tuple[str, int | None, str]]:
    """(rule, line, explanation) of the error findings of review case ``number``."""
    text = (DATA / f"own_work_message_{number}.ndjson").read_text()
    lines = [(one["from"], one["message"]) for one in map(json.loads, text.splitlines())]
    return _case_lines(lines, complete, reading)


@pytest.mark.parametrize("complete", [False, True])
@pytest.mark.parametrize("number", [158, 171])
def test_own_work_message_while_a_prompt_waits_is_no_breach_by_default(number: int, complete: bool) -> None:
    """Work started with no prompt waiting (line 10), prompt 2 (line 11), the Agent's own auto1
    and prompt 2's u2 in either order, then prompt 2 answered with u2: conforming."""
    assert _case(number, complete, "agent-initiated") == []


@pytest.mark.parametrize("complete", [False, True])
@pytest.mark.parametrize("number", [158, 171])
def test_under_prompt_only_the_finding_names_auto1_at_the_answer(number: int, complete: bool) -> None:
    """Not u2 at its report (main's finding for 158, whose next line returns u2), nor at auto1's
    report while prompt 2 might still take auto1 (171): auto1, at the answer returning u2."""
    [(rule, line, why)] = _case(number, complete, "prompt-only")
    assert (rule, line) == (bw.OWN_USER_MESSAGE.rule, 15)
    assert "'auto1'" in why and "'u2'" not in why


@pytest.mark.parametrize("complete", [False, True])
def test_rejecting_unadvertised_content_during_own_work_is_no_acc03(complete: bool) -> None:
    """Case 213: the Agent reports its own auto1 for work it started itself and rejects prompt 2
    (an image it never advertised) with -32602, as 1. User message requires: only the Client's
    USER-03, no ACC-03 (the default); under prompt-only auto1 is evidence that prompt 2 was
    inserted (ACC-03)."""
    assert [(r, n) for r, n, _ in _case(213, complete, "agent-initiated")] == [("USER-03", 11)]
    assert sorted((r, n) for r, n, _ in _case(213, complete, "prompt-only")) == [
        ("ACC-03", 13),
        ("USER-03", 11),
    ]


_PROMPTED = [state("idle"), prompt(1), answer(1, "u1"), state("running"), user("u1")]
"""A prompt's work: received while idle and inserted before its work was reported starting."""
_OWN = [state("running"), prompt(1)]
"""Work the Agent started itself, then a prompt received during it."""


def test_a_prompts_work_still_counts_messages_against_a_waiting_prompt() -> None:
    """During work prompt 1 started, prompt 2 waits: two user messages, one claimable (ACC-06,
    named at the answer that takes the other)."""
    lines = [*_PROMPTED, prompt(2), user("x"), user("u2"), answer(2, "u2"), state("idle", stop="end_turn")]
    [(rule, line, why)] = _case_lines(lines)
    assert (rule, line) == (bw.OWN_USER_MESSAGE.rule, 9) and "'x' (line 7)" in why


def test_a_message_of_own_work_may_still_be_returned_by_the_waiting_prompt() -> None:
    """The only user message of the Agent's own work is returned by prompt 1's answer: fine; and
    one reported before a later prompt's receipt returned for it is ACC-07 as ever."""
    assert _case_lines([*_OWN, user("u1"), answer(1, "u1"), state("idle", stop="end_turn")]) == []
    early = [*_OWN, user("u1"), prompt(2), answer(2, "u1"), answer(1, "v1"), user("v1")]
    assert [(r, n) for r, n, _ in _case_lines(early)] == [(bw.REPORTED_AFTER_INSERTION.rule, 5)]


def test_a_message_of_own_work_started_while_a_prompt_waited_is_counted() -> None:
    """Prompt 1 waits when work starts (its hook work, maybe): a message then is counted, as
    before (ACC-06 once the answer returns the other ID)."""
    lines = [prompt(1), state("running"), user("x"), user("u1"), answer(1, "u1")]
    assert [(r, n) for r, n, _ in _case_lines(lines)] == [(bw.OWN_USER_MESSAGE.rule, 5)]


def test_a_growth_still_uncertain_at_the_end_is_reported_where_it_happened() -> None:
    """Prompt 2 never answered, two messages after its receipt during prompt 1's work: one of
    them is certainly unclaimed, not which: reported at the second's line, naming both."""
    lines = [*_PROMPTED, prompt(2), user("x"), user("y"), say("a1")]
    for complete in (False, True):
        [(_, line, why)] = [f for f in _case_lines(lines, complete) if f[0] == bw.OWN_USER_MESSAGE.rule]
        assert line == 8 and "'x', 'y'" in why and "one of them" in why


def test_after_a_refusal_the_named_message_breaks_rejected_not_reported() -> None:
    """A prompt received before the named message was refused: REJ-02, at the answer."""
    lines = [prompt(1), fail(1, -32602), prompt(2), state("running"), user("x"), user("u2"), answer(2, "u2")]
    assert [(r, n) for r, n, _ in _case_lines(lines)] == [(bw.REJECTED_NOT_REPORTED.rule, 7)]


def _case_lines(
    lines: list[Any], complete: bool = False, reading: str = "agent-initiated"
) -> list[tuple[str, int | None, str]]:
    """(rule, line, explanation) of the error findings of ``lines``."""
    report = check(lines, complete=complete, unaccounted_user_message=reading)
    return [(f.rule, f.line, f.explanation) for f in report.findings if f.severity == "error"]


@pytest.mark.parametrize(
    "before",
    [
        [state("idle"), prompt(1), state("running"), user("u1"), answer(1, "u1")],
        [
            state("idle"),
            prompt(1),
            resume(9),
            state("idle"),
            ok(9),
            answer(1, "u1"),
            state("running"),
            user("u1"),
        ],
    ],
    ids=["prompt waited at the start", "inserted after a resume window, before the start"],
)
def test_work_a_prompt_started_keeps_counting_after_its_answer(before: list[Any]) -> None:
    """Work that started while prompt 1 waited, or right after prompt 1 was inserted while idle
    was reported (a resume window in between), is prompt 1's, also once it is answered: a user
    message there while prompt 2 waits is counted (ACC-06 at the answer that takes the other)."""
    lines = [*before, prompt(2), user("x"), user("u2"), answer(2, "u2"), state("idle", stop="end_turn")]
    [(rule, line, why)] = _case_lines(lines, True)
    assert (rule, line) == (bw.OWN_USER_MESSAGE.rule, len(before) + 4) and "'x'" in why


def test_an_answer_after_its_work_ended_leaves_the_next_work_the_agents_own() -> None:
    """Prompt 1 inserted and its work run and ended before its answer (sent while idle is
    reported): the work started next is the Agent's own, and so is its user message x (an
    exhaustive explore counterexample of a too broad 'inserted while idle awaits its work')."""
    lines = [
        state("idle"), prompt(1), user("u1"), state("running"), state("idle", stop="end_turn"),
        answer(1, "u1"), state("running"), user("x"), state("idle", stop="end_turn"),
    ]  # fmt: skip
    assert _case_lines(lines, True) == []


_REFUSED_THEN_OWN = [state("idle"), prompt(1), fail(1, -32602), user("x")]
"""Prompt 1 refused, then a user message x while idle is reported and no prompt waits: taken as
the Agent's own insertion for work of its own that must be reported starting next."""


def test_work_started_while_a_prompt_received_while_idle_waits_is_that_prompts() -> None:
    """Decidability's REJ-02 witness (seed 154): prompt 2 received while idle is reported and
    still waiting when work is reported starting: inserted while idle (its work awaited) or not
    yet (its hook work), the work is prompt 2's (model.between own_work), so x is no insertion
    of the Agent's own: REJ-02 (prompt 1 was refused before x), at the answer that returns
    another ID; main accepted it."""
    lines = [*_REFUSED_THEN_OWN, prompt(2), state("running"), user("u2"), answer(2, "u2")]
    lines += [state("idle", stop="end_turn")]
    for complete in (False, True):
        [(rule, line, why)] = _case_lines(lines, complete)
        assert (rule, line) == (bw.REJECTED_NOT_REPORTED.rule, 8) and "received while idle" in why


def test_a_prompt_received_while_idle_returning_the_earlier_message_is_acc07_only() -> None:
    """Prompt 2 returns x, reported before its receipt: ACC-07 alone (no second finding for x)."""
    lines = [*_REFUSED_THEN_OWN, prompt(2), state("running"), answer(2, "x"), state("idle", stop="end_turn")]
    assert [(r, n) for r, n, _ in _case_lines(lines, True)] == [(bw.REPORTED_AFTER_INSERTION.rule, 7)]


def test_a_prompt_received_while_unknown_is_reported_leaves_the_work_the_agents_own() -> None:
    """Received while unknown is reported, prompt 2 may have reached the Agent's own work
    started unseen (or a later one): x stays the Agent's own, as before."""
    lines = [*_REFUSED_THEN_OWN, state("unknown"), prompt(2), state("running"), user("u2")]
    lines += [answer(2, "u2"), state("idle", stop="end_turn")]
    assert _case_lines(lines, True) == []


def test_a_resume_window_keeps_the_deadline_of_work_already_reported() -> None:
    """Decidability's ACC-06 witness (seed 108): prompt 1's work was reported running and the
    prompt answered before a session/resume; the work reported after the window is that work or
    one started in it, and ends by the next idle, so u1 is owed before that idle (ACC-05 there,
    reading user-message-deadline=resulting-work); main dropped the judgement at the window. A
    window before the work was reported still ends it (the work may start and end unseen in it)."""
    lines = [state("idle"), prompt(1), state("running"), answer(1, "u1"), resume(9), state("running")]
    lines += [ok(9), say("a1"), state("idle", stop="end_turn")]
    assert [(r, n) for r, n, _ in _case_lines(lines)] == [(bw.USER_MESSAGE_REPORTED.rule, 9)]
    early = [*lines[:2], resume(9), state("idle"), ok(9), *lines[2:4], *lines[7:]]
    assert _case_lines(early) == []
