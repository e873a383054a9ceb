"""``acp-model agent`` against a scripted Client of our own: several sessions, session/list,
resume while open, idempotent close, required fields, JSON-RPC batches (and the checker reading
them), the echo of the prompt's content, and the common-path mode."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from simulator.peers import wire
from simulator.peers.agent_modes import COMMON_PATH
from simulator.peers.stdio_agent import LIST_PAGE, StdioAgent
from tests.check_support import line, run_cli, schema_path
from tests.scripted_client import ScriptedClient, dumps, freedoms, prompting_run, updates

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "cli"]
FREEDOMS = {"rejection", "child", "repeated-snapshot", "custom"}


def _check(path: Path, *options: str) -> dict[str, Any]:
    code, out, err = run_cli(["check", "--json", *options, str(path)])
    report = json.loads(out)
    assert code == 0, (err, report["files"][0]["findings"])
    return report


def _two_sessions(seed: int, mode: Any = None) -> ScriptedClient:
    """The script of the issue: two sessions opened, listed, both prompted, one resumed while
    open (mid-turn on some seeds), the other closed twice; a batch of a request and a
    notification."""
    agent = StdioAgent(seed) if mode is None else StdioAgent(seed, mode=mode)
    c = ScriptedClient(agent)
    c.send(wire.initialize(0))
    c.send(wire.request(1, "session/new", {"cwd": "/work/a"}))
    c.send(wire.request(2, "session/new", {"cwd": "/work/b"}))
    c.send(wire.request(3, "session/list", {}))
    c.send(wire.prompt(4, "sess_1", [wire.text("one")]))
    c.send(wire.prompt(5, "sess_3", [wire.text("two")]))
    c.run(stop_after=seed % 5)
    c.send(
        {
            **wire.resume(6, "sess_1", replay=seed % 2 == 0),
            "params": {"sessionId": "sess_1", "cwd": "/work/a"},
        }
    )
    c.run()
    c.send([wire.request(7, "session/list", {"cwd": "/work/b"}), wire.cancel("sess_3")])
    c.send(wire.close(8, "sess_3"))
    c.run()
    c.send(wire.close(9, "sess_3"))
    c.run()
    return c


@pytest.mark.parametrize("seed", range(6))
def test_two_sessions_listed_prompted_resumed_closed_twice_and_a_batch(seed: int, tmp_path: Path) -> None:
    c = _two_sessions(seed)
    assert c.answer(1)["result"] == {"sessionId": "sess_1"}  # type: ignore[index]
    assert c.answer(2)["result"] == {"sessionId": "sess_3"}  # type: ignore[index]
    listed = c.answer(3)["result"]  # type: ignore[index]
    assert listed == {
        "sessions": [{"sessionId": "sess_1", "cwd": "/work/a"}, {"sessionId": "sess_3", "cwd": "/work/b"}]
    }
    for rid in (4, 5):  # both prompts answered (-32800 only if the cancel covered it first)
        answer = c.answer(rid)
        assert answer is not None
        assert "messageId" in answer.get("result", {}) or answer["error"]["code"] in (-32800, -32602)
    assert c.answer(6) == wire.result(6, {})  # the resume of the open session succeeds
    batch = [item for s, item in c.lines if s == "agent" and isinstance(item, list)]
    assert batch == [[wire.result(7, {"sessions": [{"sessionId": "sess_3", "cwd": "/work/b"}]})]]
    assert c.answer(8) == wire.result(8, {}) and c.answer(9) == wire.result(9, {})  # closed twice
    sids = {sid for sid, _ in updates(c.agent_messages())}
    assert sids <= {"sess_1", "sess_2", "sess_3", "sess_4"}  # each session (and its child) its own
    perms = [m["id"] for m in c.agent_messages() if m.get("method") == "session/request_permission"]
    assert len(perms) == len(set(perms))  # permission request ids never clash across sessions
    path = tmp_path / "t.ndjson"
    c.write(path)
    report = _check(path)
    assert report["files"][0]["findings"] == []


@pytest.mark.needs_shared
@pytest.mark.parametrize("seed", range(6))
def test_every_answer_validates_against_the_schema(seed: int, tmp_path: Path) -> None:
    """Skipped with a reason when ../shared (the official schema) is absent."""
    from properties.schema_check import SchemaChecker

    schema = schema_path()
    checker = SchemaChecker(schema)
    c = _two_sessions(seed)
    for i, (sender, item) in enumerate(c.lines, 1):
        for msg in item if isinstance(item, list) else [item]:
            assert checker.check(sender, msg, i) is None, (sender, msg)
    for mode in (None, COMMON_PATH):  # and the runs of the mode test
        run, _ = prompting_run(StdioAgent(seed) if mode is None else StdioAgent(seed, mode=mode), seed)
        for i, (sender, item) in enumerate(run.lines, 1):
            assert checker.check(sender, item, i) is None, (sender, item)
    path = tmp_path / "t.ndjson"
    c.write(path)
    assert _check(path, "--schema", str(schema))["files"][0]["findings"] == []


def test_session_list_pages_and_filters() -> None:
    agent = StdioAgent(0)
    c = ScriptedClient(agent)
    for i in range(LIST_PAGE + 2):
        c.send(wire.request(i, "session/new", {"cwd": "/a" if i % 2 else "/b"}))
    first = c.send(wire.request("l1", "session/list", {}))[0]["result"]
    assert len(first["sessions"]) == LIST_PAGE and type(first["nextCursor"]) is str
    second = c.send(wire.request("l2", "session/list", {"cursor": first["nextCursor"]}))[0]["result"]
    assert "nextCursor" not in second and len(second["sessions"]) == 2
    every = [s["sessionId"] for s in first["sessions"] + second["sessions"]]
    assert every == [f"sess_{2 * n - 1}" for n in range(1, LIST_PAGE + 3)]
    only = c.send(wire.request("l3", "session/list", {"cwd": "/a", "cursor": None}))[0]["result"]
    assert {s["cwd"] for s in only["sessions"]} == {"/a"} and len(only["sessions"]) == (LIST_PAGE + 2) // 2
    bad = c.send(wire.request("l4", "session/list", {"cursor": "zzz"}))[0]
    assert bad["error"]["code"] == -32602 and "cursor" in bad["error"]["message"]


@pytest.mark.parametrize(
    ("msg", "field"),
    [
        (wire.request(1, "session/new", {}), "cwd"),
        (wire.request(1, "session/new", {"cwd": 7}), "cwd"),
        (wire.request(1, "initialize", {"protocolVersion": 2, "info": "me"}), "info"),
        (wire.request(1, "initialize", {"info": {"name": "x", "version": "1"}}), "protocolVersion"),
        (wire.request(1, "session/prompt", {"sessionId": "sess_1"}), "prompt"),
        (wire.request(1, "session/prompt", {"prompt": []}), "sessionId"),
        (wire.request(1, "session/resume", {"sessionId": "sess_1"}), "cwd"),
        (wire.request(1, "session/close", {}), "sessionId"),
        (wire.request(1, "session/list", {"cursor": 3}), "cursor"),
    ],
)
def test_a_required_field_missing_is_invalid_params_naming_it(msg: dict[str, Any], field: str) -> None:
    agent = StdioAgent(0)
    agent.receive(wire.json_line(wire.new_session(0)).encode()[:-1])
    answers = agent.receive(wire.json_line(msg).encode()[:-1])
    assert len(answers) == 1 and answers[0]["error"]["code"] == -32602  # type: ignore[call-overload]
    assert repr(field) in answers[0]["error"]["message"]  # type: ignore[call-overload]
    assert agent.agent.prompts == {} and agent.agent.session == "open"  # nothing reached the model


def test_initialize_without_info_is_accepted() -> None:
    """The one required field checked only when present (``stdio_agent.REQUIRED``)."""
    assert StdioAgent(0).receive(dumps(wire.request(1, "initialize", {"protocolVersion": 2}))) == [
        wire.initialized(1)
    ]


@pytest.mark.parametrize("advertised", [True, False])
def test_custom_states_follow_the_clients_capabilities(advertised: bool) -> None:
    """A Client that does not advertise custom states takes them out of the Agent's choices and
    out of the foreground table's context it judges its own moves by (they must agree)."""
    agent = StdioAgent(0)
    caps = {"_meta": {"customStates": True}} if advertised else {}
    agent.receive(dumps(wire.request(1, "initialize", {"protocolVersion": 2, "capabilities": caps})))
    assert ("future" in agent.agent.cfg.features) is advertised
    assert agent.agent.fg_ctx == {"custom_states": advertised}


