"""The simulated Agent as a real ACP v2 Agent: JSON-RPC lines in, JSON-RPC lines out (sans-IO).

Theory of operation
-------------------
``StdioAgent`` wraps the model's ``simulator.agent.Agent`` for one connection. ``receive(line)``
takes one line the Client wrote and returns the lines to write at once; ``move()`` makes one of
the Agent's own choices (``Agent.enabled()``), picked with a ``random.Random(seed)``, and
returns what it sends; ``pause()`` is the seeded time to listen for input before the next move,
drawn from a random stream of its own (``pace_rng``), so that how often a loop asks for a pause
never changes which moves the Agent chooses.
The loop that reads standard input and writes standard output is ``cli/cmd_agent.py``; tests
and ``acp-model drive`` may run this class in process instead.

What the model does not cover, this layer answers (and nothing else):

- ``initialize`` (baseline prompt content only; custom states, the feature ``future``, only
  when the Client's capabilities ``_meta`` advertise ``customStates``) and ``session/new`` (the
  model holds one session, ``sess_1``; a second ``session/new`` is refused with -32603);
- requests the model would never receive from its own Client, refused with -32602 and not
  passed on: a session other than ``sess_1``, a prompt whose ``prompt`` is not an array of
  objects, a prompt or close while the session is not open, a resume while it is not closed,
  a request id still in use by a prompt; a line that is not JSON (-32700), not a JSON-RPC
  object (-32600), an unknown method (-32601). Unknown notifications (extension methods
  included) are ignored, as are responses nobody asked for.

Everything else goes to ``Agent.receive`` unchanged. A full ``user_message`` echoes the content
the Client sent (streamed chunks keep the model's stand-in text). The Agent's moves begin once the session
exists. A move the model's tables refuse (only a seeded bug tries one, e.g.
``held-not-withdrawn``) is not sent: it is noted (``notes``, for standard error) and that move
is not tried again. Under a variant (``Config.variant``) that removed rows, a move that needs one
is not a move, as in the simulator (``simulator.world.allowed``). Output is compact JSON, one
message per line.

Determinism: the same seed, options and input lines received at the same points of the run
give the same output lines.

Must not know: file descriptors, time, monitors.
"""

from __future__ import annotations

import json
import random
from typing import Any

from model.core import ProtocolViolation
from simulator import wire
from simulator.agent import AGENT_FAULTS, MAIN, Agent
from simulator.config import DEFAULT, Config
from simulator.world import allowed

Msg = dict[str, Any]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601

PACE = (0.01, 0.03)
"""Seconds the agent listens for input before each move (uniform in this range, seeded). The
least of it is well above the time a driver takes to answer what the agent wrote, so a driver
that answers at once reaches the agent while it listens: its runs replay move for move."""


def agent_config(faults: frozenset[str]) -> Config:
    """The bounds of the simulated Agent: the default, or the one a seeded bug's mutant needs."""
    from simulator.mutants import BY_NAME

    for name in sorted(faults):
        mutant = BY_NAME.get(name)
        if mutant is not None and mutant.cfg != DEFAULT:
            return mutant.cfg
    return DEFAULT


