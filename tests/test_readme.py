"""The README's checker example runs as shown: its commands, run in an empty folder, print exactly
the output the README shows (the transcript is made by the first command, so nothing needs to be
shipped beside the README)."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from cli.main import main

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def _example() -> list[tuple[str, list[str]]]:
    """(command, expected output lines) of the README's implementer session."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("### An implementer: check a recorded transcript", 1)[1]
    block = re.search(r"```text\n(.*?)```", section, re.S)
    assert block is not None, "the README's checker example is missing"
    steps: list[tuple[str, list[str]]] = []
    for line in block.group(1).splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


@pytest.mark.needs_shared
def test_the_readme_checker_example_prints_what_the_readme_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not (SHARED / "acp-schema").is_dir():
        pytest.skip(f"the example validates against the schema in {SHARED} (../shared is absent)")
    monkeypatch.chdir(tmp_path)
    steps = _example()
    assert [c.split()[:2] for c, _ in steps] == [
        ["acp-model", "simulate"],
        ["acp-model", "check"],
        ["echo", "$?"],
    ]
    code = 0
    for command, expected in steps:
        if command == "echo $?":
            assert [str(code)] == expected
            continue
        argv = [a.replace("../shared", str(SHARED)) for a in shlex.split(command)[1:]]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(argv)
        assert out.getvalue().splitlines() == expected, command


def test_the_docs_name_the_command_acp_model() -> None:
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), REPO / "diagrams" / "README.md"]
    stale = [str(p.relative_to(REPO)) for p in pages if "python -m cli" in p.read_text(encoding="utf-8")]
    assert stale == []
