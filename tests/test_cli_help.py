"""Every command's ``--help`` is clean: a boolean option is a flag, shown without a value type.

The failure kind: ``ehr-verifier <command> --help`` listed boolean options (``--judge``,
``--evidence-check``, ``--version``, and ``--help`` itself) with a ``<bool>`` value type, as if
they took a value; they are flags (``--judge``) or ``--x/--no-x`` pairs. Checked on every command
registered on the app, so a command added later is covered too.
"""

from __future__ import annotations

import re
import typing

import pytest
import typer
from typer.testing import CliRunner

from verifier.cli import app

_CLICK = typer.main.get_command(app)
_COMMANDS = [[]] + [[name] for name in sorted(_CLICK.commands)]  # type: ignore[attr-defined]


def _help(args: list[str]) -> str:
    res = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, (args, res.output, res.exception)
    return res.output


def _flags(args: list[str]) -> list:
    command = _CLICK if not args else _CLICK.commands[args[0]]  # type: ignore[attr-defined]
    ctx = command.make_context("ehr-verifier", ["--help"], resilient_parsing=True)
    return [p for p in command.get_params(ctx) if getattr(p, "is_flag", False)]


def test_every_command_is_listed() -> None:
    assert {"score", "rollout", "export", "serve-tools", "make-tasks", "build-db", "demo", "schema"} <= set(
        _CLICK.commands)  # type: ignore[attr-defined]


@pytest.mark.parametrize("args", _COMMANDS, ids=lambda a: a[0] if a else "root")
def test_help_shows_no_value_type_for_a_flag(args: list[str]) -> None:
    text = _help(args)
    assert "<bool>" not in text and "BOOLEAN" not in text
    flags = _flags(args)
    assert any("--help" in p.opts for p in flags)
    for p in flags:
        names = "/".join([*p.opts, *p.secondary_opts])
        shown = [line for line in text.splitlines() if re.search(rf"(^|\s){re.escape(p.opts[0])}(\s|/|$)", line)]
        assert shown, (names, text)
        assert not re.search(rf"{re.escape(p.opts[0])}\S*\s+<", shown[0]), (names, shown[0])


def test_every_boolean_option_is_a_flag() -> None:
    seen = 0
    for args in _COMMANDS:
        command = _CLICK if not args else _CLICK.commands[args[0]]  # type: ignore[attr-defined]
        hints = typing.get_type_hints(command.callback) if command.callback else {}
        for p in command.params:
            if hints.get(p.name) is bool:
                seen += 1
                assert p.is_flag, (args, p.opts)
    assert seen >= 3  # --version, score --judge, rollout --evidence-check
