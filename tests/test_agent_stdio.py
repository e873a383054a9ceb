"""``acp-model agent``: the simulated Agent over stdio (in process, and one real process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from properties.engine import MonitorSet
from simulator import wire
from simulator.stdio_agent import StdioAgent, encode
from tests.check_support import run_cli

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "cli"]


def _line(msg: dict[str, Any]) -> bytes:
    return encode(msg)[:-1]


def _ready(seed: int = 0, faults: frozenset[str] = frozenset()) -> StdioAgent:
    agent = StdioAgent(seed, faults)
    assert agent.receive(_line(wire.initialize(0)))[0]["result"]["protocolVersion"] == 2
    assert agent.receive(_line(wire.new_session(1))) == [wire.session_created(1, "sess_1")]
    return agent


def test_handshake_and_moves_wait_for_the_session() -> None:
    agent = StdioAgent(3)
    assert agent.moves() == []  # nothing before session/new
    assert agent.receive(_line(wire.initialize("a"))) == [wire.initialized("a")]
    assert agent.moves() == []
    agent.receive(_line(wire.new_session("b")))
    assert agent.moves()  # e.g. a notice or a usage update may now be sent
    second = agent.receive(_line(wire.new_session("c")))
    assert second[0]["error"]["code"] == wire.INTERNAL_ERROR


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b"not json", -32700),
        (b"[1, 2]", -32600),
        (b'{"jsonrpc": "2.0", "id": 5, "method": "nope", "params": {}}', -32601),
        (_line(wire.prompt(7, "sess_9", [wire.text("hi")])), wire.INVALID_PARAMS),
        (_line(wire.request(8, "session/prompt", {"sessionId": "sess_1", "prompt": "hi"})), -32602),
        (_line(wire.resume(9, "sess_1", False)), wire.INVALID_PARAMS),  # the session is open
    ],
)
def test_what_the_model_never_receives_is_refused(line: bytes, code: int) -> None:
    agent = _ready()
    answers = agent.receive(line)
    assert len(answers) == 1 and answers[0]["error"]["code"] == code
    assert agent.agent.prompts == {}  # nothing reached the model


def test_unknown_notifications_and_stray_responses_are_ignored() -> None:
    agent = _ready()
    assert agent.receive(_line(wire.notification("_vendor/ping", {"sessionId": "sess_1"}))) == []
    assert agent.receive(_line(wire.result("perm_99", {"outcome": {"outcome": "cancelled"}}))) == []
    assert agent.receive(_line(wire.result("perm_98", {"outcome": "weird"}))) == []


def test_prompt_reuses_id_of_pending_prompt_is_refused() -> None:
    agent = _ready()
    assert agent.receive(_line(wire.prompt(4, "sess_1", [wire.text("one")]))) == []
    again = agent.receive(_line(wire.prompt(4, "sess_1", [wire.text("two")])))
    assert again[0]["error"]["code"] == wire.INVALID_PARAMS


def _session(seed: int, faults: frozenset[str] = frozenset()) -> list[tuple[str, dict[str, Any]]]:
    """A prompt, the agent's moves to quiescence (permissions allowed), a close: the transcript."""
    agent = StdioAgent(seed, faults)
    lines: list[tuple[str, dict[str, Any]]] = []

    def send(msg: dict[str, Any]) -> None:
        lines.append(("client", msg))
        for answer in agent.receive(_line(msg)):
            lines.append(("agent", answer))

    send(wire.initialize(0))
    send(wire.new_session(1))
    send(wire.prompt(2, "sess_1", [wire.text("hello there")]))
    for _ in range(200):
        out = agent.move()
        if out is None:
            break
        for msg in out:
            lines.append(("agent", msg))
            if msg.get("method") == "session/request_permission":
                send(wire.permission_selected(msg["id"], "allow"))
    send(wire.close(3, "sess_1"))
    for _ in range(200):
        out = agent.move()
        if out is None:
            break
        lines.extend(("agent", m) for m in out)
    return lines


def _rules(lines: list[tuple[str, dict[str, Any]]]) -> set[str]:
    ms = MonitorSet()
    found = [f for i, (s, m) in enumerate(lines, 1) for f in ms.feed(s, m, i)]
    found += ms.finish(quiescent=True)
    return {f.rule for f in found if f.kind == "rule"}


@pytest.mark.parametrize("seed", range(8))
def test_a_whole_session_in_process_is_clean(seed: int) -> None:
    lines = _session(seed)
    assert _rules(lines) == set()
    answers = [m for s, m in lines if s == "agent" and m.get("id") in (2, 3)]
    assert len(answers) == 2  # the prompt and the close were answered
    # a full user message echoes what the client sent
    echoed = [
        m["params"]["update"]["content"]
        for s, m in lines
        if m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == "user_message"
    ]
    assert all(c == [wire.text("hello there")] for c in echoed)


def test_same_seed_same_output() -> None:
    assert _session(5) == _session(5)
    assert _session(5) != _session(6)


def test_a_seeded_bug_shows_on_the_wire() -> None:
    caught = [
        seed for seed in range(10) if "FG-02" in _rules(_session(seed, frozenset({"no-running-on-start"})))
    ]
    assert caught


def test_a_move_the_model_refuses_is_not_sent() -> None:
    agent = _ready(0, frozenset({"held-not-withdrawn"}))
    agent.receive(_line(wire.prompt(2, "sess_1", [wire.text("x")])))
    agent.receive(_line(wire.cancel("sess_1")))  # covers the prompt before insertion
    sent = []
    for _ in range(50):
        out = agent.move()
        if out is None:
            break
        sent.extend(out)
    answers = [m for m in sent if m.get("id") == 2]
    assert answers and answers[0]["error"]["code"] == wire.REQUEST_CANCELLED
    assert any("refused by the model" in n for n in agent.notes)


def test_the_command_answers_and_exits_at_end_of_input() -> None:
    script = b"".join(encode(m) for m in (wire.initialize(0), wire.new_session(1))) + b"garbage\n"
    done = subprocess.run(
        [*CLI, "agent", "--seed", "1", "--pace", "50"],
        input=script,
        capture_output=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert out[:3] == [
        wire.initialized(0),
        wire.session_created(1, "sess_1"),
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}},
    ]
    assert b"Traceback" not in done.stderr


def test_unknown_fault_is_a_usage_error() -> None:
    code, out, err = run_cli(["agent", "--fault", "no-such-bug"], stdin=b"")
    assert code == 2
    assert out == "" and err.count("\n") == 1 and "no-such-bug" in err