def encode(msg: Msg) -> bytes:
    """One message as a line: compact UTF-8 JSON and a line feed."""
    return (json.dumps(msg, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")


class StdioAgent:
    def __init__(
        self,
        seed: int = 0,
        faults: frozenset[str] = frozenset(),
        cfg: Config | None = None,
        pace: tuple[float, float] = PACE,
    ) -> None:
        unknown = faults - frozenset(AGENT_FAULTS)
        if unknown:
            raise ValueError(f"unknown agent faults: {', '.join(sorted(unknown))}")
        self.rng = random.Random(seed)
        """Chooses the moves (``move``)."""
        self.pace_rng = random.Random(f"pace {seed}")
        """Draws the pauses (``pause``): a stream apart from the moves'."""
        self.agent = Agent(cfg if cfg is not None else agent_config(faults), faults)
        self.prune = any(spec.removed for spec in self.agent.specs.values())
        """The variant removed rows: moves that need one are not made (``world.allowed``)."""
        self.pace = pace
        self.created = False
        self.refused: set[tuple[str, Any]] = set()
        self.notes: list[str] = []
        """What to say on standard error (taken and cleared by the caller)."""
        self.contents: dict[Any, list[Any]] = {}
        """The content of each prompt passed to the model, by request id (echoed back)."""

    # -- input -----------------------------------------------------------------------------------
    def receive(self, line: bytes) -> list[Msg]:
        """React to one line from the Client; the answers to send at once."""
        try:
            msg = json.loads(line)
        except (ValueError, RecursionError):
            return [wire.error(None, PARSE_ERROR, "Parse error")]  # type: ignore[arg-type]
        if type(msg) is not dict or msg.get("jsonrpc") != "2.0":
            return [wire.error(None, INVALID_REQUEST, "Invalid Request")]  # type: ignore[arg-type]
        method = msg.get("method")
        rid: Any = msg.get("id")
        request = "id" in msg
        if request and type(rid) not in (int, str):
            return [wire.error(None, INVALID_REQUEST, "Invalid Request: id")]  # type: ignore[arg-type]
        if method is None:
            if request and ("result" in msg or "error" in msg):
                result = msg.get("result")
                if "result" in msg and not (type(result) is dict and type(result.get("outcome", {})) is dict):
                    msg = {"jsonrpc": "2.0", "id": rid, "result": {"outcome": {"outcome": "cancelled"}}}
                self._pass(msg)
            return []
        if type(method) is not str:
            return [wire.error(rid if request else None, INVALID_REQUEST, "Invalid Request")]  # type: ignore[arg-type]
        params = msg.get("params")
        if type(params) is not dict:
            params = {}
        refusal = self._refusal(method, params, rid, request)
        if refusal is not None:
            return [wire.error(rid, wire.INVALID_PARAMS, refusal)] if request else []
        if method == "initialize":
            caps = params.get("capabilities")
            meta = caps.get("_meta") if type(caps) is dict else None
            if not (type(meta) is dict and meta.get("customStates")):  # custom states not advertised
                cfg = self.agent.cfg
                self.agent.cfg = cfg.with_(features=cfg.features - {"future"})
            return [wire.initialized(rid)] if request else []
        if method == "session/new":
            if not request:
                return []
            if self.created:
                return [wire.error(rid, wire.INTERNAL_ERROR, "this agent holds one session")]
            self.created = True
            return [wire.session_created(rid, MAIN)]
        if method in ("session/prompt", "session/close", "session/resume"):
            if not request:
                return []
            if method == "session/prompt":
                self.contents[rid] = params["prompt"]
            self._pass(msg)
            return []
        if method in ("session/cancel", "$/cancel_request") and not request:
            self._pass(msg)
            return []
        if request:
            return [wire.error(rid, METHOD_NOT_FOUND, f"Method not found: {method}")]
        return []  # an unknown notification: ignored

    def _refusal(self, method: str, params: dict[str, Any], rid: Any, request: bool) -> str | None:
        """Why a message the model would never get is refused (None: it is not)."""
        if method not in ("session/prompt", "session/close", "session/resume", "session/cancel"):
            if method == "$/cancel_request" and type(params.get("requestId")) not in (int, str):
                return "requestId is not a string or integer"
            return None
        sid = params.get("sessionId")
        if not self.created or sid != MAIN:
            return f"unknown session {sid!r}"
        state = self.agent.session
        if method == "session/prompt":
            prompt = params.get("prompt")
            if type(prompt) is not list or any(type(b) is not dict for b in prompt):
                return "prompt is not an array of content blocks"
            if state != "open":
                return f"session {MAIN} is {state}"
            if rid in self.agent.prompts:
                return f"request id {rid!r} is already used by a prompt"
        elif (method == "session/close" and state != "open") or (
            method == "session/resume" and state != "closed"
        ):
            return f"session {MAIN} is {state}"
        return None

    def _pass(self, msg: Msg) -> None:
        try:
            self.agent.receive(msg)
        except ProtocolViolation as exc:
            self.notes.append(f"ignored: {exc}")

    # -- moves -----------------------------------------------------------------------------------
    def moves(self) -> list[tuple[str, str, Any]]:
        if not self.created:
            return []
        moves = [ev for ev in self.agent.enabled() if (ev[1], ev[2]) not in self.refused]
        return [ev for ev in moves if allowed(self.agent, ev)] if self.prune else moves

    def move(self) -> list[Msg] | None:
        """Make one seeded choice among the enabled moves; None when there is none."""
        while True:
            enabled = self.moves()
            if not enabled:
                return None
            _, name, arg = self.rng.choice(enabled)
            try:
                msgs = self.agent.do(name, arg)
            except ProtocolViolation as exc:
                self.refused.add((name, arg))
                self.notes.append(f"seeded bug refused by the model, not sent: {exc}")
                continue
            if name == "user_message":
                self._echo(arg, msgs)
            return msgs

    def _echo(self, rid: Any, msgs: list[Msg]) -> None:
        """A full user message carries the content the Client sent (the model writes a stand-in)."""
        content = self.contents.get(rid)
        for msg in msgs:
            upd = msg["params"]["update"]
            if content is not None and upd.get("sessionUpdate") == "user_message":
                upd["content"] = content

    def pause(self) -> float:
        low, high = self.pace
        return low if high <= low else self.pace_rng.uniform(low, high)
