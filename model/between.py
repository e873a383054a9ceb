"""The rules between machines: each stated once, as a named declaration a spec author can read.

Theory of operation
-------------------
The machines of ``model/`` each own one entity (a prompt, the foreground state, a tool call, a
permission request, ...). The spec also ties them together: an idle ends foreground work and
settles what that work still owed; a ``session/cancel`` covers the foreground work and the
prompts not yet inserted; a prompt received during active work may be inserted into it. Those
ties live here, one ``Between`` per rule, in the manner of h11's ``_state.py`` (its
state-triggered transitions keyed by a joint configuration of several machines): the rule ID,
what triggers it (``when``: a joint configuration or an event), what it forbids or owes
(``then``), the machines it reads, and the parameters a variant may switch.

``Rules`` is the set in force: the spec's (``SPEC``) or a variant's (``Rules.switched``, from a
variant file's ``[between.NAME]`` tables; dropping a declaration is dropping its rule with
``drop``). Its small functions are the one executable statement of each declaration: the checker
(``properties/monitors``) and the simulated Agent (``simulator/peers/agent.py``) both call them, so the
rule IDs below appear nowhere else in their code. To change a rule between machines, edit its
declaration and its function here (``docs/session-model.md`` has a worked example).

Where a machine's table already names a declaration's rule in one of its cells (the permission
table's ``abandon``: a request of cancelled work is not approved; the foreground table's
``block``: requires_action only for work blocked on the user), the declaration takes its rule
from that cell, so the rule ID is written once in ``model/``.

Must not know: JSON-RPC, the wire format, monitors, the simulator.
"""

from __future__ import annotations

from collections.abc import Collection, Container, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final, TypeGuard

from model import foreground, permission, toolcall
from model.core import MachineSpec

Param = bool | str


@dataclass(frozen=True, slots=True)
class Between:
    """One rule between machines."""

    name: str
    """The key a variant names it by (``[between.NAME]``)."""
    rule: str
    section: str
    when: str
    then: str
    machines: tuple[str, ...]
    params: tuple[tuple[str, Param], ...] = ()
    """Parameters a variant may switch, with the spec's value."""
    restated: tuple[str, ...] = ()
    """The same obligation as ``rule``, stated again in other sections under their own IDs
    (``catalogue.RESTATED``): judged once, under ``rule``; each of them is this declaration's."""

    @property
    def statements(self) -> tuple[str, ...]:
        """``rule`` and the IDs that restate it (a group exercised together)."""
        return (self.rule, *self.restated)


UPDATES_BEFORE_IDLE: Final = Between(
    "updates_before_idle", "DONE-03", "4. Report completion",
    "the idle that ends foreground work is sent",
    "every update still owed for that work (its messages' content, its tool calls' statuses) was "
    "sent before it: one sent after it, while the session is still idle, is forbidden. A tool call "
    "of the work may carry on past the idle as independent work where the reading "
    "tool-updates-after-idle says so; under its default not one the idle's own concrete background "
    "list leaves out (that list is the snapshot of the work running independently: carries_on)",
    ("foreground", "entity", "tool_call"),
)  # fmt: skip
CANCEL_UPDATES_BEFORE_IDLE: Final = Between(
    "cancel_updates_before_idle", "CANCEL-14", "Cancellation",
    "the idle that reports a cancellation is sent",
    "updates of the cancelled work sent after the cancel come before that idle, never after it",
    ("foreground", "entity", "tool_call"),
)  # fmt: skip
CANCEL_CONFIRMED: Final = Between(
    "cancel_confirmed", "TRANS-04", "State transitions",
    "foreground work that was active when a session/cancel took effect ends: the first idle after "
    "a cancel received while work was reported active, unless it is a resume snapshot (inside a "
    "resume window, one that does not replace an active state reported there: resume_snapshot; an unknown "
    "or unrecognized state reported in between is no outcome and no cancellation: the idle after "
    "it is still the one that shows the covered work over, and a repeated idle is no completion); "
    "a session/resume does not imply idle, so the work last reported active before it is still "
    "reported active inside its window until a state is reported there (cancel_reaches)",
    "its idle carries the stop reason named by the parameter (the spec's: cancelled)",
    ("foreground", "session"),
    (("stop_reason", foreground.CANCELLED),),
)  # fmt: skip
CANCEL_NOT_ERROR: Final = Between(
    "cancel_not_error", "CANCEL-12", "Cancellation",
    "the idle confirming a cancellation is sent",
    "an exception of an aborted operation is reported as cancelled, never as error",
    ("foreground",),
)  # fmt: skip
CANCEL_COVERS: Final = Between(
    "cancel_covers", "CANCEL-18", "Cancellation",
    "a session/cancel is received",
    "it covers the foreground work and the prompts not yet inserted; work in the latest background "
    "list is covered only when the parameter covers_background is true (the spec's: false, that "
    "work keeps running). The foreground work of a child session the work delegated to (announced "
    "with subagent_update, and not in its parent's latest background list) is that work's tool "
    "execution, so a stop of the parent reaches it too (stop_reaches): the child's requests are "
    "the cancelled work's, and cancelled is the child's matching stop reason",
    ("foreground", "prompt", "tool_call", "permission", "background_item"),
    (("covers_background", False),),
)  # fmt: skip
CANCELLED_TOOLS_FINAL: Final = Between(
    "cancelled_tools_final", "CANCEL-17", "Cancellation",
    "the idle confirming a cancellation ends active work",
    "every tool call of the covered work still unfinished had its final status reported before it",
    ("foreground", "tool_call", "background_item"),
)  # fmt: skip
CANCELLED_PERMISSIONS: Final = Between(
    "cancelled_permissions", permission.SPEC.forbidden["abandon"], "Cancellation",
    "the Agent stops the covered work",
    "it stops waiting on that work's pending permission requests and treats them as not approved "
    "(the permission table's abandon, whose cell names the rule: stated there once): a late "
    "approval never runs the tool",
    ("foreground", "permission", "tool_call"),
)  # fmt: skip
CANCELLED_PERMISSIONS_WITHDRAWN: Final = Between(
    "cancelled_permissions_withdrawn", permission.SPEC.eventually[permission.NOT_APPROVED], "Cancellation",
    "the idle confirming a cancellation ends the covered work while a permission request of that "
    "work is still unanswered (the permission table's abandon moves it to not_approved)",
    "the Agent withdraws it with $/cancel_request so the Client can dismiss the prompt (the "
    "table's withdraw; the obligation its not_approved state owes names the rule: stated there "
    "once), unless the Client answers it first; by that idle under the reading "
    "permission-withdrawal-deadline's default by-idle (withdrawal_by_idle), at any time under "
    "eventually. A request about a tool call still unfinished that no concrete background list "
    "has ruled on since its first report may be background work announced before its first "
    "list: owed only at the end, as under eventually",
    ("foreground", "permission", "tool_call"),
)  # fmt: skip
CANCELLED_ELICITATIONS_WITHDRAWN: Final = Between(
    "cancelled_elicitations_withdrawn", "CANCEL-19", "Cancellation",
    "the idle confirming a cancellation ends the covered work while an elicitation (form or URL "
    "mode) of that work is still pending, unanswered (the elicitation table's abandon moves it to "
    "abandoned; a URL elicitation the Client accepted, awaiting its external completion, is "
    "answered: its abandon makes it late, and it owes no withdrawal)",
    "the Agent withdraws it with $/cancel_request so the Client can dismiss it, as "
    "cancelled_permissions_withdrawn asks for permission requests ('The same rules apply to "
    "permissions and both elicitation modes', Lifecycle examples; the elicitation table's withdraw "
    "and the obligation its abandoned state owes name this rule), unless the Client answers it "
    "first; when it falls due is that declaration's, under the same reading "
    "permission-withdrawal-deadline (withdrawal_by_idle, withdrawal_due_at_idle): by that idle "
    "under by-idle, at any time under eventually",
    ("foreground", "elicitation", "tool_call"),
)  # fmt: skip
CONTENT_ADVERTISED: Final = Between(
    "content_advertised", "USER-04", "1. User message",
    "a session/prompt carries content outside the baseline types that the Agent did not advertise",
    "it is refused with -32602 and never inserted",
    ("prompt", "session"),
)  # fmt: skip
HELD_IN_ORDER: Final = Between(
    "held_in_order", "ACTIVE-02", "Prompts during active work",
    "the Agent inserts a prompt while older prompts of the session wait",
    "held prompts go in in the order received: only the oldest waiting one may be inserted (the "
    "prompt table's guard oldest_held)",
    ("prompt",),
)  # fmt: skip
STEERING: Final = Between(
    "steering", "ACTIVE-02", "Prompts during active work",
    "a prompt received during active foreground work is inserted",
    "with the parameter steer true (the spec's: what inserting means is up to the Agent) it may "
    "go into that work; with steer false it waits for that work's idle",
    ("prompt", "foreground"),
    (("steer", True),),
)  # fmt: skip

