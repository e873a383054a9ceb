"""The declarations of ``model.between`` about a prompt's answer and its user message (issue 31:
stated once in ``model/``, the prompt monitor only maps the wire to them): each function gives the
answers the spec's sentences say, and ``check`` names the declaration's rule on a transcript that
breaks it, and nothing on the same transcript mended."""

from __future__ import annotations

from model import between as bw
from properties.trace import implemented_by
from tests.check_support import rule_lines as _rules
from tests.wire_dsl import (
    answer,
    cancel,
    cancel_request,
    created,
    fail,
    new_session,
    ok,
    prompt,
    resume,
    state,
    user,
)

_TURN = [prompt(1), state("running"), user("u1")]


def test_each_declaration_here_is_implemented_by_the_model_alone() -> None:
    for d in (
        bw.MESSAGE_ID_RETURNED,
        bw.REPORTED_AFTER_INSERTION,
        bw.DISTINCT_MESSAGE_IDS,
        bw.REPLAY_KEEPS_IDS,
        bw.REJECTED_NOT_REPORTED,
        bw.LATER_PROMPTS_UNCOVERED,
    ):
        assert implemented_by(d.rule) == [f"model.between.{d.name.upper()}"], d.name


def test_a_success_without_a_string_message_id_breaks_message_id_returned() -> None:
    assert bw.SPEC.message_id_given("u1")
    assert not any(bw.SPEC.message_id_given(v) for v in (None, 7, ["u1"]))
    assert _rules([*_TURN, answer(1, "u1")]) == []
    for result in ({}, {"messageId": None}, {"messageId": 3}):
        assert (bw.MESSAGE_ID_RETURNED.rule, 4) in _rules([*_TURN, ok(1, **result)]), result


def test_a_success_without_a_message_id_is_one_finding_unless_a_second_message_is_unclaimed() -> None:
    """review47 case 192: the success's missing messageId is ACC-04 alone, not ACC-06 on top for the
    message it failed to name; a second user message no prompt can claim is still ACC-06."""
    end = state("idle", stop="end_turn")
    assert _rules([*_TURN, ok(1), end]) == [(bw.MESSAGE_ID_RETURNED.rule, 4)]
    two = _rules([*_TURN, user("u2"), ok(1), end])
    assert (bw.MESSAGE_ID_RETURNED.rule, 5) in two and ("ACC-06", 5) in two
    replayed = [*_TURN, ok(1), end, resume("r1", replay=True), user("u1")]
    assert ("ACC-11", 6) not in _rules(replayed)  # the message it failed to name was live


def test_a_success_without_a_message_id_may_own_a_message_reported_after_it() -> None:
    """review51 A8: prompt 1's message may be reported after its success response; answered
    without a messageId, it may own ``u1``, so prompt 2, covered by the cancel, may have been
    withdrawn with -32800 uninserted: ACC-04 alone, not ACC-03 on top. The controls: when ``u0``,
    reported before prompt 2 was received, is prompt 1's (named, or the only message it can have
    failed to name), ``u1`` is certainly prompt 2's, whose -32800 after insertion breaks ACC-03."""
    tail = [prompt(2), user("u1"), cancel(), fail(2, -32800), state("idle", stop="cancelled")]
    late = [prompt(1), state("running"), ok(1), *tail]
    assert _rules(late) == [(bw.MESSAGE_ID_RETURNED.rule, 3)]
    assert _rules([prompt(1), state("running"), user("u0"), answer(1, "u0"), *tail]) == [("ACC-03", 8)]
    nameless = _rules([prompt(1), state("running"), user("u0"), ok(1), *tail])
    assert nameless == [(bw.MESSAGE_ID_RETURNED.rule, 4), ("ACC-03", 8)]
    # the review's shape: prompt 2 answered without one before any user message, prompt 1 after
    # both; either may own u3, so prompt 3 may have been withdrawn uninserted
    two = [prompt(1), state("running"), prompt(2), ok(2), user("u1"), prompt(3), user("u3"), ok(1)]
    found = _rules([*two, cancel(), fail(3, -32800), state("idle", stop="cancelled")])
    assert found == [(bw.MESSAGE_ID_RETURNED.rule, 4), (bw.MESSAGE_ID_RETURNED.rule, 8)]


