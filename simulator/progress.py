"""How long work reports how far it has got, without knowing who (if anyone) is watching.

Owns: the ``Progress`` interface that explorers, schedulers and generators call: ``phase``
starts a named phase (with its total, when known), ``advance`` counts work done in it,
``note`` adds a short detail (the states found so far ...), ``done`` ends it. The base class
does nothing, so code that is not watched pays one method call per report; ``NULL`` is its
instance. Calls come from one thread.

Must not know: terminals, streams, timing of the display (``cli.progress`` draws it).
"""

from __future__ import annotations


class Progress:
    """Progress reports; this base class ignores them."""

    def phase(self, name: str, total: int | None = None) -> None:
        """Start the phase ``name`` (ending the one before), ``total`` units of work if known."""

    def advance(self, n: int = 1) -> None:
        """``n`` more units of the current phase are done."""

    def note(self, text: str) -> None:
        """A short detail for the current phase, replacing the previous one."""

    def done(self) -> None:
        """The current phase has ended."""


NULL = Progress()
