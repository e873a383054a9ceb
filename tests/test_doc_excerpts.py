"""Hand-written examples of docs/*.md that run in seconds show what the commands print.

The README's excerpts are tests/test_readme.py's, docs/spec-authors.md's tests/test_spec_authors_doc.py's;
this module holds the cheap ones of the other pages: each runs the command it quotes in an empty
folder and compares its output with the block (``...`` for lines left out, timing masked, as in
tests/test_readme.py), so a page drifts no further than one changed figure.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from cli.main import main
from tests.test_readme import shows

DOCS = Path(__file__).resolve().parents[1] / "docs"

_SECONDS_COLUMN = re.compile(r"\s+\d+\.\d$")


def _block(page: str, command: str) -> list[str]:
    """The lines a page shows under ``$ COMMAND`` (up to the end of its block)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    start = text.index(f"$ {command}\n") + len(command) + 3
    return text[start : text.index("```", start)].splitlines()


def _table(lines: list[str]) -> list[str]:
    """A matrix table's lines without their seconds column, spaces collapsed."""
    return [" ".join(_SECONDS_COLUMN.sub("", line).split()) for line in lines]


def test_the_readings_page_shows_the_seeded_bug_matrix_as_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    command = "acp-model explore --readings cancel-takes-effect --fault cancel-as-end-turn --slice cancels"
    command += " --jobs 1 --quiet"
    shown = _block("readings.md", command)
    monkeypatch.chdir(tmp_path)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        code = main(shlex.split(command)[1:])
    assert code == 1  # the seeded bug breaks TRANS-04 under the default reading
    assert shows("\n".join(_table(buf.getvalue().splitlines())), _table(shown)) == [], buf.getvalue()
