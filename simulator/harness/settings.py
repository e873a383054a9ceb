"""What one ``drive`` run may take: its steps and its waits on the Agent (``Settings``).

Owns: the run's settings and their defaults, the one statement of them that ``drive`` and the
command line's ``acp-model drive`` options both read (this module imports nothing heavy, so the
parser's start-up stays light).
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_MESSAGES = 20000


@dataclass
class Settings:
    steps: int = 30
    timeout: float = 5.0
    startup: float = 30.0
    """How long the Agent may take to answer ``initialize`` (at least ``timeout``): an Agent
    started through a package runner (``npx``) or on a loaded machine may take many seconds, and
    waiting longer costs only when the Agent never answers."""
    silence: float = 0.05
    """Seconds without a line from the Agent after which the driver takes its next choice."""
    fail_on: str = "must"
    max_messages: int = MAX_MESSAGES
    readings: dict[str, str] = field(default_factory=dict)
    """The ``--reading`` choices the live check judges under."""
    elicitation: bool = False
    """Advertise both elicitation modes (form, URL) in ``initialize`` (``--elicitation``), so the
    Agent may elicit and the driver answers; off, none is advertised, as before."""
