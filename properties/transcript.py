"""The transcript reader: NDJSON lines in, JSON-RPC messages (or input findings) out.

Owns: the transcript file format, which is a contract shared with every tool that writes one:
UTF-8 NDJSON, one object per line, ``{"from": "client" | "agent", "message": <JSON-RPC 2.0>}``,
in the order a proxy between the peers saw the lines. Any number of sessions may interleave.
A ``message`` may be a JSON-RPC 2.0 batch (an array, as a peer wrote it on one line): each
element is read as a message of its own, in array order, with the line's number; an empty
batch, or an element that is not an object, is an input finding at that line.

The reader streams: it reads binary chunks of at most 128 KiB (``read1`` where the stream has
it, so a pipe is read as it fills), splits them into lines, and never holds more than one
chunk and the start of one line carried over (a line over the size limit is dropped as it
comes, never held whole). It keeps only the bookkeeping a JSON-RPC stream needs: the requests
each side has sent and not yet seen answered, by id, and the ids already answered (so a
response to an id nobody asked for, or a second request reusing an id still in flight, is
caught here, while a second response to an answered request is passed on for the monitors to
judge), the set of session ids seen, and a count of methods and update variants it does not
know.

Limits: a line over ``max_line_bytes`` (``input.too-long``) or nested deeper than
``MAX_DEPTH`` (``input.too-deep``) is skipped; a request or response id that is an integer
outside the signed 64-bit range (``input.id-out-of-range``) is skipped too, since no peer can
be expected to echo it back exactly. Such lines are still valid JSON, and are said to be.

Every line that cannot be used yields exactly one input ``Finding`` (rule ``input.<problem>``,
kind "input", with the line's 1-based number) and reading goes on. What the reader tolerates
is information (level "info"), never an error: a blank line (skipped), a UTF-8 byte-order
mark (the line is used) and CRLF line ends (reported once per file; every such line is used).
Lines reported as ``input.unknown-response-id`` or ``input.duplicate-request-id`` are well
formed but are not passed on: nothing downstream could associate them with a request.

Unknown methods and unknown or custom (``_``-prefixed) ``session/update`` variants are not
errors: they are passed on unchanged and counted in ``TranscriptStats.preserved``.

Must not know: the JSON Schema, the rule catalogue, the monitors, or how results are shown.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, BinaryIO

import orjson

from properties.findings import Finding
from properties.outputs import clip

Message = dict[str, Any]
MessageItem = tuple[int, str, Message]
"""``(line, sender, message)``: one decoded JSON-RPC message and who sent it."""
Item = MessageItem | Finding

DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
"""Largest accepted line, in bytes, not counting its line end."""

SENDERS = ("client", "agent")

KNOWN_METHODS: frozenset[str] = frozenset(
    {
        "$/cancel_request",
        "auth/login",
        "auth/logout",
        "auth/status",
        "auth/status_update",
        "elicitation/complete",
        "elicitation/create",
        "initialize",
        "mcp/message",
        "providers/disable",
        "providers/list",
        "providers/set",
        "proxy/initialize",
        "proxy/successor",
        "session/archive",
        "session/cancel",
        "session/close",
        "session/delete",
        "session/fork",
        "session/list",
        "session/new",
        "session/prompt",
        "session/request_permission",
        "session/resume",
        "session/set_config_option",
        "session/set_title",
        "session/status",
        "session/unarchive",
        "session/update",
        "terminal/cancel",
        "tool_call/cancel",
    }
)
"""Every method the ACP v2 schema defines (its ``x-method`` annotations)."""

KNOWN_UPDATES: frozenset[str] = frozenset(
    {
        "user_message_chunk",
        "user_message",
        "agent_message_chunk",
        "agent_message",
        "agent_thought_chunk",
        "agent_thought",
        "state_update",
        "tool_call_content_chunk",
        "tool_call_update",
        "terminal_update",
        "terminal_output_chunk",
        "plan_update",
        "plan_removed",
        "available_commands_update",
        "config_option_update",
        "session_info_update",
        "usage_update",
        "notice",
        "compaction_update",
        "compaction_summary_chunk",
        "subagent_update",
        "session_message",
        "session_message_chunk",
    }
)
"""Every standard ``sessionUpdate`` variant of the schema's ``SessionUpdate``."""

