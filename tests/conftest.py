"""Shared pytest set-up: hypothesis settings profiles.

``ci`` (the default): hypothesis's usual example count, no deadline (shared machines are slow
at times). ``deep``: many more examples, for ``pytest -m deep`` runs. Pick one with the
environment variable ``HYPOTHESIS_PROFILE``. Tests that pass explicit ``@settings`` keep them.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("ci", max_examples=100, deadline=None)
settings.register_profile("deep", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
