"""ACC-06 (``model.between`` OWN_USER_MESSAGE) after work that may have run unseen.

A prompt received while idle is inserted, then unknown is reported (loss of observability),
then an idle: "a later current-state snapshot restores a known state without implying that work
started or ended while it was unobservable" (State transitions), so the prompt's work may have
started and ended under unknown, and that idle may have ended it. Work reported starting after
it need not be that prompt's: a user message the Agent reports while idle, just before that work
starts, may be its own insertion for it (``Rules.awaits_work_after_idle``), no breach of ACC-06.
(One reported during that work, no prompt waiting, is the Agent's own either way: the default
of unaccounted-user-message.)
"""

from __future__ import annotations

from collections.abc import Sequence

from model import between as bw
from tests.check_support import rule_lines
from tests.wire_dsl import (
    Line,
    answer,
    created,
    initialize,
    initialized,
    new_session,
    ok,
    prompt,
    resume,
    state,
    user,
)


def _found(lines: Sequence[Line]) -> list[tuple[str, int]]:
    return sorted(rule_lines(lines))


_SETUP = [initialize("i"), initialized("i"), new_session("n"), state("idle"), created("n")]
_INSERTED = [*_SETUP, prompt(1), answer(1, "u1"), user("u1")]


def test_an_idle_after_unknown_may_end_the_inserted_prompts_work() -> None:
    assert not bw.SPEC.awaits_work_after_idle(True, after_unobserved=True)
    assert bw.SPEC.awaits_work_after_idle(True, after_unobserved=False)
    lines = [*_INSERTED, state("unknown"), state("idle", stop="end_turn"), user("x2"), state("running")]
    assert _found(lines) == []
    assert _found([*lines[:-2], state("running"), user("x2")]) == []  # in the work: its own anyway


def test_without_the_unobserved_stretch_the_next_work_is_the_prompts() -> None:
    lines = [*_INSERTED, user("x2"), state("running")]
    assert _found(lines) == [(bw.OWN_USER_MESSAGE.rule, 10)]
    resumed = [*_INSERTED, resume(2, replay=False), state("idle"), ok(2), user("x2"), state("running")]
    assert _found(resumed) == [(bw.OWN_USER_MESSAGE.rule, 13)]  # a resume snapshot ends no work
