"""Entry point of the ``acp-model`` command.

Owns: argument parsing, subcommand discovery and the exit-code contract shared by every
subcommand (0 ok, 1 findings, 2 unusable input or usage, or a worker pool that failed: a
``simulator.workers.PoolError``, such as a worker process the system killed for memory; 130
after Ctrl-C and 143 after SIGTERM, as a shell reports a process those signals end, once every
cleanup has run: a SIGTERM is raised in the main thread as ``Terminated``, so an atomic write in
progress removes its temporary file as it does on Ctrl-C). Each subcommand lives in its own
module ``cli/cmd_<name>.py`` that defines ``add_parser(subparsers)`` and ``run(args) -> int``;
modules are found by name, so adding a command never edits this file.

Must not know: what any subcommand does.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import re
import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType, ModuleType
from typing import BinaryIO

import cli
from simulator.workers import PoolError

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_TERMINATED = 128 + signal.SIGTERM


class UsageError(Exception):
    """Unusable input or options: printed as one line on stderr, exit code 2 (as is a
    ``PoolError``: a worker process that died, a cluster that cannot be used, or a job that
    failed on it)."""


def stdin_bytes() -> BinaryIO:
    """Standard input as a binary stream, for the FILE argument ``-``; a UsageError where the
    process was started without one (closed, as by ``<&-``)."""
    if sys.stdin is None:
        raise UsageError("-: standard input is closed")
    return sys.stdin.buffer


class Terminated(BaseException):
    """A SIGTERM, raised where the main thread is (as Ctrl-C raises ``KeyboardInterrupt``), so
    that every ``finally`` runs before the process ends."""


@contextmanager
def _sigterm_raises() -> Iterator[None]:
    """While the body runs, a SIGTERM to this process raises ``Terminated``; a process forked
    from it (a worker of ``simulator.workers``) still ends at once, as SIGTERM's default has it.
    Nothing changes where SIGTERM is ignored or handled already, or off the main thread."""
    owner = os.getpid()

    def raise_terminated(signum: int, frame: FrameType | None) -> None:
        if os.getpid() != owner:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        raise Terminated

    try:
        mine = signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        if mine:
            signal.signal(signal.SIGTERM, raise_terminated)
    except ValueError:  # not the main thread
        mine = False
    try:
        yield
    finally:
        if mine:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


_EXPECTED_ONE = re.compile(r"argument (\S+?)(?:/\S+)?: expected one argument")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse takes a value starting with '-' (``--pace -1,5``) for an option: say how to give one
        expected = _EXPECTED_ONE.fullmatch(message)
        if expected:
            message += f" (a value that starts with '-' is given as {expected.group(1)}=VALUE)"
        else:  # one line, as every unusable option is: the usage is one --help away
            message += f" ({self.prog} --help lists the options)"
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(EXIT_USAGE)


def command_modules() -> list[ModuleType]:
    """The subcommand modules ``cli/cmd_*.py``, in name order."""
    names = sorted(m.name for m in pkgutil.iter_modules(cli.__path__) if m.name.startswith("cmd_"))
    return [importlib.import_module(f"cli.{name}") for name in names]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="acp-model",
        description="Executable model, simulator and checker of the ACP v2 prompt lifecycle.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for module in command_modules():
        p = module.add_parser(sub)
        p.set_defaults(_run=module.run, _parser=p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    command_parser = vars(args).pop("_parser")
    if extra:  # the subcommand's usage, not the top level's: the options are the subcommand's
        command_parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        with _sigterm_raises():
            code: int = args._run(args)
    except (UsageError, PoolError) as exc:
        sys.stderr.write(f"acp-model {args.command}: {exc}\n")
        return EXIT_USAGE
    except BrokenPipeError:  # e.g. piped into `head`
        return EXIT_OK
    except KeyboardInterrupt:
        sys.stderr.write(f"acp-model {args.command}: interrupted\n")
        return EXIT_INTERRUPTED
    except Terminated:
        sys.stderr.write(f"acp-model {args.command}: terminated\n")
        return EXIT_TERMINATED
    return code


if __name__ == "__main__":
    raise SystemExit(main())