MAX_DEPTH = 256
"""Deepest accepted nesting of arrays and objects in one line. Real ACP messages are a few
levels deep; the limit keeps pathological lines away from recursive code (JSON decoders,
``repr``, schema validation), some of which would otherwise overflow the C stack."""

ID_RANGE = (-(2**63), 2**63 - 1)
"""Integer request ids the reader accepts: the signed 64-bit range."""

_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_SESSION_CREATING = frozenset({"session/new", "session/fork"})
_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 17
"""Bytes read at a time (at most; a line may span chunks)."""
_TOO_DEEP = f"arrays/objects nested deeper than {MAX_DEPTH} levels (skipped)"
_EXCERPT = 60
_OTHER = {"client": "agent", "agent": "client"}


@dataclass(slots=True)
class TranscriptStats:
    """What the reader saw, filled in while it reads."""

    lines: int = 0
    messages: int = 0
    requests: int = 0
    notifications: int = 0
    responses: int = 0
    input_findings: int = 0
    """Input findings yielded (information included)."""
    sessions: set[str] = field(default_factory=set)
    preserved: Counter[str] = field(default_factory=Counter)
    """Unknown or custom methods (``method <name>``) and update variants (``update <name>``)."""


def _input(rule: str, line: int, explanation: str, level: str = "input") -> Finding:
    return Finding("input." + rule, level, line, None, explanation, "input")


def _excerpt(raw: bytes) -> str:
    return repr(clip(raw.rstrip(b"\r\n").decode("utf-8", "backslashreplace"), _EXCERPT))


def _too_deep(raw: bytes) -> bool:
    """Whether the line nests arrays/objects deeper than ``MAX_DEPTH`` (brackets inside
    strings do not count). Cheap for ordinary lines: nesting that deep takes more opening
    brackets than that, so a line of no more bytes is not counted, and only a line with that
    many brackets is scanned."""
    if len(raw) <= MAX_DEPTH or raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return False
    depth = 0
    for match in _TOKENS.finditer(raw):
        token = match.group()
        if token in (b"[", b"{"):
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif token in (b"]", b"}"):
            depth -= 1
    return False


def _big_int(text: str) -> int | Decimal:
    """Integers as Python ints, or as Decimals past the digits ``int()`` converts."""
    return int(text) if len(text) <= 4000 else Decimal(text)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _exact(raw: bytes) -> Any:
    """Decode with the standard library, which keeps integers of any size exact and refuses
    NaN and Infinity."""
    return json.loads(raw, parse_int=_big_int, parse_constant=_reject_constant)


def _unparseable(raw: bytes, ended: bool, line: int, exc: BaseException) -> Finding:
    """Say why a line that did not parse is unusable."""
    if not ended:
        return _input(
            "truncated", line, f"last line has no line end and is not complete JSON: {_excerpt(raw)}"
        )
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return _input("invalid-utf8", line, f"not valid UTF-8 (byte {err.start}): {_excerpt(raw)}")
    reason = str(exc).split("\n", 1)[0] or type(exc).__name__
    return _input("invalid-json", line, f"not valid JSON ({reason}): {_excerpt(raw)}")


def _id_problem(rid: Any, what: str, null_ok: bool = False) -> tuple[str, str] | None:
    """(finding rule, explanation) when ``rid`` is not a usable request id."""
    if type(rid) is str or (null_ok and rid is None):
        return None
    if type(rid) is int or isinstance(rid, Decimal):
        if type(rid) is int and ID_RANGE[0] <= rid <= ID_RANGE[1]:
            return None
        digits = len(str(rid).lstrip("-"))
        return (
            "id-out-of-range",
            f"{what} id is an integer of {digits} digits, outside the signed 64-bit range "
            "the reader supports (skipped)",
        )
    expected = "a string, integer or null" if null_ok else "a string or integer"
    return "not-jsonrpc", f"{what} id is not {expected}"


def _bad(text: str) -> tuple[str, str]:
    return "not-jsonrpc", text


_PARAMS = (dict, list, type(None))
"""The types ``params`` may have."""


