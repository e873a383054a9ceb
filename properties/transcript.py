"""The transcript reader: NDJSON lines in, JSON-RPC messages (or input findings) out.

Owns: the transcript file format, which is a contract shared with every tool that writes one:
UTF-8 NDJSON, one object per line, ``{"from": "client" | "agent", "message": <JSON-RPC 2.0>}``,
in the order a proxy between the peers saw the lines. Any number of sessions may interleave.

The reader streams: it reads binary chunks of at most 128 KiB (``read1`` where the stream has
it, so a pipe is read as it fills), splits them into lines, and never holds more than one
chunk and the start of one line carried over to the next chunk (a line over the size limit
is dropped as it comes, never held whole). It keeps only the bookkeeping a JSON-RPC stream
needs: the requests each side has sent and not yet seen answered, by id (so a response to an
id nobody asked for, or a second request reusing an id still in flight, is caught here, and a
response can be handed on with its request), the set of session ids seen, and a count of
methods and update variants it does not know.

Limits: a line over ``max_line_bytes`` (``input.too-long``) or nested deeper than
``MAX_DEPTH`` (``input.too-deep``) is skipped. A line long enough to nest that deep and still
be valid JSON is measured before it is decoded, so it never reaches the decoder; a shorter one
can only nest that deep if it is invalid, so it is measured only when it fails to decode (at
most a few hundred levels, which every decoder refuses safely).

Two entry points: ``read_transcript`` yields ``(line, sender, message)`` items and input
findings; ``scan_transcript`` also yields the parts of an Agent update it took apart anyway
(session id, update object), or (as ``acp-model check`` runs it) hands every message to the
callables of the dispatch tables it is given, as it classified the message: update, request,
notification or response (with its request).

Every line that cannot be used yields exactly one input ``Finding`` (rule ``input.<problem>``,
kind "input", with the line's 1-based number) and reading goes on. Two problems are reported
but do not lose the line: a UTF-8 byte-order mark (reported, then the line is used), and CRLF
line ends (reported once per file at level "info"; every such line is used). Lines reported
as ``input.unknown-response-id`` or ``input.duplicate-request-id`` are well formed but are not
passed on: nothing downstream could associate them with a request.

Unknown methods and unknown or custom (``_``-prefixed) ``session/update`` variants are not
errors: they are passed on unchanged and counted in ``TranscriptStats.preserved``.

Installing the project compiles this module with mypyc (setup.py); properties/native.py runs
this source instead whenever it differs from what was compiled. So it must stay mypy-clean and
within what mypyc compiles (no monkeypatching of its functions or classes from outside), and
tests/test_native.py checks the two read alike.

Must not know: the JSON Schema, the rule catalogue, the monitors, or how results are shown.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from properties.findings import Finding

try:  # orjson is several times faster; the standard library is the fallback
    import orjson

    _loads: Callable[[bytes], Any] = orjson.loads
    JSON_BACKEND = "orjson"
except ImportError:  # pragma: no cover - exercised only where orjson is absent
    import json

    def _loads(data: bytes) -> Any:
        return json.loads(data.decode("utf-8"))

    JSON_BACKEND = "json"

Message = dict[str, Any]
MessageItem = tuple[int, str, Message]
"""``(line, sender, message)``: one decoded JSON-RPC message and who sent it."""
Item = MessageItem | Finding
ScanMessage = tuple[int, str, Message, str | None, Message | None]
"""``(line, sender, message, session, update)``: see ``scan_transcript``."""
ScanItem = ScanMessage | Finding
Routes = Mapping[Any, Iterable[Callable[..., Any]]]
"""A dispatch table: key (variant or method) -> callables (see ``scan_transcript``)."""

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

_DEEP_LINE = 2 * (MAX_DEPTH + 1)
"""Shortest line that can parse and still nest deeper than ``MAX_DEPTH``: it needs that many
opening brackets and as many closing ones."""
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_SESSION_CREATING = frozenset({"session/new", "session/fork"})
_BOM = b"\xef\xbb\xbf"
_CHUNK = 1 << 17
"""Bytes read at a time (at most; a line may span chunks)."""
_TOO_DEEP = f"arrays/objects nested deeper than {MAX_DEPTH} levels (skipped)"
_EXCERPT = 60
_NO_PARAMS: dict[str, Any] = {}
"""What a request or notification without object params hands its routes (never changed)."""
_UPDATE, _REQUEST, _NOTIFICATION, _RESPONSE = 1, 2, 3, 4
"""What the reader found a line to be (an Agent update taken apart, a request, ...)."""


@dataclass(slots=True)
class TranscriptStats:
    """What the reader saw, filled in while it reads."""

    lines: int = 0
    messages: int = 0
    requests: int = 0
    notifications: int = 0
    responses: int = 0
    input_findings: int = 0
    """Input findings yielded (the one CRLF note included)."""
    sessions: set[str] = field(default_factory=set)
    preserved: Counter[str] = field(default_factory=Counter)
    """Unknown or custom methods (``method <name>``) and update variants (``update <name>``)."""


def _input(rule: str, line: int, explanation: str, level: str = "input") -> Finding:
    return Finding("input." + rule, level, line, None, explanation, "input")


def _excerpt(raw: bytes) -> str:
    text = raw.rstrip(b"\r\n").decode("utf-8", "backslashreplace")
    if len(text) > _EXCERPT:
        text = text[: _EXCERPT - 1] + "…"
    return repr(text)


def _decode_error(exc: BaseException) -> str:
    return str(exc).split("\n", 1)[0] or type(exc).__name__


def _unparseable(raw: bytes, terminated: bool, line: int, exc: BaseException) -> Finding:
    """Say why a line that did not parse is unusable (cold path: only bad lines get here)."""
    if not raw.strip():
        return _input("blank-line", line, "blank line (skipped)")
    if not terminated:
        return _input(
            "truncated", line, f"last line has no line end and is not complete JSON: {_excerpt(raw)}"
        )
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return _input("invalid-utf8", line, f"not valid UTF-8 (byte {err.start}): {_excerpt(raw)}")
    return _input("invalid-json", line, f"not valid JSON ({_decode_error(exc)}): {_excerpt(raw)}")


def _deeper_than(raw: bytes, limit: int) -> bool:
    """Whether the line nests arrays/objects deeper than ``limit`` (brackets inside strings
    do not count). Only called on the rare lines with more than ``limit`` open brackets."""
    depth = 0
    for match in _TOKENS.finditer(raw):
        token = match.group()
        if token in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        elif token in (b"]", b"}"):
            depth -= 1
    return False


def _too_deep(raw: bytes) -> bool:
    return (
        len(raw) > MAX_DEPTH
        and raw.count(b"[") + raw.count(b"{") > MAX_DEPTH
        and _deeper_than(raw, MAX_DEPTH)
    )


def _count_new_session(msg: Message, sessions: set[str]) -> None:
    result = msg.get("result")
    if type(result) is dict:
        sid = result.get("sessionId")
        if type(sid) is str:
            sessions.add(sid)


def _shape_problem(msg: Message) -> tuple[str | None, int]:
    """Classify a JSON-RPC 2.0 message: (problem, kind) with kind 0 request, 1 notification,
    2 response; problem is None when the message has exactly one valid shape."""
    if msg.get("jsonrpc") != "2.0":
        return 'message.jsonrpc is not "2.0"', 0
    has_id = "id" in msg
    if "method" in msg:
        if type(msg["method"]) is not str:
            return "message.method is not a string", 0
        if "result" in msg or "error" in msg:
            return "message has both method and result/error", 0
        if "params" in msg and type(msg["params"]) not in (dict, list, type(None)):
            return "message.params is not an object or array", 0
        if has_id:
            rid = msg["id"]
            if type(rid) is not str and type(rid) is not int:
                return "request id is not a string or integer", 0
            return None, 0
        return None, 1
    if not has_id:
        return "message is none of request (id+method), notification (method), response (id+result/error)", 0
    has_result = "result" in msg
    if has_result == ("error" in msg):
        if has_result:
            return "response has both result and error", 2
        return "message has an id but no method, result or error", 2
    rid = msg["id"]
    if has_result:
        if type(rid) is not str and type(rid) is not int:
            return "response id is not a string or integer", 2
    else:
        if rid is not None and type(rid) is not str and type(rid) is not int:
            return "response id is not a string, integer or null", 2
        err = msg["error"]
        if type(err) is not dict or type(err.get("code")) is not int or type(err.get("message")) is not str:
            return "response error is not an object with an integer code and a string message", 2
    return None, 2


def read_transcript(
    stream: BinaryIO,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    *,
    stats: TranscriptStats | None = None,
) -> Iterator[Item]:
    """Read a transcript from a binary stream, yielding messages and input findings in line order.

    Pass ``stats`` to have it filled in: it is complete once the iterator is exhausted, and
    holds what was read so far once it is closed (``close()``; when the module is compiled, an
    iterator merely dropped leaves it untouched). Memory use does not grow with the number of
    lines, only with the number of requests awaiting a response and of distinct session ids.
    """
    scan = scan_transcript(stream, max_line_bytes, stats=stats)
    try:
        for item in scan:
            if isinstance(item, Finding):
                yield item
            else:
                yield item[:3]
    finally:
        scan.close()  # (fills in stats when this iterator is closed early)


def scan_transcript(
    stream: BinaryIO,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    *,
    stats: TranscriptStats | None = None,
    routes: Mapping[str, Routes] | None = None,
    on_message: Callable[[str, Message, int], Any] | None = None,
    update_routes: Routes | None = None,
) -> Generator[ScanItem, None, None]:
    """``read_transcript`` with what the reader took apart on the way: a message comes as
    ``(line, sender, message, session, update)``, where ``session`` and ``update`` are the
    ``sessionId`` (a string) and the ``update`` object (with its ``sessionUpdate`` key) of an
    Agent's well-formed ``session/update``, and both None for every other message.

    Callbacks save the iterator's round trip per message, and the classification a consumer
    would otherwise repeat. With ``routes`` (used by ``acp-model check``: the monitor set's
    dispatch tables), no message is yielded: each goes to the callables its table lists under
    its key (a key without an entry: nowhere), as the reader classified it:

    - ``update``, by ``sessionUpdate``: the Agent's ``session/update`` notifications, called as
      ``route(sessionId, update, line, message)`` (only with a string ``sessionId`` and an
      object ``update``);
    - ``client-request`` / ``agent-request`` / ``client-notification`` /
      ``agent-notification``, by method: ``route(params.sessionId or None, params or {}, line,
      message)``. A message whose method is ``session/update`` goes to no such table (from the
      Agent it is an update, as above, even with an id);
    - ``agent-response`` / ``client-response``, by the method of the request it answers (the
      reader pairs them by id per direction): ``route(sessionId of the request or None,
      request, line, response)``; never for a response with a null id, nor for one answering
      a ``session/update``.

    The older, partial form: with ``update_routes`` (the ``update`` table alone), those Agent
    updates go to its callables instead of being yielded; with ``on_message``, every other
    message is passed to ``on_message(sender, message, line)`` instead of being yielded.

    Each call happens when its line is read, so the calls and the items still yielded (input
    findings at least) stay in line order. Tables are read at every message, so they may
    change while the transcript is read.
    """
    if max_line_bytes < 1:
        raise ValueError("max_line_bytes must be positive")
    st = stats if stats is not None else TranscriptStats()
    read: Callable[[int], bytes] = getattr(stream, "read1", None) or stream.read
    # A line within one chunk is at most chunk_size - 1 bytes long: only a line carried over
    # from one chunk to the next can be over the limit.
    chunk_size = min(_CHUNK, max_line_bytes + 1)
    loads = _loads
    deep_line = _DEEP_LINE
    sessions = st.sessions
    add_session = sessions.add
    last_sid: Any = None  # the session id added last (consecutive lines mostly share one)
    preserved = st.preserved
    known_methods = KNOWN_METHODS
    known_updates = KNOWN_UPDATES
    update_kind = _UPDATE
    if routes is not None:
        update_routes = routes["update"]
        creq, areq = routes["client-request"].get, routes["agent-request"].get
        cnote, anote = routes["client-notification"].get, routes["agent-notification"].get
        aresp, cresp = routes["agent-response"].get, routes["client-response"].get
    upd_get = update_routes.get if update_routes is not None else None  # (live views)
    # requests still awaiting a response, by the side that sent them: id -> request
    pending: dict[str, dict[Any, Message]] = {"client": {}, "agent": {}}
    other = {"client": "agent", "agent": "client"}
    crlf_reported = False
    carry: list[bytes] = []  # the start of a line that did not end in the chunks read so far
    carried = 0  # its length
    skipping = False  # dropping the rest of a line over the limit
    line = 0
    n_requests = n_notifications = n_responses = n_input = 0
    try:
        while True:
            chunk = read(chunk_size)
            tail = b""
            at_end = not chunk
            if at_end:  # the carried line, if any, has no line end
                if skipping or not carry:
                    break
                pieces = [b"".join(carry)]
                ended = watch = False
            else:
                if skipping:  # the rest of a line over the limit: drop it up to its end
                    end = chunk.find(b"\n")
                    if end < 0:
                        continue
                    skipping = False
                    chunk = chunk[end + 1 :]
                pieces = chunk.split(b"\n")
                tail = pieces.pop()  # the start of a line that ends in a later chunk, or b""
                ended = True
                # CRLF line ends are looked for only in chunks holding a carriage return
                watch = not crlf_reported and (b"\r" in chunk or (bool(carry) and carry[-1][-1:] == b"\r"))
                if carry and pieces:  # the line carried over ends here
                    first = pieces[0]
                    if carried + len(first) > max_line_bytes:
                        del pieces[0]
                        line += 1
                        n_input += 1
                        yield _input("too-long", line, f"line longer than {max_line_bytes} bytes (skipped)")
                    else:
                        carry.append(first)
                        pieces[0] = b"".join(carry)
                    carry = []
                    carried = 0
            for raw in pieces:
                line += 1
                # A line that parses cannot nest deeper than MAX_DEPTH unless it holds more than
                # MAX_DEPTH opening and as many closing brackets: shorter lines are checked only
                # when they fail to parse (the finding must still be too-deep, not invalid-json).
                if len(raw) >= deep_line and _too_deep(raw):
                    n_input += 1
                    yield _input("too-deep", line, _TOO_DEEP)
                    continue
                try:
                    obj = loads(raw)
                except (ValueError, RecursionError) as exc:
                    if len(raw) < _DEEP_LINE and _too_deep(raw):
                        n_input += 1
                        yield _input("too-deep", line, _TOO_DEEP)
                        continue
                    if raw.startswith(_BOM):
                        n_input += 1
                        yield _input("bom", line, "line starts with a UTF-8 byte-order mark (ignored)")
                        raw = raw[3:]
                        try:
                            obj = loads(raw)
                        except (ValueError, RecursionError) as exc2:
                            n_input += 1
                            yield _unparseable(raw, ended, line, exc2)
                            continue
                    else:
                        n_input += 1
                        yield _unparseable(raw, ended, line, exc)
                        continue
                if watch and raw[-1:] == b"\r" and not crlf_reported:
                    crlf_reported = True
                    n_input += 1
                    yield _input(
                        "crlf", line, "CRLF line ends (first seen here; accepted, reported once)", "info"
                    )
                # Fast path for well-formed lines (nearly all of them). Plain subscripts are
                # cheaper than .get(), type tests and membership tests: a decoded value that can be
                # subscripted with a string is an object, and an object of exactly 3 keys of which
                # two are "jsonrpc" and "method" and one "params" has no "id", "result" or "error".
                # Any surprise (a missing key, an odd type, an extra key) falls through to the
                # general path below, which judges the line from scratch: nothing here changes
                # state before the last test has passed.
                kind = 0  # what the line was found to be: _UPDATE (taken apart), _REQUEST, ...
                try:
                    msg = obj["message"]  # (so obj is an object, and so on for each subscript)
                    sender = obj["from"]
                    if msg["jsonrpc"] == "2.0" and (sender == "agent" or sender == "client"):
                        if "method" in msg:
                            method = msg["method"]
                            params = msg["params"]
                            sid = params["sessionId"]
                            size = len(msg)
                            if size == 3:  # notification: jsonrpc, method, params
                                if method == "session/update":
                                    upd = params["update"]
                                    variant = upd["sessionUpdate"]
                                    if variant not in known_updates and type(variant) is str:
                                        preserved["update " + variant] += 1
                                    if type(sid) is str:
                                        if sid != last_sid:
                                            add_session(sid)
                                            last_sid = sid
                                        kind = _UPDATE if sender == "agent" else _NOTIFICATION
                                    else:
                                        kind = _NOTIFICATION
                                    n_notifications += 1
                                elif type(method) is str:
                                    if method not in known_methods:
                                        preserved["method " + method] += 1
                                    if type(sid) is str:
                                        add_session(sid)
                                    n_notifications += 1
                                    kind = _NOTIFICATION
                            elif size == 4 and "id" in msg and type(method) is str:  # request
                                rid = msg["id"]
                                mine = pending[sender]
                                if (type(rid) is str or type(rid) is int) and rid not in mine:
                                    if method not in known_methods:
                                        preserved["method " + method] += 1
                                    if type(sid) is str and sid != last_sid:
                                        add_session(sid)
                                        last_sid = sid
                                    mine[rid] = msg
                                    n_requests += 1
                                    kind = _REQUEST
                        elif len(msg) == 3 and "result" in msg:  # success: jsonrpc, result, id
                            rid = msg["id"]
                            if type(rid) is str or type(rid) is int:
                                request = pending[other[sender]].pop(rid, None)
                                if request is not None:
                                    if request["method"] in _SESSION_CREATING:
                                        _count_new_session(msg, sessions)
                                    n_responses += 1
                                    kind = _RESPONSE
                except KeyError:
                    pass
                except TypeError:
                    pass
                if kind == update_kind and upd_get is not None:  # the commonest line: handed on
                    handlers = upd_get(variant)
                    if handlers is not None:
                        for handler in handlers:
                            handler(sid, upd, line, msg)
                    continue
                if not kind:
                    # General path: every line the fast path did not take, problems included.
                    if type(obj) is not dict:
                        n_input += 1
                        what = f"line is a JSON {type(obj).__name__}, not an object"
                        yield _input("not-object", line, what)
                        continue
                    sender = obj.get("from")
                    if sender != "client" and sender != "agent":
                        n_input += 1
                        if "from" not in obj:
                            yield _input("bad-from", line, 'missing "from" (must be "client" or "agent")')
                        else:
                            yield _input("bad-from", line, f'"from" is {sender!r}, not "client" or "agent"')
                        continue
                    msg = obj.get("message")
                    if type(msg) is not dict:
                        n_input += 1
                        what = 'missing "message"' if "message" not in obj else '"message" is not an object'
                        yield _input("not-jsonrpc", line, what)
                        continue
                    problem, shape = _shape_problem(msg)
                    if problem is not None:
                        n_input += 1
                        yield _input("not-jsonrpc", line, problem)
                        continue
                    if shape == 2:  # response: answers a request from the other side
                        rid = msg["id"]
                        request = None
                        if rid is not None:
                            request = pending[other[sender]].pop(rid, None)
                            if request is None:
                                n_input += 1
                                yield _input(
                                    "unknown-response-id",
                                    line,
                                    f"{sender} responds to id {rid!r}, which the {other[sender]} has not "
                                    "requested or which was already answered (skipped)",
                                )
                                continue
                            if request["method"] in _SESSION_CREATING:
                                _count_new_session(msg, sessions)
                        n_responses += 1
                        kind = _RESPONSE
                    else:
                        method = msg["method"]
                        if shape == 0:
                            mine = pending[sender]
                            rid = msg["id"]
                            if rid in mine:
                                n_input += 1
                                yield _input(
                                    "duplicate-request-id",
                                    line,
                                    f"{sender} reuses request id {rid!r} while its {mine[rid]['method']} "
                                    "request with that id is still unanswered (skipped)",
                                )
                                continue
                            mine[rid] = msg
                            n_requests += 1
                            kind = _REQUEST
                        else:
                            n_notifications += 1
                            kind = _NOTIFICATION
                        params = msg.get("params")
                        sid = None
                        if type(params) is dict:
                            sid = params.get("sessionId")
                            if type(sid) is str:
                                sessions.add(sid)
                            if method == "session/update":
                                update = params.get("update")
                                if type(update) is dict:
                                    variant = update.get("sessionUpdate")
                                    if type(variant) is str and variant not in known_updates:
                                        preserved["update " + variant] += 1
                        else:
                            params = _NO_PARAMS
                        if method not in known_methods:
                            preserved["method " + method] += 1
                # Hand the message on.
                if kind == _UPDATE:  # (only without update routes: handed on above otherwise)
                    yield (line, sender, msg, sid, upd)
                elif routes is None:
                    if on_message is None:
                        yield (line, sender, msg, None, None)
                    else:
                        on_message(sender, msg, line)
                elif kind == _RESPONSE:
                    if request is not None:
                        method = request["method"]
                        handlers = aresp(method) if sender == "agent" else cresp(method)
                        if handlers is not None and method != "session/update":
                            params = request.get("params")
                            sid = params.get("sessionId") if type(params) is dict else None
                            if type(sid) is not str:
                                sid = None
                            for handler in handlers:
                                handler(sid, request, line, msg)
                elif method == "session/update":  # an update, whatever its shape, or nothing
                    if sender == "agent" and upd_get is not None:
                        _route_update(upd_get, msg, line)
                else:
                    if kind == _REQUEST:
                        handlers = creq(method) if sender == "client" else areq(method)
                    else:
                        handlers = cnote(method) if sender == "client" else anote(method)
                    if handlers is not None:
                        if type(sid) is not str:
                            sid = None
                        for handler in handlers:
                            handler(sid, params, line, msg)
            if tail:
                carry.append(tail)
                carried += len(tail)
                if carried > max_line_bytes:  # reported now, its rest dropped as it comes
                    line += 1
                    n_input += 1
                    yield _input("too-long", line, f"line longer than {max_line_bytes} bytes (skipped)")
                    carry = []
                    carried = 0
                    skipping = True
            elif at_end:
                break
    finally:
        st.lines = line
        st.messages = n_requests + n_notifications + n_responses
        st.requests = n_requests
        st.notifications = n_notifications
        st.responses = n_responses
        st.input_findings = n_input


def _route_update(get: Callable[[Any], Any], msg: Message, line: int) -> None:
    """Route an Agent's ``session/update`` the fast path did not take apart (an extra key, an
    id): to the handlers of its variant when its ``sessionId`` is a string and its ``update``
    an object, else nowhere."""
    try:
        params = msg["params"]
        upd = params["update"]
        handlers = get(upd["sessionUpdate"])
        sid = params["sessionId"]
    except (KeyError, TypeError, IndexError):
        return
    if handlers is not None and type(sid) is str and type(upd) is dict:
        for handler in handlers:
            handler(sid, upd, line, msg)
