"""docs/spec-authors.md shows real output: the figures it quotes are what the commands print
(deep: each comparison explores the default slices twice)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from cli.main import main

DOC = Path(__file__).resolve().parents[1] / "docs" / "spec-authors.md"


def _run(argv: list[str], tmp_path: Path) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        main([*argv, "--out", str(tmp_path / "out")])
    return buf.getvalue()


def _figures(text: str) -> list[str]:
    """The state counts a block of output names, in order."""
    return re.findall(r"([\d,]{5,}) states", text)


@pytest.mark.deep
@pytest.mark.parametrize("variant", ["cancel-any-stop-reason", "answer-before-insert"])
def test_the_comparisons_the_doc_quotes_are_current(variant: str, tmp_path: Path) -> None:
    path = str(DOC.parents[1] / "variants" / f"{variant}.toml")
    out = _run(["explore", "--mode", "exhaustive", "--compare", "--variant", path], tmp_path)
    doc = DOC.read_text(encoding="utf-8")
    block = doc[doc.index(f"--variant variants/{variant}.toml --compare") :]
    block = block[: block.index("```", block.index("\n"))]
    assert _figures(out) and _figures(out) == _figures(block)


@pytest.mark.deep
def test_the_matrix_the_doc_quotes_is_current(tmp_path: Path) -> None:
    out = _run(["explore", "--readings", "patch-after-idle", "--jobs", "1"], tmp_path)
    rows = re.findall(r"patch-after-idle\s+(\S+).*?none\s+([\d,]+)", out)
    doc = DOC.read_text(encoding="utf-8")
    assert rows and all(re.search(rf"{alt}.*none\s+{states}", doc) for alt, states in rows)
