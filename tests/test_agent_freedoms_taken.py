"""Freedoms the spec gives the Agent that the simulated Agent takes (the review of stop 46:
each an enabled move of the Agent in the state the spec allows it, and fired by an exhaustive
slice of ``acp-model explore``): content after receiving session/cancel; repeated
current-state snapshots; background work started while idle; background work failing."""

from __future__ import annotations

from collections import Counter
from typing import Any

from properties.engine import MonitorSet
from simulator.explore import bfs
from simulator.peers.config import DEFAULT, MAX_STATES
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
CANCELLED = [*START, ("client", "cancel", None), D]


def _with(*features: str) -> Any:
    return DEFAULT.with_(features=DEFAULT.features | set(features))


def _fired(slice_name: str) -> Counter[tuple[str, bool, str]]:
    """Every edge of the slice's search (monitors off: they gate no move), counted by the
    Agent's move and its state at the edge's source: (move, carrying out a cancel, the
    foreground state it reported)."""
    parts, s = bfs.search_states(bfs.SLICE_BY_NAME[slice_name].cfg, frozenset(), MAX_STATES, keep_edges=True)
    agents = parts.agent.reps
    found: Counter[tuple[str, bool, str]] = Counter()
    for src, event in zip(s.src, s.edge_event, strict=True):
        if event[0] == "agent":
            a = agents[s.states[src][0]]
            found[(event[1], a.cancelling, a.reported)] += 1
    return found


def _updates(run: Any) -> list[str]:
    return [
        m["params"]["update"]["sessionUpdate"]
        for _, m in run.world.transcript
        if m.get("method") == "session/update"
    ]


def test_content_may_follow_the_cancel_before_its_idle() -> None:
    """Cancellation: the Agent may still send content after receiving session/cancel, before the
    idle that reports the cancellation (feature ``cancel_output``: one output per cancellation);
    the checker accepts it, and without the feature the Agent sends none."""
    assert ("agent", "say", None) not in scripted(CANCELLED, DEFAULT).world.enabled()
    cfg = _with("cancel_output", "thought", "plan")
    cancelling = scripted(CANCELLED, cfg).world.enabled()
    assert {("agent", m, None) for m in ("say", "think", "plan")} <= set(cancelling)
    script = [*CANCELLED, ("agent", "say", None), D]
    flushed = scripted(script, cfg)
    assert not {e for e in flushed.world.enabled() if e[1] in ("say", "think", "plan")}  # once
    run = scripted([*script, ("agent", "end", "cancelled"), D], cfg, frozenset(), MonitorSet())
    assert _updates(run)[-2:] == ["agent_message", "state_update"]
    assert not [f for f in run.findings if f.kind == "rule"]
    assert "flushed" not in run.world.agent.extras  # the bound is per cancellation


def test_the_cancels_slice_sends_content_while_a_cancel_is_carried_out() -> None:
    fired = _fired("cancels")
    assert fired[("say", True, "running")] > 0


def test_the_state_reported_may_be_repeated_once_per_stretch() -> None:
    """State transitions: an Agent may repeat a current-state snapshot (feature ``snapshot``):
    the initial idle after the session/new response, idle after a prompt was sent (no completion
    of it), running while a cancel is carried out (no new work), requires_action (no new block);
    once per stretch of the state reported, again after a transition; the checker accepts each."""
    cfg = _with("snapshot")
    repeat = ("agent", "repeat", None)
    assert repeat not in scripted([], DEFAULT, settle=False).world.enabled()
    assert repeat in scripted([], cfg, settle=False).world.enabled()  # the optional initial idle
    sent = [("client", "prompt", None), D]
    asked = [*START, ("agent", "tool_ask", None), D]
    for script in (sent, CANCELLED, asked):
        before = scripted(script, cfg)
        assert repeat in before.world.enabled()
        shown = before.world.agent.reported
        run = scripted([*script, repeat, D], cfg, frozenset(), MonitorSet())
        last = [m for _, m in run.world.transcript if m.get("method") == "session/update"][-1]
        assert last["params"]["update"] == {"sessionUpdate": "state_update", "state": shown}
        assert repeat not in run.world.enabled()  # once per stretch
        assert not [f for f in run.findings if f.kind == "rule"]
    ended = scripted(
        [*CANCELLED, repeat, D, ("agent", "end", "cancelled"), D], cfg, frozenset(), MonitorSet()
    )
    assert repeat in ended.world.enabled()  # a new stretch: idle
    assert not [f for f in ended.findings if f.kind == "rule"]


