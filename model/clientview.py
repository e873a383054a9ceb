"""The Client's machine: the normative client view, what a Client that applies every update
exactly as the spec asks shows.

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
  grows, ``last_stop_reason`` is reset as for work that ended). ``ClientView(readings=...)``
  takes the readings in force (``properties.readings``; absent: the default).
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
dropped rather than changed).

The records it keeps (entities, sessions) are ``model.clientview_parts``; the rule each aspect of
the view answers to is ``model.clientview_rules``. The seeded faulty views
(``properties.clientview``, the registry's kind ``Misview``) fold some messages otherwise, on top
of this one: they subclass ``ClientView`` and override the steps below, which know nothing of
them.

Must not know: transports, files, the agent's internals, faulty views, or which rules a monitor
or the view comparison checks.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final

from model import elicitation as em
from model import entity
from model.clientview_parts import (
    ACTIVE_STATES,
    FIELDS,
    KNOWN_STATES,
    Entity,
    Json,
    Session,
    decode_b64,
    is_block,
    is_cost_or_null,
    is_request_id,
    is_uint,
    json_key,
    valid_background,
)

Message = dict[str, Any]
Handler = Callable[[Any, Session, dict[str, Json]], bool]
"""How the view folds one update of a known variant into its session (False: malformed)."""

UNRECOGNIZED_IDLE: Final = "idle-after-unrecognized-state"
"""The reading (``properties.readings``) whose alternative ``completion`` makes an idle after an
unrecognized state end that work (``ClientView(readings=...)``)."""

# -- the view ------------------------------------------------------------------------------------
# upsert variant -> (entity type, ID field)
UPSERTS = {
    **{m: (m, "messageId") for m in entity.MESSAGE_TYPES},
    "tool_call_update": ("tool_call", "toolCallId"),
    "compaction_update": ("compaction", "compactionId"),
    "terminal_update": ("terminal", "terminalId"),
}
# chunk variant -> (entity type, ID field, field the chunk appends to)
CHUNKS = {
    **{f"{m}_chunk": (m, "messageId", "content") for m in entity.MESSAGE_TYPES},
    "tool_call_content_chunk": ("tool_call", "toolCallId", "content"),
    "compaction_summary_chunk": ("compaction", "compactionId", "summary"),
}
CONTENT = frozenset({*UPSERTS, *CHUNKS, "plan_update"}) - {"compaction_update", "terminal_update"}
"""Updates of content (replayed during a resume, they say nothing of the current activity)."""
_ANSWERS = tuple(dict.fromkeys(r.trigger for r in em.ROWS if r.actor == "client"))
"""How the Client answers an elicitation (accept, decline, cancel)."""
_IGNORED_KNOWN = frozenset({"available_commands_update", "config_option_update", "session_info_update"})


class ClientView:
    """The reference client's view of every session; see the module docstring for the rules."""

    _HANDLERS: ClassVar[dict[str, Handler]]
    """Each known update variant's handler (set below the class)."""

    def __init__(self, readings: Mapping[str, str] | None = None) -> None:
        self._unrecognized_ends = (readings or {}).get(UNRECOGNIZED_IDLE) == "completion"
        self._sessions: dict[str, Session] = {}
        # client -> agent requests still awaiting a response: id -> (method, sessionId or None)
        self._pending: dict[Json, tuple[str, str | None]] = {}
        self._snap: Any = None

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
            elif sender == "agent" and method == "$/cancel_request":  # a request withdrawn
                rid = params.get("requestId")
                if is_request_id(rid):
                    self._elicitation_step("withdraw", json_key(rid))
            elif sender == "agent" and method == "elicitation/complete":
                self._elicitation_step("complete", None, params.get("elicitationId"))
        elif sender == "agent" and ("result" in message or "error" in message):
            self._on_response(message)
        elif sender == "client" and ("result" in message or "error" in message):
            self._elicitation_answered(message)

    def to_json(self) -> dict[str, Json]:
        """The client view format: one object per session ID (see docs and tests for the shape)."""
        return {sid: sess.to_json() for sid, sess in self._sessions.items()}

    # For readers that follow a view message by message (the HTML pages): the parts of one
    # session's ``to_json()[sid]`` without building all of it, and which entities changed.
    def session_state(self, sid: str) -> dict[str, Json]:
        """``to_json()[sid]["session"]``."""
        return self._sessions[sid].state_json()

    def preserved_count(self, sid: str) -> int:
        """``len(to_json()[sid]["preserved"])``."""
        return len(self._sessions[sid].preserved)

    def timeline_snapshots(self, sid: str) -> list[tuple[str, str, Any]]:
        """The snapshot of each entity of the session, in timeline order: a tuple (type, ID,
        fields), the same object until the entity is updated again."""
        sess = self._sessions[sid]
        entities = sess.entities
        return [entities[key].snapshot() for key in sess.timeline]

    def entity_json(self, sid: str, etype: str, eid: str) -> dict[str, Json]:
        """``to_json()[sid]["entities"][etype][eid]``."""
        return self._sessions[sid].entities[self._key(etype, eid)].to_json()

    def snapshot(self) -> Any:
        """The whole view as a hashable tuple (cached until the next ``apply``)."""
        if self._snap is None:
            self._snap = tuple((sid, sess.snapshot()) for sid, sess in self._sessions.items())
        return self._snap

    _SHARED: frozenset[str] = frozenset({"_snap"})
    """Attributes a copy shares: never changed after ``__init__``, or a cache that is dropped
    (never changed) when the view changes."""

    def __deepcopy__(self, memo: dict[int, Any]) -> ClientView:
        new = type(self).__new__(type(self))
        memo[id(self)] = new
        for name, value in self.__dict__.items():
            new.__dict__[name] = value if name in self._SHARED else copy.deepcopy(value, memo)
        return new

    # -- sessions and requests -------------------------------------------------------------------
    def _session(self, sid: str, state: str = "idle") -> Session:
        """The session to change (created with ``state`` if new); its cached snapshot is dropped."""
        sess = self._sessions.get(sid)
        if sess is None:
            sess = self._sessions[sid] = self._new_session(state)
        sess.snap = None
        return sess

    def _new_session(self, state: str) -> Session:
        return Session(state)

    def _on_client_request(self, rid: Json, method: str, params: dict[str, Json]) -> None:
        if not is_request_id(rid):
            return
        sid = params.get("sessionId")
        sid = sid if isinstance(sid, str) else None
        self._pending[rid] = (method, sid)
        if sid is None:
            return
        if method == "session/prompt":
            sess = self._session(sid)
            sess.prompts[json_key(rid)] = None
        elif method == "session/resume":
            # A resumed session does not imply idle: until its snapshot arrives, state is unknown.
            sess = self._session(sid, state="unknown")
            sess.resuming += 1

    def _on_response(self, message: Message) -> None:
        rid = message.get("id")
        pending = self._pending.pop(rid, None) if is_request_id(rid) else None
        if pending is None:
            return
        method, sid = pending
        result = message.get("result")
        if "error" in message or not isinstance(result, dict):
            result = None  # no success result
        if method in ("session/new", "session/fork"):
            new_sid = result.get("sessionId") if result is not None else None
            if isinstance(new_sid, str):
                self._session_answered(self._session(new_sid), True)
        elif sid is None:
            return
        elif method == "session/prompt":
            self._prompt_answered(self._session(sid), json_key(rid), result, message.get("error"))
        elif method == "session/resume":
            sess = self._session(sid)
            sess.resuming = max(0, sess.resuming - 1)
            self._session_answered(sess, result is not None)

    def _prompt_answered(self, sess: Session, key: str, result: Json, error: Json) -> None:
        """The response to prompt ``key``: its messageId, or it is refused (``error``'s code)."""
        mid = result.get("messageId") if result is not None else None
        if isinstance(mid, str):
            sess.prompts[key] = mid
        else:
            sess.rejected[key] = error.get("code") if isinstance(error, dict) else None

    def _session_answered(self, sess: Session, ok: bool) -> None:
        """The answer to a session/new or session/fork (``ok``), or to a session/resume (``ok``:
        a success): the state stays as reported (a response never overwrites it)."""

    # -- elicitations ----------------------------------------------------------------------------
    # The user's side of an elicitation: shown while the elicitation table (model.elicitation)
    # has it pending or awaiting its external completion: from the request until the Client
    # answers it (any other response ends it as a cancel does), the Agent withdraws it with
    # $/cancel_request, or, once accepted in URL mode, the Agent reports it complete.
    def _on_elicitation(self, rid: Json, params: dict[str, Json]) -> None:
        sid = params.get("sessionId")
        if not is_request_id(rid) or not isinstance(sid, str):
            return
        mode = params.get("mode")
        entry: dict[str, Json] = {"mode": mode, "status": em.PENDING, "message": params.get("message")}
        if mode == "url":
            entry["url"] = params.get("url")
            entry["elicitationId"] = params.get("elicitationId")
        self._session(sid).elicitations[json_key(rid)] = entry

    def _elicitation_answered(self, message: Message) -> None:
        rid = message.get("id")
        result = message.get("result")
        action = result.get("action") if isinstance(result, dict) else None
        if is_request_id(rid):
            self._elicitation_step(action if action in _ANSWERS else "cancel", json_key(rid))

    def _elicitation_step(self, trigger: str, key: str | None, eid: Json = None) -> None:
        """Fire ``trigger`` on the first elicitation shown whose request key is ``key`` (None:
        whose elicitationId is ``eid``) and whose state has a row for it; no longer shown once
        the table leaves it neither pending nor awaiting."""
        for sid, sess in self._sessions.items():
            for k, entry in sess.elicitations.items():
                if (k != key) if key is not None else (entry.get("elicitationId") != eid):
                    continue
                after = em.SPEC.successor(entry["status"], trigger, {"url": entry["mode"] == "url"})
                if after is not None:
                    if after in em.BLOCKING:
                        self._session(sid).elicitations[k] = {**entry, "status": after}
                    else:
                        del self._session(sid).elicitations[k]
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
        if variant not in self._HANDLERS:
            if variant not in _IGNORED_KNOWN:
                sess.preserved.append(upd)  # unknown or custom variant: keep raw, ignore
            return
        if not self._fold(sid, sess, variant, upd):
            sess.malformed += 1

    def _fold(self, sid: str, sess: Session, variant: str, upd: dict[str, Json]) -> bool:
        """Apply one update of a known variant to its session; False when it is malformed."""
        return self._HANDLERS[variant](self, sess, upd)

    # -- entity bookkeeping ----------------------------------------------------------------------
    def _key(self, etype: str, eid: str) -> tuple[str, str]:
        """How the view keys an entity: by (type, ID), so one ID under two types is two entities."""
        return (etype, eid)

    def _lookup(self, sess: Session, etype: str, eid: str) -> Entity | None:
        """The entity to patch (in place: it keeps its timeline position), or None if unseen."""
        ent = sess.entities.get(self._key(etype, eid))
        if ent is not None:
            ent.frozen = None
        return ent

    def _create(self, sess: Session, etype: str, eid: str) -> Entity:
        """A new entity with its defaults, placed after everything received before it."""
        key = self._key(etype, eid)
        ent = sess.entities[key] = Entity(etype, eid)
        sess.timeline.append(key)
        return ent

    def _upsert(self, sess: Session, etype: str, eid: str) -> Entity:
        ent = self._lookup(sess, etype, eid)
        return ent if ent is not None else self._create(sess, etype, eid)

    # -- handlers (return False for a malformed known variant) -----------------------------------
    def _on_upsert(self, sess: Session, upd: dict[str, Json]) -> bool:
        """An upsert of a message, tool call, compaction or terminal: its fields patched as
        ``FIELDS`` says (a compaction's status is required)."""
        etype, id_field = UPSERTS[upd["sessionUpdate"]]
        eid = upd.get(id_field)
        if not isinstance(eid, str) or (etype == "compaction" and not isinstance(upd.get("status"), str)):
            return False
        fields = self._upsert(sess, etype, eid).fields
        for name, (default, valid) in FIELDS[etype].items():
            if valid is None:  # set by the variant's own step below
                continue
            if name == "_meta":
                entity.patch_meta(fields, upd)
            elif type(default) is list:
                entity.patch_list(fields, upd, name, valid)
            else:
                entity.patch(fields, upd, name, valid, default)
        if etype == "terminal":  # output: base64 of all bytes so far
            output = upd.get("output", entity.MISSING)
            if output is None:
                fields["output"] = None
            elif isinstance(output, dict):
                data = decode_b64(output.get("data"))
                if data is not None:
                    fields["output"] = data
        return True

    def _on_chunk(self, sess: Session, upd: dict[str, Json]) -> bool:
        etype, id_field, target = CHUNKS[upd["sessionUpdate"]]
        eid = upd.get(id_field)
        block = upd.get("content")
        if not isinstance(eid, str) or not is_block(block):
            return False
        ent = self._chunked(sess, etype, eid)
        if ent is not None:
            self._append(ent, target, block)
        return True

    def _chunked(self, sess: Session, etype: str, eid: str) -> Entity | None:
        """The entity a chunk adds to: a chunk for an unseen ID creates the entity first."""
        return self._upsert(sess, etype, eid)

    def _append(self, ent: Entity, target: str, block: Json) -> None:
        entity.append_chunk(ent.fields, target, block)

    def _on_terminal_output(self, sess: Session, upd: dict[str, Json]) -> bool:
        tid = upd.get("terminalId")
        data = decode_b64(upd.get("data"))
        if not isinstance(tid, str) or data is None:
            return False
        ent = self._chunked(sess, "terminal", tid)
        if ent is not None:
            ent.fields["output"] = (ent.fields["output"] or b"") + data
        return True

    def _on_plan(self, sess: Session, upd: dict[str, Json]) -> bool:
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

    def _on_plan_removed(self, sess: Session, upd: dict[str, Json]) -> bool:
        pid = upd.get("planId")
        if not isinstance(pid, str):
            return False
        ent = self._lookup(sess, "plan", pid)
        if ent is not None:
            ent.fields["removed"] = True
        return True

    def _on_usage(self, sess: Session, upd: dict[str, Json]) -> bool:
        used, size = upd.get("used"), upd.get("size")
        if not is_uint(used) or not is_uint(size):
            return False
        sess.used, sess.size = used, size
        cost = upd.get("cost", entity.MISSING)
        if cost is not entity.MISSING and is_cost_or_null(cost):  # null clears it
            sess.cost = cost
        return True

    def _on_notice(self, sess: Session, upd: dict[str, Json]) -> bool:
        sess.notices += 1
        return True

    def _on_subagent(self, sess: Session, upd: dict[str, Json]) -> bool:
        child = upd.get("sessionId")
        if not isinstance(child, str):
            return False
        record = sess.subagents.setdefault(child, {})
        for key, value in upd.items():
            if key in ("sessionUpdate", "sessionId"):
                continue
            if key == "_meta":
                record.setdefault("_meta", {})
                entity.patch_meta(record, upd)
            elif value is None:
                record.pop(key, None)
            else:
                record[key] = value
        return True

    def _on_state(self, sess: Session, upd: dict[str, Json]) -> bool:
        self._take_state(sess, upd, reported_state(upd))
        return True

    def _take_state(self, sess: Session, upd: dict[str, Json], state: str) -> None:
        """Show ``state`` (from the state update ``upd``) and the update's background list."""
        if state == "idle":
            ends_work = (
                sess.state in ACTIVE_STATES or (self._unrecognized_ends and sess.state == "unrecognized")
            ) and not sess.resuming
            if ends_work:
                sess.completions += 1
            reason = upd.get("stopReason")
            if isinstance(reason, str):
                sess.last_stop_reason = reason
            elif ends_work:  # work ended without a usable reason: the old one no longer applies
                sess.last_stop_reason = None
        sess.state = state
        background = upd.get("background")
        if isinstance(background, list) and valid_background(background):
            sess.background = list(background)
        else:  # omitted, null or malformed: unknown
            sess.background = None


