"""Tests of the transcript reader (``properties.transcript``).

Each kind of bad line must give exactly one input finding on the right line, and reading must
go on to use the next good line. Tests of the known-method lists against the official schema
skip with a reason when ../shared is absent.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from properties.findings import Finding
from properties.transcript import (
    KNOWN_METHODS,
    KNOWN_UPDATES,
    MAX_DEPTH,
    TranscriptStats,
    read_transcript,
)
from tests.check_support import (
    BASIC_TURN,
    basic_turn,
    error,
    line,
    notification,
    request,
    result,
    schema_path,
    update,
)

GOOD = line("client", notification("session/cancel", {"sessionId": "s1"}))


def read(data: bytes, max_line_bytes: int | None = None) -> tuple[list[tuple[int, str, Any]], list[Finding]]:
    stream = io.BytesIO(data)
    items = list(
        read_transcript(stream) if max_line_bytes is None else read_transcript(stream, max_line_bytes)
    )
    messages = [item for item in items if isinstance(item, tuple)]
    findings = [item for item in items if isinstance(item, Finding)]
    assert len(messages) + len(findings) == len(items)
    return messages, findings


def only_finding(data: bytes, max_line_bytes: int | None = None) -> Finding:
    _, findings = read(data, max_line_bytes)
    assert len(findings) == 1, findings
    return findings[0]


# -- the good path -------------------------------------------------------------------------------


def test_basic_turn_fixture_reads_cleanly() -> None:
    stats = TranscriptStats()
    with BASIC_TURN.open("rb") as fh:
        everything = list(read_transcript(fh, stats=stats))
    items = [item for item in everything if isinstance(item, tuple)]
    assert len(items) == len(everything)
    assert [(n, sender) for n, sender, _ in items] == [
        (1, "client"), (2, "agent"), (3, "agent"), (4, "agent"), (5, "agent"), (6, "agent")
    ]  # fmt: skip
    methods = [msg.get("method") for _, _, msg in items]
    assert methods == ["session/prompt", *["session/update"] * 3, None, "session/update"]
    assert items[4][2]["result"] == {"messageId": "msg_user_1"}
    assert (stats.lines, stats.messages) == (6, 6)
    assert stats.sessions == {"sess_basic"} and not stats.preserved


def test_fixture_is_the_basic_turn_helper() -> None:
    assert BASIC_TURN.read_bytes() == b"".join(basic_turn())


def test_messages_are_yielded_unchanged() -> None:
    msg = update(
        "s",
        {"sessionUpdate": "agent_message", "messageId": "m", "content": [], "_meta": {"x": [1, 2.5, None]}},
    )
    [(n, sender, got)], findings = read(line("agent", msg))
    assert (n, sender, got, findings) == (1, "agent", msg, [])


def test_last_line_without_newline_is_accepted_when_complete() -> None:
    data = b"".join(basic_turn())[:-1]
    messages, findings = read(data)
    assert len(messages) == 6 and findings == []


def test_session_new_response_counts_its_session() -> None:
    stats = TranscriptStats()
    data = line("client", request(0, "session/new", {"cwd": "/", "mcpServers": []})) + line(
        "agent", result(0, {"sessionId": "fresh"})
    )
    list(read_transcript(io.BytesIO(data), stats=stats))
    assert stats.sessions == {"fresh"}


# -- one finding per bad line, on the right line, and reading goes on ------------------------------

RPC = b'{"from": "agent", "message": {"jsonrpc": "2.0", '
BAD_LINES: list[tuple[bytes, str]] = [
    (b'{"from": "client", "message": \n', "input.invalid-json"),
    (b"[1, 2]\n", "input.not-object"),
    (b"42\n", "input.not-object"),
    (b'"text"\n', "input.not-object"),
    (b'{"message": {"jsonrpc": "2.0", "method": "x"}}\n', "input.bad-from"),
    (b'{"from": "proxy", "message": {"jsonrpc": "2.0", "method": "x"}}\n', "input.bad-from"),
    (b'{"from": null, "message": {"jsonrpc": "2.0", "method": "x"}}\n', "input.bad-from"),
    (b'{"from": "agent"}\n', "input.not-jsonrpc"),
    (b'{"from": "agent", "message": [1]}\n', "input.not-jsonrpc"),
    (b'{"from": "agent", "message": {"method": "x"}}\n', "input.not-jsonrpc"),
    (b'{"from": "agent", "message": {"jsonrpc": "1.0", "method": "x"}}\n', "input.not-jsonrpc"),
    (b'{"from": "agent", "message": {"jsonrpc": 2.0, "method": "x"}}\n', "input.not-jsonrpc"),
    (b'{"from": "agent", "message": {"jsonrpc": "2.0"}}\n', "input.not-jsonrpc"),
    (RPC + b'"method": 7}}\n', "input.not-jsonrpc"),
    (RPC + b'"method": "x", "result": {}}}\n', "input.not-jsonrpc"),
    (RPC + b'"id": 1, "method": "x", "error": {}}}\n', "input.not-jsonrpc"),
    (RPC + b'"id": 1}}\n', "input.not-jsonrpc"),
    (RPC + b'"id": 1, "result": 1, "error": {}}}\n', "input.not-jsonrpc"),
    (RPC + b'"id": 1.5, "method": "x"}}\n', "input.not-jsonrpc"),
    (RPC + b'"id": true, "method": "x"}}\n', "input.not-jsonrpc"),
    (RPC + b'"id": null, "method": "x"}}\n', "input.not-jsonrpc"),
    (RPC + b'"id": [], "method": "x"}}\n', "input.not-jsonrpc"),
    (RPC + b'"method": "x", "params": "p"}}\n', "input.not-jsonrpc"),
    (RPC + b'"id": null, "result": {}}}\n', "input.not-jsonrpc"),
    (RPC + b'"id": 1, "error": "boom"}}\n', "input.not-jsonrpc"),
    (RPC + b'"id": 1, "error": {"code": "1", "message": "m"}}}\n', "input.not-jsonrpc"),
    (RPC + b'"id": 1, "error": {"code": 1}}}\n', "input.not-jsonrpc"),
    (RPC + b'"method": "\xff\xfe"}}\n', "input.invalid-utf8"),
    (b"[" * 5000 + b"]" * 5000 + b"\n", "input.too-deep"),
    (RPC + b'"method": "x", "params": {"a": ' + b"[" * 300 + b"]" * 300 + b"}}}\n", "input.too-deep"),
]  # fmt: skip


@pytest.mark.parametrize(("bad", "rule"), BAD_LINES, ids=[f"{r}-{i}" for i, (_, r) in enumerate(BAD_LINES)])
def test_bad_line_gives_one_finding_and_reading_goes_on(bad: bytes, rule: str) -> None:
    data = GOOD + bad + GOOD
    messages, findings = read(data)
    assert [(f.rule, f.line, f.kind, f.level, f.severity) for f in findings] == [
        (rule, 2, "input", "input", "error")
    ]
    assert [n for n, _, _ in messages] == [1, 3]
    assert findings[0].explanation


@pytest.mark.parametrize("blank", [b"\n", b"   \t \n", b"\r\n"])
def test_blank_line_is_tolerated_as_information(blank: bytes) -> None:
    messages, findings = read(GOOD + blank + GOOD)
    assert [(f.rule, f.line, f.kind, f.level, f.severity) for f in findings] == [
        ("input.blank-line", 2, "input", "info", "info")
    ]
    assert [n for n, _, _ in messages] == [1, 3]


@pytest.mark.parametrize("digits", [20, 30, 5000])
def test_an_integer_id_out_of_range_is_said_to_be_so_not_invalid_json(digits: int) -> None:
    big = "9" * digits
    for kind, text in (
        ("request", f'{{"from": "client", "message": {{"jsonrpc": "2.0", "id": {big}, "method": "x"}}}}'),
        ("response", f'{{"from": "agent", "message": {{"jsonrpc": "2.0", "id": -{big}, "result": {{}}}}}}'),
    ):
        finding = only_finding(GOOD + text.encode() + b"\n")
        assert (finding.rule, finding.line, finding.severity) == ("input.id-out-of-range", 2, "error")
        assert f"{kind} id is an integer of {digits} digits" in finding.explanation
        assert "64-bit" in finding.explanation


def test_ids_at_the_edges_of_the_64_bit_range_are_used() -> None:
    for rid in (2**63 - 1, -(2**63)):
        text = json.dumps({"from": "client", "message": {"jsonrpc": "2.0", "id": rid, "method": "x"}})
        messages, findings = read(text.encode() + b"\n")
        assert findings == [] and messages[0][2]["id"] == rid


@pytest.mark.parametrize("zeros", [30, 5000])
def test_big_integers_elsewhere_are_valid_json(zeros: int) -> None:
    number = "1" + "0" * zeros
    message = '{"jsonrpc": "2.0", "method": "_x", "params": {"n": ' + number + "}}"
    text = '{"from": "agent", "message": ' + message + "}"
    messages, findings = read(text.encode() + b"\n")
    assert findings == [] and messages[0][2]["params"]["n"] >= 10**30


def test_lines_too_deep_are_too_deep_wherever_they_fail() -> None:
    shallow = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH + b"\n"
    cases = {
        b"[" * (MAX_DEPTH + 1) + b"\n": ["input.too-deep"],
        b"\xef\xbb\xbf" + b"[" * (MAX_DEPTH + 1) + b"\n": ["input.bom", "input.too-deep"],
        b"[" * MAX_DEPTH + b"\n": ["input.invalid-json"],
        shallow: ["input.not-object"],
        b'{"a":"' + b"[" * (MAX_DEPTH + 10) + b'"}\n': ["input.bad-from"],
    }
    for raw, rules in cases.items():
        assert [f.rule for f in read(raw)[1]] == rules, raw[:20]


def test_invalid_json_names_the_problem_and_quotes_the_line() -> None:
    finding = only_finding(b'{"from": oops}\n')
    assert finding.rule == "input.invalid-json"
    assert "oops" in finding.explanation


def test_bom_is_reported_as_information_and_the_line_still_used() -> None:
    data = GOOD + b"\xef\xbb\xbf" + GOOD + GOOD
    messages, findings = read(data)
    assert [(f.rule, f.line, f.severity) for f in findings] == [("input.bom", 2, "info")]
    assert [n for n, _, _ in messages] == [1, 2, 3]


def test_bom_on_a_bad_line_reports_both() -> None:
    messages, findings = read(b"\xef\xbb\xbf[1]\n" + GOOD)
    assert [(f.rule, f.line) for f in findings] == [("input.bom", 1), ("input.not-object", 1)]
    assert [n for n, _, _ in messages] == [2]


def test_crlf_is_reported_once_as_information_and_lines_are_used() -> None:
    crlf = GOOD.replace(b"\n", b"\r\n")
    messages, findings = read(GOOD + crlf + crlf + GOOD + crlf)
    assert [(f.rule, f.line, f.level, f.severity) for f in findings] == [("input.crlf", 2, "info", "info")]
    assert [n for n, _, _ in messages] == [1, 2, 3, 4, 5]


def test_truncated_last_line() -> None:
    full = b"".join(basic_turn())
    messages, findings = read(full + full[:40])
    assert [(f.rule, f.line) for f in findings] == [("input.truncated", 7)]
    assert len(messages) == 6


def test_truncated_multibyte_character_is_truncation_not_encoding() -> None:
    partial = '{"from": "agent", "message": {"jsonrpc": "2.0", "method": "é'.encode()[:-1]
    assert [(f.rule, f.line) for f in read(GOOD + partial)[1]] == [("input.truncated", 2)]


def test_final_whitespace_without_line_end_is_a_blank_line() -> None:
    _, findings = read(GOOD + b"   ")
    assert [(f.rule, f.line) for f in findings] == [("input.blank-line", 2)]


def test_too_long_line_is_skipped_and_numbering_continues() -> None:
    long = line("agent", update("s", {"sessionUpdate": "agent_message_chunk", "messageId": "m",
                                      "content": {"type": "text", "text": "x" * 5000}}))  # fmt: skip
    messages, findings = read(GOOD + long + GOOD + long[:-1], max_line_bytes=len(GOOD))
    assert [(f.rule, f.line) for f in findings] == [("input.too-long", 2), ("input.too-long", 4)]
    assert [n for n, _, _ in messages] == [1, 3]


def test_line_size_limit_is_exact() -> None:
    size = len(GOOD) - 1  # bytes before the newline
    assert read(GOOD, max_line_bytes=size)[1] == []
    assert [f.rule for f in read(GOOD, max_line_bytes=size - 1)[1]] == ["input.too-long"]


class _ReadRecorder(io.BytesIO):
    """Records the largest piece the reader asked for, whichever read method it uses."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.largest = 0
        self.reads = 0

    def _seen(self, chunk: bytes) -> bytes:
        self.reads += 1
        self.largest = max(self.largest, len(chunk))
        return chunk

    def readline(self, size: int | None = -1) -> bytes:
        return self._seen(super().readline(size))

    def read1(self, size: int | None = -1) -> bytes:
        return self._seen(super().read1(size))

    def read(self, size: int | None = -1) -> bytes:
        return self._seen(super().read(size))


