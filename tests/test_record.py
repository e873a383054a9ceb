"""``acp-model record``: a transparent proxy that records what passes (real processes, small runs)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from simulator.harness.proxy import LinePump, entry
from simulator.peers import wire
from tests.check_support import run_cli

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the proxy needs POSIX pipes and signals")

ROOT = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "cli"]
SCRIPT = (
    b"".join(
        wire.json_line(m).encode()
        for m in (
            wire.initialize(0),
            wire.new_session(1),
            wire.prompt(2, "sess_1", [wire.text("hi")]),
            wire.notification("_vendor/ping", {"sessionId": "sess_1"}),
        )
    )
    + b"not json at all\n"
)
CLOSE = wire.json_line(wire.close(3, "sess_1")).encode()


def _session(command: list[str], timeout: float = 60) -> bytes:
    """Send SCRIPT, wait for the prompt's answer, close the session, wait for its answer, end."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(SCRIPT)
    proc.stdin.flush()
    got = b""
    deadline = time.monotonic() + timeout
    sent_close = False
    try:
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            got += line
            msg = json.loads(line)
            if msg.get("id") == 2 and not sent_close:
                proc.stdin.write(CLOSE)
                proc.stdin.flush()
                sent_close = True
            if msg.get("id") == 3:
                proc.stdin.close()
        got += proc.stdout.read()
        assert proc.wait(timeout) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return got


def test_record_is_transparent(tmp_path: Path) -> None:
    """Each side gets the bytes the other sent, measured on both sides of the proxy in one run
    (``tee`` on the Agent's side: what it received and what it wrote), and the transcript holds
    exactly what was sent, in an order where each answer follows its request. (Not against a run
    without the proxy: the seeded agent's moves depend on when each line reaches it, which the
    proxy's recording and a loaded machine change.)"""
    agent = [*CLI, "agent", "--seed", "4", "--pace", "15,25"]
    seen = tmp_path / "agent.in"
    wrote = tmp_path / "agent.out"
    out = tmp_path / "t.ndjson"
    teed = ["sh", "-c", f'tee "{seen}" | "$@" | tee "{wrote}"', "sh", *agent]
    proxied = _session([*CLI, "record", "--out", str(out), "--", *teed])
    assert proxied == wrote.read_bytes()  # what the client received is what the agent wrote
    assert seen.read_bytes() == SCRIPT + CLOSE  # what the agent received is what the client sent
    records = [json.loads(line) for line in out.read_bytes().splitlines()]
    client = [r for r in records if r["from"] == "client"]
    agent_side = [r for r in records if r["from"] == "agent"]
    assert [r["message"] for r in client[:4]] == [json.loads(x) for x in SCRIPT.splitlines()[:4]]
    assert client[4] == {"from": "client", "unparsed": "not json at all"}
    assert [
        json.dumps(r["message"], separators=(",", ":")).encode() for r in agent_side
    ] == proxied.splitlines()
    position = {
        r["message"]["id"]: i
        for i, r in enumerate(records)
        if r["from"] == "client" and "method" in r.get("message", {}) and "id" in r["message"]
    }
    answers = 0
    for i, r in enumerate(records):
        m = r.get("message", {})
        if r["from"] == "agent" and "method" not in m and m["id"] is not None:  # null: a parse error
            assert position[m["id"]] < i  # every answer after its request
            answers += 1
    assert answers == 4  # initialize, session/new, the prompt, session/close


def test_check_reports_live_and_the_exit_code_is_the_agents(tmp_path: Path) -> None:
    fake = (
        "import sys\n"
        "print('garbage out', flush=True)\n"
        'print(\'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s",'
        '"update":{"sessionUpdate":"notice","severity":"info","title":""}}}\', flush=True)\n'
        "sys.stdin.read()\n"
        "sys.exit(3)\n"
    )
    out = tmp_path / "t.ndjson"
    done = subprocess.run(
        [*CLI, "record", "--check", "--out", str(out), "--", sys.executable, "-c", fake],
        input=b"",
        capture_output=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 3
    assert done.stdout.splitlines()[0] == b"garbage out"  # forwarded unchanged
    err = done.stderr.decode()
    assert "t.ndjson:1 input.not-jsonrpc" in err and "not JSON" in err
    assert "NOTICE-02" in err and "summary:" in err and "Traceback" not in err
    assert json.loads(out.read_bytes().splitlines()[0]) == {"from": "agent", "unparsed": "garbage out"}


def test_signals_are_forwarded_and_lines_are_flushed(tmp_path: Path) -> None:
    fake = (
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda *a: sys.exit(7))\n"
        "print('ready', flush=True)\n"
        "time.sleep(30)\n"
    )
    out = tmp_path / "t.ndjson"
    proc = subprocess.Popen(
        [*CLI, "record", "--out", str(out), "--", sys.executable, "-c", fake],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"ready\n"
        assert out.read_bytes() == entry("agent", b"ready")  # on disk before the agent ends
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 7
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_an_agent_killed_by_a_signal(tmp_path: Path) -> None:
    done = subprocess.run(
        [*CLI, "record", "--out", str(tmp_path / "t.ndjson"), "--", "sh", "-c", "kill -KILL $$"],
        input=b"",
        capture_output=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 128 + signal.SIGKILL


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--out", "{tmp}/t.ndjson"], "no agent command"),
        (["--out", "{tmp}/t.ndjson", "--", "/no/such/agent"], "/no/such/agent: no such command"),
        (["--out", "{tmp}", "--", "true"], "is a directory"),
    ],
)
def test_unusable_options(tmp_path: Path, argv: list[str], needle: str) -> None:
    code, out, err = run_cli(["record", *[a.format(tmp=tmp_path) for a in argv]], stdin=b"")
    assert code == 2
    assert out == "" and err.count("\n") == 1 and needle in err


