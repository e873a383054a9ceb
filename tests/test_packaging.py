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


def _installed_packages() -> list[str]:
    """The packages an install (editable or not) brings, as setuptools finds them."""
    from setuptools import find_packages

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    include = project["tool"]["setuptools"]["packages"]["find"]["include"]
    return sorted(find_packages(where=str(REPO), include=include))


def test_an_install_brings_every_module_of_the_code() -> None:
    """A non-editable install has every package of the tree, sub-packages included (a list
    written by hand once left out simulator.explore and the others)."""
    packages = set(_installed_packages())
    folders = {
        path.parent.relative_to(REPO).as_posix().replace("/", ".")
        for top in ("model", "simulator", "properties", "cli", "diagrams")
        for path in (REPO / top).rglob("*.py")
    }
    assert folders - packages == set()
    assert {"tests", "benchmarks"} & {p.split(".")[0] for p in packages} == set()


def test_no_installed_package_imports_pytest() -> None:
    packages = [p.replace(".", "/") for p in _installed_packages()]
    offenders = [
        str(path.relative_to(REPO))
        for package in packages
        for path in sorted((REPO / package).glob("*.py"))
        if re.search(r"^\s*(import pytest|from pytest)", path.read_text(encoding="utf-8"), re.M)
    ]
    assert offenders == []
