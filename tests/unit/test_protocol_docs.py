"""A protocol added to the registry is listed wherever a user looks for protocols: the
``--protocol`` help (written out by hand, so that building the parser imports no protocol
code), the README and docs/PROTOCOL.md. This test is the checklist for a new protocol."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from pairbench_async.cli.run import add_run_arguments
from pairbench_async.protocol.protocols import PROTOCOLS

ROOT = Path(__file__).resolve().parents[2]


def _help() -> str:
    parser = argparse.ArgumentParser()
    add_run_arguments(parser)
    (action,) = [a for a in parser._actions if "--protocol" in a.option_strings]
    return action.help or ""


@pytest.mark.parametrize("name", list(PROTOCOLS))
def test_every_protocol_is_listed_where_users_look(name: str) -> None:
    word = re.compile(rf"(?<![\w-]){re.escape(name)}(?![\w-])")
    assert word.search(_help()), f"add {name} to --protocol's help in cli/run.py"
    assert word.search((ROOT / "README.md").read_text()), f"add {name} to the README's protocols"
    assert word.search((ROOT / "docs" / "PROTOCOL.md").read_text()), f"describe {name} in docs/PROTOCOL.md"
