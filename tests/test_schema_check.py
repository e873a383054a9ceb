"""Tests of schema validation (``properties.schema_check``) against the official ACP schema.

Tests that need ../shared skip with a reason when it is absent; the unusable-schema tests
write their own files and always run.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from properties.schema_check import SchemaChecker, SchemaError
from properties.transcript import read_transcript
from tests.check_support import BASIC_TURN, error, notification, request, result, schema_path, update

pytestmark = pytest.mark.needs_shared


@pytest.fixture(scope="module")
def checker() -> SchemaChecker:
    return SchemaChecker(schema_path())


@pytest.fixture(scope="module")
def full_update_validator() -> Draft202012Validator:
    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    registry: Registry[Any] = Registry().with_resource("urn:t", Resource.from_contents(schema, DRAFT202012))
    return Draft202012Validator({"$ref": "urn:t#/$defs/UpdateSessionNotification"}, registry=registry)


def check_all(checker: SchemaChecker, *pairs: tuple[str, dict[str, Any]]) -> list[str | None]:
    checker.reset()
    out = []
    for sender, msg in pairs:
        finding = checker.check(sender, msg, 1)
        out.append(None if finding is None else f"{finding.rule} {finding.explanation}")
    return out


def test_basic_turn_is_schema_valid(checker: SchemaChecker) -> None:
    checker.reset()
    with BASIC_TURN.open("rb") as fh:
        items = [item for item in read_transcript(fh) if isinstance(item, tuple)]
    findings = [checker.check(sender, msg, n) for n, sender, msg in items]
    assert findings == [None] * 6


def test_map_follows_x_side(checker: SchemaChecker) -> None:
    d = checker.definitions
    assert d[("client", "Request", "session/prompt")] == "PromptRequest"
    assert d[("agent", "Response", "session/prompt")] == "PromptResponse"
    assert d[("agent", "Notification", "session/update")] == "UpdateSessionNotification"
    assert d[("client", "Notification", "session/cancel")] == "CancelSessionNotification"
    assert d[("agent", "Request", "session/request_permission")] == "RequestPermissionRequest"
    assert d[("client", "Response", "session/request_permission")] == "RequestPermissionResponse"
    assert d[("client", "Notification", "$/cancel_request")] == "CancelRequestNotification"
    assert d[("agent", "Notification", "$/cancel_request")] == "CancelRequestNotification"
    assert ("agent", "Request", "session/prompt") not in d
    assert ("client", "Notification", "session/update") not in d


def test_map_agrees_with_the_envelopes() -> None:
    """Every definition the schema's envelopes list for a sender is mapped for that sender."""
    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    defs = schema["$defs"]
    mapped = SchemaChecker(schema_path()).definitions
    envelopes = {
        ("client", "Request", "ClientRequest", "params"),
        ("agent", "Request", "AgentRequest", "params"),
        ("client", "Notification", "ClientNotification", "params"),
        ("agent", "Notification", "AgentNotification", "params"),
    }
    seen = 0
    for sender, kind, envelope, field in envelopes:
        for option in defs[envelope]["properties"][field]["anyOf"][0]["anyOf"]:
            name = option["allOf"][0]["$ref"].rsplit("/", 1)[1]
            if "x-method" in defs[name]:
                assert mapped[(sender, kind, defs[name]["x-method"])] == name
                seen += 1
    for sender, envelope in (("agent", "AgentResponse"), ("client", "ClientResponse")):
        for option in defs[envelope]["anyOf"][0]["properties"]["result"]["anyOf"]:
            name = option["allOf"][0]["$ref"].rsplit("/", 1)[1]
            if "x-method" in defs[name]:
                assert mapped[(sender, "Response", defs[name]["x-method"])] == name
                seen += 1
    assert seen > 40