def test_over_long_line_is_never_held_whole() -> None:
    huge = b'{"from": "agent", "message": "' + b"y" * 2_000_000 + b'"}\n'
    stream = _ReadRecorder(GOOD + huge + GOOD)
    items = list(read_transcript(stream, max_line_bytes=1000))
    assert stream.reads > 2 and 0 < stream.largest <= 1 << 17  # pieces of at most 128 KiB
    assert [(i.rule, i.line) for i in items if isinstance(i, Finding)] == [("input.too-long", 2)]
    assert [i[0] for i in items if isinstance(i, tuple)] == [1, 3]


def test_pathological_nesting_is_rejected_before_decoding() -> None:
    # orjson overflows the C stack on nesting this deep: the line must never reach it
    deep = b'{"from": "agent", "message": ' + b"[" * 300_000 + b"]" * 300_000 + b"}\n"
    messages, findings = read(GOOD + deep + GOOD)
    assert [(f.rule, f.line) for f in findings] == [("input.too-deep", 2)]
    assert [n for n, _, _ in messages] == [1, 3]


@pytest.mark.parametrize("escape", [b"\\ud800x", b"\\udfff", b"\\ude00\\ud83d"])
def test_a_lone_surrogate_escape_is_invalid_json(escape: bytes) -> None:
    # orjson refuses it; the standard library (the fallback for huge integers) decoded it into
    # a string no UTF-8 output can hold, and `check --json` ended in a UnicodeEncodeError
    lone = b'{"from": "client", "message": {"jsonrpc": "2.0", "method": "' + escape + b'"}}\n'
    messages, findings = read(GOOD + lone + GOOD)
    assert [(f.rule, f.line) for f in findings] == [("input.invalid-json", 2)]
    assert "surrogate" in findings[0].explanation
    assert [n for n, _, _ in messages] == [1, 3]


