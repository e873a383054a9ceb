"""Freedoms the simulated Agent takes so that a conforming run can send what a seeded bug's run
sends (issue 31, the decidability report's gap notes): stopping work that waits on the user,
repeating the stop reason a resume's snapshot left out, failing without an error field while
the session closes, work starting or ending unseen while unknown is reported (and a session/close
then answered with the state still unknown)."""

from __future__ import annotations

from typing import Any

from properties.engine import MonitorSet
from simulator.peers.config import DEFAULT
from simulator.peers.schedulers import scripted

D = "deliver"
START: list[Any] = [
    ("client", "prompt", None),
    D,
    ("agent", "insert", 1),
    ("agent", "start", None),
    ("agent", "user_message", 1),
    ("agent", "answer", 1),
    D,
]
ASKED = [*START, ("agent", "tool_ask", None), D]
STOPS = DEFAULT.with_(features=DEFAULT.features | {"stop"})


def updates(run: Any, kind: str) -> list[dict[str, Any]]:
    return [
        m["params"]["update"]
        for s, m in run.world.transcript
        if m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == kind
    ]


def test_work_waiting_on_a_permission_request_may_stop_on_its_own() -> None:
    """The Agent may stop at any point: the call that waited is cancelled before the idle, its
    request is no longer waited on, a late approval is ignored, and the checker accepts it all."""
    assert not [e for e in scripted(ASKED, DEFAULT).world.enabled() if e[1] == "stop"]  # feature off
    before = scripted(ASKED, STOPS)
    assert ("agent", "end", "end_turn") not in before.world.enabled()  # blocked: nothing ends it
    assert ("agent", "stop", "end_turn") in before.world.enabled()
    script = [*ASKED, ("agent", "stop", "end_turn"), D, ("client", "allow", "perm_1"), D]
    run = scripted(script, STOPS, frozenset(), MonitorSet())
    tools = updates(run, "tool_call_update")
    assert [t["status"] for t in tools] == ["pending", "cancelled"]
    assert updates(run, "state_update")[-1] == {
        "sessionUpdate": "state_update",
        "state": "idle",
        "stopReason": "end_turn",
    }
    assert run.world.agent.perms["perm_1"] == "selected"  # answered late, after the work ended
    assert run.world.agent.tools["tc_1"][0] == "cancelled"  # and not run
    assert not [f for f in run.findings if f.kind == "rule"]


def test_a_call_refused_may_be_cancelled_by_stopping_the_work() -> None:
    script = [*ASKED, ("client", "deny", "perm_1"), D]
    run = scripted(script, STOPS)
    assert ("agent", "stop", "end_turn") in run.world.enabled()
    allowed = scripted([*ASKED, ("client", "allow", "perm_1"), D], STOPS)
    assert not [e for e in allowed.world.enabled() if e[1] == "stop"]  # an approved call runs


def test_the_stop_reason_a_resume_left_out_may_be_repeated_once() -> None:
    ended = [*START, ("agent", "end", "end_turn"), D]
    idle = scripted(ended, DEFAULT)
    assert ("agent", "restate_idle", "end_turn") not in idle.world.enabled()
    resumed = [*ended, ("client", "resume", True), D, ("agent", "replay", None), D]
    run = scripted(resumed, DEFAULT)
    assert updates(run, "state_update")[-1].get("stopReason") is None  # the snapshot left it out
    assert ("agent", "restate_idle", "end_turn") in run.world.enabled()
    again = scripted([*resumed, ("agent", "restate_idle", "end_turn"), D], DEFAULT, frozenset(), MonitorSet())
    assert updates(again, "state_update")[-1]["stopReason"] == "end_turn"
    assert not [e for e in again.world.enabled() if e[1] == "restate_idle"]  # once per run
    assert not [f for f in again.findings if f.kind == "rule"]


def test_work_may_fail_without_an_error_field_while_the_session_closes() -> None:
    """The close came while unknown was reported: the work may have failed on its own before."""
    cfg = DEFAULT.with_(features=DEFAULT.features | {"bare_error"})
    observed = scripted([*START, ("client", "close", None), D], cfg)
    assert ("agent", "end", "error") not in observed.world.enabled()  # the close confirms its end
    run = scripted([*START, ("agent", "lose", None), D, ("client", "close", None), D], cfg)
    assert run.world.agent.session == "closing" and ("agent", "end", "error") in run.world.enabled()
    assert ("agent", "end_bare_error", None) in run.world.enabled()