def reported_state(upd: dict[str, Json]) -> str:
    """The state a state update reports: one of ``KNOWN_STATES``, else ``unrecognized``."""
    raw = upd.get("state")
    return raw if isinstance(raw, str) and raw in KNOWN_STATES else "unrecognized"


ClientView._HANDLERS = {
    "state_update": ClientView._on_state,
    "terminal_output_chunk": ClientView._on_terminal_output,
    "plan_update": ClientView._on_plan,
    "plan_removed": ClientView._on_plan_removed,
    "usage_update": ClientView._on_usage,
    "notice": ClientView._on_notice,
    "subagent_update": ClientView._on_subagent,
    **dict.fromkeys(UPSERTS, ClientView._on_upsert),
    **dict.fromkeys(CHUNKS, ClientView._on_chunk),
}
"""Each known update variant's handler (a class-level table, which a subclass may extend: a view
holds no bound methods, so it is freed by reference counting alone, without waiting for a full
collection of the cyclic collector; the exhaustive search keeps hundreds of thousands of
views)."""
KNOWN_UPDATES: frozenset[str] = frozenset(ClientView._HANDLERS) | _IGNORED_KNOWN
"""Every standard ``sessionUpdate`` variant of the schema's ``SessionUpdate``: those the view
folds and those it knows and ignores."""
