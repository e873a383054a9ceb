"""Readings of ambiguous spec text (properties.readings): the catalogue points at real spec lines,
every docstring reading is catalogued, and every reading changes a verdict.

For each reading, a transcript whose findings differ between two alternatives: checked through
``MonitorSet(readings=...)`` for all of them and through ``acp-model check --reading`` for a few.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from model.clientview import ClientView
from properties.catalogue import RULES_BY_ID
from properties.engine import MonitorSet
from properties.readings import BY_NAME, DEFAULTS, READINGS, ReadingError, parse, resolve
from properties.shared import default_spec
from tests.test_monitors import VIOLATIONS
from tests.wire_dsl import (
    Line,
    answer,
    ask,
    cancel,
    cancel_request,
    close,
    created,
    fail,
    initialize,
    initialized,
    item,
    new_session,
    ok,
    permission_answer,
    prompt,
    resume,
    say,
    state,
    terminal,
    text,
    tool,
    update,
    user,
)

REPO = Path(__file__).resolve().parent.parent
SPEC = default_spec()  # $ACP_MODEL_SHARED, else ../shared

IMAGE = {"type": "image", "mimeType": "image/png", "data": "AA=="}

OPENED = [initialize("init"), initialized("init"), new_session("new"), created("new")]
"""A connection initialized and session s1 created."""

# -- one transcript per reading: (lines, findings under the default, alternative, findings) -------
CASES: dict[str, tuple[list[Line], list[tuple[str, int]], str, list[tuple[str, int]]]] = {
    "unaccounted-user-message": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            user("u2"),
            answer(1, "u1"),
            state("idle", stop="end_turn"),
        ],
        [("ACC-06", 5)],  # (named at the answer that strands u2: till then prompt 1 may claim it)
        "other-sources",
        [],
    ),
    "unaccounted-user-message/agent-initiated": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            state("idle", stop="end_turn"),
            state("running"),
            user("x1"),
            state("idle", stop="end_turn"),
        ],
        [],
        "prompt-only",
        [("ACC-06", 7)],
    ),
    # review47 case 153, review48 case 49: prompt-started work, its prompt answered, then a user
    # message while no prompt waits: the Agent's own under the default (its description says so),
    # ACC-06 under prompt-only; with the session's setup on the wire, as every recording has it
    # (review48 case 165, the same without it, was accepted while 49 was not)
    "unaccounted-user-message/after-answer": (
        [
            *OPENED,
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            user("x9"),
            state("idle", stop="end_turn"),
        ],
        [],
        "prompt-only",
        [("ACC-06", 9)],
    ),
    # review48 case 17: the same after a prompt received during that work was refused: nothing
    # ties x9 to the refused submission (REJ-02: "for that submission"), and no prompt waits
    "unaccounted-user-message/after-refusal": (
        [
            *OPENED,
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            prompt(2),
            fail(2, -32602),
            user("x9"),
            state("idle", stop="end_turn"),
        ],
        [],
        "prompt-only",
        [("REJ-02", 11)],
    ),
    # the work was answered into while idle was reported (prompt 1 inserted before its work
    # started): its message returned, a second one in that work, no prompt waiting, is the Agent's own
    "unaccounted-user-message/inserted-while-idle": (
        [
            *OPENED,
            prompt(1),
            answer(1, "u1"),
            state("running"),
            user("u1"),
            user("x9"),
            state("idle", stop="end_turn"),
        ],
        [],
        "prompt-only",
        [("ACC-06", 9)],
    ),
    "approval-racing-cancel": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            tool("t1", "pending"),
            ask("p1", "t1"),
            state("requires_action"),
            cancel(),
            permission_answer("p1", "allow"),
            state("running"),
            tool("t1", "in_progress"),
            tool("t1", "cancelled"),
            state("idle", stop="cancelled"),
        ],
        [],
        "not-approved",
        [("CANCEL-06", 11)],
    ),
    # a permission request of the cancelled work withdrawn only after the confirming idle
    "permission-withdrawal-deadline": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            tool("t1", "pending"),
            ask("p1", "t1"),
            state("requires_action"),
            cancel(),
            tool("t1", "cancelled"),
            state("idle", stop="cancelled"),
            cancel_request("p1", by="agent"),
        ],
        [("CANCEL-07", 10)],
        "eventually",
        [],
    ),
    # a Client whose _meta carries an unrelated key; the work runs under a custom state only
    "custom-state-advertisement": (
        [
            initialize("init", {"zed.dev/theme": "dark"}),
            *OPENED[1:],
            prompt(1),
            state("_booting"),
            user("u1"),
            answer(1, "u1"),
            state("idle", stop="end_turn"),
        ],
        [],
        "custom-states-key",
        [("STATE-04", 9)],
    ),
    "future-stop-reason": (
        [prompt(1), state("running"), user("u1"), answer(1, "u1"), state("idle", stop="paused")],
        [("STOP-03", 5)],
        "may-be-future",
        [],
    ),
    "final-status-change": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            tool("t1", "in_progress"),
            tool("t1", "completed"),
            tool("t1", "failed"),
            state("idle", stop="end_turn"),
        ],
        [],
        "final-is-final",
        [("BG-05", 7)],
    ),
    "tool-call-after-final": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            tool("t1", "in_progress"),
            tool("t1", "completed"),
            tool("t1", "in_progress"),
            tool("t1", "completed"),
            state("idle", stop="end_turn"),
        ],
        [("BG-05", 7)],
        "new-call",
        [("ENT-01", 7)],
    ),
    "final-status-change/compaction": (
        [
            update("compaction_update", compactionId="c1", status="in_progress"),
            update("compaction_update", compactionId="c1", status="failed"),
            update("compaction_update", compactionId="c1", status="completed"),
        ],
        [],
        "final-is-final",
        [("COMPACT-03", 3)],
    ),
    "resume-replay-window": (
        [
            new_session(0),
            created(0),
            state("running"),
            resume(7),
            user("x1"),
            state("idle", stop="end_turn"),
            ok(7),
        ],
        [("ACC-11", 5)],
        "known-ids",
        [],
    ),
    "resume-window-idle": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            cancel(),
            resume(7, replay=False),
            state("idle", stop="cancelled"),
            state("idle", stop="cancelled"),
            ok(7),
        ],
        [("CANCEL-11", 7)],
        "may-be-live",
        [],
    ),
    "output-while-requires-action": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            ask("p1", "tc_1"),
            state("requires_action"),
            say("a1"),
            state("idle", stop="end_turn"),
        ],
        [("FG-04", 7)],
        "pending-output",
        [],
    ),
    "requires-action-without-request": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            state("requires_action"),
            state("running"),
            state("idle", stop="end_turn"),
        ],
        [("TRANS-05", 6)],
        "user-action-unseen",
        [],
    ),
    "unlisted-tool-while-blocked": (
        [
            *OPENED,
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            tool("watch", "pending", title="Watch files"),
            tool("tc_1", "pending"),
            ask("p1", "tc_1"),
            state("requires_action"),
            tool("watch", "in_progress"),
            permission_answer("p1", "allow"),
            state("running"),
            tool("tc_1", "in_progress"),
            tool("tc_1", "completed"),
            tool("watch", "completed"),
            state("idle", stop="end_turn"),
        ],
        [("FG-04", 13)],
        "may-be-background",
        [],
    ),
    "user-message-deadline": (
        [
            state("idle"),
            prompt(1),
            answer(1, "u1"),
            state("running"),
            state("idle", stop="end_turn"),
            user("u1"),
        ],
        [("ACC-05", 5)],
        "eventually",
        [],
    ),
    "busy-refusal": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            prompt(2),
            fail(2, -32600),
            state("idle", stop="end_turn"),
        ],
        [],
        "invalid-request-is-busy",
        [("ACTIVE-03", 6)],
    ),
    "state-updates-before-first-list": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            terminal("T1"),
            state("idle", stop="end_turn", bg=[item("terminal", "T1")]),
        ],
        [],
        "every",
        [("BG-07", 6)],
    ),
    "patch-after-idle": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            say("a1"),
            state("idle", stop="end_turn"),
            say("a1"),
        ],
        [("DONE-03", 7)],
        "patch-in-place",
        [],
    ),
    "close-response-ends-session": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            close(5),
            ok(5),
            state("idle", stop="cancelled"),
        ],
        [("CANCEL-11", 6)],
        "work-may-follow",
        [],
    ),
    "close-response-ends-session/never-idled": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            close(5),
            ok(5),
        ],
        [("CANCEL-11", 6)],
        "work-may-follow",
        [("CANCEL-11", 2)],  # still owed: at the end (quiescence here)
    ),
    "cancel-takes-effect": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            say("a1"),
            cancel(),
            state("idle", stop="end_turn"),
        ],
        [("TRANS-04", 7)],
        "when-acted",
        [],
    ),
    "waited-on-background": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            terminal("T1"),
            state("running", bg=[item("terminal", "T1")]),
            state("running", bg=[]),
            terminal("T1", 0),
            state("idle", stop="end_turn", bg=[]),
        ],
        [("BG-11", 7)],
        "becomes-foreground",
        [],
    ),
    "rejected-after-cancel-request": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            prompt(2),
            cancel_request(2),
            fail(2, -32602),
            state("idle", stop="end_turn"),
        ],
        [("REJ-03", 7)],
        "own-reason",
        [],
    ),
    "cancelled-invalid-prompt": (
        [
            *OPENED,
            state("running"),
            prompt(1, content=[text(), IMAGE]),
            cancel(),
            fail(1, -32602),
            state("idle", stop="cancelled"),
        ],
        [("CANCEL-02", 8), ("USER-03", 6)],
        "either",
        [("USER-03", 6)],
    ),
    "tool-updates-after-idle": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            tool("t1", "in_progress"),
            state("idle", stop="end_turn"),
            tool("t1", "completed"),
        ],
        [],
        "foreground-owed",
        [("DONE-03", 7)],
    ),
    "prompt-ahead-of-held": (
        next(c.lines for c in VIOLATIONS if c.name.startswith("ACTIVE-02 a later prompt inserted ahead")),
        [],
        "receipt-order",
        [("ACTIVE-02", 10)],
    ),
    "tool-with-listed-terminal": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            terminal("T1"),
            tool("t1", "in_progress", content=[{"type": "terminal", "terminalId": "T1"}]),
            state("idle", stop="end_turn", bg=[item("terminal", "T1"), item("tool_call", "t1")]),
        ],
        [("BG-13", 7)],
        "may-have-other-work",
        [],
    ),
    "repeated-idle-new-stop-reason": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            state("idle", stop="end_turn"),
            state("idle", stop="max_tokens"),
        ],
        [],
        "completion",
        [("FG-01", 6)],  # no prompt waits: work the Agent started itself
    ),
    "unlisted-tool-at-cancelled-idle": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            tool("t1", "in_progress"),
            cancel(),
            state("idle", stop="cancelled", bg=[]),
            tool("t1", "completed"),
        ],
        [("CANCEL-17", 7)],
        "may-be-background",
        [],
    ),
    "user-message-content": (
        [
            prompt(1, content=[text("Fix the test")]),
            state("running"),
            user("u1"),  # interim content of the Agent's own ("hi"), before the response
            answer(1, "u1"),
            update("user_message", messageId="u1", content=[text("Fix the test")]),
            update("user_message", messageId="u1", content=[text("edited")]),
            state("idle", stop="end_turn"),
        ],
        [],
        "prompt-content",
        [("ACC-05", 4), ("ACC-05", 6)],
    ),
    "unlisted-tool-at-failed-idle": (
        [
            prompt(1),
            state("running"),
            user("u1"),
            answer(1, "u1"),
            tool("t1", "in_progress"),
            state("idle", stop="error", error={"code": -32603, "message": "failed"}, bg=[]),
            tool("t1", "completed"),
        ],
        [("FAIL-04", 6)],
        "may-be-background",
        [],
    ),
}


def findings(lines: list[Line], readings: dict[str, str] | None = None) -> list[tuple[str, int]]:
    ms = MonitorSet(readings=readings)
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    ms.finish(quiescent=True)
    return sorted((f.rule, f.line) for f in ms.findings if f.kind == "rule" and f.line is not None)


def _reading(case: str) -> str:
    """A case's reading: its name, before any ``/`` (a second case of the same reading)."""
    return case.partition("/")[0]


