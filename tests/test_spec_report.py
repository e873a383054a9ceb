"""The spec report: deterministic bytes, a page that reads as Markdown (no raw dumps), the
committed example in docs/spec-report kept current (deep: regenerated whole; fast: one rule's
witness and its entry)."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cli.main import main
from diagrams.spec_report import Context, Options, build
from diagrams.spec_report.sections import section_decidability
from simulator.analysis import decidability as dec
from simulator.peers.config import DEFAULT
from simulator.peers.schedulers import random_walk
from simulator.workers import Workers

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "docs" / "spec-report"

TINY = dict(
    bound=dec.Bound(walks=4, steps=30, twin_nodes=500, exhaustive_states=100),
    rules=("INTRO-02", "REJ-01"),
    slices=("cancels",),
    walks=3,
    ladder=(("default bounds, 3 walks", 3, 30),),
    pictures=False,
    matrix=(),
    pool=Workers(1),
)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_report_is_deterministic_and_reads_as_markdown(tmp_path: Path) -> None:
    for name in ("a", "b"):
        build(Options(tmp_path / name, **TINY), lambda _: None)  # type: ignore[arg-type]
    a, b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert a == b
    page = a["index.md"].decode()
    assert page.startswith("# Spec report")
    for heading in (
        "## Summary",
        "## Undecidable and partly decidable rules",
        "## Contradictions",
        "## Coverage per machine",
    ):
        assert heading in page
    assert "### REJ-01" in page and "### INTRO-02" not in page  # only the undecidable get a section
    assert "{" not in page  # no raw JSON on the page
    for link in re.findall(r"\]\(([^)#]+)\)", page):
        assert link in a, link  # every link points at a file written beside the page
    report = json.loads(a["report.json"])
    assert report["sections"]["summary"]["decidability"] == {"yes": 1, "partly": 0, "no": 1, "unknown": 0}


def test_two_worker_processes_write_the_same_files(tmp_path: Path) -> None:
    """The decidability samples (under one reading's other alternative too), the readings
    matrix rows, the exhaustive slices and the chunks of the view's and the ladder's walks as jobs
    of two local processes: every file byte for byte as one process writes it."""
    small = {
        **TINY,
        "matrix": ("cancel-takes-effect",),
        "rules": ("INTRO-02", "REJ-01", "TRANS-04"),
        "slices": ("cancels", "hook"),
        "walks": 60,  # two chunks of the view's walks
        "ladder": (("default bounds, 60 walks", 60, 30),),  # two chunks
    }
    for name, size in (("one", 1), ("two", 2)):
        with Workers(size) as pool:
            build(Options(tmp_path / name, **{**small, "pool": pool}), lambda _: None)  # type: ignore[arg-type]
    one, two = _files(tmp_path / "one"), _files(tmp_path / "two")
    assert one == two
    report = json.loads(one["report.json"])
    assert len(report["sections"]["matrix"]["matrix"]) == 2  # both alternatives, at two slices
    assert "(cancels, hook) and 60 random walks" in one["index.md"].decode()
    assert report["sections"]["summary"]["never_exercised"]  # the ladder ran
    assert report["sections"]["decidability"]["by_reading"] == [
        {"reading": "cancel-takes-effect", "alternative": "when-acted"}
    ]


def test_pictures_drawn_by_two_worker_processes_are_the_bytes_drawn_here() -> None:
    """``Context.draw`` only records a picture; ``draw_all`` draws them as jobs of the pool, and a
    worker process draws the same bytes as this one."""
    from diagrams.sequence_mpl import sequence_png

    transcripts = [random_walk(seed, 8, DEFAULT).world.transcript for seed in (1, 2)]
    drawn = []
    for size in (1, 2):
        with Workers(size) as pool:
            ctx = Context(Options(Path("unused"), pool=pool), lambda _: None)
            for i, t in enumerate(transcripts):
                assert ctx.draw(f"w{i}.png", sequence_png, list(t), f"walk {i}") == f"w{i}.png"
            assert not ctx.files
            ctx.draw_all()
            drawn.append(ctx.files)
    assert drawn[0] == drawn[1] and sorted(drawn[0]) == ["w0.png", "w1.png"]
    assert drawn[0]["w0.png"].startswith(b"\x89PNG") and drawn[0]["w0.png"] != drawn[0]["w1.png"]


def test_a_time_budget_marks_parts_partial(tmp_path: Path) -> None:
    opts = Options(tmp_path, time_budget=1e-6, **TINY)  # type: ignore[arg-type]
    report = build(opts, lambda _: None)
    assert "decidability" in report["partial"]
    assert "**Partial**" in (tmp_path / "index.md").read_text()


def test_spec_report_command_refuses_a_file_as_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "f"
    f.write_text("")
    assert main(["spec-report", "--out", str(f)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_committed_witness_of_one_rule_is_current() -> None:
    """Fast drift check: REJ-01's witness and entry, regenerated at the default bound."""
    ctx = Context(Options(Path("unused"), pictures=False), lambda _: None)
    ctx.results["decidability"] = [dec.decide("REJ-01")]
    section = section_decidability(ctx)
    for rel, data in ctx.files.items():
        assert (COMMITTED / rel).read_bytes() == data, rel
    committed = json.loads((COMMITTED / "report.json").read_text())
    entry = next(e for e in committed["sections"]["decidability"]["rules"] if e["rule"] == "REJ-01")
    fresh = section.data["rules"][0]
    entry.pop("by_reading")  # computed under every other reading alternative: the deep test's
    assert fresh == entry


@pytest.mark.deep
def test_committed_report_is_current(tmp_path: Path) -> None:
    """docs/spec-report is `acp-model spec-report --out docs/spec-report` (regenerate with that
    command when this fails). Pictures are compared by name only: their pixels depend on the
    installed matplotlib and fonts."""
    build(Options(tmp_path), lambda _: None)
    fresh, committed = _files(tmp_path), _files(COMMITTED)
    assert sorted(fresh) == sorted(committed)
    for rel in fresh:
        if not rel.endswith(".png"):
            assert fresh[rel] == committed[rel], rel


def test_coverage_mermaid_colours_exactly_the_rows_fired() -> None:
    from diagrams.coverage import FIRED, NEVER, coverage_mermaid
    from diagrams.ir import all_diagrams

    d = next(x for x in all_diagrams() if x.name == "session")
    fired = {(e.source, e.trigger, e.dest) for e in d.edges[:3]}
    text = coverage_mermaid(d, fired)
    styles = dict(re.findall(r"linkStyle ([\d,]+) stroke:(#\w+)", text))
    assert {v: k for k, v in styles.items()} == {
        FIRED: "0,1,2",
        NEVER: ",".join(map(str, range(3, len(d.edges)))),
    }
    assert text.count("-->|") == len(d.edges)


def _matrix() -> object:
    from simulator.analysis.matrix import Finding, Matrix, Outcome, Row

    quiet = Outcome((), 263_557, 0, True, 9.5)
    broken = Outcome((Finding("DONE-03", "x.ndjson", 12, "late chunk"),), 321_009, 0, True, 9.9)
    m = Matrix(("patch-after-idle",), "exhaustive", 0, 1)
    m.rows = [
        Row("patch-after-idle", "ended-work", (), quiet),
        Row("patch-after-idle", "patch-in-place", (("patch-after-idle", "patch-in-place"),), broken),
    ]
    return m


def test_the_readings_matrix_section_names_the_rows_that_contradict() -> None:
    from diagrams.spec_report.sections import section_matrix

    pages = []
    for _ in range(2):
        ctx = Context(Options(Path("unused")), lambda _: None)
        ctx.results["matrix"] = _matrix()
        section = section_matrix(ctx)
        assert list(ctx.drawings) == ["matrix.png"] and not ctx.files  # drawn by draw_all
        ctx.draw_all()
        pages.append((section.lines, ctx.files))
    lines, files = pages[0]
    assert pages[0] == pages[1]  # the picture too: same rows, same bytes
    text = "\n".join(lines)
    assert "| patch-after-idle | ended-work (default) | none | 263,557 | yes |" in text
    assert "| patch-after-idle | patch-in-place | DONE-03 | 321,009 | yes |" in text
    assert "1 row(s) make the rules contradict" in text
    assert files["matrix.png"].startswith(b"\x89PNG")
    assert "seconds" not in str(section.data)


def test_an_unknown_matrix_reading_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["spec-report", "--out", str(tmp_path / "r"), "--readings", "nosuch"]) == 2
    assert "--readings: unknown reading 'nosuch'" in capsys.readouterr().err


