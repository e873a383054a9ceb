"""Variants: loading and its one-line errors, dropped rules in the checker, rows changed in the
tables, and the shipped examples' comparisons (deterministic, each naming a difference)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from model.core import Instance, ProtocolViolation
from model.registry import BY_NAME
from properties.engine import MonitorSet
from properties.variants import VariantError, from_drops, load
from tests.explored import computed_once
from tests.wire_dsl import Line, answer, cancel, prompt, say, state, tool, user

REPO = Path(__file__).resolve().parent.parent
SHIPPED = sorted((REPO / "variants").glob("*.toml"))

TOOLS = {"prompts": 1, "tool_calls": 1, "permissions": 0, "background": 0, "outputs": 0, "cancels": 1,
         "tool_updates": 1, "hooks": 0, "capacity": 1, "features": ["cancel", "pause", "fail"]}  # fmt: skip
BACKGROUND = {"prompts": 1, "tool_calls": 0, "permissions": 0, "background": 1, "outputs": 0, "cancels": 0,
              "hooks": 0, "capacity": 1, "features": ["terminal"]}  # fmt: skip
STEERING = {"prompts": 2, "tool_calls": 0, "permissions": 0, "background": 0, "outputs": 0, "cancels": 0,
            "hooks": 0, "capacity": 2, "features": []}  # fmt: skip
"""Two prompts, the second received during the first one's work: whether it is inserted into that
work (steering) or waits for its idle."""
LISTED_AT_CANCEL = {"prompts": 1, "tool_calls": 0, "permissions": 0, "background": 1, "outputs": 0,
                    "cancels": 1, "hooks": 0, "capacity": 1, "features": ["terminal", "cancel"]}  # fmt: skip
"""A terminal that may be listed when a session/cancel arrives."""
SMALL_BOUNDS = {
    "no-background-list": BACKGROUND,
    "no-steering": STEERING,
    "cancel-stops-background": LISTED_AT_CANCEL,
}
"""Per shipped variant, the small exhaustive bounds its comparison runs at (default: TOOLS)."""
SAME_REACH = {"cancel-stops-background"}
"""Shipped variants whose comparison names no difference: cancel-stops-background changes which
moves the simulated Agent makes (a listed terminal exits before the idle confirming the cancel:
tests/test_between_rules.py), not the states and rows it reaches, since every snapshot removes a
finished item as that idle does under it (fd1b020, c449979); the comparison reports reach, not
counts."""


IDLE_OUTPUT = """title = "Output while idle, staying idle"
[[add_row]]
machine = "foreground"
trigger = "output"
source = "idle"
dest = "idle"
"""


def ndjson(tmp_path: Path, name: str, lines: list[Line]) -> str:
    path = tmp_path / name
    path.write_text("".join(json.dumps({"from": s, "message": m}) + "\n" for s, m in lines))
    return str(path)


def write(tmp_path: Path, text: str, name: str = "v.toml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def cancelled_with_end_turn(extra: list[Line] | None = None) -> list[Line]:
    """One turn whose cancellation is confirmed with end_turn (TRANS-04), and ``extra`` lines."""
    return [
        prompt(1),
        state("running"),
        user("u1"),
        say("a1"),
        answer(1, "u1"),
        cancel(),
        *(extra or []),
        state("idle", stop="end_turn"),
    ]


# -- loading ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_variant_loads_and_is_documented(path: Path) -> None:
    v = load(str(path))
    assert v.title and (v.drop or v.add_rows or v.remove_rows or v.between)
    readme = (REPO / "variants" / "README.md").read_text()
    assert f"{path.name}" in readme
    assert len(SHIPPED) >= 5


BAD: list[tuple[str, str, str]] = [
    ("malformed", 'title = "x"\ndrop = [', "not valid TOML"),
    ("unknown-key", 'title = "x"\ndrops = ["TRANS-04"]\n', "unknown key 'drops'"),
    ("no-title", 'drop = ["TRANS-04"]\n', "title: a non-empty string is required"),
    ("unknown-rule", 'title = "x"\ndrop = ["TRANS-99"]\n', "drop[0]: unknown rule 'TRANS-99'"),
    ("unknown-reading", 'title = "x"\n[readings]\nno-such = "a"\n', "readings.no-such: unknown reading"),
    ("unknown-alternative", 'title = "x"\n[readings]\ncancel-takes-effect = "never"\n',
     "readings.cancel-takes-effect: reading 'cancel-takes-effect' has no alternative 'never'"),
    ("unknown-machine", 'title = "x"\n[[remove_row]]\nmachine = "toolcall"\ntrigger = "run"\n'
     'source = "pending"\ndest = "in_progress"\n', "remove_row[0]: unknown machine 'toolcall'"),
    ("unknown-state", 'title = "x"\n[[add_row]]\nmachine = "tool_call"\ntrigger = "run"\n'
     'source = "done"\ndest = "in_progress"\n', "add_row[0]: source: tool_call has no state 'done'"),
    ("unknown-trigger", 'title = "x"\n[[add_row]]\nmachine = "tool_call"\ntrigger = "reopen"\n'
     'source = "completed"\ndest = "in_progress"\n', "trigger: tool_call has no trigger 'reopen'"),
    ("no-such-row", 'title = "x"\n[[remove_row]]\nmachine = "tool_call"\ntrigger = "run"\n'
     'source = "completed"\ndest = "in_progress"\n', "completed --run--> in_progress is not a row"),
    ("duplicate-row", 'title = "x"\n[[add_row]]\nmachine = "tool_call"\ntrigger = "run"\n'
     'source = "pending"\ndest = "in_progress"\n', "pending --run--> in_progress is already a row"),
    ("unreachable", 'title = "x"\n[[remove_row]]\nmachine = "prompt"\ntrigger = "hold"\n'
     'source = "received"\ndest = "held"\n', "does not hold together: prompt: unreachable states ['held']"),
    ("row-key", 'title = "x"\n[[add_row]]\nmachine = "tool_call"\ntrigger = "run"\nfrom = "pending"\n',
     "add_row[0]: unknown key 'from'"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "text", "needle"), BAD, ids=[b[0] for b in BAD])
def test_malformed_variant_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, needle: str
) -> None:
    path = write(tmp_path, text, f"{name}.toml")
    with pytest.raises(VariantError) as err:
        load(path)
    assert needle in str(err.value) and str(err.value).startswith(path)
    transcript = ndjson(tmp_path, "t.ndjson", cancelled_with_end_turn())
    assert main(["check", "--variant", path, transcript]) == 2
    out = capsys.readouterr()
    lines = out.err.strip().splitlines()
    assert out.out == "" and len(lines) == 1 and needle in lines[0] and path in lines[0]


def test_missing_file_and_unknown_drop_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    transcript = ndjson(tmp_path, "t.ndjson", cancelled_with_end_turn())
    assert main(["check", "--variant", str(tmp_path / "nope.toml"), transcript]) == 2
    assert main(["explore", "--drop", "NOPE-1", "--compare"]) == 2
    assert main(["explore", "--compare", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3
    assert "nope.toml: no such file" in err[0]
    assert "--drop NOPE-1: unknown rule 'NOPE-1'" in err[1]
    assert "--compare needs a variant" in err[2]


# -- the checker ----------------------------------------------------------------------------------------


def test_check_drop_sets_the_breach_aside(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    only = ndjson(tmp_path, "only.ndjson", cancelled_with_end_turn())
    assert main(["check", only]) == 1
    assert "TRANS-04" in capsys.readouterr().out
    assert main(["check", "--drop", "TRANS-04", only]) == 0
    text = capsys.readouterr().out
    assert "no findings" in text and "1 finding of dropped rules set aside (TRANS-04 1)" in text
    assert main(["check", "--drop", "TRANS-04", "--json", only]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["variant"]["drop"] == ["TRANS-04"] and body["variant"]["set_aside"] == {"TRANS-04": 1}
    assert body["files"][0]["findings"] == [] and body["files"][0]["set_aside"] == {"TRANS-04": 1}
    # another rule's finding still counts: a tool call reopened after it completed (BG-05)
    both = ndjson(
        tmp_path,
        "both.ndjson",
        cancelled_with_end_turn([tool("t1", "completed"), tool("t1", "in_progress")]),
    )
    assert main(["check", "--drop", "TRANS-04", "--json", both]) == 0  # BG-05 is a SHOULD NOT
    assert {f["rule"] for f in json.loads(capsys.readouterr().out)["files"][0]["findings"]} == {"BG-05"}
    assert main(["check", "--drop", "TRANS-04", "--fail-on", "should", "--json", both]) == 1
    body = json.loads(capsys.readouterr().out)
    assert {f["rule"] for f in body["files"][0]["findings"]} == {"BG-05"}
    assert body["files"][0]["set_aside"] == {"TRANS-04": 1}


def test_check_drop_counts_a_table_rules_breach_as_set_aside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rule a table states (BG-05: a final tool call reopened) is relaxed in the variant's
    tables, so its move is allowed; the breach is still counted as set aside (issue 35: the
    report said "0 findings of dropped rules set aside" while one was)."""
    reopened = ndjson(
        tmp_path,
        "reopened.ndjson",
        cancelled_with_end_turn([tool("t1", "completed"), tool("t1", "in_progress")]),
    )
    assert main(["check", "--drop", "BG-05", "--drop", "TRANS-04", reopened]) == 0
    text = capsys.readouterr().out
    assert "no findings" in text
    assert "2 findings of dropped rules set aside (BG-05 1, TRANS-04 1)" in text
    assert main(["check", "--drop", "BG-05", "--json", reopened]) == 1
    body = json.loads(capsys.readouterr().out)
    assert body["files"][0]["set_aside"] == {"BG-05": 1}
    assert {f["rule"] for f in body["files"][0]["findings"]} == {"TRANS-04"}


