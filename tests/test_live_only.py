"""A freedom of the simulated Agent: an inserted user message reported live but not retained
(a locally handled command's live-only message), so a later history replay leaves it out
("replay may omit live-only or discarded messages", 2. Prompt accepted; feature ``live_only``),
and the checker accepts the replay without it."""

from __future__ import annotations

from typing import Any

from properties.engine import MonitorSet
from simulator.peers.config import DEFAULT, OFF_BY_DEFAULT
from simulator.peers.schedulers import scripted

D = "deliver"
LIVE = ("agent", "user_message", (1, "live"))
INSERTED: list[Any] = [("client", "prompt", None), D, ("agent", "insert", 1), ("agent", "start", None)]
LIVE_ONLY = DEFAULT.with_(features=DEFAULT.features | {"live_only"})


def _resumed(first: Any) -> list[Any]:
    """The turn with its user message reported by ``first``, then a close and a resume that asks
    for the replay."""
    return [
        *INSERTED,
        first,
        ("agent", "answer", 1),
        D,
        ("agent", "say", None),
        D,
        ("agent", "end", "end_turn"),
        D,
        ("client", "close", None),
        D,
        ("agent", "close_response", None),
        D,
        ("client", "resume", True),
        D,
        ("agent", "replay", None),
        D,
    ]


def _replayed(run: Any) -> list[str]:
    """The session updates the Agent sent between the resume request and its response."""
    out: list[str] = []
    resuming = False
    for _, m in run.world.transcript:
        if m.get("method") == "session/resume":
            resuming = True
        elif resuming and m.get("method") == "session/update":
            out.append(m["params"]["update"]["sessionUpdate"])
        elif resuming and "result" in m:
            break
    return out


def test_a_live_only_user_message_is_reported_but_left_out_of_the_replay() -> None:
    assert "live_only" in OFF_BY_DEFAULT
    assert LIVE not in scripted(INSERTED, DEFAULT).world.enabled()  # the feature is off
    assert LIVE in scripted(INSERTED, LIVE_ONLY).world.enabled()
    kept = scripted(_resumed(("agent", "user_message", 1)), LIVE_ONLY, frozenset(), MonitorSet())
    assert _replayed(kept) == ["user_message", "agent_message", "state_update"]
    run = scripted(_resumed(LIVE), LIVE_ONLY, frozenset(), MonitorSet())
    live = [m for _, m in run.world.transcript if m.get("method") == "session/update"]
    assert live[1]["params"]["update"]["sessionUpdate"] == "user_message"  # reported live
    assert _replayed(run) == ["agent_message", "state_update"]  # not replayed
    assert LIVE not in run.world.enabled() and not [f for f in run.findings if f.kind == "rule"]
