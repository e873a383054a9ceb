"""Client-view comparison: how a simulated Client's view differs from the reference view, and
which client-view rule each difference breaks.

Owns: ``compare_views(reference, actual)`` over two ``ClientView.to_json()`` values (one object
per session: ``entities``, ``timeline``, ``session``, ``preserved``; see
``model/clientview.py``).

It is the executor of the model's table ``model.clientview_rules.ASPECTS``: it finds the aspects
of the view that differ and reads the rule each breaks there; it names no rule itself. How a
difference is told to an aspect:

- an entity of the reference missing from the view: ``entity-retyped`` when the view holds that
  ID under another type, else ``entity-missing``; an entity only the view has:
  ``entity-retyped`` when the reference has that ID under another type, ``session-message-extra``
  for a session message, else ``entity-extra``; a session only one side has:
  ``session-missing`` (a session only the view has, with entities: what it added);
- the entities both hold in a different timeline order: ``order``;
- an entity's fields differ: ``fields:shared-id`` when its ID is used by another type too; else
  ``fields:TYPE``, except a session message differing only in senderMessageId /
  recipientMessageId: ``session-message-links``;
- state: unknown in the reference, active in the view: ``state:unknown-shown-active``; unknown
  or unrecognized in the reference, other in the view: ``state:unsure``; active in the reference
  but idle in the view: ``state:active-overwritten``; idle in the reference, other in the view,
  with fewer completions: ``state:idle-not-taken``; any other: ``state:inferred``;
- background: ``background``; completions: ``completions:more`` or ``completions:fewer``; last
  stop reason: ``last-stop-reason``; usage: ``usage``; prompt bookkeeping (prompts, rejected
  prompts): ``prompts``; subagent records: ``subagents``; what the Client concludes:
  ``inserted``, ``exited``, ``abandoned``, ``deferred``.

Not compared: notice counts, preserved unknown updates and the count of malformed updates (no
aspect of the table).

Must not know: how the views were built, the simulator, monitors.
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any, Final

from model.clientview_parts import ACTIVE_STATES
from model.clientview_rules import RULE_OF

_LINKS: Final = frozenset({"senderMessageId", "recipientMessageId"})
_CONCLUSIONS: Final = (
    ("inserted", "prompts taken as inserted"),
    ("exited", "terminals taken as exited"),
    ("abandoned", "work taken as abandoned"),
    ("deferred", "updates held back"),
)
"""What the Client concludes (session fields of the view, each an aspect of the table)."""
_UNSURE: Final = frozenset({"unknown", "unrecognized"})
_EMPTY: dict[str, Any] = {}

Found = list[tuple[str, str]]


def compare_views(reference: dict[str, Any], actual: dict[str, Any], dropped: Container[str] = ()) -> Found:
    """(rule ID, explanation) for each difference between the reference view and the actual one,
    in session order then in the order of the mapping above; [] when they agree. A difference
    whose rule is in ``dropped`` (a variant's dropped rules) is set aside."""
    if reference == actual:
        return []
    found: Found = []
    for sid in sorted(set(reference) | set(actual)):
        ref, act = reference.get(sid), actual.get(sid)
        if ref == act:
            continue
        if ref is None and act is not None and act.get("timeline"):
            _entities(sid, _EMPTY, act, found)  # a session the view made up: what it added
            continue
        if ref is None or act is None:
            where = "view" if act is None else "reference"
            found.append((RULE_OF["session-missing"], f"{sid}: session missing from the {where}"))
            continue
        _entities(sid, ref, act, found)
        _session(sid, ref.get("session", _EMPTY), act.get("session", _EMPTY), found)
    return [(rule, why) for rule, why in found if rule not in dropped] if dropped else found


def _keys(view: dict[str, Any]) -> tuple[list[tuple[str, str]], dict[str, set[str]]]:
    """The view's timeline as (type, ID) keys, and the types each ID is held under."""
    order = [(str(t), str(i)) for t, i in view.get("timeline", [])]
    types: dict[str, set[str]] = {}
    for t, i in order:
        types.setdefault(i, set()).add(t)
    return order, types


def _entities(sid: str, ref: dict[str, Any], act: dict[str, Any], found: Found) -> None:
    (ref_order, ref_types), (act_order, act_types) = _keys(ref), _keys(act)
    ref_keys, act_keys = set(ref_order), set(act_order)
    for t, i in [k for k in ref_order if k not in act_keys]:
        if act_types.get(i, set()) - {t}:
            kept = ", ".join(sorted(act_types[i]))
            aspect, text = "entity-retyped", f"is missing; the view keeps {i!r} only as {kept}"
        else:
            aspect, text = "entity-missing", "is missing from the view"
        found.append((RULE_OF[aspect], f"{sid}: {t} {i!r} {text}"))
    for t, i in [k for k in act_order if k not in ref_keys]:
        if ref_types.get(i, set()) - {t}:
            had = ", ".join(sorted(ref_types[i] - {t}))
            aspect, text = "entity-retyped", f", the reference has that ID as {had}"
        elif t == "session_message":
            aspect, text = "session-message-extra", " that the Agent never reported"
        else:
            aspect, text = "entity-extra", " that the reference does not"
        found.append((RULE_OF[aspect], f"{sid}: the view holds {t} {i!r}{text}"))
    common_ref = [k for k in ref_order if k in act_keys]
    common_act = [k for k in act_order if k in ref_keys]
    if common_ref != common_act:
        moved = next(a for a, b in zip(common_ref, common_act, strict=True) if a != b)
        found.append((RULE_OF["order"], f"{sid}: timeline order differs (first at {moved[0]} {moved[1]!r})"))
    ref_ents, act_ents = ref.get("entities", _EMPTY), act.get("entities", _EMPTY)
    for t, i in common_ref:
        a = ref_ents.get(t, _EMPTY).get(i)
        b = act_ents.get(t, _EMPTY).get(i)
        if a == b:
            continue
        a, b = a or _EMPTY, b or _EMPTY
        fields = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        if len(ref_types.get(i, ())) > 1:
            aspect = "fields:shared-id"
        elif t == "session_message" and set(fields) <= _LINKS:
            aspect = "session-message-links"
        else:
            aspect = f"fields:{t}"
        found.append(
            (RULE_OF.get(aspect, RULE_OF["order"]), f"{sid}: {t} {i!r} differs in {', '.join(fields)}")
        )


def _session(sid: str, ref: dict[str, Any], act: dict[str, Any], found: Found) -> None:
    if ref.get("state") != act.get("state"):
        rs, vs = ref.get("state"), act.get("state")
        if rs == "unknown" and vs in ACTIVE_STATES:
            aspect = "state:unknown-shown-active"
        elif rs in _UNSURE:
            aspect = "state:unsure"
        elif vs == "idle" and rs in ACTIVE_STATES:
            aspect = "state:active-overwritten"
        elif rs == "idle" and (act.get("completions") or 0) < (ref.get("completions") or 0):
            aspect = "state:idle-not-taken"
        else:
            aspect = "state:inferred"
        found.append((RULE_OF[aspect], f"{sid}: state is {vs!r} in the view, {rs!r} in the reference"))
    _shown(sid, ref, act, "background", "background", "background is", found)
    rc, vc = ref.get("completions"), act.get("completions")
    if rc != vc:
        aspect = "completions:more" if (vc or 0) > (rc or 0) else "completions:fewer"
        found.append((RULE_OF[aspect], f"{sid}: {vc} completions in the view, {rc} in the reference"))
    _shown(sid, ref, act, "last_stop_reason", "last-stop-reason", "last stop reason", found)
    _shown(sid, ref, act, "usage", "usage", "usage", found)
    if ref.get("prompts") != act.get("prompts") or ref.get("rejected_prompts") != act.get("rejected_prompts"):
        found.append((RULE_OF["prompts"], f"{sid}: prompt bookkeeping differs"))
    if ref.get("subagents") != act.get("subagents"):
        found.append((RULE_OF["subagents"], f"{sid}: subagent records differ"))
    for name, what in _CONCLUSIONS:
        _shown(sid, ref, act, name, name, what, found)


def _shown(
    sid: str, ref: dict[str, Any], act: dict[str, Any], name: str, aspect: str, what: str, found: Found
) -> None:
    """The session field ``name`` as each side shows it, when they differ (the aspect ``aspect``)."""
    if ref.get(name) != act.get(name):
        found.append(
            (
                RULE_OF[aspect],
                f"{sid}: {what} {act.get(name)!r} in the view, {ref.get(name)!r} in the reference",
            )
        )
