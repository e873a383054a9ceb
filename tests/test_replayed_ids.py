"""A user message ID a session/resume replayed counts as used (review50 N3, case r10).

"2. Prompt accepted": "Agents MUST assign distinct message IDs to distinct inserted submissions,
even if their content is identical", and "If the message is retained and replayed, the Agent
MUST use the same ID": a replayed user message is retained, inserted input under its ID. A
prompt received after that replay is another submission, so a success returning the replayed
ID reuses it (ACC-09; the Client "reconciles with that existing message", merging the new
prompt into history). A prompt received before the replay may be the very message replayed
(held and inserted before the resume), so returning its ID is no reuse.

Must not know: the monitors' internals.
"""

from __future__ import annotations

from model import between as bw
from tests.check_support import check_lines as check
from tests.check_support import errors
from tests.wire_dsl import answer, initialize, initialized, ok, prompt, resume, say, state, user

_RESUMED = [initialize(0), initialized(0), resume(1), user("u1"), say("a1", chunk=False)]
"""A new connection resumes s1 asking for a replay: user message u1 (line 4) is history."""
_SNAPSHOT = [state("idle", stop="end_turn"), ok(1)]


def test_the_model_counts_a_replayed_id_as_an_earlier_submissions() -> None:
    assert bw.SPEC.returned_id_breach("u1", {}, 0, 9, replayed=4) is bw.DISTINCT_MESSAGE_IDS
    assert bw.SPEC.returned_id_breach("u1", {}, 10, 9, replayed=4) is bw.DISTINCT_MESSAGE_IDS
    assert bw.SPEC.returned_id_breach("u1", {}, 0, 9, replayed=12) is None  # received before it
    assert bw.SPEC.returned_id_breach("u1", {}, 0, 9) is None


def test_a_new_prompt_answered_with_a_replayed_id_reuses_it() -> None:
    """r10: the new prompt "new" is inserted as u1 again and answered u1 (an adapter numbering
    messages per process)."""
    live = [prompt(2), state("running"), user("u1"), answer(2, "u1"), state("idle", stop="end_turn")]
    report = check([*_RESUMED, *_SNAPSHOT, *live], complete=True)
    assert errors(report) == [("ACC-09", 11)]
    assert "replayed at line 4" in report.findings[0].explanation
    fresh = [prompt(2), state("running"), user("u2"), answer(2, "u2"), state("idle", stop="end_turn")]
    assert errors(check([*_RESUMED, *_SNAPSHOT, *fresh], complete=True)) == []


def test_a_prompt_received_before_the_replay_may_be_the_replayed_message() -> None:
    """A capture that starts mid-connection: prompt 5 is received, then the Client resumes the
    session; the replay re-sends u1, which may be prompt 5's message (inserted before the resume),
    and the success returns it: no reuse."""
    lines = [
        prompt(5), resume(1), user("u1"), state("idle", stop="end_turn"), ok(1), answer(5, "u1"),
        user("u1"),
    ]  # fmt: skip
    assert [rule for rule, _ in errors(check(lines))] == []
