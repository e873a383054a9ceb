"""The table monitor: the checker fires the model's machine tables (``properties.observe``,
``properties.monitors.tables``), and a rule is stated in one place."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

from properties.engine import MonitorSet
from properties.findings import Finding
from properties.monitors import ALL_MONITORS, TableMonitor
from properties.observe import OBSERVED
from properties.trace import implemented_by
from tests.wire_dsl import Line, answer, prompt, state, tool, tool_chunk, update, user

REPO = Path(__file__).resolve().parents[1]


def run(lines: list[Line]) -> list[Finding]:
    ms = MonitorSet([TableMonitor])
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    return [f for f in ms.findings if f.kind == "rule"]


TURN = [prompt(1), state("running"), user("u1"), answer(1, "u1")]


def compaction(cid: str, status: str, **fields: object) -> Line:
    return update("compaction_update", "s1", compactionId=cid, status=status, **fields)


def test_a_status_after_a_final_one_is_the_tool_call_tables_forbidden_cell() -> None:
    found = run([*TURN, tool("t1", "in_progress"), tool("t1", "completed"), tool("t1", "in_progress")])
    assert [(f.rule, f.line) for f in found] == [("BG-05", 7)]
    assert "tool call 't1' is completed: the model has no 'run' there" in found[0].explanation


def test_the_same_final_status_again_and_content_patches_are_no_reopening() -> None:
    # Later updates patch an entity in place (Entity IDs): the table lets content follow a
    # final status; only a new status would reopen the call.
    lines = [*TURN, tool("t1", "failed"), tool("t1", "failed"), tool_chunk("t1"), tool("t1", content=[])]
    assert run(lines) == []


def test_compaction_statuses_follow_the_compaction_table() -> None:
    assert run([compaction("c1", "completed"), compaction("c1", "in_progress")])[0].rule == "COMPACT-03"
    assert run([compaction("c1", "completed"), compaction("c1", "failed")])[0].rule == "COMPACT-03"
    # custom and future statuses imply no lifecycle, before or after a terminal status
    assert run([compaction("c1", "_x"), compaction("c1", "in_progress"), compaction("c1", "completed")]) == []
    after = [compaction("c1", "completed"), compaction("c1", "_archived"), compaction("c1", "later")]
    assert run(after) == []


def test_replayed_history_is_not_judged_again() -> None:
    params = {"sessionId": "s1"}
    resume = ("client", {"jsonrpc": "2.0", "id": 9, "method": "session/resume", "params": params})
    lines = [*TURN, tool("t1", "completed"), resume, tool("t1", "in_progress")]
    assert run(lines) == []


def test_exercise_counts_name_the_rule_of_each_consulted_cell() -> None:
    ms = MonitorSet([TableMonitor])
    for n, (sender, msg) in enumerate([tool("t1", "in_progress"), compaction("c1", "completed")], 1):
        ms.feed(sender, msg, n)
    assert ms.exercised == Counter({"BG-05": 1, "COMPACT-03": 1, "BG-10": 1})  # BG-10: the announce cell


def test_the_table_monitor_reports_exactly_the_rules_of_the_observed_tables() -> None:
    rules = {
        r for spec in OBSERVED
        for r in (*spec.forbidden.values(), *spec.guard_rules.values(), *spec.eventually.values())
    }  # fmt: skip
    assert set(TableMonitor.RULES) == rules == {
        "BG-05", "COMPACT-03", "BG-09", "BG-10", "BG-11", "BG-17", "ACC-13", "SYNC-02"
    }  # fmt: skip


# Rules both a table of model/ and a hand-written monitor still state: issue 15's remaining work.
# The list may only shrink; a rule that joins it is a new second statement of a rule.
STATED_TWICE = {
    "ACC-01", "ACC-03", "BOUND-01", "CANCEL-02", "FG-04", "FG-05",
    "REJ-01", "REJ-03", "STATE-04", "ACC-13", "CANCEL-07",
    # the model's guard oldest_held states the default reading of prompt-ahead-of-held; the
    # prompt monitor checks its receipt-order alternative from the wire (properties.readings)
    "ACTIVE-02",
}  # fmt: skip


def test_a_rule_is_stated_once() -> None:
    """A rule that a table of the model states (a forbidden cell or a guard) is reported from
    the wire by the table monitor, not by a hand-written monitor as well."""
    twice = set()
    for rule in {r for m in ALL_MONITORS for r in m.RULES}:
        found = implemented_by(rule)
        tables = [n for n in found if n.startswith("model.")]
        hand = [n for n in found if ".monitors." in n and not n.endswith(".TableMonitor")]
        if tables and hand:
            twice.add(rule)
    assert twice <= STATED_TWICE, sorted(twice - STATED_TWICE)
    assert twice == STATED_TWICE, f"no longer stated twice: {sorted(STATED_TWICE - twice)} (shrink the list)"


def test_no_monitor_module_names_a_rule_its_class_does_not_declare() -> None:
    """Rule IDs in a monitor's code are the ones in its RULES (or TOLERATES, or groups it
    exercises): a rule moved to a table leaves no string behind."""
    for cls in ALL_MONITORS:
        path = REPO / (cls.__module__.replace(".", "/") + ".py")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {
            n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in {"BG-05", "COMPACT-03"}
        }  # fmt: skip
        if cls is not TableMonitor:
            assert not names, (cls.__name__, names)


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
    assert [f.rule for f in run(lines)] == ["COMPACT-03"]
    edited = replace(cm.SPEC, rows=(*cm.SPEC.rows, Row("fail", cm.COMPLETED, cm.FAILED, cm.SEC)))
    monkeypatch.setattr(cm, "SPEC", edited)
    assert run(lines) == []