def test_a_page_regenerated_in_place_keeps_no_stale_witness(tmp_path: Path) -> None:
    """Files of the report's own folders that this run did not write (a witness of a rule that
    is now decidable) are removed; files elsewhere in the output folder are left alone."""
    build(Options(tmp_path, **TINY), lambda _: None)  # type: ignore[arg-type]
    written = _files(tmp_path)
    folders = {Path(rel).parts[0] for rel in written if len(Path(rel).parts) > 1}
    assert folders
    stale = tmp_path / sorted(folders)[0] / "OLD-01.breaking.ndjson"
    stale.write_text("{}\n", encoding="utf-8")
    mine = tmp_path / "notes.txt"
    mine.write_text("kept", encoding="utf-8")
    build(Options(tmp_path, **TINY), lambda _: None)  # type: ignore[arg-type]
    assert not stale.exists() and mine.read_text(encoding="utf-8") == "kept"
    assert {k: v for k, v in _files(tmp_path).items() if k != "notes.txt"} == written


VARIANT_TINY = {
    **TINY,
    "bound": dec.Bound(walks=16, steps=30, twin_nodes=200, exhaustive_states=30),
    "rules": ("DONE-03",),
    "walks": 6,
    "ladder": (),
}


def test_a_variant_report_opens_with_its_differences_and_is_deterministic(tmp_path: Path) -> None:
    """output-after-idle drops DONE-03: its verdict (yes: the seeded bug's late update is of a
    message or tool call the wire saw) becomes unknown, and the late output it allows after a
    cancelled idle breaks CANCEL-14 (a contradiction the spec as written does not have), drawn
    on the page."""
    from properties.variants import load

    variant = load(str(REPO / "variants" / "output-after-idle.toml"))
    for name in ("a", "b"):
        build(Options(tmp_path / name, variant=variant, **VARIANT_TINY), lambda _: None)  # type: ignore[arg-type]
    a, b = _files(tmp_path / "a"), _files(tmp_path / "b")
    assert a == b
    page = a["index.md"].decode()
    headings = re.findall(r"^## (.+)$", page, re.M)
    assert headings[0] == "Differences" and "Summary" in headings
    assert "variant `output-after-idle`" in page.splitlines()[0]
    assert "| rule dropped | DONE-03 (MUST)" in page
    assert "| DONE-03 | yes" in page and "**unknown**" in page
    assert "{" not in page
    for link in re.findall(r"\]\(([^)#]+)\)", page):
        assert link in a, link
    report = json.loads(a["report.json"])
    diff = report["differences"]
    assert report["variant"]["drop"] == ["DONE-03"]
    assert [d["rule"] for d in diff["decidability"]] == ["DONE-03"]
    appear = {c["rule"]: c for c in diff["contradictions"]["appear"]}
    assert "CANCEL-14" in appear and appear["CANCEL-14"]["transcript"] in a
    # dropping a rule relaxes no table row; the late output the rule's seeded bug sends patches an
    # entity (a chunk for a message seen) where the base run's tiny bounds patch none
    assert diff["coverage"]["lost"] == []
    assert all(row.startswith("entity: ") for row in diff["coverage"]["gained"])
    assert "differences" not in report["sections"]


