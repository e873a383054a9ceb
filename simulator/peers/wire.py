"""Wire-exact ACP v2 JSON-RPC 2.0 messages, built as plain dicts.

Owns: the shape of every message the simulator puts on the wire (requests, responses, error
responses, notifications and every ``session/update`` variant it uses), so that all of them
validate against the official schema and the rest of the simulator never spells a field name.

Must not know: why a message is sent, state machines, or channels.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from model.background import ID_FIELD

Msg = dict[str, Any]

REQUEST_CANCELLED = -32800
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


def text(t: str) -> dict[str, str]:
    return {"type": "text", "text": t}


def request(rid: int | str, method: str, params: dict[str, Any]) -> Msg:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}


def notification(method: str, params: dict[str, Any]) -> Msg:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def result(rid: int | str, res: dict[str, Any]) -> Msg:
    return {"jsonrpc": "2.0", "id": rid, "result": res}


def error(rid: int | str | None, code: int, message: str, data: Any = None) -> Msg:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": err}


# -- client -> agent ---------------------------------------------------------------------------


def prompt(rid: int, session: str, content: list[Any]) -> Msg:
    return request(rid, "session/prompt", {"sessionId": session, "prompt": content})


def cancel(session: str) -> Msg:
    return notification("session/cancel", {"sessionId": session})


def cancel_request(rid: int | str) -> Msg:
    return notification("$/cancel_request", {"requestId": rid})


def close(rid: int, session: str) -> Msg:
    return request(rid, "session/close", {"sessionId": session})


def resume(rid: int, session: str, replay: bool) -> Msg:
    params: dict[str, Any] = {"sessionId": session, "cwd": "/work"}
    if replay:
        params["replayFrom"] = {"type": "start"}
    return request(rid, "session/resume", params)


def permission_selected(rid: int | str, option: str) -> Msg:
    return result(rid, {"outcome": {"outcome": "selected", "optionId": option}})


def permission_cancelled(rid: int | str) -> Msg:
    return result(rid, {"outcome": {"outcome": "cancelled"}})


ELICIT_CONTENT = {"answer": "yes"}
"""What the simulated user enters in a form elicitation (it matches ``ELICIT_FORM``)."""


def elicitation_answer(rid: int | str, action: str) -> Msg:
    """The Client's answer to an elicitation: accept (with the form's content in form mode: the
    Client does not need the mode, the content is optional in URL mode), decline or cancel."""
    res: dict[str, Any] = {"action": action}
    if action == "accept":
        res["content"] = dict(ELICIT_CONTENT)
    return result(rid, res)


# -- agent -> client ---------------------------------------------------------------------------

ELICIT_FORM = {
    "type": "object",
    "properties": {"answer": {"type": "string", "title": "Answer"}},
    "required": ["answer"],
}
"""The form the simulated Agent asks the user to fill in (an ``ElicitationSchema``)."""


def elicitation_create(
    rid: str, session: str, mode: str, elicitation_id: str, tool_call_id: str | None = None
) -> Msg:
    """A session-scoped elicitation in ``mode`` (form: a form schema; url: a URL to visit, with
    the ``elicitationId`` its completion names), tied to a tool call when ``tool_call_id`` is
    given."""
    params: dict[str, Any] = {"sessionId": session, "mode": mode, "message": "More input is needed"}
    if tool_call_id is not None:
        params["toolCallId"] = tool_call_id
    if mode == "form":
        params["requestedSchema"] = ELICIT_FORM
    else:
        params["elicitationId"] = elicitation_id
        params["url"] = f"https://example.com/elicit/{elicitation_id}"
    return request(rid, "elicitation/create", params)


def elicitation_complete(elicitation_id: str) -> Msg:
    """The Agent's notice that the user finished a URL elicitation outside the Client."""
    return notification("elicitation/complete", {"elicitationId": elicitation_id})


