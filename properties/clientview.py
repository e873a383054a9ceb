"""The normative client view: what a Client that applies every update exactly as the spec asks shows.

Theory of operation
-------------------
``ClientView.apply(sender, message)`` consumes every JSON-RPC message in the order the Client
receives or sends it and folds it into one view per session ID:

* **Entities** (spec: Entity IDs, Message IDs, Session-directed messages, Session compaction,
  5. Tool invocation) are keyed by (type, ID). The first update *or chunk* of an entity creates
  it with its defaults and fixes its timeline position; later ones patch it in place. Upserts
  follow patch rules (omitted: unchanged, null: cleared, value: replaced; content ``[]`` also
  clears); chunks append; a chunk for an unseen ID creates the entity first.
* **Session state** (spec: Session states, Initial state and synchronization, State transitions,
  Background work, Stop reasons): sessions start idle; a ``session/new`` response never
  overwrites a reported state; an unrecognized state is a generic busy state, never idle;
  ``background`` is the latest concrete list or ``None`` (unknown) when omitted, null or
  malformed; an idle that ends running or requires_action work is one completion, repeats are
  not, and snapshots received while a ``session/resume`` is pending never count.
* **Prompt bookkeeping** (spec: 2. Prompt accepted): the JSON-RPC id of a client-sent
  ``session/prompt`` maps to the messageId its success response returns. The association comes
  only from the response, never from content or arrival order; whether the ``user_message``
  update came first or later, there is only one user-message entity.
* **Unknown and custom update variants** (spec: Session updates) are kept raw in ``preserved``
  and otherwise ignored.

View format (``to_json``; a contract other parts read, never reshape it)
--------------------------------------------------------------------
``{SESSION_ID: {"entities": {TYPE: {ID: {...}}}, "timeline": [[TYPE, ID], ...], "session": {...},
"preserved": [raw update, ...]}}`` with TYPE one of ``ENTITY_TYPES`` (every TYPE key is present).

* user_message, agent_message, agent_thought: ``content`` (list), ``_meta`` (object);
  session_message adds senderSessionId, recipientSessionId, senderMessageId, recipientMessageId.
* tool_call: status, title, kind, name, content, locations, rawInput, rawOutput, capabilities,
  _meta. compaction: status, summary, error, _meta. terminal: command, cwd, output (base64 of
  all bytes so far, or null), exitStatus, size, capabilities, _meta. plan: plan (the latest raw
  plan object), removed.
* session: state (idle, running, requires_action, unknown, unrecognized), background (list or
  null), completions, usage {used, size, cost}, last_stop_reason, prompts {key: messageId or
  null}, rejected_prompts {key: error code}, notices, malformed_updates, subagents {child ID:
  patched subagent_update fields}, elicitations {request key: mode, status (pending or
  awaiting_completion), message, and in URL mode url and elicitationId}, and what the Client
  concludes: inserted (sorted keys of the prompts taken as inserted: those answered with a
  messageId), exited (sorted IDs of the terminals taken as exited: those with an exitStatus),
  abandoned ([type, ID] of the unfinished tool calls and terminals the Client may treat as
  abandoned: once idle, those not in the latest reported background list, a tool call that
  references a listed terminal being live; none while background is not reported), deferred
  (updates held back: always 0 for this view). A prompt key is the JSON text of its JSON-RPC id
  (``7`` -> ``"7"``, ``"p7"`` -> ``'"p7"'``) so integer and string ids never collide.

A session first seen through a client's ``session/resume`` starts ``unknown`` (resuming does not
imply idle); every other session starts idle.

Readings where the spec text we have is silent (the "Metadata Patches" and "Display-only
Terminals" sections are not in our copy; the schema ``$defs`` descriptions fill the gap):

* ``_meta`` on an upsert: omitted leaves it unchanged, ``null`` clears it (the schema says so for
  every upsert that has stored metadata), an object patches by top-level key, a key set to null
  is removed, nested objects are not merged. Chunk, plan and usage ``_meta`` is event-scoped.
* A malformed optional field (wrong JSON type) is ignored, i.e. treated as omitted; malformed
  list items in content arrays are skipped. ``background`` is the exception: the spec says a
  malformed list makes background unknown. A list item is malformed when it is not an object
  with a string ``type`` or a known type lacks its string ID; an unknown item type is valid.
* A state update whose ``state`` is missing or not a string is treated as an unrecognized state.
* An idle after ``unknown`` is not a completion: the spec says a known snapshot after unknown
  implies no start or end of work. An idle after an unrecognized state is the reading
  ``idle-after-unrecognized-state`` (``properties.readings``): by default (``no-completion``) it
  is treated like one after unknown; under ``completion`` it ends that work (``completions``
  grows, ``last_stop_reason`` is reset as for work that ended). ``ClientView(readings=...)``.
* ``last_stop_reason`` is the latest string stopReason on an idle update; an idle that ends work
  without one (omitted, null, malformed) resets it to None; other idles without one keep it.
* ``plan_removed`` for a plan never seen is a no-op (there is nothing to remove); a removed plan
  keeps its entity and position with ``removed: true``.
* A known update variant missing its required fields is counted in ``malformed_updates`` and
  otherwise ignored. Session ``notice`` events are counted, never stored (they are live-only).
* The optional client-side "mark tool calls cancelled" hint after ``session/cancel`` is not
  applied: it is a local display hint, replaced by the Agent's own updates.

``apply`` does not copy the messages it is given: callers must not mutate a message after
passing it in. ``to_json`` builds fresh containers but shares JSON leaves (content blocks):
treat its result as read-only. ``copy.deepcopy`` of a view (the explorers branch on copies)
copies what ``apply`` may change and shares what it never does: the cached snapshots (tuples,
dropped rather than changed), the faults and the readings in force.

Deliberate faults (``faults=``) turn this into one of the faulty client views of the registry of
seeded bugs (``properties.seeded``, kind ``Misview``), each a small branch below, for mutation
testing of the client-view checks (``properties.viewcheck``).

Must not know: transports, files, the agent's internals, or which rules a monitor checks.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, BinaryIO

from model import entity, foreground, toolcall
from properties import seeded
from properties.findings import Finding
from properties.observe import BACKGROUND_ID_FIELD
from properties.readings import IDLE_AFTER_UNRECOGNIZED_STATE, resolve
from properties.transcript import DEFAULT_MAX_LINE_BYTES, read_transcript

Json = Any
Message = dict[str, Any]

ENTITY_TYPES: tuple[str, ...] = (
    "user_message",
    "agent_message",
    "agent_thought",
    "session_message",
    "tool_call",
    "compaction",
    "terminal",
    "plan",
)
KNOWN_STATES = frozenset({"idle", "running", "requires_action", "unknown"})
ACTIVE_STATES = frozenset({"running", "requires_action"})
_FINAL_TOOL = frozenset(toolcall.FINAL)

F_OMITTED_BACKGROUND_EMPTY = seeded.OMITTED_BACKGROUND_IS_EMPTY.name
F_MOVE_ON_UPDATE = seeded.MOVE_ON_UPDATE.name
F_DROP_UNSEEN_CHUNK = seeded.DROP_UNSEEN_CHUNK.name
F_KEY_BY_ID_ONLY = seeded.KEY_BY_ID_ONLY.name
F_UNKNOWN_STATE_IDLE = seeded.UNKNOWN_STATE_IS_IDLE.name
F_REPEAT_IDLE_COUNTS = seeded.REPEAT_IDLE_COUNTS.name
F_RESPONSE_OVERWRITES = seeded.RESPONSE_OVERWRITES_STATE.name
F_LINK_BY_EQUAL_ID = seeded.LINK_BY_EQUAL_ID.name
F_SYNTHESIZE_INCOMING = seeded.SYNTHESIZE_INCOMING.name
F_SILENT_TERMINAL_EXITED = seeded.SILENT_TERMINAL_EXITED.name
F_UNREPORTED_BACKGROUND_ABANDONS = seeded.UNREPORTED_BACKGROUND_ABANDONS.name
F_IDLE_WAITS_FOR_ANSWER = seeded.IDLE_WAITS_FOR_ANSWER.name
F_RUNNING_MEANS_INSERTED = seeded.RUNNING_MEANS_INSERTED.name
F_REPLAY_INFERS_ACTIVITY = seeded.REPLAY_INFERS_ACTIVITY.name
F_LOCAL_ECHO = seeded.LOCAL_ECHO.name
F_ASSOCIATE_BY_ORDER = seeded.ASSOCIATE_BY_ORDER.name
F_IDLE_NEEDS_KNOWN_REASON = seeded.IDLE_NEEDS_KNOWN_REASON.name
F_UNKNOWN_KEEPS_ACTIVITY = seeded.UNKNOWN_KEEPS_ACTIVITY.name
F_CHUNK_REPLACES = {
    "agent_message": seeded.MESSAGE_CHUNK_REPLACES.name,
    "tool_call": seeded.TOOL_CHUNK_REPLACES.name,
    "compaction": seeded.SUMMARY_CHUNK_REPLACES.name,
}
"""By entity type: the faulty view whose chunks of that type replace the content."""

CLIENT_FAULTS: tuple[str, ...] = seeded.VIEW_FAULTS
"""The faulty views (``properties.seeded``: each a branch below testing its name)."""

_MISSING: Any = object()


# -- small validators ----------------------------------------------------------------------------
def _is_str(v: Json) -> bool:
    return isinstance(v, str)


def _is_obj(v: Json) -> bool:
    return isinstance(v, dict)


def _is_any(v: Json) -> bool:
    return True


def _is_block(v: Json) -> bool:
    """A ContentBlock / ToolCallContent item: an object with a string ``type``."""
    return isinstance(v, dict) and isinstance(v.get("type"), str)


def _is_uint(v: Json) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _is_cost(v: Json) -> bool:
    if not isinstance(v, dict):
        return False
    amount = v.get("amount")
    numeric = isinstance(amount, int | float) and not isinstance(amount, bool)
    return numeric and isinstance(v.get("currency"), str)


def _valid_background(items: list[Json]) -> bool:
    for item in items:
        if not isinstance(item, dict):
            return False
        kind = item.get("type")
        if not isinstance(kind, str):
            return False
        id_field = BACKGROUND_ID_FIELD.get(kind)
        if id_field is not None and not isinstance(item.get(id_field), str):
            return False
    return True


def _decode_b64(v: Json) -> bytes | None:
    if not isinstance(v, str):
        return None
    try:
        return base64.b64decode(v, validate=True)
    except (binascii.Error, ValueError):
        return None


def freeze(value: Json) -> Any:
    """A hashable, order-sensitive form of a JSON value (dicts by sorted key, tagged)."""
    if isinstance(value, dict):
        return ("{", tuple(sorted((k, freeze(v)) for k, v in value.items())))
    if isinstance(value, list):
        return ("[", tuple(freeze(v) for v in value))
    return value


def json_key(request_id: Json) -> str:
    """How a JSON-RPC id is written as a key of ``prompts``: ``7`` -> ``"7"``, ``"p"`` -> ``'"p"'``."""
    return json.dumps(request_id)


# -- entities ------------------------------------------------------------------------------------
def _defaults(etype: str) -> dict[str, Json]:
    if etype == "tool_call":
        return {
            "status": "pending",
            "title": None,
            "kind": "other",
            "name": None,
            "content": [],
            "locations": [],
            "rawInput": None,
            "rawOutput": None,
            "capabilities": None,
            "_meta": {},
        }
    if etype == "compaction":
        return {"status": "in_progress", "summary": [], "error": None, "_meta": {}}
    if etype == "terminal":
        return {
            "command": None,
            "cwd": None,
            "output": None,
            "exitStatus": None,
            "size": None,
            "capabilities": None,
            "_meta": {},
        }
    if etype == "plan":
        return {"plan": None, "removed": False}
    if etype == "session_message":
        return {
            "content": [],
            "_meta": {},
            "senderSessionId": None,
            "recipientSessionId": None,
            "senderMessageId": None,
            "recipientMessageId": None,
        }
    return {"content": [], "_meta": {}}


class _Entity:
    __slots__ = ("eid", "etype", "fields", "frozen")

    def __init__(self, etype: str, eid: str) -> None:
        self.etype = etype
        self.eid = eid
        self.fields = _defaults(etype)
        self.frozen: Any = None

    def to_json(self) -> dict[str, Json]:
        out: dict[str, Json] = {}
        for name, value in self.fields.items():
            if name == "output" and isinstance(value, bytes):
                out[name] = base64.b64encode(value).decode("ascii")
            elif isinstance(value, list):
                out[name] = list(value)
            elif isinstance(value, dict) and name == "_meta":
                out[name] = dict(value)
            else:
                out[name] = value
        return out

    def snapshot(self) -> Any:
        if self.frozen is None:
            self.frozen = (self.etype, self.eid, tuple(freeze(v) for v in self.fields.values()))
        return self.frozen

    def __deepcopy__(self, memo: dict[int, Any]) -> _Entity:
        new = _Entity.__new__(_Entity)
        new.etype, new.eid, new.frozen = self.etype, self.eid, self.frozen  # immutable: shared
        new.fields = copy.deepcopy(self.fields, memo)
        return new


# -- sessions ------------------------------------------------------------------------------------
class _Session:
    __slots__ = (
        "abandon_unreported",
        "assumed",
        "background",
        "completions",
        "cost",
        "deferred",
        "elicitations",
        "entities",
        "exited",
        "last_stop_reason",
        "malformed",
        "notices",
        "preserved",
        "prompts",
        "rejected",
        "resuming",
        "size",
        "snap",
        "state",
        "subagents",
        "timeline",
        "used",
    )

    def __init__(self, state: str = "idle") -> None:
        self.state = state
        self.background: list[Json] | None = None
        self.completions = 0
        self.used: int | None = None
        self.size: int | None = None
        self.cost: Json = None
        self.last_stop_reason: Json = None
        self.entities: dict[tuple[str, str], _Entity] = {}
        self.timeline: list[tuple[str, str]] = []
        self.prompts: dict[str, str | None] = {}
        self.rejected: dict[str, Json] = {}
        self.preserved: list[Json] = []
        self.subagents: dict[str, dict[str, Json]] = {}
        self.notices = 0
        self.malformed = 0
        self.resuming = 0
        self.elicitations: dict[str, dict[str, Json]] = {}
        """Elicitations the user still has to act on, by request ID key: pending an answer, or
        accepted in URL mode and awaiting the external completion."""
        self.snap: Any = None
        self.assumed: set[str] = set()
        """Prompt keys a faulty view took as inserted without their response."""
        self.exited: set[str] = set()
        """Terminal IDs a faulty view took as exited without their exitStatus."""
        self.deferred: list[dict[str, Json]] = []
        """State updates a faulty view holds back, waiting for an order it inferred."""
        self.abandon_unreported = False
        """A faulty view: background not reported is taken as [] when judging abandonment."""

    def pending(self) -> list[str]:
        """The keys of prompts sent and neither answered nor refused."""
        return [k for k, v in self.prompts.items() if v is None and k not in self.rejected]

    def abandoned(self) -> list[list[str]]:
        """[type, ID] of the unfinished tool calls and terminals the Client may treat as abandoned:
        once the session is idle, those not in the latest reported background list (a tool call
        that references a listed terminal is live); none while background is not reported."""
        listed = self.background if self.background is not None else ([] if self.abandon_unreported else None)
        if self.state != "idle" or listed is None:
            return []
        names = {(str(i.get("type")), i.get(BACKGROUND_ID_FIELD.get(str(i.get("type")), ""))) for i in listed}
        terminals = {ident for kind, ident in names if kind == "terminal"}
        out: list[list[str]] = []
        for key in self.timeline:
            ent = self.entities[key]
            etype, eid, fields = ent.etype, ent.eid, ent.fields
            if (etype, eid) in names:
                continue
            if etype == "terminal" and fields["exitStatus"] is None:
                out.append([etype, eid])
            elif etype == "tool_call" and fields["status"] not in _FINAL_TOOL:
                refs = {c.get("terminalId") for c in fields["content"] if c.get("type") == "terminal"}
                if not refs & terminals:
                    out.append([etype, eid])
        return out

    def to_json(self) -> dict[str, Json]:
        entities: dict[str, dict[str, Json]] = {t: {} for t in ENTITY_TYPES}
        timeline: list[list[str]] = []
        for key in self.timeline:
            ent = self.entities[key]
            entities[ent.etype][ent.eid] = ent.to_json()
            timeline.append([ent.etype, ent.eid])
        return {
            "entities": entities,
            "timeline": timeline,
            "session": self.state_json(),
            "preserved": list(self.preserved),
        }

    def state_json(self) -> dict[str, Json]:
        return {
            "state": self.state,
            "background": None if self.background is None else list(self.background),
            "completions": self.completions,
            "usage": {"used": self.used, "size": self.size, "cost": self.cost},
            "last_stop_reason": self.last_stop_reason,
            "prompts": dict(self.prompts),
            "rejected_prompts": dict(self.rejected),
            "notices": self.notices,
            "malformed_updates": self.malformed,
            "subagents": {k: dict(v) for k, v in self.subagents.items()},
            "elicitations": {k: dict(v) for k, v in self.elicitations.items()},
            "inserted": sorted({k for k, v in self.prompts.items() if v is not None} | self.assumed),
            "exited": sorted(
                {
                    e.eid
                    for e in self.entities.values()
                    if e.etype == "terminal" and e.fields["exitStatus"] is not None
                }
                | self.exited
            ),
            "abandoned": self.abandoned(),
            "deferred": len(self.deferred),
        }

    def snapshot(self) -> Any:
        if self.snap is None:
            self.snap = self._freeze()
        return self.snap

    def __deepcopy__(self, memo: dict[int, Any]) -> _Session:
        new = _Session.__new__(_Session)
        for name in _Session.__slots__:
            value = getattr(self, name)
            setattr(new, name, value if name == "snap" else copy.deepcopy(value, memo))
        return new

    def _freeze(self) -> Any:
        return (
            self.state,
            None if self.background is None else freeze(self.background),
            self.completions,
            self.used,
            self.size,
            freeze(self.cost),
            freeze(self.last_stop_reason),
            tuple(self.entities[key].snapshot() for key in self.timeline),
            tuple(self.prompts.items()),
            tuple((k, freeze(v)) for k, v in self.rejected.items()),
            self.notices,
            self.malformed,
            freeze(self.subagents),
            freeze(self.preserved),
            freeze(self.elicitations),
            tuple(sorted(self.assumed)),
            tuple(sorted(self.exited)),
            freeze(self.deferred),
            self.abandon_unreported,
        )


# -- the view ------------------------------------------------------------------------------------
_MESSAGE_UPSERTS = {
    "user_message": "user_message",
    "agent_message": "agent_message",
    "agent_thought": "agent_thought",
    "session_message": "session_message",
}
# chunk variant -> (entity type, ID field, field the chunk appends to)
_CHUNKS = {
    "user_message_chunk": ("user_message", "messageId", "content"),
    "agent_message_chunk": ("agent_message", "messageId", "content"),
    "agent_thought_chunk": ("agent_thought", "messageId", "content"),
    "session_message_chunk": ("session_message", "messageId", "content"),
    "tool_call_content_chunk": ("tool_call", "toolCallId", "content"),
    "compaction_summary_chunk": ("compaction", "compactionId", "summary"),
}
_PARTICIPANTS = ("senderSessionId", "recipientSessionId", "senderMessageId", "recipientMessageId")
_CONTENT = frozenset({*_MESSAGE_UPSERTS, *_CHUNKS, "tool_call_update", "plan_update"})
"""Updates of content (replayed during a resume, they say nothing of the current activity)."""
_IGNORED_KNOWN = frozenset({"available_commands_update", "config_option_update", "session_info_update"})


class ClientView:
    """The reference client's view of every session; see the module docstring for the rules."""

    def __init__(
        self, faults: Iterable[str] = frozenset(), readings: Mapping[str, str] | None = None
    ) -> None:
        self.faults = frozenset(faults)
        self.readings = resolve(readings)
        """Every reading's alternative in force (``properties.readings``)."""
        self._unrecognized_ends = self.readings[IDLE_AFTER_UNRECOGNIZED_STATE] == "completion"
        unknown = self.faults - set(CLIENT_FAULTS)
        if unknown:
            raise ValueError(f"unknown client faults: {sorted(unknown)}")
        self._sessions: dict[str, _Session] = {}
        # client -> agent requests still awaiting a response: id -> (method, sessionId or None)
        self._pending: dict[Json, tuple[str, str | None]] = {}
        self._asked: dict[Json, str] = {}
        """Elicitations the Client has not answered and the Agent has not withdrawn: id -> session."""
        self._snap: Any = None
        self._key_by_id = F_KEY_BY_ID_ONLY in self.faults
        self._move = F_MOVE_ON_UPDATE in self.faults

    # -- public API ------------------------------------------------------------------------------
    def apply(self, sender: str, message: Message) -> None:
        """Fold one wire message (``sender`` is "client" or "agent") into the view."""
        if not isinstance(message, dict):
            return
        self._snap = None
        method = message.get("method")
        if isinstance(method, str):
            params = message.get("params")
            if not isinstance(params, dict):
                params = {}
            if "id" in message:
                if sender == "client":
                    self._on_client_request(message["id"], method, params)
                elif method == "elicitation/create":
                    self._on_elicitation(message["id"], params)
            elif sender == "agent" and method == "session/update":
                self._on_update(params)
            elif sender == "agent" and method in ("elicitation/complete", "$/cancel_request"):
                self._elicitation_ended(method, params)
        elif sender == "agent" and ("result" in message or "error" in message):
            self._on_response(message)
        elif sender == "client" and ("result" in message or "error" in message):
            self._elicitation_answered(message)

    def sessions(self) -> list[str]:
        return list(self._sessions)

    def to_json(self) -> dict[str, Json]:
        """The client view format: one object per session ID (see docs and tests for the shape)."""
        return {sid: sess.to_json() for sid, sess in self._sessions.items()}

    def session_json(self, sid: str) -> dict[str, Json]:
        """One session's part of ``to_json`` (KeyError when the view has no such session)."""
        return self._sessions[sid].to_json()

    # For readers that follow a view message by message (the HTML pages): the parts of one
    # session's ``session_json`` without building all of it, and which entities changed.
    def session_state(self, sid: str) -> dict[str, Json]:
        """``session_json(sid)["session"]``."""
        return self._sessions[sid].state_json()

    def preserved_count(self, sid: str) -> int:
        """``len(session_json(sid)["preserved"])``."""
        return len(self._sessions[sid].preserved)

    def timeline_snapshots(self, sid: str) -> list[tuple[str, str, Any]]:
        """The snapshot of each entity of the session, in timeline order: a tuple (type, ID,
        fields), the same object until the entity is updated again."""
        sess = self._sessions[sid]
        entities = sess.entities
        return [entities[key].snapshot() for key in sess.timeline]

    def entity_json(self, sid: str, etype: str, eid: str) -> dict[str, Json]:
        """``session_json(sid)["entities"][etype][eid]``."""
        sess = self._sessions[sid]
        ent = sess.entities[("", eid) if self._key_by_id else (etype, eid)]
        return ent.to_json()

    def snapshot(self) -> Any:
        """The whole view as a hashable tuple (cached until the next ``apply``)."""
        if self._snap is None:
            self._snap = tuple((sid, sess.snapshot()) for sid, sess in self._sessions.items())
        return self._snap

    _SHARED = frozenset({"_snap", "faults", "readings"})
    """Attributes a copy shares: never changed after ``__init__``, or a cache that is dropped
    (never changed) when the view changes."""

    def __deepcopy__(self, memo: dict[int, Any]) -> ClientView:
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for name, value in self.__dict__.items():
            new.__dict__[name] = value if name in self._SHARED else copy.deepcopy(value, memo)
        return new

    # -- sessions and requests -------------------------------------------------------------------
    def _session(self, sid: str, state: str = "idle") -> _Session:
        """The session to change (created with ``state`` if new); its cached snapshot is dropped."""
        sess = self._sessions.get(sid)
        if sess is None:
            sess = self._sessions[sid] = _Session(state)
            sess.abandon_unreported = F_UNREPORTED_BACKGROUND_ABANDONS in self.faults
        sess.snap = None
        return sess

    def _on_client_request(self, rid: Json, method: str, params: dict[str, Json]) -> None:
        if isinstance(rid, bool) or not isinstance(rid, int | str):
            return
        sid = params.get("sessionId")
        sid = sid if isinstance(sid, str) else None
        self._pending[rid] = (method, sid)
        if sid is None:
            return
        if method == "session/prompt":
            sess = self._session(sid)
            sess.prompts[json_key(rid)] = None
            content = params.get("prompt")
            if F_LOCAL_ECHO in self.faults and isinstance(content, list):  # its own entry, never merged
                fields = self._create(sess, "user_message", f"local-{json_key(rid)}").fields
                fields["content"] = [b for b in content if _is_block(b)]
        elif method == "session/resume":
            # A resumed session does not imply idle: until its snapshot arrives, state is unknown.
            sess = self._session(sid, state="unknown")
            sess.resuming += 1

    def _on_response(self, message: Message) -> None:
        rid = message.get("id")
        if isinstance(rid, bool) or not isinstance(rid, int | str):
            return
        pending = self._pending.pop(rid, None)
        if pending is None:
            return
        method, sid = pending
        result = message.get("result")
        ok = "error" not in message and isinstance(result, dict)
        if method in ("session/new", "session/fork"):
            new_sid = result.get("sessionId") if ok and isinstance(result, dict) else None
            if isinstance(new_sid, str):
                sess = self._session(new_sid)
                if F_RESPONSE_OVERWRITES in self.faults:
                    sess.state = "idle"
        elif sid is None:
            return
        elif method == "session/prompt":
            sess = self._session(sid)
            key = json_key(rid)
            mid = result.get("messageId") if ok and isinstance(result, dict) else None
            if isinstance(mid, str):
                if not (F_ASSOCIATE_BY_ORDER in self.faults and sess.prompts.get(key) is not None):
                    sess.prompts[key] = mid
            else:
                error = message.get("error")
                sess.rejected[key] = error.get("code") if isinstance(error, dict) else None
            if sess.deferred and not sess.pending():  # the idles held back for this answer
                held, sess.deferred = sess.deferred, []
                for upd in held:
                    self._on_state(sess, upd)
        elif method == "session/resume":
            sess = self._session(sid)
            sess.resuming = max(0, sess.resuming - 1)
            if F_RESPONSE_OVERWRITES in self.faults and ok:
                sess.state = "idle"

    # -- elicitations ----------------------------------------------------------------------------
    # The user's side of an elicitation (model.elicitation): shown from the request until the
    # Client answers it (an accept in URL mode leaves it awaiting its external completion) or
    # the Agent withdraws it with $/cancel_request; the completion ends an accepted URL one.
    def _on_elicitation(self, rid: Json, params: dict[str, Json]) -> None:
        sid = params.get("sessionId")
        if isinstance(rid, bool) or not isinstance(rid, int | str) or not isinstance(sid, str):
            return
        mode = params.get("mode")
        entry: dict[str, Json] = {"mode": mode, "status": "pending", "message": params.get("message")}
        if mode == "url":
            entry["url"] = params.get("url")
            entry["elicitationId"] = params.get("elicitationId")
        self._session(sid).elicitations[json_key(rid)] = entry
        self._asked[rid] = sid

    def _elicitation_answered(self, message: Message) -> None:
        rid = message.get("id")
        if isinstance(rid, bool) or not isinstance(rid, int | str) or rid not in self._asked:
            return
        sess = self._session(self._asked.pop(rid))
        key = json_key(rid)
        entry = sess.elicitations.get(key)
        result = message.get("result")
        action = result.get("action") if isinstance(result, dict) else None
        if entry is not None and entry["mode"] == "url" and action == "accept":
            sess.elicitations[key] = {**entry, "status": "awaiting_completion"}
        else:
            sess.elicitations.pop(key, None)

    def _elicitation_ended(self, method: str, params: dict[str, Json]) -> None:
        if method == "$/cancel_request":
            rid = params.get("requestId")
            sid = self._asked.pop(rid, None) if isinstance(rid, int | str) else None
            if sid is not None:
                self._session(sid).elicitations.pop(json_key(rid), None)
            return
        eid = params.get("elicitationId")
        for sid, sess in self._sessions.items():
            for key, entry in sess.elicitations.items():
                if entry.get("elicitationId") == eid and entry["status"] == "awaiting_completion":
                    del self._session(sid).elicitations[key]
                    return

    # -- session/update dispatch -----------------------------------------------------------------
    def _on_update(self, params: dict[str, Json]) -> None:
        sid = params.get("sessionId")
        upd = params.get("update")
        if not isinstance(sid, str):
            return
        sess = self._session(sid)
        if not isinstance(upd, dict) or not isinstance(upd.get("sessionUpdate"), str):
            sess.malformed += 1
            return
        variant: str = upd["sessionUpdate"]
        handler = _HANDLERS.get(variant)
        if handler is None:
            if variant not in _IGNORED_KNOWN:
                sess.preserved.append(upd)  # unknown or custom variant: keep raw, ignore
            return
        if sess.resuming and variant in _CONTENT and F_REPLAY_INFERS_ACTIVITY in self.faults:
            sess.state = "running"  # activity inferred from replayed content
        if not handler(self, sess, upd):
            sess.malformed += 1
            return
        if self.faults:
            self._misview(sid, sess, variant, upd)

    def _misview(self, sid: str, sess: _Session, variant: str, upd: dict[str, Json]) -> None:
        """What a faulty view does after applying an update as the spec says."""
        if variant.startswith("session_message") and F_SYNTHESIZE_INCOMING in self.faults:
            self._synthesize(sid, sess, upd)
        if variant.startswith("session_message") and F_LINK_BY_EQUAL_ID in self.faults:
            self._link_equal()
        mid = upd.get("messageId")
        by_order = variant.startswith("user_message") and F_ASSOCIATE_BY_ORDER in self.faults
        if by_order and isinstance(mid, str) and mid not in sess.prompts.values():
            key = next(iter(sess.pending()), None)  # the oldest prompt without a message takes it
            if key is not None:
                sess.prompts[key] = mid

    def _synthesize(self, sid: str, sess: _Session, upd: dict[str, Json]) -> None:
        """An incoming entry made in the recipient's session from an outgoing message."""
        mid = str(upd.get("messageId"))
        ent = sess.entities.get(("", mid) if self._key_by_id else ("session_message", mid))
        if ent is None:
            return
        recipient = ent.fields.get("recipientSessionId")
        if not isinstance(recipient, str) or recipient == sid:
            return
        other = self._session(recipient)
        if self._lookup(other, "session_message", str(mid)) is None:
            made = self._create(other, "session_message", str(mid)).fields
            made["content"] = list(ent.fields["content"])
            made["senderSessionId"] = sid

    def _link_equal(self) -> None:
        """Each view without the other's ID linked to a message of the same ID in the other
        session."""
        for sess in self._sessions.values():
            for ent in sess.entities.values():
                if ent.etype != "session_message":
                    continue
                for who, link in (
                    ("recipientSessionId", "recipientMessageId"),
                    ("senderSessionId", "senderMessageId"),
                ):
                    other = self._sessions.get(ent.fields.get(who))  # type: ignore[arg-type]
                    if ent.fields.get(link) is not None or other is None or other is sess:
                        continue
                    key = ("", ent.eid) if self._key_by_id else ("session_message", ent.eid)
                    if key in other.entities:
                        ent.fields[link] = ent.eid
                        ent.frozen = None
                        sess.snap = None

    # -- entity bookkeeping ----------------------------------------------------------------------
    def _lookup(self, sess: _Session, etype: str, eid: str) -> _Entity | None:
        key = ("", eid) if self._key_by_id else (etype, eid)
        ent = sess.entities.get(key)
        if ent is None:
            return None
        if ent.etype != etype:  # only reachable under key-by-id-only: the new type overwrites
            ent.etype = etype
            ent.fields = _defaults(etype)
        if self._move:
            sess.timeline.remove(key)
            sess.timeline.append(key)
        ent.frozen = None
        return ent

    def _create(self, sess: _Session, etype: str, eid: str) -> _Entity:
        key = ("", eid) if self._key_by_id else (etype, eid)
        ent = sess.entities[key] = _Entity(etype, eid)
        sess.timeline.append(key)
        return ent

    def _upsert(self, sess: _Session, etype: str, eid: str) -> _Entity:
        ent = self._lookup(sess, etype, eid)
        return ent if ent is not None else self._create(sess, etype, eid)

    # -- handlers (return False for a malformed known variant) -----------------------------------
    def _on_message_upsert(self, sess: _Session, upd: dict[str, Json]) -> bool:
        mid = upd.get("messageId")
        if not isinstance(mid, str):
            return False
        etype = _MESSAGE_UPSERTS[upd["sessionUpdate"]]
        fields = self._upsert(sess, etype, mid).fields
        entity.patch_list(fields, upd, "content", _is_block)
        entity.patch_meta(fields, upd)
        if etype == "session_message":
            for name in _PARTICIPANTS:
                entity.patch(fields, upd, name, _is_str)
        return True

    def _on_chunk(self, sess: _Session, upd: dict[str, Json]) -> bool:
        etype, id_field, target = _CHUNKS[upd["sessionUpdate"]]
        eid = upd.get(id_field)
        block = upd.get("content")
        if not isinstance(eid, str) or not _is_block(block):
            return False
        ent = self._lookup(sess, etype, eid)
        if ent is None:
            if F_DROP_UNSEEN_CHUNK in self.faults:
                return True
            ent = self._create(sess, etype, eid)
        if F_CHUNK_REPLACES.get(etype, "") in self.faults:
            ent.fields[target] = [block]
        else:
            entity.append_chunk(ent.fields, target, block)
        return True

    def _on_tool_call(self, sess: _Session, upd: dict[str, Json]) -> bool:
        tid = upd.get("toolCallId")
        if not isinstance(tid, str):
            return False
        fields = self._upsert(sess, "tool_call", tid).fields
        entity.patch(fields, upd, "status", _is_str, "pending")
        entity.patch(fields, upd, "kind", _is_str, "other")
        entity.patch(fields, upd, "title", _is_str)
        entity.patch(fields, upd, "name", _is_str)
        entity.patch_list(fields, upd, "content", _is_block)
        entity.patch_list(fields, upd, "locations", _is_obj)
        entity.patch(fields, upd, "rawInput", _is_any)
        entity.patch(fields, upd, "rawOutput", _is_any)
        entity.patch(fields, upd, "capabilities", _is_obj)
        entity.patch_meta(fields, upd)
        return True

    def _on_terminal(self, sess: _Session, upd: dict[str, Json]) -> bool:
        tid = upd.get("terminalId")
        if not isinstance(tid, str):
            return False
        fields = self._upsert(sess, "terminal", tid).fields
        for name, check in (
            ("command", _is_str),
            ("cwd", _is_str),
            ("exitStatus", _is_obj),
            ("size", _is_obj),
            ("capabilities", _is_obj),
        ):
            entity.patch(fields, upd, name, check)
        output = upd.get("output", _MISSING)
        if output is None:
            fields["output"] = None
        elif isinstance(output, dict):
            data = _decode_b64(output.get("data"))
            if data is not None:
                fields["output"] = data
        entity.patch_meta(fields, upd)
        return True

    def _on_terminal_output(self, sess: _Session, upd: dict[str, Json]) -> bool:
        tid = upd.get("terminalId")
        data = _decode_b64(upd.get("data"))
        if not isinstance(tid, str) or data is None:
            return False
        ent = self._lookup(sess, "terminal", tid)
        if ent is None:
            if F_DROP_UNSEEN_CHUNK in self.faults:
                return True
            ent = self._create(sess, "terminal", tid)
        ent.fields["output"] = (ent.fields["output"] or b"") + data
        return True

    def _on_compaction(self, sess: _Session, upd: dict[str, Json]) -> bool:
        cid = upd.get("compactionId")
        status = upd.get("status")
        if not isinstance(cid, str) or not isinstance(status, str):
            return False
        fields = self._upsert(sess, "compaction", cid).fields
        fields["status"] = status
        entity.patch_list(fields, upd, "summary", _is_block)
        entity.patch(fields, upd, "error", _is_str)
        entity.patch_meta(fields, upd)
        return True

    def _on_plan(self, sess: _Session, upd: dict[str, Json]) -> bool:
        plan = upd.get("plan")
        if not isinstance(plan, dict) or not isinstance(plan.get("type"), str):
            return False
        pid = plan.get("planId")
        if not isinstance(pid, str):
            return False
        fields = self._upsert(sess, "plan", pid).fields
        fields["plan"] = plan
        fields["removed"] = False
        return True

    def _on_plan_removed(self, sess: _Session, upd: dict[str, Json]) -> bool:
        pid = upd.get("planId")
        if not isinstance(pid, str):
            return False
        ent = self._lookup(sess, "plan", pid)
        if ent is not None:
            ent.fields["removed"] = True
        return True

    def _on_usage(self, sess: _Session, upd: dict[str, Json]) -> bool:
        used, size = upd.get("used"), upd.get("size")
        if not _is_uint(used) or not _is_uint(size):
            return False
        sess.used, sess.size = used, size
        cost = upd.get("cost", _MISSING)
        if cost is None:
            sess.cost = None
        elif cost is not _MISSING and _is_cost(cost):
            sess.cost = cost
        return True

    def _on_notice(self, sess: _Session, upd: dict[str, Json]) -> bool:
        sess.notices += 1
        return True

    def _on_subagent(self, sess: _Session, upd: dict[str, Json]) -> bool:
        child = upd.get("sessionId")
        if not isinstance(child, str):
            return False
        record = sess.subagents.setdefault(child, {})
        for key, value in upd.items():
            if key in ("sessionUpdate", "sessionId"):
                continue
            if key == "_meta":
                meta = record.setdefault("_meta", {})
                if value is None:
                    meta.clear()
                elif isinstance(value, dict):
                    for mk, mv in value.items():
                        if mv is None:
                            meta.pop(mk, None)
                        else:
                            meta[mk] = mv
            elif value is None:
                record.pop(key, None)
            else:
                record[key] = value
        return True

    def _on_state(self, sess: _Session, upd: dict[str, Json]) -> bool:
        raw = upd.get("state")
        state = raw if isinstance(raw, str) and raw in KNOWN_STATES else "unrecognized"
        if self.faults and state == "idle":
            if F_IDLE_WAITS_FOR_ANSWER in self.faults and sess.pending():
                sess.deferred.append(upd)  # taken as coming after the prompt's answer
                return True
            if (
                F_IDLE_NEEDS_KNOWN_REASON in self.faults
                and upd.get("stopReason") not in foreground.STOP_REASONS
            ):
                return True  # not taken as the end of the work
            if F_SILENT_TERMINAL_EXITED in self.faults:
                sess.exited |= {
                    e.eid
                    for e in sess.entities.values()
                    if e.etype == "terminal" and e.fields["output"] is None and e.fields["exitStatus"] is None
                }
        if state == "running" and F_RUNNING_MEANS_INSERTED in self.faults:
            sess.assumed |= set(sess.pending())
        if state == "unknown" and sess.state in ACTIVE_STATES and F_UNKNOWN_KEEPS_ACTIVITY in self.faults:
            state = sess.state  # the earlier activity still shown as confirmed
        if state != "idle" and state not in ACTIVE_STATES and F_UNKNOWN_STATE_IDLE in self.faults:
            state = "idle"
        if state == "idle":
            ends_work = (
                sess.state in ACTIVE_STATES or (self._unrecognized_ends and sess.state == "unrecognized")
            ) and not sess.resuming
            if ends_work or F_REPEAT_IDLE_COUNTS in self.faults:
                sess.completions += 1
            reason = upd.get("stopReason")
            if isinstance(reason, str):
                sess.last_stop_reason = reason
            elif ends_work:  # work ended without a usable reason: the old one no longer applies
                sess.last_stop_reason = None
        sess.state = state
        background = upd.get("background")
        if background is None:
            sess.background = [] if F_OMITTED_BACKGROUND_EMPTY in self.faults else None
        elif isinstance(background, list) and _valid_background(background):
            sess.background = list(background)
        else:
            sess.background = None
        return True


