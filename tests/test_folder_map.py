"""The map of the folders (``docs/map.md``, ``diagrams/folder_map.py``): committed fresh, every
module with a header, every folder described."""

from __future__ import annotations

from pathlib import Path

from diagrams import folder_map
from tests.check_support import run_cli

REPO = Path(__file__).resolve().parents[1]


def test_committed_map_is_up_to_date() -> None:
    committed = REPO / "docs" / "map.md"
    assert committed.is_file(), "docs/map.md is missing: run acp-model trace --map"
    assert folder_map.folder_map() == committed.read_text(encoding="utf-8"), (
        "docs/map.md is stale: run acp-model trace --map"
    )


def test_every_module_has_a_header_and_every_folder_a_description() -> None:
    text = folder_map.folder_map()
    assert "**no header**" not in text
    assert folder_map.undescribed() == []
    for package in folder_map.PACKAGES:
        assert f"## `{package}/`" in text
    assert "| `engine.py` |" in text and "## `properties/monitors/`" in text


def test_a_module_without_header_and_an_unknown_folder_show(tmp_path: Path) -> None:
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "__init__.py").write_text('"""The model."""\n')
    (tmp_path / "model" / "bare.py").write_text("X = 1\n")
    (tmp_path / "model" / "said.py").write_text('"""Says what it owns. More text."""\n')
    (tmp_path / "scratch").mkdir()
    text = folder_map.folder_map(tmp_path)
    assert "| `bare.py` | **no header** |" in text
    assert "| `said.py` | Says what it owns. |" in text
    assert folder_map.undescribed(tmp_path) == ["scratch"]
    assert "Undescribed folders: `scratch/`" in text


def test_trace_map_writes_the_page(tmp_path: Path) -> None:
    out = tmp_path / "map.md"
    code, _, err = run_cli(["trace", "--map", "--out", str(out)])
    assert code == 0, err
    assert out.read_text(encoding="utf-8") == folder_map.folder_map()
    (tmp_path / "a-file").write_text("x")
    code, _, err = run_cli(["trace", "--map", "--out", str(tmp_path / "a-file" / "m.md")])
    assert code == 2 and len(err.strip().splitlines()) == 1
