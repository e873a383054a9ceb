"""The simulated Agent as a real ACP v2 Agent: JSON-RPC lines in, JSON-RPC lines out (sans-IO).

Theory of operation
-------------------
``StdioAgent`` serves one connection. Each ``session/new`` creates a session with a model of its
own (``simulator.peers.agent.Agent``): the n-th session is ``sess_<2n-1>``, its child session (when it
delegates) ``sess_<2n>``, and the IDs of its permission requests carry a prefix of their own, so
that the first session is the one this agent has always served (``sess_1``, ``sess_2``,
``perm_1``...). ``receive(line)`` takes one line the Client wrote and returns what to write at
once; ``move()`` makes one of the Agents' own choices (``Agent.enabled()`` of every session,
in the order the sessions were created), picked with a ``random.Random(seed)``, and returns
what it sends; ``pause()`` is the seeded time to listen for input before the next move
(``pace_rng``). The loop that reads standard input and writes standard output is
``simulator/harness/serve.py``; tests and ``acp-model drive`` may run this class in process. The
mode (``simulator.peers.agent_modes``) filters the Agents' choices.

What the model does not cover, this layer answers (and nothing else):

- ``initialize`` (version 2; a Client asking for an earlier one gets -32022 with the versions
  supported; baseline prompt content only; custom states, the feature ``future``, only
  when the Client's capabilities ``_meta`` advertise ``customStates``; elicitation only in the
  modes its capabilities ``elicitation`` advertise), ``session/new`` and
  ``session/list`` (every session of the connection, ``LIST_PAGE`` at a time: ``nextCursor``
  names the next page; ``cwd`` filters);
- the fields the schema requires (``REQUIRED``): a request without one, or with one of the wrong
  type, is answered -32602 naming the field and not passed on (a notification is ignored);
  ``replayFrom`` other than ``{"type": "start"}`` or null is -32602;
- requests the model would never receive from its own Client, refused and not passed on: a
  session that does not exist (-32002 with the ``sessionId`` in ``data``; a ``session/close``
  of one succeeds: closing a session that does not exist or is not active SHOULD succeed), a
  prompt to a closed session (-32002), a prompt while the session is closing or resuming, a
  close while it is resuming, a resume while it is closing or resuming, a request id still in use
  by a prompt (-32602);
- JSON-RPC 2.0 framing: a line that is not JSON (-32700), not a JSON-RPC object (-32600), an
  unknown method (-32601); a batch (an array) is answered with one array of the answers made at
  once to its elements (in the elements' order; answers the model makes later come later, each
  on its own line), nothing when there is none (notifications only); an empty array is an
  invalid request. Unknown notifications (extension methods included) are ignored, as are
  responses nobody asked for.

Everything else goes to the session's ``Agent.receive``; a ``session/close`` of a closed or
closing session too (the model answers it). Each session's Agent echoes the prompts' content
(``Agent.contents``). The Agents' moves begin once their session exists. A move the model's
tables refuse (only a seeded bug tries one) is noted (``notes``, for standard error) and not
tried again; under a variant that removed rows, a move that needs one is not a move
(``Agent.choices``). Output is compact JSON, one message (or batch answer) per line.

Determinism: the same seed, options and input lines received at the same points of the run
give the same output lines.

Must not know: file descriptors, time, monitors.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any

from model import prompt as prm
from model.core import ProtocolViolation
from model.elicitation import MODES as ELICITATION_MODES
from properties.seeded import BY_NAME
from simulator.peers import wire
from simulator.peers.agent import AGENT_FAULTS, Agent
from simulator.peers.agent_modes import EVERY_FREEDOM, Mode
from simulator.peers.config import DEFAULT, Config, seeded_config

Msg = dict[str, Any]
Out = Msg | list[Msg]
"""What is written as one line: a message, or the array answering a batch."""
Event = tuple[str, str, Any]

PARSE_ERROR = -32700
METHOD_NOT_FOUND = -32601
RESOURCE_NOT_FOUND = -32002
UNSUPPORTED_VERSION = -32022

ACCEPTED_IN = {
    "session/prompt": ("open",),
    "session/close": ("open", "closing", "closed"),
    "session/resume": ("open", "closed"),
}
"""The session states in which each request is passed to the model (else refused, -32602)."""

LIST_PAGE = 10
"""Sessions per ``session/list`` answer."""

PACE = (0.01, 0.03)
"""Seconds the agent listens for input before each move (uniform in this range, seeded). The
least of it is well above the time a driver takes to answer what the agent wrote, so a driver
that answers at once reaches the agent while it listens: its runs replay move for move."""

REQUIRED: dict[str, tuple[tuple[str, str], ...]] = {
    "initialize": (("protocolVersion", "integer"), ("info", "implementation?")),
    "session/new": (("cwd", "path"),),
    "session/list": (("cwd", "path?"), ("cursor", "string?")),
    "session/prompt": (("sessionId", "string"), ("prompt", "blocks")),
    "session/resume": (("sessionId", "string"), ("cwd", "path")),
    "session/close": (("sessionId", "string"),),
    "session/cancel": (("sessionId", "string"),),
    "$/cancel_request": (("requestId", "id"),),
}
"""The params fields the schema requires (or types, when present: ``?``) of each message this
agent acts on, with the kind of value each must be. One required field is checked only when
present: ``initialize``'s ``info``, which Clients written for earlier drafts omit (the README's
own example of ``record`` sends none); nothing this agent does depends on it."""


def _absolute(value: Any) -> bool:
    return type(value) is str and (PurePosixPath(value).is_absolute() or PureWindowsPath(value).is_absolute())


_KINDS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "integer": ("an integer", lambda v: type(v) is int and 0 <= v <= 65535),
    "implementation": (
        "an object with string name and version",
        lambda v: type(v) is dict and type(v.get("name")) is str and type(v.get("version")) is str,
    ),
    "path": ("an absolute path", _absolute),
    "string": ("a string", lambda v: type(v) is str),
    "blocks": ("an array of content blocks", lambda v: type(v) is list and all(type(b) is dict for b in v)),
    "id": ("a string or integer", lambda v: type(v) in (int, str)),
}
"""What each kind of value of ``REQUIRED`` is called, and whether a value is one."""


def missing_field(method: str, params: dict[str, Any]) -> str | None:
    """Why ``params`` lack a field the schema requires of ``method`` (None: they do not)."""
    for name, kind in REQUIRED.get(method, ()):
        optional = kind.endswith("?")
        kind = kind.rstrip("?")
        if name not in params or (optional and params[name] is None):
            if optional:
                continue
            return f"missing required field {name!r}"
        called, fits = _KINDS[kind]
        if not fits(params[name]):
            return f"field {name!r} is not {called}"
    return None


# Not config.faults_config: that reads expanded faults (explore); a bug name keeps its bounds here.
def agent_config(faults: frozenset[str]) -> Config:
    """The bounds of the simulated Agent: the default, or the one a seeded bug's mutant needs."""
    for name in sorted(faults):
        seeded = BY_NAME.get(name)
        if seeded is not None and seeded_config(seeded) != DEFAULT:
            return seeded_config(seeded)
    return DEFAULT


