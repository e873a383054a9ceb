"""Traceability: for each catalogued rule, what implements its check and what exercises it.

Owns: ``implemented_by`` (monitors whose own code judges the rule, model machines whose forbidden
cells, guards or obligations name it, the declarations of ``model.between`` that state it,
``properties.viewcheck`` for the client-view rules it can report; a monitor that only fires those
tables or runs those declarations is the model's executor, not a second implementation:
``executes_model``),
``tolerated_by`` (monitors that must not report a MAY permission), ``exercised_by`` (tests whose
source holds the rule ID as a string literal, and seeded bugs meant to
break it, as the caller supplies them), the generated matrix ``docs/traceability.md``
(``write_matrix``; regenerate with ``acp-model trace``) and the generated page of the spec by
section ``docs/spec-sections.md`` (``write_sections``: per section heading, its rules, the
readings that cite it and the seeded bugs meant to break its rules; ``acp-model trace
--sections``). Everything is sorted, so both are byte-identical for the same sources.

Must not know: how any check works, the CLI, the simulator (seeded bugs are handed in).
"""

from __future__ import annotations

import ast
import importlib
import types
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from model.between import rules_stated
from properties.catalogue import CODE_SECTIONS, RULES, RULES_BY_ID, SECTION_CODES
from properties.outputs import write_atomic

REPO = Path(__file__).resolve().parents[1]
MATRIX = REPO / "docs" / "traceability.md"
SECTIONS_PAGE = REPO / "docs" / "spec-sections.md"
TESTS = REPO / "tests"


def _dotted(obj: type[Any]) -> str:
    return f"{obj.__module__}.{obj.__qualname__}"


@cache
def _literals(module: str) -> frozenset[str]:
    """The string literals of a module's source (docstrings and comments hold no rule's logic)."""
    path = REPO / (module.replace(".", "/") + ".py")
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return frozenset(
        n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    )


def executes_model(cls: type[Any], rule: str) -> bool:
    """Whether the monitor ``cls`` only executes the model's statement of ``rule``: it fires a
    table of ``model/`` stating the rule (``Monitor.TABLES``) or runs the ``model.between``
    declaration stating it, and its own module never names the rule. The rule is then
    implemented by the model alone; the monitor maps wire messages to the model's moves."""
    from properties.monitors.tables import rules_of

    stated = rule in rules_of(getattr(cls, "TABLES", ())) or rule in rules_stated()
    return stated and rule not in _literals(cls.__module__)


@cache
def _monitor_tables() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    from properties.monitors import ALL_MONITORS

    impl: dict[str, set[str]] = {}
    tol: dict[str, set[str]] = {}
    for cls in ALL_MONITORS:
        for rule in cls.RULES:
            if not executes_model(cls, rule):
                impl.setdefault(rule, set()).add(_dotted(cls))
        for rule in cls.TOLERATES:
            tol.setdefault(rule, set()).add(_dotted(cls))
    return (
        {k: tuple(sorted(v)) for k, v in impl.items()},
        {k: tuple(sorted(v)) for k, v in tol.items()},
    )


@cache
def _machine_table() -> dict[str, tuple[str, ...]]:
    registry = importlib.import_module("model.registry")
    names: dict[int, str] = {}
    for value in vars(registry).values():
        if isinstance(value, types.ModuleType) and hasattr(value, "SPEC"):
            names[id(value.SPEC)] = f"{value.__name__}.SPEC"
    out: dict[str, set[str]] = {}
    for spec in registry.MACHINES:
        name = names.get(id(spec), f"model.{spec.name}")
        for rule in (*spec.forbidden.values(), *spec.guard_rules.values(), *spec.eventually.values()):
            out.setdefault(rule, set()).add(name)
    return {k: tuple(sorted(v)) for k, v in out.items()}


def implemented_by(rule_id: str) -> list[str]:
    """Dotted names of what checks the rule: monitors, model machines, the view comparison."""
    from properties.viewcheck import VIEW_RULES

    impl, _ = _monitor_tables()
    found = list(impl.get(rule_id, ()))
    found += _machine_table().get(rule_id, ())
    found += rules_stated().get(rule_id, ())
    if rule_id in VIEW_RULES:
        found.append("properties.viewcheck.compare_views")
    return found


def tolerated_by(rule_id: str) -> list[str]:
    """Monitors that must tolerate (never report) the MAY permission ``rule_id``."""
    return list(_monitor_tables()[1].get(rule_id, ()))


