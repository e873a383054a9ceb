"""Wire decidability: breach markers, verdicts, witnesses, the decidability command and the
committed figures that ``acp-model rules --json`` reads."""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path

import pytest

from cli.main import main
from properties.catalogue import RULES
from properties.catalogue_text import DATA, decidability_of
from simulator.analysis import decidability as dec
from simulator.analysis.mutants import standing_for
from simulator.peers.config import DEFAULT, Config
from simulator.peers.scenarios import SCENARIOS
from simulator.peers.schedulers import random_walk, scripted
from simulator.peers.wire import to_ndjson
from simulator.peers.world import Event, Hidden, Line
from simulator.workers import Workers

SMALL = dec.Bound(walks=20, steps=40, twin_nodes=2000)
BASIC = next(s for s in SCENARIOS if s.name == "basic_turn")


def test_a_fault_marks_the_move_it_changes_and_only_that() -> None:
    run = scripted(BASIC.script, BASIC.cfg, frozenset({"answer-twice"}))
    assert run.world.hidden == [Hidden(7, "agent", "INTRO-02")]
    # the marker sits before the two responses the faulty answer sent
    responses = [i for i, (s, m) in enumerate(run.world.transcript) if m.get("id") == 1 and "result" in m]
    assert responses == [7, 8]
    assert scripted(BASIC.script, BASIC.cfg).world.hidden == []


def test_conforming_walks_leave_no_marker() -> None:
    for seed in range(20):
        assert random_walk(seed, 60, DEFAULT).world.hidden == []


def test_an_omission_is_marked_when_the_world_is_quiescent() -> None:
    # seed 1: a walk whose prompt is inserted (seed 0's is now withdrawn by a $/cancel_request
    # sent while a resume is answered, and nothing is omitted)
    run = random_walk(1, 40, DEFAULT, frozenset({"never-answer-inserted"}))
    rules = [h.rule for h in run.world.hidden]
    assert run.stop == "quiescent" and "ACC-01" in rules
    assert all(h.position == len(run.world.transcript) for h in run.world.hidden)


def test_markers_are_part_of_the_state_key() -> None:
    runs = [random_walk(seed, 30, DEFAULT, frozenset({"answer-twice"})) for seed in range(10)]
    marked = [r for r in runs if r.world.agent.marks]
    assert marked and all(r.world.agent.marks == ("INTRO-02",) for r in marked)
    plain = next(r for r in runs if not r.world.agent.marks)
    assert marked[0].world.agent.snapshot() != plain.world.agent.snapshot()
    assert ("INTRO-02",) in marked[0].world.agent.snapshot()


def test_a_visible_rule_is_decidable() -> None:
    v = dec.decide("INTRO-02", SMALL)
    assert v.decidable == "yes" and v.fraction == 1.0
    assert v.breaking > 5 and v.flagged == v.breaking and v.witness is None


def test_a_rule_without_a_seeded_bug_is_unknown_and_says_why() -> None:
    v = dec.decide("SDM-05", SMALL)
    assert (v.decidable, v.fraction, v.breaking) == ("unknown", None, 0)
    assert "no behaviour of the simulated peers breaks it" in v.note


def by_side(lines: list[tuple[str, object]]) -> tuple[list[object], list[object]]:
    """A transcript's Agent messages and its Client messages, each in order: what a twin keeps
    (``dec.twin``: the same messages up to the Client's messages in flight)."""
    return [m for side, m in lines if side == "agent"], [m for side, m in lines if side == "client"]