def test_a_surrogate_pair_and_a_huge_integer_together_are_fine() -> None:
    pair = (
        b'{"from": "client", "message": {"jsonrpc": "2.0", "method": "\\ud83d\\ude00", "params": {"n": 1'
        + b"0" * 30
        + b"}}}\n"
    )
    messages, findings = read(GOOD + pair)
    assert findings == [] and messages[1][2]["method"] == "\U0001f600"


def test_nesting_up_to_the_limit_and_brackets_in_strings_are_fine() -> None:
    nested: object = "leaf"
    for _ in range(MAX_DEPTH - 4):  # the envelope adds message, params and _meta levels
        nested = [nested]
    msg = notification("_x/y", {"_meta": {"deep": nested}, "text": "[{" * 400})
    messages, findings = read(line("client", msg))
    assert findings == [] and messages[0][2] == msg
    one_more = notification("_x/y", {"_meta": {"deep": [nested]}})
    assert [f.rule for f in read(line("client", one_more))[1]] == ["input.too-deep"]


def test_max_line_bytes_must_be_positive() -> None:
    with pytest.raises(ValueError):
        list(read_transcript(io.BytesIO(GOOD), 0))


# -- request/response id bookkeeping ---------------------------------------------------------------


OPENING = line("client", request(0, "initialize", {"protocolVersion": 2})) + line("agent", result(0, {}))
"""A connection's start: a transcript that begins so shows every request (README, "Formats")."""


