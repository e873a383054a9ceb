"""Checker gaps the decidability report named (issue 31), each closed in ``model.between``.

- CANCEL-11 (``cancelled_work_ends``): an idle resume snapshot sent while the work a
  session/cancel reached never had its confirming idle. "Repeated or resume idle snapshots may
  carry the last stop reason for context, without creating a new completion or cancellation"
  (State transitions), so the snapshot, even one carrying cancelled, is not that idle; it says
  the work is over, and a repeated idle after it ends no additional work: no later message can
  pay the debt, so it is a breach at the snapshot (``Rules.snapshot_leaves_cancel``).
- FAIL-04 (``failed_tools_final``): a tool call still pending at an error idle that no list ever
  names, which later runs and completes. Only an in_progress call may carry on past the idle
  (``Rules.may_carry_on``), so its later status changes do not clear the debt: a breach of a
  complete transcript.
"""

from __future__ import annotations

from collections.abc import Sequence

from model import between as bw
from properties.engine import MonitorSet
from tests.wire_dsl import Line, answer, cancel, close, ok, prompt, resume, state, tool, user

_ERROR = {"code": -32603, "message": "model request failed"}


def _found(lines: Sequence[Line], quiescent: bool = False) -> list[tuple[str, int | None, str]]:
    ms = MonitorSet()
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    ms.finish(quiescent)
    return sorted((f.rule, f.line, f.kind) for f in ms.findings if f.kind in ("rule", "open"))


_CANCELLED = [prompt(1), state("running"), user("u1"), answer(1, "u1"), cancel()]


def test_a_resume_idle_snapshot_is_not_the_idle_confirming_a_cancellation() -> None:
    assert bw.SPEC.snapshot_leaves_cancel(cancel_pending=True, resume_snapshot=True)
    assert not bw.SPEC.snapshot_leaves_cancel(cancel_pending=False, resume_snapshot=True)
    lines = [*_CANCELLED, resume(2, replay=False), state("idle", stop="cancelled"), ok(2)]
    assert _found(lines) == [("CANCEL-11", 7, "rule")]
    assert _found(lines, quiescent=True) == [("CANCEL-11", 7, "rule")]  # judged once, at the snapshot


def test_the_confirming_idle_before_the_resume_or_after_a_running_snapshot_conforms() -> None:
    before = [*_CANCELLED, state("idle", stop="cancelled"), resume(2, replay=False)]
    assert _found([*before, state("idle", stop="cancelled"), ok(2)], quiescent=True) == []
    still = [*_CANCELLED, resume(2, replay=False), state("running"), ok(2)]
    assert _found([*still, state("idle", stop="cancelled")], quiescent=True) == []
    assert _found(still, quiescent=True) == [("CANCEL-11", 7, "rule")]  # never ended: at the end


def test_work_reported_active_at_a_successful_close_response_is_never_idled() -> None:
    """A close that came while unknown was reported (no cancel_pending): running reported after
    it restores a known state without implying the work started anew, and the closed session
    sends nothing more, so the work never gets its idle (idle_ends_work's debt falls due)."""
    owed = bw.IDLE_ENDS_WORK.rule
    lines = [*_CANCELLED[:4], state("unknown"), close(2), state("running"), ok(2)]
    assert _found(lines) == [(owed, 8, "rule")]
    assert _found([*lines[:-1], state("idle", stop="cancelled"), ok(2)], quiescent=True) == []


def test_a_pending_call_left_at_an_error_idle_does_not_carry_on_when_it_runs_later() -> None:
    """seed 84 of error-with-live-tools: tc_1 pending at the error idle, no list ever names it,
    then it runs and completes in the next work. Only an in_progress call may carry on."""
    assert not bw.SPEC.may_carry_on("pending", "error", False, "background", past_error=True)
    assert bw.SPEC.may_carry_on("in_progress", "error", False, "background", past_error=True)
    first = [prompt(1), state("running"), user("u1"), answer(1, "u1")]
    failed = [*first, tool("t1", "pending"), state("idle", stop="error", error=_ERROR)]
    later = [tool("t1", "in_progress"), tool("t1", "completed")]
    assert _found([*failed, *later], quiescent=True) == [("FAIL-04", 6, "rule")]
    assert _found([*failed, *later], quiescent=False) == [("FAIL-04", 6, "open")]  # a list may name it
    running = [*first, tool("t1", "in_progress"), state("idle", stop="error", error=_ERROR)]
    assert _found([*running, tool("t1", "completed")], quiescent=True) == []  # it carried on
