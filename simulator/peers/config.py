"""Bounds and options of a simulated session: how much of each thing may happen in one run.

Owns: the ``Config`` value (immutable, hashable) that every scheduler and explorer passes to
``World``, and its documented default; the explorers' default amounts of work (here, so that a
command's ``--help`` can show them without importing the explorers). Bounds keep the exhaustive
search finite; the random schedulers use the same bounds so that both look at the same model.

Must not know: how the bounds are used.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from model.elicitation import MODES as ELICITATION_MODES
from properties.readings import non_default, resolve
from properties.seeded import SEEDED, Seeded
from properties.variants import Variant

OFF_BY_DEFAULT: tuple[str, ...] = (
    "early_state",  # the initial idle reported before the session/new response
    "goal",  # foreground work the Agent starts itself while idle (pursuing a goal)
    "commands",  # an available_commands_update
    "bare_error",  # the error stop reason without an error field
    "rich_prompt",  # the Client's prompt may carry a resource_link beside its text
    "embed",  # a tool call running a background terminal, listed as the terminal only
    "stop_unlisted",  # a cancel stops a terminal the Agent does not list
    "meta",  # a metadata-only patch of the ended work's message after its idle
    "perm_error",  # the Client answers a permission request with a JSON-RPC error
    "overlap",  # the Client closes or resumes again while a session/resume is being answered
    "hook_refusal",  # a hook refuses a well-formed prompt with -32600 during active work (busy-refusal)
    "correct",  # a finished tool call's outcome corrected to another final status (final-status-change)
    "stop",  # work waiting on the user (or refused) stops on its own, its unapproved tool calls cancelled
    "unseen",  # own work starts unreported while the state reported is unknown or unrecognized
    "unseen_end",  # work ends unreported while unknown is reported; a session/close answered then
    "unadvertised",  # a custom state the Client did not advertise; a prompt's work starts under it
    "announce",  # the Agent's own user message at idle, its own work (goal) reported starting next
    "interim",  # an inserted user message first reported with text of the Agent's own (user-message-content)
    "own_text",  # the Agent's own user message at any point of its own work, with a received prompt's text
    "snapshot",  # the state reported repeated, nothing new, once a stretch (after session/new: initial idle)
    "cancel_output",  # one output (message, thought, plan) more while a session/cancel is carried out
    "bg_idle",  # a background tool call of the Agent's own started while idle or requires_action
    "bg_fail",  # a background item fails (terminal exit code 1, tool call failed, the child's error idle)
    "answer_held",  # the Client answers an elicitation of work it cancelled at once (racing the cancel)
    "retry",  # a later prompt repeats the first one's content (identical submissions), once per run
    "compact_once",  # a compaction reported by one completed update (with or without its summary)
    "answer_after_close",  # an inserted prompt's success response after the session/close response
    "bg_pause",  # a live background tool call goes pending or paused (and back to in_progress)
    "clear",  # the current agent message's content cleared (content [] or null), as one of its outputs
    "notice_detail",  # notices of other severities (info, a custom `_` one) with a description (or null)
    "user_stop",  # a permission option stopping the work; chosen, it ends cancelled (no session/cancel)
    "live_only",  # an inserted user message reported live but not retained: a replay leaves it out
    "shared_ids",  # a tool call under the current agent message's ID (one ID, entities of two types)
)
"""Freedoms a run takes only when its bounds name them (the exhaustive slices of
``simulator.explore.bfs`` that switch them on, and the conforming twins of
``simulator.analysis.decidability``, which switch on every one), so that seeded walks, the served
Agent and the seeded bugs' runs make the choices they made before these were modelled (a walk
with every feature would also spend its steps closing and resuming). Each one's freedom is said
beside it; a hook's -32600 refusal is one the default reading busy-refusal allows and the prompt
monitor suspects (a warning). (Refusing a prompt after a ``$/cancel_request`` for it is the
reading ``rejected-after-cancel-request``.)"""

FEATURES = (
    "hold",  # agent may hold prompts and insert them later
    "chunks",  # user/agent messages as chunks as well as full updates
    "thought",  # agent thoughts
    "plan",  # plan updates
    "permission",  # tool calls with a permission request
    "terminal",  # background terminals
    "bg_tool",  # background tool calls
    "subagent",  # subagent children with session-directed messages
    "compaction",  # context compaction
    "notice",  # session notices
    "usage",  # usage updates
    "unknown",  # loss and restoration of observability
    "fail",  # error stop reason and prompt rejection
    "limits",  # max_tokens, max_turn_requests, refusal
    "cancel",  # session/cancel and $/cancel_request
    "close",  # session/close
    "resume",  # session/resume with or without replay
    "followup",  # agent-initiated foreground work after a background item finishes
    "hook",  # foreground hooks before insertion
    "pause",  # tool calls pause, go back to pending, end failed or cancelled, get content updates
    "future",  # the Client advertises custom states; the agent may report a future state
    "bg_permission",  # permission requests for background tool calls, also while idle
    "multi_request",  # a permission request while running without blocking (several outstanding)
    "custom_stop",  # a custom `_` stop reason
    "extras",  # terminal_output_chunk, plan_removed, session_message_chunk
    "omit_stop",  # an idle that omits the stop reason (FG-06 is then only suspected)
    "elicitation",  # the Client advertises and answers elicitations (form, URL); the agent elicits
    *OFF_BY_DEFAULT,
)


TWIN_ONLY: tuple[str, ...] = ("unadvertised", "announce", "interim", "own_text")
"""Freedoms of ``OFF_BY_DEFAULT`` that no explore slice takes: only the second search for a
conforming twin (``simulator.analysis.decidability.twin_config``, every feature on) does, so
that explore's figures stay those of the freedoms it has always explored."""