def test_variant_file_drop_and_named_in_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    only = ndjson(tmp_path, "only.ndjson", cancelled_with_end_turn())
    path = str(REPO / "variants" / "cancel-any-stop-reason.toml")
    assert main(["check", "--variant", path, only]) == 0
    text = capsys.readouterr().out
    assert "variant: cancel-any-stop-reason" in text and "rules dropped: CANCEL-12, TRANS-04" in text


def test_remove_row_makes_the_checker_flag_an_accepted_transition(tmp_path: Path) -> None:
    lines = [prompt(1), state("running"), user("u1"), tool("t1", "pending"), tool("t1", "completed"),
             answer(1, "u1"), state("idle", stop="end_turn")]  # fmt: skip
    transcript = ndjson(tmp_path, "t.ndjson", lines)
    assert main(["check", transcript]) == 0
    variant = str(REPO / "variants" / "tool-runs-before-completing.toml")
    assert main(["check", "--variant", variant, "--fail-on", "should", transcript]) == 1  # BG-05
    ms = MonitorSet(variant=load(variant))
    for n, (sender, msg) in enumerate(lines, 1):
        ms.feed(sender, msg, n)
    assert [(f.rule, f.line) for f in ms.findings] == [("BG-05", 5)]
    assert "pending" in ms.findings[0].explanation


