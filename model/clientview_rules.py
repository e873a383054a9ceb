"""What the Client's view answers to: each aspect of the normative client view, and the rule a
Client breaks when its view differs from the normative one there.

Theory of operation
-------------------
The Client's machine (``model.clientview``) folds every message into one view per session: its
entities and their timeline, its state and background, its completions, usage and prompt
bookkeeping, and what it concludes (prompts inserted, terminals exited, work abandoned, updates
held back). A Client conforms when its view is the normative one; where the two differ, the
aspect that differs names the rule broken. ``ASPECTS`` states that once, as data: each aspect's
name, the rule, and what a difference there means (our words, after the spec's sections). The
comparison of two views (``properties.viewcheck.compare_views``) finds the aspects that differ
and reads their rules here; it names no rule itself.

Aspects whose difference needs a closer look to name (an entity's fields, the session state)
are split by what the closer look finds: fields by entity type (``fields:TYPE``), and the state
by what each side shows.

Not an aspect: notice counts (a Client may disregard notices), preserved unknown updates and
the count of malformed updates (no rule of the Client's view is about them).

Must not know: JSON-RPC, how the views are built or compared, the simulator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from model.entity import MESSAGE_TYPES, PLACEMENT


@dataclass(frozen=True, slots=True)
class Aspect:
    """One aspect of the view, and the rule a difference in it breaks."""

    name: str
    rule: str
    says: str
    """What a view that differs there did (one line)."""


_FIELDS = "patched an entity's fields otherwise than the spec says"

ASPECTS: Final[tuple[Aspect, ...]] = (
    # the entities and their timeline (Entity IDs; Message IDs; Session-directed messages)
    Aspect("session-missing", "ENT-03", "lost a session, or holds one nothing created"),
    Aspect("entity-missing", "ENT-03", "dropped an entity: a chunk or update for an unseen ID"),
    Aspect("entity-retyped", "ENT-02", "holds an ID under another type: entities keyed by ID alone"),
    Aspect("entity-extra", "ACC-08", "holds an entity the Agent never reported: a duplicate, not a merge"),
    Aspect("session-message-extra", "SDM-03", "made up a session message the Agent never reported"),
    Aspect("order", PLACEMENT, "moved an entity: the first update or chunk fixes its position"),
    Aspect("fields:shared-id", "ENT-02", "an update touched the entity of another type with that ID"),
    *(Aspect(f"fields:{m}", "MSGID-02", _FIELDS) for m in MESSAGE_TYPES),
    Aspect("fields:tool_call", "TOOL-06", _FIELDS),
    Aspect("fields:compaction", "COMPACT-04", _FIELDS),
    Aspect("fields:terminal", PLACEMENT, "patched a terminal otherwise than in place"),
    Aspect("fields:plan", PLACEMENT, "patched a plan otherwise than in place"),
    Aspect(
        "session-message-links",
        "SDM-02",
        "linked the two views of a session message without the Agent's references",
    ),
    # the session state (Session states; Initial state and synchronization; State transitions)
    Aspect(
        "state:unknown-shown-active", "STATE-02", "still shows earlier activity as confirmed after unknown"
    ),
    Aspect("state:unsure", "STATE-05", "shows another state for an unknown or unrecognized one"),
    Aspect(
        "state:active-overwritten", "SYNC-01", "overwrote a reported state, e.g. by a session/new response"
    ),
    Aspect("state:idle-not-taken", "STOP-02", "did not take the idle as the end of the work"),
    Aspect("state:inferred", "SYNC-03", "shows an activity the reported state does not give"),
    Aspect("background", "BG-08", "shows a background list the Agent did not report as it is"),
    # completed work (State transitions; Stop reasons; Session usage updates)
    Aspect("completions:more", "TRANS-02", "counted a repeated snapshot as new work ended"),
    Aspect("completions:fewer", "STOP-02", "did not take an idle as the end of work"),
    Aspect("last-stop-reason", "STOP-02", "keeps another stop reason than the last idle's"),
    Aspect("usage", "TRANS-02", "added usage for a repeat"),
    # prompts and what the Client concludes (2. Prompt accepted; Background work)
    Aspect("prompts", "ACC-10", "tied a prompt to a message other than its response's"),
    Aspect("subagents", PLACEMENT, "patched a subagent record otherwise than in place"),
    Aspect("inserted", "INS-01", "took a prompt as inserted without its response's messageId"),
    Aspect("exited", "BG-02", "took a terminal as exited without its exitStatus"),
    Aspect("abandoned", "BG-16", "took work as abandoned that the background list does not drop"),
    Aspect("deferred", "ACC-12", "held updates back waiting for an order the spec does not give"),
)

RULE_OF: Final[dict[str, str]] = {a.name: a.rule for a in ASPECTS}
"""Aspect name -> the rule a difference there breaks."""

assert len(RULE_OF) == len(ASPECTS), "an aspect is stated twice"
