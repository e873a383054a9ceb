"""Client-view comparison: how a simulated Client's view differs from the reference view, and
which client-view rule each difference breaks.

Owns: ``compare_views(reference, actual)`` over two ``ClientView.to_json()`` values (one object
per session: ``entities``, ``timeline``, ``session``, ``preserved``; see
``properties/clientview.py``), and ``CLIENT_FAULT_RULES``, the rule each named client fault of
``properties.clientview.CLIENT_FAULTS`` is meant to break (read from ``properties.seeded``).

Mapping of differences to rules (catalogue IDs, check ``client-view``):

- an entity of the reference missing from the view: ENT-02 when the view holds that ID under
  another type (entities keyed by ID alone collapse), else ENT-03 (a chunk or update for an
  unseen ID was dropped); an entity only the view has: ENT-02 when the reference has that ID
  under another type, else ACC-08 (a duplicate instead of a merge);
- the entities both hold in a different timeline order: ENT-04 (the first update fixes the
  position);
- an entity's fields differ: ENT-02 when its ID is used by another type too (an update touched the
  wrong entity); else by type: messages MSGID-02, tool calls TOOL-06, compactions COMPACT-04,
  terminals and plans ENT-04 (patched in place);
- background unknown (null) in the reference but a list in the view, or any other background
  difference: BG-08;
- state: unknown in the reference, active in the view: STATE-02 (earlier activity still shown as
  confirmed); unknown or unrecognized in the reference, other in the view: STATE-05; active in the
  reference but idle in the view: SYNC-01 (an already reported state overwritten, e.g. by the
  session/new response); idle in the reference, other in the view, with fewer completions:
  STOP-02 (the idle not taken as the end of the work); any other state difference: SYNC-03 (an
  activity the reported state does not give, inferred from something else);
- a session message only the view has: SDM-03 (made up by the Client, not reported); one that
  differs only in senderMessageId / recipientMessageId: SDM-02 (views linked without the
  Agent's references);
- what the Client concludes: prompts taken as inserted INS-01, terminals taken as exited BG-02,
  work taken as abandoned BG-16, updates held back ACC-12;
- more completions in the view: TRANS-02 (a repeated snapshot counted as new work ended); fewer:
  STOP-02 (an idle not taken as the end of work); last stop reason: STOP-02;
- usage: TRANS-02 (repeats add no usage); prompt bookkeeping (prompts, rejected prompts): ACC-10;
  subagent records: ENT-04.

Not compared: notice counts (a Client may disregard notices, NOTICE-03), preserved unknown
updates and the count of malformed updates (not client-view rules).

Must not know: how the views were built, the simulator, monitors.
"""

from __future__ import annotations

from typing import Any, Final

from model.entity import PLACEMENT
from properties import seeded

CLIENT_FAULT_RULES: Final[dict[str, str]] = {name: seeded.BY_NAME[name].rule for name in seeded.VIEW_FAULTS}
"""Client fault name (``properties.clientview.CLIENT_FAULTS``) -> the rule it is meant to break."""

VIEW_RULES: Final = frozenset(
    {
        "ENT-02",
        "ENT-03",
        PLACEMENT,
        "ACC-08",
        "ACC-10",
        "MSGID-02",
        "TOOL-06",
        "COMPACT-04",
        "BG-08",
        "STATE-02",
        "STATE-05",
        "SYNC-01",
        "SYNC-03",
        "TRANS-02",
        "STOP-02",
        "SDM-02",
        "SDM-03",
        "BG-02",
        "BG-16",
        "ACC-12",
        "INS-01",
    }
)
"""Every rule ``compare_views`` can name."""

_TYPE_RULE: Final = {
    "user_message": "MSGID-02",
    "agent_message": "MSGID-02",
    "agent_thought": "MSGID-02",
    "session_message": "MSGID-02",
    "tool_call": "TOOL-06",
    "compaction": "COMPACT-04",
    "terminal": PLACEMENT,
    "plan": PLACEMENT,
}
_ACTIVE: Final = frozenset({"running", "requires_action"})
_LINKS: Final = frozenset({"senderMessageId", "recipientMessageId"})
_CONCLUSIONS: Final = (
    ("inserted", "INS-01", "prompts taken as inserted"),
    ("exited", "BG-02", "terminals taken as exited"),
    ("abandoned", "BG-16", "work taken as abandoned"),
    ("deferred", "ACC-12", "updates held back"),
)
"""What the Client concludes (session fields of the view), the rule a wrong conclusion breaks."""
_UNSURE: Final = frozenset({"unknown", "unrecognized"})
_EMPTY: dict[str, Any] = {}

Found = list[tuple[str, str]]


def compare_views(reference: dict[str, Any], actual: dict[str, Any]) -> Found:
    """(rule ID, explanation) for each difference between the reference view and the actual one,
    in session order then in the order of the mapping above; [] when they agree."""
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
            found.append(("ENT-03", f"{sid}: session missing from the {where}"))
            continue
        _entities(sid, ref, act, found)
        _session(sid, ref.get("session", _EMPTY), act.get("session", _EMPTY), found)
    return found