@dataclass(frozen=True)
class Config:
    prompts: int = 2
    """session/prompt requests the client may send."""
    tool_calls: int = 1
    """Foreground tool calls the agent may start per run."""
    permissions: int = 1
    """session/request_permission requests per run."""
    elicitations: int = 1
    """elicitation/create requests per run (feature ``elicitation``)."""
    background: int = 1
    """Background items (terminal, background tool call, subagent child) per run."""
    compactions: int = 1
    outputs: int = 2
    """Output updates (message, thought, plan) per foreground interval."""
    notices: int = 1
    usages: int = 1
    cancels: int = 1
    """session/cancel notifications the client may send."""
    cancel_requests: int = 1
    closes: int = 1
    resumes: int = 1
    """session/resume requests the client may send after its session/close was answered."""
    reattaches: int = 1
    """session/resume requests the client may send while the session is open (a Client attaching
    again; the spec does not restrict resume to closed sessions). Not scaled in long sessions."""
    losses: int = 1
    """Times the agent may lose observability (report unknown)."""
    futures: int = 1
    """Times the agent may report a future (custom) state (feature ``future``)."""
    tool_updates: int = 1
    """Tool-call content updates (replace or chunk) per run (feature ``pause``)."""
    hooks: int = 1
    """Foreground intervals of hook work (feature ``hook``: work started while a prompt waits
    and nothing is inserted) per run; unbounded, hook work could restart forever."""
    reruns: int = 1
    """Times a finished subagent child may get new work per run (then it is listed again). Not
    scaled in long sessions."""
    capacity: int = 4
    """Messages in flight per direction."""
    transport: str = "fifo"
    """fifo (both directions in order, like stdio) or unordered (agent -> client any order)."""
    features: frozenset[str] = field(default_factory=lambda: frozenset(FEATURES) - frozenset(OFF_BY_DEFAULT))
    handshake: bool = True
    """Start every run with initialize and session/new (answered), so that the transcript shows
    the session from its creation; without it the session is assumed initialized."""
    readings: tuple[tuple[str, str], ...] = ()
    """The readings of ambiguous spec text (``properties.readings``) this run is explored under,
    as sorted ``(name, alternative)`` pairs of those that differ from their defaults (a mapping
    given here is checked and put in that form). Every monitor set and client view of the run
    judges under them, and the simulated peers take the freedoms they give."""
    variant: Variant | None = None
    """The variant of the spec (``properties.variants``) this run is judged under, None: the
    spec as written. Every monitor set of the run sets its dropped rules' findings aside and
    fires its tables, the simulated Agent fires its tables, the client view's breaches of its
    dropped rules are set aside. It travels with the ``Config`` (to worker processes too), as
    readings do; its readings are merged into ``readings`` by whoever makes the ``Config``."""

    def __post_init__(self) -> None:
        given: Iterable[tuple[str, str]] | Mapping[str, str] = self.readings
        pairs = dict(given.items() if isinstance(given, Mapping) else given)
        object.__setattr__(self, "readings", tuple(sorted(non_default(resolve(pairs)).items())))

    def with_(self, **changes: Any) -> Config:
        return replace(self, **changes)

    def under(self, readings: Mapping[str, str] | None, variant: Variant | None = None) -> Config:
        """This configuration judged under a run's ``readings`` (and ``variant``): the run's
        choices that differ from the defaults win; this configuration keeps its own readings for
        the rest (a slice made to explore an alternative, ``reading_rows``, still does)."""
        mine = dict(self.readings) | non_default(resolve(dict(readings or {})))
        return replace(self, readings=tuple(sorted(mine.items())), variant=variant)

    def reading_map(self) -> dict[str, str]:
        """Every reading's alternative in force for this run (defaults included)."""
        return resolve(dict(self.readings))

    def to_json(self) -> dict[str, Any]:
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["features"] = sorted(self.features)
        data["readings"] = dict(self.readings)
        data["variant"] = None if self.variant is None else self.variant.to_json()
        # all defaults, the spec as written: left out, so the bounds read as they always have
        return {k: v for k, v in data.items() if v or k not in ("readings", "variant")}


DEFAULT = Config()


def elicitation_modes(cfg: Config) -> tuple[str, ...]:
    """The elicitation modes the simulated Client advertises in its initialize (and answers)."""
    return ELICITATION_MODES if "elicitation" in cfg.features else ()


