"""The modes of ``acp-model agent``: which of the model's freedoms the served Agent takes.

Owns: ``Mode``, a filter of the simulated Agent's choices made of the same stuff as the
explorers' bounds (``simulator.peers.config.Config``): the features it may use, the readings it acts
on, moves it never makes, and moves it makes as soon as they are enabled (a priority, as a
fairness assumption would give them); and the two modes, ``EVERY_FREEDOM`` (the default: every
freedom of the model, the seed choosing among them) and ``COMMON_PATH`` (``--common-path``: the
path most Agents take, for a client developer's first runs). The Agent itself is the model's
either way (``simulator.peers.agent.Agent``); a mode only narrows what it may choose.

Must not know: the wire, standard input and output, the command line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from properties.readings import REPEATED_IDLE_NEW_REASON, TOOL_UPDATES_AFTER_IDLE, UNACCOUNTED_USER_MESSAGE
from simulator.peers.config import Config


@dataclass(frozen=True)
class Mode:
    name: str
    takes: str
    """What the Agent does in this mode (one paragraph, for ``--help`` and the docs)."""
    features: frozenset[str] | None = None
    """The features (``config.FEATURES``) the Agent may use; None: those of its ``Config``."""
    readings: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Readings the Agent acts on in this mode, whatever the run's (the stricter alternatives,
    which give it fewer freedoms: a conforming run stays conforming under the defaults)."""
    never: frozenset[tuple[str, Any]] = frozenset()
    """Moves ``(name, arg)`` of ``Agent.enabled()`` it never makes."""
    eager: frozenset[str] = frozenset()
    """Moves (by name) it makes as soon as they are enabled after a message arrives, before it
    listens again: no other move, and no other message of the Client, comes between."""

    def config(self, cfg: Config) -> Config:
        """``cfg`` narrowed to this mode: its features and readings."""
        features = cfg.features if self.features is None else cfg.features & self.features
        return cfg.with_(features=features, readings={**dict(cfg.readings), **self.readings})

    def conflicts(self, readings: Mapping[str, str]) -> list[str]:
        """The chosen readings this mode overrides with another alternative ("NAME=ALT")."""
        return [f"{n}={a}" for n, a in sorted(readings.items()) if self.readings.get(n, a) != a]


EVERY_FREEDOM = Mode(
    "every-freedom",
    "every freedom of the model, chosen by the seed: prompts held, rejected or inserted ahead "
    "of held ones, turns ending with any stop reason (error, limits, a custom one, none), "
    "background terminals, tool calls and child sessions, compactions, unknown and custom "
    "states, repeated snapshots and idles, late patches, permission requests while running",
)

COMMON_PATH = Mode(
    "common-path",
    "only the common path: every prompt is inserted as soon as it arrives and answered with "
    "its messageId; turns stream messages, thoughts, plans and tool calls (with permission "
    "requests), and end with end_turn, or cancelled after a session/cancel or session/close; "
    "notices and usage updates; a resume sends one snapshot. No rejections, no error or other "
    "stop reasons, no background work or child sessions, no compactions, no unknown or custom "
    "states or values, no repeated snapshots or idles, no updates after idle, no user messages "
    "of the Agent's own",
    features=frozenset(
        {"chunks", "thought", "plan", "permission", "notice", "usage", "cancel", "close", "resume"}
    ),
    readings=MappingProxyType(
        {
            TOOL_UPDATES_AFTER_IDLE: "foreground-owed",
            REPEATED_IDLE_NEW_REASON: "completion",
            UNACCOUNTED_USER_MESSAGE: "prompt-only",
        }
    ),
    never=frozenset(
        {
            ("resync", "again"),
            ("replay", "again"),
            ("replay", "early"),
            ("restate_idle", "end_turn"),
            ("restate_idle", "max_tokens"),
        }
    ),
    eager=frozenset({"insert"}),
)
