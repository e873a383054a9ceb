"""The simulated Agent's seeded bugs: where a faulty Agent's moves deviate from the tables.

Faults (``faults=``) turn the Agent into one of the named seeded-bug agents used to prove that each
monitor can fail, each a deviation of ``simulator.peers.deviations`` applied by ``_can``,
``_deviation_events``, ``_fire``, ``_settle_end`` (a final status withheld), ``_new_id``,
``receive``, ``_applies``, ``misread`` and ``do``; no code here tests a fault's name. Where a fault
actually makes a move differ from what the conforming Agent would do, ``_breach(RULE)`` leaves a
breach marker naming the rule the move breaks (``marks``, first breach of each rule, in order;
part of the snapshot, so the exhaustive search keeps breaching paths apart), which the World
turns into a hidden step. Faults that only leave a move out are marked when the world is
quiescent (``omitted``): only then is the move never going to happen.

Owns: ``Deviating`` (the forbidden cells offered, what a move sends changed, the moves left out)
and ``AGENT_FAULTS``.

Must not know: the moves of a conforming Agent beyond their names, channels, monitors, or files.
"""

from __future__ import annotations

import copy
from typing import Any

from model import background as bgm
from model import session as sm
from properties import seeded
from properties.bugs import rule_of
from simulator.peers import deviations, wire
from simulator.peers.agent_background import _COMPACTION_MOVE
from simulator.peers.agent_state import _MSG_PREFIX, AgentState, Msg

AGENT_FAULTS = seeded.names("agent", deviations.Deviation)
"""The Agent's seeded bugs that it runs itself (``properties.seeded``): every agent deviation."""


class Deviating(AgentState):
    __slots__ = ()

    def omitted(self) -> tuple[str, ...]:
        """Rules broken by a move a fault leaves out and that is owed now: at quiescence, the move
        will never happen (never answering an inserted prompt, never running its work, never
        ending a compaction)."""
        out: list[str] = []
        for d in deviations.matching(self.deviations, deviations.Withhold):
            spec = self.specs[d.machine]
            for _, st in self._entities(d.machine):
                if any(m[0] in d.triggers for m in spec.moves(st)):  # owed, and withheld
                    out.append(d.rule or spec.eventually[st])
                    break
        return tuple(dict.fromkeys(r for r in out if r not in self.marks))  # (marked when skipped)

    def _entities(self, machine: str) -> list[tuple[Any, str]]:
        """(key, state) of the Agent's entities of ``machine`` (those a deviation can touch)."""
        if machine == "prompt":
            return [(r, self.prompts[r][0]) for r in self.prompts]
        if machine == "compaction":
            return list(self.compactions.items())
        if machine == "elicitation":
            return [(rid, e[0]) for rid, e in self.elicits.items()]
        if machine == "permission":
            return list(self.perms.items())
        if machine == "tool_call":
            return [(tid, t[0]) for tid, t in self.tools.items()]
        if machine == "session":
            return [(self.sid, self.session)]  # its own moves are made in the resume handshake
        if machine == "foreground":  # owed only while inserted prompts wait for their work
            return [(self.sid, self.real)] if self.session == sm.OPEN and self._inserted_waiting() else []
        if machine == "background_item":
            # not the subagent child (its list follows its state), and the next terminal while
            # one may start: unannounced
            found = [(key, st) for key, st in self.items.items() if key[0] != "subagent"]
            if self._room("background") and "terminal" in self.cfg.features:
                found.append((("terminal", f"term_{self.used['background'] + 1}"), bgm.UNANNOUNCED))
            return found
        raise ValueError(f"no entities of {machine!r}")

    def _deviation_events(self, add: Any) -> None:
        """The forbidden cells the seeded bugs of ``simulator.peers.deviations`` fire: wherever an
        entity is in the cell's state while the session is open or closing, made as the Agent makes that
        trigger (``_fire`` marks the cell's rule), until the rule is marked: a bug that broke it
        once and again would only make the search longer (a reopened tool call, completed and
        reopened forever)."""
        for d in self.deviations:
            if not isinstance(d, deviations.Forbidden) or self.session not in (sm.OPEN, sm.CLOSING):
                continue
            if rule_of(d) in self.marks:
                continue
            for key, state in self._entities(d.machine):
                if state != d.source:
                    continue
                own = {"oldest_held": self._oldest_waiting() == key} if d.machine == "prompt" else {}
                if any(own.get(k) != v for k, v in d.when.items()):
                    continue  # not where the cell is forbidden
                if self.specs[d.machine].written_refusal(d.source, d.trigger, {**own, **d.ctx}) is None:
                    continue  # a variant's added row allows the cell: an ordinary move (``_can``)
                if d.machine == "tool_call":
                    add(("agent", "tool_status", (key, d.dest)))
                elif d.machine == "compaction":
                    add(("agent", _COMPACTION_MOVE[d.trigger], key))
                elif d.machine == "background_item":
                    add(("agent", f"bg_{d.trigger}", key))
                elif d.machine == "elicitation":
                    if self.elicits[key][1] == "url":  # a completion names a URL elicitation
                        add(("agent", f"elicit_{d.trigger}", key))
                else:
                    add(("agent", d.trigger, key))  # the prompt's moves are named as its triggers

    def do(self, name: str, arg: Any) -> list[Msg]:
        out: list[Msg] = getattr(self, "_do_" + name)(arg)
        if self.deviations:
            out = self._deviate(name, out)
        if name != "replay":  # replayed history re-sends known entities: no transition
            self._entity_steps(out)
        return out

    def _deviate(self, name: str, out: list[Msg]) -> list[Msg]:
        """The seeded bugs' changes to what move ``name`` sends (rewritten, copied, added)."""
        for r in deviations.matching(self.deviations, deviations.Rewrite, action=name):
            for msg in out:
                if deviations.rewrite(msg, r) and not (r.unless and r.unless in self.cfg.features):
                    self._breach(r.rule)
        out, broken = deviations.copied(self.deviations, name, out)
        for rule in broken:
            self._breach(rule)
        for a in deviations.matching(self.deviations, deviations.Also, action=name):
            if a.rule not in self.marks:
                self._breach(a.rule)
                update = copy.deepcopy(dict(a.update))
                if a.reserve:  # about the next entity of that type: its ID is given now
                    self.ahead = (a.reserve, self._msg_id(_MSG_PREFIX[a.reserve]))
                    update["messageId"] = self.ahead[1]
                out.append(wire.update(self.sid, update))
        return out
