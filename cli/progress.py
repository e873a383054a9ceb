"""Progress on standard error for the commands that can run long (explore, simulate, mutants,
diagrams).

Owns: when and how progress is drawn. A phase that has lasted ``DELAY`` seconds (1 s) gets a
line on standard error, redrawn in place every ``INTERVAL`` seconds by a daemon thread: a bar
with the count and percentage where the phase's total is known, the count otherwise, then the
phase's note and its elapsed seconds. A phase shorter than ``DELAY`` draws nothing; a drawn
phase ends with its final line left on screen. Nothing is drawn when standard error is not a
terminal (logs and pipes stay clean) or with ``--quiet`` (``make``; ``shown``: the same, the
phase ended however the work ends). The same rule for the commands that print progress as
plain lines instead of a bar (``decidability``, ``spec-report``, ``drive``): ``lines_shown``.

Must not know: what the phases are (``simulator.progress.Progress`` is the interface the work
calls).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from simulator.progress import NULL, Progress

DELAY = 1.0
"""Seconds a phase runs before its line appears."""
INTERVAL = 0.2
"""Seconds between redraws."""
BAR = 24
"""Characters of the bar."""


def lines_shown(quiet: bool) -> bool:
    """Whether progress goes to standard error: not with ``quiet``, and only on a terminal."""
    return not quiet and sys.stderr is not None and sys.stderr.isatty()


def make(quiet: bool, stream: TextIO | None = None) -> Progress:
    """A ``TerminalProgress`` on ``stream`` (standard error), or ``NULL`` with ``quiet`` or when
    the stream is not a terminal."""
    stream = sys.stderr if stream is None else stream
    if quiet or stream is None or not stream.isatty():
        return NULL
    return TerminalProgress(stream)


@contextmanager
def shown(quiet: bool) -> Iterator[Progress]:
    """``make(quiet)`` for the block, its current phase ended (``done``) however the block ends."""
    progress = make(quiet)
    try:
        yield progress
    finally:
        progress.done()


class TerminalProgress(Progress):
    """Draws the current phase on ``stream``; ``tick`` draws once (the thread calls it)."""

    def __init__(
        self,
        stream: TextIO,
        clock: Callable[[], float] = time.monotonic,
        thread: bool = True,
    ) -> None:
        self.stream = stream
        self.clock = clock
        self.lock = threading.Lock()
        self.name: str | None = None
        self.total: int | None = None
        self.count = 0
        self.text = ""
        self.started = 0.0
        self.drawn = 0
        """Width of the line on screen (0: nothing drawn for this phase)."""
        self.stopped = threading.Event()
        if thread:
            threading.Thread(target=self._run, name="progress", daemon=True).start()

    # -- the interface ------------------------------------------------------------------------
    def phase(self, name: str, total: int | None = None) -> None:
        with self.lock:
            self._finish()
            self.name, self.total, self.count, self.text = name, total, 0, ""
            self.started = self.clock()

    def advance(self, n: int = 1) -> None:
        self.count += n

    def note(self, text: str) -> None:
        self.text = text

    def done(self) -> None:
        with self.lock:
            self._finish()
            self.name = None

    # -- drawing ------------------------------------------------------------------------------
    def line(self) -> str:
        """The current phase as one line (no newline)."""
        elapsed = self.clock() - self.started
        parts = [f"{self.name}:"]
        if self.total:
            done = min(self.count, self.total)
            filled = BAR * done // self.total
            parts.append(
                f"[{'#' * filled}{'.' * (BAR - filled)}] {done:,}/{self.total:,} {100 * done // self.total}%"
            )
        elif self.count:
            parts.append(f"{self.count:,}")
        if self.text:
            parts.append(self.text)
        parts.append(f"{elapsed:.0f} s")
        return " ".join(parts)

    def tick(self) -> None:
        """Redraw the current phase if it has lasted ``DELAY`` seconds."""
        with self.lock:
            if self.name is None or self.clock() - self.started < DELAY:
                return
            self._draw()

    def _draw(self) -> None:
        text = self.line()
        pad = max(0, self.drawn - len(text))
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self.drawn = len(text)

    def _finish(self) -> None:
        if self.name is not None and self.drawn:
            self._draw()
            self.stream.write("\n")
            self.stream.flush()
        self.drawn = 0

    def _run(self) -> None:
        while not self.stopped.wait(INTERVAL):
            try:
                self.tick()
            except (OSError, ValueError):  # the stream went away (closed terminal)
                return
