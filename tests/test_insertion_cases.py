"""Insertion breaches issue 31's decidability report found the checker accepting, as hand-made
transcripts, and the simulated Agent's side of the same declarations.

Each transcript was worked out from the spec text (section cited per test): the user message of
a prompt received while idle is owed before the idle ending its resulting work, and closing does
not discharge it (``model.between`` USER_MESSAGE_REPORTED, ACC-05, reading
``user-message-deadline``); a user message no waiting prompt accounts for is the Agent's own only
for work it started itself (``model.between`` OWN_USER_MESSAGE, REJ-02 / ACC-06, reading
``unaccounted-user-message=agent-initiated``).

Must not know: the monitors' internals.
"""

from __future__ import annotations

from typing import Any

from model import prompt as prm
from model.between import SPEC as BETWEEN
from simulator.peers.agent import Agent
from simulator.peers.config import DEFAULT
from tests.check_support import check_lines as check
from tests.check_support import errors
from tests.wire_dsl import answer, close, fail, ok, prompt, resume, say, state, user

Line = tuple[str, dict[str, Any]]


# -- ACC-05: the user message before the idle ending the prompt's resulting work ------------------
def test_idle_ending_the_work_of_a_prompt_answered_but_never_reported() -> None:
    """2. Prompt accepted / 4. Report completion: the prompt was received while idle, its work
    ran, it was answered with success, and the work's idle came with no user_message: a pending
    update of the work was never sent before its idle (decidability's ACC-05 witness)."""
    lines = [state("idle"), prompt(1), state("running"), answer(1, "u1"), state("idle", stop="refusal")]
    assert errors(check(lines)) == [("ACC-05", 5)]
    assert errors(check(lines, user_message_deadline="eventually")) == []
    assert errors(check([*lines[:4], user("u1"), lines[4]])) == []  # reported in time


def test_answered_before_the_work_started_is_judged_at_its_idle_too() -> None:
    lines = [state("idle"), prompt(1), answer(1, "u1"), state("running"), state("idle", stop="end_turn")]
    assert errors(check(lines)) == [("ACC-05", 5)]


def test_the_same_work_through_an_unknown_stretch() -> None:
    """State transitions: the work ends only with an idle, so running, unknown, running is one
    work, and its idle owes the report."""
    lines = [state("idle"), prompt(1), state("running"), answer(1, "u1"), state("unknown")]
    assert errors(check([*lines, state("running"), state("idle", stop="end_turn")])) == [("ACC-05", 7)]


def test_a_prompt_received_during_active_work_is_not_judged_at_that_idle() -> None:
    """Prompts during active work: inserting during active work may start the next turn, whose
    idle is later; only a complete transcript shows the report never came."""
    lines = [state("idle"), prompt(1), state("running"), user("u1"), answer(1, "u1")]
    lines += [prompt(2), answer(2, "u2"), state("idle", stop="end_turn")]
    assert errors(check(lines)) == []
    assert errors(check(lines, complete=True)) == [("ACC-05", 8)]


def test_closing_does_not_discharge_the_report() -> None:
    """2. Prompt accepted: an inserted prompt gets its messageId response when closing stops
    the session, and the Agent MUST report the inserted user message: no sentence exempts a
    closed session (the checker exempted it before)."""
    lines = [state("idle"), prompt(1), answer(1, "u1"), close(2), ok(2)]
    assert errors(check(lines, complete=True)) == [("ACC-05", 5)]
    assert errors(check([*lines[:3], user("u1"), *lines[3:]], complete=True)) == []


def test_a_replayed_copy_is_not_the_live_report() -> None:
    """2. Prompt accepted: every inserted input is reported live; a resume replaying the
    message does not report it live."""
    lines = [state("idle"), prompt(1), answer(1, "u1"), close(2), ok(2), resume(3)]
    lines += [user("u1"), state("idle"), ok(3)]
    assert ("ACC-05", 9) in errors(check(lines, complete=True))
    live = [*lines[:3], user("u1"), *lines[3:]]
    assert [e for e in errors(check(live, complete=True)) if e[0] == "ACC-05"] == []


