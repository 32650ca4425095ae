"""Prompt-style ablations rewrite only our own text, never add hidden data."""

from __future__ import annotations

import msgspec
import pytest

from pairbench_async.core.errors import ConfigError
from pairbench_async.core.types import Instance, Test
from pairbench_async.protocol.prompts import TurnSummary, initial_prompt, turn_prompt
from pairbench_async.protocol.styles import STYLES, apply_styles, prompt_parts

INST = Instance(id="x", kind="call", entry_point="f", time_limit=1.0, memory_limit_mb=64,
                problem="def f(n):\n    Return n squared.", reference="def f(n):\n    return n * n\n",
                buggy='def f(n):\n    """Square n."""\n    return n + n\n',
                tests=[Test(id="1", args=[3], expected=9)])


def test_no_style_is_the_identity() -> None:
    msgs = initial_prompt(INST)
    assert apply_styles(msgs, []) == msgs


def test_each_style_changes_what_it_says() -> None:
    # the meanings of baselines="pairbench" (runs made before RQ4's meanings were the
    # default resume with them): persona adds one, cot/fewshot are our own texts
    base = turn_prompt(INST, INST.buggy, "Look at the operation.", [TurnSummary(turn=1, hint="h")])
    user = base[-1].content
    assert '"""Square n."""' in user and "## Earlier turns" in user
    persona = apply_styles(base, ["persona"], paper=False)
    assert "senior software engineer" in persona[0].content and persona[1:] == base[1:]
    assert "step by step" in apply_styles(base, ["cot"], paper=False)[-1].content
    few = apply_styles(base, ["fewshot"], paper=False)
    assert len(few) == len(base) + 2 and few[2].role == "assistant"
    assert '"""Square n."""' not in apply_styles(base, ["nodocstring"], paper=False)[-1].content
    # the styles that leave a part out act where the prompt is built (prompt_parts)
    def built(styles: list[str]) -> str:
        msgs = turn_prompt(INST, INST.buggy, "Look at the operation.", [TurnSummary(turn=1, hint="h")],
                           prompt_parts(styles))
        return apply_styles(msgs, styles)[-1].content

    # nohistory (formerly misnamed nocontext) drops the earlier turns, and only them
    assert "## Earlier turns" not in built(["nohistory"]) and "## Current program" in built(["nohistory"])
    assert built(["nocontext"]) == user  # INST carries no project context
    no_guide = built(["noguidelines"])
    assert "Reply with the complete" not in no_guide and "must define the function" not in no_guide
    assert "Revise the program." in no_guide
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
    for dropped in (initial_prompt(inst, prompt_parts(["nocontext"]))[-1].content,
                    turn_prompt(inst, inst.buggy, "h", [TurnSummary(turn=1, hint="h")],
                                prompt_parts(["nocontext"]))[-1].content):
        assert "## Context" not in dropped and "PKCS1_v1_5" not in dropped
    # HumanEval-style instances have no context: no empty section appears
    assert "## Context" not in initial_prompt(INST)[-1].content


def test_part_styles_never_cut_a_program_hint_or_context_that_looks_like_a_heading() -> None:
    # A program whose comment reads like a section heading, a hint with its own "## " line
    # and a context with a subsection: leaving a part out must not cut into the others.
    import msgspec

    program = ('def f(n):\n    ## Context: parse input\n\n    ## Earlier turns of the loop\n'
               '    data = n * n\n    return data\n')
    inst = msgspec.structs.replace(INST, context="apis: [g]\n\n## Helpers\nh(x) doubles x")
    hint = "The square is off.\n\n## Details\nCheck the operator."
    history = [TurnSummary(turn=1, hint="Earlier hint.\n\n## Details\nsecret-ish detail")]
    for styles in (["nocontext"], ["nohistory"], ["nocontext", "nohistory", "noguidelines"]):
        user = turn_prompt(inst, program, hint, history, prompt_parts(styles))[-1].content
        assert program.rstrip() in user  # the whole program, its heading-like comments included
        assert "## Details\nCheck the operator." in user  # this turn's hint is whole
        assert ("## Helpers" in user) == ("nocontext" not in styles)  # the context goes whole
        assert ("secret-ish detail" in user) == ("nohistory" not in styles)  # so does the history


