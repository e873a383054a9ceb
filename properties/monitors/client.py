"""The client monitor: what the Client may send, and when ("1. User message", the introduction).

Reasoning in proxy order: a Client line appears when the Agent received it, and an Agent line
when the Agent sent it. A Client request that appears *before* the Agent's answer to an earlier
request was therefore sent before the Client could have seen that answer. So:

Each rule is a declaration of ``model.between`` the monitor runs: INTRO-01
(setup_before_prompts), USER-01 (prompt_has_content), USER-03 (client_sends_advertised).

- INTRO-01: a ``session/prompt`` received while the Client's ``initialize`` is still unanswered,
  or while a ``session/resume`` of that session is unanswered (setup not finished), or for a
  session that a later ``session/new`` response creates, was sent before setup completed.
- USER-01: a ``session/prompt`` whose ``prompt`` is an empty array.
- USER-03: a prompt block whose type the Agent's ``initialize`` answer does not allow (judged only
  when that answer is in the stream; custom types only when the prompt capabilities carry no
  ``_meta`` where a custom capability could be advertised).

Tolerated permissions: a prompt in any state (ACTIVE-01), ``session/cancel`` at any time
(CANCEL-01), a ``cancelled`` permission outcome without a prior ``$/cancel_request`` (CANCEL-08):
no monitor reports any of them.

Must not know: anything the Agent sends besides the answers named above.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from model import between as bw
from properties.monitor import Message, on, rule_group

if TYPE_CHECKING:
    from properties.engine import MonitorSet

from properties.monitors.facts import FactsMonitor

_SETUP = bw.SETUP_BEFORE_PROMPTS.rule
_CONTENT = bw.PROMPT_HAS_CONTENT.rule
_ADVERTISED = bw.CLIENT_SENDS_ADVERTISED.rule
_ALWAYS = (_SETUP, _CONTENT)
"""Exercised by every session/prompt."""
_ALWAYS_KEY = rule_group(*_ALWAYS)


class ClientMonitor(FactsMonitor):
    """Client-side rules on session/prompt (see module docstring)."""

    RULES = (_SETUP, _CONTENT, _ADVERTISED)
    TOLERATES = ("ACTIVE-01", "CANCEL-01", "CANCEL-08")

    def __init__(self, owner: MonitorSet) -> None:
        super().__init__(owner)
        self.prompted: dict[str, int] = {}  # session -> line of its first prompt

    @on("client-request", "session/prompt")
    def _prompt(self, sid: str | None, params: dict[str, Any], line: int, msg: Message) -> None:
        facts = self.facts
        self._gx[_ALWAYS_KEY] += 1
        fs = facts.sessions.get(sid) if sid is not None else None
        missing = self.between.setup_missing(facts.init_pending, fs is not None and bool(fs.resuming))
        if missing is not None:
            self.breach(_SETUP, line, sid, f"session/prompt sent before {missing}", msg)
        if sid is not None and sid not in self.prompted:
            self.prompted[sid] = line
        prompt = params.get("prompt")
        if self.between.empty_prompt(prompt):
            self.breach(_CONTENT, line, sid, "session/prompt with an empty prompt array", msg)
        if facts.prompt_types is not None:
            self._ex[_ADVERTISED] += 1
            bad = facts.disallowed_types(prompt)
            if bad:
                self.breach(
                    _ADVERTISED,
                    line,
                    sid,
                    f"prompt content of type {', '.join(sorted(set(bad)))} was not allowed by the "
                    "Agent's prompt capabilities",
                    msg,
                )

    @on("agent-response", "session/new")
    def _created(self, sid: str | None, request: Message, line: int, msg: Message) -> None:
        result = msg.get("result")
        new_sid = result.get("sessionId") if type(result) is dict else None
        if type(new_sid) is str and new_sid in self.prompted:
            self.breach(
                _SETUP,
                line,
                new_sid,
                f"session/prompt for this session was received at line {self.prompted[new_sid]}, "
                "before session/new created it",
                msg,
            )

    def state_key(self) -> Any:
        return frozenset(self.prompted)