def test_an_unlisted_tool_call_a_list_left_out_is_the_blocked_work_s_under_both() -> None:
    """unlisted-tool-while-blocked: a tool call announced before a concrete background list that
    leaves it out (here the requires_action snapshot's ``[]``) is the work's under
    may-be-background too: running while the work is blocked is FG-04's breach either way, and
    the finding names no reading (its verdict does not depend on one)."""
    lines = [
        (s, {**m, "params": {**m["params"], "update": {**m["params"]["update"], "background": []}}})
        if m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == "state_update"
        else (s, m)
        for s, m in CASES["unlisted-tool-while-blocked"][0]
    ]
    for alt in BY_NAME["unlisted-tool-while-blocked"].alternative_names():
        ms = MonitorSet(readings={"unlisted-tool-while-blocked": alt})
        for n, (sender, msg) in enumerate(lines, 1):
            ms.feed(sender, msg, n)
        ms.finish(quiescent=True)
        found = [(f.rule, f.line, f.readings) for f in ms.findings if f.kind == "rule"]
        assert found == [("FG-04", 13, ())], alt


def test_a_tool_call_its_blocked_work_asked_about_is_foreground_under_both() -> None:
    """unlisted-tool-while-blocked: a tool call the blocked work's own permission request asked
    about is work that foreground work waits on, so foreground work (Background work) whatever
    the reading: running it on the allow while requires_action is still reported is FG-04's
    breach under may-be-background too, and the finding names no reading."""
    lines = [
        *OPENED,
        prompt(1),
        state("running"),
        user("u1"),
        answer(1, "u1"),
        tool("tc_1", "pending"),
        ask("p1", "tc_1"),
        state("requires_action"),
        permission_answer("p1", "allow"),
        tool("tc_1", "in_progress"),
        state("running"),
        tool("tc_1", "completed"),
        state("idle", stop="end_turn"),
    ]
    for alt in BY_NAME["unlisted-tool-while-blocked"].alternative_names():
        ms = MonitorSet(readings={"unlisted-tool-while-blocked": alt})
        for n, (sender, msg) in enumerate(lines, 1):
            ms.feed(sender, msg, n)
        ms.finish(quiescent=True)
        found = [(f.rule, f.line, f.readings) for f in ms.findings if f.kind == "rule"]
        assert found == [("FG-04", len(OPENED) + 9, ())], alt