USER_MESSAGE_REPORTED: Final = Between(
    "user_message_reported", "ACC-05", "2. Prompt accepted",
    "a prompt's success response was sent, and then the idle ending the foreground work its "
    "insertion started, or the response to session/close",
    "the inserted user message was reported (user_message or user_message_chunk) before it: the "
    "report is a pending update of that work (4. Report completion), and closing does not "
    "discharge it (no sentence of the spec exempts a closed session); whether the idle is its "
    "deadline is the reading user-message-deadline",
    ("prompt", "foreground", "entity", "session"),
)  # fmt: skip

OWN_USER_MESSAGE: Final = Between(
    "own_user_message", "ACC-06", "Foreground and background work",
    "a live user message is reported that no success response returned (under the reading "
    "unaccounted-user-message=agent-initiated)",
    "it may be the Agent's own insertion: while no prompt of its session waits, reported during "
    "any foreground work but a refused prompt's (work reported starting while a prompt waited "
    "that was then answered with an error: its hook work, unless another prompt waiting at that "
    "start was inserted: then it is that prompt's work too, running having preceded its "
    "insertion: refused_work), also work a prompt started once that prompt is answered; while "
    "one waits, only during work the Agent started itself while no prompt waited for insertion "
    "and no inserted prompt awaited its work (an idle after unknown "
    "or an unrecognized state may end work that started unseen, so no inserted prompt awaits its "
    "work after it: a waiting prompt may then claim it, and none has to); outside work, while no "
    "prompt waits, when such work of its own is reported starting next; "
    "anywhere else it is a report no submission accounts for, counted against the waiting prompts "
    "(REJ-02 after a rejection, else ACC-06; SDM-05 in a session without prompts). Never the "
    "Agent's own in a child session (one a subagent_update names) that received no session/prompt: "
    "there it is the task the parent gave the child, which the Agent SHOULD NOT report as a "
    "user_message (SDM-05, Session-directed messages: 'The task a parent gives a subagent, "
    "including the first one that starts its work, is a session-directed message')",
    ("prompt", "foreground", "entity"),
)  # fmt: skip

LATE_ANSWERS_IGNORED: Final = Between(
    "late_answers_ignored", "CANCEL-10", "Cancellation",
    "after the idle confirming a cancellation, the Client accepts an elicitation of the cancelled "
    "work, or the Agent reports a URL elicitation of it completed",
    "the answer or completion is late and ignored (the elicitation table's late rows): the tool "
    "call the elicitation was about is not run on it; a late approval of a permission request of "
    "that work is cancelled_permissions' (CANCEL-06)",
    ("foreground", "elicitation", "tool_call"),
)  # fmt: skip
BLOCKED_ON_USER: Final = Between(
    "blocked_on_user", foreground.SPEC.forbidden["block"], "State transitions",
    "foreground work reports requires_action (it blocks, or starts blocked) and holds it until its "
    "next state",
    "some user-action request of the session (a session/request_permission or an "
    "elicitation/create), or of a child session it announced with subagent_update (or a child's "
    "child), is outstanding during that stretch: asked and neither answered nor withdrawn, or a "
    "URL elicitation accepted and not yet completed (the request may follow the report: work that "
    "starts blocked may report requires_action first); a stretch with none is blocked on nothing "
    "the user can act on (the rule is the one the foreground table's block cell names: stated "
    "there once). A child's request counts because requires_action is the state of 'the "
    "foreground workflow as a whole' (Waiting for user action), and work the session delegated to "
    "a subagent waits on what that subagent waits on",
    ("foreground", "permission", "elicitation"),
)  # fmt: skip
APPROVED_RUNS: Final = Between(
    "approved_runs", "TOOL-04", "5. Tool invocation and status reporting",
    "the Client selects an allow option of a permission request about a tool call",
    "the Agent runs the tool: the call goes in_progress before it is completed (failing or being "
    "cancelled without running is allowed)",
    ("permission", "tool_call"),
)  # fmt: skip
ADVERTISED_MODES: Final = Between(
    "advertised_modes", "TOOL-07", "5. Tool invocation and status reporting",
    "the Agent sends an elicitation/create",
    "its mode is one the Client advertised in its latest successful initialize (clientCapabilities' "
    "elicitation.form or elicitation.url; a custom mode, one beginning with _, where its elicitation "
    "capabilities carry a custom capability in _meta, as custom prompt content types do)",
    ("elicitation", "session"),
)  # fmt: skip
ONE_ANSWER: Final = Between(
    "one_answer", permission.SPEC.forbidden["select"], "INTRO",
    "the Client answers a request of the Agent (a session/request_permission or an "
    "elicitation/create)",
    "each request gets exactly one response: an answer to one already answered is forbidden (the "
    "permission and elicitation tables have no row for it; the rule is the one the permission "
    "table's answer cells name: stated there once)",
    ("permission", "elicitation"),
)  # fmt: skip
REQUESTS_ANSWERED: Final = Between(
    "requests_answered", ONE_ANSWER.rule, "INTRO",
    "a request of either side is still unanswered where nothing more will come (the end of a "
    "complete transcript, or quiescence)",
    "the side asked broke the rule: each request gets exactly one response. Not where the "
    "request's own machine table follows it to its answer and states what it owes at the end "
    "(a session/prompt: the prompt table; a session/request_permission or an elicitation/create: "
    "the permission and elicitation tables, where one the user has not answered yet owes nothing)",
    ("session", "prompt", "permission", "elicitation"),
)  # fmt: skip
CLOSE_STOPS_PROMPTS: Final = Between(
    "close_stops_prompts", "ACC-13", "2. Prompt accepted",
    "a session/close is received",
    "the session closes once the Agent answers it (the session table's close and closed), every "
    "prompt not yet inserted is stopped and answered -32800, and an inserted one keeps its "
    "successful response (the prompt table's close and closed_out rows)",
    ("session", "prompt"),
)  # fmt: skip
FAILED_TOOLS_FINAL: Final = Between(
    "failed_tools_final", "FAIL-04", "Failures",
    "the idle with stop reason error ends active work",
    "every tool call of the failed work still unfinished had a terminal status reported before it "
    "(failed when it did not complete); only listed background work and tool calls embedding a "
    "listed terminal are exempt, so one a concrete background list reported since its first "
    "report left out was owed it",
    ("foreground", "tool_call", "background_item"),
)  # fmt: skip

