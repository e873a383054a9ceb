"""A cancel inside a resume window, and the idle that ends the cancelled work there (issue 31:
the decidability gap of TRANS-04 and CANCEL-11, seed 38 of cancel-as-end-turn and
no-idle-after-cancel).

- ``Rules.cancel_reaches``: "session/resume does not imply idle" (Initial state and
  synchronization), so work reported active before a resume, with no state reported in the
  window yet, is still reported active when a session/cancel comes there: the first idle after
  it confirms the cancellation (TRANS-04), and work never ended owes it (CANCEL-11).
- ``Rules.resume_snapshot``: inside the window an idle is the snapshot unless it replaces an active
  state reported there (a transition: the work ended); ``Rules.ends_in_window`` (reading
  ``resume-window-idle=may-be-live``, not the default): an idle with the
  confirming stop reason may be the live idle ending the cancelled work, when another state of
  the window can be the snapshot; the one idle of a window is the snapshot, which confirms
  nothing (``Rules.window_leaves_cancel``, judged at the successful resume response).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from model import between as bw
from properties.engine import MonitorSet
from properties.readings import BY_NAME as READINGS_BY_NAME
from tests.wire_dsl import (
    Line,
    answer,
    ask,
    cancel,
    close,
    fail,
    ok,
    permission_answer,
    prompt,
    resume,
    state,
    tool,
    user,
)


def _found(
    lines: Sequence[Line], quiescent: bool = False, readings: Mapping[str, str] | None = None
) -> list[tuple[str, int | None]]:
    ms = MonitorSet(readings=dict(readings or {}))
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    ms.finish(quiescent)
    return sorted((f.rule, f.line) for f in ms.findings if f.kind in ("rule", "open"))


# the work blocks on a permission request; the Client resumes the session (with replay) and
# cancels before anything of the window is sent (lines 1-8)
_BLOCKED: list[Line] = [
    prompt(1),
    state("running"),
    user("u1"),
    answer(1, "u1"),
    tool("tc_1", "pending"),
    ask("perm_1", "tc_1"),
    state("requires_action"),
    resume(2),
]
_WINDOW: list[Line] = [cancel(), tool("tc_1", "pending"), state("requires_action"), ok(2)]
_AFTER: list[Line] = [permission_answer("perm_1", None), state("running"), tool("tc_1", "failed")]


def test_a_cancel_before_anything_of_the_window_reaches_the_work_reported_active() -> None:
    assert bw.SPEC.cancel_reaches(reported_active=False, held_in_window=True)
    assert not bw.SPEC.cancel_reaches(reported_active=False, held_in_window=False)
    # seed 38 of cancel-as-end-turn: the work ends with end_turn after the resume
    lines = [*_BLOCKED, *_WINDOW, *_AFTER, state("idle", stop="end_turn")]
    assert _found(lines, quiescent=True) == [(bw.CANCEL_CONFIRMED.rule, len(lines))]
    assert _found([*_BLOCKED, *_WINDOW, *_AFTER, state("idle", stop="cancelled")], quiescent=True) == []
    # seed 38 of no-idle-after-cancel: never ended, in a complete transcript
    never = [*_BLOCKED, *_WINDOW, *_AFTER]
    assert _found(never, quiescent=True) == [(bw.CANCELLED_WORK_ENDS.rule, 14)]  # its running


def test_a_cancel_after_an_idle_of_the_window_reaches_no_work_it_knows_of() -> None:
    """An idle in the window (a snapshot, or the work's own live end) may show the work over
    before the cancel came: the cancel is not known to reach active work."""
    lines = [*_BLOCKED, state("idle"), cancel(), ok(2), state("running"), state("idle", stop="end_turn")]
    assert _found(lines, quiescent=True) == []


def test_a_live_cancelled_idle_inside_the_window_is_accepted() -> None:
    """The work ends inside the window after the snapshot reported it active: that idle replaces
    an active state of the window, a transition (``Rules.resume_snapshot``), so it is the
    confirming idle (a naive reading of every idle of the window as the snapshot flags it)."""
    assert not bw.SPEC.resume_snapshot(in_window=True, replaces_window_active=True)
    assert bw.SPEC.resume_snapshot(in_window=True, replaces_window_active=False)
    blocked = state("requires_action")
    snapshot_then_live = [*_BLOCKED, cancel(), blocked, state("idle", stop="cancelled"), ok(2)]
    assert _found(snapshot_then_live, quiescent=True) == []
    # a cancel received before the resume, its idle inside the window after a running snapshot
    before = [*_BLOCKED[:-1], cancel(), resume(2), state("running"), state("idle", stop="cancelled"), ok(2)]
    assert _found(before, quiescent=True) == []
    # as a transition it is judged as any idle confirming a cancellation
    wrong = [*_BLOCKED, cancel(), blocked, state("idle", stop="end_turn"), ok(2)]
    assert _found(wrong, quiescent=True) == [(bw.CANCEL_CONFIRMED.rule, 11)]


_LIVE = {"resume-window-idle": "may-be-live"}


def test_an_idle_no_active_state_of_the_window_precedes_is_the_snapshot() -> None:
    """The default, resume-window-idle=snapshot: the Client applies it as the snapshot, which
    creates no cancellation; under may-be-live it may be the live idle when another state of the
    window can be the snapshot, and the one idle of a window is the snapshot all the same."""
    two = [*_BLOCKED, cancel(), state("idle", stop="cancelled"), state("idle"), ok(2)]
    assert _found(two) == [(bw.CANCELLED_WORK_ENDS.rule, 10)]
    assert _found(two, readings=_LIVE) == []
    lone = [*_BLOCKED, cancel(), state("idle", stop="cancelled"), ok(2)]
    assert _found(lone) == [(bw.CANCELLED_WORK_ENDS.rule, 10)]
    assert _found(lone, readings=_LIVE) == [(bw.CANCELLED_WORK_ENDS.rule, 11)]  # at the response
    # an idle the cancelled work could not end with is a breach under both, at once
    wrong = [*_BLOCKED, cancel(), state("idle", stop="end_turn"), state("idle"), ok(2)]
    assert _found(wrong, readings=_LIVE) == [(bw.CANCELLED_WORK_ENDS.rule, 10)]
    # a resume that fails (a close came) owed no snapshot: the idle may be the live one
    closed = [*_BLOCKED, cancel(), close(3), state("idle", stop="cancelled"), ok(3), fail(2, -32600)]
    assert _found(closed, quiescent=True, readings=_LIVE) == []


def test_one_idle_is_never_both_the_snapshot_and_the_confirming_idle() -> None:
    """review48 cases 3, 4, 6: the one idle cancelled of a window, while a cancellation is
    pending, is the snapshot under both alternatives (CANCEL-11), and the reading argues why from
    the text: a resume snapshot implies no transition, and confirming a cancellation is what an
    idle transition does. The cancel may come before the resume (case 3) or be a close (case 6)."""
    reading = READINGS_BY_NAME["resume-window-idle"]
    quote = "Initial or resume snapshots report the current state without implying a transition"
    assert quote in reading.spec_words and quote in reading.why_default
    assert "Neither alternative lets one idle be both" in reading.why_default
    before = [*_BLOCKED[:-1], cancel(), resume(2), state("idle", stop="cancelled"), ok(2)]
    assert _found(before) == [(bw.CANCELLED_WORK_ENDS.rule, 10)]
    assert _found(before, readings=_LIVE) == [(bw.CANCELLED_WORK_ENDS.rule, 11)]
    closing = [*_BLOCKED, close(3), state("idle", stop="cancelled"), ok(2), ok(3)]
    assert _found(closing) == [(bw.CANCELLED_WORK_ENDS.rule, 10)]
    assert _found(closing, readings=_LIVE) == [(bw.CANCELLED_WORK_ENDS.rule, 11)]
