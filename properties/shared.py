"""Where the shared material is: the spec text and the official schema, outside this repository.

Owns: the environment variable ``ACP_MODEL_SHARED`` and the defaults it sets. The shared folder
is ``$ACP_MODEL_SHARED`` when that is set (and not empty), else ``shared/`` beside the checkout
(``../shared`` from the repository root, see the README). In it, ``spec/`` holds the spec text
and ``acp-schema/v2/`` the schema. ``acp-model rules --spec`` defaults to the spec there;
``acp-model check --schema`` defaults to the schema there only when the variable is set (so a
checkout beside ``../shared`` keeps its default of no schema validation). The tests that need
the folder (marker ``needs_shared``) look for it here too.

Must not know: what the spec or the schema say.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV = "ACP_MODEL_SHARED"
SPEC = ("spec", "acp-v2-prompt-lifecycle.txt")
SCHEMA = ("acp-schema", "v2", "schema.unstable.json")


def shared_dir() -> Path:
    """``$ACP_MODEL_SHARED``, else ``shared/`` beside the repository this code is in."""
    where = os.environ.get(ENV, "").strip()
    if where:
        return Path(where).expanduser()
    return Path(__file__).resolve().parents[1].parent / "shared"


def default_spec() -> Path:
    """The spec text in the shared folder."""
    return shared_dir().joinpath(*SPEC)


def default_schema() -> Path:
    """The official schema in the shared folder."""
    return shared_dir().joinpath(*SCHEMA)


def schema_from_env() -> str | None:
    """The schema ``check`` validates against by default: the shared folder's when
    ``ACP_MODEL_SHARED`` is set, else None (no validation unless ``--schema`` is given)."""
    return str(default_schema()) if os.environ.get(ENV, "").strip() else None