def test_response_to_an_id_never_requested() -> None:
    data = OPENING + line("agent", result(9, {"messageId": "m"})) + GOOD
    messages, findings = read(data)
    assert [(f.rule, f.line, f.severity) for f in findings] == [("input.unknown-response-id", 3, "error")]
    assert [n for n, _, _ in messages] == [1, 2, 4]


def test_a_capture_that_starts_mid_connection_may_open_with_answers() -> None:
    # review50 N1 (l15, l16): no initialize first, so a response to an id not seen requested
    # answers a request sent before the capture began: information, the line skipped
    answer = line("client", result("p0", {"outcome": {"outcome": "selected", "optionId": "allow"}}))
    late = line("agent", result(7, {"messageId": "u0"}))
    for data, skipped, used in ((answer + GOOD + late, [1, 3], [2]), (late + answer, [1, 2], [])):
        messages, findings = read(data)
        assert [(f.rule, f.line, f.severity) for f in findings] == [
            ("input.answer-before-capture", n, "info") for n in skipped
        ]
        assert all(f.kind == "input" and f.level == "info" for f in findings)
        assert [n for n, _, _ in messages] == used
    # the Client's first request is not initialize: the capture still starts mid-connection
    prompt = line("client", request(1, "session/prompt", {"sessionId": "s1"}))
    assert [f.rule for f in read(prompt + late)[1]] == ["input.answer-before-capture"]
    # an initialize after something named a session does not open the connection either
    assert [f.rule for f in read(GOOD + OPENING + late)[1]] == ["input.answer-before-capture"]