# -- the foreground lifecycle: what starts, resumes and ends work, and what stands in for it ----
ACTIVE_ON_START: Final = Between(
    "active_on_start", foreground.SPEC.rule_of(foreground.IDLE, "output"),
    "Foreground and background work",
    "foreground work is under way while idle is reported: model output of it (an agent message or "
    "thought under a new ID), or an idle that reports it completed (foreground "
    "idle_reports_completion)",
    "an active state was reported as it started (running, or requires_action when it started "
    "blocked): the foreground table has no output from idle (its cell names the rule: stated "
    "there once); 3. Agent reports output states the same duty (OUT-01)",
    ("foreground", "entity"),
    restated=("OUT-01",),
)  # fmt: skip
OWN_WORK_FOREGROUND: Final = Between(
    "own_work_foreground", "FG-01", "Foreground and background work",
    "foreground work under way while idle is reported (active_on_start) was started by the Agent "
    "itself: no session/prompt of the session was received or accepted since the last idle that "
    "ended work, and none is unanswered",
    "it is foreground work all the same, with a prompt's lifecycle: the active state it owed is "
    "this rule's (a prompt's work owes it under active_on_start)",
    ("foreground", "prompt", "entity"),
)  # fmt: skip
RUNNING_ON_PROGRESS: Final = Between(
    "running_on_progress", foreground.SPEC.rule_of(foreground.REQUIRES_ACTION, "output"),
    "Foreground and background work",
    "foreground work reported requires_action progresses again: model output of it (3. Agent "
    "reports output), a tool call of it running, that is going in_progress or completing after "
    "its permission was granted (5. Tool invocation and status reporting), even while other "
    "requests stay open (Waiting for user action)",
    "running was reported before that progress (or idle, when the work ends without it): the "
    "foreground table has no output from requires_action (its cell names the rule: stated there "
    "once); a tool call in the latest background list is not the blocked work's, nor, under the "
    "reading unlisted-tool-while-blocked=may-be-background, one no concrete list has left out since "
    "its first report (announced before its first list); under the reading "
    "output-while-requires-action=late-chunk (the default) a chunk of a message first seen since "
    "the last idle, before this requires_action, is output the work produced before it blocked "
    "(content under a message first seen while requires_action is reported is progress), under "
    "pending-output any message content may be",
    ("foreground", "entity", "tool_call", "permission"),
    restated=("OUT-02", "TOOL-03", "WAIT-01"),
)  # fmt: skip
IDLE_ENDS_WORK: Final = Between(
    "idle_ends_work", foreground.SPEC.eventually[foreground.RUNNING], "Foreground and background work",
    "foreground work reported active ends: it completes, stops, fails (also before insertion or "
    "before any output: Failures) or is cancelled",
    "an idle state_update reports the end (4. Report completion), even while background activity "
    "goes on; no prompt response or output stands in for it, so consecutive turns have an idle "
    "boundary (Work boundaries: the rule of the foreground table's start cell); work still "
    "reported active at the end of a complete transcript owes it (the foreground table's "
    "obligation on running and requires_action, which names the rule: stated there once), work a "
    "cancel reached under cancelled_work_ends",
    ("foreground", "prompt"),
    restated=("DONE-01", "FAIL-01", foreground.SPEC.forbidden["start"]),
)  # fmt: skip
CANCELLED_WORK_ENDS: Final = Between(
    "cancelled_work_ends", "CANCEL-11", "Cancellation",
    "a session/cancel or session/close is received while foreground work is reported active",
    "the Agent aborts that work, sends the updates it owes, and then ends it with the idle that "
    "confirms the cancellation (cancel_confirmed): a successful session/close response while the "
    "work is still reported active (under the reading close-response-ends-session=last-message, the "
    "default; under work-may-follow the idle may follow the response), an idle resume snapshot "
    "before that idle (it shows the work over, yet creates no completion or cancellation, and no "
    "repeated idle after it can: State transitions), or a complete transcript that ends with it "
    "active, breaks it (an idle inside a resume window is its snapshot unless it replaces an "
    "active state reported in that window; under the reading resume-window-idle=may-be-live one "
    "the work could end with is its live idle when another state of the window can be the "
    "snapshot)",
    ("foreground", "session"),
)  # fmt: skip
ACCEPTED_WORK_REPORTED: Final = Between(
    "accepted_work_reported", "BOUND-02", "Work boundaries and local commands",
    "a session/prompt received while idle is reported (outside a resume) is answered with success",
    "handling it used the foreground lifecycle: an active state is reported after its receipt (a "
    "local command without model work too: running, then idle); neither the response nor output "
    "stands in for it, so a success with no active state after the receipt owes one",
    ("prompt", "foreground"),
)  # fmt: skip
CUSTOM_STOP_PREFIXED: Final = Between(
    "custom_stop_prefixed", "STOP-03", "Stop reasons",
    "an idle, not a resume snapshot, carries a string stop reason",
    "it is a standard one, or a custom one that begins with _: an unknown one without _ breaks the "
    "rule under the reading future-stop-reason=custom (the default); under may-be-future it may be "
    "reserved for a future ACP variant (a suspect)",
    ("foreground",),
)  # fmt: skip

LIST_ON_EVERY_SNAPSHOT: Final = Between(
    "list_on_every_snapshot", "BG-07", "Background work",
    "a state_update is sent in a session that reports background work (after its first concrete "
    "background list; also before it when the parameter before_first_list is true, the reading "
    "state-updates-before-first-list=every)",
    "it carries a concrete background list (an empty one when nothing runs): omitted, null or not "
    "an array is a snapshot that says nothing of the background work",
    ("foreground", "background_item"),
)  # fmt: skip
TERMINAL_LISTED_ALONE: Final = Between(
    "terminal_listed_alone", "BG-13", "Background work",
    "a background list names a terminal that a tool call's content embeds, and that terminal is "
    "the tool call's only live work (the reading tool-with-listed-terminal=only-live-work)",
    "the list names the terminal only, not the tool call as well",
    ("tool_call", "terminal", "background_item"),
)  # fmt: skip

SETUP_BEFORE_PROMPTS: Final = Between(
    "setup_before_prompts", "INTRO-01", "INTRO",
    "the Client sends a session/prompt",
    "its setup is complete: the initialize handshake was answered successfully, the session exists for it (a "
    "session/new response that creates it does not come later; where the stream shows the "
    "connection from its start, its first Client request being initialize, a session/new or "
    "session/fork response named it, a session/resume of it succeeded, or a subagent_update "
    "announced it as a child) and no session/resume of it is still being answered",
    ("session", "prompt"),
)  # fmt: skip
PROMPT_HAS_CONTENT: Final = Between(
    "prompt_has_content", "USER-01", "1. User message",
    "the Client sends a session/prompt",
    "its prompt array holds at least one content block",
    ("prompt",),
)  # fmt: skip
CLIENT_SENDS_ADVERTISED: Final = Between(
    "client_sends_advertised", "USER-03", "1. User message",
    "the Client sends a session/prompt after the Agent's initialize answer",
    "every content block is of a type content_advertised allows (the baseline types and those the "
    "Agent's prompt capabilities advertise; a custom type only where the capabilities carry _meta)",
    ("prompt", "session"),
)  # fmt: skip

MESSAGE_ID_RETURNED: Final = Between(
    "message_id_returned", "ACC-04", "2. Prompt accepted",
    "the Agent answers a session/prompt with success (the prompt was inserted)",
    "the response returns the inserted user message's messageId, a non-null string: omitting it "
    "or sending null is invalid",
    ("prompt", "entity"),
)  # fmt: skip
REPORTED_AFTER_INSERTION: Final = Between(
    "reported_after_insertion", "ACC-07", "2. Prompt accepted",
    "the Agent sends an update about a submission's user message (user_message or "
    "user_message_chunk)",
    "the prompt was inserted before it: no update about the message precedes its insertion, so "
    "none precedes the receipt of the session/prompt whose success returns its messageId; a "
    "message first taken as the Agent's own insertion (own_user_message: reported while no "
    "session/prompt waited) included: a success returning its ID makes it that later prompt's "
    "message, reported before the prompt was even received (the Agent's own insertion is no "
    "submission, so this is not distinct_message_ids)",
    ("prompt", "entity"),
)  # fmt: skip
USER_MESSAGE_CONTENT: Final = Between(
    "user_message_content", "ACC-05", "2. Prompt accepted",
    "the Agent sends a live user_message update carrying content about a submission's user message "
    "(a user_message_chunk appends a part, and a text block may be split anywhere: not compared)",
    "under the reading user-message-content=prompt-content, every block it carries is a block of the "
    "prompt's content array (interim text of the Agent's own is content the prompt never had); under "
    "upsert (the default) the Agent may report content a later update replaces, and what is owed is "
    "the report itself (user_message_reported). Whether the message ends with every block of the "
    "prompt is judged under neither",
    ("prompt", "entity"),
)  # fmt: skip
DISTINCT_MESSAGE_IDS: Final = Between(
    "distinct_message_ids", "ACC-09", "2. Prompt accepted",
    "the Agent answers a session/prompt with success",
    "the messageId it returns was returned for no other submission of the session: distinct "
    "inserted submissions get distinct IDs, even when their content is the same (an ID the Agent "
    "gave its own insertion is no submission's: returning it is reported_after_insertion's); nor "
    "is it the ID of a user message a session/resume replayed before the prompt was received "
    "(a retained, earlier inserted submission: \"If the message is retained and replayed, the "
    "Agent MUST use the same ID\")",
    ("prompt", "entity"),
)  # fmt: skip
REPLAY_KEEPS_IDS: Final = Between(
    "replay_keeps_ids", "ACC-11", "2. Prompt accepted",
    "a session/resume replays a retained user message (inside the resume window; the session seen "
    "from its creation; the reading resume-replay-window says which messages the window holds)",
    "the message carries the ID it was inserted with: a replayed user message under an ID the "
    "session never used live was given a new one",
    ("session", "entity"),
)  # fmt: skip
REJECTED_NOT_REPORTED: Final = Between(
    "rejected_not_reported", "REJ-02", "Prompts that are never inserted",
    "a session/prompt is answered with an error before insertion (rejected, or withdrawn with "
    "-32800)",
    "no user-message update is sent for that submission: a live user message that no success "
    "response can account for, first reported after such a prompt was received, is that "
    "submission's (else it is own_user_message's: reported under an ID no response returned)",
    ("prompt", "entity"),
)  # fmt: skip
LATER_PROMPTS_UNCOVERED: Final = Between(
    "later_prompts_uncovered", "CANCEL-16", "Cancellation",
    "a session/prompt is received after a session/cancel of its session",
    "that cancel does not cover it (cancel_covers covers only the prompts received before it): "
    "answering it -32800 is forbidden unless a later session/cancel, session/close or "
    "$/cancel_request stopped it",
    ("prompt", "session"),
)  # fmt: skip

