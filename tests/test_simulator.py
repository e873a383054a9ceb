"""Acceptance tests of the simulator (simulator/peers/world.py, agent.py, client.py, schedulers.py).

What is checked, and where the expectation comes from:

* Wire shape: every message of 200 seeded random walks (FIFO and unordered transport)
  validates against the official schema for its method and direction (spec: Session updates;
  the schema is the source of truth for payloads). Skips when ../shared is absent.
* Coverage: over the same 200 seeds every non-fault agent choice (each ``Agent._do_*`` handler
  that is not enabled only under a seeded fault) occurs, and ``end`` occurs with each stop
  reason the spec's "Stop reasons" section lists. The counts table is printed (run with ``-s``).
* The ``acp-model simulate`` command: same options give byte-identical files, seeds differ,
  unusable options are one line and exit 2.
* Sans-IO: runs succeed with sockets, threads and event loops disabled, and no simulator module
  imports an I/O or concurrency module.
* Quiescence invariants (spec: Work boundaries and local commands; 2. Prompt accepted; Prompts
  that are never inserted; Background work): no foreground work remains and idle was reported;
  with FIFO delivery the client's view shows the agent's last reported state and background
  list; every prompt the client sent got a messageId or an error.

Must not know: the agent's private bookkeeping beyond ``reported``, ``real`` and ``listed``.
"""

from __future__ import annotations

import ast
import asyncio
import io
import json
import socket
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from model.clientview_parts import json_key
from properties.schema_check import SchemaChecker
from simulator.explore.bfs import SLICES
from simulator.peers import wire
from simulator.peers.agent import MAIN, Agent
from simulator.peers.config import DEFAULT, FEATURES, long_session
from simulator.peers.scenarios import SCENARIOS
from simulator.peers.schedulers import Run, random_walk
from tests.check_support import schema_path

REPO = Path(__file__).resolve().parents[1]
SEEDS = range(200)
MORE_SEEDS = range(200, 800)
"""Walked only when a choice did not occur in SEEDS."""
STEPS = 60
TRANSPORTS = ("fifo", "unordered")

FAULT_ONLY = {
    # handler -> the seeded fault that enables it
    "late_output": "update-after-idle",
    "resume_early": "response-before-snapshot",
    "late_run": "late-approval-runs",
}
READING_ONLY = {
    # handler -> the reading's alternative that gives the freedom (not a default; the
    # handlers and their alternatives are tested in tests/test_readings_peers.py; synthetic_user
    # is a default freedom now: unaccounted-user-message=agent-initiated, once no prompt waits;
    # so is pending_say: output-while-requires-action=late-chunk, a chunk of the message begun)
    "bg_adopt": "waited-on-background=becomes-foreground",
    "withdraw_invalid": "cancelled-invalid-prompt=either",
}
SPEC_STOP_REASONS = ("end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled", "error")
"""The standard stop reasons of the spec's "Stop reasons" section."""
NOT_MODELLED_STOP_REASONS: frozenset[str] = frozenset()
"""Spec stop reasons the agent cannot choose yet (see test_agent_can_end_with_max_turn_requests)."""
IO_MODULES = frozenset({"socket", "threading", "asyncio", "select", "selectors"})


def _handlers() -> list[str]:
    return sorted(name[len("_do_") :] for name in dir(Agent) if name.startswith("_do_"))


def _walks(transport: str) -> Iterator[tuple[int, Run]]:
    cfg = DEFAULT.with_(transport=transport)
    for seed in SEEDS:
        yield seed, random_walk(seed, STEPS, cfg)


@pytest.fixture(scope="module")
def walks() -> dict[str, list[tuple[int, Run]]]:
    """The 200 default-config walks per transport, shared by the tests of this module."""
    return {t: list(_walks(t)) for t in TRANSPORTS}


FOCUSED = DEFAULT.with_(
    features=frozenset({"permission", "multi_request", "close", "resume", "overlap", "fail", "chunks"})
)
"""Tool calls, permission requests and the session's handshakes only: the choices of a tool
call's life (run, done, block, carry on after the idle, an end_turn or an error one) are rare
among the many of the default configuration, common here; so is refusing a resume that a close
or a second resume overlapped (feature ``overlap``, off by default), and a chunk of the message
streamed before the work blocked, sent while requires_action is reported (``pending_say``:
messages streamed as chunks)."""


