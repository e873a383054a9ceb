"""The simulated Client chooses from its machine tables (simulator/peers/client.py).

What is checked, and where the expectation comes from (issue 15, design point 3: the simulated
peers' choices are the tables' enabled rows; seeded bugs are small named deviations):

* A variant that adds a client row to the session table (a session/resume while a close is
  unanswered) makes the Client offer that move, in the World too; without it, it does not. A
  second session/close while closing is a row of the spec's table: the Client offers it.
* A variant that removes the Client's select row from pending leaves only the cancelled outcome
  for a pending request; once the Agent withdraws the request the Client follows it (the
  table then gives it other moves) and may select again (the permission table's rows from
  withdrawn).
* Each move fires the table: a move the table refuses raises the cell's rule.
* The order of the enabled events (what seeded walks pick from) is the one the explorers' figures
  were measured with.
* Deviations: each seeded client fault is one entry of ``simulator.peers.deviations`` applied by
  generic code (a message rewrite, or a move offered from a state where the conforming Client
  does not take it).

Must not know: the Agent's internals.
"""

from __future__ import annotations

from typing import Any

import pytest

from model import session as sm
from model.core import ClientViolation
from properties.variants import from_data, tables_of
from simulator.analysis.mutants import BY_NAME as MUTANTS
from simulator.peers import deviations, wire
from simulator.peers.agent import MAIN
from simulator.peers.client import Client, follows_withdrawals
from simulator.peers.config import DEFAULT
from simulator.peers.world import World

SESSION = DEFAULT.with_(features=frozenset({"cancel", "close", "resume", "permission"}), closes=2)
CLOSE = ("client", "close", None)
RESUME = ("client", "resume", True)


def resumes_while_closing() -> Any:
    row = {"machine": "session", "trigger": "resume", "source": "closing", "dest": "resuming"}
    return from_data({"title": "resume while closing", "add_row": [row]}, "v.toml", "v")


def test_an_added_session_row_is_a_move_the_client_offers() -> None:
    plain = Client(SESSION)
    plain.do("close", None)
    assert plain.session == sm.CLOSING
    assert RESUME not in plain.enabled()

    varied = Client(SESSION.with_(variant=resumes_while_closing()))
    varied.do("close", None)
    assert RESUME in varied.enabled()
    assert [m["method"] for m in varied.do("resume", True)] == ["session/resume"]
    assert varied.session == sm.RESUMING


def test_a_second_close_is_a_move_of_the_spec() -> None:
    """No rule forbids another session/close while closing: the session table has the row, and
    the Client takes it within ``Config.closes``."""
    client = Client(SESSION)
    client.do("close", None)
    assert CLOSE in client.enabled()
    client.do("close", None)
    assert client.session == sm.CLOSING and CLOSE not in client.enabled()  # closes=2 spent


def test_the_world_offers_the_added_row_to_the_explorers() -> None:
    for variant, offered in ((None, False), (resumes_while_closing(), True)):
        world = World(SESSION.with_(variant=variant), record=False)
        world.step(CLOSE)
        assert (RESUME in world.enabled()) is offered


def test_a_removed_permission_row_is_a_move_the_client_no_longer_offers() -> None:
    row = {"machine": "permission", "trigger": "select", "source": "pending", "dest": "selected"}
    variant = from_data({"title": "pending requests are only dismissed", "remove_row": [row]}, "v.toml", "v")
    asked = wire.request_permission("perm_1", MAIN, "t1")

    plain = Client(SESSION)
    plain.receive(asked)
    assert [e for e in plain.enabled() if e[2] == "perm_1"] == [
        ("client", "allow", "perm_1"),
        ("client", "deny", "perm_1"),
        ("client", "dismiss", "perm_1"),
    ]
    assert not follows_withdrawals(tables_of(None))  # the spec's table: withdrawn moves = pending's

    client = Client(SESSION.with_(variant=variant))
    client.receive(asked)
    assert [e for e in client.enabled() if e[2] == "perm_1"] == [("client", "dismiss", "perm_1")]
    with pytest.raises(ClientViolation) as refused:
        client.do("allow", "perm_1")
    assert refused.value.removed and refused.value.rule == "INTRO-02"
    client.receive(wire.cancel_request("perm_1"))  # the Agent withdraws it: select is a row again
    assert sorted(e[1] for e in client.enabled() if e[2] == "perm_1") == ["allow", "deny", "dismiss"]
    assert client.do("allow", "perm_1") == [wire.permission_selected("perm_1", "allow")]
    assert client.perms == ()