@pytest.mark.parametrize(("asked", "code"), [(1, -32022), (2, None), (3, None)])
def test_the_protocol_version(asked: int, code: int | None) -> None:
    """Version 2 for a Client asking 2 or later; -32022 (with the versions supported) for one
    asking for an earlier version, which this agent does not speak."""
    answer = StdioAgent(0).receive(dumps(wire.request(1, "initialize", {"protocolVersion": asked})))[0]
    if code is None:
        assert answer == wire.initialized(1)
    else:
        assert answer["error"]["code"] == code  # type: ignore[call-overload]
        assert answer["error"]["data"] == {"requested": asked, "supported": [2]}  # type: ignore[call-overload]


def test_a_notification_missing_a_field_is_ignored() -> None:
    agent = StdioAgent(0)
    agent.receive(wire.json_line(wire.new_session(0)).encode()[:-1])
    assert agent.receive(wire.json_line(wire.notification("session/cancel", {})).encode()[:-1]) == []


def test_close_succeeds_for_closed_and_unknown_sessions() -> None:
    c = ScriptedClient(StdioAgent(2))
    c.send(wire.new_session(0))
    assert c.send(wire.close(1, "sess_404")) == [wire.result(1, {})]  # no such session: at once
    c.send(wire.close(2, "sess_1"))
    c.run()
    assert c.answer(2) == wire.result(2, {})
    c.send(wire.close(3, "sess_1"))  # closed already
    c.run()
    assert c.answer(3) == wire.result(3, {})
    refused = c.send(wire.prompt(4, "sess_1", [wire.text("x")]))[0]
    assert refused["error"]["code"] == -32002 and refused["error"]["data"] == {"sessionId": "sess_1"}