def test_work_of_its_own_may_start_unseen_while_unknown_is_reported() -> None:
    """Unknown is a loss of observability: the Agent's own work may start without running being
    reported, and end with its idle; the checker accepts it. Its own user message is then not
    offered (model.between own_user_message: the wire never showed its work start)."""
    cfg = DEFAULT.with_(features=DEFAULT.features | {"goal", "unseen"}, readings={})
    shown = scripted([("agent", "lose", None), D], cfg)
    assert ("agent", "start_goal", "unseen") in shown.world.enabled()
    assert ("agent", "start_goal", "unseen") not in scripted([], cfg).world.enabled()  # idle is seen
    script = [("agent", "lose", None), D, ("agent", "start_goal", "unseen"), D]
    started = scripted(script, cfg)
    assert started.world.agent.real == "running" and started.world.agent.reported == "unknown"
    assert not [e for e in started.world.enabled() if e[1] == "synthetic_user"]
    seen = scripted([("agent", "lose", None), D, ("agent", "start_goal", None), D], cfg)
    assert ("agent", "synthetic_user", None) in seen.world.enabled()  # its start was reported
    run = scripted([*script, ("agent", "end", "end_turn"), D], cfg, frozenset(), MonitorSet())
    assert [u["state"] for u in updates(run, "state_update")][-2:] == ["unknown", "idle"]
    assert not [f for f in run.findings if f.kind == "rule"]


UNSEEN_END = DEFAULT.with_(features=DEFAULT.features | {"stop", "unseen_end"})


def test_work_may_end_unseen_while_unknown_is_reported_and_the_close_be_answered_then() -> None:
    """Unknown is a loss of observability, and a later snapshot "restores a known state without
    implying that work started or ended while it was unobservable": work blocked on a permission
    request may stop unseen while unknown is reported (its call cancelled, its request no longer
    waited on, no idle sent), a session/close received then may be answered with the state still
    unknown, and the resume's idle snapshot shows the work over; the checker accepts it all."""
    lost = [*ASKED, ("agent", "lose", None), D, ("client", "close", None), D]
    unseen = ("agent", "stop", ("end_turn", "unseen"))
    assert unseen not in scripted(lost, STOPS).world.enabled()  # feature off
    assert unseen in scripted(lost, UNSEEN_END).world.enabled()
    # a cancel that reached the work while requires_action was reported owes the confirming idle
    # (model.between snapshot_leaves_cancel): no unseen end, and no close response before it
    cancelled = [*ASKED, ("client", "cancel", None), D, ("agent", "lose", None), D]
    cancelled += [("client", "close", None), D]
    covered = scripted(cancelled, UNSEEN_END)
    assert ("agent", "end", "cancelled") in covered.world.enabled()  # the idle confirming it
    assert not [e for e in covered.world.enabled() if e[1] == "close_response" or "unseen" in str(e[2])]
    ended = scripted([*lost, unseen, D], UNSEEN_END)
    agent = ended.world.agent
    assert (agent.real, agent.reported, agent.last_stop) == ("idle", "unknown", "end_turn")
    assert ("agent", "close_response", None) in ended.world.enabled()  # still unknown
    assert ("agent", "close_response", None) not in scripted(lost, UNSEEN_END).world.enabled()
    script = [*lost, unseen, D, ("agent", "close_response", None), D]
    script += [("client", "allow", "perm_1"), D, ("client", "resume", False), D, ("agent", "resync", None), D]
    run = scripted(script, UNSEEN_END, frozenset(), MonitorSet())
    assert [t["status"] for t in updates(run, "tool_call_update")] == ["pending", "cancelled"]
    states = [(u["state"], u.get("stopReason")) for u in updates(run, "state_update")]
    assert states[-3:] == [("requires_action", None), ("unknown", None), ("idle", None)]
    assert run.world.agent.tools["tc_1"][0] == "cancelled"  # the late approval is not used
    assert not [f for f in run.findings if f.kind == "rule"]
    assert ("agent", "restate_idle", "end_turn") in run.world.enabled()  # the snapshot left it out


