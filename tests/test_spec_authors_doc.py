"""docs/spec-authors.md shows real output: the figures it quotes are what the commands print
(deep: each comparison explores the default slices twice; the simulate/check example is fast)."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from cli.main import main
from tests.test_readme import shows

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


def test_the_transcript_example_prints_what_the_doc_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """§1's simulate / check / check --drop session, run in an empty folder: each command's output
    holds the lines shown (``...`` for lines left out) and exits as its ``# exit N`` says."""
    doc = DOC.read_text(encoding="utf-8")
    start = doc.index("$ acp-model simulate --drop TRANS-04")
    steps: list[tuple[str, list[str]]] = []
    for line in doc[start : doc.index("```", start)].splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    assert [c.split()[1] for c, _ in steps] == ["simulate", "check", "check"]
    monkeypatch.chdir(tmp_path)
    for command, expected in steps:
        command, _, comment = command.partition("#")
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
            code = main(shlex.split(command)[1:])
        assert shows(buf.getvalue(), expected) == [], (command, buf.getvalue())
        assert code == (int(comment.split()[-1]) if comment else 0), command


@pytest.mark.parametrize("rule", ["TRANS-04", pytest.param("ACC-05", marks=pytest.mark.deep)])
def test_the_decidability_verdicts_the_doc_quotes_are_current(rule: str) -> None:
    """The verdict line the doc shows for ``decidability --rule RULE`` (TRANS-04 takes a few
    seconds of CPU, ACC-05 about 15)."""
    doc = DOC.read_text(encoding="utf-8")
    start = doc.index(f"$ acp-model decidability --rule {rule}\n")
    shown = doc[start : doc.index("```", start)].splitlines()[1:]
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        main(["decidability", "--rule", rule])
    assert shows(buf.getvalue(), shown) == [], buf.getvalue()