def test_dropped_rule_relaxes_its_cells_and_guards() -> None:
    v = from_drops(["CANCEL-02", "ACTIVE-03"])
    prompt_spec = v.tables()["prompt"]
    assert prompt_spec.fire("covered", "insert") == "covered"  # the state stays
    assert prompt_spec.fire("received", "reject", {"busy_only": True}) == "rejected"  # guard no longer binds
    with pytest.raises(ProtocolViolation) as err:
        BY_NAME["prompt"].fire("covered", "insert")
    assert err.value.rule == "CANCEL-02"
    assert ("CANCEL-02", "prompt", "covered", "insert", "the state stays covered") in v.relaxed_cells()


def test_removed_row_is_flagged_and_pruned_from_the_agents_moves() -> None:
    from simulator.peers.config import SMALL
    from simulator.peers.world import World

    v = load(str(REPO / "variants" / "tool-runs-before-completing.toml"))
    spec = v.tables()["tool_call"]
    with pytest.raises(ProtocolViolation) as err:
        spec.fire("pending", "complete")
    assert err.value.removed and err.value.rule == "BG-05"
    live = Instance(spec)  # the transitions-driven instance refuses it the same way
    live.state = "pending"
    try:
        with pytest.raises(ProtocolViolation) as live_err:
            live.fire("complete")
        assert live_err.value.removed and str(live_err.value) == str(err.value)
    finally:
        live.detach()
    world = World(SMALL.with_(features=frozenset({"pause"}), tool_updates=1, variant=v))
    assert world.agent.prune and world.agent.specs["tool_call"] is not BY_NAME["tool_call"]
    assert not World(SMALL).agent.prune
    with pytest.raises(ValueError, match="another variant"):
        World(SMALL, monitors=MonitorSet(variant=v))  # monitors judge under the run's variant only
    with pytest.raises(ValueError, match="another variant"):
        World(SMALL.with_(variant=v), monitors=MonitorSet())