def test_work_started_after_an_unseen_end_reads_as_restored_and_sends_no_own_user_message() -> None:
    """After work ended unseen, running reported next reads as the unknown restored (the same
    work, for all the wire shows): the Agent's own work then sends no user message of its own
    (model.between own_user_message, as for work started unseen)."""
    cfg = DEFAULT.with_(features=DEFAULT.features | {"goal", "unseen_end"})
    script = [*START, ("agent", "lose", None), D, ("agent", "end", ("end_turn", "unseen")), D]
    script += [("agent", "start_goal", None), D]
    run = scripted(script, cfg)
    assert run.world.agent.real == run.world.agent.reported == "running"
    assert not [e for e in run.world.enabled() if e[1] == "synthetic_user"]
    shown = scripted([*START, ("agent", "end", "end_turn"), D, ("agent", "start_goal", None), D], cfg)
    assert ("agent", "synthetic_user", None) in shown.world.enabled()  # its start was seen


OWN_TEXT = DEFAULT.with_(features=DEFAULT.features | {"goal", "own_text"}, readings={})


def test_its_own_user_message_may_come_later_in_its_own_work_with_any_text() -> None:
    """Feature own_text: the Agent's own user message (no prompt waiting) also after its work's
    other output, with its own text or a received prompt's (content is the Agent's choice:
    "Clients must not infer the association from content"); the checker accepts it. Without the
    feature only as the work's first output (decidability's REJ-02 witness, seed 108, needs it)."""
    script = [*START, ("agent", "end", "end_turn"), D, ("agent", "start_goal", None), D]
    script += [("agent", "say", None), D]
    later = [e for e in scripted(script, OWN_TEXT).world.enabled() if e[1] == "synthetic_user"]
    assert later == [("agent", "synthetic_user", None), ("agent", "synthetic_user", 1)]
    narrow = OWN_TEXT.with_(features=OWN_TEXT.features - {"own_text"})
    assert not [e for e in scripted(script, narrow).world.enabled() if e[1] == "synthetic_user"]
    for how in (None, 1):
        run = scripted([*script, ("agent", "synthetic_user", how), D], OWN_TEXT, frozenset(), MonitorSet())
        [own] = [u for u in updates(run, "user_message") if u["messageId"].startswith("msg_x")]
        assert own["content"][0]["text"] == ("continue" if how is None else "prompt 1")
        assert not [f for f in run.findings if f.kind == "rule"]


def test_with_own_text_its_own_user_message_may_come_in_a_prompts_work_once_answered() -> None:
    """review48 problem 2: model.between own_user_message allows the Agent's own user message in
    work a prompt started once no prompt waits (the default of unaccounted-user-message), but not
    in a refused prompt's hook work. Under own_text (the twins') the simulated Agent takes it
    (decidability's REJ-02 witness, seed 120, a message after a refusal during prompt 1's work,
    needs it) and the checker accepts it; not while the prompt waits, nor without own_text."""
    narrow = OWN_TEXT.with_(features=OWN_TEXT.features - {"own_text"})
    refused = [*START, ("client", "prompt", None), D, ("agent", "reject", 2), D]
    for script in (START, refused):
        assert ("agent", "synthetic_user", None) in scripted(script, OWN_TEXT).world.enabled()
        assert not [e for e in scripted(script, narrow).world.enabled() if e[1] == "synthetic_user"]
        run = scripted(
            [*script, ("agent", "synthetic_user", None), D, ("agent", "end", "end_turn"), D],
            OWN_TEXT,
            frozenset(),
            MonitorSet(),
        )
        assert not [f for f in run.findings if f.kind == "rule"]
    waiting = START[:-2]  # prompt 1 not answered yet
    hook = [("client", "prompt", None), D, ("agent", "start", None), D, ("agent", "reject", 1), D]
    for script in (waiting, hook):
        assert not [e for e in scripted(script, OWN_TEXT).world.enabled() if e[1] == "synthetic_user"]
