"""FeedbackEval's own prompt texts (seed 001), for its protocols run as the paper ran them.

The candidate's repair prompt is the paper's Fig. 5 ("Prompt for Single-Iteration Code
Repair Using Feedback"), used at every turn of ``simple``, ``compiler``, ``test`` and
``human`` (RQ3 repeats it with new feedback of the same type: §6.1). Its five parts are
the figure's: Persona, Task, Description, Information, Guideline. RQ4's ablations
(§7.1-7.2) act on them: ``persona`` removes the Persona line ("Excluding the persona
prompt"), ``nodocstring`` / ``nocontext`` / ``noguidelines`` remove the @@Docstring,
@@Context and Guideline parts ("by modifying the baseline prompt to remove these
elements"), and ``cot`` / ``fewshot`` add Fig. 9's chain-of-thought steps and repair
example. Pure module: text in, text out.
"""

from __future__ import annotations

import re

from ..core.types import Instance, Message
from .docstrings import strip_docstrings
from .prompts import PromptParts, fenced

__all__ = [
    "FIG5_PERSONA",
    "FIG9_COT",
    "FIG9_FEWSHOT",
    "feedbackeval_prompt",
    "pylint_lines",
]

#: Fig. 5, its "Persona" part
FIG5_PERSONA = "You are a professional code repair assistant skilled at fixing code errors based on the @@Feedback."
_TASK = "Your task is to correct the given erroneous code @@Existing Code."
_DESCRIBE_FEEDBACK = ("@@Feedback includes error messages, descriptions of logical issues, or deviations from "
                      "expected functionality.")
_DESCRIBE_DOCSTRING = ("@@Docstring provides a description of the function, its purpose, and details of its "
                       "input and output parameters.")
_DESCRIBE_CONTEXT = ("@@Context refers to code elements such as types, APIs, variables, and consts defined "
                     "outside the function under generation but within the dependent third-party libraries, "
                     "current class, file, or project.")
#: Fig. 5, its "Guideline" part (the figure's format block is cut at "..." in the paper:
#: the fence is closed here)
_GUIDELINE = ("Based on the provided information, fix the erroneous code and ensure the following:\n"
              "1.Resolve all errors to make the code functional.\n"
              "2.Address the improvement points mentioned in the feedback.\n"
              "3.Only need to fix the code; do not modify the function signature.\n"
              "4.Please return the corrected code in the following format:\n"
              "```python\n# Your codes here\n```")

#: Fig. 9, "Chain-of-Thought"
FIG9_COT = ("You should follow the reasoning process below to fix the code:\n"
            "1. Carefully read the feedback and understand the essence of the problem.\n"
            "2. Check the parts of the code that might be causing these issues.\n"
            "3. Consider edge cases and special condition handling.\n"
            "4. Apply appropriate fixes while maintaining code style consistency.\n"
            "5. Verify whether the fix addresses all the issues mentioned in the feedback.")

#: Fig. 9, "Few-shot Example"
FIG9_FEWSHOT = (
    "For example:\n"
    "Erroneous Code:\n"
    "```python\ndef calculate_average(numbers):\n    total = 0\n    for num in numbers:\n        total += num\n"
    "    return total / len(numbers)\n```\n"
    "Feedback:\n"
    "Consider adding error handling to manage potential issues, such as division by zero when the input "
    "list is empty. Additionally, using built-in functions like 'sum()' can simplify the code and improve "
    "readability, making it more pythonic. Finally, ensure that the function can handle non-numeric inputs "
    "to prevent runtime errors.\n"
    "Fixed Code:\n"
    "```python\ndef calculate_average(numbers):\n    if not numbers:\n"
    "        raise ValueError(\"Input list is empty. Cannot calculate average.\")\n"
    "    return sum(numbers) / len(numbers)\n```"
)


def feedbackeval_prompt(instance: Instance, program: str, feedback: str | None,
                        parts: PromptParts, *, cot: bool = False, fewshot: bool = False) -> list[Message]:
    """Fig. 5's repair prompt for ``program`` with this turn's ``feedback``, one user message.

    ``instance`` is the candidate's view (only its public fields are read): its problem
    statement is the @@Docstring, its project context (if any) the @@Context. ``parts``
    says which parts RQ4's ablations leave out; ``cot`` and ``fewshot`` add Fig. 9's texts.
    """
    docstring = instance.problem.strip() if parts.docstring else ""
    context = instance.context.strip() if parts.context else ""
    shown = program if parts.docstring else strip_docstrings(program)
    lines = [FIG5_PERSONA] if parts.persona else []
    lines.append(_TASK)
    lines.append("\n".join([_DESCRIBE_FEEDBACK, *([_DESCRIBE_DOCSTRING] if parts.docstring else []),
                            *([_DESCRIBE_CONTEXT] if context else [])]))
    info = [f"@@Existing Code\n{fenced(shown)}"]
    if docstring:
        info.append(f"@@Docstring\n{docstring}")
    if context:
        info.append(f"@@Context\n{context}")
    info.append(f"@@Feedback\n{(feedback or '').strip()}")
    lines.append("\n".join(info))
    if cot:
        lines.append(FIG9_COT)
    if fewshot:
        lines.append(FIG9_FEWSHOT)
    if parts.guidelines:
        lines.append(_GUIDELINE)
    return [Message(role="user", content="\n\n".join(lines))]


_PYLINT_LINE = re.compile(r"^(\d+):\d+: ([A-Z]\d{4}): (.*?)(?: \([a-z0-9-]+\))?$")


def pylint_lines(output: str, program: str) -> list[str]:
    """pylint's messages as FeedbackEval words them: ``In line: <the line> . <message>``
    (seed 001, Fig. 1: "In line: def verify_relayable_signature(public_key, doc,
    signature):. Unused argument 'public_key'"), one per message, in pylint's order.

    ``output`` is :func:`..sandbox.lint.run_pylint`'s (``line:column: id: message (symbol)``).
    """
    source = program.splitlines()
    out = []
    for raw in output.splitlines():
        m = _PYLINT_LINE.match(raw.strip())
        if m is None:
            continue
        number = int(m.group(1))
        line = source[number - 1] if 0 < number <= len(source) else ""
        out.append(f"In line: {line} . {m.group(3)}")
    return out
