"""The pages of ``replay --html`` and of the runs ``explore`` and ``mutants`` write (issue 34)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.check_support import REPO, run_cli
from tests.test_html_pages import VIOLATIONS, _row

TINY = [
    "--prompts", "1", "--tool-calls", "0", "--permissions", "0", "--background", "0",
    "--capacity", "1", "--features", "cancel,hold",
]  # fmt: skip


@pytest.fixture(autouse=True)
def _at_repo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


def test_replay_html_is_the_check_page_under_its_own_title(tmp_path: Path) -> None:
    plain = run_cli(["replay", VIOLATIONS])
    code, out, err = run_cli(["replay", VIOLATIONS, "--html", str(tmp_path / "r.html")])
    assert (code, out, err) == plain and code == 1
    run_cli(["check", VIOLATIONS, "--html", str(tmp_path / "c.html")])
    replayed = (tmp_path / "r.html").read_text(encoding="utf-8")
    checked = (tmp_path / "c.html").read_text(encoding="utf-8")
    assert "acp-model replay: tests/data/mon_violations.ndjson" in replayed
    assert replayed.replace("acp-model replay:", "acp-model check:") == checked


def test_replay_html_refuses_a_folder_before_any_work(tmp_path: Path) -> None:
    code, out, err = run_cli(["replay", VIOLATIONS, "--html", str(tmp_path)])
    assert code == 2 and out == "" and err == f"acp-model replay: {tmp_path}: is a folder, not a file\n"


def test_explore_writes_a_page_beside_each_counterexample(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, stdout, err = run_cli(
        [
            "explore",
            "--mode",
            "exhaustive",
            *TINY,
            "--fault",
            "cancel-as-end-turn",
            "--json",
            "--out",
            str(out),
        ]
    )
    assert code == 1, err
    (entry,) = json.loads(stdout)["findings"]
    (cex,) = entry["counterexamples"]
    assert entry["rule"] == "TRANS-04" and cex["page"] == str(out / "exhaustive-TRANS-04.html")
    page = Path(cex["page"]).read_text(encoding="utf-8")
    assert "acp-model explore: TRANS-04 (exhaustive" in page
    assert "found TRANS-04 (monitor)" in page
    lines = Path(cex["transcript"]).read_text(encoding="utf-8").splitlines()
    wire = [int(n) for n in re.findall(r'data-rule="TRANS-04" data-line="(\d+)"', page)]
    assert wire and all(1 <= n <= len(lines) for n in wire)
    assert '"stopReason":"end_turn"' in lines[wire[0] - 1]  # the finding sits at the faulty idle
    assert 'data-rule="TRANS-04" data-line=""' in page  # and the explorer's own, at the end
    assert "off the wire: client." in page  # the client's steps before the Agent received them
    assert page.count('<div class="row msg"') == len(lines)


def test_mutants_write_a_page_beside_each_shortest_run(tmp_path: Path) -> None:
    code, _, err = run_cli(
        ["mutants", "--only", "cancel-as-end-turn", "--walks", "2", "--steps", "30", "--out", str(tmp_path)]
    )
    assert code == 0, err
    page = (tmp_path / "cancel-as-end-turn.html").read_text(encoding="utf-8")
    lines = (tmp_path / "cancel-as-end-turn.ndjson").read_text(encoding="utf-8").splitlines()
    assert "intended rule TRANS-04: caught" in page
    (line,) = [int(n) for n in re.findall(r'data-rule="TRANS-04" data-line="(\d+)"', page)]
    assert '"stopReason":"end_turn"' in lines[line - 1]
    assert 'data-rule="TRANS-04"' in _row(page, line)


# -- the spec report -------------------------------------------------------------------------------


def _folder(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _pages_again(files: dict[str, bytes]) -> dict[str, bytes]:
    from diagrams.html.report import report_pages

    report = json.loads(files["report.json"])
    return report_pages(report, files["index.md"].decode("utf-8"), files)


def test_spec_report_writes_index_html_and_a_page_per_witness(tmp_path: Path) -> None:
    from diagrams.spec_report import Options, build
    from tests.test_spec_report import TINY

    build(Options(tmp_path, **TINY), lambda _: None)  # type: ignore[arg-type]
    files = _folder(tmp_path)
    witnesses = [rel for rel in files if rel.endswith(".breaking.ndjson")]
    assert witnesses  # REJ-01 is not decidable at this bound
    for rel in witnesses:
        page = files[rel.replace(".breaking.ndjson", ".html")].decode()
        assert page.count('<div class="row msg"') == len(files[rel].splitlines())
        assert "hidden step (breaking)" in page or "hidden step (conforming)" in page
    index = files["index.html"].decode()
    for heading in ("Summary", "Undecidable and partly decidable rules", "Contradictions"):
        assert f">{heading}</h2>" in index
    assert '<h3 id="rej-01-' in index
    for target in re.findall(r'(?:href|src)="([^"#][^"]*)"', index):
        assert target in files, target  # every link and picture is a file of the folder
    assert any(t.endswith(".html") for t in re.findall(r'href="([^"]*)"', index))
    assert _pages_again(files) == {rel: files[rel] for rel in files if rel.endswith(".html")}


@pytest.mark.needs_shared
def test_the_committed_spec_report_pages_are_current() -> None:
    """docs/spec-report's HTML files are what its report.json, index.md and transcripts make
    (made again by the deep test's full run; here from the committed files alone). The pages
    embed the spec's sentences, so without ../shared they would differ: skipped, saying why."""
    from properties.shared import default_spec

    if not default_spec().is_file():
        pytest.skip(f"spec not found at {default_spec()} (../shared is absent: set ACP_MODEL_SHARED)")
    committed = REPO / "docs" / "spec-report"
    files = _folder(committed)
    assert _pages_again(files) == {rel: files[rel] for rel in files if rel.endswith(".html")}


def test_markdown_subset_as_html() -> None:
    from diagrams.html.markdown import to_html

    text = to_html(
        "## A *b* & `<c>`\n\npara **one**\nline [two](x.ndjson) ![pic](p.png)\n\n"
        "| a | n |\n|---|---:|\n| <x> | 3 |\n\n- item `i`\n- [l](#y)\n",
        lambda target: " (extra)" if target.endswith(".ndjson") else "",
    )
    assert '<h2 id="a-b--c">A <em>b</em> &amp; <code>&lt;c&gt;</code></h2>' in text
    assert (
        '<p>para <strong>one</strong> line <a href="x.ndjson">two</a> (extra) <img alt="pic" src="p.png"></p>'
        in text
    )
    assert '<th>a</th><th class="r">n</th>' in text and '<td>&lt;x&gt;</td><td class="r">3</td>' in text
    assert "<li>item <code>i</code></li>" in text and '<li><a href="#y">l</a></li>' in text
