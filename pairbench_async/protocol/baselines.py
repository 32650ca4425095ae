"""The texts and prompts of the source papers' baseline feedback protocols, as pure functions.

Every protocol shares the candidate's turn prompt and, except FeedbackEval's four
(``simple``, ``compiler``, ``test``, ``human``), turn 0: the unhinted repair, so
InitialFix is comparable. FeedbackEval's protocols start from the erroneous program as
given ("the LLMs were provided with the initial erroneous code and corresponding
feedback, after which they performed a repair iteration", seed 001 §6): their turn 0
is that program, evaluated without a model call, so Repair@k counts k feedback
rounds. They differ in the feedback of turns 1..α:

=============  ==========================================================================
``nohint``     no feedback at all (PAIR-BENCH's RQ2 baseline)
``vanilla``    a feedback-model hint on the failing tests every turn, with no scenario
               selection and no level control (PAIR-BENCH's RQ2 baseline)
``simple``     "The code is wrong. Please fix it." (FeedbackEval)
``compiler``   pylint's messages on the current program (FeedbackEval)
``test``       one failing hidden test with its input, expected and actual output and the
               error: NOT hidden-test protected, and marked so in every record (FeedbackEval)
``human``      the dataset's recorded review, verbatim, else a feedback model's review
               paragraph, as a human reviewer would write it (FeedbackEval)
``paragraph``  a simulated user who knows the reference explains the problem in a
               paragraph of at most 100 words (When Benchmarks Talk)
``sentence``   the same in one sentence of at most 50 words (When Benchmarks Talk)
``code``       a simulated user who knows the reference gives line-level corrections: it
               shows reference code, so it is NOT hidden-test protected (When Benchmarks Talk)
``rephrase``   the feedback model rephrases the problem statement to clarify what the
               program misses; the candidate codes from the rephrased question (When
               Benchmarks Talk)
``selfcritique`` the candidate critiques its own program; its critique is its next feedback
               (When Benchmarks Talk's Self-Critique Baseline)
=============  ==========================================================================

Each protocol is an object in :mod:`.protocols` (its properties, its simulated
level for the offline ``sim`` candidate, and how it produces a turn's feedback); this
module holds the texts and prompts of our own they build, as pure functions; the
papers' own prompts are in :mod:`.feedbackeval_prompts` and :mod:`.wbt_prompts`.

By default (``baselines="paper"``) the papers' baselines run as the papers ran them:
FeedbackEval's and When Benchmarks Talk's model-written feedback reaches the candidate
unvalidated (neither paper has a validator), so ``human``, ``paragraph``, ``sentence``
and ``rephrase`` are NOT hidden-test protected there. ``vanilla`` always, and those four
with ``baselines="pairbench"``, go through the same leakage validator as PAIR-BENCH
hints, at the most permissive level (6): no code and no verbatim hidden tests or
reference lines ever reach the candidate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

import msgspec

from ..core.types import Instance, Message, Test, TestResult
from .evidence import Evidence
from .feedback_prompt import render_evidence

__all__ = [
    "SIMPLE_FEEDBACK",
    "WORD_CAPS",
    "cap_words",
    "code_corrections",
    "compiler_feedback",
    "critique_hint",
    "feedback_messages",
    "first_sentence",
    "recorded_text",
    "selfcritique_messages",
    "summary_messages",
    "test_feedback",
]

SIMPLE_FEEDBACK = "The code is wrong. Please fix it."

#: When Benchmarks Talk's length limits of its natural-language feedback, in words: the
#: Paragraph prompt says "Write one paragraph of feedback ... Do not write more than 100
#: words" (its Fig. 9), the Sentence prompt "Write one sentence of feedback ... Do not write
#: more than 50 words" (Fig. 10). The prompt says so and :func:`cap_words` enforces it.
WORD_CAPS: Mapping[str, int] = MappingProxyType({"paragraph": 100, "sentence": 50})

_SYSTEM = "You give feedback on programs. You never write code, pseudocode or patches."

_TASK = {
    "vanilla": "Give a hint that helps the programmer fix the failures below.",
    "human": "Write a short review paragraph, as an experienced human reviewer would, saying what is "
             "wrong with the program and how to think about fixing it.",
    "paragraph": "You are the user who asked for this program and you know the correct solution. "
                 "In one paragraph, explain to the programmer what the program gets wrong and what "
                 "you actually need.",
    "sentence": "You are the user who asked for this program and you know the correct solution. In "
                "ONE sentence, tell the programmer what the program gets wrong.",
    "rephrase": "You are the user who asked for this program. Rephrase your request (the problem "
                "statement) so that the part the program gets wrong is stated more clearly.",
    # seed 002's Code Feedback prompt (its Fig. 11) also says "Do not write more than 100
    # words"; the prompt asks it, but a correction is never cut (a cut line would be wrong code)
    "code": "You are the user who asked for this program and you know the correct solution. Give "
            "line-level corrections: for each wrong line of the program, its line number and what "
            "the line should be. Do not write more than 100 words.",
}


def feedback_messages(kind: str, evidence: Evidence) -> list[Message]:
    """The feedback model's prompt for a model-written baseline ``kind``."""
    task = _TASK[kind]
    if kind in WORD_CAPS:  # the paper's own words (Figs. 9 and 10)
        task += f" Do not write more than {WORD_CAPS[kind]} words."
    rules = ("Do not write code, pseudocode or an exact patch, and do not quote the test data or "
             "the correct solution. Reply with the feedback text only." if kind != "code" else
             "Reply with the corrections only.")
    return [Message(role="system", content=_SYSTEM),
            Message(role="user", content=f"{task}\n{rules}\n\n{render_evidence(evidence)}")]


