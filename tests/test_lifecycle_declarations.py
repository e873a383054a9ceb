"""The foreground lifecycle's declarations in ``model.between`` (active_on_start,
own_work_foreground, running_on_progress, idle_ends_work, cancelled_work_ends,
accepted_work_reported, custom_stop_prefixed): a declaration that restates a rule of the
foreground table names every ID of the catalogue's group, so each of them is the model's alone;
its functions answer as the spec's sentences say; and on transcripts each declaration's rule is
the one the checker reports."""

from __future__ import annotations

import pytest

from model import between as bw
from model import foreground as fgm
from properties.catalogue import RESTATED
from properties.readings import READINGS
from properties.trace import implemented_by
from tests.check_support import check_lines, errors
from tests.check_support import rule_lines as _rules
from tests.wire_dsl import answer, ask, cancel, close, item, ok, prompt, say, state, tool, user

ALTERNATIVES = {r.name: {a.name for a in r.alternatives} for r in READINGS}
LIFECYCLE = (
    bw.ACTIVE_ON_START,
    bw.OWN_WORK_FOREGROUND,
    bw.RUNNING_ON_PROGRESS,
    bw.IDLE_ENDS_WORK,
    bw.CANCELLED_WORK_ENDS,
    bw.ACCEPTED_WORK_REPORTED,
    bw.CUSTOM_STOP_PREFIXED,
)


def test_a_restating_declaration_is_one_catalogue_group_and_each_of_its_ids_is_the_models() -> None:
    restating = [d for d in bw.DECLARATIONS if d.restated]
    assert {bw.ACTIVE_ON_START, bw.RUNNING_ON_PROGRESS, bw.IDLE_ENDS_WORK} <= set(restating)
    for d in restating:
        assert d.statements in RESTATED.values(), d.name
        for rule in d.statements:
            found = implemented_by(rule)
            assert f"model.between.{d.name.upper()}" in found, (d.name, rule)
            assert all(name.startswith("model.") for name in found), (rule, found)
    # the rule each takes from the foreground table is the one its cell or obligation names
    assert bw.ACTIVE_ON_START.rule == fgm.SPEC.rule_of(fgm.IDLE, "output")
    assert bw.RUNNING_ON_PROGRESS.rule == fgm.SPEC.rule_of(fgm.REQUIRES_ACTION, "output")
    assert (
        bw.IDLE_ENDS_WORK.rule == fgm.SPEC.eventually[fgm.RUNNING] == fgm.SPEC.eventually[fgm.REQUIRES_ACTION]
    )


def test_every_lifecycle_rule_is_implemented_by_its_declaration_alone() -> None:
    for d in LIFECYCLE:
        if d.restated:
            continue
        assert implemented_by(d.rule) == [f"model.between.{d.name.upper()}"], d.name


@pytest.mark.parametrize(
    ("reading", "function", "true_for"),
    [
        ("output-while-requires-action", bw.SPEC.blocked_output_is_progress, {"progress", "late-chunk"}),
        ("future-stop-reason", bw.SPEC.future_reason_possible, {"may-be-future"}),
    ],
)
def test_each_reading_alternative_is_read_one_way(reading: str, function: object, true_for: set[str]) -> None:
    assert true_for < ALTERNATIVES[reading]
    assert {n for n in ALTERNATIVES[reading] if function(n)} == true_for  # type: ignore[operator]


