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
    # nohistory (formerly misnamed nocontext) drops the earlier turns, and only them
    no_history = apply_styles(base, ["nohistory"])[-1].content
    assert "## Earlier turns" not in no_history and "## Current program" in no_history
    assert apply_styles(base, ["nocontext"]) == base  # INST carries no project context
    assert "Reply with the complete" not in apply_styles(base, ["noguidelines"])[-1].content
    assert "smallest change" in apply_styles(base, [], minimal_edit=True)[-1].content
    everything = apply_styles(base, list(STYLES), minimal_edit=True)
    assert "return n * n" not in " ".join(m.content for m in everything)


def test_unknown_style_is_an_error() -> None:
    with pytest.raises(ConfigError, match="unknown prompt styles"):
        apply_styles(initial_prompt(INST), ["shouting"])


def test_project_context_is_shown_and_nocontext_drops_only_it() -> None:
    # FeedbackEval's prompt (Fig. 5) has an @@Context part: APIs, classes and variables
    # defined outside the function. An instance that carries one shows it after the
    # problem at every turn; the ablation "nocontext" removes exactly that section.
    import msgspec

    ctx = "apis: [b64decode, verify]\nclasses: [PKCS1_v1_5]"
    inst = msgspec.structs.replace(INST, context=ctx)
    for msgs in (initial_prompt(inst), turn_prompt(inst, inst.buggy, "h", [TurnSummary(turn=1, hint="h")])):
        user = msgs[-1].content
        assert user.index("## Problem") < user.index("## Context\n" + ctx) < user.index("## Program") \
            if "## Program" in user else user.index("## Context") < user.index("## Current program")
        dropped = apply_styles(msgs, ["nocontext"])[-1].content
        assert "## Context" not in dropped and "PKCS1_v1_5" not in dropped
        assert dropped == user.replace("## Context\n" + ctx + "\n\n", "")
    # HumanEval-style instances have no context: no empty section appears
    assert "## Context" not in initial_prompt(INST)[-1].content