def test_a_user_message_reported_before_its_prompt_was_received_breaks_reported_after_insertion() -> None:
    assert bw.SPEC.user_message_reportable(True) and not bw.SPEC.user_message_reportable(False)
    ahead = [prompt(1), state("running"), user("u2"), prompt(2), user("u1"), answer(1, "u1"), answer(2, "u2")]
    assert (bw.REPORTED_AFTER_INSERTION.rule, 7) in _rules(ahead)  # (and ACC-06 at the response to 1)
    after = [prompt(1), state("running"), prompt(2), user("u2"), user("u1"), answer(1, "u1"), answer(2, "u2")]
    assert _rules(after) == []


def test_one_message_id_returned_for_two_submissions_breaks_distinct_message_ids() -> None:
    assert bw.SPEC.earlier_submission("u1", {"u1": 1, "x": None}) == 1
    assert bw.SPEC.earlier_submission("x", {"u1": 1, "x": None}) is None  # no submission's
    again = [*_TURN, answer(1, "u1"), state("idle", stop="end_turn"), prompt(2), state("running")]
    assert _rules([*again, answer(2, "u1")]) == [(bw.DISTINCT_MESSAGE_IDS.rule, 8)]
    assert _rules([*again, user("u2"), answer(2, "u2")]) == []


def test_a_replayed_user_message_under_a_new_id_breaks_replay_keeps_ids() -> None:
    assert bw.SPEC.replay_renamed("u1-r", {"u1"}) and not bw.SPEC.replay_renamed("u1", {"u1"})
    lived = [new_session(0), created(0), *_TURN, answer(1, "u1"), state("idle", stop="end_turn"), resume(2)]
    assert _rules([*lived, user("u1-r"), state("idle"), ok(2)]) == [(bw.REPLAY_KEEPS_IDS.rule, 9)]
    assert _rules([*lived, user("u1"), state("idle"), ok(2)]) == []


def test_a_user_message_for_a_refused_prompt_breaks_rejected_not_reported() -> None:
    assert bw.SPEC.unaccounted_user_message(True) is bw.REJECTED_NOT_REPORTED
    assert bw.SPEC.unaccounted_user_message(False) is bw.OWN_USER_MESSAGE
    refused = [prompt(1), fail(1, -32602), prompt(2), state("running")]
    assert _rules([*refused, user("u1"), user("u2"), answer(2, "u2")]) == [(bw.REJECTED_NOT_REPORTED.rule, 7)]
    assert _rules([*refused, user("u2"), answer(2, "u2")]) == []
    # with no refusal before it, the same unaccounted report is own_user_message's
    assert _rules([prompt(2), state("running"), user("u1"), user("u2"), answer(2, "u2")]) == [
        (bw.OWN_USER_MESSAGE.rule, 5)  # (u1, named at the answer that returns u2)
    ]


def test_a_prompt_withdrawn_by_a_cancel_received_before_it_breaks_later_prompts_uncovered() -> None:
    assert bw.SPEC.withdrawn_by_earlier_cancel(True, True)
    assert not bw.SPEC.withdrawn_by_earlier_cancel(False, True)  # a later cancel stopped it
    assert not bw.SPEC.withdrawn_by_earlier_cancel(True, False)  # refused otherwise
    cancelled = [*_TURN, answer(1, "u1"), cancel(), prompt(2), state("idle", stop="cancelled")]
    assert _rules([*cancelled, fail(2, -32800)]) == [(bw.LATER_PROMPTS_UNCOVERED.rule, 8)]
    assert _rules([*cancelled, fail(2, -32602)]) == []
    assert _rules([*cancelled, cancel_request(2), fail(2, -32800)]) == []
