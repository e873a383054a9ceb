"""Seeded bugs: faulty agents and clients, each written to break one rule, and the runner that
proves the checker catches every one of them.

Theory of operation
-------------------
A mutant is a named fault of the simulated Agent (``simulator.agent.AGENT_FAULTS``), of the
Client's view (``properties.clientview.CLIENT_FAULTS``) or of what the Client sends
(``simulator.client.CLIENT_SIDE_FAULTS``), with the catalogue rule it is meant to break. The
runner executes every named scenario plus a fixed budget of seeded random walks with the fault
switched on and all monitors attached; agent and client-send faults are judged on the wire
(monitor findings), client-view faults by comparing the faulty view with the reference view
after every step. A mutant is caught when some run reports its intended rule; the shortest
such transcript is kept (and can be written out as a corpus for ``acp-model check``).
The same runs without any fault must produce no finding at all.

Must not know: how monitors decide; how transcripts are written to disk.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from model.registry import BY_NAME as TABLES
from properties.engine import MonitorSet
from properties.findings import Finding
from simulator import deviations
from simulator.config import DEFAULT, MUTANT_STEPS, MUTANT_WALKS, Config
from simulator.scenarios import SCENARIOS
from simulator.schedulers import Run, random_walk, scripted
from simulator.world import Line

FREEDOMS = frozenset({"pause", "future", "bg_permission", "multi_request", "custom_stop", "extras"})
"""Features whose seeded bugs are their own mutants (below); the other mutants walk without them,
so that a fixed budget of walks still reaches the branch each was written for."""
FOCUSED = DEFAULT.with_(features=DEFAULT.features - FREEDOMS)


@dataclass(frozen=True)
class Mutant:
    name: str
    side: str  # "agent" or "client"
    intended_rule: str
    description: str
    cfg: Config = field(default=FOCUSED)
    faults: tuple[str, ...] = ()
    """The faults switched on (default: the one named like the mutant)."""
    off_wire: str = ""
    """Why this bug never shows on the wire, so that ``acp-model drive`` cannot find it in
    ``acp-model agent --fault NAME`` (empty: it shows; the monitors see every other one)."""

    @property
    def switched_on(self) -> frozenset[str]:
        return frozenset(self.faults or (self.name,))


HELD_NOT_WITHDRAWN_OFF_WIRE = (
    "the model's prompt table refuses to insert a prompt that a session/cancel covered, so the "
    "simulated Agent never sends that insertion (acp-model agent notes the refusal on standard "
    "error); and were it sent, its user message and success answer after the cancel are what an "
    "Agent that inserted the prompt before the cancel arrived sends too, which conforms (a proxy "
    "cannot see when a prompt was inserted): CANCEL-02 is broken on the wire only by an error "
    "answer other than -32800, and acp-model decidability rates this bug not decidable"
)

BUSY_REFUSAL_OFF_WIRE = (
    "the Agent's reason for a refusal is not on the wire: acp-model check reports a -32600 refusal "
    "while work is active as a suspicion (a warning, which drive does not count), and only the "
    "model, which knows why the simulated Agent refused, proves the breach (the prompt table's "
    "guard busy_only); acp-model decidability rates this bug not decidable"
)

BY_DEVIATION = ""
"""``Mutant.intended_rule`` of a seeded bug stated as a deviation: the rule is the deviation's
(``deviations.rule``: its table cell's, its obligation's or the one it names), stated there once."""


def _resolved(m: Mutant) -> Mutant:
    if m.intended_rule != BY_DEVIATION:
        return m
    d = next(d for d in deviations.DEVIATIONS if d.name == m.name)
    return replace(m, intended_rule=deviations.rule(d, TABLES))


MUTANTS: tuple[Mutant, ...] = tuple(
    map(
        _resolved,
        (
            Mutant(
                "error-after-insert",
                "agent",
                BY_DEVIATION,
                "answers an inserted prompt with an error response",
            ),
            Mutant(
                "no-idle-after-cancel",
                "agent",
                BY_DEVIATION,
                "never reports idle after cancelling active work",
            ),
            Mutant("cancel-as-end-turn", "agent", BY_DEVIATION, "confirms a cancellation with end_turn"),
            Mutant(
                "reuse-message-id", "agent", BY_DEVIATION, "gives two inserted prompts the same messageId"
            ),
            Mutant("list-before-announce", "agent", BY_DEVIATION, "lists a terminal it has not announced"),
            Mutant(
                "remove-before-exit",
                "agent",
                BY_DEVIATION,
                "removes an item from the background list before it finished",
                DEFAULT.with_(features=frozenset({"terminal", "bg_tool", "cancel", "thought"})),
            ),
            Mutant(
                "update-after-idle", "agent", BY_DEVIATION, "sends output of the ended work after its idle"
            ),
            Mutant(
                "answer-before-insert",
                "agent",
                BY_DEVIATION,
                "answers a prompt but never reports the user message",
            ),
            Mutant(
                "user-message-after-reject",
                "agent",
                BY_DEVIATION,
                "reports a user message for a rejected prompt",
            ),
            Mutant(
                "user-message-ahead",
                "agent",
                BY_DEVIATION,
                "reports a user message before the prompt it is later returned for was received",
                FOCUSED.with_(prompts=2),
            ),
            Mutant(
                "no-running-on-start",
                "agent",
                BY_DEVIATION,
                "starts foreground work without reporting running",
                FOCUSED.with_(features=FOCUSED.features - {"compaction", "notice"}),
            ),
            Mutant(
                "no-resume-running", "agent", BY_DEVIATION, "resumes blocked work without reporting running"
            ),
            Mutant(
                "drop-background-field",
                "agent",
                BY_DEVIATION,
                "ends work with an idle without the background list",
            ),
            Mutant("reopen-tool-call", "agent", BY_DEVIATION, "reports in_progress on a completed tool call"),
            Mutant(
                "compaction-never-ends", "agent", BY_DEVIATION, "leaves a reported compaction in progress"
            ),
            Mutant("reuse-compaction-id", "agent", BY_DEVIATION, "reuses a finished compaction's ID"),
            Mutant("notice-empty-title", "agent", BY_DEVIATION, "sends a notice with an empty title"),
            Mutant(
                "response-before-snapshot",
                "agent",
                BY_DEVIATION,
                "answers session/resume before the state snapshot",
            ),
            Mutant(
                "replay-new-ids", "agent", "ACC-11", "replays retained user messages under new message IDs"
            ),
            Mutant(
                "cancel-leaves-tool-open",
                "agent",
                BY_DEVIATION,
                "confirms a cancellation while a tool call of the cancelled work has no final status",
                FOCUSED.with_(prompts=1, features=frozenset({"cancel", "thought"})),
            ),
            Mutant(
                "late-approval-runs",
                "agent",
                BY_DEVIATION,
                "leaves a cancelled tool call pending and runs it when its permission is approved late",
                FOCUSED.with_(
                    prompts=1,
                    outputs=0,
                    cancel_requests=0,
                    closes=0,
                    resumes=0,
                    reattaches=0,
                    losses=0,
                    futures=0,
                    hooks=0,
                    reruns=0,
                    notices=0,
                    usages=0,
                    compactions=0,
                    background=0,
                    features=frozenset({"permission", "cancel"}),
                ),  # a race (the approval must reach the Agent after its cancelled idle): few other moves
            ),
            Mutant(
                "busy-refusal",
                "agent",
                BY_DEVIATION,
                "refuses a held prompt only because foreground work is active",
                off_wire=BUSY_REFUSAL_OFF_WIRE,
            ),
            Mutant(
                "error-with-live-tools",
                "agent",
                BY_DEVIATION,
                "reports idle error while a tool call is unfinished",
                FOCUSED.with_(features=frozenset({"fail", "thought"})),
            ),
            Mutant(
                "held-not-withdrawn",
                "agent",
                BY_DEVIATION,
                "inserts a prompt that a session/cancel covered",
                FOCUSED.with_(prompts=2, features=frozenset({"hold", "cancel"})),
                off_wire=HELD_NOT_WITHDRAWN_OFF_WIRE,
            ),
            Mutant("usage-no-size", "agent", BY_DEVIATION, "sends a usage_update without size"),
            Mutant(
                "list-tool-and-terminal",
                "agent",
                BY_DEVIATION,
                "lists a tool call whose only live work is a listed terminal",
                DEFAULT.with_(features=frozenset({"terminal", "thought"})),
            ),
            Mutant(
                "custom-stop-reason-no-underscore",
                "agent",
                BY_DEVIATION,
                "ends with an unknown stop reason without `_`",
            ),
            Mutant("no-idle-at-end", "agent", BY_DEVIATION, "ends foreground work without reporting idle"),
            Mutant(
                "terminal-reused",
                "agent",
                BY_DEVIATION,
                "starts a second terminal under an exited terminal's ID",
                FOCUSED.with_(
                    background=2,
                    prompts=3,
                    features=FOCUSED.features - {"bg_tool", "subagent", "fail", "pause", "compaction"},
                ),
            ),
            Mutant(
                "session-message-no-id", "agent", BY_DEVIATION, "sends a session_message without messageId"
            ),
            Mutant(
                "list-twice",
                "agent",
                BY_DEVIATION,
                "names an item it already lists a second time in a background list",
                DEFAULT.with_(features=frozenset({"terminal", "bg_tool", "thought"})),
            ),
            Mutant("never-answer-inserted", "agent", BY_DEVIATION, "never answers an inserted prompt"),
            Mutant(
                "response-without-message-id", "agent", BY_DEVIATION, "answers a prompt without messageId"
            ),
            Mutant("answer-twice", "agent", BY_DEVIATION, "sends two success responses to one prompt"),
            Mutant(
                "user-message-wrong-id", "agent", BY_DEVIATION, "reports the user message under another ID"
            ),
            Mutant(
                "withdraw-wrong-code",
                "agent",
                BY_DEVIATION,
                "answers a prompt withdrawn by $/cancel_request with an error other than -32800",
            ),
            Mutant(
                "close-withdraw-wrong-code",
                "agent",
                BY_DEVIATION,
                "answers a prompt stopped by session/close with an error other than -32800",
            ),
            Mutant("silent-reject", "agent", BY_DEVIATION, "rejects a prompt without sending any response"),
            Mutant(
                "chunk-no-message-id", "agent", BY_DEVIATION, "sends an agent message chunk without messageId"
            ),
            Mutant("compaction-no-status", "agent", BY_DEVIATION, "starts a compaction with no status"),
            Mutant(
                "custom-running-state",
                "agent",
                BY_DEVIATION,
                "reports a custom state where running is required (the Client advertised no custom states)",
                FOCUSED.with_(features=FOCUSED.features - {"future"}),
            ),
            Mutant(
                "prompt-without-work", "agent", BY_DEVIATION, "accepts prompts but never runs foreground work"
            ),
            Mutant(
                "update-after-cancelled-idle",
                "agent",
                "CANCEL-14",
                "sends output after the idle that confirms a cancel",
                DEFAULT.with_(features=frozenset({"cancel", "thought", "chunks", "plan"})),
                faults=("update-after-idle",),
            ),
            Mutant(
                "cancel-covers-later-prompts",
                "agent",
                BY_DEVIATION,
                "withdraws prompts that arrived after a cancel",
                DEFAULT.with_(features=frozenset({"cancel", "hold", "thought"})),
            ),
            Mutant(
                "accept-unadvertised-content",
                "agent",
                BY_DEVIATION,
                "inserts a prompt with content it did not advertise",
                faults=("accept-unadvertised-content", "image-without-capability"),
            ),
            Mutant(
                "complete-before-accept",
                "agent",
                BY_DEVIATION,
                "reports a URL elicitation completed before the Client accepted it",
                FOCUSED.with_(features=frozenset({"elicitation", "thought"})),
            ),
            Mutant(
                "elicitation-not-withdrawn",
                "agent",
                BY_DEVIATION,
                "never withdraws the elicitations of cancelled work",
                # a second cancel (the first is often spent before any elicitation is pending),
                # and no output to choose instead of eliciting
                FOCUSED.with_(cancels=2, outputs=0, features=frozenset({"elicitation", "cancel"})),
            ),
            Mutant(
                "elicit-unadvertised",
                "agent",
                BY_DEVIATION,
                "elicits in modes the Client did not advertise",
                FOCUSED.with_(features=frozenset({"cancel", "thought"})),
            ),
            Mutant(
                "empty-prompt", "client", BY_DEVIATION, "sends a session/prompt with an empty prompt array"
            ),
            Mutant(
                "image-without-capability",
                "client",
                BY_DEVIATION,
                "sends an image the Agent did not advertise",
            ),
            Mutant(
                "prompt-during-resume",
                "client",
                BY_DEVIATION,
                "sends a prompt before session/resume was answered",
            ),
            Mutant(
                "omitted-background-is-empty", "client", "BG-08", "treats an omitted background list as []"
            ),
            Mutant(
                "move-on-update", "client", "ENT-04", "moves an entity to the end of the timeline on update"
            ),
            Mutant("drop-unseen-chunk", "client", "ENT-03", "drops a chunk for an ID it has not seen"),
            Mutant(
                "key-by-id-only",
                "client",
                "ENT-02",
                "keys entities by ID alone",
                DEFAULT.with_(features=frozenset({"thought", "chunks"})),
            ),
            Mutant(
                "unknown-state-is-idle", "client", "STATE-05", "treats unknown or unrecognized states as idle"
            ),
            Mutant("repeat-idle-counts", "client", "TRANS-02", "counts every repeated idle as a completion"),
        ),
    )
)
BY_NAME: dict[str, Mutant] = {m.name: m for m in MUTANTS}
BY_RULE: dict[str, Mutant] = {m.intended_rule: m for m in MUTANTS}
"""The seeded bug written to break each rule that has one (one mutant per rule)."""


def breaking(rule: str) -> Mutant | None:
    """The seeded bug whose faulty peer breaks ``rule``, or None when no mutant breaks it: the
    behaviours a variant that drops ``rule`` adds to the simulated peers (``--drop``) and the
    breaking behaviours the decidability search explores."""
    return BY_RULE.get(rule)


WALKS = MUTANT_WALKS
"""Seeded random walks per mutant (seeds 0..WALKS-1), on top of every scenario."""
STEPS = MUTANT_STEPS


@dataclass
class Verdict:
    mutant: Mutant | None
    runs: int = 0
    caught_by: Counter[str] = field(default_factory=Counter)
    shortest: list[Line] | None = None
    shortest_source: str = ""
    shortest_rules: frozenset[str] = frozenset()
    """Rules the monitors reported on the wire for the shortest run, breaches and obligations
    still open at its end (model refusals and client-view breaches excluded): ``acp-model check``
    on that transcript finds exactly these."""
    findings: int = 0

    @property
    def caught(self) -> bool:
        return self.mutant is not None and self.caught_by[self.mutant.intended_rule] > 0

    def to_json(self) -> dict[str, Any]:
        m = self.mutant
        return {
            "name": m.name if m else "unmodified",
            "side": m.side if m else "both",
            "intended_rule": m.intended_rule if m else None,
            "description": m.description if m else "the reference agent and client",
            "caught": self.caught,
            "caught_by": sorted(self.caught_by),
            "shortest_length": len(self.shortest) if self.shortest is not None else None,
            "shortest_source": self.shortest_source or None,
            "shortest_wire_rules": sorted(self.shortest_rules),
            **({"drivable": not m.off_wire} if m and m.side == "agent" else {}),
            **({"off_wire": m.off_wire} if m and m.off_wire else {}),
            "runs": self.runs,
            "findings": self.findings,
        }


def _rule_findings(run: Run) -> list[Finding]:
    return [f for f in run.findings if f.kind == "rule"]


def _client_view_rules(run: Run) -> set[str]:
    return set(run.world.view_breaches)


def _runs(fault: frozenset[str], cfg: Config, walks: int, steps: int) -> Iterable[tuple[str, Run]]:
    for scenario in SCENARIOS:
        yield (
            f"scenario {scenario.name}",
            scripted(scenario.script, scenario.cfg, fault, MonitorSet(from_start=True), strict=False),
        )
    for seed in range(walks):
        yield f"seed {seed}", random_walk(seed, steps, cfg, fault, MonitorSet(from_start=True))


def judge(mutant: Mutant | None, walks: int = WALKS, steps: int = STEPS) -> Verdict:
    """Run a mutant (or, with None, the unmodified simulator) through scenarios and walks."""
    fault = mutant.switched_on if mutant else frozenset()
    cfg = mutant.cfg if mutant else DEFAULT
    verdict = Verdict(mutant)
    for source, run in _runs(fault, cfg, walks, steps):
        verdict.runs += 1
        rules = {f.rule for f in _rule_findings(run)} | _client_view_rules(run)
        verdict.findings += len(rules)
        verdict.caught_by.update(rules)
        hit = mutant.intended_rule in rules if mutant else bool(rules)
        if hit and (verdict.shortest is None or len(run.world.transcript) < len(verdict.shortest)):
            verdict.shortest = list(run.world.transcript)
            verdict.shortest_source = source
            verdict.shortest_rules = frozenset(
                f.rule
                for f in run.findings
                if f.kind in ("rule", "open") and not f.explanation.startswith("model: ")
            )
    return verdict


def judge_job(job: tuple[str | None, int, int]) -> Verdict:
    """``judge`` as a job of a worker pool (``simulator.workers``): (mutant name or None for the
    unmodified simulator, walks, steps)."""
    name, walks, steps = job
    return judge(BY_NAME[name] if name is not None else None, walks, steps)