@pytest.mark.parametrize("rule", ["REJ-01", "ACC-01"])
def test_a_witness_for_no_has_the_same_messages_and_the_checker_accepts_both(
    rule: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    v = dec.decide(rule, SMALL)
    assert v.decidable == "no" and v.breaking > 0 and v.flagged == 0
    w = v.witness
    assert w is not None and w.twin_found
    conforming = dec.conforming_transcript(w)
    assert by_side(conforming) == by_side(w.breaking.transcript)
    assert all(0 <= p <= len(conforming) for p, _, _ in w.differing)
    assert any(what == f"agent breaks {rule}" for _, run, what in w.differing if run == "breaking")
    for name, lines in (("breaking", w.breaking.transcript), ("conforming", conforming)):
        path = tmp_path / f"{name}.ndjson"
        path.write_text(to_ndjson(lines), encoding="utf-8")
        assert main(["check", str(path)]) == 0, capsys.readouterr().out


def test_decidability_command_json_and_witness_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["decidability", "--rule", "REJ-01", "--rule", "INTRO-02", "--walks", "10", "--json"]
    assert main([*args, "--out", str(tmp_path)]) == 0
    data = json.loads(capsys.readouterr().out)
    by_rule = {e["rule"]: e for e in data["rules"]}
    assert by_rule["INTRO-02"]["decidable"] == "yes" and by_rule["INTRO-02"]["witness"] is None
    w = by_rule["REJ-01"]["witness"]
    assert by_rule["REJ-01"]["decidable"] == "no"
    breaking, conforming = (
        [
            (json.loads(line)["from"], json.loads(line)["message"])
            for line in Path(w[name]).read_text().splitlines()
        ]
        for name in ("breaking", "conforming")
    )
    assert by_side(breaking) == by_side(conforming)
    assert "agent breaks REJ-01" in Path(w["diagram"]).read_text()
    assert set(by_rule["REJ-01"]) >= {"rule", "decidable", "fraction", "bound", "witness"}


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--rule", "NOPE-01"], "--rule NOPE-01: not in the rule catalogue"),
        (["--walks", "-1"], "--walks -1: must be >= 0"),
        (["--reading", "nope=x"], "unknown reading"),
    ],
)
def test_decidability_bad_options_are_one_line_errors(
    args: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["decidability", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err


def test_rules_json_gains_decidability_for_every_rule_with_a_check(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["rules", "--json"]) == 0
    entries = {e["id"]: e for e in json.loads(capsys.readouterr().out)}
    for rule in RULES:
        entry = entries[rule.id]
        if rule.check in dec.CHECKED:
            assert entry["decidable"] in dec.DECIDABLE and entry["decidable_bound"]
        else:
            assert "decidable" not in entry
    assert entries["INTRO-02"]["decidable"] == "yes"


def test_committed_figures_match_a_fresh_sample_of_one_rule() -> None:
    """The fast drift check: one rule sampled at the default bound, as committed."""
    committed = json.loads(DATA.read_text(encoding="utf-8"))
    assert committed["bound"] == dec.DEFAULT_BOUND.to_json()
    entry = next(e for e in committed["rules"] if e["rule"] == "REJ-01")
    assert dec.decide("REJ-01").to_json() == entry
    assert set(decidability_of()) == {r.id for r in dec.rules_with_check()}


@pytest.mark.deep
def test_committed_figures_are_current() -> None:
    """properties/decidability.json is `acp-model decidability --json` at the default bound
    (regenerate with that command when this fails)."""
    committed = json.loads(DATA.read_text(encoding="utf-8"))
    verdicts, complete = dec.decide_all(r.id for r in dec.rules_with_check())
    assert complete
    assert [v.to_json() for v in verdicts] == committed["rules"]


def test_the_exhaustive_part_keeps_breaking_runs_that_replay() -> None:
    """The explorer's breaking behaviours: each replays to a world whose hidden steps name the
    rule; the same search without the seeded bug finds none; the bound says what was used."""
    from simulator.analysis import decidability_exhaustive as ex
    from simulator.analysis.mutants import breaking

    mutant = breaking("REJ-01")
    assert mutant is not None
    found = list(ex.runs("REJ-01", mutant.switched_on, 300))
    assert found
    for source, cfg, events, world in found:
        assert source.startswith("exhaustive ")
        again, _ = ex.replay(events, cfg, mutant.switched_on)
        assert any(h.rule == "REJ-01" for h in again.hidden)
        assert again.transcript == world.transcript
    assert not list(ex.runs("REJ-01", frozenset(), 300))
    bound = dec.Bound(exhaustive_states=300).to_json()["exhaustive"]
    assert bound["states_per_slice"] == 300 and "cancels" in bound["slices"]
    assert dec.Bound(exhaustive_states=0).to_json()["exhaustive"]["slices"] == []


# 20 walks meet an unknown state that hides TRANS-04 (partly): 15 keep it a plain yes
NO_TWIN_SEARCH = dec.Bound(twin_nodes=0)
"""The default sample (scenarios, walks, exhaustive part) with a twin search that gives up at
once: for tests that assert a sample's counts and notes, not its witness."""

TINY_BY_READING = dec.Bound(walks=15, steps=40, twin_nodes=2000, exhaustive_states=200)


def test_a_verdict_that_differs_under_a_reading_is_listed_with_its_witness() -> None:
    """TRANS-04 (a cancellation confirmed with end_turn) is seen on the wire when cancellation
    takes effect on receipt, and not when it takes effect once acted on; patch-after-idle does not
    change it, so only the first alternative is listed."""
    alts = [("cancel-takes-effect", "when-acted"), ("patch-after-idle", "patch-in-place")]
    (v,), complete = dec.decide_all(["TRANS-04"], TINY_BY_READING, by_reading=alts)
    assert complete and v.decidable == "yes"
    assert v.by_reading is not None and len(v.by_reading) == 1
    r = v.by_reading[0]
    assert (r.reading, r.alternative, r.verdict.decidable) == ("cancel-takes-effect", "when-acted", "no")
    assert r.verdict.witness is not None
    entry = v.to_json()
    assert set(entry["by_reading"][0]) == {"reading", "alternative", "decidable", "fraction", "witness"}
    assert entry["by_reading"][0]["fraction"] == 0.0
    plain = dec.decide_all(["TRANS-04"], TINY_BY_READING)[0][0].to_json()
    assert "by_reading" not in plain  # the existing keys only, without --readings


def test_alternatives_skip_the_one_in_force() -> None:
    alts = dec.alternatives(("cancel-takes-effect",), {"cancel-takes-effect": "when-acted"})
    assert alts == [("cancel-takes-effect", "on-receipt")]
    every = dec.alternatives(("all",))
    assert ("cancelled-invalid-prompt", "either") in every and (
        "cancelled-invalid-prompt",
        "cancelled",
    ) not in every


def test_decidability_command_by_reading_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["decidability", "--rule", "TRANS-04", "--walks", "20", "--steps", "40", "--twin-nodes", "2000"]
    args += ["--exhaustive-states", "200", "--readings", "cancel-takes-effect", "--jobs", "1", "--json"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["by_reading"] == [{"reading": "cancel-takes-effect", "alternative": "when-acted"}]
    assert [e["decidable"] for e in data["rules"][0]["by_reading"]] == ["no"]
    assert main(["decidability", "--readings", "nosuch"]) == 2
    assert "--readings: unknown reading 'nosuch'" in capsys.readouterr().err


@pytest.mark.deep
def test_verdicts_are_the_same_for_any_jobs() -> None:
    rules = ["TRANS-04", "DONE-03", "REJ-01", "INTRO-02"]
    alts = [("cancel-takes-effect", "when-acted"), ("patch-after-idle", "patch-in-place")]
    one = dec.decide_all(rules, TINY_BY_READING, by_reading=alts, pool=Workers(1))[0]
    with Workers(2) as pool:
        two = dec.decide_all(rules, TINY_BY_READING, by_reading=alts, pool=pool)[0]
    assert [v.to_json() for v in one] == [v.to_json() for v in two]


def test_rules_standing_for_one_sample_are_each_named() -> None:
    """OUT-02, TOOL-03 and WAIT-01 have no seeded bug of their own: they restate FG-04's
    obligation and are judged by its bug with every ID of the group; ``decide_all`` gives each
    the verdict ``decide`` gives it alone (its own ID on the verdict and the witness)."""
    group = ["FG-04", "OUT-02", "TOOL-03", "WAIT-01"]
    alone = [dec.decide(r, TINY_BY_READING).to_json() for r in group]
    verdicts, complete = dec.decide_all(group, TINY_BY_READING)
    assert complete and [v.to_json() for v in verdicts] == alone
    assert [v.witness.rule for v in verdicts if v.witness is not None] == group


def test_a_sample_compared_with_partly_ends_once_it_is_partly() -> None:
    """Compared with a ``partly`` verdict, a sample can only agree once it holds a flagged and an
    accepted breach: it ends there (fewer runs than the whole sample, the verdict marked
    stopped); compared with anything else it is taken whole, as without a comparison."""
    whole = dec.decide("ACC-03", TINY_BY_READING)
    assert whole.decidable == "partly" and not whole.stopped
    early = dec.decide("ACC-03", TINY_BY_READING, same_as="partly")
    assert early.stopped and early.decidable == "partly" and early.witness is None
    assert 0 < early.flagged < early.breaking < whole.breaking
    other = dec.decide("ACC-03", TINY_BY_READING, same_as="no")
    assert not other.stopped and other.to_json() == whole.to_json()


def test_a_complete_transcript_proves_an_obligation_never_met() -> None:
    """A compaction that never ends: every breaking run's transcript is accepted by ``check``
    (the input may have been cut short) and flagged by ``check --complete`` (the runs ended
    quiescent, so their transcripts are complete); the note says so instead of a gap.

    The default sample, without the search for a twin (``NO_TWIN_SEARCH``): the witness is not
    what this test asserts, and neither the counts nor the note depend on it (``decide`` writes
    this note whatever the twin search finds); that search took nine tenths of the time."""
    v = dec.decide("COMPACT-05", NO_TWIN_SEARCH)
    assert v.breaking > 0 and v.flagged == 0
    assert v.flagged_complete == v.breaking
    assert "a complete transcript proves them" in v.note


def test_a_scenario_run_to_the_end_of_its_script_is_a_complete_transcript() -> None:
    """A scenario's session could go on (the Client may still prompt, the Agent send notices),
    but its script ran to its end with nothing in flight: the transcript is the whole session as
    written, judged as ``check --complete`` judges it. A cancelled turn whose tool call is left
    open is then proven by the end of input, not reported as a gap in the checker."""
    # no twin search (twin_nodes=0): the counts and the note asserted do not depend on the
    # witness (that search took nearly all the time)
    scenarios_only = dec.Bound(walks=0, exhaustive_states=0, twin_nodes=0)
    mutant, same = standing_for("CANCEL-17")
    assert mutant is not None
    runs, _ = dec.breaking_runs("CANCEL-17", mutant, scenarios_only)
    assert [r.source for r in runs] == ["scenario cancellation_with_held_prompt"]
    (run,) = runs
    world = scripted(
        next(s for s in SCENARIOS if s.name == "cancellation_with_held_prompt").script,
        run.cfg,
        mutant.switched_on,
        strict=False,
    ).world
    assert not world.quiescent() and run.quiescent
    assert not same & dec.checker_rules(run.transcript)
    assert same & dec.checker_rules(run.transcript, complete=True)
    v = dec.decide("CANCEL-17", scenarios_only)
    assert v.accepted == v.flagged_complete == 1
    assert "a complete transcript proves them" in v.note


def test_a_twin_is_searched_again_under_every_feature(monkeypatch: pytest.MonkeyPatch) -> None:
    """A conforming run that fails without an error field (feature bare_error) is no twin under
    a configuration without it; the second search, under every feature, finds it.

    The witness's own two searches are watched (``searches``) rather than the first made once
    more here: that search visits its whole space (under the 5,000 states of the bound), which
    took most of this test's time, so its answer is the same whatever the order."""
    searches: list[tuple[Config, bool]] = []
    search = dec.twin

    def watched(
        target: list[Line], cfg: Config, budget: int, prefer: Collection[tuple[int, str]] = ()
    ) -> list[Event] | None:
        found = search(target, cfg, budget, prefer)
        searches.append((cfg, found is not None))
        return found

    monkeypatch.setattr(dec, "twin", watched)
    cfg = DEFAULT.with_(features=DEFAULT.features | {"bare_error"})
    turn: list[Event | str] = [
        ("client", "prompt", None),
        "deliver",
        ("agent", "insert", 1),
        ("agent", "start", None),
        ("agent", "user_message", 1),
        ("agent", "answer", 1),
        ("agent", "end_bare_error", None),
        "deliver",
    ]
    events = scripted(turn, cfg).events
    target = scripted(events, cfg).world.transcript
    narrow = DEFAULT
    assert "bare_error" in dec.twin_config(narrow).features
    assert (
        dec.twin_config(narrow).features & dec.HANDSHAKE_FEATURES == narrow.features & dec.HANDSHAKE_FEATURES
    )
    run = dec.Run("made", narrow, events, list(target), [], False)
    w = dec.witness("FAIL-03", run, dec.Bound(twin_nodes=5000))
    assert searches == [(narrow, False), (dec.twin_config(narrow), True)]
    assert w.twin_found and w.conforming_cfg is not None
    assert dec.conforming_transcript(w) == list(target)


def test_the_twin_keeps_the_runs_choice_of_retry() -> None:
    """``retry`` changes how the Agent echoes every prompt (its own content, one chunk per block,
    instead of two chunks): the second search keeps the run's choice, or no twin of a run without
    it could send the same chunks (decidability's ACC-07 witness, seed 184)."""
    assert "retry" not in DEFAULT.features and "retry" not in dec.twin_config(DEFAULT).features
    wide = DEFAULT.with_(features=DEFAULT.features | {"retry"})
    assert "retry" in dec.twin_config(wide).features
    turn = [
        ("client", "prompt", None),
        "deliver",
        ("agent", "insert", 1),
        ("agent", "user_chunks", 1),
        "deliver",
    ]
    chunks = {
        cfg: [
            m["params"]["update"]["content"]["text"]
            for _, m in scripted(turn, cfg).world.transcript
            if m.get("method") == "session/update"
            and m["params"]["update"]["sessionUpdate"] == "user_message_chunk"
        ]
        for cfg in (DEFAULT, wide)
    }
    assert chunks[DEFAULT] == ["prompt ", "1"] and chunks[wide] != chunks[DEFAULT]