def test_line_pump_records_each_line_before_its_end_is_passed_on() -> None:
    events: list[Any] = []
    pump = LinePump(
        lambda line, cut: events.append(("record", line, cut)), lambda b: events.append(("fwd", b)), limit=8
    )
    pump.feed(b"ab")
    pump.feed(b"c\nde")
    pump.feed(b"0123456789\nx")
    pump.end()
    assert events == [
        ("fwd", b"ab"),
        ("record", b"abc", None),
        ("fwd", b"c\n"),
        ("fwd", b"de"),
        ("record", b"de012345", 12),
        ("fwd", b"0123456789\n"),
        ("fwd", b"x"),
        ("record", b"x", None),
    ]
    assert b"".join(e[1] for e in events if e[0] == "fwd") == b"abc\nde0123456789\nx"


def test_record_kinds() -> None:
    assert entry("agent", b' {"a": 1} ') == b'{"from":"agent","message":{"a": 1}}\n'
    assert json.loads(entry("client", b"\xff bad")) == {"from": "client", "unparsed": "\\xff bad"}
    assert json.loads(entry("agent", b"{}", 99)) == {"from": "agent", "unparsed": "{}", "bytes": 99}


_RUNNING = (
    '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s",'
    '"update":{"sessionUpdate":"state_update","state":"running"}}}'
)


@pytest.mark.parametrize("exits_first", [True, False])
def test_a_recording_the_agent_ended_is_judged_complete(tmp_path: Path, exits_first: bool) -> None:
    """The Agent reports running and its output ends. When it exited while the Client was still
    connected, nothing more can come: the idle it owed (4. Report completion) is a breach at the
    last line. When the Client left first, the Agent's exit may be its answer to that: the
    obligation stays open (information)."""
    wait = "sys.stdin.readline()" if exits_first else "sys.stdin.read()"
    fake = f"import sys\nsys.stdin.readline()\nprint({_RUNNING!r}, flush=True)\n{wait}\n"
    out = tmp_path / "t.ndjson"
    proc = subprocess.Popen(
        [*CLI, "record", "--check", "--out", str(out), "--", sys.executable, "-c", fake],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert proc.stdin is not None and proc.stderr is not None
    proc.stdin.write(wire.json_line(wire.prompt(2, "s", [wire.text("hi")])).encode())
    proc.stdin.flush()
    if exits_first:
        proc.stdin.write(wire.json_line(wire.notification("_vendor/ping", {"sessionId": "s"})).encode())
        proc.stdin.flush()
        assert proc.wait(60) == 0
        proc.stdin.close()
    else:
        time.sleep(0.5)
        proc.stdin.close()
        assert proc.wait(60) == 0
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if proc.stdout is not None:
        proc.stdout.close()
    assert ("FG-05" in err and "complete transcript" in err) is exits_first, err
    assert "Traceback" not in err


def test_the_live_summary_names_the_readings_in_force() -> None:
    """``record`` prints ``summary_text`` of its live check: a finding whose verdict depends on a
    reading names the alternative in force, as ``check`` does (it named the default)."""
    from properties.check_report import summary_text
    from properties.engine import MonitorSet
    from properties.live import LiveCheck
    from tests.wire_dsl import answer, prompt, say, state, user

    lines = [prompt(1), state("running"), user("u1"), say("a1"), answer(1, "u1"), state("idle", stop="weird")]
    live = LiveCheck(monitors=MonitorSet(readings={"future-stop-reason": "may-be-future"}))
    for sender, msg in lines:
        live.push(json.dumps({"from": sender, "message": msg}).encode() + b"\n")
    live.close()
    text = summary_text("rec.ndjson", live)
    assert "(reading future-stop-reason=may-be-future)" in text


@pytest.mark.parametrize("stopped_by_us", [False, True])
def test_an_agent_the_user_stopped_through_record_owes_nothing_it_was_stopped_from(
    tmp_path: Path, stopped_by_us: bool
) -> None:
    """Review51 A1: an Agent that exits on its own with the initialize unanswered broke INTRO-02
    (the recording is complete); one that a signal sent to ``record`` stopped (passed on to it)
    leaves the request open, as information."""
    fake = (
        "import signal, sys\n"
        "signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))\n"
        "sys.stdin.readline()\n"
        'print(\'{"jsonrpc":"2.0","method":"_vendor/hello"}\', flush=True)\n'
        + ("sys.stdin.readline()\n" if stopped_by_us else "")
    )
    proc = subprocess.Popen(
        [*CLI, "record", "--check", "--out", str(tmp_path / "t.ndjson"), "--", sys.executable, "-c", fake],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(wire.json_line(wire.initialize(0)).encode())
        proc.stdin.flush()
        assert b"_vendor/hello" in proc.stdout.readline()
        if stopped_by_us:
            proc.send_signal(signal.SIGTERM)
        proc.wait(60)  # the Client stays connected until record ends
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = err.decode()
    assert "INTRO-02" in text, text
    assert ("[error]" in text) is not stopped_by_us, text
