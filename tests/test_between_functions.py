"""The functions of ``model.between`` that the monitors and the simulated Agent both call in place
of their own copies of a rule: each reading alternative they interpret, and the declarations
issue 31 moved out of the Agent (``approved_runs``, ``advertised_modes``), give the answers the
spec's sentences say."""

from __future__ import annotations

import pytest

from model import between as bw
from model import foreground as fgm
from model import toolcall as tcm
from properties.readings import READINGS

ALTERNATIVES = {r.name: r.alternatives for r in READINGS}


@pytest.mark.parametrize(
    ("reading", "function", "true_for"),
    [
        ("tool-updates-after-idle", bw.SPEC.carries_on_after_idle, {"background", "unlisted-activity"}),
        ("tool-updates-after-idle", bw.SPEC.unlisted_carries_on, {"unlisted-activity"}),
        ("patch-after-idle", bw.SPEC.patch_allowed, {"patch-in-place"}),
        ("cancel-takes-effect", bw.SPEC.own_end_after_cancel, {"when-acted"}),
        ("approval-racing-cancel", bw.SPEC.racing_approval_used, {"may-be-used"}),
        ("prompt-ahead-of-held", bw.SPEC.may_overtake_held, {"held-only"}),
        ("state-updates-before-first-list", bw.SPEC.lists_before_first, {"every"}),
        ("tool-with-listed-terminal", bw.SPEC.terminal_alone_binds, {"only-live-work"}),
    ],
)
def test_each_reading_alternative_is_read_one_way(reading: str, function: object, true_for: set[str]) -> None:
    """Every alternative of the reading is covered, and the function is true exactly for the
    alternatives that give the freedom."""
    names = {a.name for a in ALTERNATIVES[reading]}
    assert true_for < names
    assert {n for n in names if function(n)} == true_for  # type: ignore[operator]


def test_covered_invalid_prompts_are_answered_as_the_reading_says() -> None:
    answers = {
        a.name: bw.SPEC.covered_invalid_answers(a.name) for a in ALTERNATIVES["cancelled-invalid-prompt"]
    }
    assert answers == {
        "cancelled": ("cancelled",),
        "invalid": ("invalid",),
        "either": ("invalid", "cancelled"),
    }


def test_an_in_progress_tool_call_carries_on_only_after_an_own_end() -> None:
    carry = "background"
    assert bw.SPEC.may_carry_on(tcm.IN_PROGRESS, fgm.END_TURN, False, carry)
    assert not bw.SPEC.may_carry_on(tcm.PENDING, fgm.END_TURN, False, carry)
    assert not bw.SPEC.may_carry_on(tcm.IN_PROGRESS, fgm.ERROR, False, carry)
    assert not bw.SPEC.may_carry_on(tcm.IN_PROGRESS, fgm.END_TURN, True, carry)  # a cancel came
    assert not bw.SPEC.may_carry_on(tcm.IN_PROGRESS, fgm.END_TURN, False, "foreground-owed")
    # the idle's own concrete background list leaves it out: it does not carry on (review50 N5)
    assert not bw.SPEC.may_carry_on(tcm.IN_PROGRESS, fgm.END_TURN, False, carry, left_out=True)
    assert bw.SPEC.may_carry_on(tcm.IN_PROGRESS, fgm.END_TURN, False, "unlisted-activity", left_out=True)


def test_a_tool_call_the_idle_s_list_leaves_out_carries_on_only_as_unlisted_activity() -> None:
    """Background work: "[] means no background work is running": a call the idle's own list
    leaves out was not running as background work, unless the reading takes it for background
    activity the Agent does not list (housekeeping represented as a tool call)."""
    assert bw.SPEC.carries_on("background", left_out=False)
    assert not bw.SPEC.carries_on("background", left_out=True)
    assert bw.SPEC.carries_on("unlisted-activity", left_out=True)
    assert not bw.SPEC.carries_on("foreground-owed", left_out=False)


def test_an_idle_confirms_a_cancellation_as_the_reading_says() -> None:
    assert bw.SPEC.confirms_cancellation(fgm.END_TURN, "on-receipt")
    assert not bw.SPEC.confirms_cancellation(fgm.END_TURN, "when-acted")
    assert bw.SPEC.confirms_cancellation(fgm.CANCELLED, "when-acted")


def test_what_an_ending_takes_with_it() -> None:
    assert bw.SPEC.ends_with_work(listed=False, cancelled=False)
    assert not bw.SPEC.ends_with_work(listed=True, cancelled=False)
    assert bw.SPEC.ends_with_work(listed=False, cancelled=True)
    assert not bw.SPEC.ends_with_work(listed=True, cancelled=True)  # listed work keeps running
    stops = bw.SPEC.switched({"cancel_covers": {"covers_background": True}})
    assert stops.ends_with_work(listed=True, cancelled=True)
    assert not stops.ends_with_work(listed=True, cancelled=False)


def test_what_is_owed_before_an_idle() -> None:
    assert not bw.SPEC.owed_before_idle((), ())
    assert bw.SPEC.owed_before_idle(("tc_1",), ())
    assert bw.SPEC.owed_before_idle((), (1,))
    assert bw.SPEC.owed_before_idle((), (), (("terminal", "term_1"),))


def test_approved_runs_and_advertised_modes() -> None:
    assert bw.SPEC.completes_unrun(True, tcm.COMPLETED)
    assert not bw.SPEC.completes_unrun(True, tcm.IN_PROGRESS)
    assert not bw.SPEC.completes_unrun(True, tcm.FAILED)
    assert not bw.SPEC.completes_unrun(False, tcm.COMPLETED)
    assert bw.SPEC.mode_advertised("form", ("form",))
    assert not bw.SPEC.mode_advertised("url", ("form",))


def test_what_a_running_tool_call_and_a_cancel_reach() -> None:
    """``running_on_progress``: a tool call runs when it goes in_progress, or completes while
    granted and not yet run; ``cancel_covers``: a cancel reaches the prompts received before it;
    ``held_in_order``: a prompt waits for insertion in every state with an insert row."""
    from model import prompt as prm

    assert bw.SPEC.tool_runs(tcm.IN_PROGRESS)
    assert bw.SPEC.tool_runs(tcm.COMPLETED, granted_not_run=True)
    assert not bw.SPEC.tool_runs(tcm.COMPLETED)
    assert not any(bw.SPEC.tool_runs(s, True) for s in (tcm.PENDING, tcm.PAUSED, tcm.FAILED, tcm.CANCELLED))
    assert bw.SPEC.covers_prompt(True) and not bw.SPEC.covers_prompt(False)
    assert bw.SPEC.waiting_states(prm.SPEC) == {prm.RECEIVED, prm.HELD, prm.CANCEL_REQUESTED}
