"""Hand-written examples of docs/*.md that run in seconds show what the commands print.

The README's excerpts are tests/test_readme.py's, docs/spec-authors.md's tests/test_spec_authors_doc.py's;
this module holds the cheap ones of the other pages: each runs the command it quotes in an empty
folder and compares its output with the block (``...`` for lines left out, timing masked, as in
tests/test_readme.py; in an abridged JSON block, ``"..."`` for entries left out and any
``seconds``), so a page drifts no further than one changed figure.
"""

from __future__ import annotations

import contextlib
import io
import json
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


ELIDED = "..."


def _abridges(shown: object, got: object, where: str = "$") -> list[str]:
    """Where ``shown`` (an abridged JSON block) does not show ``got``: a dict shows its keys in
    the order printed (all of them unless it has a ``"...": "..."`` entry), a list its items (a
    prefix when it ends with ``"..."``), a string ending in ``...`` a prefix; ``seconds`` is
    timing, any number will do."""
    if shown == ELIDED:
        return []
    if isinstance(shown, dict):
        if not isinstance(got, dict):
            return [f"{where}: an object is shown, {type(got).__name__} printed"]
        keys = [k for k in shown if k != ELIDED]
        printed = [k for k in got if k in keys] if ELIDED in shown else list(got)
        if printed != keys:
            return [f"{where}: keys {keys} shown, {list(got)} printed"]
        return [
            problem
            for k in keys
            if not (k == "seconds" and isinstance(got[k], float))
            for problem in _abridges(shown[k], got[k], f"{where}.{k}")
        ]
    if isinstance(shown, list):
        if not isinstance(got, list):
            return [f"{where}: a list is shown, {type(got).__name__} printed"]
        items = shown[:-1] if shown and shown[-1] == ELIDED else shown
        if len(items) > len(got) or (items is shown and len(items) != len(got)):
            return [f"{where}: {len(shown)} items shown, {len(got)} printed"]
        return [p for i, item in enumerate(items) for p in _abridges(item, got[i], f"{where}[{i}]")]
    if isinstance(shown, str) and shown.endswith(ELIDED) and isinstance(got, str):
        return [] if got.startswith(shown[: -len(ELIDED)]) else [f"{where}: {shown!r} shown, {got!r} printed"]
    return [] if shown == got else [f"{where}: {shown!r} shown, {got!r} printed"]


def test_abridges_flags_what_the_block_does_not_show() -> None:
    got = {"a": 1, "b": [1, 2], "c": "long text", "seconds": 0.5}
    assert _abridges({"a": 1, ELIDED: ELIDED, "c": "long ..."}, got) == []
    assert _abridges({"a": 1, "b": [1, ELIDED], "c": "long text", "seconds": 9.0}, got) == []
    assert _abridges({"a": 2, ELIDED: ELIDED}, got) != []  # a changed figure
    assert _abridges({"c": 1, "a": 1, ELIDED: ELIDED}, got) != []  # keys out of order
    assert _abridges({"a": 1, "b": [1, 2], "c": "long text"}, got) != []  # a key left out unsaid
    assert _abridges({"a": 1, "b": [1], "c": "long text", "seconds": 0.5}, got) != []


def test_the_variants_page_shows_the_json_comparison_as_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (DOCS / "variants.md").read_text(encoding="utf-8")
    label = re.search(r"\(abridged, `(acp-model explore [^`]*)`\):\n\n```json\n(.*?)```", text, re.S)
    assert label is not None, "docs/variants.md's JSON comparison is missing"
    command, block = " ".join(label.group(1).split()), label.group(2)
    monkeypatch.chdir(tmp_path)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        assert main(shlex.split(command)[1:]) == 0
    assert _abridges(json.loads(block), json.loads(buf.getvalue())) == []
