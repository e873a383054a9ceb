"""``--help`` of the transcript commands: every option says what it does and its default."""

from __future__ import annotations

import argparse

import pytest

from cli.main import build_parser


def _subparser(name: str) -> argparse.ArgumentParser:
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            sub: argparse.ArgumentParser = action.choices[name]
            return sub
    raise AssertionError("no subcommands")


@pytest.mark.parametrize("command", ["check", "view", "replay", "trace"])
def test_every_option_has_a_description_and_its_default(command: str) -> None:
    sub = _subparser(command)
    assert sub.description
    for action in sub._actions:
        if isinstance(action, argparse._HelpAction) or not action.option_strings:
            continue
        assert action.help, (command, action.option_strings)
        assert "default" in action.help, (command, action.option_strings, action.help)
    text = sub.format_help()
    assert "%(default)s" not in text
