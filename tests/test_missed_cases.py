"""The cases issue 31 found the checker missing, each as a small hand-made transcript.

Each transcript was worked out from the spec text (the section is cited per test), not by
running the checker: "Missed on hand-made cases" (a snapshot sent before the replay the Client
asked for, whose messages carry IDs the checker never saw; an update, inside a resume window, of
an entity first seen in that window; a local command answered end_turn with no state update)
and "Missed on a real adapter" (a permission approved under requires_action whose tool call
completes, the work going to idle without running being reported).

Must not know: the monitors' internals.
"""

from __future__ import annotations

from typing import Any

from tests.check_support import check_lines as check
from tests.check_support import errors
from tests.wire_dsl import (
    answer,
    ask,
    compaction,
    created,
    new_session,
    ok,
    permission_answer,
    prompt,
    resume,
    say,
    state,
    terminal,
    tool,
    user,
)

Line = tuple[str, dict[str, Any]]
TURN = [prompt(1), state("running"), user("u1"), answer(1, "u1"), say("a1")]


# -- a snapshot before the requested replay, the replay under IDs never seen ---------------------
def test_replayed_user_message_with_an_unseen_id_after_the_snapshot() -> None:
    """Initial state and synchronization: the snapshot follows any requested replay and precedes
    the resume response. A user message under a new ID after an idle snapshot, no prompt left to
    insert, is history sent after the snapshot: the response, with no snapshot after it, breaks
    SYNC-02. A snapshot sent before the replay as well breaks nothing ("Agents MAY repeat
    current-state snapshots", State transitions) when another follows the replay (review47 cases
    60, 161)."""
    assert errors(check([resume(7), state("idle"), user("u9"), ok(7)])) == [("SYNC-02", 4)]
    for first in ("idle", "running"):
        again = [resume(7), state(first), user("u9"), say("a9"), state("idle", stop="end_turn"), ok(7)]
        assert check(again, complete=True).findings == []


def test_replayed_agent_message_with_an_unseen_id_after_the_snapshot() -> None:
    """The same with the Agent's own message: after an idle snapshot no work runs to produce it
    live, so a message or thought under an ID the session never showed is replayed history."""
    for line in (say("a9", chunk=False), say("t9", thought=True)):
        assert errors(check([resume(7), state("idle"), line, ok(7)])) == [("SYNC-02", 4)]
    # in the right order, or while the snapshot reports work running, nothing is wrong
    assert errors(check([resume(7), say("a9", chunk=False), state("idle"), ok(7)], complete=True)) == []
    running = [prompt(1), resume(7), state("running"), user("u1"), answer(1, "u1"), say("a9"), ok(7)]
    assert "SYNC-02" not in [r for r, _ in errors(check(running))]
    # without a requested replay there is no replay to be late
    no_replay = [resume(7, replay=False), state("idle"), say("a9", chunk=False), ok(7)]
    assert "SYNC-02" not in [r for r, _ in errors(check(no_replay))]


# -- a prompt held from before a resume, inserted inside its window ------------------------------
def test_a_held_prompt_inserted_inside_a_resume_window_is_live() -> None:
    """Prompts during active work: "The Agent either inserts the prompt right away or holds it
    and inserts it later". A prompt received before a session/resume that asked for no replay may
    be inserted inside its window: its user message there is its live report, since the window
    holds no replay ("following any requested history replay", Initial state and
    synchronization; review47 cases 226, 231). In a window that asked for a replay it is the
    reading resume-replay-window's case."""
    opened = [new_session(0), created(0), prompt(1), state("running")]
    for replay in (False, True):
        held = [*opened, resume(7, replay=replay), user("u1"), state("running"), ok(7), answer(1, "u1")]
        early = [*opened, resume(7, replay=replay), user("u1"), answer(1, "u1"), state("running"), ok(7)]
        for lines in (held, early):
            lines = [*lines, state("idle", stop="end_turn")]
            assert check(lines, complete=True, resume_replay_window="known-ids").findings == []
            # (under the default, both findings name the reading, and ACC-05 says where the
            # message came: only inside the window)
            found = [
                (f.rule, f.readings, "inside a resume window" in f.explanation)
                for f in check(lines, complete=True).findings
            ]
            window = ("resume-replay-window",)
            deadline = ("user-message-deadline", *window)  # (ACC-05 at the idle ending its work)
            assert found == ([] if not replay else [("ACC-11", window, False), ("ACC-05", deadline, True)])
    # asked for a replay, with no prompt left waiting: a new ID there is a renamed replay
    renamed = [new_session(0), created(0), *TURN, state("idle", stop="end_turn"), resume(7), user("u9")]
    assert errors(check([*renamed, state("idle"), ok(7)], complete=True)) == [("ACC-11", 10)]


# -- an entity first seen inside a resume window ---------------------------------------------------
def test_an_entity_first_seen_in_a_window_is_live_there() -> None:
    """Session compaction / Initial state and synchronization: a compaction first seen in the
    window and completed before the resume response has completed (no COMPACT-05 at the end of
    a complete transcript); a terminal first seen there and exited there has exited."""
    lines = [resume(7), compaction("c1"), compaction("c1", "completed"), state("idle"), ok(7)]
    assert check(lines, complete=True).findings == []
    term = [resume(7), terminal("term_1"), terminal("term_1", 0), state("idle", bg=[]), ok(7)]
    assert errors(check(term, complete=True)) == []


def test_an_entity_known_before_the_window_is_replayed_there() -> None:
    """A compaction that completed before the window and is re-sent in progress there is history,
    not a reopened compaction (COMPACT-03)."""
    known = [compaction("c1"), compaction("c1", "completed")]
    assert check([*known, resume(7), compaction("c1"), state("idle"), ok(7)], complete=True).findings == []


# -- a local command answered without the foreground lifecycle -----------------------------------
def test_a_local_command_answered_end_turn_with_no_state_update() -> None:
    """Work boundaries and local commands: an accepted prompt, a local command included, MUST be
    handled with the foreground lifecycle (running, then idle); an idle snapshot sent while idle
    is a repeated snapshot, not a completion. Owed by the end: a finding of a complete
    transcript, information otherwise."""
    lines = [prompt(1), user("u1"), answer(1, "u1"), state("idle", stop="end_turn")]
    assert errors(check(lines)) == []
    assert [f.rule for f in check(lines).open] == ["BOUND-02"]
    assert errors(check(lines, complete=True)) == [("BOUND-02", 4)]
    handled = [prompt(1), state("running"), user("u1"), answer(1, "u1"), state("idle", stop="end_turn")]
    assert errors(check(handled, complete=True)) == []


# -- a real adapter: approved under requires_action, never running again -----------------------------
def test_an_approved_tool_call_that_completes_under_requires_action() -> None:
    """3. Agent reports output / Waiting for user action: after requires_action the Agent MUST
    report running when progress resumes. The tool call is first seen in the permission
    request's subject (applied like a tool_call_update); approved, it completes: the blocked
    work progressed with requires_action still reported."""
    lines = [
        *TURN[:4],
        ask("p1", "t1"),
        state("requires_action"),
        permission_answer("p1", "allow"),
        tool("t1", "completed"),
        state("idle", stop="end_turn"),
    ]
    assert errors(check(lines)) == [("FG-04", 8)]
    resumed = [*lines[:7], state("running"), tool("t1", "in_progress"), tool("t1", "completed")]
    assert errors(check([*resumed, state("idle", stop="end_turn")], complete=True)) == []