def test_resume_of_an_open_session_mid_turn() -> None:
    """The resume of a session whose prompt is being worked on: one snapshot of the state the
    work is in, then the response; the work goes on and the prompt is answered."""
    for seed in range(20):
        c = ScriptedClient(StdioAgent(seed, mode=COMMON_PATH))
        c.send(wire.new_session(0))
        c.send(wire.prompt(1, "sess_1", [wire.text("go")]))
        c.run(stop_after=3)
        if c.agent.agent.real == "idle":
            continue
        at = len(c.lines)
        c.send(wire.resume(2, "sess_1", replay=False))
        c.run()
        after = [m for s, m in c.lines[at:] if s == "agent"]
        states = [u for _, u in updates(after[: after.index(wire.result(2, {}))])]
        assert [u["state"] for u in states] == ["running"] or [u["state"] for u in states] == [
            "requires_action"
        ]
        assert c.answer(1) is not None and "result" in c.answer(1)  # type: ignore[operator]
        return
    raise AssertionError("no seed resumed mid-turn")


# -- batches -------------------------------------------------------------------------------------


def test_batches() -> None:
    agent = StdioAgent(0)
    assert agent.receive(b"[]") == [wire.error(None, -32600, "Invalid Request: empty batch")]  # type: ignore[arg-type]
    out = agent.receive(dumps([wire.initialize(1), wire.new_session(2), wire.notification("_x/ping", {})]))
    assert out == [[wire.initialized(1), wire.session_created(2, "sess_1")]]  # one array, in order
    assert agent.receive(dumps([wire.cancel("sess_1"), wire.notification("_x/ping", {})])) == []
    mixed = agent.receive(dumps([1, {"jsonrpc": "2.0", "id": 9, "method": "nope"}]))
    assert len(mixed) == 1 and [a["error"]["code"] for a in mixed[0]] == [-32600, -32601]  # type: ignore[index]
    # a prompt in a batch is answered later, on its own line
    assert agent.receive(dumps([wire.prompt(3, "sess_1", [wire.text("x")])])) == []
    assert 3 in agent.agent.prompts


