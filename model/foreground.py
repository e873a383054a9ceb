"""Foreground state of one session: idle, running, requires_action, unknown (and unrecognized).

Theory of operation
-------------------
The Agent reports the session's aggregate foreground activity with ``state_update``. Work
starts (running, or requires_action when it starts blocked), blocks, resumes and ends (idle,
with a stop reason carried as data: end_turn, max_tokens, max_turn_requests, refusal,
cancelled, error, or a custom ``_`` reason). Loss of observability moves any state to unknown;
a later current-state snapshot restores a known state without implying that work started or
ended. A state the observer does not recognise (a future ACP state) is held as
``unrecognized``: generic busy, never idle.

Repeated snapshots of the current state are idempotent and are not transitions: the mapping
from a reported state to a trigger (``trigger_for``) returns None for them.

Model output (an agent message or thought) is progress of foreground work: the trigger
``output`` is allowed only where the reported state says work runs (running; unknown, where
nothing is known; a custom state only when the Client advertised custom states, guard
``custom_states``). Output while idle is reported means work started without running being
reported; while requires_action, that progress resumed without it. Work that was reported
active must end with idle in the end (``eventually``), also when a custom state the Client did
not advertise followed it (``owed_through_custom``).

Rows come from: Foreground and background work; 3. Agent reports output; 4. Report completion;
Session states; State transitions; Waiting for user action; Work boundaries and local commands.

Must not know: prompts, JSON-RPC ids, tool calls, or why work started.
"""

from __future__ import annotations

from model.core import MachineSpec, Row, flags

IDLE, RUNNING, REQUIRES_ACTION, UNKNOWN, UNRECOGNIZED = (
    "idle",
    "running",
    "requires_action",
    "unknown",
    "unrecognized",
)
STATES = (IDLE, RUNNING, REQUIRES_ACTION, UNKNOWN, UNRECOGNIZED)
KNOWN_STATES = (IDLE, RUNNING, REQUIRES_ACTION, UNKNOWN)
END_TURN, MAX_TOKENS, MAX_TURN_REQUESTS, REFUSAL, CANCELLED, ERROR = (
    "end_turn",
    "max_tokens",
    "max_turn_requests",
    "refusal",
    "cancelled",
    "error",
)
STOP_REASONS = (END_TURN, MAX_TOKENS, MAX_TURN_REQUESTS, REFUSAL, CANCELLED, ERROR)
"""The standard stop reasons of an idle (the StopReason values of the schema): defined here
only; every other layer imports them (a custom reason starts with ``_``)."""

FG = "Foreground and background work"
STATES_SEC = "Session states"
TRANS = "State transitions"
WAIT = "Waiting for user action"
DONE = "4. Report completion"
OUTPUT = "3. Agent reports output"

_RESTORE = {IDLE: "restore_idle", RUNNING: "restore_running", REQUIRES_ACTION: "restore_requires_action"}

ROWS = (
    Row("start", IDLE, RUNNING, FG, note="foreground work starts"),
    Row("start_blocked", IDLE, REQUIRES_ACTION, TRANS, note="work starts blocked on user action"),
    Row("block", RUNNING, REQUIRES_ACTION, WAIT, note="work blocks on user action"),
    Row("resume", REQUIRES_ACTION, RUNNING, WAIT, note="progress resumes"),
    Row("end", RUNNING, IDLE, DONE, note="work ends; stop reason as data"),
    Row("end", REQUIRES_ACTION, IDLE, WAIT, note="work ends without resuming"),
    *(Row("lose", s, UNKNOWN, STATES_SEC) for s in (IDLE, RUNNING, REQUIRES_ACTION, UNRECOGNIZED)),
    Row("restore_idle", UNKNOWN, IDLE, TRANS, note="snapshot, not a completion"),
    Row("restore_running", UNKNOWN, RUNNING, TRANS, note="snapshot, not a start"),
    Row("restore_requires_action", UNKNOWN, REQUIRES_ACTION, TRANS),
    Row("future_state", IDLE, UNRECOGNIZED, STATES_SEC, note="a state the observer does not know"),
    *(Row("future_state", s, UNRECOGNIZED, STATES_SEC) for s in (RUNNING, REQUIRES_ACTION, UNKNOWN)),
    *(Row(_RESTORE[s], UNRECOGNIZED, s, STATES_SEC) for s in (IDLE, RUNNING, REQUIRES_ACTION)),
    Row("output", RUNNING, RUNNING, OUTPUT, note="model output of the running work"),
    Row("output", UNKNOWN, UNKNOWN, STATES_SEC, note="nothing is known of the state"),
    Row(
        "output",
        UNRECOGNIZED,
        UNRECOGNIZED,
        STATES_SEC,
        guard="custom_states",
        note="a custom state the Client advertised support for",
    ),
)