def test_every_reading_has_a_case() -> None:
    """Every reading with rules has a transcript here; the one without rules (the client
    view's) is tested on the view below."""
    assert {r.name for r in READINGS if r.rules} == {_reading(c) for c in CASES}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_verdict_differs_between_two_alternatives(name: str) -> None:
    lines, default, alternative, other = CASES[name]
    reading = _reading(name)
    assert default != other
    assert findings(lines) == default
    assert findings(lines, {reading: BY_NAME[reading].default}) == default
    assert findings(lines, {reading: alternative}) == other
    for rule, _ in set(default) ^ set(other):
        assert rule in BY_NAME[reading].rules, (name, rule)


@pytest.mark.parametrize("name", sorted(CASES))
def test_findings_name_the_readings_they_depend_on(name: str) -> None:
    lines, default, alternative, _ = CASES[name]
    reading = _reading(name)
    chosen = {reading: BY_NAME[reading].default} if default else {reading: alternative}
    ms = MonitorSet(readings=chosen)
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    ms.finish(quiescent=True)
    differs = {rule for rule, _ in set(CASES[name][1]) ^ set(CASES[name][3])}
    flagged = [f for f in ms.findings if f.kind == "rule" and f.rule in differs]
    assert flagged
    assert all(reading in f.readings for f in flagged), [(f.rule, f.readings) for f in flagged]
    assert all(f.to_json()["readings"] == list(f.readings) for f in flagged)