def test_the_checker_reads_batches_with_their_line_numbers(tmp_path: Path) -> None:
    """Each element of a batch is judged as a message of its own, at the batch's line."""
    s = "sess_b"
    hello = [wire.text("hi")]
    lines = [
        line("client", wire.prompt(1, s, hello)),
        json.dumps(
            {"from": "client", "message": [wire.request(2, "session/list", {}), wire.cancel(s)]}
        ).encode()
        + b"\n",
        json.dumps({"from": "agent", "message": [wire.result(2, {"sessions": []})]}).encode() + b"\n",
        line("agent", wire.error(1, -32800, "cancelled")),
        json.dumps({"from": "client", "message": []}).encode() + b"\n",
        json.dumps({"from": "client", "message": [7, wire.notification("_x/ping", {})]}).encode() + b"\n",
        # line 7: an answer (in a batch) that breaks a rule: a second answer to the prompt
        json.dumps({"from": "agent", "message": [wire.result(1, {"messageId": "m"})]}).encode() + b"\n",
    ]
    path = tmp_path / "b.ndjson"
    path.write_bytes(b"".join(lines))
    code, out, _ = run_cli(["check", "--json", str(path)])
    report = json.loads(out)["files"][0]
    found = {(f["line"], f["rule"]) for f in report["findings"]}
    assert (5, "input.not-jsonrpc") in found and (6, "input.not-jsonrpc") in found
    assert any(line_no == 7 and not rule.startswith("input.") for line_no, rule in found), found
    assert all(line_no in (5, 6, 7) for line_no, _ in found), found
    assert report["lines"] == 7 and report["messages"] == 7 and code == 1


# -- the echo -----------------------------------------------------------------------------------

CONTENT = [
    {"type": "text", "text": 'Ünïcode ✓ 🚀 "quoted" \\ back\nslash\ttab \u2028 end'},
    {"type": "resource_link", "uri": "file:///w/a b.py", "name": "a b.py", "_meta": {"k": [1, 2.5, None]}},
    {"type": "text", "text": ""},
]


def test_the_echo_is_the_prompts_content_byte_for_byte() -> None:
    """Full messages and chunks both seen over the seeds; each carries the prompt's content as
    the Client wrote it, byte for byte (the chunks, in order, one per block), the replay too."""
    sent = dumps(CONTENT)
    seen = set()
    for seed in range(40):
        c = ScriptedClient(StdioAgent(seed))
        c.send(wire.new_session(0))
        c.send(wire.prompt(1, "sess_1", CONTENT))
        c.run()
        assert sent in c.raw[2][1]  # the prompt's line holds the content as these bytes
        mine = [
            (u["sessionUpdate"], u)
            for sid, u in updates(c.agent_messages())
            if u.get("messageId", "").startswith("msg_u")
        ]
        if not mine:
            continue  # the prompt was rejected on this seed
        kinds = {k for k, _ in mine}
        if kinds == {"user_message"}:
            assert all(dumps(u["content"]) == sent for _, u in mine)
            assert any(sent in raw for s, raw in c.raw if s == "agent")
        else:
            assert kinds == {"user_message_chunk"}
            assert b"[" + b",".join(dumps(u["content"]) for _, u in mine) + b"]" == sent
        seen |= kinds
        if c.agent.agent.session == "open" and len(seen) == 2:
            c.send(wire.resume(2, "sess_1", replay=True))
            c.run()
            at = next(i for i, (s, m) in enumerate(c.lines) if m == wire.resume(2, "sess_1", replay=True))
            replayed = [
                u
                for _, u in updates([m for s, m in c.lines[at:] if s == "agent"])
                if u["sessionUpdate"] == "user_message"
            ]
            assert replayed and dumps(replayed[0]["content"]) == sent
            return
    raise AssertionError(f"saw only {seen}")