@cache
def _test_table(tests_dir: Path = TESTS) -> dict[str, tuple[str, ...]]:
    out: dict[str, set[str]] = {}
    for path in sorted(tests_dir.glob("test_*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        name = path.relative_to(tests_dir.parent).as_posix()
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in RULES_BY_ID:
                out.setdefault(node.value, set()).add(name)
    return {k: tuple(sorted(v)) for k, v in out.items()}


Seeded = Mapping[str, Sequence[str]]
"""rule ID -> seeded bugs meant to break it (``mutant NAME (side)``), supplied by the caller
(``acp-model trace`` takes them from ``simulator.analysis.mutants``)."""


def exercised_by(rule_id: str, seeded: Seeded | None = None) -> list[str]:
    """Tests naming the rule ID as a string literal, then seeded bugs meant to break it."""
    return [*_test_table().get(rule_id, ()), *sorted((seeded or {}).get(rule_id, ()))]


def _cell(items: list[str]) -> str:
    out = []
    for item in items:
        if item.startswith("mutant "):
            out.append(item)
        elif item.endswith(" (tolerates)"):
            out.append(f"`{item[: -len(' (tolerates)')]}` (tolerates)")
        else:
            out.append(f"`{item}`")
    return "<br>".join(out) or "—"


def matrix(seeded: Seeded | None = None) -> str:
    """The traceability matrix as Markdown."""
    lines = [
        "# Traceability matrix",
        "",
        "Generated by `acp-model trace` from `properties/catalogue.py`, the monitors'",
        "`RULES`/`TOLERATES`, the model machines' forbidden cells and guards, `properties/viewcheck.py`,",
        "the rule IDs named in `tests/test_*.py` and the seeded bugs of `simulator/analysis/mutants.py`.",
        "Do not edit by hand; a test fails when it is stale.",
        "",
        "| rule | level | side | how checked | implemented by | exercised by |",
        "|---|---|---|---|---|---|",
    ]
    for rule in RULES:
        how = rule.check + (" (eventually)" if rule.eventually else "")
        impl = implemented_by(rule.id) + [f"{t} (tolerates)" for t in tolerated_by(rule.id)]
        lines.append(
            f"| {rule.id} | {rule.level} | {rule.side} | {how} | {_cell(impl)} | "
            f"{_cell(exercised_by(rule.id, seeded))} |"
        )
    lines.append("")
    return "\n".join(lines)


def write_matrix(path: str | Path = MATRIX, seeded: Seeded | None = None) -> None:
    """Write the matrix to ``path`` atomically."""
    write_atomic(path, matrix(seeded))


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def sections(seeded: Seeded | None = None) -> str:
    """The spec by section as Markdown: per heading of the spec (in its order), the rules that
    state its sentences, the readings that cite it and the seeded bugs meant to break its rules."""
    from properties.readings import READINGS

    seeded = seeded or {}
    lines = [
        "# The spec by section",
        "",
        "Generated by `acp-model trace --sections` from `properties/catalogue.py`,",
        "`properties/readings.py` and the seeded bugs of `simulator/analysis/mutants.py`. For each section",
        "heading of the spec text, in its order: the rules that state its sentences (level, side,",
        "how each is checked, our paraphrase), the readings that cite the section (the questions its",
        "text leaves open, `acp-model readings`) and the seeded bugs meant to break its rules",
        "(`acp-model mutants --list`). Do not edit by hand; a test fails when it is stale.",
        "",
    ]
    for heading, code in SECTION_CODES.items():
        rules = [r for r in RULES if r.section == heading]
        readings = [r for r in READINGS if heading in r.sections]
        bugs = sorted((bug, r.id) for r in rules for bug in seeded.get(r.id, ()))
        lines += [f"## {heading} ({code})", ""]
        if rules:
            lines += ["| rule | level | side | how checked | says |", "|---|---|---|---|---|"]
            for r in rules:
                how = r.check + (" (eventually)" if r.eventually else "")
                lines.append(f"| {r.id} | {r.level} | {r.side} | {how} | {_escape(r.paraphrase)} |")
            lines.append("")
        else:
            lines += ["No rules: the section states no obligation.", ""]
        if readings:
            lines.append("Readings:")
            lines.append("")
            for reading in readings:
                rules_of = ", ".join(reading.rules) or "the client view"
                lines.append(
                    f"- `{reading.name}` (default `{reading.default}`; {rules_of}): {reading.question}"
                )
            lines.append("")
        if bugs:
            lines.append("Seeded bugs:")
            lines.append("")
            lines += [f"- {bug}: {rule}" for bug, rule in bugs]
            lines.append("")
    assert set(CODE_SECTIONS.values()) == set(SECTION_CODES)
    return "\n".join(lines)


def write_sections(path: str | Path = SECTIONS_PAGE, seeded: Seeded | None = None) -> None:
    """Write the spec-by-section page to ``path`` atomically."""
    write_atomic(path, sections(seeded))
