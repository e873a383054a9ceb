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
  array replaces everything accumulated so far, chunks included (``patch_list``); any other
  field: omitted leaves it, null resets it to its default, a value replaces it (``patch``);
- a chunk appends one block to whatever is current (``append_chunk``);
- an upsert's top-level ``_meta`` patches stored metadata key by key, null clears it, a key set
  to null is removed (``patch_meta``); a chunk's ``_meta`` is scoped to the chunk and patches
  nothing.

The machine tracks only what the timeline needs (unseen -> placed, empty or with content); the
functions below are the arithmetic, stated once: the normative client view
(``model.clientview``) applies them to every entity it keeps.

Must not know: JSON-RPC, sessions, foreground state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, TypeGuard

from model.core import MachineSpec, Row
from model.fields import MESSAGE_ID

UNSEEN, EMPTY, WITH_CONTENT = "unseen", "empty", "with_content"
STATES = (UNSEEN, EMPTY, WITH_CONTENT)
MSGID = "Message IDs"
ENT = "Entity IDs"

MESSAGE_TYPES: Final = ("user_message", "agent_message", "agent_thought", "session_message")
"""The message-like entity types: keyed by ``messageId``, their content patched and chunked."""

REUSED_ID: Final = "ENT-01"
"""The rule the tables of ID-addressed entities that end (``model.terminal``, ``model.toolcall``)
refuse a new start under an ended entity's ID with: the Agent never gives an ID to a second
entity of the same type in a session (Entity IDs)."""

PLACEMENT: Final = "ENT-04"
"""The rule this table states for a Client: the first update or chunk of an entity fixes its place
on the timeline, later ones patch it there (``model.clientview_rules`` names it where a Client's
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
    forbidden=dict.fromkeys(("upsert_content", "upsert_keep", "upsert_clear", "chunk"), PLACEMENT),
    description="Timeline placement and content of one (type, ID) entity.",
)

KEYED_BY_ID: Final = MESSAGE_ID
"""The rule that every message update and chunk (user, agent and thought messages) names its
entity by an opaque messageId (Message IDs; stated in ``model.fields``, which the table monitor
judges): one without a string ID keys no entity (``keyed``)."""


def keyed(entity_id: Any) -> TypeGuard[str]:
    """``KEYED_BY_ID``: whether an update's messageId can key an entity (a string; opaque)."""
    return type(entity_id) is str


MISSING: Any = object()
"""What ``upd.get`` returns for a field the update leaves out."""


def upsert_trigger(content: Any) -> str:
    """The trigger for an upsert whose ``content`` field is ``content`` (``MISSING`` if omitted)."""
    if content is MISSING:
        return "upsert_keep"
    return "upsert_clear" if not content else "upsert_content"


# -- the patch arithmetic (each mutates ``fields``, one entity's stored fields, in place; ``upd``
# is an update's payload). The normative client view (``model.clientview``) applies it.


def patch(
    fields: dict[str, Any],
    upd: Mapping[str, Any],
    name: str,
    valid: Callable[[Any], bool],
    null_value: Any = None,
) -> None:
    """One field of an upsert: omitted leaves it, null resets it to ``null_value`` (the field's
    default), a valid value replaces it, a malformed one is ignored (treated as omitted)."""
    value = upd.get(name, MISSING)
    if value is MISSING:
        return
    if value is None:
        fields[name] = null_value
    elif valid(value):
        fields[name] = value


def patch_list(
    fields: dict[str, Any], upd: Mapping[str, Any], name: str, item_ok: Callable[[Any], bool]
) -> None:
    """A list field (content, summary, locations): omitted leaves it, null or ``[]`` clears it, an
    array replaces everything accumulated so far, chunks included (malformed items skipped)."""
    value = upd.get(name, MISSING)
    if value is MISSING:
        return
    if value is None:
        fields[name] = []
    elif isinstance(value, list):
        fields[name] = [item for item in value if item_ok(item)]


def patch_meta(fields: dict[str, Any], upd: Mapping[str, Any]) -> None:
    """An upsert's top-level ``_meta``: omitted leaves the stored metadata, null clears it, an
    object patches it key by key (a key set to null is removed; nested objects are not merged)."""
    value = upd.get("_meta", MISSING)
    if value is MISSING:
        return
    if value is None:
        fields["_meta"] = {}
    elif isinstance(value, dict):
        meta = fields["_meta"]
        for key, val in value.items():
            if val is None:
                meta.pop(key, None)
            else:
                meta[key] = val


def append_chunk(fields: dict[str, Any], name: str, block: Any) -> None:
    """A chunk appends one block to whatever the list field holds now."""
    fields[name].append(block)
