"""The model's Client as a tester of real Agents: its choices, and the script that replays them.

Theory of operation
-------------------
``DriverClient`` adapts the simulated Client (``simulator.peers.client.Client``: prompts in any state,
``session/cancel``, ``$/cancel_request`` for the latest unanswered prompt, permission answers,
elicitation answers (``["elicit_accept", k]``: the k-th elicitation still unanswered),
``session/close``, ``session/resume`` with or without replay, within the bounds of a
``Config``) to an Agent it does not know: the session ID is the one the Agent's
``session/new`` returned, a permission answer picks the option of the right kind among the
options the Agent offered, and two moves are added: a prompt with content the Agent did not
advertise (an image: the Agent must reject it with -32602, and the Client breaks USER-03 on
purpose) and an unknown extension notification (the Agent must ignore it).

A choice is a small JSON-friendly list: ``["prompt"]``, ``["allow", k]`` (the k-th permission
request still unanswered, oldest first: Agents name their requests as they like, so a script
names them by position), ``["resume", true]``, ``["wait"]`` (send nothing, let the Agent go on).
Choices refer to nothing a run cannot rebuild, so a list of them is a replayable client script
(``script_json`` / ``load_script``); a choice not enabled when its turn comes is skipped, as
the shrinker needs.

``Chooser`` draws a run's choices with its seed. Mostly it waits (an Agent left alone shows its
own moves) and otherwise picks any enabled choice. One freedom needs more than a uniform pick to
be taken at all: a Client may answer a permission request whenever it likes, also after the
work that asked was cancelled and has ended. So a run is, by its first draw, one that answers
permission requests when the draw says (as any other choice) or one that *holds* them: leaves
each unanswered while the work runs, sends a ``session/cancel`` likely while one is held, and
answers it at the first choice after the session reports idle (mostly allowing: an Agent that
used such an answer as an approval breaks the cancellation rules, CANCEL-06). A held request is
answered while settling at the latest. Holding in some runs only keeps the others' timely
answers, which other bugs need (resuming work after an answer, FG-04). The draw changes only
which choices are made, so a script of them replays like any other.

Must not know: processes, files, time, the monitors.
"""

from __future__ import annotations

import contextlib
import json
import random
from typing import Any

from model import between as bw
from simulator.peers import wire
from simulator.peers.agent import MAIN
from simulator.peers.client import Client
from simulator.peers.config import DEFAULT, Config

Choice = list[Any]
Msg = dict[str, Any]

DRIVE_CONFIG = DEFAULT.with_(prompts=4, cancels=2, cancel_requests=2)
"""The driver's bounds: how many prompts, cancels, ... one run may send."""
NOTIFICATIONS = 2
"""Unknown extension notifications one run may send."""
EXTENSION_METHOD = "_acp_model/probe"
SCRIPT_FORMAT = "acp-model drive script"
CLIENT_RULES_ON_PURPOSE = frozenset({bw.CLIENT_SENDS_ADVERTISED.rule})
"""Client-side rules the driver breaks on purpose: its ``prompt_image`` sends a content type the
Agent did not advertise (``model.between`` client_sends_advertised)."""
ANSWERS = ("allow", "deny", "dismiss")
"""The choices that answer a permission request."""
ACT = 0.4
"""The chance that a choice point sends something rather than waiting."""
HOLD = 0.3
"""The chance that a run holds its permission requests for late answers (``Chooser``)."""
CANCEL_WHILE_HOLDING = 0.5
"""The chance of a ``session/cancel`` at a choice point while a held request waits."""
LATE_ALLOW = 0.75
"""The chance that a late answer allows (else it denies or dismisses)."""