BAD: list[tuple[list[tuple[str, dict[str, Any]]], str]] = [
    ([("agent", update("s", {"sessionUpdate": "state_update", "state": "idle", "stopReason": 5}))],
     "schema.session/update $.params.update.stopReason: 5 is not of type 'string'"),
    ([("agent", update("s", {"sessionUpdate": "agent_message_chunk", "content": {"type": "text"}}))],
     "schema.session/update $.params.update: 'messageId' is a required property"),
    ([("agent", update("s", {"sessionUpdate": "agent_message_chunk", "messageId": "m",
                             "content": {"type": "text", "text": 3}}))],
     "schema.session/update $.params.update.content.text: 3 is not of type 'string'"),
    ([("agent", update("s", {"sessionUpdate": "state_update", "state": "idle", "stopReason": "error",
                             "error": {"code": 1}}))],
     "schema.session/update $.params.update.error: 'message' is a required property"),
    ([("agent", notification("session/update", {"sessionId": "s"}))],
     "schema.session/update $.params: 'update' is a required property"),
    ([("agent", notification("session/update"))], "schema.session/update $.params: missing"),
    ([("client", request(7, "session/prompt", {"sessionId": "s", "prompt": []}))],
     "schema.session/prompt $.params.prompt: [] should be non-empty"),
    ([("client", request(8, "session/prompt", {"sessionId": "s", "prompt": [{"type": "text"}]}))],
     "schema.session/prompt $.params.prompt[0]: 'text' is a required property"),
    ([("client", notification("session/cancel", {"sessionId": 1}))],
     "schema.session/cancel $.params.sessionId: 1 is not of type 'string'"),
    ([("agent", request(9, "session/prompt", {}))],
     "schema.session/prompt session/prompt is a request the client"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("pairs", "expected"), BAD, ids=[e.split(" ", 2)[1] + str(i) for i, (_, e) in enumerate(BAD)]
)
def test_bad_message_gives_rule_path_and_message(
    checker: SchemaChecker, pairs: list[tuple[str, dict[str, Any]]], expected: str
) -> None:
    got = check_all(checker, *pairs)[-1]
    assert got is not None and got.startswith(expected), got


def test_finding_shape(checker: SchemaChecker) -> None:
    checker.reset()
    msg = notification("session/cancel", {"sessionId": 1})
    finding = checker.check("client", msg, 42)
    assert finding is not None
    assert (finding.rule, finding.level, finding.kind, finding.line, finding.severity) == (
        "schema.session/cancel", "MUST", "rule", 42, "error"
    )  # fmt: skip
    assert finding.message is msg


def test_response_is_checked_against_the_answered_method(checker: SchemaChecker) -> None:
    prompt = request(3, "session/prompt", {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]})
    got = check_all(checker, ("client", prompt), ("agent", result(3, {})))
    assert got[0] is None
    assert got[1] is not None and got[1].startswith(
        "schema.session/prompt $.result: 'messageId' is a required"
    )
    got = check_all(checker, ("client", prompt), ("agent", result(3, {"messageId": None})))
    assert got[1] is not None and "$.result.messageId: None is not of type 'string'" in got[1]
    # the same empty result answering an extension request is fine
    assert check_all(checker, ("client", request(3, "_vendor/op", {})), ("agent", result(3, {}))) == [
        None,
        None,
    ]


def test_error_responses_are_checked_against_the_error_object(checker: SchemaChecker) -> None:
    prompt = request(4, "session/prompt", {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]})
    assert check_all(checker, ("client", prompt), ("agent", error(4))) == [None, None]
    bad = {"jsonrpc": "2.0", "id": 4, "error": {"code": "x", "message": "m"}}
    got = check_all(checker, ("client", prompt), ("agent", bad))[1]
    assert got is not None and got.startswith(
        "schema.session/prompt $.error.code: 'x' is not of type 'integer'"
    )


def test_reset_forgets_pending_requests(checker: SchemaChecker) -> None:
    prompt = request(5, "session/prompt", {"sessionId": "s", "prompt": [{"type": "text", "text": "hi"}]})
    checker.reset()
    assert checker.check("client", prompt, 1) is None
    checker.reset()
    # without the request the response is only checked against the envelope: {} passes
    assert checker.check("agent", result(5, {}), 2) is None


def test_extension_and_custom_variants_pass(checker: SchemaChecker) -> None:
    assert (
        check_all(
            checker,
            ("client", request(1, "_vendor/anything", [1, 2])),
            ("agent", notification("_vendor/note", {"x": 1})),
            ("agent", update("s", {"sessionUpdate": "_progress", "pct": 3})),
            ("agent", update("s", {"sessionUpdate": "state_update", "state": "_paused"})),
            ("agent", update("s", {"sessionUpdate": "state_update", "state": "idle", "stopReason": "_mine"})),
        )
        == [None] * 5
    )


# -- the session/update fast path agrees with the whole definition ---------------------------------