def test_spec_report_refuses_a_bad_variant_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('title = "x"\ndrop = ["TRANS-99"]\n', encoding="utf-8")
    assert main(["spec-report", "--out", str(tmp_path / "r"), "--variant", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert "bad.toml: drop[0]: unknown rule 'TRANS-99'" in err and "\n" not in err
    assert not (tmp_path / "r" / "index.md").exists()


@pytest.mark.deep
def test_a_variant_report_at_the_default_slices(tmp_path: Path) -> None:
    """The heavier run: every exhaustive slice and the default walks, a few rules' decidability,
    one reading's matrix rows: the variant's findings are those `explore --compare` documents."""
    from properties.variants import load

    variant = load(str(REPO / "variants" / "output-after-idle.toml"))
    opts = Options(
        tmp_path,
        variant=variant,
        rules=("DONE-03", "CANCEL-14", "FG-02"),
        matrix=("patch-after-idle",),
        pictures=False,
        pool=Workers(2),
    )
    report = build(opts, lambda _: None)
    diff = report["differences"]
    assert {c["rule"] for c in diff["contradictions"]["appear"]} >= {"CANCEL-14"}
    assert not diff["contradictions"]["vanish"]
    assert [r["rule"] for r in diff["decidability"]] == ["DONE-03"]
    assert diff["matrix"]  # the variant's late output breaks rules in the matrix rows too
    # with the monitors' state in the key, a slice explored with the dropped rule's bug on goes
    # over the state limit: the explore part says it is partial, the other parts are whole
    assert report["partial"] == ["explore"]
    assert "**Partial**" in (tmp_path / "index.md").read_text(encoding="utf-8")


# -- progress on standard error (issue 35) -------------------------------------------------------


class _Stderr(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    ("tty", "quiet", "progress", "closing"),
    [(True, False, True, True), (False, False, False, True), (True, True, False, False)],
    ids=["terminal", "pipe", "quiet"],
)
def test_progress_only_on_a_terminal_and_never_with_quiet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tty: bool, quiet: bool, progress: bool, closing: bool
) -> None:
    import diagrams.spec_report

    def build(opts: object, say: Callable[[str], None]) -> dict[str, object]:
        say("part decidability: started")
        return {"partial": []}

    monkeypatch.setattr(diagrams.spec_report, "build", build)
    err = _Stderr(tty)
    monkeypatch.setattr(sys, "stderr", err)
    argv = ["spec-report", "--out", str(tmp_path / "r"), *(["--quiet"] if quiet else [])]
    assert main(argv) == 0
    text = err.getvalue()
    assert ("part decidability: started" in text) is progress
    assert ("wrote " in text and "index.md and report.json" in text) is closing
    assert text.count("\n") == progress + closing


def test_the_cpu_seconds_count_the_processes_that_ended() -> None:
    from cli.cmd_spec_report import cpu_seconds

    before = cpu_seconds()
    # a child that spins for a while: its CPU time is counted once it has ended
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass",
        ],
        check=True,
    )
    assert cpu_seconds() - before >= 0.25