class DriverClient:
    def __init__(self, cfg: Config = DRIVE_CONFIG) -> None:
        self.client = Client(cfg)
        self.sid: str | None = None
        self.options: dict[Any, list[Any]] = {}  # permission request id -> options offered
        self.notified = 0
        self.state: str | None = None
        """The state the Agent last reported for the session (None: none yet)."""

    def enabled(self) -> list[Choice]:
        out: list[Choice] = [["wait"]]
        if self.sid is None:
            return out
        perms = [rid for rid, _ in self.client.perms]
        for _, name, arg in self.client.enabled():
            if name in ANSWERS:
                out.append([name, perms.index(arg)])
            elif name == "resume":
                out.append([name, bool(arg)])
            elif name.startswith("elicit_"):  # the k-th elicitation still unanswered
                out.append([name, [e[0] for e in self.client.elicits].index(arg)])
            else:
                out.append([name])
                if name == "prompt":
                    out.append(["prompt_image"])
        if self.notified < NOTIFICATIONS:
            out.append(["notify"])
        return out

    def do(self, choice: Choice) -> list[Msg]:
        """The messages ``choice`` sends (``choice`` must be enabled)."""
        name = choice[0]
        if name == "wait":
            return []
        if name == "notify":
            self.notified += 1
            return [wire.notification(EXTENSION_METHOD, {"sessionId": self.sid, "n": self.notified})]
        if name in ANSWERS:  # the option of the right kind among those the Agent offered
            rid = self.client.perms[choice[1]][0]
            options = self.options.pop(rid, [])
            msgs = self.client.do(name, rid)
            if name != "dismiss":
                msgs[0]["result"]["outcome"]["optionId"] = _option(options, name)
        elif name.startswith("elicit_"):
            msgs = self.client.do(name, self.client.elicits[choice[1]][0])
        elif name == "prompt_image":
            msgs = self.client.do("prompt", None)
            msgs[0]["params"]["prompt"] = [wire.image()]
        elif name == "cancel_request":
            msgs = self.client.do("cancel_request", self.client.unanswered[-1])
        else:
            msgs = self.client.do(name, choice[1] if name == "resume" else None)
        for msg in msgs:
            params = msg.get("params")
            if isinstance(params, dict) and params.get("sessionId") == MAIN:
                params["sessionId"] = self.sid
        return msgs

    def receive(self, msg: Any) -> None:
        if type(msg) is not dict:
            return
        if msg.get("method") == "session/update":
            params = msg.get("params")
            update = params.get("update") if isinstance(params, dict) else None
            if (
                isinstance(params, dict)
                and isinstance(update, dict)
                and update.get("sessionUpdate") == "state_update"
                and params.get("sessionId") == self.sid
                and isinstance(update.get("state"), str)
            ):
                self.state = update["state"]
        if msg.get("method") == "session/request_permission" and "id" in msg:
            params = msg.get("params")
            options = params.get("options") if isinstance(params, dict) else None
            self.options[msg["id"]] = options if isinstance(options, list) else []
            if msg["id"] in [rid for rid, _ in self.client.perms]:  # a reused id: answer it once
                return
        with contextlib.suppress(KeyError, TypeError, ValueError):
            self.client.receive(msg)


def _option(options: list[Any], name: str) -> str:
    """The optionId to select: the first option of an allowing (or rejecting) kind."""
    prefix = "allow" if name == "allow" else "reject"
    for opt in options:
        if isinstance(opt, dict) and str(opt.get("kind", "")).startswith(prefix):
            return str(opt.get("optionId"))
    for opt in options:
        if isinstance(opt, dict) and "optionId" in opt:
            return str(opt["optionId"])
    return name


class Chooser:
    """A run's seeded choices (see the module docstring): ``choose(client, enabled)``."""

    def __init__(self, seed: int | None) -> None:
        self.rng = random.Random(seed)
        self.holds = self.rng.random() < HOLD
        self.held: set[Any] = set()  # permission requests held, not yet answered late
        self.seen: set[Any] = set()

    def choose(self, client: DriverClient, enabled: list[Choice]) -> Choice:
        rng = self.rng
        perms = [rid for rid, _ in client.client.perms]
        for rid in perms:
            if self.holds and rid not in self.seen:
                self.held.add(rid)
            self.seen.add(rid)
        held = [k for k, rid in enumerate(perms) if rid in self.held]
        if held and client.state == "idle":  # the work ended while it was held: answer it now
            name = "allow" if rng.random() < LATE_ALLOW else rng.choice(ANSWERS[1:])
            late = [name, held[0]]
            if late in enabled:
                self.held.discard(perms[held[0]])
                return late
        if held and ["cancel"] in enabled and rng.random() < CANCEL_WHILE_HOLDING:
            return ["cancel"]
        pool = [c for c in enabled[1:] if not (c[0] in ANSWERS and c[1] in held)]
        if pool and rng.random() < ACT:
            return rng.choice(pool)
        return enabled[0]  # wait


# -- scripts ----------------------------------------------------------------------------------


def script_json(choices: list[Choice], **about: Any) -> str:
    """The script as JSON text: what it is, then one choice per line."""
    head = {"format": SCRIPT_FORMAT, "version": 1, **about}
    lines = [f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}," for k, v in head.items()]
    body = ",\n".join("  " + json.dumps(c, ensure_ascii=False) for c in choices)
    return "{\n" + "\n".join(lines) + '\n "choices": [\n' + body + ("\n" if body else "") + " ]\n}\n"


class ScriptError(ValueError):
    """A file that is not a drive script."""


def load_script(text: str) -> list[Choice]:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # (nesting too deep for the decoder)
        raise ScriptError(f"not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != SCRIPT_FORMAT:
        raise ScriptError(f'not a drive script (no "format": "{SCRIPT_FORMAT}")')
    choices = data.get("choices")
    if not isinstance(choices, list) or not all(
        isinstance(c, list) and c and isinstance(c[0], str) for c in choices
    ):
        raise ScriptError('"choices" is not a list of choices such as ["prompt"]')
    return choices