#: tokens whose final period does not end a sentence
_ABBREVIATIONS = frozenset({"e.g.", "i.e.", "etc.", "vs.", "cf.", "approx.", "resp.", "no.", "fig.",
                            "eq.", "dr.", "mr.", "mrs.", "ms.", "st.", "incl.", "esp."})


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (the ``sentence`` protocol keeps only that).

    A leading list marker ("1.", "-", "*") is dropped, and a period that closes an
    abbreviation ("e.g.", "i.e.", "vs.") or a number ("3.") does not end the sentence.
    """
    text = " ".join(text.split())
    text = re.sub(r"^(?:\d+[.)]|[-*•])\s+", "", text)
    for end in re.finditer(r"[.!?](?=\s|$)", text):
        token = text[: end.end()].rsplit(" ", 1)[-1].lower()
        if end.group() == "." and (token in _ABBREVIATIONS or re.fullmatch(r"\(?\d+\.", token)):
            continue
        return text[: end.end()]
    return text


def cap_words(text: str, cap: int) -> tuple[str, int]:
    """``text`` cut after its ``cap``-th word, and how many words were cut (0: none).

    A word is a run of non-space characters, as a reader counts them; the kept words keep
    their own spacing and the cut falls on a word boundary (trailing space dropped).
    """
    if cap < 1:
        raise ValueError(f"a word cap is at least 1, got {cap}")
    words = list(re.finditer(r"\S+", text))
    if len(words) <= cap:
        return text, 0
    return text[: words[cap - 1].end()], len(words) - cap


def test_feedback(test: Test, result: TestResult) -> str:
    """FeedbackEval's test feedback: the failing test and what went wrong (unprotected)."""
    if test.kind == "call":
        shown = f"Call with arguments: {test.args!r}" + (f" {test.kwargs!r}" if test.kwargs else "")
        expected = repr(test.expected)
        value = result.value
        actual = (repr(value)[:2000] if value is not None and value is not msgspec.UNSET
                  else f"(no value{': ' + result.error if result.error else ''})")
    else:
        shown = f"Input:\n{(test.input or '')[:2000]}"
        expected = (test.output or "")[:2000]
        actual = result.stdout[:2000]
    parts = [f"The program fails a test ({result.verdict.value}).", shown, f"Expected:\n{expected}",
             f"Got:\n{actual}"]
    if result.error or result.stderr:
        parts.append(f"Error: {result.error or ''}\n{result.stderr[-1500:]}".rstrip())
    return "\n".join(parts)


def selfcritique_messages(instance: Instance, program: str) -> list[Message]:
    """Ask the candidate to critique its own program (no user, no hidden data), with
    ``baselines="pairbench"``; the paper's way is :func:`.wbt_prompts.self_critique_messages`."""
    from .prompts import fenced

    return [
        Message(role="system", content="You are an expert Python programmer reviewing your own code."),
        Message(role="user", content=f"## Problem\n{instance.problem.strip()}\n\n## Your program\n"
                f"{fenced(program)}\n\nThis program may fail some hidden tests. Critique it: list the "
                "mistakes you find and the cases it mishandles. Do not write the corrected program."),
    ]


def critique_hint(reply: str) -> str:
    """A self-critique reply without any code block (only its prose is fed back)."""
    text = re.sub(r"(```|~~~).*?(\1|$)", " ", reply, flags=re.S)
    return " ".join(text.split())[:1500] or "(the self-critique found nothing)"


def compiler_feedback(messages: str) -> str:
    """FeedbackEval's compiler feedback: pylint's message lines (at most 25)."""
    lines = [ln.strip() for ln in messages.splitlines() if ln.strip() and not ln.startswith("*****")]
    if not lines:
        return "pylint reports no problems in the program."
    return "pylint reports:\n" + "\n".join(lines[:25])


def recorded_text(value: object) -> str | None:
    """A recorded FeedbackEval feedback value (text, or a list of pylint lines) as text."""
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, list) and value:
        return "\n".join(str(v) for v in value)
    return None


def code_corrections(program: str, reference: str, limit: int = 12) -> str:
    """A simulated user's line-level corrections: the reference's version of each differing hunk.

    Used for ``code`` with an offline feedback model (the deterministic stand-in for
    a user who knows the solution); it shows reference code, so ``code`` is unprotected.
    """
    import difflib

    a, b = program.splitlines(), reference.splitlines()
    out: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        where = f"line {i1 + 1}" if i2 - i1 <= 1 else f"lines {i1 + 1}-{i2}"
        if tag == "delete":
            out.append(f"{where}: remove {'these lines' if i2 - i1 > 1 else 'this line'}.")
        elif tag == "insert":
            out.append(f"before line {i1 + 1}: add " + " / ".join(f"`{ln.strip()}`" for ln in b[j1:j2]))
        else:
            out.append(f"{where}: should be " + " / ".join(f"`{ln.strip()}`" for ln in b[j1:j2]))
        if len(out) >= limit:
            break
    return "\n".join(out) or "The program matches what I need."


def summary_messages(problem: str) -> list[Message]:
    """Ask the feedback model for the one-sentence summary used by ``--obfuscate``."""
    return [Message(role="system", content="You summarise programming tasks."),
            Message(role="user", content="Summarise this task in ONE sentence, keeping what the "
                    f"program must compute and nothing else:\n\n{problem}")]
