"""Seeded bugs: every faulty agent and client is caught by the rule it was written to break,
the unmodified simulator gives no finding, and the shortest transcripts form a corpus that
``acp-model check`` judges exactly as the simulator's monitors did."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.main import main
from properties.catalogue import RESTATED, RULES, RULES_BY_ID
from properties.clientview import CLIENT_FAULTS
from properties.engine import MonitorSet
from properties.shared import ENV
from simulator.analysis.mutants import MUTANTS
from simulator.peers.agent import AGENT_FAULTS
from simulator.peers.client import CLIENT_SIDE_FAULTS
from simulator.peers.config import Config
from simulator.peers.schedulers import random_walk

NOT_A_MUTANT: dict[str, str] = {}
"""Faults that are no mutant of their own, and why (none: every seeded bug is run)."""


FAST_WALKS = 25
"""Walks per mutant in the default suite: enough to catch every mutant (the scenarios catch 33 of
49 alone); the command's default (``simulator.peers.config.MUTANT_WALKS``, 200) runs in the deep test."""


def _mutants(out: Path, *extra: str) -> tuple[list[dict[str, object]], Path, int]:
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["mutants", "--json", "--out", str(out), *extra])
    return json.loads(buf.getvalue()), out, code


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict[str, object]], Path, int]:
    return _mutants(tmp_path_factory.mktemp("corpus"), "--walks", str(FAST_WALKS))


Report = tuple[list[dict[str, object]], Path, int]


def test_every_mutant_is_caught_by_its_intended_rule(report: Report) -> None:
    verdicts, _, code = report
    missed = [v["name"] for v in verdicts if not v["caught"]]
    assert missed == []
    assert code == 0
    for v in verdicts:
        assert v["intended_rule"] in v["caught_by"]
        assert isinstance(v["shortest_length"], int) and v["shortest_length"] > 0
        assert {"name", "intended_rule", "caught", "caught_by", "shortest_length"} <= set(v)


@pytest.mark.deep
def test_every_mutant_is_caught_with_the_default_walks(tmp_path: Path) -> None:
    verdicts, _, code = _mutants(tmp_path)
    assert [v["name"] for v in verdicts if not v["caught"]] == []
    assert code == 0


def test_intended_rules_exist_and_every_fault_is_a_mutant() -> None:
    for m in MUTANTS:
        assert m.intended_rule in RULES_BY_ID, m.name
    used = set().union(*(m.switched_on for m in MUTANTS))
    every = set(AGENT_FAULTS) | set(CLIENT_FAULTS) | set(CLIENT_SIDE_FAULTS)
    assert every - used == set(NOT_A_MUTANT)
    assert len({m.name for m in MUTANTS}) == len(MUTANTS)


READING_ONLY: set[str] = set()
"""Rules a monitor reports only under a reading that is not the default, so that no seeded bug
breaks them (none: ACTIVE-02's bug inserts a held prompt ahead of an older one, refused by the
model's guard under every reading)."""


def test_every_monitor_checked_must_has_a_seeded_bug() -> None:
    group_of = {rule: set(group) for group in RESTATED.values() for rule in group}
    intended = {m.intended_rule for m in MUTANTS}
    uncovered = [
        r.id
        for r in RULES
        if r.level in ("MUST", "MUST NOT")
        and r.check == "monitor"
        and not (group_of.get(r.id, {r.id}) & intended)
        and r.id not in READING_ONLY
    ]
    assert uncovered == []


def test_unmodified_simulator_gives_no_finding_over_500_seeded_runs() -> None:
    for transport in ("fifo", "unordered"):
        cfg = Config(transport=transport)
        for seed in range(250):
            run = random_walk(seed, 60, cfg, monitors=MonitorSet(from_start=True))
            assert [f for f in run.findings if f.kind == "rule"] == [], (transport, seed)


def test_corpus_gives_exactly_the_expected_rules(
    report: tuple[list[dict[str, object]], Path, int],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(ENV, raising=False)  # set, it makes check validate against the schema
    verdicts, out, _ = report
    checked = 0
    for v in verdicts:
        path = out / f"{v['name']}.ndjson"
        assert path.exists(), v["name"]
        capsys.readouterr()
        code = main(["check", "--json", str(path)])
        data = json.loads(capsys.readouterr().out)
        findings = data["files"][0]["findings"]
        # The end of a transcript is where the simulated run was quiescent: an "eventually"
        # breach there is reported by check as open at end of input.
        found = {f["rule"] for f in findings if f["kind"] in ("rule", "open")}
        assert found == set(v["shortest_wire_rules"]), v["name"]  # type: ignore[arg-type]
        if v["intended_rule"] in found:
            checked += 1
        errors = [f for f in findings if f["kind"] == "rule" and f["severity"] == "error"]
        assert code == (1 if errors else 0), v["name"]
    wire_caught = [v for v in verdicts if v["intended_rule"] in v["shortest_wire_rules"]]  # type: ignore[operator]
    assert checked == len(wire_caught) > 40


def test_every_rule_has_at_most_one_breaking_mutant_and_breaking_finds_it() -> None:
    from simulator.analysis.mutants import MUTANTS, breaking

    assert len({m.intended_rule for m in MUTANTS}) == len(MUTANTS)
    for m in MUTANTS:
        assert breaking(m.intended_rule) is m
    assert breaking("NO-SUCH-RULE") is None


def test_mutants_says_which_agent_bug_driving_cannot_find(capsys: pytest.CaptureFixture[str]) -> None:
    """``held-not-withdrawn`` never shows on the wire: the JSON says ``drivable: false`` and why,
    the text prints the reason; an agent bug that shows is ``drivable: true``; a client bug has
    neither field (driving tests Agents)."""
    from simulator.analysis.mutants import BY_NAME, Verdict

    held = Verdict(BY_NAME["held-not-withdrawn"]).to_json()
    assert held["drivable"] is False and "a proxy cannot see when a prompt was inserted" in held["off_wire"]
    shown = Verdict(BY_NAME["notice-empty-title"]).to_json()
    assert shown["drivable"] is True and "off_wire" not in shown
    assert "drivable" not in Verdict(BY_NAME["empty-prompt"]).to_json()
    main(["mutants", "--only", "held-not-withdrawn", "--walks", "0", "--quiet"])
    text = capsys.readouterr().out
    said = f"held-not-withdrawn: not detectable by `acp-model drive`: {held['off_wire']}"
    assert " ".join(said.split()) in " ".join(text.split())  # wrapped within 100 columns
    assert text.count("not detectable by") == 1


def test_every_mutant_crosses_to_a_worker_process_and_back() -> None:
    """A verdict computed on a worker (``mutants --jobs 2``) carries its mutant back: each one
    pickles (by name: some seeded bugs hold functions, which pickle cannot carry) to itself."""
    import pickle

    for m in MUTANTS:
        assert pickle.loads(pickle.dumps(m)) is m, m.name