DECLARATIONS: Final[tuple[Between, ...]] = tuple(
    d for d in tuple(globals().values()) if isinstance(d, Between)
)
"""Every declaration above, in the order written."""
BY_NAME: Final[dict[str, Between]] = {d.name: d for d in DECLARATIONS}

BASELINE_PROMPT_TYPES: Final = frozenset({"text", "resource_link"})
"""Content types every Agent accepts in a prompt (``content_advertised``)."""
PROMPT_CAPABILITY_TYPES: Final = {"image": "image", "audio": "audio", "embeddedContext": "resource"}
"""PromptCapabilities field -> the content block type it allows."""
STANDARD_CONTENT_TYPES: Final = BASELINE_PROMPT_TYPES | frozenset(PROMPT_CAPABILITY_TYPES.values())
"""The content block types of the schema; any other type is custom (``client_sends_advertised``)."""


def _reading_is(alternative: str) -> staticmethod[[str], bool]:
    """How a declaration reads a reading the spec leaves open: true when the alternative in
    force is ``alternative``."""
    return staticmethod(lambda chosen: chosen == alternative)


def _descent(session: str, child: str, parents: Mapping[str, str]) -> list[str] | None:
    """The sessions from ``child`` up to ``session``, ``session`` left out (``parents``: each child
    session -> the session that announced it): [] when ``child`` is ``session``, None when it is
    not one of its descendants."""
    path: list[str] = []
    while child != session:
        if child in path or child not in parents:
            return None
        path.append(child)
        child = parents[child]
    return path


def _any(items: Iterable[object]) -> bool:
    """Whether ``items`` holds anything (what a declaration owes, or is owed, is not nothing)."""
    return any(True for _ in items)


