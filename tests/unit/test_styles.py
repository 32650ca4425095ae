"""Prompt-style ablations rewrite only our own text, never add hidden data."""

from __future__ import annotations

import pytest

from pairbench_async.core.errors import ConfigError
from pairbench_async.core.types import Instance, Test
from pairbench_async.protocol.prompts import TurnSummary, initial_prompt, turn_prompt
from pairbench_async.protocol.styles import STYLES, apply_styles

INST = Instance(id="x", kind="call", entry_point="f", time_limit=1.0, memory_limit_mb=64,
                problem="def f(n):\n    Return n squared.", reference="def f(n):\n    return n * n\n",
                buggy='def f(n):\n    """Square n."""\n    return n + n\n',
                tests=[Test(id="1", args=[3], expected=9)])


def test_no_style_is_the_identity() -> None:
    msgs = initial_prompt(INST)
    assert apply_styles(msgs, []) == msgs


def test_each_style_changes_what_it_says() -> None:
    base = turn_prompt(INST, INST.buggy, "Look at the operation.", [TurnSummary(turn=1, hint="h")])
    user = base[-1].content
    assert '"""Square n."""' in user and "## Earlier turns" in user
    persona = apply_styles(base, ["persona"])
    assert "senior software engineer" in persona[0].content and persona[1:] == base[1:]
    assert "step by step" in apply_styles(base, ["cot"])[-1].content
    few = apply_styles(base, ["fewshot"])
    assert len(few) == len(base) + 2 and few[2].role == "assistant"
    assert '"""Square n."""' not in apply_styles(base, ["nodocstring"])[-1].content
    assert "## Earlier turns" not in apply_styles(base, ["nocontext"])[-1].content
    assert "Reply with the complete" not in apply_styles(base, ["noguidelines"])[-1].content
    assert "smallest change" in apply_styles(base, [], minimal_edit=True)[-1].content
    everything = apply_styles(base, list(STYLES), minimal_edit=True)
    assert "return n * n" not in " ".join(m.content for m in everything)


def test_unknown_style_is_an_error() -> None:
    with pytest.raises(ConfigError, match="unknown prompt styles"):
        apply_styles(initial_prompt(INST), ["shouting"])
