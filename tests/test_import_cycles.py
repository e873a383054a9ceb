"""No module of the code imports, directly or through others, a module that imports it back:
the tree's import graph (every ``import`` and ``from ... import`` of a project module, also
those inside functions, except under ``if TYPE_CHECKING:``) has no cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("model", "properties", "simulator", "diagrams", "cli")


def _modules(root: Path) -> dict[str, Path]:
    found = {}
    for top in PACKAGES:
        for path in (root / top).rglob("*.py"):
            name = ".".join(path.relative_to(root).with_suffix("").parts)
            found[name.removesuffix(".__init__")] = path
    return found


def _type_checking_only(tree: ast.AST) -> set[int]:
    """Line numbers of the imports inside ``if TYPE_CHECKING:`` blocks."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                lines.update(n.lineno for n in ast.walk(inner) if isinstance(n, ast.Import | ast.ImportFrom))
    return lines


def import_graph(root: Path = REPO) -> nx.DiGraph:
    modules = _modules(root)
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        skip = _type_checking_only(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom) or node.lineno in skip:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            else:
                continue
            graph.add_edges_from((name, t) for t in targets if t in modules and t != name)
    return graph


def test_the_import_graph_has_no_cycle() -> None:
    cycles = [sorted(c) for c in nx.strongly_connected_components(import_graph()) if len(c) > 1]
    assert cycles == []


def test_a_cycle_is_seen(tmp_path: Path) -> None:
    pkg = tmp_path / "model"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from model import b\n")
    (pkg / "b.py").write_text("from model.a import f\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from model import a\n"
    )
    graph = import_graph(tmp_path)
    assert ("model.a", "model.b") in graph.edges and ("model.b", "model.a") in graph.edges
    assert not graph.has_edge("model.c", "model.a")
