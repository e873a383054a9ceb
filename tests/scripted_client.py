"""A scripted Client of our own for ``acp-model agent``: drives a ``StdioAgent`` in process.

Owns: ``ScriptedClient`` (send a message or a batch, let the Agent move until it has nothing
left to do, answer its permission requests as they come, keep the transcript as ``record``
writes it: one line per line a peer wrote, a batch as one array) and ``freedoms`` (which of the
freedoms a client developer trips over a transcript shows: rejections, child sessions, repeated
snapshots or idles, custom values); ``InProcessPeer``, the simulated Agent in process behind the
peer interface of ``simulator/harness/drive.py``.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from simulator.harness.serve import turn
from simulator.peers import wire
from simulator.peers.stdio_agent import StdioAgent

Msg = dict[str, Any]
Line = tuple[str, Any]
TURN_TIMEOUT = 30.0
"""The ``--timeout`` of a drive run against ``InProcessPeer``: its turns say when the Agent has
answered or has no move left, so no run waits for it; it is long so that a stalled test process
(a loaded machine) never turns a turn into ``drive.no-answer``, which a deadline of milliseconds
did."""
"""(sender, message or batch) as one transcript line holds it."""


class ScriptedClient:
    def __init__(self, agent: StdioAgent, answers: tuple[str, ...] = ("allow", "deny")) -> None:
        self.agent = agent
        self.lines: list[Line] = []
        self.raw: list[tuple[str, bytes]] = []
        """The bytes each peer wrote, line by line (what a proxy sees)."""
        self._answers = answers
        self._asked = 0

    def _agent_wrote(self, out: list[Any]) -> None:
        for item in out:
            self.lines.append(("agent", item))
            self.raw.append(("agent", wire.json_line(item).encode()))
            for msg in item if isinstance(item, list) else [item]:
                if msg.get("method") == "session/request_permission":
                    option = self._answers[self._asked % len(self._answers)]
                    self._asked += 1
                    self.send(wire.permission_selected(msg["id"], option))

    def send(self, msg: Any) -> list[Any]:
        """Write one line (a message, or a list: a batch); what the Agent wrote at once."""
        data = wire.json_line(msg).encode()
        self.lines.append(("client", msg))
        self.raw.append(("client", data))
        out = self.agent.receive(data[:-1])
        self._agent_wrote(out)
        return out

    def run(self, limit: int = 1000, stop_after: int | None = None) -> int:
        """Let the Agent move until it has nothing to do (or ``stop_after`` moves); the moves made."""
        for done in range(limit if stop_after is None else min(limit, stop_after)):
            out = self.agent.move()
            if out is None:
                return done
            self._agent_wrote(out)
        return limit if stop_after is None else stop_after

    def answer(self, rid: Any) -> Msg | None:
        """The agent's response to request ``rid`` (in a batch array too), None if none yet."""
        for sender, item in self.lines:
            if sender != "agent":
                continue
            for msg in item if isinstance(item, list) else [item]:
                if msg.get("id") == rid and "method" not in msg:
                    return msg
        return None

    def agent_messages(self) -> list[Msg]:
        return [
            m for s, item in self.lines if s == "agent" for m in (item if isinstance(item, list) else [item])
        ]

    def write(self, path: Path) -> None:
        """The transcript as ``acp-model record`` writes it (batches as arrays)."""
        path.write_bytes(wire.to_ndjson(self.lines).encode())


def updates(msgs: list[Msg]) -> list[tuple[str, Msg]]:
    return [
        (m["params"]["sessionId"], m["params"]["update"]) for m in msgs if m.get("method") == "session/update"
    ]


