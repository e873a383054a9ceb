"""Driving a real Agent with the model's Client: one run and its live check.

Theory of operation
-------------------
A *peer* is the Agent: ``send(bytes)``, ``receive(timeout)`` (the complete lines it wrote, ``[]``
when it wrote none within ``timeout`` seconds, ``None`` once its output ended), ``written()``
(the complete lines it has already written, without waiting) and ``stop()``.
``simulator.harness.child.ProcessPeer`` starts the Agent command (a fresh process per run, in a
process group of its own); ``tests.scripted_client.InProcessPeer`` runs the simulated Agent in
process (tests). A peer whose ``lockstep`` is true moves in the driver's turns: each
``receive`` is one turn, whose lines are all the Agent writes before it reads what the driver
sends next, and ``quiescent`` says the last turn wrote nothing because the Agent has no move
left (``acp-model agent`` does this: ``simulator.harness.serve``). Against such a peer nothing
depends on time, so a seed gives the same run on any machine, under any load, in any worker.

``run_once`` plays one run. Every line either side writes is recorded (``simulator.harness.proxy``: the
transcript format, in the order the driver sent and read them) and judged live by the same
reader and monitors as ``acp-model check`` (``properties.live.LiveCheck``). The run:

1. ``initialize``, answered within ``startup`` seconds of the start (an Agent process may take
   a while to load; at least ``timeout``), and ``session/new``, answered within ``timeout``;
2. up to ``steps`` choice points: the driver takes the Agent's next batch of lines (or notes
   ``silence`` seconds without a line), then makes one choice
   (``simulator.peers.driver_client.DriverClient``), drawn with the run's seed or taken from a
   script. The driver acts right after the Agent
   wrote, or after a silence, so its messages reach an Agent waiting for input: the transcript
   order is then the Agent's own order. Lines the Agent had written by the time the driver
   sends are taken first (``written``): the Agent wrote them before it could read what is sent.
   The driver cannot see the Agent pause, though: an Agent that writes one move's lines with
   several writes may be read between them, and what the driver sends then crosses the rest
   in flight. Recorded after it, they could make an ordering finding the Agent did not cause
   (an ``end_turn`` idle crossing a ``session/close`` reads as TRANS-04, the idle of work the
   close cancelled), so the live check takes the driver's lines in the order it forwarded
   them (``properties.engine``, "Client order": such a finding is a suspicion until the Agent
   answers a request sent at or after that line), except against a lockstep Agent, which
   reads them only between its turns;
3. settling: permission requests still unanswered are allowed; then the driver waits until no
   obligation is open and each of its requests is answered. An Agent that sends nothing for
   ``timeout`` seconds meanwhile is judged quiescent: the monitors' "eventually" rules become
   breaches, whose explanation states the timeout (a request of the driver still unanswered
   among them: INTRO-02, or a prompt's own rules).
   A lockstep Agent is judged quiescent as soon as a turn says it has no move left, and a
   lockstep turn may take up to ``timeout`` (``silence`` does not cut it short).

A run ends early at the first finding that fails it (``fail_on`` as in ``check``; rules of
the Client's side that the driver breaks on purpose excepted), when the Agent's output ends
(``drive.agent-exited``, and its open obligations are breaches; but an Agent that exited with an
error, a non-zero status or a signal, crashed: ``drive.agent-crashed`` states the status and the
last lines of its standard error, and its open obligations stay open, for a crash is not a
protocol finding; a run that ends otherwise judges a session it closed as complete: what that
session still owes is a breach at the last line, ``properties.live.closed_sessions``), at a
request of the driver
unanswered within ``timeout`` (``drive.no-answer``), or past ``max_messages`` Agent lines
(``drive.flood``).

Shrinking a failing run is ``simulator.harness.drive_shrink``.

Must not know: argument parsing, how reports are printed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from orjson import loads as _loads

from model.elicitation import MODES as ELICITATION_MODES
from properties.checking import FAIL_SEVERITIES
from properties.engine import MonitorSet
from properties.findings import Finding
from properties.live import LiveCheck, closed_sessions
from simulator.harness.child import status_text
from simulator.harness.proxy import MAX_LINE_BYTES, TranscriptWriter, entry
from simulator.harness.settings import Settings
from simulator.peers import wire
from simulator.peers.driver_client import CLIENT_RULES_ON_PURPOSE, Choice, Chooser, DriverClient

TRANSIT_WAITS = 10
"""How many more waits a request's answer may take while the Agent is in the middle of writing
a line (each wait with bytes of it), so that a line trickling forever still ends the run."""


class Peer(Protocol):
    def send(self, data: bytes) -> None: ...

    def receive(self, timeout: float) -> list[bytes] | None: ...

    def written(self) -> list[bytes]: ...

    def stop(self) -> str: ...


@dataclass
class RunResult:
    choices: list[Choice] = field(default_factory=list)
    """The choices actually made (a replayable script)."""
    lines: list[bytes] = field(default_factory=list)
    """The transcript, one line each (with its line feed)."""
    findings: list[Finding] = field(default_factory=list)
    """Every finding of the run (rule, input and driver findings; open obligations excluded)."""
    failing: list[Finding] = field(default_factory=list)
    open: list[Finding] = field(default_factory=list)
    messages: int = 0
    stop: str = ""
    ended: str = ""
    seconds: float = 0.0
    unparsed: list[int] = field(default_factory=list)
    """Transcript lines recorded as ``unparsed`` (not JSON)."""
    crashed: str = ""
    """How the Agent ended when it crashed (an error status while the driver was connected:
    ``exit code N`` or ``ended by signal N``), else empty."""
    stderr_tail: list[str] = field(default_factory=list)
    """The last lines of a crashed Agent's standard error."""
    lockstep: bool = False
    """Whether the Agent moved in the driver's turns (then the run depends on its seeds only)."""

    @property
    def rules(self) -> list[str]:
        """The rules of the failing findings, each once, in the order first broken."""
        return list(dict.fromkeys(f.rule for f in self.failing))


