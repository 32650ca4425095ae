"""Prompt-style ablations (FeedbackEval) and PDB's minimal-edit instruction.

Each style rewrites the candidate's messages after :mod:`.prompts` built them, so
the protocol and the hidden-test protection are untouched (a style only adds our
own fixed text or removes parts of the candidate's own prompt):

==============  ===================================================================
``persona``     the system prompt gives the model an expert-engineer persona
``cot``         asks for step-by-step reasoning before the program
``fewshot``     prepends one worked repair (a small, fixed example of our own)
``nodocstring`` strips docstrings from the program shown to the candidate
``nocontext``   drops the project context (FeedbackEval's "context": APIs, classes,
                variables around the function); only instances that carry one
                (``Instance.context``: FeedbackEval's CoderEval rows) change
``nohistory``   drops the history of earlier turns (our own ablation; it was called
                ``nocontext`` before that name was given its paper's meaning)
``noguidelines`` drops the answer-format and interface guidelines
==============  ===================================================================

The three styles that leave a part out (``nocontext``, ``nohistory``, ``noguidelines``)
are applied where the prompt is assembled (:func:`prompt_parts` gives the builders of
:mod:`.prompts` their :class:`~.prompts.PromptParts`), never by cutting the finished text:
a program, a hint or a context may hold a line that looks like a section heading.
:func:`apply_styles` applies the others.

``minimal_edit`` (PDB) adds: change as few lines as possible. The offline ``sim``
candidate does not read prompts, so these change nothing in offline runs: they
are for real models.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from ..core.errors import ConfigError
from ..core.types import Message
from .prompts import PromptParts

__all__ = ["STYLES", "apply_styles", "prompt_parts"]

STYLES = ("persona", "cot", "fewshot", "nodocstring", "nocontext", "nohistory", "noguidelines")

_PERSONA = ("You are a senior software engineer with twenty years of Python experience, known for "
            "finding subtle bugs quickly and fixing them cleanly.")
_COT = ("Before writing the program, reason step by step: what the program does, where it departs "
        "from the problem statement, and what must change.")
_MINIMAL = ("Make the smallest change that fixes the program: keep every line that is already "
            "correct exactly as it is, and do not rewrite the program.")
_FEWSHOT = [
    Message(role="user", content="## Problem\nPrint the largest of the n integers on the second line.\n\n"
            "## Program\n```python\nn = int(input())\nxs = list(map(int, input().split()))\nbest = 0\n"
            "for x in xs:\n    best = max(best, x)\nprint(best)\n```\n\nRepair the program."),
    Message(role="assistant", content="All numbers may be negative, so starting from 0 is wrong; start "
            "from the first number.\n```python\nn = int(input())\nxs = list(map(int, input().split()))\n"
            "best = xs[0]\nfor x in xs:\n    best = max(best, x)\nprint(best)\n```"),
]
_FENCED = re.compile(r"(`{3,})python\n(.*?)\n\1", re.S)


def _strip_docstrings(code: str) -> str:
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code
    lines = code.splitlines(keepends=True)
    spans = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str) and len(node.body) > 1:
                spans.append((first.lineno, first.end_lineno or first.lineno))
    for start, end in sorted(spans, reverse=True):
        del lines[start - 1:end]
    return "".join(lines)


def _check(styles: Sequence[str]) -> None:
    unknown = set(styles) - set(STYLES)
    if unknown:
        raise ConfigError(f"unknown prompt styles {sorted(unknown)} (known: {', '.join(STYLES)})")


def prompt_parts(styles: Sequence[str]) -> PromptParts:
    """The parts of the candidate's prompt that ``styles`` keep (see the module table)."""
    _check(styles)
    return PromptParts(context="nocontext" not in styles, history="nohistory" not in styles,
                       guidelines="noguidelines" not in styles)


def apply_styles(messages: Sequence[Message], styles: Sequence[str], minimal_edit: bool = False) -> list[Message]:
    """The candidate's messages rewritten for ``styles`` (see the module table); the styles
    that leave a part out are :func:`prompt_parts`' and change nothing here."""
    _check(styles)
    out = list(messages)
    if not styles and not minimal_edit:
        return out
    system, *rest = out
    user = rest[-1].content
    if "nodocstring" in styles:
        user = _FENCED.sub(lambda m: f"{m.group(1)}python\n{_strip_docstrings(m.group(2)).rstrip()}\n{m.group(1)}",
                           user)
    extra = [t for flag, t in (("cot" in styles, _COT), (minimal_edit, _MINIMAL)) if flag]
    if extra:
        user = user + "\n\n" + "\n".join(extra)
    if "persona" in styles:
        system = Message(role="system", content=_PERSONA + " " + system.content)
    shots = list(_FEWSHOT) if "fewshot" in styles else []
    return [system, *shots, *rest[:-1], Message(role="user", content=user)]
