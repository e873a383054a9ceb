"""The records of the Client's machine (``model.clientview``): one entity, one session.

Owns: ``FIELDS`` (each entity type's fields, their defaults and how an update's values for them
are checked), ``Entity`` (one (type, ID) entity of a session: its fields, its JSON form and its
cached snapshot), ``Session`` (one session of the view: state, background,
completions, usage, prompts, elicitations, entities on their timeline, and what the Client
concludes from them: prompts inserted, terminals exited, work abandoned, updates held back), the
small validators the view applies to update fields, ``freeze`` (a hashable form of a JSON value)
and ``json_key`` (how a JSON-RPC id keys the prompts). The view format these build is described
in ``model.clientview``.

What the Client concludes is a method each (``inserted``, ``exited``, ``listed``,
``held_back``), so a seeded faulty view (``properties.clientview``) can conclude otherwise on
top of this one without this module knowing of it.

Must not know: JSON-RPC, how messages are folded in, faulty views, which rules a view answers to.
"""

from __future__ import annotations

import base64
import binascii
import copy
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from model import background, foreground, toolcall
from model.fields import KINDS

Json = Any

KNOWN_STATES = frozenset(foreground.KNOWN_STATES)
ACTIVE_STATES = frozenset({foreground.RUNNING, foreground.REQUIRES_ACTION})
FINAL_TOOL = frozenset(toolcall.FINAL)


# -- small validators (the kinds of ``model.fields``, which a required field is judged by) -------
is_str = KINDS["string"]
is_obj = KINDS["object"]
is_uint = KINDS["count"]
is_cost_or_null = KINDS["cost"]
"""A usage update's cost: an object with a numeric ``amount`` and a string ``currency``, or
null (the ``cost`` kind accepts null, since an absent cost is judged as null)."""


def is_any(v: Json) -> bool:
    return True


def is_request_id(v: Json) -> bool:
    """A JSON-RPC request id the view tracks: an integer (not a boolean) or a string."""
    return not isinstance(v, bool) and isinstance(v, int | str)


def is_block(v: Json) -> bool:
    """A ContentBlock / ToolCallContent item: an object with a string ``type``."""
    return isinstance(v, dict) and isinstance(v.get("type"), str)


def valid_background(items: list[Json]) -> bool:
    for item in items:
        if not isinstance(item, dict):
            return False
        kind = item.get("type")
        if not isinstance(kind, str):
            return False
        id_field = background.ID_FIELD.get(kind)
        if id_field is not None and not isinstance(item.get(id_field), str):
            return False
    return True


def decode_b64(v: Json) -> bytes | None:
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
Field = tuple[Json, Callable[[Json], bool] | None]
_MESSAGE: dict[str, Field] = {"content": ([], is_block), "_meta": ({}, is_obj)}
FIELDS: dict[str, dict[str, Field]] = {
    "user_message": _MESSAGE,
    "agent_message": _MESSAGE,
    "agent_thought": _MESSAGE,
    "session_message": {
        **_MESSAGE,
        "senderSessionId": (None, is_str),
        "recipientSessionId": (None, is_str),
        "senderMessageId": (None, is_str),
        "recipientMessageId": (None, is_str),
    },
    "tool_call": {
        "status": ("pending", is_str),
        "title": (None, is_str),
        "kind": ("other", is_str),
        "name": (None, is_str),
        "content": ([], is_block),
        "locations": ([], is_obj),
        "rawInput": (None, is_any),
        "rawOutput": (None, is_any),
        "capabilities": (None, is_obj),
        "_meta": ({}, is_obj),
    },
    "compaction": {
        "status": ("in_progress", is_str),
        "summary": ([], is_block),
        "error": (None, is_str),
        "_meta": ({}, is_obj),
    },
    "terminal": {
        "command": (None, is_str),
        "cwd": (None, is_str),
        "output": (None, None),
        "exitStatus": (None, is_obj),
        "size": (None, is_obj),
        "capabilities": (None, is_obj),
        "_meta": ({}, is_obj),
    },
    "plan": {"plan": (None, None), "removed": (False, None)},
}
"""Entity type -> its fields in view order: name -> (default, how an upsert's value is checked).
A list default marks a list field (an upsert's items are checked, ``entity.patch_list``), ``_meta``
is patched key by key (``entity.patch_meta``), null resets any other field to its default; a
field without a check is set by its variant's own step (a terminal's output, a plan)."""