def transcript_item(line: bytes) -> tuple[str, Any] | None:
    """(sender, message) of a transcript line that records a message, else None."""
    try:
        obj = _loads(line)
    except (ValueError, RecursionError):
        return None
    if type(obj) is dict and "message" in obj and obj.get("from") in ("client", "agent"):
        return obj["from"], obj["message"]
    return None


CRASHED = "drive.agent-crashed"
"""The finding of an Agent that exited with an error while the driver was connected."""


def fails(finding: Finding, fail_on: str) -> bool:
    """Whether a finding ends a drive run: breaches at the failing level, not open obligations
    and not suspicions (a conforming Agent may make one: the wire cannot prove it)."""
    if finding.kind in ("open", "suspect") or finding.severity not in FAIL_SEVERITIES[fail_on]:
        return False
    if finding.rule in CLIENT_RULES_ON_PURPOSE:
        return False
    if finding.kind == "rule":
        from properties.catalogue import RULES_BY_ID

        rule = RULES_BY_ID.get(finding.rule)
        return rule is None or rule.side != "client"
    return True


class _Run:
    def __init__(self, peer: Peer, settings: Settings) -> None:
        self.peer = peer
        self.s = settings
        self.result = RunResult()
        # (the order of the Client lines: ``take``)
        self.live = LiveCheck(monitors=MonitorSet(readings=settings.readings, client_order="forwarded"))
        self.writer = TranscriptWriter(None, self.live)
        self.client = DriverClient()
        self.answers: dict[Any, Any] = {}  # our request id -> the Agent's response
        self.awaiting: str | None = None
        """The request whose answer the driver is waiting for (None: it is not waiting)."""
        self.quiet = False
        """Whether the last turn wrote nothing and nothing was sent since (``idle``)."""

    # -- lines -----------------------------------------------------------------------------------
    def _keep(self, line: bytes) -> None:
        self.result.lines.append(line)
        self.writer.write(line)

    def send(self, msgs: list[dict[str, Any]]) -> None:
        if msgs:  # the Agent wrote these lines before it could read ``msgs``: they come first
            self.take(self.peer.written())
            self.quiet = False
        for msg in msgs:
            line = wire.json_line(msg).encode()
            self._keep(entry("client", line[:-1]))
            self.peer.send(line)

    def take(self, lines: list[bytes]) -> None:
        # The driver records its lines in the order it forwarded them (``properties.engine``,
        # "Client order"): one may cross a line the Agent was writing. A lockstep Agent reads
        # them only between its turns, so then they are in its receive order (its first line
        # says which: ``ProcessPeer.lockstep``).
        if lines and self.live.monitors.forwarded == self.lockstep:
            self.live.monitors.order_clients("received" if self.lockstep else "forwarded")
        for raw in lines:
            self.result.messages += 1
            self._keep(entry("agent", raw))
            try:
                msg = _loads(raw)
            except (ValueError, RecursionError):
                continue
            if type(msg) is dict and "method" not in msg and "id" in msg:
                self.answers.setdefault(msg["id"], msg)
            self.client.receive(msg)

    @property
    def lockstep(self) -> bool:
        return bool(getattr(self.peer, "lockstep", False))

    @property
    def idle(self) -> bool:
        """Whether the Agent said it has no move left (a lockstep turn that wrote nothing) and
        the driver sent nothing since."""
        return self.lockstep and self.quiet

    def silent(self) -> str:
        """How the Agent was found quiescent, for the explanations of what it still owed."""
        if self.idle:
            return "the agent had no move left"
        return f"the agent sent nothing for {self.s.timeout:g} s"

    def pump(self, timeout: float) -> bool:
        """Take the Agent's next lines (waiting up to ``timeout``; a lockstep turn up to the
        run's timeout at least); False once its output ended (the run then ends:
        ``drive.agent-exited``)."""
        got = self.peer.receive(max(timeout, self.s.timeout) if self.lockstep else timeout)
        if got is None:
            self._end_with(
                "drive.agent-exited",
                "the agent's output ended while the driver was still connected",
                "agent exited",
            )
            return False
        self.take(got)
        self.quiet = not got and bool(getattr(self.peer, "quiescent", False))
        return True

    # -- judging ---------------------------------------------------------------------------------
    def failing(self) -> bool:
        """Whether a finding ends the run now (its stop is then ``flood`` or ``finding``)."""
        if self.result.messages > self.s.max_messages:
            explanation = f"the agent wrote more than {self.s.max_messages} lines in one run"
            self._end_with("drive.flood", explanation, "flood")
            return True
        findings, _ = self.live.snapshot()
        if any(fails(f, self.s.fail_on) for f in findings):
            self.result.stop = self.result.stop or "finding"
            return True
        return False

    def _end_with(self, rule: str, explanation: str, stop: str, line: int | None = None) -> None:
        """End the run with a finding of the driver's own (at ``line``, by default the last)."""
        at = line or self.writer.lines or None
        self.result.findings.append(Finding(rule, "MUST", at, None, explanation, "input"))
        self.result.stop = stop

    def request(self, msg: dict[str, Any], what: str, wait: float | None = None) -> dict[str, Any] | None:
        """Send a request and wait ``wait`` seconds (default: the timeout) for its answer (None:
        a finding ended the run)."""
        self.send([msg])
        wait = self.s.timeout if wait is None else wait
        deadline = time.monotonic() + wait
        heard = getattr(self.peer, "bytes_read", 0)
        latest = deadline + TRANSIT_WAITS * wait
        self.awaiting = what
        while msg["id"] not in self.answers:
            left = deadline - time.monotonic()
            more = self._in_transit(heard) if left <= 0 and deadline < latest else None
            if more is not None:  # a line still arriving is no silence
                heard, deadline = more, min(time.monotonic() + wait, latest)
                continue
            if left <= 0 or self.idle:
                why = f": {self.silent()}" if self.idle else f" within {wait:g} s"
                self._end_with("drive.no-answer", f"no answer to {what}{why}", "timeout")
                return None
            if not self.pump(min(left, 0.5)) or self.failing():
                return None
        self.awaiting = None
        answer: dict[str, Any] = self.answers[msg["id"]]
        return answer

    def _in_transit(self, heard: int) -> int | None:
        """The bytes the Agent has written, when that is more than ``heard`` and it is in the
        middle of a line no longer than a transcript takes; else None (README: a request goes
        unanswered when the Agent stays silent; a long answer on a slow pipe is not silence, an
        endless line is cut by the limit)."""
        partial = getattr(self.peer, "partial_line", None)
        read: int = getattr(self.peer, "bytes_read", heard)
        return read if partial is not None and read != heard and 0 < partial() <= MAX_LINE_BYTES else None

    # -- the run ---------------------------------------------------------------------------------
    def handshake(self) -> bool:
        startup = max(self.s.startup, self.s.timeout)
        modes = ELICITATION_MODES if self.s.elicitation else ()
        if self.request(wire.initialize("drive-init", elicitation=modes), "initialize", startup) is None:
            return False
        answer = self.request(wire.new_session("drive-new"), "session/new")
        if answer is None:
            return False
        result = answer.get("result")
        sid = result.get("sessionId") if isinstance(result, dict) else None
        if not isinstance(sid, str):
            self._end_with("drive.no-session", "session/new was not answered with a sessionId", "no session")
            return False
        self.client.sid = sid
        return True

    def play(self, next_choice: Callable[[list[Choice]], Choice | None]) -> bool:
        for _ in range(self.s.steps):
            if not self.pump(self.s.silence) or self.failing():
                return False
            choice = next_choice(self.client.enabled())
            if choice is None:
                break
            self.result.choices.append(choice)
            self.send(self.client.do(choice))
        return True

    def settle(self) -> None:
        deadline = time.monotonic() + self.s.timeout
        while True:
            while self.client.client.perms:
                self.send(self.client.do(["allow", 0]))
            if self.failing():
                return
            if not self.live.open_now():  # (a request of the driver unanswered is open too: INTRO-02)
                self.result.stop = "settled"
                return
            left = deadline - time.monotonic()
            if left <= 0 or self.idle:
                self.result.stop = "timeout"
                self.live.close(quiescent=True)
                return
            before = self.result.messages
            if not self.pump(min(left, self.s.silence)):
                return
            if self.result.messages != before:
                deadline = time.monotonic() + self.s.timeout

    def crash(self) -> None:
        """Report an Agent that exited with an error while connected as a crash (its status and
        the last line of its standard error), not by the protocol findings its silence makes."""
        code = getattr(self.peer, "returncode", None)
        if self.result.stop != "agent exited" or not code or getattr(self.peer, "killed", False):
            return
        r = self.result
        r.crashed = status_text(code)
        tail = getattr(self.peer, "stderr_tail", None)
        r.stderr_tail = list(tail()) if callable(tail) else []
        if self.awaiting is not None:
            when = f"before answering {self.awaiting}"
        else:
            when = f"during the run, after {len(r.choices)} client choice(s)"
        last = f"; last line of its standard error: {r.stderr_tail[-1]}" if r.stderr_tail else ""
        r.findings = [f for f in r.findings if f.rule != "drive.agent-exited"]
        explanation = f"the agent crashed ({r.crashed}) {when}{last}"
        self._end_with(CRASHED, explanation, "agent crashed")

    def finish(self) -> RunResult:
        r = self.result
        r.ended = self.peer.stop()
        self.crash()
        self.live.close(quiescent=r.stop == "agent exited", complete=closed_sessions(self.live.monitors))
        findings, opened = self.live.snapshot()
        why = (
            f"(still open: {self.silent()})"
            if r.stop == "timeout"
            else "(still open when the agent's output ended)"
        )
        fixed = [
            replace(f, explanation=f.explanation.replace("(still open at quiescence)", why)) for f in findings
        ]
        r.findings = fixed + r.findings
        r.failing = [f for f in r.findings if fails(f, self.s.fail_on)]
        r.open = opened
        r.unparsed = list(self.writer.unparsed)
        r.lockstep = self.lockstep
        return r


def run_once(
    peer: Peer,
    settings: Settings,
    *,
    seed: int | None = None,
    script: list[Choice] | None = None,
) -> RunResult:
    """One run: choices drawn with ``seed``, or taken from ``script`` (disabled ones skipped)."""
    started = time.monotonic()
    run = _Run(peer, settings)
    todo, chooser = list(script or ()), Chooser(seed)

    def next_choice(enabled: list[Choice]) -> Choice | None:
        if script is None:
            return chooser.choose(run.client, enabled)
        while todo:
            choice = todo.pop(0)
            if choice in enabled:
                return choice
        return None

    try:
        if run.handshake() and run.play(next_choice) and not run.result.stop:
            run.settle()
    finally:
        result = run.finish()
    result.seconds = time.monotonic() - started
    return result
