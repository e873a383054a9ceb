"""Mermaid ``sequenceDiagram`` text for a transcript: one arrow per JSON-RPC message.

Theory of operation
-------------------
``transcript_to_mermaid(items)`` takes ``(sender, message)`` pairs in transcript order (the
transcript format: ``{"from": "client" | "agent", "message": <JSON-RPC 2.0>}`` per line; sender
"client" means Client -> Agent) and draws two lanes, Client and Agent:

* a request is a solid arrow labelled with its method and id; a notification an open (async)
  arrow labelled with its method; a response a dashed arrow labelled ``result`` or ``error
  <code>``, the method of the request it answers (looked up by the requester's id) and, for a
  prompt, the returned messageId;
* a ``session/update`` is labelled with its variant and key fields: state and stopReason,
  messageId, toolCallId and status, compactionId and status, terminalId (and "exited"), the
  subagent's sessionId and state, and a short summary of the background list (``bg=[]``,
  ``bg=[terminal term_1]``, ``bg=[5 items]``; nothing when the list is omitted);
* a note spans both lanes wherever a session's foreground state changes (sessions start idle);
* updates for a session other than the first one seen carry its id in brackets.

Labels are short and safe: anything outside letters, digits and a few punctuation marks
(``;``, ``#``, ``:``, ``<``, ``$``...) becomes a Mermaid entity code (``#59;``), which Mermaid
decodes when it renders. Malformed messages are drawn as "malformed message", never an error:
explorers call this on counterexamples from faulty peers.

Must not know: the rules, the simulator, or files.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from diagrams.render_mermaid import escape
from properties.outputs import clip

_SAFE = re.compile(r"[A-Za-z0-9_ .,()\[\]=/+*-]")
MAX_FIELD = 28
"""Longest field value shown (longer ids are cut with an ellipsis)."""


def _short(value: Any) -> str:
    return clip(value if isinstance(value, str) else repr(value), MAX_FIELD, one_line=True)


def _id_text(value: Any) -> str:
    return _short(value) if isinstance(value, str) else str(value)


def _background(update: Mapping[str, Any]) -> str:
    if "background" not in update or update["background"] is None:
        return ""
    items = update["background"]
    if not isinstance(items, list):
        return " bg=malformed"
    if len(items) > 3:
        return f" bg=[{len(items)} items]"
    parts = []
    for item in items:
        if not isinstance(item, Mapping):
            parts.append("?")
            continue
        kind = item.get("type")
        ident = item.get("terminalId") or item.get("toolCallId") or item.get("sessionId")
        parts.append(" ".join(_short(x) for x in (kind, ident) if x is not None) or "?")
    return " bg=[" + ", ".join(parts) + "]"


_FIELDS = {
    "state_update": ("state", "stopReason="),
    **dict.fromkeys(("tool_call_update", "tool_call_content_chunk"), ("toolCallId", "status")),
    **dict.fromkeys(("compaction_update", "compaction_summary_chunk"), ("compactionId", "status")),
    **dict.fromkeys(("terminal_update", "terminal_output_chunk"), ("terminalId",)),
    "subagent_update": ("sessionId", "state"),
    "notice": ("severity",),
}
"""The fields a variant's label shows (``name=``: with its name); any other variant: messageId."""


def update_label(update: Mapping[str, Any]) -> str:
    """Short description of one ``params.update`` of a ``session/update``."""
    kind = update.get("sessionUpdate")
    if not isinstance(kind, str):
        return "session/update (no variant)"
    words = [kind]
    for key in _FIELDS.get(kind, ("messageId",)):
        value = update.get(key.rstrip("="))
        if value is not None and not isinstance(value, (dict, list)):
            words.append((key if key.endswith("=") else "") + _short(value))
    if _FIELDS.get(kind) == ("terminalId",) and isinstance(update.get("exitStatus"), Mapping):
        words.append("exited")
    if kind != "state_update":
        return " ".join(words)
    err = update.get("error")
    code = f" error={_short(err['code'])}" if isinstance(err, Mapping) and "code" in err else ""
    return " ".join(words) + _background(update) + code


def _foreground(update: Mapping[str, Any]) -> str | None:
    if update.get("sessionUpdate") != "state_update":
        return None
    state = update.get("state")
    return state if isinstance(state, str) else "unrecognized"


class Step(NamedTuple):
    """One drawn element: an arrow (``kind`` request, notification or response, from ``src``
    to ``dst``, C or A) or a note (``kind`` note, over C and A; ``kind`` hidden, a hidden step
    beside the lane of ``src``, ``style`` naming the run it belongs to)."""

    kind: str
    src: str
    dst: str
    label: str
    style: str = ""


Notes = Mapping[int, Sequence[tuple[str, str, str]]]
"""Hidden steps by position (before transcript line ``position``, 0-based; ``len(items)``: at
the end): (lane C or A, run name, text)."""