@dataclass
class Session:
    """One session of the connection and its model."""

    cwd: str
    agent: Agent
    refused: set[tuple[str, Any]] = field(default_factory=set)
    """Moves the model refused (a seeded bug's): not tried again."""


class StdioAgent:
    def __init__(
        self,
        seed: int = 0,
        faults: frozenset[str] = frozenset(),
        cfg: Config | None = None,
        pace: tuple[float, float] = PACE,
        mode: Mode = EVERY_FREEDOM,
    ) -> None:
        unknown = faults - frozenset(AGENT_FAULTS)
        if unknown:
            raise ValueError(f"unknown agent faults: {', '.join(sorted(unknown))}")
        self.rng = random.Random(seed)
        """Chooses the moves (``move``)."""
        self.pace_rng = random.Random(f"pace {seed}")
        """Draws the pauses (``pause``): a stream apart from the moves', so that how often a loop
        asks for a pause never changes which moves the Agent chooses."""
        self.mode = mode
        self.faults = faults
        self.agent = Agent(mode.config(cfg if cfg is not None else agent_config(faults)), faults)
        """The model of the first session (made at once; later sessions get their own, with its
        bounds and the elicitation modes the Client's initialize advertised: none before it)."""
        self.agent.elicit_modes = ()
        self.pace = pace
        self.sessions: dict[str, Session] = {}
        """Every session of the connection, by ID, in the order they were created."""
        self.notes: list[str] = []
        """What to say on standard error (taken and cleared by the caller)."""

    # -- input -----------------------------------------------------------------------------------
    def receive(self, line: bytes) -> list[Out]:
        """React to one line from the Client; what to send at once (one line each)."""
        try:
            msg = json.loads(line)
        except (ValueError, RecursionError):
            return [wire.error(None, PARSE_ERROR, "Parse error")]
        after: list[Msg] = []
        if type(msg) is list:
            if not msg:
                return [wire.error(None, wire.INVALID_REQUEST, "Invalid Request: empty batch")]
            answers = [a for m in msg for a in self._one(m, after)]
            out: list[Out] = [answers] if answers else []
        else:
            out = list(self._one(msg, after))
        return [*out, *after]

    def _one(self, msg: Any, after: list[Msg]) -> list[Msg]:
        """The answers to one message; what the Agent sends at once besides goes to ``after``."""
        if type(msg) is not dict or msg.get("jsonrpc") != "2.0":
            return [wire.error(None, wire.INVALID_REQUEST, "Invalid Request")]
        method = msg.get("method")
        rid: Any = msg.get("id")
        request = "id" in msg
        if request and type(rid) not in (int, str):
            return [wire.error(None, wire.INVALID_REQUEST, "Invalid Request: id")]
        if method is None:
            if request and ("result" in msg or "error" in msg):
                self._answer(msg, rid)
            return []
        if type(method) is not str:
            return [wire.error(rid if request else None, wire.INVALID_REQUEST, "Invalid Request")]
        params = msg.get("params")
        answer = self._request(method, params if type(params) is dict else {}, msg, rid, request, after)
        return [answer] if request and answer is not None else []

    def _request(
        self, method: str, params: dict[str, Any], msg: Msg, rid: Any, request: bool, after: list[Msg]
    ) -> Msg | None:
        """The answer to a request or notification (sent only for a request: ``_one``)."""
        missing = missing_field(method, params)
        if missing is not None:
            return wire.error(rid, wire.INVALID_PARAMS, f"Invalid params: {missing}")
        if method == "initialize":
            requested = params["protocolVersion"]
            if requested < wire.PROTOCOL_VERSION:  # no version at or below the one asked for
                data = {"requested": requested, "supported": [wire.PROTOCOL_VERSION]}
                return wire.error(rid, UNSUPPORTED_VERSION, f"Unsupported protocol version {requested}", data)
            self._initialize(params)
            return wire.initialized(rid)
        if method == "session/new":
            return wire.session_created(rid, self._new(params["cwd"])) if request else None
        if method == "session/list":
            return self._list(rid, params)
        if method == "$/cancel_request":
            for s in self.sessions.values():
                if not request and params["requestId"] in s.agent.prompts:
                    self._pass(s, msg)
            return None
        if method not in ("session/prompt", "session/close", "session/resume", "session/cancel"):
            return wire.error(rid, METHOD_NOT_FOUND, f"Method not found: {method}")
        if method == "session/cancel" and request:
            return wire.error(rid, METHOD_NOT_FOUND, f"Method not found: {method} (a notification)")
        if method != "session/cancel" and not request:
            return None  # a request sent as a notification: nothing to answer
        sid = params["sessionId"]
        session = self.sessions.get(sid)
        if session is None:
            if method == "session/close":
                return wire.result(rid, {})  # closing a session that does not exist succeeds
            text = f"Resource not found: session {sid!r}"
            return wire.error(rid, RESOURCE_NOT_FOUND, text, {"sessionId": sid})
        refusal = self._refusal(session, method, params, rid)
        if refusal is not None:
            return refusal
        if method == "session/resume" and "replayFrom" in params and params["replayFrom"] is None:
            # omitted and null are the same: no replay
            msg = {**msg, "params": {k: v for k, v in params.items() if k != "replayFrom"}}
        self._pass(session, msg)
        if method == "session/prompt":
            after.extend(self._eager(session))
        return None

    def _initialize(self, params: dict[str, Any]) -> None:
        caps = params.get("capabilities")
        meta = caps.get("_meta") if type(caps) is dict else None
        custom = type(meta) is dict and meta.get("customStates")
        found = caps.get("elicitation") if type(caps) is dict else None
        advertised = tuple(m for m in ELICITATION_MODES if type(found) is dict and type(found.get(m)) is dict)
        modes = advertised if "elicitation" in self.agent.cfg.features else ()
        for agent in [self.agent, *(s.agent for s in self.sessions.values())]:
            if not custom:  # custom states not advertised: the config and the table's context agree
                agent.cfg = agent.cfg.with_(features=agent.cfg.features - {"future"})
                agent.fg_ctx = {"custom_states": False}
            agent.elicit_modes = modes

    def _new(self, cwd: str) -> str:
        """Create the next session; its ID."""
        n = len(self.sessions) + 1
        if n == 1:
            agent = self.agent
        else:
            sid, child = f"sess_{2 * n - 1}", f"sess_{2 * n}"
            agent = Agent(self.agent.cfg, self.faults, sid=sid, child=child, requests=f"perm_{sid}_")
            agent.elicit_modes = self.agent.elicit_modes
        agent.contents = {}  # its user messages echo the prompts' content
        self.sessions[agent.sid] = Session(cwd, agent)
        return agent.sid

    def _list(self, rid: Any, params: dict[str, Any]) -> Msg:
        found = [s for s in self.sessions.values() if params.get("cwd") in (None, s.cwd)]
        cursor = params.get("cursor")
        start = 0
        if cursor is not None:
            if not (cursor.isdigit() and int(cursor) <= len(found)):
                return wire.error(
                    rid, wire.INVALID_PARAMS, f"Invalid params: cursor {cursor!r} is not one this agent gave"
                )
            start = int(cursor)
        page = found[start : start + LIST_PAGE]
        res: dict[str, Any] = {"sessions": [{"sessionId": s.agent.sid, "cwd": s.cwd} for s in page]}
        if start + LIST_PAGE < len(found):
            res["nextCursor"] = str(start + LIST_PAGE)
        return wire.result(rid, res)

    def _refusal(self, session: Session, method: str, params: dict[str, Any], rid: Any) -> Msg | None:
        """The answer refusing a message the model would never get (None: it is passed on)."""
        state, sid = session.agent.session, session.agent.sid
        if method == "session/prompt" and state == "closed":
            text = f"Resource not found: session {sid} is closed"
            return wire.error(rid, RESOURCE_NOT_FOUND, text, {"sessionId": sid})
        why = None
        replay = params.get("replayFrom")
        start = type(replay) is dict and replay.get("type") == "start"  # the one cursor supported
        if state not in ACCEPTED_IN.get(method, (state,)):
            why = f"session {sid} is {state}"
        elif method == "session/prompt" and (
            rid in session.agent.prompts
            or any(
                rid in s.agent.prompts and s.agent.prompts[rid][0] not in prm.SPEC.final
                for s in self.sessions.values()
            )
        ):
            why = f"request id {rid!r} is already used by a prompt"
        elif method == "session/resume" and replay is not None and not start:
            why = 'replayFrom: unsupported cursor (only {"type": "start"})'
        return None if why is None else wire.error(rid, wire.INVALID_PARAMS, f"Invalid params: {why}")

    def _answer(self, msg: Msg, rid: Any) -> None:
        """A response of the Client: to the session whose permission request or elicitation it
        answers."""
        for session in self.sessions.values():
            if rid in session.agent.elicits:
                self._pass(session, msg)  # an action the model does not name is handled as cancel
                return
            if rid in session.agent.perms:
                result = msg.get("result")
                if "result" in msg and not (type(result) is dict and type(result.get("outcome", {})) is dict):
                    msg = wire.permission_cancelled(rid)
                self._pass(session, msg)
                return

    def _pass(self, session: Session, msg: Msg) -> None:
        try:
            session.agent.receive(msg)
        except ProtocolViolation as exc:
            self.notes.append(f"ignored: {exc}")

    # -- moves -----------------------------------------------------------------------------------
    def _choices(self, session: Session) -> list[Event]:
        left_out = session.refused | self.mode.never  # refused by the model, or never in this mode
        return [ev for ev in session.agent.choices() if ev[1:] not in left_out]

    def _all_choices(self) -> list[tuple[Session, Event]]:
        return [(s, ev) for s in self.sessions.values() for ev in self._choices(s)]

    def moves(self) -> list[Event]:
        """The moves the Agents may make now (every session's, in creation order)."""
        return [ev for _, ev in self._all_choices()]

    def move(self) -> list[Msg] | None:
        """Make one seeded choice among the enabled moves; None when there is none."""
        while True:
            enabled = self._all_choices()
            if not enabled:
                return None
            session, (_, name, arg) = self.rng.choice(enabled)
            msgs = self._do(session, name, arg)
            if msgs is not None:
                return msgs

    def _eager(self, session: Session) -> list[Msg]:
        """The moves the mode makes at once (``Mode.eager``), while one is enabled."""
        out: list[Msg] = []
        while self.mode.eager:
            now = [ev for ev in self._choices(session) if ev[1] in self.mode.eager]
            if not now:
                return out
            msgs = self._do(session, now[0][1], now[0][2])
            out.extend(msgs or ())
        return out

    def _do(self, session: Session, name: str, arg: Any) -> list[Msg] | None:
        """Make one move; None when the model refused it (noted, and not tried again)."""
        try:
            return session.agent.do(name, arg)
        except ProtocolViolation as exc:
            session.refused.add((name, arg))
            self.notes.append(f"seeded bug refused by the model, not sent: {exc}")
            return None

    def pause(self) -> float:
        low, high = self.pace
        return low if high <= low else self.pace_rng.uniform(low, high)
