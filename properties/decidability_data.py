"""The committed wire-decidability figures of every rule that has a check.

Owns: the location of ``decidability.json`` beside this module (written by ``acp-model
decidability --json > properties/decidability.json`` at the default bound; a test keeps it
current) and reading it: rule ID -> (decidable, bound). A missing or unreadable file gives no
figures (the rules listing then has none), never an error.

Must not know: how the figures are computed (``simulator.analysis.decidability``).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).with_name("decidability.json")


@lru_cache(maxsize=1)
def decidability_of() -> dict[str, tuple[str, str]]:
    try:
        data = json.loads(DATA.read_text(encoding="utf-8"))
        return {e["rule"]: (e["decidable"], e["bound"]) for e in data["rules"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}
