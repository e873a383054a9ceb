"""Resume windows that asked for no replay (review48 problems 1 and 3).

- ``Facts.replaying``: only a window whose resume asked for a replay (``replayFrom``) re-sends
  history; one that asked for none holds the snapshot and live updates ("following any requested
  history replay", Initial state and synchronization). A live user message of an answered prompt
  reported there is its report (ACC-05), a chunk of ended work's message or content of its finished
  tool call is a pending update sent after its idle (DONE-03, ``SessionFacts.still_idle`` before
  the window's snapshot), a completed compaction going in_progress is a reuse (COMPACT-03), and a
  completed tool call going in_progress a reopen (BG-05).
- Under ``resume-replay-window=known-ids``, a window that asked for a replay tells history apart
  by IDs: the first update under an ID a success response returned is that message's report.
- An idle replacing an active state reported in the same window is live (``Rules.resume_snapshot``):
  it ends the resulting work of the prompt received while idle, whose user message was owed
  before it (ACC-05, reading ``user-message-deadline=resulting-work``).

Every transcript starts with initialize and session/new, as real recordings do.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from properties.engine import MonitorSet
from tests.wire_dsl import (
    Line,
    answer,
    created,
    initialize,
    initialized,
    new_session,
    prompt,
    resume,
    say,
    state,
    tool,
    update,
    user,
)

_OPEN: list[Line] = [initialize("init"), initialized("init"), new_session("new"), created("new")]


def _found(lines: Sequence[Line], **readings: str) -> list[tuple[str, int | None]]:
    ms = MonitorSet(readings={k.replace("_", "-"): v for k, v in readings.items()})
    for n, (sender, msg) in enumerate([*_OPEN, *lines], 1):
        ms.feed(sender, msg, n)
    ms.finish(complete=True, last_line=len(_OPEN) + len(lines))
    return sorted((f.rule, f.line) for f in ms.findings if f.kind in ("rule", "open"))


def _resumed(rid: int) -> Line:
    return ("agent", {"jsonrpc": "2.0", "id": rid, "result": {}})


@pytest.mark.parametrize("chunk", [False, True])
def test_live_user_message_in_a_window_that_asked_no_replay_is_the_report(chunk: bool) -> None:
    # prompt 1 answered u1 (line 7); the window (lines 8-11) asked no replay: u1 there is live
    lines = [
        prompt(1),
        state("running"),
        answer(1, "u1"),
        resume(5, replay=False),
        user("u1", chunk=chunk),
        state("running"),
        _resumed(5),
        state("idle", stop="end_turn"),
    ]
    assert _found(lines) == []
    # the same message in a window that asked for a replay is replayed history, not the report
    # (reading resume-replay-window=whole-window: ACC-05 at the end)
    lines[3] = resume(5)
    assert _found(lines) == [("ACC-05", 12)]
    # under known-ids, the first update under a returned ID is that message's report even there
    # (review48 case 25)
    assert _found(lines, resume_replay_window="known-ids") == []


def test_ended_work_patched_in_a_window_that_asked_no_replay() -> None:
    work = [
        prompt(1),
        state("running"),
        user("u1"),
        answer(1, "u1"),
        say("a1"),
        tool("tc1", "completed", title="x"),
        state("idle", stop="end_turn"),
    ]
    window = [
        say("a1"),
        tool("tc1", content=[{"type": "content", "content": {"type": "text", "text": "late"}}]),
    ]
    end = [state("idle"), _resumed(5)]
    # DONE-03 (reading patch-after-idle=ended-work) at the agent message's chunk and at the tool
    # call's content, as without the resume: the window re-sends no history
    assert _found([*work, resume(5, replay=False), *window, *end]) == [("DONE-03", 13), ("DONE-03", 14)]
    assert _found([*work, *window]) == [("DONE-03", 12), ("DONE-03", 13)]
    # with a replay they may be history
    assert _found([*work, resume(5), *window, *end]) == []
    # after the window's running snapshot, work may be going on: nothing judged
    running = [
        resume(5, replay=False),
        state("running"),
        *window,
        _resumed(5),
        state("idle", stop="end_turn"),
    ]
    assert _found([*work, *running]) == []


@pytest.mark.parametrize(
    ("before", "after", "rule"),
    [
        (
            update("compaction_update", compactionId="c1", status="completed"),
            update("compaction_update", compactionId="c1", status="in_progress"),
            "COMPACT-03",
        ),
        (tool("tc1", "completed", title="x"), tool("tc1", "in_progress"), "BG-05"),
    ],
)
def test_entity_tables_judge_a_window_that_asked_no_replay(before: Line, after: Line, rule: str) -> None:
    work = [prompt(1), state("running"), user("u1"), answer(1, "u1"), before, state("idle", stop="end_turn")]
    assert _found([*work, resume(5, replay=False), after, state("idle"), _resumed(5)]) == [(rule, 12)]
    assert _found([*work, resume(5), after, state("idle"), _resumed(5)]) == []


def test_live_idle_in_a_window_carries_the_user_message_deadline() -> None:
    lines = [
        prompt(1),
        state("running"),
        answer(1, "u1"),
        resume(5, replay=False),
        state("running"),  # the snapshot
        state("idle", stop="end_turn"),  # replaces it: the work's live end
        _resumed(5),
        user("u1"),
    ]
    assert _found(lines) == [("ACC-05", 10)]
    # the window's only state is an idle: the snapshot, which ends no work
    del lines[4]
    assert _found(lines) == []