def test_the_idle_after_the_close_response_is_owed_open_at_the_end_of_an_incomplete_input() -> None:
    """Under close-response-ends-session=work-may-follow the closed work's idle is still owed:
    an open obligation at the end of an input not declared complete, naming the reading."""
    ms = MonitorSet(readings={"close-response-ends-session": "work-may-follow"})
    lines = [prompt(1), state("running"), user("u1"), answer(1, "u1"), close(5), ok(5)]
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    ms.finish(quiescent=False)
    assert [f.rule for f in ms.findings if f.kind == "rule"] == []
    opened = [f for f in ms.findings if f.kind == "open"]
    assert [(f.rule, f.line) for f in opened] == [("CANCEL-11", 2)]
    assert opened[0].readings == ("close-response-ends-session",)


def test_idle_after_an_unrecognized_state_in_the_client_view() -> None:
    lines = [state("_warming_up"), state("idle", stop="end_turn")]
    counts = {}
    for alt in BY_NAME["idle-after-unrecognized-state"].alternative_names():
        view = ClientView(readings={"idle-after-unrecognized-state": alt})
        for sender, msg in lines:
            view.apply(sender, msg)
        counts[alt] = view.to_json()["s1"]["session"]["completions"]
    assert counts == {"no-completion": 0, "completion": 1}