def notes_of(hidden: Iterable[tuple[int, str, str]]) -> dict[int, list[tuple[str, str, str]]]:
    """``Notes`` of hidden steps given as (position, run name, step): a step the client took
    (its text starts with ``client``) beside the Client's lane, any other beside the Agent's."""
    notes: dict[int, list[tuple[str, str, str]]] = {}
    for pos, run, what in hidden:
        notes.setdefault(pos, []).append(("C" if what.startswith("client") else "A", run, what))
    return notes


Group = tuple[list[Step], Step, list[Step]]
"""What one message shows: the hidden steps before it, its arrow, the notes after it."""


def steps(items: Iterable[tuple[str, Any]], notes: Notes | None = None) -> list[Step]:
    """What a sequence diagram of ``items`` shows, in order (see ``transcript_to_mermaid``)."""
    groups, trailing = message_steps(items, notes)
    return [st for before, arrow, after in groups for st in (*before, arrow, *after)] + trailing


def message_steps(
    items: Iterable[tuple[str, Any]], notes: Notes | None = None
) -> tuple[list[Group], list[Step]]:
    """``steps`` message by message, and the hidden steps after the last message."""
    out: list[Group] = []
    pending: dict[tuple[str, str], str] = {}
    foreground: dict[str, str] = {}
    first_session: str | None = None
    notes = notes or {}

    def hidden(positions: Iterable[int]) -> list[Step]:
        return [Step("hidden", lane, lane, text, run) for p in positions for lane, run, text in notes[p]]

    n = -1
    for n, (sender, msg) in enumerate(items):
        src, dst = ("C", "A") if sender == "client" else ("A", "C")
        other = "agent" if sender == "client" else "client"
        note: str | None = None
        msg = msg if isinstance(msg, Mapping) else {}  # drawn as a malformed message
        method = msg.get("method")
        has_id = "id" in msg and msg.get("id") is not None
        if isinstance(method, str):
            label = method
            params = msg.get("params")
            params = params if isinstance(params, Mapping) else {}
            sid = params.get("sessionId")
            if isinstance(sid, str) and first_session is None:
                first_session = sid
            if method == "session/update":
                update = params.get("update")
                update = update if isinstance(update, Mapping) else {}
                label = update_label(update)
                state = _foreground(update)
                key = sid if isinstance(sid, str) else ""
                before = foreground.get(key, "idle")
                if state is not None and state != before:
                    foreground[key] = state
                    where = f"[{_short(key)}] " if key and key != first_session else ""
                    note = f"{where}foreground {before} \u2192 {state}"
            if isinstance(sid, str) and sid != first_session:
                label = f"[{_short(sid)}] {label}"
            if has_id:
                pending[(sender, repr(msg["id"]))] = method
                arrow = Step("request", src, dst, f"{label} id={_id_text(msg['id'])}")
            else:
                arrow = Step("notification", src, dst, label)
        elif "id" in msg and ("result" in msg or "error" in msg):
            asked = pending.pop((other, repr(msg["id"])), "unknown request")
            if "error" in msg:
                err = msg["error"]
                code = err.get("code") if isinstance(err, Mapping) else None
                label = f"error {_short(code)} {asked} id={_id_text(msg['id'])}"
            else:
                label = f"result {asked} id={_id_text(msg['id'])}"
                res = msg["result"]
                if isinstance(res, Mapping):
                    for key in ("messageId", "outcome"):
                        value = res.get(key)
                        if isinstance(value, Mapping):
                            value = value.get("outcome")
                        if value is not None and not isinstance(value, (dict, list)):
                            label += f" {key}={_short(value)}"
            arrow = Step("response", src, dst, label)
        else:
            arrow = Step("notification", src, dst, "malformed message")
        out.append(
            (hidden([n] if n in notes else []), arrow, [] if note is None else [Step("note", "C", "A", note)])
        )
    return out, hidden(sorted(p for p in notes if p > n))


_ARROW = {"request": "->>", "notification": "-)", "response": "-->>"}


def transcript_to_mermaid(
    items: Iterable[tuple[str, Any]], title: str | None = None, notes: Notes | None = None
) -> str:
    """A Mermaid ``sequenceDiagram`` of ``(sender, message)`` pairs in transcript order; with
    ``notes``, hidden steps as notes beside their lane, each prefixed with its run's name."""
    out = ["sequenceDiagram"]
    if title:
        out.append(f"    %% {' '.join(title.split())}")
    out += ["    autonumber", "    participant C as Client", "    participant A as Agent"]
    for st in steps(items, notes):
        if st.kind == "note":
            out.append(f"    Note over C,A: {escape(st.label, _SAFE)}")
        elif st.kind == "hidden":
            side = "left of" if st.src == "C" else "right of"
            out.append(f"    Note {side} {st.src}: {escape(f'{st.style}: {st.label}', _SAFE)}")
        else:
            out.append(f"    {st.src}{_ARROW[st.kind]}{st.dst}: {escape(st.label, _SAFE)}")
    return "\n".join(out) + "\n"