def _shape_problem(msg: Message) -> tuple[tuple[str, str] | None, int]:
    """Classify a JSON-RPC 2.0 message: (problem, kind) with kind 0 request, 1 notification,
    2 response; problem is None when the message has exactly one valid shape, else the
    finding's (rule, explanation)."""
    if msg.get("jsonrpc") != "2.0":
        return _bad('message.jsonrpc is not "2.0"'), 0
    has_id = "id" in msg
    if "method" in msg:
        if type(msg["method"]) is not str:
            return _bad("message.method is not a string"), 0
        if "result" in msg or "error" in msg:
            return _bad("message has both method and result/error"), 0
        if type(msg.get("params")) not in _PARAMS:
            return _bad("message.params is not an object or array"), 0
        if has_id:
            return _id_problem(msg["id"], "request"), 0
        return None, 1
    if not has_id:
        return _bad(
            "message is none of request (id+method), notification (method), response (id+result/error)"
        ), 0
    has_result = "result" in msg
    if has_result == ("error" in msg):
        if has_result:
            return _bad("response has both result and error"), 2
        return _bad("message has an id but no method, result or error"), 2
    if has_result:
        return _id_problem(msg["id"], "response"), 2
    problem = _id_problem(msg["id"], "response", null_ok=True)
    if problem is not None:
        return problem, 2
    err = msg["error"]
    if type(err) is not dict or type(err.get("code")) is not int or type(err.get("message")) is not str:
        return _bad("response error is not an object with an integer code and a string message"), 2
    return None, 2


def _lines(stream: BinaryIO, max_line_bytes: int) -> Iterator[tuple[bytes | None, bool]]:
    """The stream's lines without their line end, as ``(raw, ended)``: ``raw`` is None for a
    line over ``max_line_bytes`` (whose bytes are dropped as they come) and ``ended`` says
    whether the line had a line end (only the last one may lack it)."""
    read: Callable[[int], bytes] = getattr(stream, "read1", None) or stream.read
    # A line within one chunk is at most chunk_size - 1 bytes long: only a line carried over
    # from one chunk to the next can be over the limit.
    chunk_size = min(_CHUNK, max_line_bytes + 1)
    carry: list[bytes] = []  # the start of a line that did not end in the chunks read so far
    carried = 0
    skipping = False  # dropping the rest of a line over the limit
    while True:
        chunk = read(chunk_size)
        if not chunk:
            if carry:
                yield b"".join(carry), False
            return
        pieces = chunk.split(b"\n")
        tail = pieces.pop()  # the start of a line that ends in a later chunk, or b""
        if pieces:  # the line carried over ends in this chunk
            first = pieces[0]
            if skipping:  # (the end of a line over the limit, already reported)
                skipping = False
            elif carried + len(first) > max_line_bytes:
                yield None, True
            else:
                yield (b"".join((*carry, first)) if carry else first), True
            carry, carried = [], 0
            for piece in pieces[1:]:  # the lines wholly inside this chunk: none is over the limit
                yield piece, True
        if tail and not skipping:
            carry.append(tail)
            carried += len(tail)
            if carried > max_line_bytes:  # reported now, its rest dropped as it comes
                yield None, True
                carry, carried, skipping = [], 0, True