def test_an_empty_prompt_streamed_is_a_full_empty_message() -> None:
    for seed in range(40):
        agent = StdioAgent(seed, mode=COMMON_PATH)
        c = ScriptedClient(agent)
        c.send(wire.new_session(0))
        c.send(wire.prompt(1, "sess_1", []))
        c.run()
        mine = [u for _, u in updates(c.agent_messages()) if u.get("messageId") == "msg_u_1"]
        assert [u["sessionUpdate"] for u in mine] == ["user_message"] and mine[0]["content"] == []


# -- modes ---------------------------------------------------------------------------------------

RUNS = 100


def test_the_common_path_takes_no_freedom_and_the_default_takes_each() -> None:
    """100 seeded runs of a client that prompts, cancels and answers permissions: under the
    common path, no rejection, no child session, no repeated snapshot or idle, no custom value,
    and every prompt answered; by default, each of them at least once. (About 0.1 s per mode.)"""
    seen: set[str] = set()
    for seed in range(RUNS):
        client, took = prompting_run(StdioAgent(seed, mode=COMMON_PATH), seed)
        assert took == set(), (seed, took)
        for rid in (2, 3, 4):
            answer = client.answer(rid)
            assert answer is not None and "messageId" in answer.get("result", {}), (seed, rid, answer)
        seen |= prompting_run(StdioAgent(seed), seed)[1]
    assert seen == FREEDOMS


@pytest.mark.parametrize("seed", range(0, RUNS, 17))
@pytest.mark.parametrize("common", [False, True])
def test_the_runs_pass_check(seed: int, common: bool, tmp_path: Path) -> None:
    client, _ = prompting_run(StdioAgent(seed, mode=COMMON_PATH) if common else StdioAgent(seed), seed)
    path = tmp_path / "t.ndjson"
    client.write(path)
    assert _check(path)["files"][0]["findings"] == []


def test_the_mode_is_a_filter_of_the_model() -> None:
    """The common path's moves are the model's (a subset of what the same Agent may do)."""
    for seed in range(20):
        agent = StdioAgent(seed, mode=COMMON_PATH)
        c = ScriptedClient(agent)
        c.send(wire.new_session(0))
        c.send(wire.prompt(1, "sess_1", [wire.text("x")]))
        assert agent.agent.prompts[1][0] == "inserted"  # inserted on arrival
        for _ in range(100):
            moves = agent.moves()
            assert set(moves) <= set(agent.agent.enabled())
            if agent.move() is None:
                break


def _agent_cli(argv: list[str]) -> StdioAgent:
    from cli import cmd_agent
    from cli.main import build_parser

    agent, _said = cmd_agent.build(build_parser().parse_args(["agent", *argv]))
    return agent


def test_the_option_and_its_help() -> None:
    assert _agent_cli(["--common-path"]).mode is COMMON_PATH
    assert _agent_cli([]).mode is not COMMON_PATH
    code, out, _ = run_cli(["agent", "--help"])
    assert code == 0 and "--common-path" in out and "every freedom" in out
    code, out, err = run_cli(["agent", "--common-path", "--reading", "tool-updates-after-idle=background"])
    assert code == 2 and out == "" and err.count("\n") == 1 and "tool-updates-after-idle" in err