EVERY = DEFAULT.with_(features=frozenset(FEATURES))
"""Every feature, those off by default included (the freedoms only their slices switch on)."""


@pytest.fixture(scope="module")
def focused_walks() -> dict[str, list[tuple[int, Run]]]:
    return {
        t: [(s, random_walk(s, STEPS, cfg.with_(transport=t))) for cfg in (FOCUSED, EVERY) for s in SEEDS]
        for t in TRANSPORTS
    }


# -- wire shape --------------------------------------------------------------------------------
@pytest.mark.needs_shared
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_every_message_validates_against_the_schema(
    walks: dict[str, list[tuple[int, Run]]], focused_walks: dict[str, list[tuple[int, Run]]], transport: str
) -> None:
    """The default walks and the focused ones (every feature, those off by default included)."""
    checker = SchemaChecker(schema_path())
    checked = Counter[str]()
    for seed, run in walks[transport] + focused_walks[transport]:
        checker.reset()
        for line, (sender, msg) in enumerate(run.world.transcript, 1):
            finding = checker.check(sender, msg, line)
            assert finding is None, f"seed {seed} line {line} ({sender}): {finding}\n{msg}"
            checked[f"{sender}:{msg.get('method', 'response')}"] += 1
    # the walks exercised both directions and the main methods
    for key in ("client:session/prompt", "agent:session/update", "agent:response", "client:response"):
        assert checked[key] > 0, (key, checked)


@pytest.mark.needs_shared
def test_the_schema_checker_rejects_a_broken_message() -> None:
    """The validation above can fail: a state update with a bad state is a finding."""
    checker = SchemaChecker(schema_path())
    good = wire.state_update(MAIN, "idle", [], "end_turn")
    assert checker.check("agent", good, 1) is None
    bad = wire.state_update(MAIN, "idle", [], "end_turn")
    bad["params"]["update"]["background"] = "none"
    assert checker.check("agent", bad, 2) is not None


# -- coverage of the agent's choices ---------------------------------------------------------------
def _coverage(runs: list[tuple[int, Run]]) -> tuple[Counter[str], Counter[str]]:
    """(events, seeds in which the event occurred), keyed like World.counts plus agent.end:REASON."""
    events: Counter[str] = Counter()
    seeds: Counter[str] = Counter()
    for _, run in runs:
        here: Counter[str] = Counter(run.world.counts)
        for actor, name, arg in run.events:
            if actor == "agent" and name == "end":
                here[f"agent.end:{arg}"] += 1
        events.update(here)
        seeds.update(here.keys())
    return events, seeds


def test_fault_only_handlers_are_handlers() -> None:
    handlers = set(_handlers())
    assert set(FAULT_ONLY) <= handlers
    assert len(handlers) > len(FAULT_ONLY) + 20


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_every_agent_choice_occurs(
    walks: dict[str, list[tuple[int, Run]]], focused_walks: dict[str, list[tuple[int, Run]]], transport: str
) -> None:
    """Every choice occurs in the default walks or in the focused ones (``FOCUSED``)."""
    events, seeds = _coverage(walks[transport] + focused_walks[transport])
    wanted = [f"agent.{h}" for h in _handlers() if h not in FAULT_ONLY and h not in READING_ONLY]
    wanted += [f"agent.end:{r}" for r in SPEC_STOP_REASONS if r not in NOT_MODELLED_STOP_REASONS]
    width = max(len(k) for k in wanted)
    print(f"\nagent choices over seeds 0..{len(SEEDS) - 1}, default and focused, {transport} transport")
    print(f"{'choice':<{width}}  {'events':>7}  {'seeds':>5}")
    for key in wanted:
        print(f"{key:<{width}}  {events[key]:>7}  {seeds[key]:>5}")
    missing = [k for k in wanted if events[k] == 0]
    # a rare choice may need more seeds: every feature, then focused, then the exhaustive slices
    # (each switches its freedoms on with few other moves: the user's stop option of ``answers``)
    for cfg in (EVERY, FOCUSED, *(s.cfg for s in SLICES)):
        if missing:  # (a background permission request while idle; an error idle a call outlives)
            walked = [(seed, random_walk(seed, STEPS, cfg.with_(transport=transport))) for seed in MORE_SEEDS]
            more = _coverage(walked)[0]
            missing = [k for k in missing if more[k] == 0]
    assert not missing, f"never chosen in {len(SEEDS) + len(MORE_SEEDS)} seeds: {missing}"
    for handler in FAULT_ONLY:
        assert events[f"agent.{handler}"] == 0, f"{handler} occurred without its fault"
    for handler in READING_ONLY:
        assert events[f"agent.{handler}"] == 0, f"{handler} occurred under the default readings"


