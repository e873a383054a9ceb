"""The entity machine runs on both sides, and the rows and freedoms added with it (issues 31, 32).

- ``properties.observe.entity_step`` is the one reading of an entity update (which (type, ID),
  which trigger); the checker fires the entity table with it, the simulated Agent steps it with
  every update it sends, and the explorers' coverage counts the rows;
- the rows: a custom tool-call status, a permission request answered with a JSON-RPC error, a
  session/close or a second session/resume while a resume is answered;
- the freedoms, each a move of the simulated peers behind its feature.

Must not know: the monitors' internals beyond the findings they report.
"""

from __future__ import annotations

from typing import Any

import pytest

from model import permission as pm
from model import session as sm
from model import toolcall as tcm
from properties.engine import MonitorSet
from properties.observe import entity_step
from simulator.peers import wire
from simulator.peers.agent import Agent
from simulator.peers.client import Client
from simulator.peers.config import SMALL
from tests.wire_dsl import tool


@pytest.mark.parametrize(
    ("update", "step"),
    [
        ({"sessionUpdate": "agent_message", "messageId": "m", "content": [wire.text("x")]},
         ("agent_message m", "upsert_content")),
        ({"sessionUpdate": "agent_message", "messageId": "m", "_meta": {"k": 1}},
         ("agent_message m", "upsert_keep")),
        ({"sessionUpdate": "user_message", "messageId": "m", "content": None},
         ("user_message m", "upsert_clear")),
        ({"sessionUpdate": "agent_thought_chunk", "messageId": "m", "content": wire.text("x")},
         ("agent_thought m", "chunk")),
        ({"sessionUpdate": "compaction_update", "compactionId": "c", "status": "in_progress", "summary": []},
         ("compaction c", "upsert_clear")),
        ({"sessionUpdate": "terminal_update", "terminalId": "t"}, ("terminal t", "upsert_keep")),
        ({"sessionUpdate": "plan_update", "plan": {"type": "items", "planId": "p", "entries": []}},
         ("plan p", "upsert_content")),
        ({"sessionUpdate": "tool_call_content_chunk", "toolCallId": "t", "content": {}},
         ("tool_call t", "chunk")),
        ({"sessionUpdate": "state_update", "state": "idle"}, None),
        ({"sessionUpdate": "agent_message", "content": []}, None),
    ],
)  # fmt: skip
def test_an_entity_update_names_its_entity_and_trigger(update: dict[str, Any], step: Any) -> None:
    assert entity_step(update) == step


def test_the_agent_steps_the_entity_table_with_what_it_sends() -> None:
    """A thought streamed first, then the message under the thought's ID: two entities, one ID."""
    agent = Agent(SMALL.with_(features=frozenset({"chunks", "thought"}), outputs=3))
    agent.receive(wire.prompt(1, "sess_1", [wire.text("hi")]))
    for name, arg in (("insert", 1), ("start", None), ("think", None), ("say", None)):
        agent.do(name, arg)
    assert agent.entities == {
        ("sess_1", "agent_thought msg_t_2"): "with_content",
        ("sess_1", "agent_message msg_t_2"): "with_content",
    }


def _findings(lines: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, int | None]]:
    ms = MonitorSet()
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    ms.finish(quiescent=True)
    return [(f.rule, f.line) for f in ms.findings if f.kind == "rule"]


def test_a_custom_tool_status_reads_as_in_progress_and_never_reopens() -> None:
    """The schema: a Client treats a tool call with an unrecognised status as still in progress;
    a final status is not reopened (BG-05, a SHOULD NOT), a custom one included."""
    assert tcm.status_trigger("_queued") == "custom_status" and tcm.status_trigger("later") is None
    assert tcm.SPEC.fire(tcm.PENDING, "custom_status") == tcm.IN_PROGRESS
    live = [tool("t1", "pending"), tool("t1", "_queued"), tool("t1", "completed")]
    assert _findings(live) == []
    assert _findings([*live, tool("t1", "_queued")]) == [("BG-05", 4)]


def test_a_permission_answered_with_an_error_is_declined() -> None:
    """A JSON-RPC error instead of a result approves nothing: the request is errored, its tool
    call is treated as declined (it never runs)."""
    assert pm.SPEC.fire(pm.PENDING, "error") == pm.ERRORED
    agent = Agent(SMALL.with_(features=frozenset({"permission"})))
    agent.receive(wire.prompt(1, "sess_1", [wire.text("hi")]))
    agent.do("insert", 1)
    sent = agent.do("start_blocked", None)
    rid = next(m["id"] for m in sent if m.get("method") == "session/request_permission")
    agent.receive(wire.error(rid, wire.INTERNAL_ERROR, "prompt failed"))
    assert agent.perms[rid] == pm.ERRORED and agent.tools["tc_1"][3] == "denied"


def test_a_client_answers_a_permission_with_an_error_only_with_the_feature() -> None:
    for features, offered in (
        (frozenset({"permission"}), False),
        (frozenset({"permission", "perm_error"}), True),
    ):
        client = Client(SMALL.with_(features=features))
        client.receive(wire.request_permission("perm_1", "sess_1", "tc_1"))
        assert (("client", "fail_answer", "perm_1") in client.enabled()) is offered


@pytest.mark.parametrize("second", ["close", "resume"])
def test_a_resume_interrupted_by_a_close_or_a_second_resume_is_refused_first(second: str) -> None:
    """session/close or another session/resume while a resume is answered: the Agent answers
    the resume that cannot succeed with an error before it sends anything else."""
    agent = Agent(SMALL.with_(features=frozenset({"close", "resume", "overlap"})))
    agent.receive(wire.resume(7, "sess_1", True))
    agent.receive(wire.close(8, "sess_1") if second == "close" else wire.resume(8, "sess_1", False))
    refused = 7 if second == "close" else 8
    assert agent.enabled() == [("agent", "refuse_resume", None)]
    (answer,) = agent.do("refuse_resume", None)
    assert answer["id"] == refused and answer["error"]["code"] == wire.INVALID_REQUEST
    assert agent.session == (sm.CLOSING if second == "close" else sm.RESUMING)