def test_response_is_matched_against_the_other_side() -> None:
    # the agent's own request 1 does not make the agent's response with id 1 valid
    asked = line("agent", request(1, "session/request_permission", {}))
    data = OPENING + asked + line("agent", result(1, {}))
    assert [(f.rule, f.line) for f in read(data)[1]] == [("input.unknown-response-id", 4)]


def test_same_id_in_both_directions_is_fine() -> None:
    data = (
        line("client", request(1, "session/prompt", {}))
        + line("agent", request(1, "session/request_permission", {}))
        + line("client", result(1, {"outcome": {"outcome": "cancelled"}}))
        + line("agent", result(1, {"messageId": "m"}))
    )
    messages, findings = read(data)
    assert findings == [] and len(messages) == 4


def test_second_response_to_one_request_is_passed_on_for_the_monitors() -> None:
    data = (
        line("client", request("a", "x/y", {})) + line("agent", result("a", {})) + line("agent", error("a"))
    )
    messages, findings = read(data)
    assert findings == [] and [n for n, _, _ in messages] == [1, 2, 3]
    never = line("agent", result("b", {}))
    assert [(f.rule, f.line) for f in read(OPENING + data + never)[1]] == [("input.unknown-response-id", 6)]


def test_string_and_integer_ids_are_distinct() -> None:
    data = OPENING + line("client", request(1, "x/y")) + line("agent", result("1", {}))
    assert [f.rule for f in read(data)[1]] == ["input.unknown-response-id"]


def test_duplicate_request_id_while_unanswered() -> None:
    data = (
        line("client", request(5, "session/prompt", {}))
        + line("client", request(5, "session/prompt", {}))
        + line("agent", result(5, {"messageId": "m"}))
        + line("client", request(5, "session/prompt", {}))  # fine again: 5 was answered
    )
    messages, findings = read(data)
    assert [(f.rule, f.line) for f in findings] == [("input.duplicate-request-id", 2)]
    assert [n for n, _, _ in messages] == [1, 3, 4]


