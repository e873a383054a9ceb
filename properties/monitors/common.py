"""Vocabulary shared by the monitors: the standard values of the wire enums and small parsers.

Owns: the monitors' names for the model's vocabulary (states and final tool-call statuses come
from the machines in ``model/``, where they are defined once; stop reasons are read from
``model.foreground`` directly, the prompt content types a prompt may carry from
``model.between``), the terminals a tool call's content embeds, and what a JSON-RPC error object
is (the parsing of a ``background`` list into ``(type, id)`` keys is the observer layer's,
``properties.observe.background_keys``). Values come from the schema ``$defs`` (StateUpdate,
StopReason variants of IdleStateUpdate, ToolCallStatus, BackgroundWork).

Must not know: any monitor's state or rule.
"""

from __future__ import annotations

from typing import Any, Final

from model import foreground, toolcall
from model.clientview_parts import ACTIVE_STATES

ACTIVE: Final = ACTIVE_STATES
STANDARD_STATES: Final = frozenset(foreground.KNOWN_STATES)
TOOL_FINAL: Final = frozenset(toolcall.FINAL)
REQUEST_CANCELLED: Final = -32800
INVALID_PARAMS: Final = -32602
INVALID_REQUEST: Final = -32600


def terminal_refs(content: Any) -> frozenset[str]:
    """Terminal IDs a tool call's ``content`` array embeds (``{"type": "terminal", ...}``)."""
    if type(content) is not list:
        return frozenset()
    return frozenset(
        item["terminalId"]
        for item in content
        if type(item) is dict and item.get("type") == "terminal" and type(item.get("terminalId")) is str
    )


def is_error_object(value: Any) -> bool:
    """A JSON-RPC error object: an integer ``code`` and a string ``message``."""
    return type(value) is dict and type(value.get("code")) is int and type(value.get("message")) is str
