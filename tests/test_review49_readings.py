"""Review 49: verdicts that hinge on a reading (P7, P8, P9 of that review).

*P9, output-while-requires-action.* The MUST is set off by the work ("Once requires_action is
reported, the Agent MUST report running when progress resumes", Waiting for user action), and the
text orders the pending updates of work against the idle alone ("The Agent MUST send any pending
updates for the foreground work that ended before sending its idle update", 4. Report
completion): a chunk of a message that was already streaming, sent while requires_action is
reported, appends to an entity the work began before it blocked ("Later updates and chunks patch
the entity in place without moving it", Entity IDs). The default is the reading's alternative
``late-chunk``: such a chunk (of a message first seen since the last idle, before requires_action)
is no progress, while content that begins a message after requires_action is (FG-04). The
simulated Agent takes that freedom (a chunk of the message it was streaming). ``pending-output``
(no content is progress), made the default, accepted any content while requires_action, more
than any conforming simulated Agent sends: the decidability search reported FG-04 as a gap in the
checker (the breaking runs of no-resume-running accepted, no conforming twin).

*P8, a hidden insertion dated by user-message-deadline.* Under its default ``resulting-work`` the
report of a prompt received while idle is a pending update of the work reported next: if that
work's idle comes with no user message the prompt could claim, the prompt was not inserted before
it, so a session/cancel received before that idle covered it ("session/cancel covers ... prompts
received before it that the Agent has not yet inserted", Cancellation), and a success answer then
breaks CANCEL-02. The checker kept the inserted state. A prompt received during active work (the
review's case b06, and b28 of P7) may be inserted at once to start the next turn ("What inserting
during active work means, such as steering the current turn or starting the next one, is up to
the Agent", Prompts during active work), which the cancel of the current work does not reach:
those stay without a finding.
"""

from __future__ import annotations

from model import between as bw
from simulator.explore.common import new_monitors
from simulator.peers.config import SMALL
from simulator.peers.schedulers import scripted
from tests.check_support import rule_lines
from tests.wire_dsl import (
    Line,
    answer,
    ask,
    cancel,
    close,
    ok,
    permission_answer,
    prompt,
    say,
    state,
    tool,
    user,
)

OUTPUT = "output-while-requires-action"
DEADLINE = "user-message-deadline"
LATE = {OUTPUT: "late-chunk"}

TURN = [prompt(1), state("running"), user("u1"), answer(1, "u1")]

# c106: a chunk of a message that was streaming before the permission request, sent late
LATE_CHUNK = [
    *TURN,
    say("a1"),
    tool("tc1", "pending", title="x"),
    ask("p1", "tc1"),
    state("requires_action"),
    say("a1"),
    permission_answer("p1", "allow"),
    state("running"),
    tool("tc1", "in_progress"),
    tool("tc1", "completed"),
    state("idle", stop="end_turn"),
]


def _rules(lines: list[Line], **readings: str) -> list[tuple[str, int]]:
    return rule_lines(lines, readings=readings, from_start=True)


def test_a_late_chunk_while_requires_action_is_no_progress_by_default() -> None:
    """c106: the late chunk of a1 (line 9) is the tail of a message begun while running."""
    assert _rules(LATE_CHUNK) == _rules(LATE_CHUNK, **LATE) == []
    assert _rules(LATE_CHUNK, **{OUTPUT: "pending-output"}) == []
    assert _rules(LATE_CHUNK, **{OUTPUT: "progress"}) == [(bw.RUNNING_ON_PROGRESS.rule, 9)]
    # a tool call of the blocked work that runs is progress under every alternative
    running_tool = [*LATE_CHUNK[:8], tool("tc1", "in_progress")]
    for alt in ("late-chunk", "pending-output", "progress"):
        assert _rules(running_tool, **{OUTPUT: alt}) == [(bw.RUNNING_ON_PROGRESS.rule, 9)], alt


def test_content_that_begins_a_message_while_requires_action_is_progress_by_default() -> None:
    """Under late-chunk only the chunk of a begun message is pending output: a chunk under a new
    messageId, a full update of the begun message, and a chunk of a message of the work that
    ended before this one (its idle came since) show progress."""
    fresh = [*LATE_CHUNK[:8], say("a2"), *LATE_CHUNK[9:]]
    assert _rules(fresh, **LATE) == _rules(fresh) == [(bw.RUNNING_ON_PROGRESS.rule, 9)]
    assert _rules(fresh, **{OUTPUT: "pending-output"}) == []
    full = [*LATE_CHUNK[:8], say("a1", chunk=False), *LATE_CHUNK[9:]]
    assert _rules(full) == [(bw.RUNNING_ON_PROGRESS.rule, 9)]
    # a thought is a message of its own type: a chunk of the begun thought is late, one of the
    # thought under the message's ID begins a thought
    thought = [*TURN, say("a1", thought=True), *LATE_CHUNK[5:8], say("a1", thought=True), *LATE_CHUNK[9:]]
    assert _rules(thought) == []
    other_type = [*LATE_CHUNK[:8], say("a1", thought=True), *LATE_CHUNK[9:]]
    assert _rules(other_type) == [(bw.RUNNING_ON_PROGRESS.rule, 9)]
    earlier = [*TURN, say("a0"), state("idle", stop="end_turn"), prompt(2), state("running")]
    earlier += [user("u2"), answer(2, "u2"), ask("p1", "tc9"), state("requires_action"), say("a0")]
    assert _rules(earlier) == [(bw.RUNNING_ON_PROGRESS.rule, 13)]
    # a message first seen while requires_action is reported: its later chunk, after running
    # and a second requires_action, was begun before that one
    again = [*TURN, ask("p1", "tc8"), state("requires_action"), say("a3"), permission_answer("p1", "allow")]
    again += [state("running"), ask("p2", "tc9"), state("requires_action"), say("a3")]
    assert _rules(again) == [(bw.RUNNING_ON_PROGRESS.rule, 7)]


