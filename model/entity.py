"""ID-addressed entities (messages, thoughts, session messages, tool calls, terminals, plans,
compactions): placement on the timeline and the content patch arithmetic.

Theory of operation
-------------------
An entity is keyed by (type, ID): the same ID under two types names two entities. The first
update or chunk for an unseen key creates the entity with its defaults, fixes its position on
the timeline (after everything received before it), and then applies; later updates and chunks
patch it in place and never move it, even after the session reports idle.

Content rules (Message IDs; Session-directed messages; Session compaction; 5. Tool invocation):
- an upsert without content leaves content unchanged; ``null`` or ``[]`` clears it; a concrete
  array replaces everything accumulated so far, chunks included;
- a chunk appends one block to whatever is current;
- an upsert's top-level ``_meta`` patches stored metadata key by key; a chunk's ``_meta`` is
  scoped to the chunk and patches nothing.

The machine tracks only what the timeline needs (unseen -> placed, empty or with content); the
functions below are the arithmetic, shared by the simulator's client view and the tests.

Must not know: JSON-RPC, sessions, foreground state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, TypeGuard

from model.core import MachineSpec, Row

UNSEEN, EMPTY, WITH_CONTENT = "unseen", "empty", "with_content"
STATES = (UNSEEN, EMPTY, WITH_CONTENT)
TYPES = (
    "user_message",
    "agent_message",
    "agent_thought",
    "session_message",
    "tool_call",
    "terminal",
    "plan",
    "compaction",
)
MSGID = "Message IDs"
ENT = "Entity IDs"

PLACEMENT: Final = "ENT-04"
"""The rule this table states for a Client: the first update or chunk of an entity fixes its place
on the timeline, later ones patch it there (``properties.viewcheck`` names it where a Client's
view differs from the view this table builds)."""

ROWS = (
    Row("upsert_content", UNSEEN, WITH_CONTENT, ENT, note="creates, fixes position"),
    Row("upsert_keep", UNSEEN, EMPTY, ENT, note="creates with defaults"),
    Row("upsert_clear", UNSEEN, EMPTY, ENT),
    Row("chunk", UNSEEN, WITH_CONTENT, ENT, note="never dropped"),
    Row("upsert_content", EMPTY, WITH_CONTENT, MSGID),
    Row("upsert_keep", EMPTY, EMPTY, MSGID),
    Row("upsert_clear", EMPTY, EMPTY, MSGID),
    Row("chunk", EMPTY, WITH_CONTENT, MSGID),
    Row("upsert_content", WITH_CONTENT, WITH_CONTENT, MSGID, note="replaces"),
    Row("upsert_keep", WITH_CONTENT, WITH_CONTENT, MSGID, note="content unchanged"),
    Row("upsert_clear", WITH_CONTENT, EMPTY, MSGID, note="null or []"),
    Row("chunk", WITH_CONTENT, WITH_CONTENT, MSGID, note="appends"),
)

SPEC = MachineSpec(
    name="entity",
    title="Message-like and ID-addressed entity",
    per="(entity type, ID) within a session",
    states=STATES,
    initial=UNSEEN,
    final=(),
    rows=ROWS,
    home=EMPTY,
    forbidden={
        "upsert_content": PLACEMENT,
        "upsert_keep": PLACEMENT,
        "upsert_clear": PLACEMENT,
        "chunk": PLACEMENT,
    },
    description="Timeline placement and content of one (type, ID) entity.",
)

KEYED_BY_ID: Final = "MSGID-01"
"""The rule that every message update and chunk (user, agent and thought messages) names its
entity by an opaque messageId (Message IDs): one without a string ID keys no entity (``keyed``)."""


def keyed(entity_id: Any) -> TypeGuard[str]:
    """``KEYED_BY_ID``: whether an update's messageId can key an entity (a string; opaque)."""
    return type(entity_id) is str


_MISSING: Any = object()


def upsert_trigger(content: Any) -> str:
    """The trigger for an upsert whose ``content`` field is ``content`` (``MISSING`` if omitted)."""
    if content is _MISSING:
        return "upsert_keep"
    return "upsert_clear" if not content else "upsert_content"


MISSING = _MISSING


def apply_upsert(current: list[Any], content: Any = _MISSING) -> list[Any]:
    """New content after an upsert: omitted keeps, null/[] clears, a list replaces."""
    if content is _MISSING:
        return current
    if not content:
        return []
    return list(content)


def apply_chunk(current: list[Any], block: Any) -> list[Any]:
    """New content after a chunk: the block is appended to whatever is current."""
    return [*current, block]


def patch_meta(current: Mapping[str, Any], patch: Any) -> dict[str, Any]:
    """Top-level ``_meta`` patch: each key of ``patch`` replaces that key; others stay.

    A ``_meta`` that is omitted, null or not an object leaves the stored metadata unchanged.
    """
    if not isinstance(patch, Mapping):
        return dict(current)
    return {**current, **patch}
