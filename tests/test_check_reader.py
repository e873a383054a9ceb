"""The transcript reader reads in chunks: where the chunks end never changes what it reports.

``read_transcript`` reads up to 128 KiB at a time (``read1`` where the stream has it, so a pipe
is read as it fills) and splits the chunk into lines; a line that does not end in its chunk is
carried over to the next one. The answers (items, findings with their line numbers, counts)
must not depend on where a stream's reads happen to stop: these tests read the same bytes as
one chunk, one byte at a time and in random pieces, with line limits that put the boundaries
at every kind of place (in the middle of a CRLF, of a byte-order mark, of a line over the
limit). A line over the limit must be dropped as it comes, never held whole.
"""

from __future__ import annotations

import io
import random
import tracemalloc
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from properties.findings import Finding
from properties.transcript import TranscriptStats, read_transcript
from tests.check_support import basic_turn
from tests.mutation_support import mutated_transcripts, stats_tuple


class Pieces(io.BytesIO):
    """A stream whose reads stop after ``1..most`` bytes (seeded), like a pipe."""

    def __init__(self, data: bytes, most: int, seed: int = 0) -> None:
        super().__init__(data)
        self.most = most
        self.rng = random.Random(seed)
        self.largest = 0

    def read1(self, size: int | None = -1) -> bytes:
        n = self.rng.randint(1, self.most)
        chunk = super().read1(n if size is None or size < 0 else min(size, n))
        self.largest = max(self.largest, len(chunk))
        return chunk

    def read(self, size: int | None = -1) -> bytes:  # pragma: no cover - read1 is used
        raise AssertionError("the reader uses read1 where the stream has it")


def answers(stream: io.BytesIO, max_line_bytes: int = 1 << 20) -> tuple[list[Any], tuple[Any, ...]]:
    stats = TranscriptStats()
    items = [
        ("finding", f.rule, f.level, f.line, f.explanation) if isinstance(f, Finding) else f
        for f in read_transcript(stream, max_line_bytes, stats=stats)
    ]
    return items, stats_tuple(stats)


def findings(items: list[Any]) -> list[tuple[Any, ...]]:
    return [it[1:] for it in items if it[0] == "finding"]


def message_lines(items: list[Any]) -> list[int]:
    return [it[0] for it in items if it[0] != "finding"]


@settings(max_examples=25, deadline=None)
@given(data=mutated_transcripts(), seed=st.integers(0, 2**16), limit=st.sampled_from([1 << 20, 300, 120, 40]))
def test_where_reads_stop_changes_nothing(data: bytes, seed: int, limit: int) -> None:
    whole = answers(io.BytesIO(data), limit)
    assert answers(Pieces(data, 1), limit) == whole
    assert answers(Pieces(data, 7, seed), limit) == whole
    assert answers(Pieces(data, 400, seed), limit) == whole


@pytest.mark.deep
@settings(max_examples=800, deadline=None)
@given(data=mutated_transcripts(), seed=st.integers(0, 2**16), limit=st.sampled_from([1 << 20, 300, 120, 40]))
def test_where_reads_stop_changes_nothing_many_examples(data: bytes, seed: int, limit: int) -> None:
    """test_where_reads_stop_changes_nothing with 800 examples (the default suite runs 25)."""
    test_where_reads_stop_changes_nothing.hypothesis.inner_test(data, seed, limit)  # type: ignore[attr-defined]


def test_crlf_and_bom_split_across_reads() -> None:
    good = b"".join(basic_turn())
    data = good.replace(b"\n", b"\r\n", 2) + b"\xef\xbb\xbf" + good
    expected = [
        ("input.crlf", "info", 1, "CRLF line ends (first seen here; accepted, reported once)"),
        ("input.bom", "info", 7, "line starts with a UTF-8 byte-order mark (ignored)"),
    ]
    for stream in (io.BytesIO(data), Pieces(data, 1), Pieces(data, 3, 1), Pieces(data, 50, 2)):
        items, _ = answers(stream)
        assert findings(items) == expected
        assert message_lines(items) == list(range(1, 13))


def test_line_over_the_limit_across_reads_and_at_the_end() -> None:
    good = b"".join(basic_turn())
    size = max(len(ln) for ln in basic_turn())  # every line fits, the newline excluded
    long = b'{"from":"agent","message":"' + b"y" * 600 + b'"}'
    data = good + long + b"\n" + good + long  # the last line also has no line end
    for stream in (io.BytesIO(data), Pieces(data, 1), Pieces(data, 64, 3), Pieces(data, 5000, 4)):
        items, stats = answers(stream, size)
        assert [(f[0], f[2]) for f in findings(items)] == [("input.too-long", 7), ("input.too-long", 14)]
        assert message_lines(items) == [*range(1, 7), *range(8, 14)]
        assert stats[0] == 14  # lines


def test_a_line_of_exactly_the_limit_is_accepted_wherever_reads_stop() -> None:
    turn = basic_turn()
    size = len(turn[0]) - 1
    for most in (1, 2, size - 1, size, size + 1, size + 2):
        items, _ = answers(Pieces(turn[0], most), size)
        assert message_lines(items) == [1] and findings(items) == [], most
        items, _ = answers(Pieces(turn[0], most), size - 1)
        assert [f[0] for f in findings(items)] == ["input.too-long"] and items[1:] == [], most


def test_over_long_line_is_dropped_as_it_comes() -> None:
    good = b"".join(basic_turn())
    huge = b'{"from": "agent", "message": "' + b"y" * 4_000_000 + b'"}\n'
    stream = Pieces(good + huge + good, 1 << 20)
    tracemalloc.start()
    try:
        items, _ = answers(stream, 1000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert stream.largest <= 1001  # reads never ask for more than the limit and a line end
    assert peak < 400_000  # the 4 MB line was never held
    assert [(f[0], f[2]) for f in findings(items)] == [("input.too-long", 7)]
    assert message_lines(items) == [*range(1, 7), *range(8, 14)]