def test_error_response_with_null_id_is_accepted() -> None:
    data = line("agent", {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
    messages, findings = read(data)
    assert findings == [] and len(messages) == 1


# -- unknown and custom variants are preserved and counted -----------------------------------------


def test_unknown_and_custom_variants_are_passed_on_and_counted() -> None:
    stats = TranscriptStats()
    lines = [
        line("client", notification("_vendor/ping", {"sessionId": "s"})),
        line("agent", update("s", {"sessionUpdate": "_progress", "pct": 5})),
        line("agent", update("s", {"sessionUpdate": "_progress", "pct": 6})),
        line("agent", update("s", {"sessionUpdate": "future_kind"})),
        line("client", request(3, "future/method", {})),
        line("agent", update("s", {"sessionUpdate": "usage_update", "used": 1, "size": 2})),
    ]
    everything = list(read_transcript(io.BytesIO(b"".join(lines)), stats=stats))
    items = [item for item in everything if isinstance(item, tuple)]
    assert len(items) == len(everything) == 6
    assert stats.preserved == {
        "method _vendor/ping": 1,
        "update _progress": 2,
        "update future_kind": 1,
        "method future/method": 1,
    }
    assert items[1][2]["params"]["update"] == {"sessionUpdate": "_progress", "pct": 5}


@pytest.mark.needs_shared
def test_known_methods_and_updates_match_the_schema() -> None:
    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    defs = schema["$defs"]
    methods = {d["x-method"] for d in defs.values() if isinstance(d, dict) and "x-method" in d}
    updates = {
        branch["properties"]["sessionUpdate"]["const"]
        for branch in defs["SessionUpdate"]["anyOf"]
        if "const" in branch["properties"]["sessionUpdate"]
    }
    assert set(KNOWN_METHODS) == methods
    assert set(KNOWN_UPDATES) == updates


# -- statistics -------------------------------------------------------------------------------------


def test_stats_count_lines_and_messages() -> None:
    stats = TranscriptStats()
    data = GOOD + b"\n" + b"nope\n" + GOOD.replace(b"\n", b"\r\n")
    found = list(read_transcript(io.BytesIO(data), stats=stats))
    assert (stats.lines, stats.messages, sum(isinstance(f, Finding) for f in found)) == (4, 2, 3)
    assert stats.sessions == {"s1"}


class _NonBlocking:
    """A non-blocking stream: ``read1`` gives one piece, then None (nothing to read yet)."""

    def __init__(self, *pieces: bytes | None) -> None:
        self.pieces = list(pieces)

    def read1(self, size: int = -1) -> bytes | None:
        return self.pieces.pop(0) if self.pieces else b""


def test_a_non_blocking_stream_with_nothing_to_read_yet_ends_the_transcript() -> None:
    # "no bytes yet" is the live feed's pause (properties.live); read_transcript has no later
    # push to wait for, so it ends there, judging what it read, rather than yielding None
    items = list(read_transcript(_NonBlocking(GOOD, None, GOOD)))  # type: ignore[arg-type]
    assert [i[0] for i in items if isinstance(i, tuple)] == [1]
    assert all(i is not None for i in items)


def test_proxy_envelopes_are_counted_in_one_information_finding() -> None:
    """A recording of a link to a proxy holds proxy/successor envelopes (the schema's
    ProxySuccessorRequest: "The envelope wraps one request"): what they wrap belongs to another
    hop and is not judged, which one information finding says, with their number (review47 case
    113: a clear breach inside envelopes gave "no findings")."""
    wrapped = {"method": "session/prompt", "params": {"sessionId": "s1", "prompt": []}}
    note = {"method": "session/update", "params": {"sessionId": "s1", "update": {}}}
    data = (
        GOOD
        + line("client", request(1, "proxy/successor", wrapped))
        + line("agent", notification("proxy/successor", note))
        + line("agent", result(1, {"messageId": "u1"}))
        + GOOD
    )
    stats = TranscriptStats()
    items = list(read_transcript(io.BytesIO(data), stats=stats))
    findings = [item for item in items if isinstance(item, Finding)]
    assert [(f.rule, f.line, f.severity, f.kind) for f in findings] == [
        ("input.proxy-envelope", 2, "info", "input")
    ]
    assert "2 proxy/successor envelope(s)" in findings[0].explanation
    assert stats.messages == 5 and not stats.preserved
    _, none = read(GOOD + GOOD)
    assert none == []
