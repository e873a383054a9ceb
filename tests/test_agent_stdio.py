"""``acp-model agent``: the simulated Agent over stdio (in process, and one real process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from properties.engine import MonitorSet
from simulator.peers import wire
from simulator.peers.stdio_agent import StdioAgent
from tests.check_support import run_cli

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "cli"]


def _line(msg: dict[str, Any]) -> bytes:
    return wire.json_line(msg).encode()[:-1]


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
    second = agent.receive(_line(wire.new_session("c")))  # a session of its own
    assert second == [wire.session_created("c", "sess_3")]


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b"not json", -32700),
        (b"[]", -32600),  # an empty batch
        (b'{"jsonrpc": "2.0", "id": 5, "method": "nope", "params": {}}', -32601),
        (_line(wire.prompt(7, "sess_9", [wire.text("hi")])), -32002),  # no such session
        (_line(wire.request(8, "session/prompt", {"sessionId": "sess_1", "prompt": "hi"})), -32602),
        (
            _line(wire.request(9, "session/resume", {"sessionId": "sess_1", "cwd": "/w", "replayFrom": {}})),
            -32602,
        ),
        (_line(wire.request(10, "session/new", {})), -32602),  # cwd is required
        (_line(wire.request(11, "session/new", {"cwd": "relative/dir"})), -32602),
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
    agent = _ready(5, frozenset({"held-not-withdrawn"}))  # a seed that tries the move (about half do)
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
    script = (
        b"".join(wire.json_line(m).encode() for m in (wire.initialize(0), wire.new_session(1))) + b"garbage\n"
    )
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


# -- readings and variants -------------------------------------------------------------------------


def _agent(argv: list[str]) -> StdioAgent:
    """The Agent ``acp-model agent ARGV`` serves (its options parsed as the command does)."""
    from cli import cmd_agent
    from cli.main import build_parser

    agent, _said = cmd_agent.build(build_parser().parse_args(["agent", *argv]))
    return agent


def test_the_agent_under_a_variant_breaks_a_dropped_rule(tmp_path: Path) -> None:
    """``--variant`` dropping TRANS-04: the Agent may confirm a cancellation with end_turn (the
    rule's seeded bug). Its transcript breaks TRANS-04 for ``check``, not for ``check --variant``."""
    from simulator.harness.drive import Settings, run_once
    from tests.scripted_client import TURN_TIMEOUT, InProcessPeer

    variant = str(ROOT / "variants" / "cancel-any-stop-reason.toml")
    settings = Settings(steps=40, timeout=TURN_TIMEOUT, silence=0.0)
    for seed in range(60):
        result = run_once(InProcessPeer(_agent(["--variant", variant])), settings, seed=seed)
        if "TRANS-04" in result.rules:
            break
    else:
        raise AssertionError("TRANS-04 never broken under the variant")
    path = tmp_path / "t.ndjson"
    path.write_bytes(b"".join(result.lines))
    rules = []
    for options in ([], ["--variant", variant]):
        _code, out, _ = run_cli(["check", "--json", *options, str(path)])
        report = json.loads(out)
        rules.append({f["rule"] for f in report["files"][0]["findings"]})
    assert "TRANS-04" in rules[0] and "TRANS-04" not in rules[1]
    assert rules[1] == rules[0] - {"TRANS-04"}  # the run ended there: prompts still open
    assert report["variant"]["set_aside"] == {"TRANS-04": 1}
    for seed in range(20):  # the spec as written: the same driving never breaks it
        plain = run_once(InProcessPeer(_agent([])), settings, seed=seed)
        assert "TRANS-04" not in plain.rules


def test_the_agent_takes_the_freedoms_of_a_reading() -> None:
    """A prompt may be inserted ahead of a held one (``prompt-ahead-of-held=held-only``, the
    default), not under ``--reading prompt-ahead-of-held=receipt-order``."""
    moves = []
    for argv in ([], ["--reading", "prompt-ahead-of-held=receipt-order"]):
        agent = _agent(["--seed", "0", *argv])
        agent.receive(_line(wire.initialize(0)))
        agent.receive(_line(wire.new_session(1)))
        agent.receive(_line(wire.prompt(2, "sess_1", [wire.text("a")])))
        agent.agent.do("hold", 2)
        agent.receive(_line(wire.prompt(3, "sess_1", [wire.text("b")])))
        moves.append(("agent", "insert", 3) in agent.moves())
    assert moves == [True, False]


def test_a_removed_row_is_no_move_of_the_agent() -> None:
    """``--variant`` removing tool_call pending --complete--> completed: the Agent's tool-call
    moves are the variant's table rows, so that move is never offered (nothing to prune and
    nothing refused: no note); without the variant some seed offers it."""
    variant = str(ROOT / "variants" / "tool-runs-before-completing.toml")
    assert _agent(["--variant", variant]).agent.prune and not _agent([]).agent.prune
    move = ("agent", "tool_status", ("tc_1", "completed"))

    def offered(args: list[str]) -> bool:
        for seed in range(40):
            agent = _agent(["--seed", str(seed), *args])
            agent.receive(_line(wire.initialize(0)))
            agent.receive(_line(wire.new_session(1)))
            agent.receive(_line(wire.prompt(2, "sess_1", [wire.text("a")])))
            while agent.agent.tools.get("tc_1", ("pending",))[0] == "pending":
                if move in agent.agent.enabled():
                    return True
                if agent.move() is None:
                    break
            assert agent.notes == []
        return False

    assert offered([]) and not offered(["--variant", variant])


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--reading", "nope=x"], "unknown reading 'nope'"),
        (["--reading", "prompt-ahead-of-held"], "prompt-ahead-of-held"),
        (["--variant", "/no/such.toml"], "/no/such.toml: no such file"),
        (["--drop", "NOPE-1"], "--drop NOPE-1: unknown rule"),
    ],
)
def test_a_bad_reading_or_variant_is_one_line_exit_2(argv: list[str], said: str) -> None:
    code, out, err = run_cli(["agent", *argv])
    assert code == 2 and out == "" and err.count("\n") == 1 and said in err, err