def test_persona_and_nodocstring_remove_what_feedbackevals_rq4_removes() -> None:
    # seed 001 §7.2: "Excluding the persona prompt ...", "the removal of docstrings ...": the
    # ablations take a part out of the baseline prompt (the pairbench meaning added a persona)
    from pairbench_async.protocol.feedbackeval_prompts import FIG5_PERSONA, feedbackeval_prompt

    inst = Instance(id="d", kind="call", entry_point="f", time_limit=1.0, memory_limit_mb=64,
                    problem='def f(n):\n    """Return n squared, SQUARE-DOC."""\n',
                    reference="def f(n):\n    return n * n\n",
                    buggy='def f(n):\n    """Return n squared, SQUARE-DOC."""\n    return n + n\n',
                    tests=[Test(id="1", args=[3], expected=9)])
    history = [TurnSummary(turn=1, hint="h")]
    # PAIR-BENCH's own prompt: its persona sentence goes, the rest of the system prompt stays
    base = turn_prompt(inst, inst.buggy, "hint", history)
    assert base[0].content.startswith("You are an expert Python programmer.")
    no_persona = apply_styles(turn_prompt(inst, inst.buggy, "hint", history, prompt_parts(["persona"])),
                              ["persona"])
    assert "You are" not in no_persona[0].content and no_persona[0].content.startswith("You repair programs")
    assert no_persona[1:] == base[1:]
    # the docstring leaves the problem section and the program; the signature stays
    for msgs in (turn_prompt(inst, inst.buggy, "hint", history, prompt_parts(["nodocstring"])),
                 initial_prompt(inst, prompt_parts(["nodocstring"]))):
        user = apply_styles(msgs, ["nodocstring"])[-1].content
        assert "SQUARE-DOC" not in user and "## Problem\ndef f(n):\n    ..." in user and "return n + n" in user
    # a prose problem statement is the description itself: nothing of it is left
    prose = msgspec.structs.replace(INST, problem="Return n squared.")
    assert "## Problem" not in turn_prompt(prose, prose.buggy, "h", [], prompt_parts(["nodocstring"]))[-1].content
    # Fig. 5: the Persona line, the @@Docstring part (and its description) go
    full = feedbackeval_prompt(inst, inst.buggy, "fb", prompt_parts([]))[0].content
    assert full.startswith(FIG5_PERSONA) and "@@Docstring\n" in full and "SQUARE-DOC" in full
    cut = feedbackeval_prompt(inst, inst.buggy, "fb", prompt_parts(["persona", "nodocstring"]))[0].content
    assert FIG5_PERSONA not in cut and cut.startswith("Your task is to correct")
    assert "@@Docstring" not in cut and "SQUARE-DOC" not in cut and "return n + n" in cut
    no_guide = feedbackeval_prompt(inst, inst.buggy, "fb", prompt_parts(["noguidelines"]))[0].content
    assert "Only need to fix the code" not in no_guide and "@@Feedback\nfb" in no_guide


def test_cot_and_fewshot_are_fig9s_texts() -> None:
    from pairbench_async.protocol.feedbackeval_prompts import FIG9_COT, FIG9_FEWSHOT, feedbackeval_prompt

    base = turn_prompt(INST, INST.buggy, "hint", [])
    assert apply_styles(base, ["cot"])[-1].content.endswith(FIG9_COT)
    few = apply_styles(base, ["fewshot"])
    assert len(few) == len(base) and "def calculate_average(numbers):" in few[-1].content
    fig5 = feedbackeval_prompt(INST, INST.buggy, "fb", prompt_parts(["cot", "fewshot"]), cot=True, fewshot=True)
    text = fig5[0].content
    assert "1. Carefully read the feedback and understand the essence of the problem." in text
    assert text.index(FIG9_FEWSHOT) < text.index("Based on the provided information")
    # placed: FeedbackEval's prompt holds them already; apply_styles does not add them again
    assert apply_styles(fig5, ["cot", "fewshot"], placed=True) == fig5
