"""The executable monitors of the rule catalogue, one module per concern.

Owns: ``ALL_MONITORS``, the monitor classes ``MonitorSet()`` runs by default, in dispatch order.
Each class declares the rule IDs it reports (``RULES``) and the MAY permissions it must not
report (``TOLERATES``); ``properties.trace`` reads both. ``Facts`` (shared per-session context,
no rules) is pulled in by the monitors that name it in ``REQUIRES``.

Must not know: files, the CLI, the simulator.
"""

from __future__ import annotations

from properties.monitor import Monitor
from properties.monitors.background import BackgroundMonitor
from properties.monitors.lifecycle import ForegroundMonitor
from properties.monitors.prompts import PromptMonitor
from properties.monitors.rpc import ResponseMonitor
from properties.monitors.tables import TableMonitor
from properties.monitors.tools import ToolMonitor

ALL_MONITORS: tuple[type[Monitor], ...] = (
    PromptMonitor,
    ForegroundMonitor,
    ToolMonitor,
    BackgroundMonitor,
    TableMonitor,
    ResponseMonitor,
)