_HANDLERS: dict[str, Callable[[ClientView, _Session, dict[str, Json]], bool]] = {
    "state_update": ClientView._on_state,
    "tool_call_update": ClientView._on_tool_call,
    "terminal_update": ClientView._on_terminal,
    "terminal_output_chunk": ClientView._on_terminal_output,
    "compaction_update": ClientView._on_compaction,
    "plan_update": ClientView._on_plan,
    "plan_removed": ClientView._on_plan_removed,
    "usage_update": ClientView._on_usage,
    "notice": ClientView._on_notice,
    "subagent_update": ClientView._on_subagent,
    **dict.fromkeys(_MESSAGE_UPSERTS, ClientView._on_message_upsert),
    **dict.fromkeys(_CHUNKS, ClientView._on_chunk),
}
"""Each known update variant's handler (a class-level table: a view holds no bound methods, so
it is freed by reference counting alone, without waiting for a full collection of the cyclic
collector; the exhaustive search keeps hundreds of thousands of views)."""


@dataclass
class ViewedTranscript:
    """A transcript applied to a fresh reference view (``view_transcript``)."""

    view: ClientView
    messages: int
    """Messages applied."""
    skipped: list[Finding]
    """The reader's findings for lines it could not use, in line order."""


def view_transcript(
    stream: BinaryIO,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    readings: Mapping[str, str] | None = None,
) -> ViewedTranscript:
    """Apply every usable message of a transcript to a fresh reference view, and keep the
    reader's findings for the lines that could not be used (tolerated input is not skipped)."""
    result = ViewedTranscript(ClientView(readings=readings), 0, [])
    for item in read_transcript(stream, max_line_bytes):
        if isinstance(item, Finding):
            if item.severity != "info":
                result.skipped.append(item)
            continue
        _line, sender, message = item
        result.view.apply(sender, message)
        result.messages += 1
    return result