SMALL = Config(
    prompts=1,
    tool_calls=1,
    permissions=1,
    elicitations=0,
    background=1,
    compactions=0,
    outputs=1,
    notices=0,
    usages=0,
    cancels=1,
    cancel_requests=0,
    closes=0,
    resumes=0,
    losses=0,
    futures=0,
    tool_updates=0,
    capacity=2,
    features=frozenset({"permission", "terminal", "cancel", "fail", "hold"}),
)
"""A small bound for the composed-graph figure and quick exhaustive runs."""

CLIENT_BUDGETS = ("prompts", "cancels", "cancel_requests", "closes", "resumes")
"""Per-run budgets of what the client starts."""
AGENT_BUDGETS = (
    "tool_calls",
    "permissions",
    "elicitations",
    "background",
    "compactions",
    "notices",
    "usages",
    "losses",
    "futures",
    "tool_updates",
    "hooks",
)
"""Per-run budgets of what the agent starts (``outputs`` is per interval, not per run)."""
STEPS_PER_AGENT_ITEM = 10
"""In a long session, the agent may start one more item of each kind per this many steps."""


def long_session(steps: int, base: Config = DEFAULT) -> Config:
    """``base`` with per-run budgets that ``steps`` events cannot exhaust on the client's side
    (one prompt, cancel, close... per step at most) and that grow with ``steps`` on the agent's
    side (one more of each kind per ``STEPS_PER_AGENT_ITEM`` steps), so a seeded run is as long
    as asked: the client keeps starting work until the steps are spent. Budgets of ``base``
    that are already larger are kept."""
    changes = {name: max(getattr(base, name), steps) for name in CLIENT_BUDGETS}
    changes.update({name: max(getattr(base, name), steps // STEPS_PER_AGENT_ITEM) for name in AGENT_BUDGETS})
    return base.with_(**changes)


# -- default amounts of work ----------------------------------------------------------------------

EXPLORE_EXAMPLES = 300
"""Hypothesis examples (asked per round) of ``acp-model explore``."""
EXPLORE_WALKS = 2000
"""Random walks of ``acp-model explore``."""
EXPLORE_STEPS = 60
"""Steps per random walk (and per hypothesis example, from the command line)."""
HYPOTHESIS_STEPS = 50
"""Steps per hypothesis example when ``explore_hypothesis.explore`` is called directly."""
MAX_STATES = 100_000
"""Default cap on distinct states per exhaustive search: a seeded bug or a variant can make the state space
infinite (a variant that drops CANCEL-02 lets a covered prompt be inserted again and again), and
the frontier of worlds costs memory."""
MUTANT_WALKS = 200
"""Seeded random walks per mutant (``acp-model mutants``)."""
MUTANT_FREEDOMS = frozenset({"pause", "future", "bg_permission", "multi_request", "custom_stop", "extras"})
"""Features whose seeded bugs are their own mutants; the other seeded bugs run without them, so
that a fixed budget of walks still reaches the branch each was written for."""
FOCUSED = DEFAULT.with_(features=DEFAULT.features - MUTANT_FREEDOMS)
"""The bounds a seeded bug runs under unless its ``walks`` change them."""


def seeded_config(s: Seeded) -> Config:
    """The bounds seeded bug ``s`` runs under (``acp-model mutants``, and the served Agent's
    ``--fault``): the focused default with the changes its ``walks`` state."""
    w = s.walks
    features = w.features if w.features is not None else (FOCUSED.features - w.without) | w.plus
    return FOCUSED.with_(features=features, **dict(w.bounds))


def breaking(rule: str) -> Seeded | None:
    """The seeded bug whose faulty peer breaks ``rule`` (one per rule), or None when none does:
    the behaviours a variant that drops the rule adds to the simulated peers (``--drop``) and the
    breaking behaviours the decidability search explores."""
    return next((s for s in SEEDED if s.rule == rule), None)


# Not stdio_agent.agent_config (by bug name): a fault two bugs share, or a pair half alone, is DEFAULT.
def faults_config(faults: frozenset[str]) -> Config:
    """``DEFAULT``, or the bounds of their own (e.g. two terminals) of the seeded bugs whose faults
    are all in ``faults``, when those bugs have one such bound between them."""
    own = {seeded_config(s) for s in SEEDED if frozenset(s.faults) <= faults} - {DEFAULT}
    return own.pop() if len(own) == 1 else DEFAULT


MUTANT_STEPS = 60
"""Steps per mutant walk."""
DECIDABILITY_WALKS = 200
"""Seeded random walks per rule of ``acp-model decidability`` (on top of every scenario)."""
DECIDABILITY_STEPS = 60
"""Steps per decidability walk."""
DECIDABILITY_EXHAUSTIVE_STATES = 1_000
"""States per exhaustive slice of a decidability sample (breadth-first; 0: no exhaustive part)."""
DECIDABILITY_TWIN_NODES = 10_000
"""States the search for a conforming twin may visit."""