SPEC = MachineSpec(
    name="foreground",
    title="Foreground state",
    per="session",
    states=STATES,
    initial=IDLE,
    final=(),
    rows=ROWS,
    home=IDLE,
    forbidden={
        "start": "BOUND-01",
        "start_blocked": "BOUND-01",
        "block": "TRANS-05",
        "resume": "FG-04",
        "end": "FG-05",
        **dict.fromkeys(("lose", "restore_idle", "restore_running", "restore_requires_action"), "STATE-07"),
        "future_state": "STATE-04",
        "output": "FG-02",
        (REQUIRES_ACTION, "output"): "FG-04",
    },
    guards=flags(custom_states=True),
    guard_rules={"custom_states": "STATE-04"},
    eventually={RUNNING: "FG-05", REQUIRES_ACTION: "FG-05"},
    description="Aggregate foreground activity of a session as the Agent reports it.",
)


def idle_reports_completion(
    reason: object, last_reason: object, completed_before: bool, new_reason_completes: bool
) -> bool:
    """Whether an idle that ends no work reported active (a repeated idle, or one after a custom
    state that followed idle) still reports that foreground work ended, so that work was under
    way in the state reported before it (the table's ``output`` there: progress of work).

    A stop reason names how foreground work stopped (Stop reasons: "When an Agent stops
    foreground work, it SHOULD specify the corresponding StopReason on an idle"); a repeated
    idle "may carry the last stop reason for context" (State transitions). So:

    - ``completed_before`` false (no work of the session ended before it, all of its life in
      view): there is no last stop reason to carry, so any stop reason reports a completion;
    - ``new_reason_completes`` (the reading ``repeated-idle-new-stop-reason=completion``): a
      stop reason other than ``last_reason`` (the last one reported) reports one too; under
      ``snapshot`` it is updated information of a repeated state.

    An idle without a stop reason reports none: it may be a snapshot."""
    if type(reason) is not str:
        return False
    return not completed_before or (new_reason_completes and reason != last_reason)


def owed_through_custom(spec: MachineSpec, before: str, custom_states: bool) -> str | None:
    """The obligation (``spec.eventually``'s rule) still open while a custom state is reported
    (``unrecognized``), ``before`` being the state reported before the run of custom states: the
    table's state ``unrecognized`` owes nothing of its own, but a custom state the Client did not
    advertise (guard ``custom_states`` false) stands for no standard state, so work reported
    running or requires_action before it still owes its idle (Session states: "Unless the Client
    has advertised support for a custom or future state, Agents MUST still report running,
    requires_action, and idle where the state transitions require them"; Foreground and background
    work: "When foreground work ends, the Agent MUST report idle"). A custom state the Client
    advertised may stand for idle, and one after unknown owes nothing (nothing is known of the work
    then): None for both."""
    return None if custom_states else spec.eventually.get(before)


def trigger_for(current: str, reported: str) -> str | None:
    """The trigger a reported state means in ``current``; None for a repeated snapshot."""
    if reported == current:
        return None
    if reported == UNKNOWN:
        return "lose"
    if reported not in KNOWN_STATES:
        return None if current == UNRECOGNIZED else "future_state"
    if current in (UNKNOWN, UNRECOGNIZED):
        return _RESTORE[reported]
    if current == IDLE:
        return "start" if reported == RUNNING else "start_blocked"
    if reported == IDLE:
        return "end"
    return "block" if reported == REQUIRES_ACTION else "resume"
