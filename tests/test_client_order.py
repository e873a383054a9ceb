"""The order of a transcript's Client lines (``properties.engine``, "Client order"; review51 F1).

A proxy (``record``, ``drive``) writes a Client line when it passes, so an Agent line recorded
after a ``session/cancel`` may have been written before the Agent read it. Under
``--client-order forwarded`` a finding that needs the Agent to have read such a line is a
suspicion until the Agent answers a Client request recorded at or after it; in the Agent's
receive order (the default, and every simulated run) it stays a breach.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from properties.checking import check_stream
from properties.engine import MonitorSet
from properties.findings import Finding
from tests.check_support import error, line, notification, request, result, run_cli, update

S = "s1"
HELLO = [{"type": "text", "text": "go"}]


def _state(state: str, reason: str | None = None) -> bytes:
    body: dict[str, Any] = {"sessionUpdate": "state_update", "state": state}
    if reason is not None:
        body["stopReason"] = reason
    if reason == "error":
        body["error"] = {"code": -32603, "message": "model request failed"}
    return line("agent", update(S, body))


def _thought() -> bytes:
    thought = {"sessionUpdate": "agent_thought_chunk", "messageId": "t1", "content": HELLO[0]}
    return line("agent", update(S, thought))


def _f1(reason: str, proof: bool = False) -> list[bytes]:
    """A prompt's work runs; the Client cancels; the Agent ends the work with ``reason``.
    ``proof``: before that idle the Agent answers a Client request recorded after the cancel."""
    lines = [
        line("client", request(1, "session/prompt", {"sessionId": S, "prompt": HELLO})),
        line("agent", update(S, {"sessionUpdate": "user_message", "messageId": "u1", "content": HELLO})),
        _state("running"),
        line("client", notification("session/cancel", {"sessionId": S})),  # line 4
    ]
    if proof:
        lines += [
            line("client", request(2, "session/list", {})),
            line("agent", result(2, {"sessions": []})),
        ]
    lines += [
        _thought(),
        _state("idle", reason),
        line("agent", result(1, {"messageId": "u1"})),
    ]
    return lines


def _covered(proof: bool = False) -> list[bytes]:
    """A second prompt arrives while work runs, the Client cancels, the Agent refuses that
    prompt with -32602 (a covered prompt owes -32800: CANCEL-02)."""
    lines = [
        line("client", request(1, "session/prompt", {"sessionId": S, "prompt": HELLO})),
        line("agent", update(S, {"sessionUpdate": "user_message", "messageId": "u1", "content": HELLO})),
        _state("running"),
        line("client", request(2, "session/prompt", {"sessionId": S, "prompt": HELLO})),
        line("client", notification("session/cancel", {"sessionId": S})),  # line 5
    ]
    if proof:
        lines += [
            line("client", request(3, "session/list", {})),
            line("agent", result(3, {"sessions": []})),
        ]
    lines += [
        line("agent", error(2, -32602, "prompt rejected")),
        _state("idle", "cancelled"),
        line("agent", result(1, {"messageId": "u1"})),
    ]
    return lines


def _judge(lines: list[bytes], order: str) -> list[Finding]:
    report = check_stream(
        io.BytesIO(b"".join(lines)), "t.ndjson", monitors=MonitorSet(client_order=order), complete=True
    )
    return [f for f in report.findings if f.kind in ("rule", "suspect")]


def _about(findings: list[Finding], rules: tuple[str, ...]) -> list[tuple[str, str, int | None]]:
    return [(f.rule, f.kind, f.line) for f in findings if f.rule in rules]


CANCEL_RULES = ("TRANS-04", "CANCEL-12", "CANCEL-02")


@pytest.mark.parametrize(("reason", "rule"), [("end_turn", "TRANS-04"), ("error", "CANCEL-12")])
def test_an_idle_that_may_have_crossed_the_cancel_is_suspected_when_forwarded(reason: str, rule: str) -> None:
    received = _judge(_f1(reason), "received")
    assert _about(received, CANCEL_RULES) == [(rule, "rule", 6)]
    forwarded = _judge(_f1(reason), "forwarded")
    assert _about(forwarded, CANCEL_RULES) == [(rule, "suspect", 6)]
    (found,) = [f for f in forwarded if f.rule == rule]
    assert found.severity == "warning"
    assert "a breach if line 4 reached the Agent before it sent line 6" in found.explanation
    # nothing else follows from it (the monitors' state stays sensible after that idle)
    assert [f for f in forwarded if f.rule != rule] == [f for f in received if f.rule != rule]


@pytest.mark.parametrize(("reason", "rule"), [("end_turn", "TRANS-04"), ("error", "CANCEL-12")])
def test_an_answer_to_a_later_request_proves_the_cancel_was_read(reason: str, rule: str) -> None:
    for order in ("received", "forwarded"):
        assert _about(_judge(_f1(reason, proof=True), order), CANCEL_RULES) == [(rule, "rule", 8)], order


def test_a_prompt_withdrawn_with_32800_proves_the_cancel_was_read() -> None:
    """Only a stop lets the Agent answer a waiting prompt -32800 (the prompt table's withdraw):
    that answer, recorded before the idle, shows the cancel read."""
    lines = _f1("end_turn")
    lines[3:3] = [line("client", request(2, "session/prompt", {"sessionId": S, "prompt": HELLO}))]
    lines[5:5] = [line("agent", error(2))]  # line 6, after the cancel at line 5
    for order in ("received", "forwarded"):
        assert _about(_judge(lines, order), CANCEL_RULES) == [("TRANS-04", "rule", 8)], order


def test_a_covered_prompt_refused_before_any_proof_is_suspected() -> None:
    assert _about(_judge(_covered(), "received"), CANCEL_RULES) == [("CANCEL-02", "rule", 6)]
    forwarded = _judge(_covered(), "forwarded")
    assert _about(forwarded, CANCEL_RULES) == [("CANCEL-02", "suspect", 6)]
    assert "a breach if line 5 reached the Agent before it sent line 6" in forwarded[0].explanation
    assert _about(_judge(_covered(proof=True), "forwarded"), CANCEL_RULES) == [("CANCEL-02", "rule", 8)]


def test_a_conforming_cancellation_is_clean_in_either_order() -> None:
    for order in ("received", "forwarded"):
        assert _judge(_f1("cancelled"), order) == [], order


def test_the_answer_to_the_request_itself_proves_only_lines_up_to_it() -> None:
    ms = MonitorSet(client_order="forwarded")
    for n, raw in enumerate(_f1("end_turn", proof=True)[:6], 1):
        entry = json.loads(raw)
        ms.feed(entry["from"], entry["message"], n)
        if n == 5:  # the request at line 5 is not answered yet
            assert ms.unread(4) and ms.unread(5)
    assert not ms.unread(4) and not ms.unread(5) and ms.unread(7)
    assert not MonitorSet().unread(7)  # received order: every Client line was read when recorded


def test_check_takes_the_client_order_option(tmp_path: Any) -> None:
    path = tmp_path / "f1.ndjson"
    path.write_bytes(b"".join(_f1("end_turn")))
    code, out, _ = run_cli(["check", "--complete", str(path)])
    assert code == 1 and "[error]" in out and "TRANS-04" in out
    code, out, _ = run_cli(["check", "--complete", "--client-order", "forwarded", str(path)])
    assert code == 0 and "[suspected, warning]" in out and "[error]" not in out
    code, out, err = run_cli(["check", "--client-order", "sideways", str(path)])
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "--client-order" in err


def test_an_unknown_client_order_is_refused() -> None:
    with pytest.raises(ValueError, match="client order"):
        MonitorSet(client_order="sideways")


class _Crossing:
    """A listening Agent (not lockstep, unless told) whose ``end_turn`` idle crosses the driver's
    ``session/cancel``: it wrote the idle before it read the cancel, yet the driver records the
    cancel first (its idle comes out only after the driver sent)."""

    def __init__(self, lockstep: bool) -> None:
        self.lockstep = lockstep
        self.quiescent = False
        self.out: list[bytes] = []
        self.prompt: Any = None

    def _say(self, msg: dict[str, Any]) -> None:
        self.out.append(json.dumps(msg).encode())

    def send(self, data: bytes) -> None:
        for raw in data.splitlines():
            msg = json.loads(raw)
            method = msg.get("method")
            if method == "initialize":
                self._say(result(msg["id"], {"protocolVersion": 2, "agentCapabilities": {}}))
            elif method == "session/new":
                self._say(result(msg["id"], {"sessionId": S}))
            elif method == "session/prompt":
                self.prompt = msg["id"]
                self._say(update(S, {"sessionUpdate": "user_message", "messageId": "u1", "content": HELLO}))
                self._say(update(S, {"sessionUpdate": "state_update", "state": "running"}))
            elif method == "session/cancel" and self.prompt is not None:
                idle = {"sessionUpdate": "state_update", "state": "idle", "stopReason": "end_turn"}
                self._say(update(S, idle))
                self._say(result(self.prompt, {"messageId": "u1"}))
                self.prompt = None

    def receive(self, timeout: float) -> list[bytes] | None:
        got, self.out = self.out, []
        self.quiescent = self.lockstep and not got
        return got

    def written(self) -> list[bytes]:
        return []

    def stop(self) -> None:
        pass


@pytest.mark.parametrize("lockstep", [False, True])
def test_drive_judges_a_listening_agent_in_forwarded_order(lockstep: bool) -> None:
    from simulator.harness.drive import run_once
    from simulator.harness.settings import Settings

    settings = Settings(steps=3, timeout=0.2, silence=0.0)
    run = run_once(_Crossing(lockstep), settings, script=[["prompt"], ["cancel"], ["wait"]])  # type: ignore[arg-type]
    kinds = {(f.rule, f.kind) for f in run.findings if f.rule == "TRANS-04"}
    # a lockstep Agent reads the cancel only between turns: recorded before the idle, it was read
    assert kinds == ({("TRANS-04", "rule")} if lockstep else {("TRANS-04", "suspect")}), run.findings