def _keys(view: dict[str, Any]) -> list[tuple[str, str]]:
    return [(str(t), str(i)) for t, i in view.get("timeline", [])]


def _entities(sid: str, ref: dict[str, Any], act: dict[str, Any], found: Found) -> None:
    ref_order, act_order = _keys(ref), _keys(act)
    ref_keys, act_keys = set(ref_order), set(act_order)
    ref_types: dict[str, set[str]] = {}
    act_types: dict[str, set[str]] = {}
    for t, i in ref_order:
        ref_types.setdefault(i, set()).add(t)
    for t, i in act_order:
        act_types.setdefault(i, set()).add(t)
    for t, i in [k for k in ref_order if k not in act_keys]:
        if act_types.get(i, set()) - {t}:
            found.append(
                (
                    "ENT-02",
                    f"{sid}: {t} {i!r} is missing; the view keeps {i!r} only as "
                    f"{', '.join(sorted(act_types[i]))}",
                )
            )
        else:
            found.append(("ENT-03", f"{sid}: {t} {i!r} is missing from the view"))
    for t, i in [k for k in act_order if k not in ref_keys]:
        if ref_types.get(i, set()) - {t}:
            found.append(
                (
                    "ENT-02",
                    f"{sid}: the view holds {t} {i!r}, the reference has that ID as "
                    f"{', '.join(sorted(ref_types[i] - {t}))}",
                )
            )
        elif t == "session_message":
            found.append(("SDM-03", f"{sid}: the view holds {t} {i!r} that the Agent never reported"))
        else:
            found.append(("ACC-08", f"{sid}: the view holds {t} {i!r} that the reference does not"))
    common_ref = [k for k in ref_order if k in act_keys]
    common_act = [k for k in act_order if k in ref_keys]
    if common_ref != common_act:
        moved = next(a for a, b in zip(common_ref, common_act, strict=True) if a != b)
        found.append((PLACEMENT, f"{sid}: timeline order differs (first at {moved[0]} {moved[1]!r})"))
    ref_ents, act_ents = ref.get("entities", _EMPTY), act.get("entities", _EMPTY)
    for t, i in common_ref:
        a = ref_ents.get(t, _EMPTY).get(i)
        b = act_ents.get(t, _EMPTY).get(i)
        if a == b:
            continue
        a, b = a or _EMPTY, b or _EMPTY
        fields = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
        rule = "ENT-02" if len(ref_types.get(i, ())) > 1 else _TYPE_RULE.get(t, PLACEMENT)
        if rule == "MSGID-02" and t == "session_message" and set(fields) <= _LINKS:
            rule = "SDM-02"
        found.append((rule, f"{sid}: {t} {i!r} differs in {', '.join(fields)}"))


def _session(sid: str, ref: dict[str, Any], act: dict[str, Any], found: Found) -> None:
    if ref.get("state") != act.get("state"):
        rs, vs = ref.get("state"), act.get("state")
        if rs == "unknown" and vs in _ACTIVE:
            rule = "STATE-02"  # earlier activity still shown as confirmed after unknown
        elif rs in _UNSURE:
            rule = "STATE-05"
        elif vs == "idle" and rs in _ACTIVE:
            rule = "SYNC-01"
        elif rs == "idle" and (act.get("completions") or 0) < (ref.get("completions") or 0):
            rule = "STOP-02"  # the idle was not taken as the end of the work
        else:
            rule = "SYNC-03"  # activity the reported state does not give
        found.append((rule, f"{sid}: state is {vs!r} in the view, {rs!r} in the reference"))
    if ref.get("background") != act.get("background"):
        found.append(
            (
                "BG-08",
                f"{sid}: background is {act.get('background')!r} in the view, "
                f"{ref.get('background')!r} in the reference",
            )
        )
    rc, vc = ref.get("completions"), act.get("completions")
    if rc != vc:
        rule = "TRANS-02" if (vc or 0) > (rc or 0) else "STOP-02"
        found.append((rule, f"{sid}: {vc} completions in the view, {rc} in the reference"))
    if ref.get("last_stop_reason") != act.get("last_stop_reason"):
        found.append(
            (
                "STOP-02",
                f"{sid}: last stop reason {act.get('last_stop_reason')!r} in the view, "
                f"{ref.get('last_stop_reason')!r} in the reference",
            )
        )
    if ref.get("usage") != act.get("usage"):
        found.append(
            (
                "TRANS-02",
                f"{sid}: usage {act.get('usage')!r} in the view, {ref.get('usage')!r} in the reference",
            )
        )
    if ref.get("prompts") != act.get("prompts") or ref.get("rejected_prompts") != act.get("rejected_prompts"):
        found.append(("ACC-10", f"{sid}: prompt bookkeeping differs"))
    if ref.get("subagents") != act.get("subagents"):
        found.append((PLACEMENT, f"{sid}: subagent records differ"))
    for name, rule, what in _CONCLUSIONS:
        if ref.get(name) != act.get(name):
            found.append(
                (rule, f"{sid}: {what} {act.get(name)!r} in the view, {ref.get(name)!r} in the reference")
            )