# -- REJ-02 / ACC-06: a user message no prompt accounts for ---------------------------------------
def test_a_user_message_after_a_rejection_with_no_work_following() -> None:
    """Prompts that are never inserted: no user-message update for a rejected submission. Under
    agent-initiated a user message no prompt waits for may be the Agent's own insertion, but
    only for work it starts itself: the next state is idle again, so it is not."""
    lines = [state("idle"), prompt(1), fail(1, -32602), user("u9")]
    assert errors(check([*lines, state("idle")])) == [("REJ-02", 5)]
    assert errors(check(lines)) == []  # the work may still start
    assert errors(check(lines, complete=True)) == [("REJ-02", 4)]


def test_a_user_message_in_the_hook_work_of_the_rejected_prompt() -> None:
    """Insertion and ordering: running before insertion is the prompt's own (a hook); the prompt
    waited uninserted when the work started (it was refused), so the work is not the Agent's own
    and the user message reports the rejected submission."""
    lines = [state("idle"), prompt(1), state("running"), fail(1, -32602), user("u9")]
    assert errors(check([*lines, state("idle", stop="error")])) == [("REJ-02", 5)]


def test_the_agents_own_insertion_in_work_it_started_itself_conforms() -> None:
    """Foreground and background work: agent-initiated work needs no session/prompt."""
    own = [state("idle"), state("running"), user("x1"), say("a1"), state("idle", stop="end_turn")]
    assert errors(check(own, complete=True)) == []
    before = [state("idle"), user("x1"), state("running"), state("idle", stop="end_turn")]
    assert errors(check(before, complete=True)) == []  # inserted just before its work starts


def test_work_after_a_prompt_inserted_while_idle_is_that_prompts() -> None:
    """The user message reported under another ID than the response returned, while idle, then
    the prompt's work: the report is missing at its idle (ACC-05) and the other ID is no
    insertion of the Agent's own (decidability's ACC-06 witness)."""
    lines = [state("idle"), prompt(1), answer(1, "u1"), user("u1_x"), state("running")]
    assert errors(check([*lines, state("idle", stop="end_turn")])) == [("ACC-06", 5), ("ACC-05", 6)]


# -- the simulated Agent: the same declarations ---------------------------------------------------
def _answered_unreported() -> Agent:
    agent = Agent(DEFAULT)
    agent.prompts[1] = (prm.ANSWERED, "msg_u_1", False, False, "", False)
    return agent


def test_the_agent_answers_a_close_only_after_reporting_the_user_message() -> None:
    agent = _answered_unreported()
    agent.receive({"jsonrpc": "2.0", "id": 2, "method": "session/close", "params": {"sessionId": "sess_1"}})
    assert ("agent", "close_response", None) not in agent.enabled()
    assert ("agent", "user_message", 1) in agent.enabled()
    agent.do("user_message", 1)
    assert ("agent", "close_response", None) in agent.enabled()


def test_the_agent_reports_the_user_message_before_a_cancelled_idle() -> None:
    agent = _answered_unreported()
    agent.do("start", None)
    agent.receive({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "sess_1"}})
    assert not [e for e in agent.enabled() if e[1] == "end"]
    agent.do("user_message", 1)
    assert ("agent", "end", "cancelled") in agent.enabled()


def test_the_declarations_executed() -> None:
    assert BETWEEN.user_messages_owed(["msg_u_1"]) and not BETWEEN.user_messages_owed([])
    assert BETWEEN.own_user_message("active", True) is True
    assert BETWEEN.own_user_message("active", False) is True  # no prompt waits: any work
    assert BETWEEN.own_user_message("active", False, refused_work=True) is False
    assert BETWEEN.own_user_message("active", False, True) is False  # a prompt waits
    assert BETWEEN.own_user_message("idle", False) is None
    assert BETWEEN.own_user_message("other", True) is True
