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
