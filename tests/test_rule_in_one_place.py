"""Each rule is implemented in one place (issue 31, "the session is one composed model").

A rule is implemented where its ID is written as the reason of a check: a machine table's
forbidden cell or guard, a ``model.between`` declaration, a monitor's finding, an aspect of the
Client's view (``model.clientview_rules``). So across the tree (``model/``, ``properties/``,
``simulator/``, ``cli/``) a rule ID may be written as a string literal (code, not comments or
docstrings: read with ``ast``) in one module only;
every other module that needs it takes it from that module's object (``bw.CANCELLED_PERMISSIONS
.rule``, ``entity.KEYED_BY_ID``), which makes the one statement the one place to change and
every use of it findable. A second module writing the ID itself is a second statement of the
rule, and fails here.

The modules that only name rules, never implement them, are ``NAMING`` (each with why), and a
monitor's ``TOLERATES`` (the MAY rules it must never report: tolerating is not checking, and
every monitor that could misreport a freedom says so). Nothing else is exempt: a duplicate is
fixed in the code, not by adding a module here.

The rules issue 31 found written three to five times (``ISSUE_31``) and every rule between
machines (``model.between``) appear in no string of ``simulator/`` or ``properties/monitors/``
code at all, not even inside a message: the simulated peers and the monitors reach them only
through ``model``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from model import between as bw
from properties.catalogue import RULES_BY_ID

REPO = Path(__file__).resolve().parents[1]
ROOTS = ("model", "properties", "simulator", "cli")

NAMING: dict[str, str] = {
    "properties/catalogue.py": "the catalogue: every rule's ID, paraphrase, level, check and groups",
    "properties/readings.py": "the readings: the rules each reading's alternatives affect",
    "properties/seeded.py": "the seeded-bug registry: the rule each bug is meant to break",
}
"""Modules that name rules without implementing any (relative to the repository root)."""

ISSUE_31 = ("DONE-03", "CANCEL-14", "TRANS-04", "CANCEL-17", "CANCEL-06", "USER-04", "TOOL-04")
"""The rules issue 31 found implemented three to five times (its "What was found")."""


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes (a module's, class's or function's first expression, and
    attribute docstrings: any string standing alone as a statement)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
    }


def _tolerated(tree: ast.AST) -> set[int]:
    """The ids of the string nodes inside a ``TOLERATES = (...)`` assignment."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "TOLERATES" for t in node.targets
        ):
            found |= {id(c) for c in ast.walk(node.value) if isinstance(c, ast.Constant)}
    return found


def code_strings(path: Path) -> list[str]:
    """The string literals of ``path``'s code: neither docstrings nor ``TOLERATES``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _docstrings(tree) | _tolerated(tree)
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
    ]


def written_in(files: Iterable[Path], root: Path = REPO) -> dict[str, list[str]]:
    """Rule ID -> the modules (relative paths) whose code writes it as a whole string literal."""
    out: dict[str, list[str]] = {}
    for path in sorted(files):
        rel = path.relative_to(root).as_posix()
        for rule in sorted({s for s in code_strings(path) if s in RULES_BY_ID}):
            out.setdefault(rule, []).append(rel)
    return out


def duplicates(files: Iterable[Path], root: Path = REPO) -> dict[str, list[str]]:
    """Rules written in more than one module that implements rules (``NAMING`` aside)."""
    found = written_in(files, root)
    return {rule: mods for rule, mods in found.items() if len([m for m in mods if m not in NAMING]) > 1}


def mentions(files: Iterable[Path], rules: Iterable[str], root: Path = REPO) -> list[tuple[str, str]]:
    """(module, rule) for every code string of ``files`` containing one of ``rules`` anywhere."""
    wanted = tuple(rules)
    return [
        (path.relative_to(root).as_posix(), rule)
        for path in sorted(files)
        for text in code_strings(path)
        for rule in wanted
        if rule in text
    ]


def _tree() -> list[Path]:
    return [p for root in ROOTS for p in (REPO / root).rglob("*.py")]


def test_every_rule_id_is_written_in_one_module_only() -> None:
    assert duplicates(_tree()) == {}


def test_the_naming_modules_exist_and_implement_no_rule() -> None:
    """The allowed list stays honest: each module in it exists, and none of them defines a check
    (no monitor class, no machine table, no view check)."""
    for rel in NAMING:
        path = REPO / rel
        assert path.is_file(), rel
        text = path.read_text(encoding="utf-8")
        for marker in ("MachineSpec(", "def breach(", "self.breach(", "class Monitor"):
            assert marker not in text, (rel, marker)


def test_the_issue_31_rules_and_the_rules_between_machines_are_not_written_in_peers_or_monitors() -> None:
    files = [*(REPO / "simulator").rglob("*.py"), *(REPO / "properties" / "monitors").rglob("*.py")]
    rules = {*ISSUE_31, *(d.rule for d in bw.DECLARATIONS)}
    assert mentions(files, sorted(rules)) == []


def test_the_view_comparison_names_no_rule() -> None:
    """``properties.viewcheck`` executes the model's table of the Client's view
    (``model.clientview_rules.ASPECTS``): no rule ID in its code, not even inside a message."""
    assert mentions([REPO / "properties" / "viewcheck.py"], sorted(RULES_BY_ID)) == []


def test_a_planted_duplicate_fails(tmp_path: Path) -> None:
    """The check can fail: a copy of the tree plus one module that writes a rule another module
    already states (TRANS-04, ``model.between`` CANCEL_CONFIRMED) as a finding's ID, and one that
    mentions it inside a message, are both reported."""
    planted = tmp_path / "simulator" / "peers" / "planted.py"
    planted.parent.mkdir(parents=True)
    planted.write_text(
        '"""A second statement of a rule."""\n\n'
        "def end(agent, reason):\n"
        '    """Docstrings may name TRANS-04."""\n'
        '    if agent.cancelling and reason != "cancelled":\n'
        '        agent.breach("TRANS-04")\n'
        '    return f"idle with {reason} (TRANS-04 says cancelled)"\n',
        encoding="utf-8",
    )
    between = tmp_path / "model" / "between.py"
    between.parent.mkdir(parents=True)
    between.write_text((REPO / "model" / "between.py").read_text(encoding="utf-8"), encoding="utf-8")
    found = duplicates([planted, between], tmp_path)
    assert found == {"TRANS-04": ["model/between.py", "simulator/peers/planted.py"]}
    assert mentions([planted], ISSUE_31, tmp_path) == [
        ("simulator/peers/planted.py", "TRANS-04"),
        ("simulator/peers/planted.py", "TRANS-04"),
    ]
    # a naming module may write it too, and a docstring or TOLERATES never counts
    catalogue = tmp_path / "properties" / "catalogue.py"
    catalogue.parent.mkdir(parents=True)
    catalogue.write_text('RULES = ("TRANS-04",)\nclass M:\n    TOLERATES = ("TRANS-04",)\n', encoding="utf-8")
    assert duplicates([between, catalogue], tmp_path) == {}