def read_transcript(
    stream: BinaryIO,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    *,
    stats: TranscriptStats | None = None,
) -> Iterator[Item]:
    """Read a transcript from a binary stream, yielding ``(line, sender, message)`` items and
    input findings in line order.

    Pass ``stats`` to have it filled in as reading goes. Memory use does not grow with the
    number of lines, only with the number of requests and of distinct session ids."""
    if max_line_bytes < 1:
        raise ValueError("max_line_bytes must be positive")
    st = stats if stats is not None else TranscriptStats()
    pending: dict[str, dict[Any, Message]] = {"client": {}, "agent": {}}
    answered: dict[str, set[Any]] = {"client": set(), "agent": set()}  # by the side that asked
    crlf_reported = False
    line = 0
    loads = orjson.loads

    def note(finding: Finding) -> Finding:
        st.input_findings += 1
        return finding

    for raw, ended in _lines(stream, max_line_bytes):
        line += 1
        st.lines = line
        if raw is None:
            yield note(_input("too-long", line, f"line longer than {max_line_bytes} bytes (skipped)"))
            continue
        if raw[:1] != b"{" or raw[-1:] != b"}":  # (what a line of one object never has)
            if raw.startswith(_BOM):
                yield note(_input("bom", line, "line starts with a UTF-8 byte-order mark (ignored)", "info"))
                raw = raw[3:]
            if not raw.strip():
                yield note(_input("blank-line", line, "blank line (skipped)", "info"))
                continue
            if raw.endswith(b"\r"):
                if not crlf_reported:
                    crlf_reported = True
                    crlf = "CRLF line ends (first seen here; accepted, reported once)"
                    yield note(_input("crlf", line, crlf, "info"))
                raw = raw[:-1]
        if _too_deep(raw):
            yield note(_input("too-deep", line, _TOO_DEEP))
            continue
        try:
            obj = loads(raw)
        except orjson.JSONDecodeError as first:
            try:  # valid JSON orjson refuses (an integer past what a double holds) is not invalid
                obj = _exact(raw)
            except (ValueError, RecursionError):
                yield note(_unparseable(raw, ended, line, first))
                continue
        if type(obj) is not dict:
            yield note(_input("not-object", line, f"line is a JSON {type(obj).__name__}, not an object"))
            continue
        sender = obj.get("from")
        if sender != "client" and sender != "agent":
            if "from" not in obj:
                what = 'missing "from" (must be "client" or "agent")'
            else:
                what = f'"from" is {sender!r}, not "client" or "agent"'
            yield note(_input("bad-from", line, what))
            continue
        msg = obj.get("message")
        if type(msg) is list:  # a JSON-RPC batch: each element is a message of its own
            if not msg:
                yield note(_input("not-jsonrpc", line, '"message" is an empty batch (an invalid request)'))
                continue
            if any(type(m) is dict and type(m.get("id")) is float for m in msg):
                msg = _exact(raw)["message"]  # orjson reads integers past 64 bits as floats
            batch: list[Any] | tuple[Any] = msg
        elif type(msg) is not dict:
            what = 'missing "message"' if "message" not in obj else '"message" is not an object or array'
            yield note(_input("not-jsonrpc", line, what))
            continue
        else:
            if type(msg.get("id")) is float:  # orjson reads integers past 64 bits as floats
                msg = _exact(raw)["message"]
            batch = (msg,)
        for msg in batch:
            if type(msg) is not dict:
                yield note(
                    _input(
                        "not-jsonrpc", line, f"batch element is a JSON {type(msg).__name__}, not an object"
                    )
                )
                continue
            problem, shape = _shape_problem(msg)
            if problem is not None:
                yield note(_input(problem[0], line, problem[1]))
                continue
            if shape == 2:  # a response answers a request from the other side
                rid = msg["id"]
                if rid is not None:
                    asker = _OTHER[sender]
                    request = pending[asker].pop(rid, None)
                    if request is None and rid not in answered[asker]:
                        yield note(
                            _input(
                                "unknown-response-id",
                                line,
                                f"{sender} responds to id {rid!r}, which the {asker} has not "
                                "requested (skipped)",
                            )
                        )
                        continue
                    answered[asker].add(rid)  # a second response is passed on: a breach
                    if request is not None and request["method"] in _SESSION_CREATING:
                        result = msg.get("result")
                        sid = result.get("sessionId") if type(result) is dict else None
                        if type(sid) is str:
                            st.sessions.add(sid)
                st.responses += 1
            else:
                method = msg["method"]
                if shape == 0:
                    mine = pending[sender]
                    rid = msg["id"]
                    if rid in mine:
                        yield note(
                            _input(
                                "duplicate-request-id",
                                line,
                                f"{sender} reuses request id {rid!r} while its {mine[rid]['method']} "
                                "request with that id is still unanswered (skipped)",
                            )
                        )
                        continue
                    mine[rid] = msg
                    st.requests += 1
                else:
                    st.notifications += 1
                if method not in KNOWN_METHODS:
                    st.preserved["method " + method] += 1
                params = msg.get("params")
                if type(params) is dict:
                    sid = params.get("sessionId")
                    if type(sid) is str:
                        st.sessions.add(sid)
                    update = params.get("update") if method == "session/update" else None
                    if type(update) is dict:
                        variant = update.get("sessionUpdate")
                        if type(variant) is str and variant not in KNOWN_UPDATES:
                            st.preserved["update " + variant] += 1
            st.messages += 1
            yield line, sender, msg
