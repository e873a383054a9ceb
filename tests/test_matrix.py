"""The readings matrix (simulator/analysis/matrix.py, ``acp-model explore --readings``): its rows, its
determinism across runs and job counts, its findings with their counterexample files, and its
one-line usage errors. The fast tests explore one small slice with a few thousand states at
most; the whole matrix at the default slices is a deep test."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from properties.readings import BY_NAME, DEFAULTS, READINGS, ReadingError
from simulator.analysis.matrix import cells, readings_matrix
from simulator.explore.run import Options
from tests.explored import computed_once

TINY = ["--mode", "exhaustive", "--slice", "cancels", "--max-states", "400", "--quiet"]
"""One small slice, capped: each exploration takes a fraction of a second."""


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _without_seconds(data: dict[str, Any]) -> dict[str, Any]:
    data = dict(data)
    data.pop("seconds")
    data["matrix"] = [{k: v for k, v in row.items() if k != "seconds"} for row in data["matrix"]]
    return data


def test_all_is_every_alternative_against_the_defaults_of_the_others() -> None:
    rows = cells(("all",))
    assert [(r, a) for r, a, _ in rows] == [(r.name, a) for r in READINGS for a in r.alternative_names()]
    for reading, alt, choice in rows:
        expected = () if alt == DEFAULTS[reading] else ((reading, alt),)
        assert choice == expected


def test_named_readings_give_the_product_of_their_alternatives() -> None:
    names = ("prompt-ahead-of-held", "cancelled-invalid-prompt")
    rows = cells(names)
    n = len(BY_NAME[names[0]].alternatives) * len(BY_NAME[names[1]].alternatives)
    assert len(rows) == n == len({c for _, _, c in rows})
    # the order they were named in (issue 35: the columns keep the command line's order)
    assert {r for r, _, _ in rows} == {"prompt-ahead-of-held,cancelled-invalid-prompt"}
    assert ("prompt-ahead-of-held,cancelled-invalid-prompt", "receipt-order,invalid") in [
        (r, a) for r, a, _ in rows
    ]
    assert {c for _, _, c in cells(names[::-1])} == {c for _, _, c in rows}  # the same cells
    with pytest.raises(ReadingError, match="nope"):
        cells(("nope",))


def test_the_matrix_shows_which_alternative_makes_a_rule_break(tmp_path: Path) -> None:
    """Under a seeded bug that ends a cancelled turn with end_turn, only the on-receipt reading
    of a cancellation calls that a breach (TRANS-04); the row names its shortest counterexample."""
    opts = Options(
        mode="exhaustive",
        slices=("cancels",),
        max_states=2000,
        faults=frozenset({"cancel-as-end-turn"}),
        out=str(tmp_path / "m"),
    )
    matrix = readings_matrix(("cancel-takes-effect",), opts)
    by_alt = {r.alternative: r for r in matrix.rows}
    assert set(by_alt) == {"on-receipt", "when-acted"}
    assert [f.rule for f in by_alt["on-receipt"].outcome.findings] == ["TRANS-04"]
    assert by_alt["when-acted"].outcome.findings == ()
    cex = by_alt["on-receipt"].outcome.findings[0].counterexample
    assert cex is not None and Path(cex).is_file() and "on-receipt" not in cex  # the defaults' folder
    assert Path(cex).parent.name == "defaults"
    assert all(r.outcome.states > 0 for r in matrix.rows)
    data = matrix.to_json()
    assert data["contradicting"] == [
        {"reading": "cancel-takes-effect", "alternative": "on-receipt", "rules": ["TRANS-04"]}
    ]
    text = matrix.to_text()
    assert "on-receipt (default)" in text and "TRANS-04 in " in text and cex in text


def test_the_json_is_deterministic_across_runs_and_job_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "m")
    argv = ["explore", "--readings", "cancel-takes-effect,patch-after-idle", *TINY, "--json", "--out", out]
    runs = [_run([*argv, "--jobs", jobs], capsys) for jobs in ("1", "1", "2")]
    datas = [_without_seconds(json.loads(o)) for _, o, _ in runs]
    assert datas[0] == datas[1] == datas[2]
    # the command line's order: cancel-takes-effect, then patch-after-idle
    assert [r["alternative"] for r in datas[0]["matrix"]] == [
        "on-receipt,ended-work", "on-receipt,patch-in-place",
        "when-acted,ended-work", "when-acted,patch-in-place",
    ]  # fmt: skip
    assert datas[0]["variant"] is None
    assert all(
        set(r) >= {"reading", "alternative", "findings", "states", "seconds"}
        for r in json.loads(runs[0][1])["matrix"]
    )
    assert datas[0]["explorations"] == 4


def test_text_output_is_a_table_of_every_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(
        [
            "explore",
            "--readings",
            "repeated-idle-new-stop-reason",
            *TINY,
            "--jobs",
            "1",
            "--out",
            str(tmp_path),
        ],
        capsys,
    )
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith(
        "readings matrix: repeated-idle-new-stop-reason; mode exhaustive, seed 0; 2 rows"
    )
    assert lines[2].split() == ["reading", "alternative", "findings", "states", "seconds"]  # no steps
    assert lines[3].split()[:3] == ["repeated-idle-new-stop-reason", "snapshot", "(default)"]
    assert lines[4].split()[:3] == ["repeated-idle-new-stop-reason", "completion", "none"]


@pytest.mark.parametrize(
    "extra, words",
    [
        (["--readings", "nope"], "nope"),
        (["--readings", "all,patch-after-idle"], "--readings"),
        (["--readings", "all", "--reading", "patch-after-idle=patch-in-place"], "--reading"),
        (["--readings", "all", "--jobs", "0"], "--jobs"),
        (["--readings", "patch-after-idle,patch-after-idle"], "twice"),
    ],
)
def test_bad_matrix_options_are_one_line(
    extra: list[str], words: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(["explore", *extra, "--out", str(tmp_path)], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and words in err


@pytest.mark.deep
def test_the_whole_matrix_at_the_default_slices(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["explore", "--readings", "all", "--quiet", "--json", "--out", str(tmp_path)], capsys)
    data = json.loads(out)
    rows = data["matrix"]
    assert [(r["reading"], r["alternative"]) for r in rows] == [
        (r.name, a) for r in READINGS for a in r.alternative_names()
    ]
    assert data["explorations"] == 1 + sum(len(r.alternatives) - 1 for r in READINGS)
    defaults = [r for r in rows if r["default"]]
    assert (
        len(
            {
                json.dumps({k: v for k, v in r.items() if k not in ("reading", "alternative")})
                for r in defaults
            }
        )
        == 1
    )
    assert defaults[0]["findings"] == []  # the spec as the defaults read it holds together
    assert all(r["states"] > 0 for r in rows)
    for r in rows:
        for f in r["findings"]:
            assert Path(f["counterexample"]).is_file()
    assert code == (1 if any(r["findings"] for r in rows) else 0)


def test_the_header_names_the_variant_and_each_mode_shows_its_own_measure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 35: under --drop the header said nothing of the variant; the exhaustive matrix had a
    steps column of zeros (and the random one a states column of zeros). The JSON is that of the
    text's matrix (computed once: ``computed_once``)."""
    from simulator.analysis import matrix

    def same_matrix(names: tuple[str, ...], opts: Options, *_: Any) -> str:
        return repr((names, replace(opts, pool=None)))

    made = computed_once(monkeypatch, matrix, "readings_matrix", same_matrix)
    argv = ["explore", "--readings", "repeated-idle-new-stop-reason", *TINY, "--jobs", "1",
            "--drop", "TRANS-04", "--out", str(tmp_path)]  # fmt: skip
    _, out, _ = _run(argv, capsys)
    first = out.splitlines()[0]
    assert ", variant drop: rules dropped on the command line (dropped: TRANS-04); 2 rows" in first
    _, out, _ = _run([*argv, "--json"], capsys)
    assert json.loads(out)["variant"]["drop"] == ["TRANS-04"]
    assert made[0] == made[1]
    argv = ["explore", "--readings", "repeated-idle-new-stop-reason", "--mode", "random", "--walks", "3",
            "--examples", "1", "--steps", "10", "--jobs", "1", "--out", str(tmp_path / "r")]  # fmt: skip
    _, out, _ = _run(argv, capsys)
    assert out.splitlines()[2].split() == ["reading", "alternative", "findings", "steps", "seconds"]
