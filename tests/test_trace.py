"""Tests of the traceability matrix (``properties/trace.py``, ``docs/traceability.md``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli.cmd_trace import seeded_bugs
from properties import trace
from properties.catalogue import RULES, RULES_BY_ID
from properties.monitors import ALL_MONITORS
from tests.check_support import run_cli

REPO = Path(__file__).resolve().parents[1]


def test_committed_matrix_is_up_to_date(tmp_path: Path) -> None:
    fresh = tmp_path / "traceability.md"
    fresh.write_text(trace.matrix(seeded_bugs()), encoding="utf-8")
    committed = REPO / "docs" / "traceability.md"
    assert committed.is_file(), "docs/traceability.md is missing: run acp-model trace"
    assert fresh.read_text(encoding="utf-8") == committed.read_text(encoding="utf-8"), (
        "docs/traceability.md is stale: run acp-model trace"
    )


def test_committed_sections_page_is_up_to_date(tmp_path: Path) -> None:
    fresh = tmp_path / "spec-sections.md"
    fresh.write_text(trace.sections(seeded_bugs()), encoding="utf-8")
    committed = REPO / "docs" / "spec-sections.md"
    assert committed.is_file(), "docs/spec-sections.md is missing: run acp-model trace --sections"
    assert fresh.read_text(encoding="utf-8") == committed.read_text(encoding="utf-8"), (
        "docs/spec-sections.md is stale: run acp-model trace --sections"
    )


def test_sections_page_lists_every_rule_reading_and_seeded_bug_once_under_its_section() -> None:
    from properties.catalogue import SECTION_CODES
    from properties.readings import READINGS

    seeded = seeded_bugs()
    text = trace.sections(seeded)
    assert text == trace.sections(seeded)
    parts = text.split("\n## ")[1:]
    assert [p.split(" (", 1)[0] for p in parts] == list(SECTION_CODES)
    by_heading = {p.split(" (", 1)[0]: p for p in parts}
    for rule in RULES:
        assert f"| {rule.id} |" in by_heading[rule.section]
        assert sum(f"| {rule.id} |" in p for p in parts) == 1
        for bug in seeded.get(rule.id, ()):
            assert f"- {bug}: {rule.id}" in by_heading[rule.section]
    for reading in READINGS:
        for heading in reading.sections:
            assert f"- `{reading.name}` (default `{reading.default}`" in by_heading[heading]


def test_trace_sections_command_writes_the_page(tmp_path: Path) -> None:
    out = tmp_path / "s.md"
    code, _, err = run_cli(["trace", "--sections", "--out", str(out)])
    assert code == 0 and "wrote" in err
    assert out.read_text(encoding="utf-8") == trace.sections(seeded_bugs())


def test_matrix_is_deterministic_and_has_one_row_per_rule() -> None:
    text = trace.matrix()
    assert text == trace.matrix()
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| rule")]
    assert [row.split(" | ")[0][2:] for row in rows] == [rule.id for rule in RULES]


def test_every_must_monitor_rule_has_an_implementing_monitor() -> None:
    for rule in RULES:
        if rule.check == "monitor" and rule.level in ("MUST", "MUST NOT"):
            monitors = [name for name in trace.implemented_by(rule.id) if ".monitors." in name]
            assert monitors, rule.id


def test_every_monitor_rule_is_catalogued_and_mays_are_only_tolerated() -> None:
    for cls in ALL_MONITORS:
        for rule in cls.RULES:
            assert rule in RULES_BY_ID, (cls.__name__, rule)
            assert RULES_BY_ID[rule].level != "MAY", (cls.__name__, rule)
        for rule in cls.TOLERATES:
            assert RULES_BY_ID[rule].level == "MAY", (cls.__name__, rule)
    for entry in RULES:
        if entry.check == "monitor" and entry.level == "MAY":
            assert trace.tolerated_by(entry.id), entry.id


def test_implemented_by_names_monitors_machines_and_the_view_check() -> None:
    assert "properties.monitors.prompts.PromptMonitor" in trace.implemented_by("SDM-05")
    assert trace.implemented_by("ACC-09") == ["model.between.DISTINCT_MESSAGE_IDS"]  # the monitor executes it
    assert "model.prompt.SPEC" in trace.implemented_by("ACTIVE-02")  # a guard rule
    assert "model.toolcall.SPEC" in trace.implemented_by("BG-05")  # a forbidden cell
    assert "properties.monitors.tables.TableMonitor" not in trace.implemented_by("BG-05")  # executes it
    assert trace.implemented_by("ENT-03") == ["model.clientview_rules.ASPECTS"]  # viewcheck executes it
    assert trace.implemented_by("UPD-01") == []


def test_exercised_by_lists_tests_and_seeded_bugs() -> None:
    assert "tests/test_monitors.py" in trace.exercised_by("ACC-03")
    assert "tests/test_viewcheck.py" not in trace.exercised_by("ACC-03")
    mutants = pytest.importorskip("simulator.analysis.mutants")
    named = {m.intended_rule: m.name for m in mutants.MUTANTS}
    found = trace.exercised_by("ACC-03", seeded_bugs())
    assert any(name.startswith(f"mutant {named['ACC-03']} ") for name in found)
    assert not any(name.startswith("mutant ") for name in trace.exercised_by("ACC-03"))


def test_cli_command_regenerates(tmp_path: Path) -> None:
    target = tmp_path / "m.md"
    code, out, err = run_cli(["trace", "--out", str(target)])
    assert code == 0, err
    assert target.read_text(encoding="utf-8") == trace.matrix(seeded_bugs())
    assert (out, err) == ("", f"acp-model trace: wrote {target}\n")


def test_each_rule_says_truly_how_it_is_checked() -> None:
    """``check`` names what implements the rule: a monitor, a machine of the model, or the
    client-view comparison; a rule nothing checks says so (``unchecked``, with a reason)."""
    wrong = []
    for rule in RULES:
        if rule.level == "MAY":  # a permission: tolerated by monitors, allowed by the model
            continue
        found = trace.implemented_by(rule.id)
        kinds = {
            "monitor": any(".monitors." in name for name in found),
            "model": any(name.startswith("model.") for name in found),
            "client-view": "model.clientview_rules.ASPECTS" in found,
        }
        if rule.check in kinds and not kinds[rule.check]:
            wrong.append(f"{rule.id} says {rule.check} but is implemented by {found}")
        if rule.check == "model" and kinds["monitor"]:
            wrong.append(f"{rule.id} says model but a monitor reports it from the wire")
        if rule.check == "unchecked" and found:
            wrong.append(f"{rule.id} says unchecked but is implemented by {found}")
    assert not wrong, "\n".join(wrong)


def test_the_session_model_page_lists_every_declaration_and_says_who_runs_it(tmp_path: Path) -> None:
    """The table is generated (``acp-model trace --between``); the prose after it names each
    declaration with who runs it, so a new declaration fails here until it is described."""
    from model.between import DECLARATIONS

    page = trace.SESSION_MODEL.read_text(encoding="utf-8")
    block = page.split(trace.BETWEEN_BEGIN + "\n", 1)[1].split(trace.BETWEEN_END, 1)[0]
    assert block == trace.between_table(), "docs/session-model.md is stale: run acp-model trace --between"
    prose = page.split(trace.BETWEEN_END, 1)[1]
    assert [d.name for d in DECLARATIONS if f"`{d.name.upper()}`" not in prose] == []
    copy = tmp_path / "page.md"
    copy.write_text(page.replace(block, "stale\n"), encoding="utf-8")
    code, _, err = run_cli(["trace", "--between", "--out", str(copy)])
    assert code == 0, err
    assert copy.read_text(encoding="utf-8") == page
    copy.write_text("no markers\n", encoding="utf-8")
    code, _, err = run_cli(["trace", "--between", "--out", str(copy)])
    assert code == 2 and str(copy) in err and err[-1] == "\n" and err.count("\n") == 1
