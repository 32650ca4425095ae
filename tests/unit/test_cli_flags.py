"""The command line takes flags only as spelled: an abbreviation is refused, since a
typo (``--concur``) would otherwise silently mean another flag (``--concurrency``)."""

from __future__ import annotations

import argparse

import pytest

from pairbench_async.cli.main import _parser


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return {name: sub for action in parser._actions if isinstance(action, argparse._SubParsersAction)
            for name, sub in action.choices.items()}


def test_every_parser_refuses_abbreviations() -> None:
    parser = _parser()
    subs = _subparsers(parser)
    assert {"run", "report", "import", "exec", "export"} <= set(subs)
    assert not parser.allow_abbrev
    assert [name for name, sub in subs.items() if sub.allow_abbrev] == []


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["run", "--concur", "4"], "--concur"),
        (["report", "runs/x", "--with-test"], "--with-test"),
        (["import", "jsonl", "a.jsonl", "--ou", "b.jsonl"], "--ou"),
    ],
)
def test_an_abbreviated_flag_is_an_error(argv: list[str], flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        _parser().parse_args(argv)
    assert exc.value.code == 2
    assert flag in capsys.readouterr().err


def test_the_full_spelling_still_parses() -> None:
    args = _parser().parse_args(["run", "--concurrency", "4", "--no-progress"])
    assert args.concurrency == 4


@pytest.mark.parametrize(
    ("argv", "command", "meant"),
    [
        (["run", "--concur", "4"], "run", "--concurrency"),
        (["run", "--loop-fact=0"], "run", "--loop-factor"),
        (["report", "runs/x", "--no-bug"], "report", "--no-bug-check"),
        (["exec", "p.py", "--tests", "t.jsonl", "--time", "1"], "exec", "--time-limit"),
    ],
)
def test_the_refusal_names_the_command_and_the_flag_meant(
        argv: list[str], command: str, meant: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The refusal comes from the command's own parser (its usage, `pairbench run: error:`),
    says that flags are not abbreviated and names the flag the abbreviation would have been."""
    with pytest.raises(SystemExit) as exc:
        _parser().parse_args(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert f"{command}: error: unrecognized arguments: " in err
    assert f"did you mean {meant}?" in err and "not abbreviated" in err