PERMISSION_OPTIONS = [
    {"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "deny", "name": "Reject once", "kind": "reject_once"},
]


STOP_OPTION = {"optionId": "stop", "name": "Stop the work", "kind": "reject_once"}
"""A permission option that tells the Agent to stop the work (Stop reasons: the user may stop the
work "through an interaction the Agent offers, such as a permission option that tells the
Agent to stop"); offered only with feature ``user_stop``."""


def request_permission(rid: str, session: str, tool_call_id: str, stop: bool = False) -> Msg:
    """A permission request about a tool call: allow or deny, and with ``stop`` the option that
    stops the work (``STOP_OPTION``)."""
    return request(
        rid,
        "session/request_permission",
        {
            "sessionId": session,
            "title": f"Run {tool_call_id}?",
            "subject": {"type": "tool_call", "toolCall": {"toolCallId": tool_call_id}},
            "options": [*PERMISSION_OPTIONS, STOP_OPTION] if stop else PERMISSION_OPTIONS,
        },
    )


def update(session: str, upd: dict[str, Any]) -> Msg:
    return notification("session/update", {"sessionId": session, "update": upd})


def state_update(
    session: str,
    state: str,
    background: list[dict[str, Any]] | None = None,
    stop_reason: str | None = None,
    err: dict[str, Any] | None = None,
) -> Msg:
    upd: dict[str, Any] = {"sessionUpdate": "state_update", "state": state}
    if state == "idle" and stop_reason is not None:
        upd["stopReason"] = stop_reason
        if stop_reason == "error" and err is not None:
            upd["error"] = err
    if background is not None:
        upd["background"] = background
    return update(session, upd)


def message(kind: str, session: str, message_id: str, content: Any) -> Msg:
    """A full message upsert (kind user_message, agent_message, agent_thought: ``content`` a list
    of blocks, or None), or as ``chunk`` a chunk (kind ``*_chunk``: ``content`` one block)."""
    return update(session, {"sessionUpdate": kind, "messageId": message_id, "content": content})


chunk = message


def tool_call(session: str, tool_call_id: str, status: str | None = None, **fields: Any) -> Msg:
    upd: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": tool_call_id}
    if status is not None:
        upd["status"] = status
    upd.update(fields)
    return update(session, upd)


def tool_content_chunk(session: str, tool_call_id: str, t: str) -> Msg:
    return update(
        session,
        {
            "sessionUpdate": "tool_call_content_chunk",
            "toolCallId": tool_call_id,
            "content": {"type": "content", "content": text(t)},
        },
    )


def terminal(session: str, terminal_id: str, exit_code: int | None = None) -> Msg:
    upd: dict[str, Any] = {"sessionUpdate": "terminal_update", "terminalId": terminal_id}
    if exit_code is None:
        upd["command"] = "npm run dev"
    else:
        upd["exitStatus"] = {"exitCode": exit_code}
    return update(session, upd)


def subagent(session: str, child: str, state: dict[str, Any] | None = None) -> Msg:
    upd: dict[str, Any] = {"sessionUpdate": "subagent_update", "sessionId": child, "title": "helper"}
    if state is not None:
        upd["state"] = state
    return update(session, upd)


def session_message(
    session: str, message_id: str, sender: str | None, content: list[Any], recipient: str | None = None
) -> Msg:
    upd: dict[str, Any] = {"sessionUpdate": "session_message", "messageId": message_id, "content": content}
    if sender is not None:
        upd["senderSessionId"] = sender
    if recipient is not None:
        upd["recipientSessionId"] = recipient
    return update(session, upd)


def link(session: str, message_id: str, field: str, other: str) -> Msg:
    """A session message's view linked to the other view (``field``: senderMessageId on the
    incoming view, recipientMessageId on the outgoing one), in a later update."""
    return update(session, {"sessionUpdate": "session_message", "messageId": message_id, field: other})


def plan(session: str, plan_id: str, entries: int) -> Msg:
    return update(
        session,
        {
            "sessionUpdate": "plan_update",
            "plan": {
                "type": "items",
                "planId": plan_id,
                "entries": [
                    {"content": f"step {i + 1}", "priority": "medium", "status": "pending"}
                    for i in range(entries)
                ],
            },
        },
    )


def compaction(session: str, compaction_id: str, status: str, summary: list[Any] | None = None) -> Msg:
    upd: dict[str, Any] = {
        "sessionUpdate": "compaction_update",
        "compactionId": compaction_id,
        "status": status,
    }
    if summary is not None:
        upd["summary"] = summary
    return update(session, upd)


def compaction_chunk(session: str, compaction_id: str, t: str) -> Msg:
    return update(
        session,
        {"sessionUpdate": "compaction_summary_chunk", "compactionId": compaction_id, "content": text(t)},
    )


def notice(session: str, severity: str, title: str, **optional: Any) -> Msg:
    """A notice; ``optional``: its optional fields (``description``, ``_meta``), null allowed."""
    return update(session, {"sessionUpdate": "notice", "severity": severity, "title": title, **optional})


def usage(session: str, used: int, size: int, cost: float | None = None) -> Msg:
    upd: dict[str, Any] = {"sessionUpdate": "usage_update", "used": used, "size": size}
    if cost is not None:
        upd["cost"] = {"amount": cost, "currency": "USD"}
    return update(session, upd)


def background_item(kind: str, ident: str) -> dict[str, str]:
    return {"type": kind, ID_FIELD[kind]: ident}


def json_line(obj: Any) -> str:
    """``obj`` as one line of compact JSON (not ASCII-escaped) ending in a line feed: how a peer
    writes a message, and each line of a transcript."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n"


def to_ndjson(lines: Iterable[tuple[str, Msg]]) -> str:
    """A whole transcript in the transcript format: one ``{"from": sender, "message": msg}``
    ``json_line`` per message."""
    return "".join(json_line({"from": s, "message": m}) for s, m in lines)


# -- connection set-up -------------------------------------------------------------------------

PROTOCOL_VERSION = 2
IMPLEMENTATION = {"name": "acp-model", "version": "0.1.0"}


def initialize(rid: int | str, custom_states: bool = False, elicitation: tuple[str, ...] = ()) -> Msg:
    """The Client's initialize; ``custom_states``: it advertises support for custom states
    (in capabilities ``_meta``, where custom extensions are advertised); ``elicitation``: the
    elicitation modes it supports (``form``, ``url``: capabilities ``elicitation``)."""
    params: dict[str, Any] = {"protocolVersion": PROTOCOL_VERSION, "info": IMPLEMENTATION}
    caps: dict[str, Any] = {}
    if custom_states:
        caps["_meta"] = {"customStates": True}
    if elicitation:
        caps["elicitation"] = {mode: {} for mode in elicitation}
    if caps:
        params["capabilities"] = caps
    return request(rid, "initialize", params)


def initialized(rid: int | str) -> Msg:
    """The Agent's initialize answer: baseline session methods and baseline prompt content only."""
    return result(
        rid,
        {
            "protocolVersion": PROTOCOL_VERSION,
            "info": IMPLEMENTATION,
            "capabilities": {"session": {"prompt": {}}},
        },
    )


def new_session(rid: int | str) -> Msg:
    return request(rid, "session/new", {"cwd": "/work"})


def session_created(rid: int | str, session: str) -> Msg:
    return result(rid, {"sessionId": session})


def image(data: str = "iVBORw0KGgo=") -> dict[str, str]:
    return {"type": "image", "data": data, "mimeType": "image/png"}


def resource_link(uri: str, name: str) -> dict[str, Any]:
    """A resource_link content block (of the baseline set every Agent accepts in a prompt)."""
    return {"type": "resource_link", "uri": uri, "name": name}