# -- explore --compare ------------------------------------------------------------------------------------


def _compare(path: Path, out: Path) -> dict[str, Any]:
    from properties.variants import load as load_variant
    from simulator.explore import run as explore_run
    from simulator.explore.compare import compare

    bounds = dict(SMALL_BOUNDS.get(path.stem, TOOLS))
    bounds["features"] = frozenset(bounds["features"])
    from diagrams.sequence import transcript_to_mermaid

    opts = explore_run.Options(mode="exhaustive", bounds=bounds, out=str(out), diagram=transcript_to_mermaid)
    result = compare(opts, load_variant(str(path)), {})
    assert result["write_errors"] == []
    return result["compare"]


@pytest.mark.deep
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_comparison_is_deterministic_and_names_a_difference(path: Path, tmp_path: Path) -> None:
    first = _compare(path, tmp_path / "a")
    second = _compare(path, tmp_path / "b")
    assert json.dumps(first["differences"]).replace(str(tmp_path / "a"), "OUT") == json.dumps(
        second["differences"]
    ).replace(str(tmp_path / "b"), "OUT")
    dynamic = [d for d in first["differences"] if d["kind"] != "behaviours"]
    assert bool(dynamic) != (path.stem in SAME_REACH), first["differences"]
    for d in first["differences"]:
        assert set(d) == {"kind", "rule", "detail", "files"}
    for d in dynamic:
        for f in d["files"]:
            assert Path(f).is_file() and "/a/variant/" in f
    assert first["variant"]["variant"]["name"] == path.stem
    assert "seconds" in first["base"] and "seconds" in first["variant"]


@pytest.mark.deep
def test_new_finding_names_its_counterexample_files(tmp_path: Path) -> None:
    c = _compare(REPO / "variants" / "output-after-idle.toml", tmp_path)
    appears = [d for d in c["differences"] if d["kind"] == "finding" and d["detail"].startswith("appears")]
    assert appears
    kinds = {Path(f).suffix for f in appears[0]["files"]}
    assert kinds == {".ndjson", ".py", ".mmd"}
    transcript = next(f for f in appears[0]["files"] if f.endswith(".ndjson"))
    assert main(["check", transcript]) == 1  # the spec as written flags the new behaviour


def test_compare_cli_json_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["explore", "--drop", "TRANS-04", "--compare", "--json", "--quiet", "--mode", "exhaustive",
            "--slice", "cancels", "--out", str(tmp_path)]  # fmt: skip
    assert main(args) == 0
    body = json.loads(capsys.readouterr().out)
    assert set(body) == {"compare"}
    assert set(body["compare"]) == {"base", "variant", "differences", "unexercised"}
    assert any(d["kind"] == "set-aside" and d["rule"] == "TRANS-04" for d in body["compare"]["differences"])
    assert body["compare"]["unexercised"] == []  # the drop's seeded bug broke TRANS-04 (set aside)
    assert (
        body["compare"]["base"]["findings"] == [] and "TRANS-04" not in body["compare"]["variant"]["findings"]
    )
    assert (tmp_path / "base" / "report.json").is_file() and (tmp_path / "variant" / "report.json").is_file()


def _same_run(opts: Any, *_: Any) -> str:
    """What a run computes from: its options (the variant and readings included) but where its
    files go and the pool it runs on (the other arguments: the variant and readings again, the
    progress and the pool)."""
    return repr(replace(opts, out="", pool=None))