@pytest.mark.parametrize(("handler", "fault"), sorted(FAULT_ONLY.items()))
def test_fault_only_handler_occurs_under_its_fault(handler: str, fault: str) -> None:
    """The fault-only list is right: each of those handlers is reachable with its fault on."""
    hits = sum(
        random_walk(s, STEPS, faults=frozenset({fault})).world.counts[f"agent.{handler}"] for s in SEEDS
    )
    assert hits > 0


def test_agent_can_end_with_max_turn_requests(walks: dict[str, list[tuple[int, Run]]]) -> None:
    events, _ = _coverage(walks["fifo"])
    assert events["agent.end:max_turn_requests"] > 0


# -- the simulate command -------------------------------------------------------------------------
def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # argparse errors
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def test_simulate_is_deterministic(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.ndjson", tmp_path / "b.ndjson", tmp_path / "c.ndjson"
    for path, seed in ((a, "7"), (b, "7"), (c, "8")):
        code, out, err = _cli("simulate", "--seed", seed, "--steps", "40", "--out", str(path))
        assert code == 0, err
        assert str(path) in out and err == ""
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()
    lines = a.read_bytes().splitlines()
    assert len(lines) > 10 and all(line.startswith(b'{"from":') for line in lines)


def test_simulate_transcript_is_the_walk(tmp_path: Path) -> None:
    """The file is exactly the random walk's transcript for those options: a long session's
    bounds, the client answering only once the steps are spent."""
    out = tmp_path / "w.ndjson"
    assert _cli("simulate", "--seed", "3", "--steps", "25", "--out", str(out))[0] == 0
    run = random_walk(3, 25, long_session(25), answers_only=True)
    assert out.read_text(encoding="utf-8") == wire.to_ndjson(run.world.transcript)


def test_simulate_unordered_transport(tmp_path: Path) -> None:
    fifo, unordered = tmp_path / "f.ndjson", tmp_path / "u.ndjson"
    seeds_differ = False
    for seed in ("1", "2", "3"):
        assert _cli("simulate", "--seed", seed, "--out", str(fifo))[0] == 0
        code, _, err = _cli("simulate", "--seed", seed, "--transport", "unordered", "--out", str(unordered))
        assert code == 0, err
        cfg = long_session(60).with_(transport="unordered")
        expected = random_walk(int(seed), 60, cfg, answers_only=True)
        assert unordered.read_text(encoding="utf-8") == wire.to_ndjson(expected.world.transcript)
        seeds_differ |= fifo.read_bytes() != unordered.read_bytes()
    assert seeds_differ


@pytest.mark.parametrize(
    "argv",
    [
        ("--scenario", "no_such_scenario"),
        ("--steps", "-1"),
        ("--fault", "no-such-fault"),
        ("--prompts", "-1"),
        ("--capacity", "0"),
        ("--features", "hold,teleport"),
        ("--scenario", "basic_turn", "--prompts", "3"),
    ],
)
def test_simulate_bad_options_are_one_line(tmp_path: Path, argv: tuple[str, ...]) -> None:
    out = tmp_path / "x.ndjson"
    code, stdout, err = _cli("simulate", *argv, "--out", str(out))
    assert code == 2
    assert stdout == ""
    assert err.count("\n") == 1 and err.startswith("acp-model simulate: "), err
    assert "Traceback" not in err
    assert not out.exists()


def test_simulate_unwritable_output_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = _cli("simulate", "--out", str(blocker / "sub" / "x.ndjson"))
    assert code == 2
    assert err.count("\n") == 1 and str(blocker) in err, err


def test_simulate_scenario_writes_its_transcript(tmp_path: Path) -> None:
    out = tmp_path / "s.ndjson"
    code, _, err = _cli("simulate", "--scenario", "basic_turn", "--out", str(out))
    assert code == 0, err
    scenario = next(s for s in SCENARIOS if s.name == "basic_turn")
    assert out.read_text(encoding="utf-8") == wire.to_ndjson(scenario.run().world.transcript)


def test_simulate_steps_are_spent_starting_work(tmp_path: Path) -> None:
    """``--steps 200`` gives 200 events before the run settles, for every seed (the default
    bounds used to stop the client after two prompts: about 30 messages a run), and the long
    sessions break no rule."""
    from properties.engine import MonitorSet

    more = prompted = 0
    for seed in range(25):
        run = random_walk(seed, 200, long_session(200), monitors=MonitorSet(), answers_only=True)
        assert len(run.events) >= 200, (seed, run.stop)
        assert run.stop == "settled", seed
        assert [f for f in run.findings if f.kind == "rule"] == [], seed
        prompted += run.world.client.prompts_sent >= 1
        more += run.world.client.prompts_sent > DEFAULT.prompts
    # a walk may spend its steps closing again while the session closes (no rule forbids it) or
    # on a closed and resumed session instead (and cancelling while it is resumed)
    assert prompted >= 22
    assert more >= 15
    out = tmp_path / "long.ndjson"
    code, stdout, _ = _cli("simulate", "--steps", "200", "--out", str(out))
    assert code == 0
    assert "stop: settled" in stdout
    assert len(out.read_bytes().splitlines()) > 100


def test_simulate_bound_options_bound_the_run(tmp_path: Path) -> None:
    out = tmp_path / "b.ndjson"
    code, _, err = _cli(
        "simulate", "--steps", "300", "--prompts", "1", "--features", "cancel,hold", "--out", str(out)
    )
    assert code == 0, err
    sent = [json.loads(line)["message"] for line in out.read_bytes().splitlines()]
    methods = Counter(m.get("method") for m in sent)
    assert methods["session/prompt"] == 1
    assert methods["session/close"] == 0  # the close feature is off


def test_simulate_out_dash_writes_standard_output(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--out -`` is the transcript on standard output, the summary on standard error, and no
    file named ``-``."""
    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "--seed", "4", "--steps", "30", "--out", "-"]) == 0
    captured = capsysbinary.readouterr()
    assert not (tmp_path / "-").exists()
    run = random_walk(4, 30, long_session(30), answers_only=True)
    assert captured.out == wire.to_ndjson(run.world.transcript).encode("utf-8")
    assert b"standard output" in captured.err


# -- sans-IO ------------------------------------------------------------------------------------------
def test_runs_need_no_sockets_threads_or_event_loops(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*_: Any, **__: Any) -> Any:
        raise AssertionError("the simulator must be sans-IO")

    monkeypatch.setattr(socket, "socket", forbidden)
    monkeypatch.setattr(threading.Thread, "start", forbidden)
    monkeypatch.setattr(asyncio, "get_event_loop", forbidden)
    monkeypatch.setattr(asyncio, "new_event_loop", forbidden)
    with pytest.raises(AssertionError):  # the patches are in force
        socket.socket()
    with pytest.raises(AssertionError):
        threading.Thread(target=lambda: None).start()
    steps = 0
    for transport in TRANSPORTS:
        for seed in range(20):
            run = random_walk(seed, STEPS, DEFAULT.with_(transport=transport))
            steps += run.world.steps
            run.world.clone().enabled()
    for scenario in SCENARIOS:
        steps += scenario.run().world.steps
    assert steps > 1000


def _imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__":
            arg = node.args[0] if node.args else None
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                found.add(arg.value.split(".")[0])
    return found


def test_import_scanner_sees_imports() -> None:
    assert {"ast", "asyncio", "socket", "threading"} <= _imported_modules(Path(__file__))


def test_no_simulator_module_imports_io() -> None:
    """The peers and the explorers are sans-IO; the harness for real agents is the one place that
    is not (and does do input and output: it is not exempt by accident), besides the worker pool
    (``simulator/workers.py``: it runs the jobs, and starts a private Ray instance in a thread)."""
    harness = REPO / "simulator" / "harness"
    pool = REPO / "simulator" / "workers.py"
    modules = sorted(p for p in (REPO / "simulator").rglob("*.py") if harness not in p.parents and p != pool)
    assert len(modules) >= 8
    offenders = {p.name: sorted(_imported_modules(p) & IO_MODULES) for p in modules}
    assert not {k: v for k, v in offenders.items() if v}
    assert _imported_modules(harness / "child.py") & IO_MODULES


# -- invariants at quiescence -----------------------------------------------------------------------
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_quiescent_walks_end_idle_with_every_prompt_answered(
    walks: dict[str, list[tuple[int, Run]]], transport: str
) -> None:
    quiescent = 0
    for seed, run in walks[transport]:
        if run.stop != "quiescent":
            continue
        quiescent += 1
        world = run.world
        # Work boundaries and local commands: no foreground work remains, and idle was reported.
        assert world.agent.real == "idle", seed
        assert world.agent.reported == "idle", seed
        view = world.client.view.to_json()[MAIN]["session"]
        sent = [m["id"] for s, m in world.transcript if s == "client" and m.get("method") == "session/prompt"]
        answered = [
            m["id"] for s, m in world.transcript if s == "agent" and "method" not in m and m.get("id") in sent
        ]
        assert sorted(sent) == sorted(answered), (seed, sent, answered)
        for rid in sent:
            key = json_key(rid)
            assert key in view["prompts"], (seed, rid)
            mid, code = view["prompts"][key], view["rejected_prompts"].get(key)
            # exactly one outcome: a messageId, or an error code
            assert (isinstance(mid, str)) != (code is not None), (seed, rid, mid, code)
        ids = [m for m in view["prompts"].values() if m is not None]
        assert len(ids) == len(set(ids)), (seed, "distinct submissions share a messageId")
        if transport == "fifo":
            assert view["state"] == world.agent.reported, seed
            listed = [wire.background_item(k, i) for k, i in world.agent.listed]
            expected_bg = listed if world.agent.bg_reported else None
            assert view["background"] == expected_bg, seed
    assert quiescent >= len(SEEDS) * 0.9, f"only {quiescent} of {len(SEEDS)} walks reached quiescence"


def test_walks_use_their_bounds(walks: dict[str, list[tuple[int, Run]]]) -> None:
    """Bounds of Config hold in every walk: no more prompts, closes or resumes than allowed."""
    for seed, run in walks["fifo"]:
        counts = run.world.counts
        assert counts["client.prompt"] <= DEFAULT.prompts, seed
        assert counts["client.close"] <= DEFAULT.closes, seed
        assert counts["client.resume"] <= DEFAULT.resumes + DEFAULT.reattaches, seed
        assert counts["agent.bg_rerun"] <= DEFAULT.reruns, seed
        assert counts["agent.compact_start"] <= DEFAULT.compactions, seed
        assert counts["agent.bg_start"] <= DEFAULT.background, seed
        assert max(len(run.world.net.to_agent), len(run.world.net.to_client)) <= DEFAULT.capacity


def test_the_agent_may_insert_an_empty_prompt_but_must_refuse_unadvertised_content() -> None:
    """An empty prompt array (a Client's breach, USER-01) may be rejected with -32602 or inserted
    ("1. User message": Agents MAY reject one); a prompt with content the Agent did not advertise
    must be rejected: inserting it is no conforming move."""
    from simulator.peers.schedulers import scripted

    P, D = ("client", "prompt", None), "deliver"
    empty = scripted([P, D], DEFAULT, frozenset({"empty-prompt"}))
    moves = empty.world.enabled()
    assert ("agent", "insert", 1) in moves and ("agent", "reject", 1) in moves
    inserted = [P, D, ("agent", "insert", 1), ("agent", "answer", 1)]
    done = scripted(inserted, DEFAULT, frozenset({"empty-prompt"}))
    assert {f.rule for f in done.findings if f.kind == "rule"} <= {"USER-01"}
    image = scripted([P, D], DEFAULT, frozenset({"image-without-capability"}))
    assert ("agent", "insert", 1) not in image.world.enabled()
    assert ("agent", "reject", 1) in image.world.enabled()