# -- over standard input and output, through `acp-model record` -----------------------------------


@pytest.mark.skipif(os.name != "posix", reason="the proxy needs POSIX pipes")
@pytest.mark.parametrize("common", [False, True])
def test_a_recorded_session_with_a_batch_passes_check(common: bool, tmp_path: Path) -> None:
    """A client over pipes, behind ``acp-model record --check``: two sessions, a batch, prompts
    (permissions answered as they come), a resume while open, two closes. The live check and
    ``acp-model check`` find nothing failing (nothing at all on the common path); the batch is one
    array line of the transcript, and the echo is the prompt's content byte for byte."""
    out = tmp_path / "t.ndjson"
    # The agent listens 40-60 ms before each move; the client writes as soon as it reads a line,
    # so its lines reach the agent while it listens: the proxy's order is the agent's (a line
    # crossing a move on the wire would be judged in an order the agent never saw).
    agent = [*CLI, "agent", "--seed", "3", "--pace", "40,60", *(["--common-path"] if common else [])]
    proc = subprocess.Popen(
        [*CLI, "record", "--check", "--out", str(out), "--", *agent],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert proc.stdin is not None and proc.stdout is not None
    got: dict[Any, Any] = {}
    lock = threading.Condition()

    def write(msg: Any) -> None:
        with lock:
            proc.stdin.write(wire.json_line(msg).encode())  # type: ignore[union-attr]
            proc.stdin.flush()  # type: ignore[union-attr]

    steps: list[tuple[tuple[Any, ...], list[Any]]] = [
        ((2,), [[wire.request(3, "session/list", {}), wire.notification("_x/ping", {})]]),
        ((3,), [wire.prompt(4, "sess_1", CONTENT), wire.prompt(5, "sess_3", [wire.text("b")])]),
        ((3, "line"), [wire.resume(6, "sess_1", replay=True)]),  # at the agent's next line
        ((4, 5, 6), [wire.close(7, "sess_3")]),
        ((7,), [wire.close(8, "sess_3")]),
        ((8,), [wire.close(9, "sess_1")]),  # all work ends before its answer: nothing left open
    ]
    lines: list[Any] = []

    def next_steps() -> None:
        """Write each step whose answers are in, at once (from the reader, between two lines)."""
        while steps and all(r in got or (r == "line" and lines) for r in steps[0][0]):
            when, msgs = steps.pop(0)
            if "line" not in when:
                lines.clear()
            for m in msgs:
                write(m)

    def read() -> None:
        for raw in proc.stdout:  # type: ignore[union-attr]
            item = json.loads(raw)
            for msg in item if isinstance(item, list) else [item]:
                if msg.get("method") == "session/request_permission":
                    write(wire.permission_selected(msg["id"], "allow"))
                elif "method" not in msg:
                    with lock:
                        got[msg["id"]] = item
                        lock.notify_all()
            with lock:
                next_steps()
                lines.append(item)

    def wait(rid: Any) -> Any:
        with lock:
            assert lock.wait_for(lambda: rid in got, timeout=60), f"no answer to {rid!r}"
            return got[rid]

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        write(wire.initialize(0))
        write(wire.new_session(1))
        write(wire.request(2, "session/new", {"cwd": "/other"}))
        assert wait(2)["result"] == {"sessionId": "sess_3"}
        assert len(wait(3)[0]["result"]["sessions"]) == 2
        for rid in (4, 5, 6, 7, 8, 9):
            wait(rid)
        proc.stdin.close()
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read().decode()  # type: ignore[union-attr]
    assert "Traceback" not in err and "[error]" not in err and "0 errors" in err, err
    records = [json.loads(x) for x in out.read_bytes().splitlines()]
    assert any(isinstance(r.get("message"), list) for r in records if r["from"] == "client")
    assert any(isinstance(r.get("message"), list) for r in records if r["from"] == "agent")
    findings = _check(out)["files"][0]["findings"]  # exit 0: nothing at MUST level
    if common:  # nothing at all; by default a suspected SHOULD (an idle without a stop reason) may be
        assert findings == [] and "no findings" in err, err
    else:
        assert all(f["severity"] != "error" for f in findings), findings
    echoed = [r["message"] for r in records if r["from"] == "agent" and isinstance(r["message"], dict)]
    user = [
        u for sid, u in updates(echoed) if sid == "sess_1" and u["sessionUpdate"].startswith("user_message")
    ]
    raw = out.read_bytes()  # the recorded lines hold the agent's own bytes
    if not user:  # rejected (a freedom of the default): nothing to echo
        assert not common and "error" in got[4]
    elif user[0]["sessionUpdate"] == "user_message":
        assert b'"content":' + dumps(CONTENT) in raw
    else:
        assert all(b'"content":' + dumps(block) in raw for block in CONTENT)
    if common:
        assert not freedoms_in(records)


def freedoms_in(records: list[dict[str, Any]]) -> set[str]:
    c = ScriptedClient(StdioAgent(0))
    c.lines = [(r["from"], r["message"]) for r in records]
    return freedoms(c, {"sess_1", "sess_3"})


# -- the docs page ------------------------------------------------------------------------------

DOC = ROOT / "docs" / "testing-clients.md"


def test_the_docs_page_names_real_faults_and_commands_that_parse() -> None:
    import re
    import shlex

    from cli.main import build_parser
    from simulator.peers.agent import AGENT_FAULTS

    text = DOC.read_text(encoding="utf-8")
    faults = re.findall(r"^\| `([a-z][a-z-]*)` \|", text, re.M)
    assert len(faults) >= 5 and set(faults) <= set(AGENT_FAULTS)
    commands = re.findall(r"^(acp-model .*)$", text, re.M)
    assert any("--common-path" in c for c in commands)
    parser = build_parser()
    for command in commands:
        argv = shlex.split(command)[1:]
        if "--" in argv:
            argv, inner = argv[: argv.index("--") + 1], argv[argv.index("--") + 2 :]
            parser.parse_args(inner)  # the agent command behind the proxy
            argv += ["acp-model", *inner]
        parser.parse_args(argv)


# -- bad input ----------------------------------------------------------------------------------

_KEYS = ["type", "text", "name", "version", "sessionId", "cwd", "prompt", "cursor", "replayFrom"]
_KEYS += ["requestId", "protocolVersion", "info", "outcome", "optionId"]
_METHODS = ["initialize", "session/new", "session/list", "session/prompt", "session/resume"]
_METHODS += ["session/close", "session/cancel", "$/cancel_request", "_x/y"]


def _messages() -> Any:
    from hypothesis import strategies as st

    scalar = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 70000),
        st.text(max_size=5),
        st.sampled_from(["sess_1", "sess_3", "/w", "start", "perm_1", "0", "10"]),
    )
    value = st.recursive(
        scalar,
        lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.sampled_from(_KEYS), c, max_size=4)),
        max_leaves=8,
    )
    msg = st.fixed_dictionaries(
        {"jsonrpc": st.just("2.0"), "method": st.sampled_from(_METHODS)},
        optional={"id": scalar, "params": value, "result": value},
    )
    return st.lists(st.one_of(msg, st.lists(msg, max_size=3), value), max_size=8)


def test_any_input_gets_answers_never_an_exception() -> None:
    """Messages (and batches) of every shape, well formed or not: the agent answers with JSON
    and keeps moving, never raising."""
    from hypothesis import given
    from hypothesis import strategies as st

    @given(_messages(), st.integers(0, 5))
    def run(msgs: list[Any], seed: int) -> None:
        agent = StdioAgent(seed)
        agent.receive(dumps(wire.new_session(0)))
        for msg in msgs:
            for out in agent.receive(dumps(msg)):
                assert json.loads(dumps(out)) == out
            for _ in range(3):
                agent.move()

    run()
