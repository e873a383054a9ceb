"""What the initialize handshake negotiated, as the checks read it (``properties.monitors.facts``):
cases of the review of stop 47, copied into tests/data/review47/.

- Only a successful ``initialize`` negotiates: "The latest successful ``initialize`` is
  authoritative" (schema, InitializeRequest). A repeat answered with an error leaves the first
  one's Client capabilities in force: elicitation modes (TOOL-07, case234) and custom states
  (STATE-04, case241; case242 is the same with one initialize).
- Nor does a failed or withdrawn ``initialize`` complete "the initialization phase" that
  prompts must wait for (introduction; INTRO-01): case233 (answered -32602), case224 (withdrawn
  with ``$/cancel_request``, answered -32800).
- A custom elicitation mode (``_``) is advertised by a custom capability in the Client's
  ``elicitation._meta``, as custom prompt content is by one in the Agent's
  ``capabilities.session.prompt._meta`` ("Custom content types need a custom capability", 1. User
  message): case163; without one it stays TOOL-07 (case44).
"""

from __future__ import annotations

from pathlib import Path

import orjson

from properties.engine import MonitorSet
from tests.wire_dsl import Line, created, fail, initialize, initialized, new_session, prompt

CASES = Path(__file__).resolve().parent / "data" / "review47"


def _case(name: str) -> list[Line]:
    rows = [orjson.loads(raw) for raw in (CASES / f"{name}.ndjson").read_bytes().splitlines()]
    return [(row["from"], row["message"]) for row in rows]


def _errors(lines: list[Line]) -> list[tuple[str, int | None]]:
    ms = MonitorSet()
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    ms.finish(False)
    return sorted((f.rule, f.line) for f in ms.findings if f.kind == "rule" and f.severity == "error")


def test_a_failed_repeat_of_initialize_keeps_what_the_successful_one_negotiated() -> None:
    assert _errors(_case("case234")) == []  # a form elicitation the first initialize advertised
    assert _errors(_case("case241")) == []  # a custom state, as with one initialize (case242)
    assert _errors(_case("case242")) == []


def test_the_failed_repeat_alone_would_not_advertise_them() -> None:
    """The same transcripts with the failed repeat answered with success instead: the repeat is
    authoritative, and it advertised neither."""
    for name, rule, line in (("case234", "TOOL-07", 11), ("case241", "STATE-04", 11)):
        lines = _case(name)
        lines[3] = initialized("i2")
        assert (rule, line) in _errors(lines), name


def test_a_failed_or_withdrawn_initialize_does_not_complete_initialization() -> None:
    assert _errors(_case("case233")) == [("INTRO-01", 5)]
    assert _errors(_case("case224")) == [("INTRO-01", 6)]


def test_an_initialize_that_succeeds_after_a_failed_one_completes_it() -> None:
    lines = [initialize("i1"), fail("i1", -32602), initialize("i2"), initialized("i2")]
    tail = [new_session("n"), created("n"), prompt(1), fail(1, -32602)]
    assert _errors([*lines, *tail]) == []
    assert _errors([*lines[:2], *tail]) == [("INTRO-01", 5)]


def test_a_custom_mode_needs_a_custom_capability_in_the_elicitation_capabilities() -> None:
    assert _errors(_case("case163")) == []
    assert _errors(_case("case44")) == [("TOOL-07", 9)]
    lines = _case("case163")
    caps = lines[0][1]["params"]["capabilities"]["elicitation"]
    lines[0][1]["params"]["capabilities"]["elicitation"] = {**caps, "_meta": {}}
    assert _errors(lines) == [("TOOL-07", 9)]  # an empty _meta advertises nothing
    lines[0][1]["params"]["capabilities"]["elicitation"] = caps
    lines[8][1]["params"]["mode"] = "oauth2"
    assert _errors(lines) == [("TOOL-07", 9)]  # a future mode is not a custom one