def test_compare_names_an_added_row_never_fired(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 35, defect 2: output while idle, staying idle, is a row the simulated agent never
    takes, so the runs do not differ; --compare says the row was never fired (text and JSON).
    The text is that of the JSON's run (computed once: ``computed_once``)."""
    from simulator.explore import compare

    runs = computed_once(monkeypatch, compare, "compare", _same_run)
    path = write(tmp_path, IDLE_OUTPUT, "idle-output.toml")
    args = ["explore", "--variant", path, "--drop", "BG-09", "--compare", "--json", "--quiet",
            "--mode", "both", "--slice", "core", "--walks", "20", "--examples", "2",
            "--out", str(tmp_path / "o")]  # fmt: skip
    assert main(args) == 0
    body = json.loads(capsys.readouterr().out)["compare"]
    assert body["differences"] == []
    both = ["exhaustive", "random"]
    assert body["unexercised"] == [
        {"change": "add_row", "rule": None, "row": "foreground: idle --output--> idle", "modes": both,
         "detail": "never fired by the variant's run (exhaustive, random)"},
        {"change": "drop", "rule": "BG-09", "row": None, "modes": both,
         "detail": "no seeded bug breaks it: the simulated peers gain nothing, only the checker sets "
         "its findings aside"},
    ]  # fmt: skip
    args.remove("--json")
    assert main(args) == 0
    assert len(runs) == 2 and runs[0] == runs[1]
    text = capsys.readouterr().out
    assert "differences: 0\nnot exercised: 2 change(s) of the variant these runs never fired" in text
    assert (
        "  [add_row] foreground: idle --output--> idle: never fired by the variant's run (exhaustive, random)"
        in text
    )


def test_simulate_under_a_drop_takes_the_behaviour_the_rule_forbade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "s.ndjson")
    assert main(["simulate", "--drop", "TRANS-04", "--seed", "8", "--out", out]) == 0
    said = capsys.readouterr().out
    assert "seeded bugs switched on for the dropped rules: cancel-as-end-turn" in said
    assert main(["check", "--json", out]) == 1
    assert {f["rule"] for f in json.loads(capsys.readouterr().out)["files"][0]["findings"]} == {"TRANS-04"}
    assert main(["check", "--drop", "TRANS-04", out]) == 0


def test_explore_says_when_a_dropped_rule_gives_the_peers_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from simulator.explore import run as explore_run

    runs = computed_once(monkeypatch, explore_run, "run", _same_run)  # the text: the JSON's run
    # BOUND-01 (idle once no foreground activity is left; a start while work is active is a
    # forbidden cell) has no seeded bug of its own (the bug of its restated obligation, FG-05,
    # breaks FG-05), so dropping the rule gives the peers no new move
    args = ["explore", "--drop", "BOUND-01", "--json", "--quiet", "--mode", "exhaustive",
            "--slice", "prompts", "--out", str(tmp_path)]  # fmt: skip
    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    variant = report["variant"]
    assert variant["drop"] == ["BOUND-01"] and [b["label"] for b in variant["behaviours"]] == ["spec"]
    assert "no behaviour of the simulated peers is forbidden by this rule alone" in variant["notes"][0]
    assert any("foreground running/start: the state stays running" in n for n in variant["notes"])
    assert [s["name"] for s in report["exhaustive"]["slices"]] == ["prompts"]
    args[-1] = str(tmp_path / "text")
    args.remove("--json")
    assert main(args) == 0
    assert len(runs) == 2 and runs[0] == runs[1]
    text = capsys.readouterr().out
    assert "variant: drop" in text and "note: BOUND-01: no behaviour" in text


def test_no_search_fires_a_removed_row() -> None:
    from simulator.explore import bfs as explore_bfs
    from simulator.explore import random_walks as explore_random
    from simulator.peers.config import SMALL

    cfg = SMALL.with_(
        **{k: v for k, v in TOOLS.items() if k != "features"}, features=frozenset(TOOLS["features"])
    )
    row = ("tool_call", "pending", "complete", "completed")
    base = explore_bfs.explore(cfg)
    assert base.rows[row] > 0  # the spec as written reaches it
    cfg = cfg.with_(variant=load(str(REPO / "variants" / "tool-runs-before-completing.toml")))
    pruned = explore_bfs.explore(cfg)
    walks = explore_random.explore(cfg, walks=40, steps=60)
    assert pruned.rows[row] == 0 and walks.rows[row] == 0
    assert not pruned.counterexamples and not walks.counterexamples
    assert pruned.rows[("tool_call", "in_progress", "complete", "completed")] > 0


