"""Step labels of a counterexample say what was sent (issue 35): a seeded bug's message differs
from the move the model made, and the label says how."""

from __future__ import annotations

from simulator.peers.config import DEFAULT
from simulator.peers.schedulers import describe
from simulator.peers.steps import difference, step_labels
from simulator.peers.world import Event

CANCELLED: list[Event] = [
    ("client", "prompt", None),
    ("net", "to_agent", 0),
    ("agent", "start_blocked", None),
    ("client", "cancel", None),
    ("net", "to_agent", 0),
    ("agent", "end", "cancelled"),
]


def test_a_rewritten_field_is_named_in_the_label() -> None:
    labels = step_labels(CANCELLED, DEFAULT, frozenset({"cancel-as-end-turn"}))
    assert labels[-1] == "agent.end('cancelled') [sent: stopReason 'end_turn']"
    assert labels[:-1] == [describe(ev) for ev in CANCELLED[:-1]]


def test_without_faults_the_labels_are_the_events() -> None:
    assert step_labels(CANCELLED, DEFAULT, frozenset()) == [describe(ev) for ev in CANCELLED]


def test_a_message_left_out_or_repeated_is_counted() -> None:
    started: list[Event] = [("client", "prompt", None), ("net", "to_agent", 0), ("agent", "start", None)]
    labels = step_labels(started, DEFAULT, frozenset({"no-running-on-start"}))
    assert labels[-1] == "agent.start [sent nothing (meant 1 message(s))]"
    a = {"params": {"update": {"messageId": "m1", "x": 1}}}
    assert difference([a], [a, a]) == "sent 2 message(s), meant 1"
    assert difference([a], [{"params": {"update": {"x": 2}}}]) == "sent: x 2, no messageId"
    assert difference([a], [a]) == ""
