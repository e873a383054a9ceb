"""The table monitor: the checker fires the model's machine tables (``properties.observe``,
``properties.monitors.tables``), and a rule is stated in one place."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from model import fields
from model import foreground as foreground_table
from model import prompt as prompt_table
from properties.engine import MonitorSet
from properties.findings import Finding
from properties.monitors import ALL_MONITORS
from properties.monitors.tables import TableMonitor, rules_of
from properties.observe import OBSERVED, UNOBSERVED
from properties.trace import executes_model, implemented_by
from properties.variants import from_data, from_drops
from tests.wire_dsl import (
    Line,
    answer,
    ask,
    cancel,
    cancel_request,
    fail,
    initialize,
    initialized,
    item,
    prompt,
    say,
    state,
    tool,
    tool_chunk,
    update,
    user,
)  # fmt: skip

REPO = Path(__file__).resolve().parents[1]


def run(lines: list[Line], readings: dict[str, str] | None = None) -> list[Finding]:
    ms = MonitorSet([TableMonitor], readings=readings)
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    return [f for f in ms.findings if f.kind == "rule"]


TURN = [prompt(1), state("running"), user("u1"), answer(1, "u1")]


def compaction(cid: str, status: str, **fields: object) -> Line:
    return update("compaction_update", "s1", compactionId=cid, status=status, **fields)


def test_a_status_after_a_final_one_is_the_tool_call_tables_forbidden_cell() -> None:
    found = run([*TURN, tool("t1", "in_progress"), tool("t1", "completed"), tool("t1", "in_progress")])
    assert [(f.rule, f.line) for f in found] == [("BG-05", 7)]
    assert "tool call 't1' is completed, and the spec allows no 'run' from that state" in found[0].explanation


def test_listing_a_reopened_tool_call_is_no_second_breach() -> None:
    """review48 case 29: a listed tool call completes and is reopened (BG-05, the one breach);
    the wire shows it in progress again, so a list that names it is no BG-17 'finished item'
    (the background item's finished state was left behind the wire by the refused reopen). A
    call that finished unlisted and is reopened, then listed, likewise. A finished call that is
    listed again without a reopen is still BG-17."""
    w1 = [item("tool_call", "w1")]
    listed = [
        *TURN,
        tool("w1", "in_progress"),
        state("idle", stop="end_turn", bg=w1),
        tool("w1", "completed"),
    ]
    reopened = [
        *listed,
        tool("w1", "in_progress"),
        state("idle", bg=w1),
        tool("w1", "completed"),
        state("idle", bg=[]),
    ]
    assert [(f.rule, f.line) for f in run(reopened)] == [("BG-05", 8)]
    unlisted = [*TURN, tool("w1", "completed"), tool("w1", "in_progress"), state("idle", bg=w1)]
    assert [(f.rule, f.line) for f in run(unlisted)] == [("BG-05", 6)]
    assert [(f.rule, f.line) for f in run([*listed, state("idle", bg=w1)])] == [("BG-17", 8)]


def test_a_child_with_nothing_running_is_not_listed() -> None:
    """review48 case 127 ("Background work": a detached child is listed while its state is not
    idle or its own list is non-empty or not reported; an idle child with no background work of
    its own is not listed): the parent's list naming a child whose own latest state is idle with
    [] names finished work (BG-17, the background table: a child's finish is its idle with an
    empty list). Not while the child runs again, nor when its list is not reported."""
    c1 = [item("subagent", "c1")]
    started = [*TURN, update("subagent_update", "s1", sessionId="c1"), state("running", "c1", bg=[])]
    listed = [*started, state("running", bg=c1)]
    kept = [*listed, state("idle", "c1", stop="end_turn", bg=[]), state("idle", stop="end_turn", bg=c1)]
    assert [(f.rule, f.line) for f in run(kept)] == [("BG-17", 9)]
    unreported = [*listed, state("idle", "c1", stop="end_turn"), state("idle", stop="end_turn", bg=c1)]
    assert run(unreported) == []
    again = [*listed, state("idle", "c1", bg=[]), state("running", "c1", bg=[]), state("running", bg=c1)]
    assert run(again) == []
    late = [*started, state("idle", "c1", stop="end_turn", bg=[]), state("running", bg=c1)]
    assert [(f.rule, f.line) for f in run(late)] == [("BG-17", 8)]
    removed = [*kept[:-1], state("idle", stop="end_turn", bg=[])]
    assert run([*removed, state("running", "c1", bg=[]), state("idle", bg=c1)]) == []
    assert [(f.rule, f.line) for f in run([*removed, state("idle", bg=c1)])] == [("BG-17", 10)]
    # new input into the idle child starts work there, whose running state may come after the
    # parent's list names it (nothing orders two sessions' reports): no breach
    text = [{"type": "text", "text": "do"}]
    fed = update("session_message", "c1", messageId="m2", senderSessionId="s1", content=text)
    assert run([*removed, fed, state("running", bg=c1), state("running", "c1", bg=[])]) == []


def test_the_same_final_status_again_and_content_patches_are_no_reopening() -> None:
    # Later updates patch an entity in place (Entity IDs): the table lets content follow a
    # final status; only a new status would reopen the call.
    lines = [*TURN, tool("t1", "failed"), tool("t1", "failed"), tool_chunk("t1"), tool("t1", content=[])]
    assert run(lines) == []


def test_compaction_statuses_follow_the_compaction_table() -> None:
    assert run([compaction("c1", "completed"), compaction("c1", "in_progress")])[0].rule == "COMPACT-03"
    # another terminal status corrects the outcome (final-status-change=reopen-only, the default);
    # under final-is-final it is the table's forbidden cell, and the finding names the reading
    corrected = [compaction("c1", "in_progress"), compaction("c1", "failed"), compaction("c1", "completed")]
    assert run(corrected) == []
    found = run(corrected, {"final-status-change": "final-is-final"})
    assert [(f.rule, f.line, f.readings) for f in found] == [("COMPACT-03", 3, ("final-status-change",))]
    reopened = [compaction("c1", "failed"), compaction("c1", "in_progress")]
    for alt in ("reopen-only", "final-is-final"):  # a return to in_progress is another compaction
        assert [(f.rule, f.readings) for f in run(reopened, {"final-status-change": alt})] == [
            ("COMPACT-03", ())
        ]
    # custom and future statuses imply no lifecycle, before or after a terminal status
    assert run([compaction("c1", "_x"), compaction("c1", "in_progress"), compaction("c1", "completed")]) == []
    after = [compaction("c1", "completed"), compaction("c1", "_archived"), compaction("c1", "later")]
    assert run(after) == []


def test_replayed_history_is_not_judged_again() -> None:
    params: dict[str, Any] = {"sessionId": "s1", "replayFrom": {"type": "start"}}
    resume = ("client", {"jsonrpc": "2.0", "id": 9, "method": "session/resume", "params": params})
    lines = [*TURN, tool("t1", "completed"), resume, tool("t1", "in_progress")]
    assert run(lines) == []
    # a window that asked for no replay re-sends no history: the reopen is live (review48 case 168)
    del params["replayFrom"]
    assert [f.rule for f in run(lines)] == ["BG-05"]


def test_exercise_counts_name_the_rule_of_each_consulted_cell() -> None:
    ms = MonitorSet([TableMonitor])
    for n, (sender, msg) in enumerate([tool("t1", "in_progress"), compaction("c1", "completed")], 1):
        ms.feed(sender, msg, n)
    # COMPACT-03 twice: the compaction's start and its completion; COMPACT-05: it starts in
    # progress; ENT-01: the tool call's start (its first report); BG-10: the announce cell;
    # COMPACT-02: the fields a compaction_update must carry
    assert ms.exercised == Counter(
        {"BG-05": 1, "ENT-01": 1, "COMPACT-03": 2, "COMPACT-05": 1, "BG-10": 1, "COMPACT-02": 1}
    )


def test_the_table_monitor_reports_exactly_the_rules_of_the_observed_tables_and_fields() -> None:
    rules = {
        r for spec in OBSERVED
        for r in (*spec.forbidden.values(), *spec.guard_rules.values(), *spec.eventually.values())
    }  # fmt: skip
    required = {r.rule for r in fields.REQUIRED}
    assert required == {"MSGID-01", "SDM-01", "NOTICE-02", "USAGE-02", "COMPACT-02"}
    assert set(TableMonitor.RULES) - required == rules - {"ACC-13", "ENT-04"} == {
        "BG-05", "COMPACT-03", "COMPACT-05", "ENT-01", "BG-09", "BG-10", "BG-11", "BG-17", "SYNC-02"
    }  # fmt: skip
    # ACC-13 is the session table's rule for closing, which the observer never fires (UNOBSERVED);
    # ENT-04 names the entity table's cells, every one of which has a row (nothing to refuse)
    assert {"session": frozenset({"close", "closed"})} == UNOBSERVED


def test_a_rule_is_stated_once() -> None:
    """A rule that a table of the model states (a forbidden cell, a guard or an obligation) is
    reported from the wire by a monitor firing that table, not by hand-written code as well:
    ``implemented_by`` never lists both a machine of ``model/`` and a monitor for one rule."""
    twice = set()
    for rule in {r for m in ALL_MONITORS for r in m.RULES}:
        found = implemented_by(rule)
        if any(n.startswith("model.") for n in found) and any(".monitors." in n for n in found):
            twice.add(rule)
    assert twice == set(), sorted(twice)


def test_a_monitor_naming_a_table_rule_is_a_second_implementation() -> None:
    """The table monitor only executes the tables (it names none of their rules), so it is not
    listed; a monitor whose code names a rule it also fires from a table would be."""
    assert executes_model(TableMonitor, "BG-11")
    assert "properties.monitors.tables.TableMonitor" not in implemented_by("BG-11")

    class Named(TableMonitor):  # defined in this test module, whose source names BG-11
        pass

    assert not executes_model(Named, "BG-11")


def findings_of(lines: list[Line], **options: object) -> list[Finding]:
    ms = MonitorSet(**options)  # type: ignore[arg-type]
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    ms.finish(quiescent=True)
    return [f for f in ms.findings if f.kind == "rule" and f.rule in PROMPT_RULES]


PROMPT_RULES = rules_of((prompt_table.SPEC,))


def test_a_prompt_is_judged_against_every_state_hidden_steps_may_have_reached() -> None:
    """Holding and inserting are hidden: a cancel covers the prompt only if it was not inserted,
    so a success after the cancel is fine, and an error other than -32800 is judged as the
    covered prompt's breach (the state reached with the fewest hidden steps)."""
    covered = [prompt(1), cancel()]
    assert findings_of([*covered, answer(1, "u1"), user("u1")]) == []
    found = findings_of([*covered, fail(1, -32603)])
    assert [(f.rule, f.line) for f in found] == [("CANCEL-02", 3)]
    assert "prompt 1 (received at line 1) is covered" in found[0].explanation
    assert "had it been inserted, ACC-03" in found[0].explanation
    assert findings_of([*covered, fail(1, -32800)]) == []


def test_a_cancel_after_a_cancel_request_makes_minus_32800_the_only_error() -> None:
    """A $/cancel_request, then a session/cancel: the prompt is covered (the table's cover row
    from cancel_requested); refusing it for a reason of its own is no longer open to the Agent."""
    lines = [prompt(1), cancel_request(1), cancel(), fail(1, -32603)]
    found = findings_of(lines, readings={"rejected-after-cancel-request": "own-reason"})
    assert [(f.rule, f.line) for f in found] == [("CANCEL-02", 4)]


def test_the_own_reason_reading_is_the_guard_of_a_row() -> None:
    lines = [prompt(1), cancel_request(1), fail(1, -32603)]
    found = findings_of(lines)
    assert [(f.rule, f.readings) for f in found] == [("REJ-03", ("rejected-after-cancel-request",))]
    assert findings_of(lines, readings={"rejected-after-cancel-request": "own-reason"}) == []


def test_evidence_of_insertion_leaves_only_the_inserted_state() -> None:
    """A user message only this prompt can account for: the error answers an inserted prompt."""
    found = findings_of([prompt(1), user("u1"), fail(1, -32800)])
    assert [(f.rule, f.line) for f in found] == [("ACC-03", 3)]
    assert "is inserted" in found[0].explanation


def test_an_unanswered_prompt_owes_the_answer_of_the_state_it_may_be_in() -> None:
    assert [f.rule for f in findings_of([prompt(1)])] == ["REJ-01"]
    assert [f.rule for f in findings_of([prompt(1), user("u1")])] == ["ACC-01"]


def test_editing_the_prompt_table_changes_the_verdicts() -> None:
    """A variant that lets a covered prompt be refused with any error (one added row) and one
    that drops the error-after-success rule: the prompt and response monitors follow."""
    covered = [prompt(1), cancel(), fail(1, -32603)]
    row = {"machine": "prompt", "trigger": "reject", "source": "covered", "dest": "rejected"}
    relaxed = from_data({"title": "covered prompts may be refused", "add_row": [row]}, "v.toml", "v")
    assert findings_of(covered, variant=relaxed) == []
    twice = [prompt(1), user("u1"), answer(1, "u1"), fail(1, -32603)]
    assert [f.rule for f in findings_of(twice)] == ["ACC-03"]
    assert findings_of(twice, variant=from_drops(["ACC-03"])) == []


def fg_findings(lines: list[Line], **options: object) -> list[tuple[str, int | None]]:
    ms = MonitorSet(**options)  # type: ignore[arg-type]
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    ms.finish(quiescent=True)
    return [(f.rule, f.line) for f in ms.findings if f.kind == "rule" and f.rule in FG_RULES]


FG_RULES = rules_of((foreground_table.SPEC,))
OPENED = [initialize(0), initialized(0)]
WORK = [prompt(1), state("running"), user("u1"), answer(1, "u1")]
PROGRESS = {"output-while-requires-action": "progress"}  # a message while blocked is progress


def test_output_is_judged_by_the_foreground_tables_output_row() -> None:
    """Model output is progress: allowed where running is reported; while requires_action it is
    the table's FG-04; under a custom state the Client did not advertise, its guard's STATE-04
    (also after running: running is what the transitions call for there)."""
    done = [state("idle", stop="end_turn")]
    assert fg_findings([*OPENED, *WORK, say("m1"), *done]) == []
    asked = ask("p1", "t1")  # blocked on a permission request (TRANS-05)
    blocked = [*OPENED, *WORK, asked, state("requires_action"), say("m1"), state("running"), *done]
    assert fg_findings(blocked, readings=PROGRESS) == [("FG-04", 9)]
    pending = {"output-while-requires-action": "pending-output"}  # may be output from before the block
    assert fg_findings(blocked, readings=pending) == []
    custom = [*OPENED, *WORK, state("_busy"), say("m1"), state("running"), *done]
    assert fg_findings(custom) == [("STATE-04", 8)]
    advertised = [initialize(0, meta={"customStates": True}), initialized(0), *WORK[:2], state("_busy")]
    assert fg_findings([*advertised, say("m1"), state("running"), *done]) == []


def test_editing_the_foreground_table_changes_both_progress_checks() -> None:
    """One added row (output while requires_action) and neither the message nor the tool call
    progress under requires_action is a finding: both monitors fire the same cell."""
    ra = "requires_action"
    row = {"machine": "foreground", "trigger": "output", "source": ra, "dest": ra}
    variant = from_data({"title": "progress while blocked", "add_row": [row]}, "v.toml", "v")
    blocked = [*OPENED, *WORK, tool("t1", "pending"), ask("p1", "t1"), state(ra), say("m1")]
    lines = [*blocked, tool("t1", "in_progress"), state("running"), state("idle", stop="end_turn")]
    assert fg_findings(lines, readings=PROGRESS) == [("FG-04", 10), ("FG-04", 11)]  # message, tool call
    assert fg_findings(lines, readings=PROGRESS, variant=variant) == []


def test_work_left_active_owes_the_foreground_tables_obligation() -> None:
    assert fg_findings([*OPENED, *WORK]) == [("FG-05", 4)]


# -- one response per request (properties.monitors.rpc) -------------------------------------------


def run_all(lines: list[Line]) -> list[tuple[str, int | None]]:
    ms = MonitorSet()
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    return [(f.rule, f.line) for f in ms.findings if f.kind == "rule"]


def test_a_second_response_is_its_senders_breach() -> None:
    again = answer(1, "u1")
    assert run_all([*TURN, again, state("idle", stop="end_turn")]) == [("INTRO-02", 5)]
    error = ("agent", {"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "late failure"}})
    assert run_all([*TURN, error, state("idle", stop="end_turn")]) == [("ACC-03", 5)]


def test_an_id_answered_and_then_reused_by_a_new_request_may_be_answered_again() -> None:
    second = [prompt(1), user("u2"), answer(1, "u2"), state("idle", stop="end_turn")]
    assert run_all([*TURN, state("idle", stop="end_turn"), *second]) == []


def test_editing_a_row_changes_the_checkers_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/engine.md's example: one added row in model/compaction.py, and the checker follows."""
    from dataclasses import replace

    from model import compaction as cm
    from model.core import Row

    lines = [compaction("c1", "completed"), compaction("c1", "failed")]
    strict = {"final-status-change": "final-is-final"}  # (under reopen-only no move is fired)
    assert [f.rule for f in run(lines, strict)] == ["COMPACT-03"]
    edited = replace(cm.SPEC, rows=(*cm.SPEC.rows, Row("fail", cm.COMPLETED, cm.FAILED, cm.SEC)))
    monkeypatch.setattr(cm, "SPEC", edited)
    assert run(lines, strict) == []


def test_a_variant_without_the_running_output_row_is_fired_for_running_output() -> None:
    """The monitor's shortcut for output while running holds for the model's table only: under
    a variant that removes that row, output while running is the table's breach."""
    row = {"machine": "foreground", "trigger": "output", "source": "running", "dest": "running"}
    variant = from_data({"title": "no output while running", "remove_row": [row]}, "v.toml", "v")
    lines = [*OPENED, *WORK, say("m1"), state("idle", stop="end_turn")]
    assert fg_findings(lines) == []
    assert fg_findings(lines, variant=variant) == [("FG-02", 7)]


def test_stop_reasons_are_defined_once() -> None:
    """The standard stop reasons are stated in ``model.foreground`` only: no other module binds
    a name for them or spells three or more of them in one literal (issue 31)."""
    root = Path(__file__).resolve().parent.parent
    reasons = set(foreground_table.STOP_REASONS)
    home = root / "model" / "foreground.py"
    again = []
    for top in ("model", "properties", "simulator", "cli"):
        for path in sorted((root / top).rglob("*.py")):
            if path == home:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                targets: list[ast.expr] = []
                if isinstance(node, ast.Assign):
                    targets = node.targets
                elif isinstance(node, ast.AnnAssign):
                    targets = [node.target]
                if any(isinstance(t, ast.Name) and "STOP_REASON" in t.id for t in targets):
                    again.append(f"{path.relative_to(root)}:{node.lineno}")
                if isinstance(node, ast.Tuple | ast.List | ast.Set):
                    named = {e.value for e in node.elts if isinstance(e, ast.Constant)} & reasons
                    if len(named) >= 3:
                        again.append(f"{path.relative_to(root)}:{node.lineno}")
    assert again == []
