"""What ``check`` and ``replay`` share: opening the inputs, judging each with fresh monitors,
the options they both take, and the exit code.

Owns: ``open_inputs`` (every path is checked before anything is read: an unusable one is a
one-line usage error naming it; each is named as ``printable`` shows it), ``judge`` (one pass
per input, ``properties.checking``, with a fresh ``MonitorSet`` from ``new_monitor_set``, which
tests may replace; the schema option's loading, ``--html`` and ``--max-findings``), and
``exit_code`` (0: nothing at the failing level, 1: findings).

Must not know: what any monitor checks, how reports are rendered (``properties.check_report``).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any, BinaryIO

from cli.main import EXIT_FINDINGS, EXIT_OK, UsageError, stdin_bytes
from cli.outputs import STDOUT, check_file
from properties.checking import FileReport, MessageHook, check_stream
from properties.engine import CLIENT_ORDERS, MonitorSet
from properties.outputs import unreadable
from properties.transcript import DEFAULT_MAX_LINE_BYTES
from properties.variants import Variant

if TYPE_CHECKING:  # the schema checker (and jsonschema) is imported only when --schema is given
    from properties.schema_check import SchemaChecker

STDIN = "-"


def new_monitor_set(readings: Mapping[str, str] | None = None, variant: Variant | None = None) -> MonitorSet:
    """A fresh set of every monitor under these readings and this variant (None: the spec as
    written; tests may replace this function)."""
    return MonitorSet(readings=readings, variant=variant)


def exit_code(reports: Sequence[FileReport], fail_on: str) -> int:
    return EXIT_FINDINGS if any(r.failing(fail_on) for r in reports) else EXIT_OK


def open_inputs(paths: Sequence[str], stack: ExitStack) -> list[tuple[str, BinaryIO]]:
    """Open every input before any is read; an unusable one is a UsageError naming it."""
    if sum(1 for p in paths if p == STDIN) > 1:
        raise UsageError("-: standard input given more than once")
    opened: list[tuple[str, BinaryIO]] = []
    for path in paths:
        if path == STDIN:
            opened.append(("<stdin>", stdin_bytes()))
            continue
        if os.path.isdir(path):
            raise UsageError(f"{path}: is a directory")
        try:
            stream = stack.enter_context(open(path, "rb"))  # noqa: SIM115 - closed by the stack
        except OSError as exc:
            raise UsageError(unreadable(path, exc, verb="open")) from None
        opened.append((printable(path), stream))
    return opened


def printable(path: str) -> str:
    """``path`` as reports name it: a file name's bytes that are not UTF-8 (which Python keeps
    as lone surrogates, and no UTF-8 output can hold) shown as ``\\xNN``."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def judge(
    args: argparse.Namespace,
    *,
    schema: str | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    on_message: Callable[[str], MessageHook] | None = None,
    readings: Mapping[str, str] | None = None,
    variant: Variant | None = None,
    complete: bool = False,
    client_order: str = CLIENT_ORDERS[0],
) -> list[FileReport]:
    """Check each input (``args.files``, or ``args.file``) with its own fresh monitors (under
    ``readings``: the ``--reading`` choices, and ``variant``: ``--variant``/``--drop``;
    ``complete``: ``--complete``, every input holds all its peers will send; ``client_order``:
    ``--client-order``; ``schema``: the
    ``--schema`` path) and write the ``--html`` page of it; every unusable input, output or
    schema is a UsageError, found before anything is read."""
    paths = args.files if hasattr(args, "files") else [args.file]
    page = _html_page(args, paths)
    checker = _load_schema(schema)
    unusable: tuple[type[Exception], ...] = ()
    if checker is not None:
        from properties.schema_check import SchemaError

        unusable = (SchemaError,)  # a part of the schema that fails only on a message
    check = check_stream if page is None else page.check
    reports: list[FileReport] = []
    with ExitStack() as stack:
        for path, stream in open_inputs(paths, stack):
            monitors = (
                new_monitor_set(readings, variant) if readings or variant is not None else new_monitor_set()
            )
            monitors.order_clients(client_order)  # (``properties.engine``, "Client order")
            try:
                reports.append(
                    check(
                        stream,
                        path,
                        monitors=monitors,
                        schema=checker,
                        max_line_bytes=max_line_bytes,
                        on_message=on_message(path) if on_message is not None else None,
                        max_findings=args.max_findings,
                        complete=complete,
                    )
                )
            except OSError as exc:
                raise UsageError(f"{path}: read error ({exc.strerror or exc})") from None
            except unusable as exc:
                raise UsageError(str(exc)) from None
    if page is not None:
        page.write(args.html, reports[0])
    return reports


def _load_schema(path: str | None) -> SchemaChecker | None:
    if path is None:
        return None
    from properties.schema_check import SchemaChecker, SchemaError

    try:
        return SchemaChecker(path)
    except SchemaError as exc:
        raise UsageError(str(exc)) from None


def _html_page(args: argparse.Namespace, files: Sequence[str]) -> Any:
    """The page recorder for ``--html`` (None without it), after checking the option: one
    input, and an output that can be written (before any work)."""
    if args.html is None:
        return None
    if len(files) != 1:
        raise UsageError(f"--html: a page shows one input; {len(files)} files given")
    if args.html == STDOUT:
        raise UsageError("--html -: standard output carries the report; give a file name")
    check_file(args.html, "--html")
    from diagrams.html import CheckPage

    return CheckPage(args.command if isinstance(getattr(args, "command", None), str) else "check")