def freedoms(client: ScriptedClient, sessions: set[str]) -> set[str]:
    """The freedoms the transcript shows: ``rejection`` (a prompt answered with an error other
    than -32800), ``child`` (updates of a session the Client did not open, or subagent updates),
    ``repeated-snapshot`` (more than one state_update in a resume handshake, or an idle repeated
    without running between), ``custom`` (a ``_`` stop reason, state or status)."""
    found: set[str] = set()
    prompts = {
        m["id"]
        for s, m in client.lines
        if s == "client" and isinstance(m, dict) and m.get("method") == "session/prompt"
    }
    resumes = {
        m["id"]
        for s, m in client.lines
        if s == "client" and isinstance(m, dict) and m.get("method") == "session/resume"
    }
    last_state: dict[str, str] = {}
    resuming: dict[str, int] = {}
    for sender, item in client.lines:
        for msg in item if isinstance(item, list) else [item]:
            if sender == "client":
                if msg.get("id") in resumes and msg.get("method") == "session/resume":
                    resuming[msg["params"]["sessionId"]] = 0
                continue
            if msg.get("id") in prompts and "error" in msg and msg["error"]["code"] != wire.REQUEST_CANCELLED:
                found.add("rejection")
            if msg.get("id") in resumes and "method" not in msg:
                for sid in list(resuming):
                    if resuming[sid] > 1:
                        found.add("repeated-snapshot")
                resuming.clear()
            if msg.get("method") != "session/update":
                continue
            sid, upd = msg["params"]["sessionId"], msg["params"]["update"]
            kind = upd.get("sessionUpdate")
            if sid not in sessions or kind == "subagent_update":
                found.add("child")
                continue
            for key in ("stopReason", "state", "status"):
                if isinstance(upd.get(key), str) and upd[key].startswith("_"):
                    found.add("custom")
            if kind == "state_update":
                if sid in resuming:
                    resuming[sid] += 1
                elif upd.get("state") == "idle" == last_state.get(sid):
                    found.add("repeated-snapshot")
                last_state[sid] = upd.get("state")
    return found


def prompting_run(agent: StdioAgent, seed: int) -> tuple[ScriptedClient, set[str]]:
    """The run of the common-path test: a client that prompts (a second prompt while the first
    may still run), cancels at a seeded point, answers permissions (allowing or denying),
    prompts again, resumes (with a replay on odd seeds) and closes. Its freedoms."""
    rnd = random.Random(f"client {seed}")
    client = ScriptedClient(agent)
    client.send(wire.initialize(0))
    client.send(wire.new_session(1))
    client.send(wire.prompt(2, "sess_1", [wire.text("first")]))
    client.run(stop_after=rnd.randrange(4))
    client.send(wire.prompt(3, "sess_1", [wire.text("second")]))
    client.run(stop_after=rnd.randrange(6))
    client.send(wire.cancel("sess_1"))
    client.run()
    client.send(wire.prompt(4, "sess_1", [wire.text("third")]))
    client.run(stop_after=rnd.randrange(8))
    client.send(wire.resume(5, "sess_1", replay=seed % 2 == 1))
    client.run()
    client.send(wire.close(6, "sess_1"))
    client.run()
    return client, freedoms(client, {"sess_1"})


def dumps(msg: Any) -> bytes:
    return json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class InProcessPeer:
    """``StdioAgent`` behind the peer interface of ``simulator/harness/drive.py``: ``send`` bytes, ``receive``
    one lockstep turn (``simulator.harness.serve.turn``): the lines of the Agent's answers to
    them, else of its next moves up to the first that sends something ([] when it has none).

    Fast and deterministic, it answers as ``acp-model agent`` does in the driver's lockstep, so
    a driver seed that fails in process fails the same way against the process (the deep
    proof)."""

    lockstep = True

    def __init__(self, agent: StdioAgent) -> None:
        self.agent = agent
        self._pending = b""
        self.closed = False
        self.quiescent = False

    def send(self, data: bytes) -> None:
        self._pending += data

    def receive(self, timeout: float) -> list[bytes] | None:
        *lines, self._pending = self._pending.split(b"\n")
        out = turn(self.agent, lines)
        self.quiescent = not out
        return [wire.json_line(m).encode()[:-1] for m in out]

    def written(self) -> list[bytes]:
        """Nothing: this Agent writes only when ``receive`` asks it to."""
        return []

    def stop(self) -> str:
        self.closed = True
        return "stopped"
