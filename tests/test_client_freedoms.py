"""Freedoms of the spec the simulated Client (and the Agent's compaction) take, each proven by a
run of its explore slice that takes it and passes the checker (simulator/peers/client.py,
simulator/peers/agent_background.py).

What is checked, and where the expectation comes from (the rule "every freedom is a choice":
what the spec lets a peer do, the simulated peer may do):

* Cancellation: the Client may cancel the session's foreground work at any time, so also while
  its session/resume of an open session is being answered; the run passes the checker.
* Cancellation: a response can race with session/cancel, and (Lifecycle examples) elicitations
  follow the rules of permissions: under ``answer_held`` (the elicitation slice) the Client may
  answer an elicitation of the work it cancelled at once, before the Agent withdraws it; without
  the feature it holds it until then.
* 2. Prompt accepted: distinct submissions get distinct message IDs even if their content is
  identical, and a retry can create another submission: under ``retry`` (the receipt_order
  slice) the Client's second prompt may repeat its first one's content; the Agent echoes both,
  two user messages with the same content and distinct IDs, and the run passes the checker.
* Session compaction: one compaction_update with status completed is enough (progress and the
  summary are optional): under ``compact_once`` (the compaction slice) the Agent may report a
  compaction by that one update, with its summary or without; the compaction table fires start
  then complete, as the checker reads it.

Must not know: the monitors' internals.
"""

from __future__ import annotations

from typing import Any

from model import compaction as cm
from model import session as sm
from simulator.explore.bfs import SLICE_BY_NAME
from simulator.explore.common import new_monitors
from simulator.peers import wire
from simulator.peers.agent import MAIN
from simulator.peers.client import Client
from simulator.peers.world import World

Event = tuple[str, str, Any]


def _run(slice_name: str, *moves: Event) -> World:
    """A run of a default explore slice: each move taken (it must be enabled), every message
    delivered between moves, then the Agent's first enabled move until it has none; no finding
    on the way or at the end."""
    cfg = SLICE_BY_NAME[slice_name].cfg
    world = World(cfg, monitors=new_monitors(cfg=cfg))

    def deliver() -> None:
        while nets := [e for e in world.enabled() if e[0] == "net"]:
            assert world.step(nets[0]) == []

    for move in moves:
        assert move in world.enabled(), (move, world.enabled())
        assert world.step(move) == []
        deliver()
    while agent := [e for e in world.enabled() if e[0] == "agent"]:
        assert world.step(agent[0]) == []
        deliver()
    assert world.finish() == []
    return world


def _methods(world: World, sender: str) -> list[str]:
    return [m.get("method", "response") for s, m in world.transcript if s == sender]


def _updates(world: World) -> list[dict[str, Any]]:
    """The Agent's session updates, in transcript order."""
    return [
        m["params"]["update"]
        for s, m in world.transcript
        if s == "agent" and m.get("method") == "session/update"
    ]


def _idles(world: World) -> list[Any]:
    """The stop reason of each idle the Agent reported (None: omitted)."""
    return [u.get("stopReason") for u in _updates(world) if u.get("state") == "idle"]


WORKING: tuple[Event, ...] = (
    ("client", "prompt", None),
    ("agent", "insert", 1),
    ("agent", "answer", 1),
    ("agent", "user_message", 1),
    ("agent", "start", None),
)
"""A prompt inserted and answered, its work running."""


def test_the_client_cancels_while_its_resume_is_answered() -> None:
    """Cancellation: the Client may cancel at any time; a resume being answered does not stop it
    (nor a $/cancel_request of a prompt it has no answer for)."""
    client = Client(SLICE_BY_NAME["session"].cfg)
    client.do("prompt", None)
    client.do("resume", False)  # of the open session: attaching again
    assert client.session == sm.RESUMING
    assert {("client", "cancel", None), ("client", "cancel_request", 1)} <= set(client.enabled())

    world = _run("session", *WORKING, ("client", "resume", False), ("client", "cancel", None))
    client_sent = _methods(world, "client")
    assert client_sent[-2:] == ["session/resume", "session/cancel"]  # the cancel races the resume
    assert _idles(world)[0] == "cancelled"


def test_the_client_answers_an_elicitation_racing_its_own_cancel() -> None:
    """A held elicitation (of work the Client cancelled) is answered at once under ``answer_held``
    as a pending one would be; without it, only once the Agent withdraws it."""
    cfg = SLICE_BY_NAME["elicitation"].cfg
    assert "answer_held" in cfg.features
    for features, offered in ((cfg.features, True), (cfg.features - {"answer_held"}, False)):
        client = Client(cfg.with_(features=features))
        client.receive(wire.elicitation_create("elicit_1", MAIN, "form", "el_1"))
        client.do("cancel", None)
        assert client.elicits == (("elicit_1", "form", "held"),)
        assert (("client", "elicit_accept", "elicit_1") in client.enabled()) is offered

    working = (*WORKING, ("agent", "elicit", "form"), ("client", "cancel", None))
    world = _run("elicitation", *working, ("client", "elicit_accept", "elicit_1"))
    order = [m.get("method") or ("answer" if s == "client" else "response") for s, m in world.transcript]
    cancel = order.index("session/cancel")
    assert order[cancel + 1] == "answer"  # the accept reached the Agent after the cancel
    assert _idles(world)[0] == "cancelled"
    updates = [m for s, m in world.transcript if s == "agent" and m.get("method") == "$/cancel_request"]
    assert updates == []  # answered: nothing left to withdraw


def test_a_retry_repeats_the_first_prompts_content() -> None:
    cfg = SLICE_BY_NAME["receipt_order"].cfg
    assert "retry" in cfg.features
    client = Client(cfg)
    client.do("prompt", None)
    assert ("client", "prompt", "same") in client.enabled()
    assert client.do("prompt", "same")[0]["params"]["prompt"] == [wire.text("prompt 1")]
    assert ("client", "prompt", "same") not in client.enabled()  # once per run
    plain = Client(cfg.with_(features=cfg.features - {"retry"}))
    plain.do("prompt", None)
    assert ("client", "prompt", "same") not in plain.enabled()

    world = _run("receipt_order", ("client", "prompt", None), ("client", "prompt", "same"))
    sent = [m["params"]["prompt"] for s, m in world.transcript if m.get("method") == "session/prompt"]
    assert sent == [[wire.text("prompt 1")]] * 2
    users = [u for u in _updates(world) if u.get("sessionUpdate") == "user_message"]
    assert [u["content"] for u in users] == sent  # echoed: identical content
    ids = [
        m["result"]["messageId"]
        for s, m in world.transcript
        if s == "agent" and "messageId" in m.get("result", {})
    ]
    assert len(set(ids)) == 2 and {u["messageId"] for u in users} == set(ids)


def test_a_compaction_reported_by_one_completed_update() -> None:
    cfg = SLICE_BY_NAME["compaction"].cfg
    assert "compact_once" in cfg.features
    for once, summary in (("summary", True), ("bare", False)):
        world = _run("compaction", ("agent", "compact_start", once))
        first = next(u for u in _updates(world) if u["sessionUpdate"].startswith("compaction"))
        assert (first["sessionUpdate"], first["status"], "summary" in first) == (
            "compaction_update",
            "completed",
            summary,
        )  # no in_progress report before it: the one update is the whole report
        assert world.agent.compactions == {"cmp_1": cm.COMPLETED}
    world = World(cfg.with_(features=cfg.features - {"compact_once"}), record=False)
    assert [e for e in world.enabled() if e[1] == "compact_start"] == [("agent", "compact_start", None)]