def test_the_matrix_picture_is_rules_by_alternatives() -> None:
    """A cell per rule an alternative changes: broken by the search under it, or another wire
    decidability under it; rules broken under the defaults get a column of their own."""
    from diagrams.matrix_png import DEFAULTS, effects, effects_png

    rows = [
        {"reading": "r", "alternative": "a", "default": True, "findings": [{"rule": "FG-02"}]},
        {"reading": "r", "alternative": "b", "default": False, "findings": [{"rule": "DONE-03"}]},
        {"reading": "q", "alternative": "c", "default": False, "findings": []},
    ]
    rules = [
        {
            "rule": "DONE-03",
            "decidable": "partly",
            "by_reading": [{"reading": "r", "alternative": "b", "decidable": "no"}],
        },
        {
            "rule": "REJ-03",
            "decidable": "yes",
            "by_reading": [{"reading": "s", "alternative": "d", "decidable": "unknown"}],
        },
        {"rule": "ACC-01", "decidable": "yes", "by_reading": []},
    ]
    grid = effects(rows, rules)
    assert grid.columns == [DEFAULTS, "r = b", "q = c", "s = d"]
    assert grid.rules == ["FG-02", "REJ-03", "DONE-03"]  # in the catalogue's order
    assert grid.cells == {
        ("FG-02", DEFAULTS): ("breaks", "breaks"),
        ("DONE-03", "r = b"): ("breaks", "breaks; partly → no"),
        ("REJ-03", "s = d"): ("unknown", "yes → unknown"),
    }
    assert effects_png(grid) == effects_png(effects(rows, rules))  # same grid, same bytes
    assert effects_png(effects([], [])).startswith(b"\x89PNG")


def test_the_committed_matrix_picture_has_a_row_per_rule_a_reading_changes() -> None:
    from diagrams.matrix_png import effects

    report = json.loads((COMMITTED / "report.json").read_text())
    verdicts = report["sections"]["decidability"]["rules"]
    grid = effects(report["sections"]["matrix"]["matrix"], verdicts)
    assert set(grid.rules) == {v["rule"] for v in verdicts if v.get("by_reading")}
    assert len(grid.columns) == len(report["sections"]["decidability"]["by_reading"])


def test_the_explore_part_keeps_a_slices_own_readings(tmp_path: Path) -> None:
    """reading_rows is explored under the readings it names (as ``acp-model explore`` does), so
    the rows only those readings allow are fired: the report's coverage does not list them as
    never fired."""
    from diagrams.spec_report.parts import part_explore

    ctx = Context(Options(tmp_path, slices=("reading_rows",), walks=0, pool=Workers(1)), lambda _: None)
    assert part_explore(ctx, None)
    fired = ctx.results["explore"]["slice_rows"]
    assert fired[("prompt", "cancel_requested", "reject", "rejected")]
    assert fired[("background_item", "listed", "adopt", "announced")]
