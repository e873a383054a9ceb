"""The compiled reader (setup.py, properties/native.py): when it is used, and that it reads
exactly as its Python source does.

- ``native.choose`` on a throw-away package: the source is loaded instead of an extension
  module when none was built, when the environment asks for it, when no digest was recorded,
  when the source changed after the build, and when the extension does not load; a current
  extension is used.
- The installed package's status agrees with the module actually imported.
- Parity (only where properties.transcript is compiled, as after ``pip install -e .``): the
  compiled ``scan_transcript`` and its source, run on the same random bytes, random JSON lines
  and mutated transcripts with several line limits, yield the same items and statistics, and
  ``acp-model check`` finds the same with either; closed early, both have counted the same.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import io
import itertools
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import properties.transcript as transcript
from cli import cmd_check
from properties import native
from tests.test_check_robustness import _chunks, labelled_transcripts, monitor_set, mutated

ROOT = Path(__file__).resolve().parent.parent

# -- choosing between an extension module and its source ---------------------------------------


@pytest.fixture
def package(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A new imported package holding ``mod.py`` (which sets ``FROM_SOURCE``)."""
    name = f"fakepkg_{uuid.uuid4().hex}"
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text("FROM_SOURCE = True\n")
    sys.path.insert(0, str(tmp_path))
    importlib.import_module(name)
    try:
        yield name, pkg
    finally:
        sys.path.remove(str(tmp_path))
        for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[key]


def fake_extension(pkg: Path) -> Path:
    """A file where the import system looks for an extension module (it does not load)."""
    path = pkg / ("mod" + importlib.machinery.EXTENSION_SUFFIXES[0])
    path.write_bytes(b"not a shared library")
    return path


def digest(path: Path) -> str:
    return native.source_digest(path)


def current(pkg: Path) -> native.BuildRecord:
    """The record a build of the fake package's current source and extension would write."""
    ext = native.compiled_file(pkg, "mod")
    assert ext is not None
    return native.BuildRecord("compiled", {"mod": digest(pkg / "mod.py")}, {ext.name: ext.stat().st_size})


def test_setup_records_the_digest_the_guard_computes(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("acp_model_setup", ROOT / "setup.py")
    assert spec is not None and spec.loader is not None
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)  # (its setup() call runs only as __main__)
    source = ROOT / "properties" / "transcript.py"
    assert setup._digest(source) == native.source_digest(source)
    assert set(native.COMPILED) == {Path(p).stem for p in setup.COMPILED}
    edited = tmp_path / "t.py"
    edited.write_bytes(source.read_bytes().replace(b"line", b"lime", 1))
    assert native.source_digest(edited) != native.source_digest(source)
    # the record it writes is read back as written
    text = setup._record_text("compiled", {"mod": "1-0"}, {"mod.so": 3})
    pkg = tmp_path / f"recpkg_{uuid.uuid4().hex}"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "_native_build.py").write_text(text)
    sys.path.insert(0, str(tmp_path))
    try:
        assert native.read_record(pkg.name) == native.BuildRecord("compiled", {"mod": "1-0"}, {"mod.so": 3})
    finally:
        sys.path.remove(str(tmp_path))


def test_no_extension_means_the_source_and_nothing_loaded_early(package: tuple[str, Path]) -> None:
    name, pkg = package
    status = native.choose(name, pkg, ("mod",), None, pure=False)
    assert status == {"mod": "source (not compiled)"}
    assert f"{name}.mod" not in sys.modules  # the import system finds the source by itself


def _no_sources(record: native.BuildRecord) -> native.BuildRecord:
    return native.BuildRecord(record.outcome, {}, record.files)


def _stale(record: native.BuildRecord) -> native.BuildRecord:
    return native.BuildRecord(record.outcome, {"mod": "0-00000000"}, record.files)


def _resized(record: native.BuildRecord) -> native.BuildRecord:
    return native.BuildRecord(record.outcome, record.sources, {k: v + 1 for k, v in record.files.items()})


def _unlisted(record: native.BuildRecord) -> native.BuildRecord:
    return native.BuildRecord(record.outcome, record.sources, {"other.so": 1})


@pytest.mark.parametrize(
    ("edit", "pure", "reason"),
    [
        (lambda r: None, False, "no build record"),
        (_no_sources, False, "no build record"),
        (_stale, False, "changed since it was compiled"),
        (_resized, False, "not the ones the build record lists"),
        (_unlisted, False, "not the ones the build record lists"),
        (lambda r: r, True, native.PURE_ENV),
        (lambda r: r, False, "does not load"),  # the fake extension cannot be imported
    ],
)
def test_the_source_is_loaded_in_place_of_an_extension_that_must_not_run(
    package: tuple[str, Path], edit: Any, pure: bool, reason: str
) -> None:
    name, pkg = package
    fake_extension(pkg)
    status = native.choose(name, pkg, ("mod",), edit(current(pkg)), pure=pure)
    assert status["mod"].startswith("source (") and reason in status["mod"]
    module = sys.modules[f"{name}.mod"]
    assert module.FROM_SOURCE is True
    assert module.__file__ is not None and module.__file__.endswith("mod.py")
    assert sys.modules[name].mod is module  # bound in the package, as an import does


