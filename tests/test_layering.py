"""The layering of the packages: model/ at the bottom, then properties/, then simulator/ and
diagrams/, with cli/ on top. Each package is imported whole in a fresh interpreter, and the
packages above it must not have been loaded."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

FORBIDDEN = {
    "model": ("properties", "simulator", "diagrams", "cli"),
    "properties": ("simulator", "diagrams", "cli"),
    "simulator": ("diagrams", "cli"),
    "diagrams": ("cli",),
}

_PROBE = """
import importlib, pkgutil, sys
package = importlib.import_module({name!r})
for info in pkgutil.walk_packages(package.__path__, {name!r} + "."):
    importlib.import_module(info.name)
print(sorted({{n.split(".")[0] for n in sys.modules}} & set({above!r})))
"""


@pytest.mark.parametrize("name", sorted(FORBIDDEN))
def test_a_package_never_imports_the_layers_above_it(name: str) -> None:
    code = _PROBE.format(name=name, above=FORBIDDEN[name])
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]", f"{name} imports {done.stdout.strip()}"


INNER = {
    "simulator/peers": ("simulator.explore", "simulator.analysis", "simulator.harness"),
    "simulator/explore": ("simulator.analysis", "simulator.harness"),
    "simulator/analysis": ("simulator.harness",),
}
"""Inside simulator/: the peers, then the explorers, then the analyses built on explorations,
with the harness for real agents on top. Every import statement counts, also one inside a
function (which the probe above does not run)."""


@pytest.mark.parametrize("folder", sorted(INNER))
def test_a_simulator_part_never_imports_the_parts_above_it(folder: str) -> None:
    import ast

    above = INNER[folder]
    found = []
    for path in sorted((REPO / folder).glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            found += [f"{path.name}:{node.lineno} {n}" for n in names if n.startswith(above)]
    assert found == []