# -- the catalogue --------------------------------------------------------------------------------


def test_catalogue_entries_are_complete() -> None:
    assert len(READINGS) >= 17
    for r in READINGS:
        assert re.fullmatch(r"[a-z][a-z0-9-]+", r.name), r.name
        assert "\n" not in r.question and r.question.endswith("?")
        assert r.sections and r.why_default
        assert len(r.spec_lines) == len(r.spec_words)
        assert len(r.alternatives) >= 2
        assert r.default in r.alternative_names()
        assert len(set(r.alternative_names())) == len(r.alternatives)
        for rule in r.rules:
            assert rule in RULES_BY_ID, (r.name, rule)
        data = r.to_json()
        assert set(data) == {
            "name", "question", "sections", "spec_lines", "alternatives", "default", "why_default", "rules",
            "affects", "peers", "peers_same",
        }  # fmt: skip
        assert not (r.peers_same and r.peers)


@pytest.mark.needs_shared
def test_spec_lines_point_at_the_sentences_in_tension() -> None:
    if not SPEC.is_file():
        pytest.skip(
            f"spec text not found at {SPEC} (../shared is absent: set ACP_MODEL_SHARED to the shared folder)"
        )
    lines = SPEC.read_text(encoding="utf-8").splitlines()
    headings = set(lines)
    for r in READINGS:
        for number, words in zip(r.spec_lines, r.spec_words, strict=True):
            assert 1 <= number <= len(lines), (r.name, number)
            assert words in lines[number - 1], (r.name, number, words)
        for section in r.sections:
            assert section in headings, (r.name, section)


PHRASES = re.compile(r"working assumption|we read this as|\bwe read\b", re.IGNORECASE)


def test_no_docstring_reading_is_left_uncatalogued() -> None:
    """The phrases that used to mark a silent choice are gone from the sources (the checker's,
    the model's, the simulated peers', the commands' and the diagrams'): each such choice is a
    catalogued reading now (or the spec settles it)."""
    hits = []
    folders = ("model", "properties", "simulator", "cli", "diagrams")
    sources = [p for d in folders for p in (REPO / d).rglob("*.py")]
    assert len(sources) > 50
    for path in sorted(sources):
        for n, text_line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if PHRASES.search(text_line):
                hits.append(f"{path.relative_to(REPO)}:{n}: {text_line.strip()}")
    assert not hits, "\n".join(hits)