def test_a_current_extension_is_used(package: tuple[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    name, pkg = package
    fake_extension(pkg)
    loaded: list[str] = []
    monkeypatch.setattr(native, "_load_compiled", lambda qualified: loaded.append(qualified))
    status = native.choose(name, pkg, ("mod",), current(pkg), pure=False)
    assert status == {"mod": "compiled"}
    assert loaded == [f"{name}.mod"]
    assert f"{name}.mod" not in sys.modules  # no source was loaded


def test_without_a_source_the_status_names_the_extension(
    package: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    name, pkg = package
    fake_extension(pkg)
    record = current(pkg)
    (pkg / "mod.py").unlink()
    monkeypatch.setattr(native, "_load_compiled", lambda qualified: None)
    assert native.choose(name, pkg, ("mod",), record, pure=False) == {"mod": "compiled (no source beside it)"}
    status = native.choose(name, pkg, ("mod",), record, pure=True)
    assert status["mod"].startswith("compiled, although it should not run")
    assert f"{name}.mod" not in sys.modules


def test_a_source_that_fails_leaves_no_half_module(package: tuple[str, Path]) -> None:
    name, pkg = package
    (pkg / "mod.py").write_text("raise RuntimeError('broken on purpose')\n")
    fake_extension(pkg)
    with pytest.raises(RuntimeError, match="broken on purpose"):
        native.choose(name, pkg, ("mod",), None, pure=False)
    assert f"{name}.mod" not in sys.modules
    assert not hasattr(sys.modules[name], "mod")


@pytest.mark.parametrize(
    "text",
    [
        "OUTCOME = 'compiled'\nSOURCES = {'mod': '1-0'}\n",  # FILES missing
        "OUTCOME = 'compiled'\nSOURCES = {'mod': 1}\nFILES = {}\n",
        "OUTCOME = 'compiled'\nSOURCES = {}\nFILES = {'a.so': '3'}\n",
        "OUTCOME = 'compiled'\nSOURCES = {'mod': '1-",  # cut short
        "raise RuntimeError('boom')\n",
    ],
)
def test_an_unreadable_record_counts_as_none(package: tuple[str, Path], text: str) -> None:
    name, pkg = package
    (pkg / "_native_build.py").write_text(text)
    assert native.read_record(name) is None


def test_the_package_status_names_the_module_in_use() -> None:
    file = transcript.__file__ or ""
    status = native.STATUS["transcript"]
    assert status.startswith("compiled") == (not file.endswith(".py")), (status, file)
    assert native.describe().startswith("transcript: ")
    import properties

    assert properties.transcript is transcript


def test_the_install_compiled_the_reader_unless_told_not_to() -> None:
    """A failed compilation is only a warning at install time (the install must work where
    there is no compiler); here it fails, so that CI does not lose the compiled reader
    unnoticed. Install with ACP_MODEL_PURE_PYTHON=1 where compiling is not wanted."""
    record = native.RECORD
    if record is None:
        pytest.skip("no build record: the project was not built by setup.py here")
    assert not record.outcome.startswith("failed"), record.outcome


# -- parity of the compiled reader with its source ----------------------------------------------

COMPILED = native.STATUS.get("transcript") == "compiled"
needs_compiled = pytest.mark.skipif(
    not COMPILED,
    reason=f"properties.transcript is not compiled here ({native.STATUS.get('transcript')}); "
    "`pip install -e .` compiles it where mypyc and a C compiler are available",
)


def source_reader() -> ModuleType:
    """properties/transcript.py executed from its source, under a private name."""
    name = "properties._transcript_from_source"
    module = sys.modules.get(name)
    if module is None:
        path = Path(native.__file__).with_name("transcript.py")
        module = native.load_source(name, path)
    return module


LIMITS = st.sampled_from([transcript.DEFAULT_MAX_LINE_BYTES, 1, 9, 64, 300])


def scan_both(data: bytes, limit: int, stop: int | None = None) -> None:
    """Both readers over ``data``, to the end or (``stop``) closed after that many items."""
    results = []
    for module in (transcript, source_reader()):
        stats = module.TranscriptStats()
        reader = module.scan_transcript(io.BytesIO(data), limit, stats=stats)
        items = list(reader if stop is None else itertools.islice(reader, stop))
        reader.close()
        fields = (
            stats.lines, stats.messages, stats.requests, stats.notifications, stats.responses,
            stats.input_findings, sorted(stats.sessions), dict(stats.preserved),
        )  # fmt: skip
        results.append((items, fields))
    assert results[0] == results[1]


def check_both(data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    """``check_stream`` (monitors fed through the reader's routes) with either reader."""
    reports = []
    for module in (transcript, source_reader()):
        monkeypatch.setattr(cmd_check, "scan_transcript", module.scan_transcript)
        report = cmd_check.check_stream(io.BytesIO(data), "t", monitors=monitor_set())
        reports.append((report.findings, report.open, dict(report.exercised), report.stats.messages))
    assert reports[0] == reports[1]


@needs_compiled
@settings(max_examples=150, deadline=None)
@given(parts=st.lists(_chunks, max_size=30), limit=LIMITS, stop=st.none() | st.integers(0, 8))
def test_compiled_reader_reads_random_bytes_as_its_source(
    parts: list[bytes], limit: int, stop: int | None
) -> None:
    scan_both(b"".join(parts), limit, stop)


@needs_compiled
@settings(max_examples=100, deadline=None)
@given(lines=labelled_transcripts(), limit=LIMITS)
def test_compiled_reader_reads_random_json_lines_as_its_source(
    lines: list[tuple[bytes, str | None]], limit: int
) -> None:
    scan_both(b"".join(raw for raw, _ in lines), limit)


@needs_compiled
@settings(max_examples=100, deadline=None)
@given(lines=mutated())
def test_compiled_reader_feeds_the_monitors_as_its_source(lines: list[bytes]) -> None:
    data = b"".join(lines)
    scan_both(data, transcript.DEFAULT_MAX_LINE_BYTES)
    with pytest.MonkeyPatch.context() as monkeypatch:
        check_both(data, monkeypatch)