ENTITY_TYPES: tuple[str, ...] = tuple(FIELDS)


def defaults(etype: str) -> dict[str, Json]:
    """A new entity's fields (fresh lists and objects)."""
    return {name: copy.copy(default) for name, (default, _) in FIELDS[etype].items()}


class Entity:
    __slots__ = ("eid", "etype", "fields", "frozen")

    def __init__(self, etype: str, eid: str) -> None:
        self.etype = etype
        self.eid = eid
        self.fields = defaults(etype)
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

    def __deepcopy__(self, memo: dict[int, Any]) -> Entity:
        new = Entity.__new__(Entity)
        new.etype, new.eid, new.frozen = self.etype, self.eid, self.frozen  # immutable: shared
        new.fields = copy.deepcopy(self.fields, memo)
        return new


# -- sessions ------------------------------------------------------------------------------------
@dataclass(slots=True, eq=False)
class Session:
    state: str = "idle"
    background: list[Json] | None = None
    completions: int = 0
    used: int | None = None
    size: int | None = None
    cost: Json = None
    last_stop_reason: Json = None
    entities: dict[tuple[str, str], Entity] = field(default_factory=dict)
    timeline: list[tuple[str, str]] = field(default_factory=list)
    prompts: dict[str, str | None] = field(default_factory=dict)
    rejected: dict[str, Json] = field(default_factory=dict)
    preserved: list[Json] = field(default_factory=list)
    subagents: dict[str, dict[str, Json]] = field(default_factory=dict)
    notices: int = 0
    malformed: int = 0
    resuming: int = 0
    elicitations: dict[str, dict[str, Json]] = field(default_factory=dict)
    """Elicitations the user still has to act on, by request ID key: pending an answer, or
    accepted in URL mode and awaiting the external completion."""
    snap: Any = None

    def pending(self) -> list[str]:
        """The keys of prompts sent and neither answered nor refused."""
        return [k for k, v in self.prompts.items() if v is None and k not in self.rejected]

    def listed(self) -> list[Json] | None:
        """The background list the Client judges abandonment by: the latest reported one."""
        return self.background

    def inserted(self) -> set[str]:
        """The keys of the prompts the Client takes as inserted: those answered with a messageId."""
        return {k for k, v in self.prompts.items() if v is not None}

    def exited(self) -> set[str]:
        """The IDs of the terminals the Client takes as exited: those with an exitStatus."""
        return {
            e.eid
            for e in self.entities.values()
            if e.etype == "terminal" and e.fields["exitStatus"] is not None
        }

    def held_back(self) -> int:
        """How many updates the Client holds back: none (it applies each as it arrives)."""
        return 0

    def abandoned(self) -> list[list[str]]:
        """[type, ID] of the unfinished tool calls and terminals the Client may treat as abandoned:
        once the session is idle, those not in the latest reported background list (a tool call
        that references a listed terminal is live); none while background is not reported."""
        listed = self.listed()
        if self.state != "idle" or listed is None:
            return []
        names = {(str(i.get("type")), i.get(background.ID_FIELD.get(str(i.get("type")), ""))) for i in listed}
        terminals = {ident for kind, ident in names if kind == "terminal"}
        out: list[list[str]] = []
        for key in self.timeline:
            ent = self.entities[key]
            etype, eid, fields = ent.etype, ent.eid, ent.fields
            if (etype, eid) in names:
                continue
            if etype == "terminal" and fields["exitStatus"] is None:
                out.append([etype, eid])
            elif etype == "tool_call" and fields["status"] not in FINAL_TOOL:
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
            "inserted": sorted(self.inserted()),
            "exited": sorted(self.exited()),
            "abandoned": self.abandoned(),
            "deferred": self.held_back(),
        }

    def snapshot(self) -> Any:
        if self.snap is None:
            self.snap = self._freeze()
        return self.snap

    def __deepcopy__(self, memo: dict[int, Any]) -> Session:
        """A copy of every slot, a subclass's too, but the cached snapshot (shared)."""
        new = type(self).__new__(type(self))
        for cls in type(self).__mro__[:-1]:
            for name in cls.__dict__["__slots__"]:
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
        )
