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

A transcript may start mid-connection (README, "Formats": sessions are assumed initialized unless
it shows their setup). Only one that shows the connection from its start (``shows_opening``: the
Client's first request is ``initialize``, sent before anything named a session) shows every
request; before the Client's first request, or when that was not such an ``initialize``, a
response to an id not seen requested answers a request sent before the capture began: it is
reported as information (``input.answer-before-capture``) and, like an unknown response id, not
passed on. After an opening ``initialize``, it is ``input.unknown-response-id``, an error.

Unknown methods and unknown or custom (``_``-prefixed) ``session/update`` variants are not
errors: they are passed on unchanged and counted in ``TranscriptStats.preserved``. A recording of
a link to a proxy may hold ``proxy/successor`` envelopes (``PROXY_ENVELOPE``): passed on as they
are, with one information finding at the end saying how many there were and that what they wrap
is not judged (it belongs to another hop).

Must not know: the JSON Schema, the rule catalogue, the monitors, or how results are shown.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, BinaryIO, cast

import orjson

from model.clientview import KNOWN_UPDATES
from properties.findings import Finding
from properties.outputs import clip

Message = dict[str, Any]
MessageItem = tuple[int, str, Message]
"""``(line, sender, message)``: one decoded JSON-RPC message and who sent it."""
Item = MessageItem | Finding

DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
"""Largest accepted line, in bytes, not counting its line end."""

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
PROXY_ENVELOPE = "proxy/successor"
"""The envelope of a proxy chain (the schema's ProxySuccessorRequest and ProxySuccessorNotification,
UNSTABLE): it wraps one message of the hop between the proxy and its successor, a connection of its
own whose Client is the proxy. Its wrapped messages are not judged; how many there were is an input
finding (``input.proxy-envelope``, information) at the first envelope's line, once per file."""
_PLAIN_KNOWN = KNOWN_METHODS - {PROXY_ENVELOPE}
"""The known methods but the envelope (one set lookup per message tells both apart)."""

MAX_DEPTH = 256
"""Deepest accepted nesting of arrays and objects in one line. Real ACP messages are a few
levels deep; the limit keeps pathological lines away from recursive code (JSON decoders,
``repr``, schema validation), some of which would otherwise overflow the C stack."""

ID_RANGE = range(-(2**63), 2**63)
"""Integer request ids the reader accepts: the signed 64-bit range."""

TOLERATED: frozenset[str] = frozenset(
    {"input.answer-before-capture", "input.blank-line", "input.bom", "input.crlf", "input.proxy-envelope"}
)
"""The input findings of lines the reader accepts as they are (information, never a failure)."""

_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_SURROGATE = re.compile("[\ud800-\udfff]")
"""A UTF-16 surrogate left in a decoded string: an escape (``\\ud800``) without its pair."""
_SESSION_CREATING = frozenset({"session/new", "session/fork"})
_BOM = b"\xef\xbb\xbf"
_OPEN, _CLOSE = b"{}"
"""The first and last byte of a line of one object (as ints: indexing bytes is cheaper than slicing)."""
_CHUNK = 1 << 17
"""Bytes read at a time (at most; a line may span chunks)."""
_EXCERPT = 60
OTHER: dict[str, str] = {"client": "agent", "agent": "client"}
"""The peer on the other side of a sender."""
_PARAMS = (dict, list, type(None))
"""The types ``params`` may have."""


@dataclass(slots=True)
class TranscriptStats:
    """What the reader saw, filled in while it reads."""

    lines: int = 0
    messages: int = 0
    sessions: set[str] = field(default_factory=set)
    preserved: Counter[str] = field(default_factory=Counter)
    """Unknown or custom methods (``method <name>``) and update variants (``update <name>``)."""


class _Unusable(Exception):
    """A line or message that cannot be used: ``args`` are the input finding's (rule, explanation),
    and its level when that is not "input" (a line skipped as information)."""


UNPARSED_NOTE = " (a line that is not JSON, recorded as unparsed)"
"""Ends the explanation of a line ``acp-model record`` or ``drive`` kept as ``{"from", "unparsed"}``."""


def _excerpt(raw: bytes) -> str:
    return repr(clip(raw.rstrip(b"\r\n").decode("utf-8", "backslashreplace"), _EXCERPT))


def _too_deep(raw: bytes) -> bool:
    """Whether the line nests arrays/objects deeper than ``MAX_DEPTH`` (brackets inside
    strings do not count). Cheap for ordinary lines: nesting that deep takes more opening
    brackets than that, so ``_parse`` asks only about a line of more bytes, and only a line
    with that many brackets is scanned."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
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


def _lone_surrogate(obj: Any) -> bool:
    """Whether a string (or key) of ``obj`` holds a lone surrogate, which no UTF-8 text can:
    ``orjson`` refuses such a line, the standard library decodes it."""
    stack = [obj]
    while stack:
        item = stack.pop()
        if type(item) is str:
            if _SURROGATE.search(item):
                return True
        elif type(item) is dict:
            stack.extend(item)
            stack.extend(item.values())
        elif type(item) is list:
            stack.extend(item)
    return False


def _unparseable(raw: bytes, ended: bool, exc: BaseException) -> _Unusable:
    """Why a line that did not parse is unusable."""
    if not ended:
        return _Unusable("truncated", f"last line has no line end and is not complete JSON: {_excerpt(raw)}")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return _Unusable("invalid-utf8", f"not valid UTF-8 (byte {err.start}): {_excerpt(raw)}")
    reason = str(exc).split("\n", 1)[0] or type(exc).__name__
    return _Unusable("invalid-json", f"not valid JSON ({reason}): {_excerpt(raw)}")


def _parse(raw: bytes, ended: bool) -> tuple[str, Sequence[Any]]:
    """The sender of a line and the messages it holds (a batch's elements, in order), or
    ``_Unusable`` for a line that holds none."""
    if len(raw) > MAX_DEPTH and _too_deep(raw):
        raise _Unusable("too-deep", f"arrays/objects nested deeper than {MAX_DEPTH} levels (skipped)")
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as first:
        try:  # valid JSON orjson refuses (an integer past what a double holds) is not invalid
            obj = _exact(raw)
        except (ValueError, RecursionError):
            raise _unparseable(raw, ended, first) from None
        if _lone_surrogate(obj):  # (orjson's reason stands)
            raise _unparseable(raw, ended, first) from None
    if type(obj) is not dict:
        raise _Unusable("not-object", f"line is a JSON {type(obj).__name__}, not an object")
    sender = obj.get("from")
    if sender != "client" and sender != "agent":
        if "from" not in obj:
            raise _Unusable("bad-from", 'missing "from" (must be "client" or "agent")')
        raise _Unusable("bad-from", f'"from" is {sender!r}, not "client" or "agent"')
    msg = obj.get("message")
    if type(msg) is dict:
        if "id" in msg and type(msg["id"]) is float:  # orjson reads integers past 64 bits as floats
            msg = _exact(raw)["message"]
        return sender, (msg,)
    if type(msg) is list:  # a JSON-RPC batch: each element is a message of its own
        if not msg:
            raise _Unusable("not-jsonrpc", '"message" is an empty batch (an invalid request)')
        if any(type(m) is dict and type(m.get("id")) is float for m in msg):
            msg = _exact(raw)["message"]
        return sender, msg
    if "message" not in obj and type(obj.get("unparsed")) is str:  # acp-model record's
        text = clip(obj["unparsed"].rstrip("\r\n"), _EXCERPT)
        raise _Unusable("not-jsonrpc", f"not a JSON-RPC message: {text!r}{UNPARSED_NOTE}")
    what = 'missing "message"' if "message" not in obj else '"message" is not an object or array'
    raise _Unusable("not-jsonrpc", what)


def _check_id(rid: Any, what: str, null_ok: bool = False) -> None:
    """``_Unusable`` when ``rid`` is not a usable request id."""
    if type(rid) is int:
        if rid in ID_RANGE:
            return
    elif type(rid) is str or (null_ok and rid is None):
        return
    elif not isinstance(rid, Decimal):
        expected = "a string, integer or null" if null_ok else "a string or integer"
        raise _Unusable("not-jsonrpc", f"{what} id is not {expected}")
    digits = len(str(rid).lstrip("-"))
    raise _Unusable(
        "id-out-of-range",
        f"{what} id is an integer of {digits} digits, outside the signed 64-bit range "
        "the reader supports (skipped)",
    )


def _method(msg: Any) -> str | None:
    """The method of a JSON-RPC 2.0 request or notification, None for a response; ``_Unusable``
    unless the message has exactly one valid shape (a request's params and id are the reader's
    to check next: it reads them anyway)."""
    if type(msg) is not dict:
        raise _Unusable("not-jsonrpc", f"batch element is a JSON {type(msg).__name__}, not an object")
    if msg.get("jsonrpc") != "2.0":
        raise _Unusable("not-jsonrpc", 'message.jsonrpc is not "2.0"')
    method = msg.get("method")
    if method is not None or "method" in msg:
        if type(method) is not str:
            raise _Unusable("not-jsonrpc", "message.method is not a string")
        if "result" in msg or "error" in msg:
            raise _Unusable("not-jsonrpc", "message has both method and result/error")
        return method
    if "id" not in msg:
        raise _Unusable(
            "not-jsonrpc",
            "message is none of request (id+method), notification (method), response (id+result/error)",
        )
    has_result = "result" in msg
    if has_result == ("error" in msg):
        if has_result:
            raise _Unusable("not-jsonrpc", "response has both result and error")
        raise _Unusable("not-jsonrpc", "message has an id but no method, result or error")
    _check_id(msg["id"], "response", null_ok=not has_result)
    if not has_result and not is_error_object(msg["error"]):
        raise _Unusable(
            "not-jsonrpc", "response error is not an object with an integer code and a string message"
        )
    return None


def shows_opening(first_client_method: Any, sessions_named: bool) -> bool:
    """Whether a transcript shows its connection from the start, told at the Client's first
    request: that request is ``initialize`` and nothing named a session before it (README,
    "Formats"). Such a transcript shows every request of the connection."""
    return first_client_method == "initialize" and not sessions_named


def is_error_object(value: Any) -> bool:
    """A JSON-RPC error object: an integer ``code`` and a string ``message``."""
    return type(value) is dict and type(value.get("code")) is int and type(value.get("message")) is str


Read = Callable[[int], bytes | None]
"""Up to n bytes of a transcript (``read1``); b"" at its end, None for none yet (a live feed)."""


def _lines(read: Read, max_line_bytes: int) -> Iterator[tuple[list[bytes | None], bool] | None]:
    """The lines ``read`` gives without their line end, a chunk's at a time, as ``(lines, ended)``:
    a line is None when it is over ``max_line_bytes`` (its bytes are dropped as they come) and
    ``ended`` says whether the lines had a line end (only the last one may lack it); None when
    ``read`` has no bytes yet (the reader goes on when resumed)."""
    # A line within one chunk is at most chunk_size - 1 bytes long: only a line carried over
    # from one chunk to the next can be over the limit.
    chunk_size = min(_CHUNK, max_line_bytes + 1)
    carry: list[bytes] = []  # the start of a line that did not end in the chunks read so far
    carried = 0
    skipping = False  # dropping the rest of a line over the limit
    while True:
        chunk = read(chunk_size)
        if chunk is None:
            yield None
            continue
        if not chunk:
            if carry:
                yield [b"".join(carry)], False
            return
        pieces = chunk.split(b"\n")
        tail = pieces.pop()  # the start of a line that ends in a later chunk, or b""
        if pieces:  # the line carried over ends in this chunk; the others are wholly inside it
            first, lines = pieces[0], cast(list[bytes | None], pieces)
            if skipping:  # (the end of a line over the limit, already reported)
                del lines[0]
                skipping = False
            elif carried + len(first) > max_line_bytes:
                lines[0] = None
            elif carry:
                lines[0] = b"".join((*carry, first))
            carry, carried = [], 0
            yield lines, True
        if tail and not skipping:
            carry.append(tail)
            carried += len(tail)
            if carried > max_line_bytes:  # reported now, its rest dropped as it comes
                yield [None], True
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
    # stream_read never answers None, so read_items never yields its "no bytes yet" None
    return cast(Iterator[Item], read_items(stream_read(stream), max_line_bytes, stats))


def stream_read(stream: BinaryIO) -> Callable[[int], bytes]:
    """``stream``'s ``read1`` where it has one (a pipe is read as it fills), else its ``read``; a
    non-blocking stream with nothing to read yet is taken as ended (as a file ends)."""
    read = getattr(stream, "read1", None) or stream.read
    return lambda n: read(n) or b""


def read_items(read: Read, max_line_bytes: int, stats: TranscriptStats | None) -> Iterator[Item | None]:
    """``read_transcript`` over ``read``, yielding None where ``read`` has no bytes yet: resumed
    when it has, the reader goes on where it stopped (``properties.live``)."""
    if max_line_bytes < 1:
        raise ValueError("max_line_bytes must be positive")
    st = stats if stats is not None else TranscriptStats()
    sessions = st.sessions
    pending: dict[str, dict[Any, str]] = {"client": {}, "agent": {}}  # id -> method, by the side that asked
    answered: dict[str, set[Any]] = {"client": set(), "agent": set()}  # by the side that asked
    crlf_reported = False
    line = 0
    envelopes: list[int] = []  # the line of every proxy/successor request or notification
    opening: bool | None = None  # None before the Client's first request; then shows_opening

    def info(rule: str, explanation: str) -> Finding:
        return Finding("input." + rule, "info", line, None, explanation, "input")

    for chunk in _lines(read, max_line_bytes):
        if chunk is None:  # nothing to read yet
            yield None
            continue
        lines, ended = chunk
        for raw in lines:
            line += 1
            st.lines = line
            try:
                if raw is None:
                    raise _Unusable("too-long", f"line longer than {max_line_bytes} bytes (skipped)")
                if not raw or raw[0] != _OPEN or raw[-1] != _CLOSE:  # (what a line of one object never has)
                    if raw.startswith(_BOM):
                        yield info("bom", "line starts with a UTF-8 byte-order mark (ignored)")
                        raw = raw[3:]
                    if not raw.strip():
                        yield info("blank-line", "blank line (skipped)")
                        continue
                    if raw.endswith(b"\r"):
                        if not crlf_reported:
                            crlf_reported = True
                            yield info("crlf", "CRLF line ends (first seen here; accepted, reported once)")
                        raw = raw[:-1]
                sender, batch = _parse(raw, ended)
            except _Unusable as exc:
                yield Finding("input." + exc.args[0], "input", line, None, exc.args[1], "input")
                continue
            for msg in batch:
                try:
                    method = _method(msg)
                    if method is None:  # a response answers a request from the other side
                        rid = msg["id"]
                        if rid is not None:
                            asker = OTHER[sender]
                            request = pending[asker].pop(rid, None)
                            if request is None and rid not in answered[asker]:
                                if not opening:
                                    raise _Unusable(
                                        "answer-before-capture",
                                        f"{sender} responds to id {rid!r}, not requested in the transcript, "
                                        "which does not show the connection from its start (no initialize "
                                        "first): taken as the answer to a request sent before the capture "
                                        "began (skipped)",
                                        "info",
                                    )
                                raise _Unusable(
                                    "unknown-response-id",
                                    f"{sender} responds to id {rid!r}, which the {asker} has not "
                                    "requested (skipped)",
                                )
                            answered[asker].add(rid)  # a second response is passed on: a breach
                            if request in _SESSION_CREATING:
                                result = msg.get("result")
                                sid = result.get("sessionId") if type(result) is dict else None
                                if type(sid) is str:
                                    sessions.add(sid)
                    else:
                        params = msg.get("params")
                        if type(params) not in _PARAMS:
                            raise _Unusable("not-jsonrpc", "message.params is not an object or array")
                        if "id" in msg:  # a request
                            rid = msg["id"]
                            _check_id(rid, "request")
                            if opening is None and sender == "client":
                                opening = shows_opening(method, bool(st.sessions))
                            mine = pending[sender]
                            if rid in mine:
                                raise _Unusable(
                                    "duplicate-request-id",
                                    f"{sender} reuses request id {rid!r} while its {mine[rid]} "
                                    "request with that id is still unanswered (skipped)",
                                )
                            mine[rid] = method
                        if method not in _PLAIN_KNOWN:
                            if method == PROXY_ENVELOPE:
                                envelopes.append(line)
                            else:
                                st.preserved["method " + method] += 1
                        if type(params) is dict:
                            sid = params.get("sessionId")
                            if type(sid) is str:
                                sessions.add(sid)
                            if method == "session/update":
                                update = params.get("update")
                                if type(update) is dict:
                                    variant = update.get("sessionUpdate")
                                    if type(variant) is str and variant not in KNOWN_UPDATES:
                                        st.preserved["update " + variant] += 1
                except _Unusable as exc:
                    level = exc.args[2] if len(exc.args) > 2 else "input"
                    yield Finding("input." + exc.args[0], level, line, None, exc.args[1], "input")
                    continue
                st.messages += 1
                yield line, sender, msg
    if envelopes:
        yield Finding(
            "input.proxy-envelope", "info", envelopes[0], None,
            f"{len(envelopes)} proxy/successor envelope(s) from this line on (the last at line "
            f"{envelopes[-1]}): the messages they wrap, and the responses to them, belong to the hop "
            "between the proxy and its successor and are not judged",
            "input",
        )  # fmt: skip
