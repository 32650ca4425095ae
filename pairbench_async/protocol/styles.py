"""Prompt-style ablations (FeedbackEval's RQ4, seed 001 §7) and PDB's minimal-edit instruction.

Each style changes the candidate's prompt only: the protocol and the hidden-test
protection are untouched (a style adds fixed text or leaves out part of the
candidate's own prompt). By default (``baselines="paper"``) they mean what RQ4 means:

==============  ===================================================================
``persona``     leaves out the persona ("Excluding the persona prompt"): Fig. 5's
                first line, or the "You are an expert Python programmer." of ours
``cot``         adds Fig. 9's chain-of-thought steps
``fewshot``     adds Fig. 9's repair example
``nodocstring`` leaves out the docstring: the problem statement's (a prose statement
                *is* the description, so it goes whole) and the program's
``nocontext``   drops the project context (FeedbackEval's "context": APIs, classes,
                variables around the function); only instances that carry one
                (``Instance.context``: FeedbackEval's CoderEval rows) change
``nohistory``   drops the history of earlier turns (our own ablation; it was called
                ``nocontext`` before that name was given its paper's meaning)
``noguidelines`` drops the answer-format and interface guidelines (Fig. 5's Guideline)
==============  ===================================================================

With ``baselines="pairbench"`` (runs made before, resumed as they ran) ``persona``
*adds* an expert-engineer persona, ``cot`` and ``fewshot`` use texts of our own and
``nodocstring`` strips the program's docstrings only.

The styles that leave a part out are applied where the prompt is assembled
(:func:`prompt_parts` gives the builders of :mod:`.prompts` their
:class:`~.prompts.PromptParts`), never by cutting the finished text: a program, a hint
or a context may hold a line that looks like a section heading. :func:`apply_styles`
applies the others (FeedbackEval's own prompt, :mod:`.feedbackeval_prompts`, places
Fig. 9's texts itself).

``minimal_edit`` (PDB) adds: change as few lines as possible. The offline ``sim``
candidate does not read prompts, so these change nothing in offline runs: they
are for real models.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..core.errors import ConfigError
from ..core.types import Message
from .docstrings import strip_docstrings
from .feedbackeval_prompts import FIG9_COT, FIG9_FEWSHOT
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


def _check(styles: Sequence[str]) -> None:
    unknown = set(styles) - set(STYLES)
    if unknown:
        raise ConfigError(f"unknown prompt styles {sorted(unknown)} (known: {', '.join(STYLES)})")


def prompt_parts(styles: Sequence[str], paper: bool = True) -> PromptParts:
    """The parts of the candidate's prompt that ``styles`` keep (see the module table);
    ``paper``: ``persona`` and ``nodocstring`` leave out what RQ4 leaves out."""
    _check(styles)
    return PromptParts(context="nocontext" not in styles, history="nohistory" not in styles,
                       guidelines="noguidelines" not in styles,
                       docstring=not (paper and "nodocstring" in styles),
                       persona=not (paper and "persona" in styles))


def apply_styles(messages: Sequence[Message], styles: Sequence[str], minimal_edit: bool = False,
                 paper: bool = True, placed: bool = False) -> list[Message]:
    """The candidate's messages rewritten for ``styles`` (see the module table); the styles
    that leave a part out are :func:`prompt_parts`' and change nothing here.

    ``paper``: RQ4's meanings (Fig. 9's texts); else the ``pairbench`` ones. ``placed``:
    the prompt already holds the cot and fewshot texts (FeedbackEval's own prompt).
    """
    _check(styles)
    out = list(messages)
    if not styles and not minimal_edit:
        return out
    system = out[0] if out[0].role == "system" else None
    rest = out[1:] if system is not None else out
    user = rest[-1].content
    if "nodocstring" in styles and not paper:
        user = _FENCED.sub(lambda m: f"{m.group(1)}python\n{strip_docstrings(m.group(2)).rstrip()}\n{m.group(1)}",
                           user)
    cot = "cot" in styles and not placed
    fewshot = "fewshot" in styles and not placed
    extra = [t for flag, t in ((cot, FIG9_COT if paper else _COT), (fewshot and paper, FIG9_FEWSHOT),
                               (minimal_edit, _MINIMAL)) if flag]
    if extra:
        user = user + "\n\n" + ("\n\n" if paper else "\n").join(extra)
    if "persona" in styles and not paper and system is not None:
        system = Message(role="system", content=_PERSONA + " " + system.content)
    shots = list(_FEWSHOT) if fewshot and not paper else []
    head = [system] if system is not None else []
    return [*head, *shots, *rest[:-1], Message(role="user", content=user)]
