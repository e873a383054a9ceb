"""A success response returning the ID of a user message taken as the Agent's own insertion
(issue 31: a breach ``check`` missed under ``unaccounted-user-message=agent-initiated``).

"2. Prompt accepted": all updates for the inserted message "MUST use the returned messageId and
MUST NOT precede insertion", and "If the message update arrived first, the Client reconciles
with that existing message". A user message reported while no session/prompt waited was taken
as the Agent's own (``model.between`` OWN_USER_MESSAGE); a prompt received later whose success
returns that ID makes it the prompt's message, reported before the prompt was even received:
REPORTED_AFTER_INSERTION (ACC-07). Not DISTINCT_MESSAGE_IDS (ACC-09): it binds "distinct
inserted submissions", and the Agent's own insertion is no submission (no session/prompt
request). The verdict is ACC-07 under every alternative of the reading: it is about messages no
response accounts for, and this one a response does account for.

Must not know: the monitors' internals.
"""

from __future__ import annotations

import pytest

from model import between as bw
from tests.check_support import check_lines as check
from tests.check_support import errors
from tests.wire_dsl import answer, prompt, say, state, user

_OWN = [state("idle"), state("running"), user("u2"), say("a1"), state("idle", stop="end_turn")]
"""Work the Agent started itself, with its own user message u2 (no prompt waits)."""
_NEXT = [prompt(1), state("running")]
"""A prompt received after it, and its work."""
_END = state("idle", stop="end_turn")


def test_the_model_says_which_declaration_a_returned_id_breaks() -> None:
    returned = {"u1": 1, "u2": None}  # u2: taken as the Agent's own insertion
    assert bw.SPEC.returned_id_breach("u1", returned, 0, 9) is bw.DISTINCT_MESSAGE_IDS
    assert bw.SPEC.returned_id_breach("u2", returned, 0, 9) is bw.REPORTED_AFTER_INSERTION
    assert bw.SPEC.returned_id_breach("u3", returned, 4, 9) is bw.REPORTED_AFTER_INSERTION
    assert bw.SPEC.returned_id_breach("u3", returned, 12, 9) is None  # reported after receipt
    assert bw.SPEC.returned_id_breach("u3", returned, 0, 9) is None  # not reported yet


@pytest.mark.parametrize("reading", ["agent-initiated", "prompt-only", "other-sources"])
def test_the_own_messages_id_returned_for_a_later_prompt_is_reported_after_insertion(reading: str) -> None:
    """The issue's transcript: u2 reported again after the response (main accepted it under the
    default reading, having taken u2 as the Agent's own and then as claimed). Under
    ``prompt-only`` the own report is also the suspicion SDM-05 (a session without prompts)."""
    lines = [*_OWN, *_NEXT, answer(1, "u2"), user("u2"), _END]
    report = check(lines, complete=True, unaccounted_user_message=reading)
    assert errors(report) == [(bw.REPORTED_AFTER_INSERTION.rule, 8)]
    warned = [(f.rule, f.line) for f in report.findings if f.kind == "rule" and f.severity == "warning"]
    assert warned == ([("SDM-05", 3)] if reading == "prompt-only" else [])


@pytest.mark.parametrize("reading", ["agent-initiated", "prompt-only", "other-sources"])
def test_not_reported_again_it_is_still_reported_after_insertion_and_not_owed(reading: str) -> None:
    """The message was reported (too early): the breach is ACC-07 at the response, not an
    unreported message at the idle (ACC-05, which main named under the default)."""
    for tail in ([answer(1, "u2")], [user("u2"), answer(1, "u2")]):
        lines = [*_OWN, *_NEXT, *tail, _END]
        assert errors(check(lines, complete=True, unaccounted_user_message=reading)) == [
            (bw.REPORTED_AFTER_INSERTION.rule, len(lines) - 1)
        ]


def test_an_own_message_reported_while_idle_then_returned_is_one_breach() -> None:
    """u2 reported outside work, waiting to be the Agent's own for work starting next: once a
    prompt's success returns it, it is that prompt's message (ACC-07), not also an own insertion
    whose work never started (main named only that, as SDM-05, and ACC-05 at the idle)."""
    lines = [state("idle"), user("u2"), prompt(1), answer(1, "u2"), state("running"), _END]
    assert errors(check(lines, complete=True)) == [(bw.REPORTED_AFTER_INSERTION.rule, 4)]
    assert [f.rule for f in check(lines, complete=True).findings if f.severity == "warning"] == []


def test_in_a_session_with_prompts_prompt_only_also_names_the_unaccounted_report() -> None:
    """Under ``prompt-only`` u2, reported with no prompt waiting, is a report no response can
    account for when it comes (ACC-06); the response returning it later is ACC-07 all the same."""
    first = [state("idle"), prompt(5), state("running"), user("u1"), answer(5, "u1"), _END]
    lines = [*first, *_OWN[1:], *_NEXT, answer(1, "u2"), _END]
    assert errors(check(lines, complete=True)) == [(bw.REPORTED_AFTER_INSERTION.rule, 13)]
    assert errors(check(lines, complete=True, unaccounted_user_message="prompt-only")) == [
        (bw.OWN_USER_MESSAGE.rule, 8),
        (bw.REPORTED_AFTER_INSERTION.rule, 13),
    ]
    assert errors(check(lines, complete=True, unaccounted_user_message="other-sources")) == [
        (bw.REPORTED_AFTER_INSERTION.rule, 13)
    ]


@pytest.mark.parametrize("reading", ["agent-initiated", "prompt-only", "other-sources"])
def test_the_own_message_then_a_prompt_answered_with_a_fresh_id_conforms(reading: str) -> None:
    """No finding; under ``prompt-only`` the own report stays the suspicion SDM-05 (a user
    message in a session that never received a prompt), the reading's own verdict."""
    for tail in ([user("u3"), answer(1, "u3")], [answer(1, "u3"), user("u3")]):
        report = check([*_OWN, *_NEXT, *tail, _END], complete=True, unaccounted_user_message=reading)
        found = [(f.rule, f.line) for f in report.findings if f.kind == "rule" and f.severity != "info"]
        assert found == ([("SDM-05", 3)] if reading == "prompt-only" else [])
