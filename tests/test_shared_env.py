"""``ACP_MODEL_SHARED``: one environment variable says where the spec text and the schema are
(issue 35: without ``../shared`` the tests skipped and the README's ``--schema`` example failed,
with no way to point at another copy). The ``--spec`` and ``--schema`` defaults and the tests'
``needs_shared`` detection follow it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from properties.shared import ENV, default_schema, default_spec, shared_dir
from tests.check_support import BASIC_TURN, SCHEMA, run_cli


def test_the_variable_moves_every_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    assert shared_dir() == Path(__file__).resolve().parents[1].parent / "shared"
    monkeypatch.setenv(ENV, str(tmp_path))
    assert shared_dir() == tmp_path
    assert default_spec() == tmp_path / "spec" / "acp-v2-prompt-lifecycle.txt"
    assert default_schema() == tmp_path / "acp-schema" / "v2" / "schema.unstable.json"
    monkeypatch.setenv(ENV, "")  # empty: as if unset
    assert shared_dir() == Path(__file__).resolve().parents[1].parent / "shared"


def test_rules_and_check_read_from_the_folder_it_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, str(tmp_path))  # an empty folder: nothing there
    code, _, err = run_cli(["rules", "--section", "TOOL"])
    assert code == 0 and f"{tmp_path / 'spec' / 'acp-v2-prompt-lifecycle.txt'}: No such file" in err
    code, out, err = run_cli(["check", str(BASIC_TURN)])
    assert code == 2 and out == "" and err.count("\n") == 1
    assert str(tmp_path / "acp-schema" / "v2" / "schema.unstable.json") in err


def test_without_the_variable_check_does_not_validate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    code, out, _ = run_cli(["check", str(BASIC_TURN)])
    assert code == 0 and "schema validation skipped (no --schema)" in out


@pytest.mark.needs_shared
def test_a_copy_of_the_shared_folder_elsewhere_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not SCHEMA.is_file() or not default_spec().is_file():
        pytest.skip(f"the shared folder is absent ({shared_dir()}): set {ENV} to it")
    copy = tmp_path / "elsewhere"
    shutil.copytree(shared_dir() / "spec", copy / "spec")
    shutil.copytree(shared_dir() / "acp-schema", copy / "acp-schema")
    monkeypatch.setenv(ENV, str(copy))
    code, out, _ = run_cli(["check", str(BASIC_TURN)])
    assert code == 0 and "schema validated" in out
    code, out, err = run_cli(["rules", "--section", "TOOL"])
    assert code == 0 and err == "" and "[spec line" in out