_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["", "m", "end_turn", "idle"])
)
_content = st.one_of(
    _scalars,
    st.fixed_dictionaries({"type": st.sampled_from(["text", "image", "_x", "resource_link"])},
                          optional={"text": _scalars, "uri": _scalars, "name": _scalars}),
    st.lists(st.fixed_dictionaries({"type": st.sampled_from(["text", "bogus"]), "text": _scalars}),
             max_size=2),
)  # fmt: skip
_variants = st.sampled_from(
    ["state_update", "agent_message_chunk", "user_message", "agent_message", "tool_call_update",
     "plan_update", "usage_update", "notice", "_custom", "future", "session_message"]
)  # fmt: skip
_updates = st.one_of(
    st.fixed_dictionaries(
        {"sessionUpdate": _variants},
        optional={
            "state": st.sampled_from(["running", "idle", "requires_action", "unknown", "_x", 3]),
            "stopReason": st.one_of(
                st.sampled_from(["end_turn", "cancelled", "error", "_own", "zzz"]), _scalars
            ),
            "messageId": _scalars,
            "content": _content,
            "toolCallId": _scalars,
            "status": st.sampled_from(["pending", "completed", "nope"]),
            "error": st.fixed_dictionaries({}, optional={"code": _scalars, "message": _scalars}),
        },
    ),
    _scalars,
)
_params = st.fixed_dictionaries({"update": _updates}, optional={"sessionId": _scalars, "_meta": _scalars})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(params=_params)
def test_update_fast_path_matches_full_validation(
    checker: SchemaChecker, full_update_validator: Draft202012Validator, params: dict[str, Any]
) -> None:
    finding = checker.check("agent", notification("session/update", params), 1)
    assert (finding is None) == full_update_validator.is_valid(params), finding


# -- unusable schema files -------------------------------------------------------------------------


def _schema_error(path: Path) -> str:
    with pytest.raises(SchemaError) as info:
        SchemaChecker(path)
    return str(info.value)


def test_unusable_schema_files(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    assert _schema_error(missing).startswith(f"{missing}: cannot read schema")
    assert _schema_error(tmp_path).startswith(f"{tmp_path}: cannot read schema")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert _schema_error(bad).startswith(f"{bad}: schema is not valid JSON")
    bad.write_text("[]")
    assert _schema_error(bad) == f"{bad}: not a JSON Schema with a $defs object"
    bad.write_text('{"$defs": {}}')
    assert "lacks the ACP envelope definitions" in _schema_error(bad)
    envelopes: dict[str, Any] = {n: {} for n in ("ClientRequest", "ClientResponse", "ClientNotification",
                                 "AgentRequest", "AgentResponse", "AgentNotification")}  # fmt: skip
    bad.write_text(json.dumps({"$defs": envelopes}))
    assert "no definition carries x-method" in _schema_error(bad)
    envelopes["PromptRequest"] = {"x-method": "session/prompt", "x-side": "agent", "$ref": "#/$defs/Gone"}
    bad.write_text(json.dumps({"$defs": envelopes}))
    assert "schema cannot be used" in _schema_error(bad)


def test_deeply_nested_instance_is_a_finding_not_a_crash(checker: SchemaChecker) -> None:
    nested: Any = "x"
    for _ in range(5000):
        nested = {"type": "text", "text": nested}
    checker.reset()
    finding = checker.check("client", request(1, "session/prompt", {"sessionId": "s", "prompt": [nested]}), 1)
    assert finding is not None and finding.rule == "schema.session/prompt"


def test_checker_works_on_a_stream(checker: SchemaChecker) -> None:
    data = BASIC_TURN.read_bytes().replace(b'"stopReason":"end_turn"', b'"stopReason":7')
    checker.reset()
    items = [item for item in read_transcript(io.BytesIO(data)) if isinstance(item, tuple)]
    findings = [f for n, sender, msg in items if (f := checker.check(sender, msg, n)) is not None]
    assert [(f.rule, f.line) for f in findings] == [("schema.session/update", 6)]


def test_a_dangling_reference_in_the_real_schema_is_one_short_line(tmp_path: Path) -> None:
    """The referencing library's error prints the whole document; ours names the reference."""
    schema = json.loads(schema_path().read_text(encoding="utf-8"))
    schema["$defs"]["ContentBlock"] = {"$ref": "#/$defs/NoSuchThing"}
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(schema))
    text = _schema_error(broken)
    assert "\n" not in text and len(text) < 300, text[:400]
    where = "at #/$defs/ContentBlock: broken reference '#/$defs/NoSuchThing'"
    assert text == f"{broken}: schema cannot be used ({where})"