def test_each_move_fires_the_session_table() -> None:
    client = Client(SESSION)
    client.do("close", None)
    with pytest.raises(ClientViolation) as refused:
        client.do("resume", True)
    assert (refused.value.rule, refused.value.state) == (
        tables_of(None)["session"].rule_of("closing", "resume"),
        "closing",
    )
    client.receive(wire.result(1, {}))  # the close response: the table's closing --closed--> closed
    assert client.session == sm.CLOSED
    client.do("resume", True)
    assert (client.session, client.resumes, client.reattaches) == (sm.RESUMING, 1, 0)
    client.receive(wire.result(2, {}))  # the resume response: synced --resumed--> open
    assert client.session == sm.OPEN


def test_the_enabled_events_keep_their_order() -> None:
    client = Client(SESSION)
    client.do("prompt", None)
    client.receive(wire.request_permission("perm_1", MAIN, "t1"))
    assert client.enabled() == [
        ("client", "prompt", None),
        CLOSE,
        ("client", "cancel", None),
        ("client", "cancel_request", 1),
        ("client", "allow", "perm_1"),
        ("client", "deny", "perm_1"),
        ("client", "dismiss", "perm_1"),
        ("client", "resume", True),
        ("client", "resume", False),
    ]


def test_every_client_mutant_is_a_deviation_with_its_rule() -> None:
    client_side = [d for d in deviations.DEVIATIONS if d.side == "client"]
    assert client_side
    for deviation in client_side:
        mutant = MUTANTS[deviation.name]
        assert isinstance(deviation, deviations.Offer | deviations.Rewrite)
        assert (mutant.side, mutant.intended_rule) == ("client", deviation.rule)


def test_a_rewrite_deviation_rewrites_the_message_and_marks_its_rule() -> None:
    conforming = Client(SESSION).do("prompt", None)
    assert conforming[0]["params"]["prompt"] == [wire.text("prompt 1")]
    for fault, content, rule in (
        ("empty-prompt", [], "USER-01"),
        ("image-without-capability", [wire.image()], "USER-03"),
    ):
        client = Client(SESSION, frozenset({fault}))
        assert client.do("prompt", None)[0]["params"]["prompt"] == content
        assert client.marks == (rule,)


def test_an_offered_move_deviation_offers_it_where_the_client_would_not() -> None:
    prompt = ("client", "prompt", None)
    for faults, offered in ((frozenset(), False), (frozenset({"prompt-during-resume"}), True)):
        client = Client(SESSION, faults)
        client.do("resume", False)
        assert client.session == sm.RESUMING
        assert (prompt in client.enabled()) is offered
    client.do("prompt", None)
    assert client.marks == ("INTRO-01",)
    client.receive(wire.result(1, {}))  # the resume response: now the prompt conforms
    client.do("prompt", None)
    assert client.marks == ("INTRO-01",)


def test_the_variant_notes_say_what_the_client_gains() -> None:
    from simulator.explore.variant_runs import notes

    said = notes(resumes_while_closing())
    assert said == [
        "row added (session: closing --resume--> resuming): the simulated client offers it as a move "
        "(within its bounds); the checker's monitors fire the changed table"
    ]


def test_only_the_response_to_its_latest_session_request_moves_the_client() -> None:
    """Under a variant that lets the Client resume while its close is unanswered, the close's
    response does not end the resume (before, any response not to a prompt did); neither does a
    second response to a prompt."""
    row = {"machine": "session", "trigger": "resume", "source": "closing", "dest": "resuming"}
    variant = from_data({"title": "resume while closing", "add_row": [row]}, "v.toml", "v")
    client = Client(SESSION.with_(variant=variant))
    client.do("prompt", None)
    client.receive(wire.result(1, {"messageId": "u1"}))
    client.do("close", None)
    assert ("client", "resume", True) in client.enabled()  # the added row, within Config.resumes
    client.do("resume", True)
    for late in (wire.result(1, {"messageId": "u1"}), wire.result(2, {})):  # prompt again, close
        client.receive(late)
        assert client.session == sm.RESUMING
    client.receive(wire.result(3, {}))
    assert (client.session, client.asked) == (sm.OPEN, None)