def test_the_lifecycle_functions() -> None:
    table_rule = bw.ACTIVE_ON_START.rule
    assert bw.SPEC.start_rule(table_rule, prompt_waits=True) == table_rule
    assert bw.SPEC.start_rule(table_rule, prompt_waits=False) == bw.OWN_WORK_FOREGROUND.rule
    assert bw.SPEC.tool_progress(of_foreground_work=True, listed=False)
    assert not bw.SPEC.tool_progress(of_foreground_work=True, listed=True)
    assert not bw.SPEC.tool_progress(of_foreground_work=False, listed=False)
    # unlisted-tool-while-blocked: an unruled call (announced, no list left it out) may be background
    for alt, progress in (("foreground-unless-listed", True), ("may-be-background", False)):
        assert bw.SPEC.tool_progress(True, False, True, alt) is progress
        assert bw.SPEC.tool_progress(True, False, False, alt)  # a list left it out: the work's
    assert bw.SPEC.never_idled(bw.IDLE_ENDS_WORK.rule, cancel_pending=False) == bw.IDLE_ENDS_WORK.rule
    assert bw.SPEC.never_idled(bw.IDLE_ENDS_WORK.rule, cancel_pending=True) == bw.CANCELLED_WORK_ENDS.rule
    owed = bw.IDLE_ENDS_WORK.rule
    assert bw.SPEC.close_leaves_work(True, cancel_pending=True, owed=owed) == bw.CANCELLED_WORK_ENDS.rule
    assert bw.SPEC.close_leaves_work(True, cancel_pending=False, owed=owed) == owed
    assert bw.SPEC.close_leaves_work(False, cancel_pending=True, owed=owed) is None
    assert bw.SPEC.owes_lifecycle(received_while_idle=True, succeeded=True)
    assert not bw.SPEC.owes_lifecycle(received_while_idle=False, succeeded=True)
    assert not bw.SPEC.owes_lifecycle(received_while_idle=True, succeeded=False)
    assert all(bw.SPEC.stop_reason_named(r) for r in (*fgm.STOP_REASONS, "_handed_off"))
    assert not bw.SPEC.stop_reason_named("handed_off")


# -- on transcripts -------------------------------------------------------------------------
TURN = [prompt(1), state("running"), user("u1"), answer(1, "u1")]


def test_output_while_idle_is_the_prompts_work_or_the_agents_own() -> None:
    """A prompt waits: active_on_start's rule; none: own_work_foreground's."""
    assert _rules([prompt(1), say("m1")]) == [(bw.ACTIVE_ON_START.rule, 2)]
    ended = [*TURN, state("idle", stop="end_turn")]
    assert _rules([*ended, say("m2")]) == [(bw.OWN_WORK_FOREGROUND.rule, 6)]


def test_a_tool_call_of_the_blocked_work_that_runs_needs_running_unless_it_is_listed() -> None:
    blocked = [*TURN, tool("tc1", "pending"), ask(7, "tc1"), state("requires_action")]
    assert _rules([*blocked, tool("tc1", "in_progress")]) == [(bw.RUNNING_ON_PROGRESS.rule, 8)]
    listed = state("requires_action", bg=[item("tool_call", "tc1")])
    assert _rules([*blocked, listed, tool("tc1", "in_progress")]) == []
    assert _rules([*blocked, say("m1")]) == [(bw.RUNNING_ON_PROGRESS.rule, 8)]
    pending = {"output-while-requires-action": "pending-output"}
    assert _rules([*blocked, say("m1")], readings=pending) == []


def test_work_never_idled_and_a_close_before_the_cancelled_works_idle() -> None:
    assert errors(check_lines(TURN, complete=True)) == [(bw.IDLE_ENDS_WORK.rule, 4)]
    assert errors(check_lines([*TURN, cancel()], complete=True)) == [(bw.CANCELLED_WORK_ENDS.rule, 5)]
    assert _rules([*TURN, close(2), ok(2)]) == [(bw.CANCELLED_WORK_ENDS.rule, 6)]
    assert _rules([*TURN, close(2), state("idle", stop="cancelled"), ok(2)]) == []


def test_an_accepted_prompt_owes_an_active_state() -> None:
    accepted = [prompt(1), user("u1"), answer(1, "u1")]
    assert errors(check_lines(accepted, complete=True)) == [(bw.ACCEPTED_WORK_REPORTED.rule, 3)]
    local = [prompt(1), user("u1"), state("running"), answer(1, "u1"), state("idle", stop="end_turn")]
    assert errors(check_lines(local, complete=True)) == []


def test_a_stop_reason_is_standard_or_prefixed() -> None:
    assert _rules([*TURN, state("idle", stop="handed_off")]) == [(bw.CUSTOM_STOP_PREFIXED.rule, 5)]
    assert _rules([*TURN, state("idle", stop="_handed_off")]) == []
    future = {"future-stop-reason": "may-be-future"}
    assert _rules([*TURN, state("idle", stop="handed_off")], readings=future) == []
