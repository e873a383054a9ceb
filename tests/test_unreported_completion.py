"""An idle that ends no work reported active but reports a completion all the same.

``model.foreground.idle_reports_completion`` states when an idle with no active state before it
(a repeated idle, or one after a custom state that followed idle) still says that foreground
work ended: a stop reason while no work of the session has ended before (there is no last stop
reason a snapshot could carry for context), or under ``repeated-idle-new-stop-reason=completion``
a stop reason other than the last one. The foreground monitor judges the work that idle ended as
output in the state reported before it: FG-02 for a prompt's work, FG-01 for work the Agent
started itself, STATE-04 under a custom state the Client did not advertise. These are the
shortest breaking transcripts of the seeded bugs no-running-on-start, own-work-unreported and
custom-running-state that ``check`` used to accept (``acp-model decidability``), and the
conforming transcripts next to them that must stay accepted.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from model import foreground as fgm
from properties.engine import MonitorSet
from tests.wire_dsl import (
    Line,
    answer,
    created,
    fail,
    initialize,
    initialized,
    new_session,
    ok,
    prompt,
    resume,
    say,
    state,
    user,
)


def _found(lines: Sequence[Line], readings: dict[str, str] | None = None) -> list[tuple[str, int | None]]:
    ms = MonitorSet(readings=readings)
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    ms.finish(True)
    return sorted((f.rule, f.line) for f in ms.findings if f.kind == "rule")


_CREATED = [initialize(0), initialized(0), new_session(1), created(1)]
"""A session seen from its creation (its whole life is in view)."""
_ERROR = {"code": -32603, "message": "model request failed"}


def test_the_model_says_which_idles_report_a_completion() -> None:
    f = fgm.idle_reports_completion
    assert f("error", None, completed_before=False, new_reason_completes=False)
    assert not f(None, None, completed_before=False, new_reason_completes=False)  # a snapshot
    assert not f("end_turn", "end_turn", completed_before=True, new_reason_completes=True)
    assert not f("max_tokens", "end_turn", completed_before=True, new_reason_completes=False)
    assert f("max_tokens", "end_turn", completed_before=True, new_reason_completes=True)


def test_a_rejected_prompt_then_an_error_idle_is_unreported_work_of_that_prompt() -> None:
    """The hook-rejection breach: foreground (pre-insertion) work failed, never reported active."""
    lines = [*_CREATED, prompt(1), fail(1, -32602), state("idle", stop="error", error=_ERROR)]
    assert _found(lines) == [("FG-02", 7)]


def test_an_idle_with_a_stop_reason_and_no_prompt_is_the_agents_own_unreported_work() -> None:
    lines = [*_CREATED, state("idle"), state("idle", stop="end_turn")]
    assert _found(lines) == [("FG-01", 6)]


def test_an_idle_after_an_unadvertised_custom_state_ends_work_that_ran_under_it() -> None:
    lines = [*_CREATED, prompt(2), state("_busy"), fail(2, -32600), state("idle", stop="end_turn")]
    assert _found(lines) == [("STATE-04", 8)]


def test_an_advertised_custom_state_may_carry_the_work() -> None:
    lines = [
        initialize(0, {"customStates": True}),
        initialized(0),
        new_session(1),
        created(1),
        prompt(2),
        state("_busy"),
        fail(2, -32600),
        state("idle", stop="end_turn"),
    ]
    assert _found(lines) == []


def test_a_resume_does_not_hide_that_no_work_of_a_session_seen_from_its_creation_ended() -> None:
    lines = [*_CREATED, resume(3, replay=False), state("idle"), ok(3), state("idle", stop="refusal")]
    assert _found(lines) == [("FG-01", 8)]


@pytest.mark.parametrize(
    "lines",
    [
        # the last stop reason repeated for context after work that ended in view
        [*_CREATED, prompt(2), state("running"), user("u1"), say("a1"), answer(2, "u1"),
         state("idle", stop="end_turn"), state("idle", stop="end_turn")],
        # an initial idle without a stop reason is a snapshot
        [*_CREATED, state("idle"), state("idle")],
        # a session resumed, not created, in view: its earlier work ended out of view, and its
        # stop reason may be carried
        [resume(3, replay=False), state("idle", stop="end_turn"), ok(3),
         state("idle", stop="end_turn")],
        # a session not seen from its creation: its past is not in view
        [state("idle", stop="end_turn")],
        # work ended under an (advertised) custom state: the idle after it is a completion, so a
        # new stop reason after it is updated information (explore's conforming Agent does this)
        [initialize(0, {"customStates": True}), initialized(0), new_session(1), created(1),
         prompt(2), state("running"), user("u1"), answer(2, "u1"), state("_reviewing"),
         state("idle", stop="cancelled"), state("idle", stop="end_turn")],
        # work may start and end unobserved while unknown is reported (the foreground table
        # allows output there): the idle that restores a known state may end it
        [*_CREATED, state("unknown"), state("idle", stop="end_turn"), state("idle", stop="max_tokens")],
    ],
    ids=[
        "last-reason-again", "initial-snapshot", "after-resume", "not-from-creation",
        "after-custom-state", "after-unknown",
    ],
)  # fmt: skip
def test_conforming_idles_stay_accepted(lines: list[Line]) -> None:
    assert _found(lines) == []


def test_a_new_stop_reason_after_work_ended_rests_on_the_reading() -> None:
    lines = [
        *_CREATED,
        prompt(2),
        state("running"),
        user("u1"),
        say("a1"),
        answer(2, "u1"),
        state("idle", stop="end_turn"),
        state("idle", stop="max_tokens"),
    ]
    assert _found(lines) == []
    assert _found(lines, {"repeated-idle-new-stop-reason": "completion"}) == [("FG-01", 11)]
