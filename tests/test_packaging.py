"""Packaging: what an install brings. pytest is a development tool (the ``dev`` extra), never a
runtime dependency, and no installed package imports it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0].strip().lower()


def test_pytest_is_a_dev_extra_not_a_runtime_dependency() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    runtime = {_name(r) for r in project["dependencies"]}
    dev = {_name(r) for r in project["optional-dependencies"]["dev"]}
    assert "pytest" not in runtime
    assert "pytest" in dev


def test_no_installed_package_imports_pytest() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    packages = project["tool"]["setuptools"]["packages"]
    offenders = [
        str(path.relative_to(REPO))
        for package in packages
        for path in sorted((REPO / package).rglob("*.py"))
        if re.search(r"^\s*(import pytest|from pytest)", path.read_text(encoding="utf-8"), re.M)
    ]
    assert offenders == []