@dataclass(frozen=True)
class Rules:
    """The declarations in force, with their parameters (the spec's, or a variant's)."""

    values: Mapping[str, Mapping[str, Param]] = field(
        default_factory=lambda: {d.name: dict(d.params) for d in DECLARATIONS}
    )

    def switched(self, changes: Mapping[str, Mapping[str, Param]]) -> Rules:
        """A copy with parameters switched (``changes``: declaration -> parameter -> value);
        raises ``ValueError`` naming the first unknown declaration, parameter or wrong type."""
        values = {name: dict(params) for name, params in self.values.items()}
        for name, params in changes.items():
            if name not in BY_NAME:
                raise ValueError(f"unknown declaration {name!r} (known: {', '.join(BY_NAME)})")
            for key, value in params.items():
                if key not in values[name]:
                    known = ", ".join(values[name]) or "none"
                    raise ValueError(f"{name}: unknown parameter {key!r} (parameters: {known})")
                if type(value) is not type(values[name][key]):
                    raise ValueError(f"{name}.{key}: a {type(values[name][key]).__name__} is required")
                values[name][key] = value
        return Rules(values)

    # -- the declarations, executed --------------------------------------------------------
    @staticmethod
    def late_update(cancelled: bool) -> Between:
        """The rule an update of ended foreground work sent after its idle breaks
        (``cancel_updates_before_idle`` when that idle reported a cancellation)."""
        return CANCEL_UPDATES_BEFORE_IDLE if cancelled else UPDATES_BEFORE_IDLE

    @staticmethod
    def owed_before_idle(
        live_tools: Iterable[object],
        unreported_messages: Iterable[object],
        unlisted_work: Iterable[object] = (),
    ) -> bool:
        """``updates_before_idle``: whether the work still owes an update before its idle (a tool
        call of it not in a final status; the user message of a prompt it inserted not reported,
        ``user_message_reported``; background work announced during it and not yet listed: without
        a list naming it, its later updates are the ended work's, and once idle a Client may regard
        it as abandoned)."""
        return _any(live_tools) or Rules.user_messages_owed(unreported_messages) or _any(unlisted_work)

    user_messages_owed = staticmethod(_any)
    """``user_message_reported``: whether an idle ending the work, or a close response, would
    leave the user message of an inserted prompt unreported (given those prompts whose success
    was sent, or is owed, and whose user message was not reported)."""

    @staticmethod
    def not_inserted_by_idle(reading: str, claimable_since_receipt: bool) -> bool:
        """``user_message_reported`` under the reading ``user-message-deadline``: whether a prompt
        received while idle was reported, still waiting for its answer at the idle that ends its
        resulting work (the first work reported after its receipt), was not inserted before that
        idle. Under ``resulting-work`` its user message would then have been a pending update of
        that work, owed before the idle (4. Report completion); with no user message reported
        since its receipt that it could claim (``claimable_since_receipt``), it was inserted, if
        at all, after that idle, so a session/cancel or session/close received before the idle
        found it not yet inserted ("session/cancel covers ... prompts received before it that the
        Agent has not yet inserted", Cancellation). Under ``eventually`` nothing follows."""
        return reading == "resulting-work" and not claimable_since_receipt

    @staticmethod
    def carries_on_after_idle(chosen: str) -> bool:
        """``updates_before_idle`` under the reading ``tool-updates-after-idle``: whether a tool
        call of ended work may go on changing status after the idle as independent work
        (``background``, the default, and ``unlisted-activity``) rather than owing that status
        before it (``foreground-owed``)."""
        return chosen in ("background", "unlisted-activity")

    unlisted_carries_on = _reading_is("unlisted-activity")
    """``updates_before_idle`` under the reading ``tool-updates-after-idle``: whether a tool call
    the idle's own concrete background list leaves out may still carry on after it, as background
    activity the Agent does not list (``unlisted-activity``: "The Agent SHOULD NOT list
    housekeeping it starts on its own ... If housekeeping needs to be visible, the Agent
    represents it as a tool call", Background work)."""

    @classmethod
    def carries_on(cls, updates_after_idle: str, left_out: bool) -> bool:
        """``updates_before_idle``: whether a tool call of foreground work, unfinished at the idle
        that ended that work, may be carrying on after it as independent work, so that its later
        status changes are not updates the ended work owed before its idle: where tool calls may
        carry on (``carries_on_after_idle``), unless that idle carried a concrete background list
        that leaves it out (``left_out``). That list "is a snapshot" of "the work currently
        running independently of foreground work", and "[] means no background work is running"
        (Background work): a live tool call it does not name was not running as background work
        at the idle, and no foreground work remains after the idle either, so its later status is
        the ended work's pending update ("The Agent MUST send any pending updates for the
        foreground work that ended before sending its idle update", 4. Report completion; "Once
        the session is idle, a Client MAY treat a pending, in_progress, or paused tool call ...
        that is not in the latest reported list as abandoned"). The tolerance for background work
        announced before its first list does not reach it: "It sends that tool call like any
        other, before the first list that names it", and the idle's list is a list after its
        announcement that names it not. Under ``unlisted-activity`` that call may carry on as well
        (``unlisted_carries_on``)."""
        return cls.carries_on_after_idle(updates_after_idle) and (
            not left_out or cls.unlisted_carries_on(updates_after_idle)
        )

    @classmethod
    def may_carry_on(
        cls,
        status: str,
        reason: object,
        cancel_received: bool,
        updates_after_idle: str,
        past_error: bool = False,
        left_out: bool = False,
    ) -> bool:
        """``updates_before_idle``: whether a live tool call of foreground work ending with stop
        reason ``reason`` may carry on after the idle instead of owing its final status before it:
        an in_progress call, where tool calls may carry on and the idle's own concrete background
        list does not leave it out (``carries_on``, ``left_out``), at an idle that ends the work
        on its own (no cancel received; not an error unless ``past_error``: an error idle where no
        background list leaves the call out, ``failed_tools_final``)."""
        return (
            cls.carries_on(updates_after_idle, left_out)
            and status == toolcall.IN_PROGRESS
            and not cancel_received
            and (reason != foreground.ERROR or past_error)
        )

    patch_allowed = _reading_is("patch-in-place")
    """``updates_before_idle`` under the reading ``patch-after-idle``: whether a chunk or content
    patching a message of ended work, sent while the session is still idle after it, is a patch
    in place (``patch-in-place``) rather than an update the work owed before its idle."""

    @staticmethod
    def confirming_idle(cancel_pending: bool, resume_snapshot: bool) -> bool:
        """``cancel_confirmed``: whether an idle is the one that ends the work a cancel covered
        (``cancel_pending``: a session/cancel or session/close was received while work was
        reported active, and no idle came since; ``resume_snapshot``: the idle reports the state
        to a ``session/resume``, no transition). What was reported between the cancel and this
        idle does not matter: unknown, or an unrecognized state, that replaced the active one is
        "neither a work outcome nor a closure or cancellation" (Session states), so the covered
        work still owes its confirmation; once idle is reported that work is over, and a repeated
        idle is no new completion, so no later idle could confirm it."""
        return cancel_pending and not resume_snapshot

    def confirmation_breach(self, reason: object) -> Between | None:
        """The declaration an idle ending cancelled work breaks with stop reason ``reason``."""
        if reason == self.values[CANCEL_CONFIRMED.name]["stop_reason"]:
            return None
        return CANCEL_NOT_ERROR if reason == foreground.ERROR else CANCEL_CONFIRMED

    own_end_after_cancel = _reading_is("when-acted")
    """``cancel_confirmed`` under the reading ``cancel-takes-effect``: whether work a
    session/cancel reached may still end with its own stop reason (``when-acted``: it may have
    ended before the Agent acted on the cancel); under ``on-receipt`` its idle confirms the
    cancellation."""

    def confirms_cancellation(self, reason: object, cancel_takes_effect: str) -> bool:
        """Whether an idle with stop reason ``reason`` ending work after a cancel was received
        confirms the cancellation: always, unless the work may end on its own
        (``own_end_after_cancel``), then only when the reason is a confirming one."""
        return not self.own_end_after_cancel(cancel_takes_effect) or self.confirmation_breach(reason) is None

    def confirming_reasons(self) -> tuple[str, ...]:
        """The stop reasons an idle confirming a cancellation may carry."""
        return (str(self.values[CANCEL_CONFIRMED.name]["stop_reason"]),)

    @property
    def covers_background(self) -> bool:
        return bool(self.values[CANCEL_COVERS.name]["covers_background"])

    def covered(self, listed: bool) -> bool:
        """Whether a session/cancel covers work (``listed``: in the latest background list)."""
        return not listed or self.covers_background

    @staticmethod
    def covers_prompt(received_before: bool) -> bool:
        """``cancel_covers`` and ``later_prompts_uncovered``: whether a session/cancel fires the
        prompt table's ``cover`` row of a prompt of its session: of each one received before it
        (the row says what covering does: nothing once the prompt is inserted or answered), never
        of one received after it."""
        return received_before

    @staticmethod
    def stop_reaches_next_work(prompt_waiting: bool) -> bool:
        """``cancel_covers``: whether a session/cancel or session/close received while idle was
        reported reaches the foreground work that starts next (the next active state): yes when a
        prompt of the session whose work the wire has not shown yet (``prompt_waiting``: received
        while idle was reported, with no state reported since) was still waiting for its answer
        (``covers_prompt``) and was not then refused, or was accepted. The Agent may have inserted
        that prompt, starting its work, before it read the stop ("Once a message is inserted, its
        prompt request still succeeds": the prompt table's ``cover`` on ``inserted``), or did, when
        it accepted it first ("Acceptance means insertion"), and the cancelled idle is owed "if
        foreground work was active when cancellation took effect" (Cancellation). With no such
        prompt it reaches nothing: "A session/prompt received after session/cancel is not
        cancelled by it"."""
        return prompt_waiting

    def ends_with_work(self, listed: bool, cancelled: bool) -> bool:
        """Whether foreground work ending at an idle takes work with it (its tool calls then owe
        their final status before the idle, the Agent stops waiting on its permission requests):
        ``listed``: the work is in the latest background list; ``cancelled``: the idle confirms a
        cancellation, which covers what ``cancel_covers`` says; any other end takes only the
        unlisted work."""
        return self.covered(listed) if cancelled else not listed

    racing_approval_used = _reading_is("may-be-used")
    """``cancelled_permissions`` under the reading ``approval-racing-cancel``: whether an approval
    that arrives after the session/cancel of its work, before the idle confirming it, may be
    used to run the tool (``may-be-used``) or is taken as not approved (``not-approved``)."""

    withdrawal_by_idle = _reading_is("by-idle")
    """``cancelled_permissions_withdrawn`` and ``cancelled_elicitations_withdrawn`` under the
    reading ``permission-withdrawal-deadline``: whether a permission request or an elicitation of
    cancelled work still unanswered at the idle confirming the cancellation is owed its
    ``$/cancel_request`` before that idle (``by-idle``), or only some time before the end
    (``eventually``)."""

    @staticmethod
    def withdrawal_due_at_idle(about_tool: bool, finished: bool, ruled: bool) -> bool:
        """``cancelled_permissions_withdrawn`` (and ``cancelled_elicitations_withdrawn``, for an
        elicitation with a ``toolCallId``) under ``by-idle``: whether a request of the cancelled
        work still unanswered at the idle confirming the cancellation is certainly that work's, so
        its withdrawal was due by that idle: one about no tool call, or about a tool call that
        has its final status (no later list can name it as work running on), or that a concrete
        background list reported since its first report (the idle's own included) left out
        (``ruled``). Otherwise the tool call may be background work announced before its first
        list ("It sends that tool call like any other, before the first list that names it",
        Background work), which a later list would exempt ("Permission requests for work in the
        latest background list are not affected", Cancellation): owed only at the end."""
        return not about_tool or finished or ruled

    @staticmethod
    def owes_final(status: str, final: Iterable[str], covered: bool) -> bool:
        """Whether a tool call of the cancelled work in ``status`` owed its final status before
        the idle confirming the cancellation (``cancelled_tools_final``)."""
        return covered and status not in final

    @staticmethod
    def late_answer(machine: str) -> Between:
        """The declaration a late answer of a request of cancelled work breaks when it is used to
        run that request's tool call (``machine``: permission or elicitation)."""
        return CANCELLED_PERMISSIONS if machine == "permission" else LATE_ANSWERS_IGNORED

    blocked_on_user = staticmethod(_any)
    """``blocked_on_user``: whether a requires_action stretch had something the user can act on
    (given the user-action requests outstanding during it that ``blocks_workflow_of`` counts)."""

    unseen_user_action = _reading_is("user-action-unseen")
    """``blocked_on_user`` under the reading ``requires-action-without-request``: whether work may
    be blocked on user action no request shows (``user-action-unseen``: a stretch with no request
    breaks nothing), or only on a user-action request (``requests``)."""

    def stop_reaches(
        self, session: str, child: str, parents: Mapping[str, str], detached: Container[str], closing: bool
    ) -> bool:
        """``cancel_covers``: whether a stop the Client chose for the work of ``session`` (a
        session/cancel, an answer to a permission request of that work, or with ``closing`` a
        session/close) reaches the foreground work of session ``child``: ``session`` itself, or a
        descendant (``parents``: each child session -> the session that announced it with
        subagent_update) each of whose links is foreground work of its parent. "Foreground work is
        the Agent's active response or workflow in the session, including model processing, tool
        execution" (Foreground and background work) and "A terminal or tool call that foreground
        work is waiting on is foreground work" (Background work): a running child its parent does
        not list ("A detached child is listed while its state is not idle") is the parent's tool
        execution, whose invocations the Agent stops on a cancel ("it SHOULD stop all language
        model requests and all tool call invocations of the cancelled foreground work",
        Cancellation). A child in its parent's latest background list (``detached``) is not
        covered by a session/cancel ("Work in the latest background list is not covered and keeps
        running", unless ``covers_background``), nor by the answer to a foreground request; a
        session/close stops it too (the list tells the Client "What closing will stop")."""
        path = _descent(session, child, parents)
        if path is None:
            return False
        return closing or self.covers_background or not any(link in detached for link in path)

    @staticmethod
    def blocks_workflow_of(session: str, asker: str, parents: Mapping[str, str]) -> bool:
        """``blocked_on_user``: whether a user-action request of session ``asker`` counts for a
        requires_action stretch of ``session``: a request of the session itself, or of one of its
        descendants (``parents``: each child session -> the session that announced it with
        subagent_update). "requires_action means the foreground workflow as a whole is blocked
        on user action" (Waiting for user action): a parent whose work waits on its subagent is
        blocked on what the subagent waits on, the user's answer to the child's request, which
        the Client presents "independently of the aggregate state". Nothing of a parent or a
        sibling counts: a child's work does not wait on its parent's requests."""
        return _descent(session, asker, parents) is not None

    @staticmethod
    def failed_work_tool(left_out_by_a_list: bool) -> bool:
        """``failed_tools_final``: whether an unfinished tool call first reported during the failed
        work, not exempt by the latest background list, certainly belongs to that work, so its
        terminal status was owed before the error idle: a concrete list reported since its first
        report (the idle's own included) left it out. Otherwise it may be background work
        announced before its first list ("Background work"), owed only if no later list names it
        and it does not carry on."""
        return left_out_by_a_list

    # -- the foreground lifecycle ----------------------------------------------------------
    @staticmethod
    def start_rule(table_rule: str, prompt_waits: bool) -> str:
        """``active_on_start`` and ``own_work_foreground``: the rule that foreground work under way
        while idle is reported breaks (``table_rule``: the one the foreground table's refused
        output names): the table's for a prompt's work (``prompt_waits``: a session/prompt of the
        session was received or accepted since the last idle that ended work, or is unanswered),
        own_work_foreground's for work the Agent started itself."""
        return table_rule if prompt_waits else OWN_WORK_FOREGROUND.rule

    @staticmethod
    def blocked_output_is_progress(reading: str, chunk: bool = False, begun: bool = False) -> bool:
        """``running_on_progress`` under the reading ``output-while-requires-action`` in force
        (``reading``): whether agent message or thought content sent while requires_action is
        reported is progress of the blocked work. ``progress``: always. ``pending-output``: never
        (it may be output the work produced before it blocked). ``late-chunk``: unless it is a
        chunk (``chunk``: agent_message_chunk or agent_thought_chunk) of a message already begun
        (``begun``: first seen since the last idle was reported, before this requires_action):
        "Chunk updates with the same messageId append content" (Message IDs) and "Later
        updates and chunks patch the entity in place without moving it" (Entity IDs), so the tail
        of a message the work began before it blocked shows no progress resuming; content that
        begins a message places new output after the requires_action ("An entity's first update
        or chunk fixes its timeline position in receive order", Entity IDs), and a full update
        replaces what the message shows: progress."""
        if reading == "pending-output":
            return False
        return reading != "late-chunk" or not (chunk and begun)

    @staticmethod
    def tool_progress(
        of_foreground_work: bool,
        listed: bool,
        unruled: bool = False,
        reading: str = "",
        asked: bool = False,
    ) -> bool:
        """``running_on_progress``: whether a tool call that runs (goes in_progress, or completes
        after its permission was granted) is progress of the foreground work
        (``of_foreground_work``: first reported during active work) and not background work
        (``listed``: in the latest background list). One no concrete list has left out since its
        first report (``unruled``: announced, not yet listed) is the work's under the reading
        ``unlisted-tool-while-blocked`` in force (``reading``) unless it is ``may-be-background``:
        "Items are announced before they are listed" (Background work), so it may be background
        work not listed yet. Never one a permission request asked the user about (``asked``): the
        work waited on it, and "A terminal or tool call that foreground work is waiting on is
        foreground work" (Background work), whatever the reading."""
        maybe_background = unruled and not asked and reading == "may-be-background"
        return of_foreground_work and not listed and not maybe_background

    @staticmethod
    def tool_runs(status: str, granted_not_run: bool = False) -> bool:
        """``running_on_progress``: whether reporting ``status`` for a tool call is the call
        running (progress of its work when ``tool_progress`` says so): going in_progress, or
        completing while its permission was granted and it has not gone in_progress since
        (``granted_not_run``, which ``approved_runs`` forbids as well)."""
        return status == toolcall.IN_PROGRESS or Rules.completes_unrun(granted_not_run, status)

    @staticmethod
    def never_idled(owed: str, cancel_pending: bool) -> str:
        """``idle_ends_work`` and ``cancelled_work_ends``: the rule that foreground work still
        reported active at the end breaks: ``owed`` (the foreground table's obligation on its
        state) or, when a session/cancel or session/close reached it (``cancel_pending``),
        cancelled_work_ends'."""
        return CANCELLED_WORK_ENDS.rule if cancel_pending else owed

    @staticmethod
    def close_leaves_work(reported_active: bool, cancel_pending: bool, owed: str) -> str | None:
        """``idle_ends_work`` and ``cancelled_work_ends`` under the reading
        ``close-response-ends-session=last-message`` (``close_ends_session``): the rule a
        successful session/close response breaks, or None: foreground work still reported active
        then is never ended with idle (the schema's CloseSessionRequest: the idle comes "before
        responding successfully to session/close", and "After the close response, the Agent sends
        no other messages for the session"; a later resume's snapshot is no completion):
        ``never_idled``'s rule, cancelled_work_ends' when a session/cancel or the close reached
        the work while it was reported active (``cancel_pending``), else ``owed`` (the foreground
        table's obligation: work reported active again after an unknown the close came in, which
        restores a known state without implying the work started anew)."""
        return Rules.never_idled(owed, cancel_pending) if reported_active else None

    close_ends_session = _reading_is("last-message")
    """``idle_ends_work`` and ``cancelled_work_ends`` under the reading
    ``close-response-ends-session``: whether a successful session/close response is the deadline
    of the closed work's idle (``last-message``: ``close_leaves_work`` judges it there) or that
    idle may follow it (``work-may-follow``: still owed, judged at the end as ``never_idled``
    says, closed session or not)."""

    @staticmethod
    def cancel_reaches(reported_active: bool, held_in_window: bool) -> bool:
        """``cancel_confirmed`` and ``cancelled_work_ends``: whether a session/cancel or
        session/close reaches work reported active: the reported state is active
        (``reported_active``), or the cancel comes inside a resume window in which no state was
        reported yet, after an active state reported before it (``held_in_window``). "session/resume
        does not imply idle" (Initial state and synchronization), and "When no foreground activity
        remains, the Agent MUST report idle" (Work boundaries): the work last reported active, with
        no idle since, is still under way when the cancel comes."""
        return reported_active or held_in_window

    @staticmethod
    def resume_snapshot(in_window: bool, replaces_window_active: bool) -> bool:
        """``cancel_confirmed`` and ``cancelled_work_ends``: whether a state_update is a resume
        snapshot, which reports the state "without implying a transition" (State transitions): one
        sent between a session/resume and its response (``in_window``), unless it replaces an
        active state reported in that same window (``replaces_window_active``): the snapshot, or a
        repeat of it, reports one state, so a change after an active one is a transition (a
        state_update is a snapshot of the aggregate state, not a session entity that a history
        replay re-sends). "Clients MUST use that snapshot rather than infer activity from the
        response or replayed content" (Initial state and synchronization)."""
        return in_window and not replaces_window_active

    live_in_window = _reading_is("may-be-live")
    """``cancelled_work_ends`` under the reading ``resume-window-idle``: whether an idle resume
    snapshot (``resume_snapshot``) may also be the live idle that ends foreground work, sent
    before the snapshot (``may-be-live``), rather than only the snapshot or a repeat of it
    (``snapshot``)."""

    def ends_in_window(self, reason: object, cancel_takes_effect: str, window_idle: str) -> bool:
        """``cancelled_work_ends``: whether an idle resume snapshot (``resume_snapshot``) with stop
        reason ``reason``, sent while a cancellation is pending, may be the live idle that ends
        the covered work instead: where live idles may come before the snapshot
        (``live_in_window``), one the work may end with (the confirming stop reason; any where it
        may end on its own, ``own_end_after_cancel``). It is that idle only while another state
        reported in the same window can be the snapshot: one before it, or one after it before the
        successful resume response (``window_leaves_cancel``); otherwise it is the snapshot
        (``snapshot_leaves_cancel``)."""
        return self.live_in_window(window_idle) and (
            self.own_end_after_cancel(cancel_takes_effect) or self.confirmation_breach(reason) is None
        )

    @staticmethod
    def window_leaves_cancel(undecided_idle: bool, succeeded: bool) -> bool:
        """``cancelled_work_ends``: whether a resume response breaks it: a successful one
        (``succeeded``: the snapshot was owed in its window) while the one idle of the window that
        may have been the live idle ending the covered work (``ends_in_window``) had no other state
        reported in that window beside it (``undecided_idle``): that idle was the snapshot, sent
        before the idle confirming the cancellation (``snapshot_leaves_cancel``)."""
        return undecided_idle and succeeded

    @staticmethod
    def snapshot_leaves_cancel(cancel_pending: bool, resume_snapshot: bool) -> bool:
        """``cancelled_work_ends``: whether an idle breaks it: a resume snapshot (``resume_snapshot``)
        reporting idle while the work a session/cancel or session/close covered never had the idle
        confirming the cancellation (``cancel_pending``). The snapshot says no foreground work is
        active, so that work is over; but a resume idle snapshot "may carry the last stop reason
        for context, without creating a new completion or cancellation" (State transitions), even
        one carrying cancelled, and a repeated idle after it ends no additional work: the
        confirming idle owed when the work ended was never sent, and no later message can be it."""
        return cancel_pending and resume_snapshot

    @staticmethod
    def owes_lifecycle(received_while_idle: bool, succeeded: bool) -> bool:
        """``accepted_work_reported``: whether a prompt's answer leaves an active state owed: it
        succeeded, and the prompt was received while idle was reported (work already active when
        it came may be the work that handles it)."""
        return received_while_idle and succeeded

    @staticmethod
    def stop_reason_named(reason: str) -> bool:
        """``custom_stop_prefixed``: whether a string stop reason is a standard one or a custom one
        (it begins with ``_``)."""
        return reason in foreground.STOP_REASONS or reason.startswith("_")

    @staticmethod
    def custom_states_possible(reading: str, meta: bool, states_key: bool) -> bool:
        """The foreground table's guard ``custom_states`` (STATE-04: the standard states are owed
        unless the Client advertised custom or future states) for a Client whose initialize is in
        view, under the reading ``custom-state-advertisement``: ``meta``: its capabilities carry a
        non-empty ``_meta``, where custom capabilities are advertised; ``states_key``: that
        ``_meta`` carries ``customStates``, the model's own convention. ``any-meta``: any
        ``_meta`` may be the advertisement; ``custom-states-key``: only that key is."""
        return states_key if reading == "custom-states-key" else meta

    future_reason_possible = _reading_is("may-be-future")
    """``custom_stop_prefixed`` under the reading ``future-stop-reason``: whether an unknown stop
    reason without ``_`` may be one of a future ACP variant (``may-be-future``: a suspect)
    rather than a breach (``custom``)."""

    @property
    def steer(self) -> bool:
        return bool(self.values[STEERING.name]["steer"])

    def may_insert_now(self, received_in_active_work: bool, work_still_active: bool) -> bool:
        """``steering``: whether a prompt may be inserted now (received during active work that
        is still active: only when steering is allowed)."""
        return self.steer or not (received_in_active_work and work_still_active)

    @staticmethod
    def own_user_message(
        state: str,
        own_work: bool,
        prompt_waits: bool = False,
        refused_work: bool = False,
        delegated: bool = False,
    ) -> bool | None:
        """``own_user_message``: whether a user message no waiting prompt accounts for may be the
        Agent's own insertion, reported with the foreground state ``state`` (``active``, ``idle``
        or ``other``: unknown or custom, which place no work), ``own_work``: the latest work
        started was the Agent's own, started while no prompt waited, and has not ended. None: not
        yet known (the work it is for must be reported starting next: an Agent that starts work
        itself knows it and reports it). While a prompt of the session waits (``prompt_waits``)
        only a message reported during that own work may be the Agent's own (then a waiting prompt
        may still claim it, and none has to); any other is counted against the waiting prompts.
        While none waits, one reported during work is the Agent's own in any work, also in work a
        prompt started once that prompt is answered (its message is the one its response named),
        but not in a refused prompt's work (``refused_work``: reported starting while a prompt
        waited that was then answered with an error, so it waited uninserted, and none waiting
        then was inserted: its hook work, whose user message is "for that submission", Prompts
        that are never inserted; ``Rules.refused_work`` says which work is). Never in a child
        session that received no session/prompt (``delegated``): what comes into a subagent's
        session there is the task its parent gave it, a session-directed message (SDM-05)."""
        if delegated:
            return False
        if prompt_waits:
            return state == "active" and own_work
        if state == "active":
            return not refused_work
        return True if own_work else None

    @staticmethod
    def refused_work(waited_refused: bool, waited_inserted: bool) -> bool:
        """``own_user_message``: whether foreground work is a refused prompt's hook work, where
        no user message may be the Agent's own: a prompt that waited at its start was then
        answered with an error, so it waited uninserted (``waited_refused``: "A failed foreground
        hook can therefore require both a prompt error response and an idle update", Prompts that
        are never inserted), and no prompt that waited at its start was inserted
        (``waited_inserted``: answered with success). Such a prompt makes it that prompt's work
        too: running "may precede insertion, the prompt response, and user-message updates, for
        example while a foreground hook runs" (Insertion and ordering), so once that prompt is
        answered a message in it is as in any work a prompt started: nothing ties it to the
        refused submission."""
        return waited_refused and not waited_inserted

    @staticmethod
    def own_work(waited_uninserted: bool, inserted_awaiting_work: bool) -> bool:
        """``own_user_message``: whether foreground work is the Agent's own (its user message
        needs no prompt): it started while no prompt waited for insertion (work started then is
        that prompt's hook work, "running ... may precede insertion") and no inserted prompt
        still awaited its work."""
        return not waited_uninserted and not inserted_awaiting_work

    @staticmethod
    def awaits_work_after_idle(awaited: bool, after_unobserved: bool) -> bool:
        """``own_user_message``: whether an inserted prompt that awaited its work (``awaited``)
        still awaits it after an idle, not a resume snapshot, that follows unknown or an
        unrecognized state (``after_unobserved``). Its work may have started and ended while the
        state was unobservable ("a later current-state snapshot restores a known state without
        implying that work started or ended while it was unobservable": State transitions), so
        that idle may end it: work reported starting after it need not be that prompt's."""
        return awaited and not after_unobserved

    @staticmethod
    def waiting_states(prompt_table: MachineSpec) -> frozenset[str]:
        """``held_in_order``: the states in which a prompt waits for insertion (those the prompt
        table, ``prompt_table``, has an ``insert`` row from), whether held or not yet."""
        return frozenset(row.source for row in prompt_table.rows if row.trigger == "insert")

    @staticmethod
    def oldest_waiting(waiting: Iterable[object]) -> object | None:
        """``held_in_order``: the prompt that may be inserted next among those waiting, given in
        receipt order."""
        return next(iter(waiting), None)

    may_overtake_held = _reading_is("held-only")
    """``held_in_order`` under the reading ``prompt-ahead-of-held``: whether a newly received
    prompt may go in at once ahead of held ones (``held-only``: the order binds held prompts
    among themselves) or waits its turn behind them (``receipt-order``)."""

    @staticmethod
    def allowed_types(advertised: Iterable[str]) -> frozenset[str]:
        """``content_advertised``: the content types a prompt may carry (baseline and
        advertised: PromptCapabilities fields)."""
        return BASELINE_PROMPT_TYPES | {PROMPT_CAPABILITY_TYPES[f] for f in advertised}

    @staticmethod
    def unadvertised(
        types: Iterable[object], allowed: frozenset[str], custom_ok: bool = False
    ) -> tuple[str, ...]:
        """``content_advertised`` (the Agent refuses them), ``client_sends_advertised`` (the Client
        never sends them): the content types of a prompt that the Agent did not allow
        (``allowed``); a custom type is allowed where the capabilities carry ``_meta``
        (``custom_ok``). Blocks without a string type are not judged here."""
        return tuple(
            t for t in types
            if type(t) is str and t not in allowed and (t in STANDARD_CONTENT_TYPES or not custom_ok)
        )  # fmt: skip

    @staticmethod
    def setup_missing(init_pending: bool, resuming: bool, unset: bool = False) -> str | None:
        """``setup_before_prompts``: what a session/prompt sent now comes before (None: nothing);
        ``unset``: the stream shows the connection from its start and nothing set the session up.
        A setup step the Client repeats is incomplete until answered, whatever came before: a
        repeated initialize (the latest successful one is authoritative), a session/resume of a
        session already set up (``resuming``: until its response the Client knows neither whether
        it succeeded nor the snapshot it must use, Initial state and synchronization)."""
        if init_pending:
            return "initialize was answered successfully"
        if resuming:
            return "session/resume was answered"
        if unset:
            return "a session/new, session/fork or successful session/resume set its session up"
        return None

    @staticmethod
    def answer_owed_at_end(tabled: bool) -> bool:
        """``requests_answered``: whether a request still unanswered at the end breaks it
        (``tabled``: its own machine table follows it to its answer and judges that instead)."""
        return not tabled

    @staticmethod
    def empty_prompt(prompt: object) -> bool:
        """``prompt_has_content``: whether a prompt array is empty (a malformed one is the schema's)."""
        return type(prompt) is list and not prompt

    @staticmethod
    def covered_invalid_answers(cancelled_invalid_prompt: str) -> tuple[str, ...]:
        """``content_advertised`` against ``cancel_covers``, as the reading
        ``cancelled-invalid-prompt`` says: how a prompt with unadvertised content that a
        session/cancel covers may be answered: ``invalid`` (-32602), ``cancelled`` (-32800), or
        either (``either``)."""
        found = {"cancelled": ("cancelled",), "invalid": ("invalid",)}
        return found.get(cancelled_invalid_prompt, ("invalid", "cancelled"))

    @staticmethod
    def completes_unrun(granted_not_run: bool, status: str) -> bool:
        """``approved_runs``: whether reporting ``status`` for a tool call breaks it
        (``granted_not_run``: its permission was granted and it has not gone in_progress since)."""
        return granted_not_run and status == toolcall.COMPLETED

    @staticmethod
    def mode_advertised(mode: str, advertised: Iterable[str], custom_ok: bool = False) -> bool:
        """``advertised_modes``: whether an elicitation in ``mode`` may be sent (``advertised``: the
        modes the Client's initialize advertised; ``custom_ok``: its elicitation capabilities carry
        ``_meta``, which allows custom modes)."""
        return mode in advertised or (custom_ok and mode.startswith("_"))

    lists_before_first = _reading_is("every")
    """``list_on_every_snapshot`` under the reading ``state-updates-before-first-list``: whether
    the list binds the state_updates before the session's first one too (``every``: an Agent
    that may report background work carries one from its first state_update)."""

    terminal_alone_binds = _reading_is("only-live-work")
    """``terminal_listed_alone`` under the reading ``tool-with-listed-terminal``: whether a tool
    call whose content embeds a listed terminal has no live work but that terminal
    (``only-live-work``: the list names the terminal alone) or may have other work
    (``may-have-other-work``: the list may name both)."""

    @staticmethod
    def list_missing(listed_before: bool, bare_before: bool, before_first_list: bool, has_list: bool) -> bool:
        """``list_on_every_snapshot``: whether a state_update breaks it: one without a concrete
        list after the session's first list (``listed_before``), or, when ``before_first_list``,
        the session's first list after a state_update without one (``bare_before``)."""
        if listed_before:
            return not has_list
        return has_list and bare_before and before_first_list

    @staticmethod
    def listed_with_terminal(
        listed: Collection[tuple[str, str]], embeds: Mapping[str, Collection[str]]
    ) -> list[tuple[str, tuple[str, ...], bool]]:
        """``terminal_listed_alone``: for each tool call (in ID order) whose content embeds a
        listed terminal (``embeds``: tool call -> terminals), those terminals and whether the
        list names the tool call as well (which breaks it)."""
        found = []
        for tool, terms in sorted(embeds.items()):
            both = tuple(sorted(t for t in terms if ("terminal", t) in listed))
            if both:
                found.append((tool, both, ("tool_call", tool) in listed))
        return found

    # -- a prompt's answer and its user message (2. Prompt accepted; Prompts that are never
    #    inserted; Cancellation) ---------------------------------------------------------------
    @staticmethod
    def message_id_given(mid: object) -> TypeGuard[str]:
        """``message_id_returned``: whether the value a success response to a session/prompt
        gives as its messageId is one (``mid``: None when the field is left out)."""
        return type(mid) is str

    @staticmethod
    def user_message_reportable(inserted: bool) -> bool:
        """``reported_after_insertion`` and ``rejected_not_reported``: whether an update about a
        submission's user message may be sent (``inserted``: the prompt was, or may have been,
        inserted by then, whatever its answer since): never before insertion, never for a
        submission refused or withdrawn before it."""
        return inserted

    user_content_replaceable = _reading_is("upsert")
    """``user_message_content`` under the reading ``user-message-content``: whether an update
    about a submission's user message may carry content of the Agent's own that a later update
    replaces (``upsert``), or only content of the prompt (``prompt-content``)."""

    @staticmethod
    def content_outside_prompt(
        user_message_content: str, blocks: Iterable[object], prompt: Container[object]
    ) -> list[object]:
        """``user_message_content``: the blocks of a user_message update about a submission's
        message (``blocks``) that are not blocks of its prompt's content array (``prompt``), where
        the reading in force binds the content to the prompt's (``user_content_replaceable``); a
        breach when any are left."""
        if Rules.user_content_replaceable(user_message_content):
            return []
        return [b for b in blocks if b not in prompt]

    @staticmethod
    def returned_id_breach(
        mid: str, returned: Mapping[str, object], first_report: int, received: int, replayed: int = 0
    ) -> Between | None:
        """The declaration a success response breaks by returning ``mid`` for a prompt received at
        line ``received``, or None (``returned``: messageId -> the submission a success already
        returned it for, None for a user message taken as the Agent's own insertion;
        ``first_report``: the line of the first live report of ``mid`` no success claimed yet, 0
        for none; ``replayed``: the line where a session/resume first replayed a user message
        under ``mid``, 0 for none). Another submission's ID is ``distinct_message_ids``', and so is
        the ID of a message replayed before the prompt was received: replay re-sends retained,
        inserted input under its ID (2. Prompt accepted), an earlier submission than one received
        after it (a prompt received before the replay may be that very message). The ID of the Agent's own
        insertion was reported while no prompt waited, so before this one was received: the
        response makes that message this submission's (the Client reconciles with it), whose
        update then preceded insertion: ``reported_after_insertion``, as for an unclaimed report
        first seen before the receipt (``user_message_reportable``)."""
        if mid in returned:
            return DISTINCT_MESSAGE_IDS if returned[mid] is not None else REPORTED_AFTER_INSERTION
        if 0 < replayed < received:
            return DISTINCT_MESSAGE_IDS
        if first_report and not Rules.user_message_reportable(first_report > received):
            return REPORTED_AFTER_INSERTION
        return None

    @staticmethod
    def unaccounted_user_message(refused_before: bool) -> Between:
        """The declaration a live user message breaks when no success response can account for
        it: ``rejected_not_reported`` when a prompt of its session received before it was
        answered with an error (``refused_before``: the report is that refused submission's), else
        ``own_user_message`` (reported under an ID no response returned)."""
        return REJECTED_NOT_REPORTED if refused_before else OWN_USER_MESSAGE

    @staticmethod
    def earlier_submission(mid: str, returned: Mapping[str, object]) -> object | None:
        """``distinct_message_ids``: the other submission of the session that was already given
        ``mid`` (``returned``: messageId -> the submission a success response returned it for, None
        for a user message no submission accounts for), or None; returning ``mid`` again for
        another submission breaks it."""
        return returned.get(mid)

    @staticmethod
    def replay_renamed(mid: str, live_ids: Container[str]) -> bool:
        """``replay_keeps_ids``: whether a user message replayed by a session/resume carries an ID
        the session never used live (``live_ids``): the retained message was given a new one."""
        return mid not in live_ids

    @staticmethod
    def withdrawn_by_earlier_cancel(still_received: bool, withdrawn: bool) -> bool:
        """``later_prompts_uncovered``: whether the answer to a prompt received after a
        session/cancel of its session breaks it: -32800 (``withdrawn``) while the prompt may still
        be as received (``still_received``: no later session/cancel, session/close or
        $/cancel_request stopped it), so only that earlier cancel could have withdrawn it."""
        return still_received and withdrawn


SPEC: Final = Rules()
"""The rules between machines as the spec writes them."""


def rules_stated() -> dict[str, tuple[str, ...]]:
    """Rule ID -> the declarations stating it (``model.between.NAME``), for traceability."""
    out: dict[str, list[str]] = {}
    for d in DECLARATIONS:
        for rule in d.statements:
            out.setdefault(rule, []).append(f"model.between.{d.name.upper()}")
    return {k: tuple(v) for k, v in out.items()}