def test_the_simulated_agent_sends_late_chunks_unless_content_is_progress() -> None:
    start = [
        ("client", "prompt", None),
        "deliver",
        ("agent", "insert", 1),
        ("agent", "user_message", 1),
        ("agent", "start", None),
        "deliver",
        ("agent", "say", None),
        ("agent", "tool_ask", None),
    ]
    features = frozenset({"permission", "chunks"})
    cfg = SMALL.with_(features=features, prompts=2, capacity=8, tool_calls=1, outputs=2)
    progress = scripted(start, cfg.with_(readings=((OUTPUT, "progress"),)), frozenset(), settle=False)
    assert ("agent", "pending_say", None) not in progress.world.enabled()
    for alt in ("late-chunk", "pending-output"):
        alt_cfg = cfg.with_(readings=((OUTPUT, alt),))
        run = scripted(start, alt_cfg, frozenset(), settle=False)
        assert ("agent", "pending_say", None) in run.world.enabled(), alt
        late = [*start, ("agent", "pending_say", None)]
        taken = scripted(late, alt_cfg, frozenset(), new_monitors(True, alt_cfg))
        assert [f.rule for f in taken.findings if f.kind == "rule"] == [], alt
        # the chunk say would send, of the message it began: counted in the output bound
        assert taken.world.transcript[-1][1]["params"]["update"] == {
            "sessionUpdate": "agent_message_chunk",
            "messageId": "msg_a_2",  # the agent_message say sent
            "content": {"type": "text", "text": " more"},
        }
    default = scripted(start, cfg, frozenset(), settle=False)
    assert ("agent", "pending_say", None) in default.world.enabled()
    # counted in the output bound, as the chunk say sends is
    spent = scripted(start, cfg.with_(outputs=1), frozenset(), settle=False)
    assert ("agent", "pending_say", None) not in spent.world.enabled()
    # without a message begun by the work, nothing to send late
    bare = [step for step in start if step != ("agent", "say", None)]
    unbegun = scripted(bare, cfg, frozenset(), settle=False)
    assert ("agent", "pending_say", None) not in unbegun.world.enabled()


# P8: prompt 1 received while idle, its work cancelled and ended with no user message of it
COVERED = [prompt(1), state("running"), cancel(), state("idle", stop="cancelled")]


def test_a_prompt_its_works_idle_found_unreported_was_covered_by_the_cancel_before() -> None:
    late = [*COVERED, state("running"), user("u1"), answer(1, "u1"), state("idle", stop="end_turn")]
    assert _rules(late) == [("CANCEL-02", 7)]
    assert _rules(late, **{DEADLINE: "eventually"}) == []
    # the answer it owed: -32800
    withdrawn = [*COVERED, ("agent", {"jsonrpc": "2.0", "id": 1, "error": {"code": -32800, "message": "c"}})]
    assert _rules(withdrawn) == []
    # its user message reported before that idle: it may have been inserted before the cancel
    reported = [prompt(1), state("running"), user("u1"), cancel(), state("idle", stop="cancelled")]
    reported.append(answer(1, "u1"))
    assert _rules(reported) == []
    # no cancel before that idle: inserted after it, the next work is its own
    ended = [prompt(1), state("running"), state("idle", stop="end_turn")]
    later = [*ended, state("running"), user("u1"), answer(1, "u1"), state("idle", stop="end_turn")]
    assert _rules(later) == []
    # a close before that idle: the close rule
    closed = [prompt(1), state("running"), close(9), state("idle", stop="cancelled"), ok(9), answer(1, "u1")]
    assert [r for r, _ in _rules(closed)] == [bw.CLOSE_STOPS_PROMPTS.rule]


def test_a_prompt_received_during_work_may_start_the_next_turn_past_a_cancel() -> None:
    """b06 and b28 of the review keep no finding; the idle-received twin of b06 gets one."""
    b06 = [
        *TURN,
        prompt(2),
        cancel(),
        state("idle", stop="cancelled"),
        state("running"),
        user("u2"),
        answer(2, "u2"),
        state("idle", stop="end_turn"),
    ]
    assert _rules(b06) == []
    b28 = [
        *TURN,
        prompt(2),
        prompt(3),
        state("idle", stop="end_turn"),
        state("running"),
        user("u3"),
        answer(3, "u3"),
        user("u2"),
        answer(2, "u2"),
        state("idle", stop="end_turn"),
    ]
    assert _rules(b28) == []
    # prompt 2 waits at turn 1's idle; its resulting work, turn 2, is cancelled without its report
    twin = [
        *TURN,
        prompt(2),
        state("idle", stop="end_turn"),
        state("running"),
        cancel(),
        state("idle", stop="cancelled"),
        state("running"),
        user("u2"),
        answer(2, "u2"),
    ]
    # (a prompt that waited at an idle, not received during it: the reading's text judges only
    # one received while idle was reported)
    assert _rules(twin) == []
    idle_received = [*TURN, state("idle", stop="end_turn"), prompt(2), *twin[6:]]
    assert _rules(idle_received) == [("CANCEL-02", 12)]