def test_a_variant_left_in_the_environment_changes_no_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only --variant and --drop choose a variant; it travels in ``Config.variant`` (to worker
    processes too), never in the environment: ACP_MODEL_VARIANT, the route it once took, changes
    nothing for check, replay, simulate, explore and the stdio agent (worker processes: below)."""
    from properties import variants
    from simulator.explore.report import strip_timing
    from simulator.peers.stdio_agent import StdioAgent

    assert not hasattr(variants, "ENV") and not hasattr(variants, "in_force")

    out = str(tmp_path / "s.ndjson")
    assert main(["simulate", "--drop", "TRANS-04", "--seed", "8", "--out", out]) == 0
    capsys.readouterr()
    explore = ["explore", "--mode", "random", "--walks", "2", "--examples", "1", "--steps", "20", "--json"]

    def outputs() -> list[str]:
        said = []
        for command in ("check", "replay"):
            main([command, out])
            said.append(capsys.readouterr().out)
        main(["simulate", "--seed", "4", "--steps", "20", "--out", "-", "--quiet"])
        said.append(capsys.readouterr().out)
        main([*explore, "--fault", "cancel-as-end-turn", "--out", str(tmp_path / "e")])
        said.append(json.dumps(strip_timing(json.loads(capsys.readouterr().out)), sort_keys=True))
        agent = StdioAgent(4, frozenset({"cancel-as-end-turn"}))
        said.append(repr([agent.receive(b'{"jsonrpc":"2.0","id":1,"method":"initialize"}'), agent.moves()]))
        return said

    plain = outputs()
    assert "findings: 1 error" in plain[0] and "set aside" not in plain[0]
    assert "TRANS-04" in plain[3]  # the explorer's walks break the rule: nothing sets it aside
    monkeypatch.setenv("ACP_MODEL_VARIANT", json.dumps(from_drops(["TRANS-04"]).to_json()))
    assert outputs() == plain


def test_the_variant_reaches_worker_processes_in_the_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """explore --drop TRANS-04 --workers 2: the walks with the dropped rule's seeded bug break
    TRANS-04 in the worker processes, whose monitors set it aside (the variant went there in
    each job's Config): the same findings as in one process, and none of TRANS-04."""
    from simulator.explore.report import strip_timing

    argv = ["explore", "--mode", "random", "--walks", "20", "--examples", "1", "--steps", "40", "--json"]
    argv += ["--drop", "TRANS-04"]
    reports = []
    for workers in ("1", "2"):
        main([*argv, "--workers", workers, "--out", str(tmp_path / workers)])
        reports.append(json.loads(capsys.readouterr().out))
    one, two = reports
    assert "TRANS-04" in one["variant"]["set_aside"]  # broken in this process, set aside
    assert [f["rule"] for f in two["findings"]] == [f["rule"] for f in one["findings"]]
    assert "TRANS-04" not in {f["rule"] for f in two["findings"]}
    assert strip_timing(one["random"]["walk"]) == strip_timing(two["random"]["walk"])


@pytest.mark.deep
@pytest.mark.parametrize("name", sorted(p.stem for p in (REPO / "variants").glob("*.toml")))
def test_the_variants_readme_names_every_rule_the_comparison_finds(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """variants/README.md says, per worked example, which rules fail under it: every finding
    the comparison shows appearing is named in its entry (issue 35: no-idle-at-end omitted
    TRANS-04)."""
    readme = (REPO / "variants" / "README.md").read_text(encoding="utf-8")
    entry = readme.split(f"- `{name}.toml`", 1)[1].split("\n- ", 1)[0].split("\n\n", 1)[0]
    path = str(REPO / "variants" / f"{name}.toml")
    args = ["explore", "--variant", path, "--compare", "--mode", "exhaustive", "--json", "--quiet"]
    main([*args, "--out", str(tmp_path)])
    body = json.loads(capsys.readouterr().out)
    appear = {
        d["rule"]
        for d in body["compare"]["differences"]
        if d["kind"] in ("finding", "liveness") and d["detail"].startswith("appears")
    }
    assert all(rule in entry for rule in appear), (appear, entry)