def test_slices_repeat_running_during_a_cancel_and_requires_action() -> None:
    assert _fired("cancels")[("repeat", True, "running")] > 0
    assert _fired("cancels")[("repeat", False, "idle")] > 0
    assert _fired("answers")[("repeat", False, "requires_action")] > 0


def test_a_background_tool_call_of_its_own_may_start_while_idle() -> None:
    """Background work: the Agent may start a tool call of its own for background work and list
    it, even while the session is idle (feature ``bg_idle``; also while requires_action); a
    prompt then arrives into a session with live background work, and the checker accepts it."""
    start = ("agent", "bg_start", "tool_call")
    assert start not in scripted([], DEFAULT.with_(features=DEFAULT.features | {"bg_tool"})).world.enabled()
    cfg = _with("bg_idle")
    assert start in scripted([], cfg).world.enabled()
    asked = [*START, ("agent", "tool_ask", None), D]
    assert scripted(asked, cfg).world.agent.real == "requires_action"
    assert start in scripted(asked, cfg).world.enabled()
    bg = ("tool_call", "tc_bg_1")
    script = [start, ("agent", "bg_list", bg), D, *START, ("agent", "end", "end_turn"), D]
    script += [("agent", "bg_finish", bg), ("agent", "bg_unlist", bg), D]
    run = scripted(script, cfg, frozenset(), MonitorSet())
    assert _updates(run)[:2] == ["tool_call_update", "state_update"]  # announced, then listed, idle
    assert not [f for f in run.findings if f.kind == "rule"]


def test_the_bg_requests_slice_starts_background_work_while_idle() -> None:
    assert _fired("bg_requests")[("bg_start", False, "idle")] > 0


def test_background_work_may_fail_while_the_agent_is_idle() -> None:
    """Failures: a background failure while the Agent is idle is no stop reason (feature
    ``bg_fail``): a terminal exits with code 1, a tool call fails, the child's work ends with
    the error stop reason; the session stays idle, and the checker accepts each."""
    features = ("terminal", "bg_tool", "subagent")
    for kind, ident in (("terminal", "term_1"), ("tool_call", "tc_bg_1"), ("subagent", "sess_2")):
        key = (kind, ident)
        cfg = _with(*features, "bg_fail")
        listed = [*START, ("agent", "bg_start", kind), D, ("agent", "bg_list", key), D]
        script = [*listed, ("agent", "end", "end_turn"), D]
        assert ("agent", "bg_fail", key) not in scripted(script, _with(*features)).world.enabled()
        assert ("agent", "bg_fail", key) in scripted(script, cfg).world.enabled()
        run = scripted(
            [*script, ("agent", "bg_fail", key), ("agent", "bg_unlist", key), D],
            cfg,
            frozenset(),
            MonitorSet(),
        )
        assert not [f for f in run.findings if f.kind == "rule"], kind
        sent = [m["params"] for _, m in run.world.transcript if m.get("method") == "session/update"]
        failed = sent[-2 if kind != "subagent" else -3]["update"]
        outcome = {"terminal": ("exitStatus", {"exitCode": 1}), "tool_call": ("status", "failed")}
        if kind == "subagent":
            assert failed["stopReason"] == "error" and sent[-3]["sessionId"] == "sess_2"
        else:
            assert failed[outcome[kind][0]] == outcome[kind][1]
        main = [
            p["update"]
            for p in sent
            if p["sessionId"] == "sess_1" and p["update"]["sessionUpdate"] == "state_update"
        ]
        assert main[-1] == {"sessionUpdate": "state_update", "state": "idle", "background": []}


def test_the_background_slice_fails_background_work_while_idle() -> None:
    assert _fired("background")[("bg_fail", False, "idle")] > 0