def test_docstrings_name_only_catalogued_readings() -> None:
    """Every reading name a monitor docstring mentions with an alternative exists."""
    for path in sorted((REPO / "properties").rglob("*.py")):
        for name, alt in re.findall(r"``([a-z-]+)=([a-z-]+)``", path.read_text(encoding="utf-8")):
            if name in BY_NAME:
                assert alt in BY_NAME[name].alternative_names(), (path.name, name, alt)


# -- resolution -----------------------------------------------------------------------------------


def test_resolve_fills_defaults_and_rejects_unknowns() -> None:
    assert resolve() == DEFAULTS
    assert resolve({"patch-after-idle": "patch-in-place"})["patch-after-idle"] == "patch-in-place"
    with pytest.raises(ReadingError, match="unknown reading 'nope'"):
        resolve({"nope": "x"})
    with pytest.raises(ReadingError, match="has no alternative 'x'"):
        resolve({"patch-after-idle": "x"})
    with pytest.raises(ReadingError, match="NAME=ALTERNATIVE"):
        parse(["patch-after-idle"])
    with pytest.raises(ReadingError):
        MonitorSet(readings={"nope": "x"})
    assert parse(["cancel-takes-effect=when-acted"]) == {"cancel-takes-effect": "when-acted"}


def test_clones_keep_the_readings() -> None:
    ms = MonitorSet(readings={"patch-after-idle": "patch-in-place"})
    assert ms.clone().readings == ms.readings


# -- the command line -----------------------------------------------------------------------------


def _write(tmp_path: Path, lines: list[Line]) -> Path:
    path = tmp_path / "t.ndjson"
    path.write_text("".join(json.dumps({"from": s, "message": m}) + "\n" for s, m in lines), encoding="utf-8")
    return path


