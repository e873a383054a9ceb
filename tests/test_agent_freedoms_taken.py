"""Freedoms the spec gives the Agent that the simulated Agent takes (the review of stop 46:
each an enabled move of the Agent in the state the spec allows it, and fired by an exhaustive
slice of ``acp-model explore``): content after receiving session/cancel."""

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
