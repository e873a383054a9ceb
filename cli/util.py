"""Helpers shared by subcommands; outputs themselves are written by ``properties.outputs``
(re-exported here, so every command imports its helpers from one place)."""

from __future__ import annotations

from properties.outputs import dumps, write_atomic

__all__ = ["dumps", "write_atomic"]