def _main(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from cli.main import main

    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "name",
    [
        "cancel-takes-effect",
        "unaccounted-user-message",
        "tool-updates-after-idle",
        "unlisted-tool-while-blocked",
    ],
)
def test_check_verdict_changes_with_reading(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines, default, alternative, other = CASES[name]
    path = _write(tmp_path, lines)
    results: dict[str, tuple[int, dict[str, Any]]] = {}
    for alt in (BY_NAME[name].default, alternative):
        code, out, _ = _main(["check", "--json", "--reading", f"{name}={alt}", str(path)], capsys)
        results[alt] = (code, json.loads(out))
    for alt, expect in ((BY_NAME[name].default, default), (alternative, other)):
        code, data = results[alt]
        assert data["readings"][name] == alt
        assert set(data["readings"]) == set(DEFAULTS)
        got = sorted((f["rule"], f["line"]) for f in data["files"][0]["findings"] if f["kind"] == "rule")
        assert got == expect
        assert code == (1 if expect else 0)
        for f in data["files"][0]["findings"]:
            if f["kind"] == "rule":
                assert f["readings"] == [name]


def test_check_text_states_the_readings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = CASES["cancel-takes-effect"][0]
    path = _write(tmp_path, lines)
    code, out, _ = _main(["check", str(path)], capsys)
    assert code == 1
    assert "readings: all defaults" in out
    assert "(reading cancel-takes-effect=on-receipt)" in out
    code, out, _ = _main(["check", "--reading", "patch-after-idle=patch-in-place", str(path)], capsys)
    assert "readings: patch-after-idle=patch-in-place; the others at their defaults" in out


@pytest.mark.parametrize("command", ["check", "replay", "view"])
@pytest.mark.parametrize(
    "option", ["nope=x", "patch-after-idle=nope", "patch-after-idle"], ids=["name", "alternative", "form"]
)
def test_unknown_readings_are_usage_errors(
    command: str, option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, CASES["patch-after-idle"][0])
    code, out, err = _main([command, "--reading", option, str(path)], capsys)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and "reading" in err


@pytest.mark.parametrize(
    "command",
    [["simulate", "--steps", "5", "--out", "-"], ["explore", "--mode", "random", "--walks", "1"]],
)
def test_simulator_commands_reject_unknown_readings(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _main([*command, "--reading", "nope=x"], capsys)
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "nope" in err


def test_readings_command_lists_the_catalogue(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _main(["readings", "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert [r["name"] for r in data["readings"]] == [r.name for r in READINGS]
    code, out, _ = _main(["readings"], capsys)
    assert code == 0
    for r in READINGS:
        assert r.name in out and r.question in out


def test_the_docs_page_shows_the_catalogue_as_printed() -> None:
    from cli.cmd_readings import render_text

    page = (REPO / "docs" / "readings.md").read_text(encoding="utf-8")
    block = page.split("```text\n", 1)[1].split("```", 1)[0]
    assert block == render_text()


@pytest.mark.parametrize("alt, rules", [("on-receipt", {"TRANS-04"}), ("when-acted", set())])
def test_explore_applies_the_reading_to_the_simulators_monitors(
    alt: str, rules: set[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The seeded bug cancel-as-end-turn breaks TRANS-04 only when a cancellation takes effect
    on receipt; the explorer's monitors (in its worker processes too) follow --reading."""
    argv = ["explore", "--mode", "random", "--walks", "6", "--workers", "2", "--examples", "1",
            "--steps", "40", "--quiet", "--json",
            "--fault", "cancel-as-end-turn", "--reading", f"cancel-takes-effect={alt}",
            "--out", str(tmp_path / "out")]  # fmt: skip
    code, out, _ = _main(argv, capsys)
    report = json.loads(out)
    assert report["readings"]["cancel-takes-effect"] == alt
    assert {f["rule"] for f in report["findings"]} == rules
    assert code == (1 if rules else 0)


def _without_seconds(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_seconds(v) for k, v in value.items() if "second" not in k and k != "timing"}
    if isinstance(value, list):
        return [_without_seconds(v) for v in value]
    return value


def test_the_environment_changes_no_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The readings travel explicitly (options, Config): the variable that once carried them
    into worker processes changes nothing, for check nor for explore (worker processes too)."""
    import properties.readings as readings_module

    assert not hasattr(readings_module, "in_force") and not hasattr(readings_module, "ENV")
    path = _write(tmp_path, CASES["cancel-takes-effect"][0])
    argv = ["explore", "--mode", "random", "--walks", "6", "--workers", "2", "--examples", "1",
            "--steps", "40", "--quiet", "--json", "--fault", "cancel-as-end-turn",
            "--out", str(tmp_path / "out")]  # fmt: skip
    plain = [_main(["check", "--json", str(path)], capsys)[:2], _main(argv, capsys)[:2]]
    monkeypatch.setenv("ACP_MODEL_READINGS", "cancel-takes-effect=when-acted")
    varied = [_main(["check", "--json", str(path)], capsys)[:2], _main(argv, capsys)[:2]]
    assert [code for code, _ in plain] == [1, 1]  # TRANS-04: a cancellation takes effect on receipt
    for (code, out), (code2, out2) in zip(plain, varied, strict=True):
        assert code == code2
        assert _without_seconds(json.loads(out)) == _without_seconds(json.loads(out2))


def test_the_default_of_unaccounted_user_message_says_what_it_does() -> None:
    """review47 problem 10: a user message while no prompt waits, also in work a prompt started
    (the case above), is described as the Agent's own, not as counted against waiting prompts."""
    alts = {a.name: a.meaning for a in BY_NAME["unaccounted-user-message"].alternatives}
    text = " ".join(alts["agent-initiated"].split())
    assert "while no prompt of its session waits for its answer is the Agent's own" in text
    assert "among them one reported while work a prompt started is under way" not in text
    peers = " ".join(BY_NAME["unaccounted-user-message"].peers.split())
    assert "own_text" in peers
