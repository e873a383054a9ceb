"""What single session updates must carry: the fields the spec requires of one message.

Theory of operation
-------------------
Some rules are about one update alone, not about any machine's state: a notice's severity and
title, a usage update's token counts and cost, a message's or session-directed message's
messageId, a compaction update's ID and status. Each is stated here once, as a ``Required`` (the update
variant, the field, the kind of value it must hold, the rule), and the table monitor
(``properties.monitors.tables``) judges every update of that variant against this table. Kinds:

- ``string``: a JSON string (present, not null);
- ``text``: a non-empty string;
- ``count``: a non-negative integer;
- ``object``: a JSON object;
- ``cost``: absent or null, or an object with a numeric ``amount`` and a string ``currency``.

Rows come from: Message IDs; Session-directed messages; Session notices; Session compaction; Session usage
updates.

Must not know: JSON-RPC, sessions, machines, how a breach is reported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final


@dataclass(frozen=True, slots=True)
class Required:
    """One field an update variant must carry."""

    variant: str
    field: str
    kind: str
    rule: str
    section: str


def _cost(value: Any) -> bool:
    if value is None:
        return True
    return (
        type(value) is dict
        and type(value.get("amount")) in (int, float)
        and type(value.get("currency")) is str
    )


KINDS: Final[dict[str, Callable[[Any], bool]]] = {
    "string": lambda v: type(v) is str,
    "text": lambda v: type(v) is str and bool(v),
    "count": lambda v: type(v) is int and v >= 0,
    "object": lambda v: type(v) is dict,
    "cost": _cost,
}
"""Kind -> whether a value is of that kind (an absent field is judged as null)."""

MESSAGE_ID: Final = "MSGID-01"
"""Every user, agent and thought message update and chunk names its message by an opaque
messageId (a string): one without it keys no entity (``model.entity.keyed``)."""
MESSAGE_VARIANTS: Final = tuple(
    f"{kind}{form}" for kind in ("user_message", "agent_message", "agent_thought") for form in ("", "_chunk")
)
"""The message updates and chunks MESSAGE_ID binds."""

_MSGID, _SDM, _NOTICE, _COMPACT, _USAGE = (
    "Message IDs",
    "Session-directed messages",
    "Session notices",
    "Session compaction",
    "Session usage updates",
)

REQUIRED: Final[tuple[Required, ...]] = (
    *(Required(v, "messageId", "string", MESSAGE_ID, _MSGID) for v in MESSAGE_VARIANTS),
    Required("session_message", "messageId", "string", "SDM-01", _SDM),
    Required("session_message_chunk", "messageId", "string", "SDM-01", _SDM),
    Required("notice", "severity", "string", "NOTICE-02", _NOTICE),
    Required("notice", "title", "text", "NOTICE-02", _NOTICE),
    Required("compaction_update", "compactionId", "string", "COMPACT-02", _COMPACT),
    Required("compaction_update", "status", "string", "COMPACT-02", _COMPACT),
    Required("compaction_summary_chunk", "compactionId", "string", "COMPACT-02", _COMPACT),
    Required("compaction_summary_chunk", "content", "object", "COMPACT-02", _COMPACT),
    Required("usage_update", "used", "count", "USAGE-02", _USAGE),
    Required("usage_update", "size", "count", "USAGE-02", _USAGE),
    Required("usage_update", "cost", "cost", "USAGE-02", _USAGE),
)

BY_VARIANT: Final[dict[str, tuple[Required, ...]]] = {
    v: tuple(r for r in REQUIRED if r.variant == v) for v in dict.fromkeys(r.variant for r in REQUIRED)
}


def missing(variant: str, upd: dict[str, Any]) -> list[Required]:
    """The requirements of ``variant`` (``upd``'s ``sessionUpdate``) that ``upd`` does not meet,
    in table order."""
    unmet = []
    for r in BY_VARIANT.get(variant, ()):
        if not KINDS[r.kind](upd.get(r.field)):
            unmet.append(r)
    return unmet
