"""When Benchmarks Talk's own prompt texts (seed 002, Appendix A.4), for its protocols
run as the paper ran them.

The user model (our feedback model) gets Fig. 8's system prompt, holding the full
question and the correct solution, and one of Figs. 9-12 with the code model's latest
solution: ``paragraph`` (Fig. 9), ``sentence`` (Fig. 10), ``code`` (Fig. 11) and
``rephrase`` (Fig. 12, which also gets the question the code model last saw). The code
model (our candidate) sees only its most recent attempt and the feedback on it (§2.3:
"We do not provide a history of all code model interactions with the user, only the
most recent code attempt and user feedback on the most recent attempt"): Fig. 14 for
paragraph, sentence and code; for rephrase, Fig. 13 with the rephrased question in
place of the question, and no earlier code. The Self-Critique Baseline (§3: "five
iterations of self-critique to generate feedback using the underspecified question and
the output from the previous step ... no user is involved") has no user model: the code
model critiques its latest attempt (:func:`self_critique_messages`; the paper prints no
critique prompt, so ours is built from its Figs. 13, 14 and 9) and then gets Fig. 13, the
Self-Critique setting's prompt, with that attempt and its critique
(:func:`self_critique_code_prompt`). ``--obfuscate`` summarises each problem with Fig.
17's few-shot prompt. Pure module: text in, text out.
"""

from __future__ import annotations

from ..core.types import Instance, Message
from .prompts import fenced

__all__ = [
    "SUMMARY_EXAMPLES",
    "code_model_prompt",
    "few_shot_summary_messages",
    "self_critique_code_prompt",
    "self_critique_messages",
    "summary_reply",
    "user_model_messages",
]

#: Fig. 8, the user model's system prompt
_USER_SYSTEM = (
    "You are an expert human programmer who is using a coding assistant to write code in order to solve some "
    "programming puzzles. The coding assistant has completed a potential solution to the problem, but needs your "
    "help to make adjustments to the code. You have access to the full question, including formatting "
    "instructions and some test cases. You also have access to a natural language description of the correct "
    "solution. The coding assistant has access to a summarized, less detailed version of the problem, but only "
    "you have access to the full problem. This means that the code assistant may need additional information on "
    "how the code should work or how its output should be formatted. Here is the description of the programming "
    "problem: {question} Here is a description of the correct solution: {solution}"
)
#: the common opening of Figs. 9-11
_GOAL = (
    "Your goal is to provide feedback about the solution that you think would help the assistant fix or adjust "
    "the code. This feedback should be purely about the function of the code, not its aesthetics or nonessential "
    "structure (e.g. do not make a suggestion regarding optimization or other choices that would not change how "
    "the code behaves). The coding assistant will use this feedback to help generate the next version of the "
    "code. "
)
_ASK = {
    # Fig. 9
    "paragraph": ("Write one paragraph of feedback that you think would be most helpful to the coding assistant. "
                  "Do not write more than 100 words. Here is the code assistant's solution. {code} Please provide "
                  "one paragraph of feedback that would best help the coding assistant write a better version of "
                  "the solution. Don't copy the code. Just write your reply."),
    # Fig. 10
    "sentence": ("Write one sentence of feedback that you think would be most helpful to the coding assistant. "
                 "Do not write more than 50 words. Here is the code assistant's solution. {code} Please provide "
                 "one sentence of feedback that would best help the coding assistant write a better version of "
                 "the solution. Don't copy the code. Just write your reply."),
    # Fig. 11
    "code": ("Point out specific lines of the code that are incorrect and explain why. Do not write more than 100 "
             "words. Here is the code assistant's solution. {code} Please point out specific lines of the code "
             "that are incorrect and give the corrected version. Make sure you copy paste the specific line in the "
             "solution which is incorrect! You should write both the original line (exactly as found in the "
             "solution) and also write what line it should be replaced with."),
}
#: Fig. 12 (Query Rephrasing: no "goal" opening)
_REPHRASE = ("Here is the code assistant's solution. {code} Here is the previous version of the question. "
             "{question} Please rewrite the question so as to provide an updated question of similar length which "
             "would help the model generate a better version of the code. Make sure you don't make the new "
             "question longer than the older version! Begin your response with \"Question:\" and don't add any "
             "extra text to the end.")


def user_model_messages(kind: str, question: str, solution: str, program: str,
                        shown_question: str | None = None) -> list[Message]:
    """The user model's prompt for ``kind`` (paragraph, sentence, code, rephrase).

    ``question`` is the full problem statement and ``solution`` the correct solution
    (Fig. 8: the paper's pipeline "requires the presence of a ground-truth solution in
    the user prompt", A.1); ``program`` the code model's latest solution;
    ``shown_question`` the question the code model last saw (rephrase only).
    """
    system = _USER_SYSTEM.format(question=question.strip(), solution=fenced(solution))
    code = fenced(program)
    if kind == "rephrase":
        user = _REPHRASE.format(code=code, question=(shown_question or question).strip())
    else:
        user = _GOAL + _ASK[kind].format(code=code)
    return [Message(role="system", content=system), Message(role="user", content=user)]


#: Figs. 13 and 14, the code model's prompt (the APPS line is for standard-input programs)
_CODER = ("You are a coding assistant who is writing code in order to solve some programming puzzles. You will be "
          "provided with a summary of the problem. You may also be provided with some starter code that you need "
          "to complete. Your goal is to complete the code so as to solve the problem. Do not add anything else to "
          "the code, including natural language that is not part of the code or comments. Your generation should "
          "be ready to run without needing any modifications.")
_STDOUT = ("Keep in mind that for this dataset, the results should be printed to stdout, so don't just write a "
           "function without calling it or printing something to stdout.")
_ENCLOSE = ("Enclose your solution in a markdown block beginning with ```python. When you are ready to submit "
            "your response, please end the markdown block with ``` on a new line.")


def _interface(instance: Instance) -> str:
    if instance.kind == "call":  # not in the paper (its APPS and LiveCodeBench programs print)
        name = instance.entry_point or "the entry-point function"
        return (f"The program must define the function `{name}` and keep its name and signature: it is called "
                "with each test's arguments and its return value is checked.")
    return _STDOUT


def code_model_prompt(instance: Instance, question: str, program: str | None = None,
                      feedback: str | None = None) -> list[Message]:
    """Fig. 14 (``program`` and ``feedback`` given: the last version of the code and the
    user's feedback on it) or Fig. 13 (neither: the question alone, which for rephrase is
    the user's rephrased question). One user message; ``instance`` gives only its kind and
    entry point."""
    parts = [_CODER, _interface(instance), f"Here is the programming problem description: {question.strip()}"]
    if program is not None:
        parts.append(f"Here is your last version of the code: {fenced(program)}")
        parts.append(f"The user provided the following feedback on the code: {(feedback or '').strip()}")
        parts.append("You can choose to use this response, or you can choose to ignore it. Only incorporate the "
                     "information that you think is relevant and helpful into the code.")
    parts.append(_ENCLOSE)
    return [Message(role="user", content=" ".join(parts[:2]) + "\n\n" + "\n\n".join(parts[2:]))]


#: Fig. 9's feedback goal, said to the code model about its own code ("the assistant" →
#: "you"); the paper prints no Self-Critique prompt
_SELF_GOAL = (
    "Your goal is to provide feedback about your solution that you think would help you fix or adjust the code. "
    "This feedback should be purely about the function of the code, not its aesthetics or nonessential "
    "structure (e.g. do not make a suggestion regarding optimization or other choices that would not change how "
    "the code behaves). You will use this feedback to help generate the next version of the code. "
    "Don't copy the code. Just write your reply."
)


def self_critique_messages(question: str, program: str) -> list[Message]:
    """The Self-Critique Baseline's critique step: the code model, given only the
    (underspecified) ``question`` and its latest ``program`` (§3: "no additional
    information of the original question or solution is given and no user is involved"),
    writes feedback on it. Fig. 13's first sentence and problem, the code in Fig. 14's
    words, then Fig. 9's goal addressed to the code model itself (Fig. 13's "Your goal is
    to complete the code" is the code step's, not this one's)."""
    role = _CODER.split(". ", 1)[0] + "."
    return [Message(role="user", content="\n\n".join((
        role, f"Here is the programming problem description: {question.strip()}",
        f"Here is your last version of the code: {fenced(program)}", _SELF_GOAL)))]


def self_critique_code_prompt(instance: Instance, question: str, program: str, critique: str | None) -> list[Message]:
    """Fig. 13 (the prompt of "the Static, Self-Critique Baseline, and Query Rephrasing
    settings") for a Self-Critique step: the problem, then the most recent attempt (Fig.
    14's words) and the code model's own critique of it, inserted after the problem (Fig.
    13 prints no slot for "the output from the previous step"); nothing of earlier turns,
    and no "user" (none is involved)."""
    parts = [_CODER, _interface(instance), f"Here is the programming problem description: {question.strip()}",
             f"Here is your last version of the code: {fenced(program)}",
             f"Here is your own critique of that code: {(critique or '').strip()}", _ENCLOSE]
    return [Message(role="user", content=" ".join(parts[:2]) + "\n\n" + "\n\n".join(parts[2:]))]


#: Fig. 17's shots. The paper's eleven examples are not printed (the figure shows
#: "Example question 1 ... Example summary 11"); the first here is the paper's running
#: example, both texts verbatim: the question as §2.2's Query Rephrasing example words it
#: (the original APPS question is not printed), the summary as §2.1 gives it; the other
#: two are our own.
SUMMARY_EXAMPLES: tuple[tuple[str, str], ...] = (
    ("Calculate the time for a passenger to receive lunch on a plane where two flight attendants serve food. "
     "Attendants start at rows 1 and 3, move forward by 2 rows after serving. They serve right side (f to d) "
     "then left side (c to a) of each row. Output the waiting time in seconds.",
     "Calculate the time it takes for a passenger in a specific seat to receive their lunch on an airplane with "
     "an infinite number of rows, given the serving pattern of two flight attendants moving from front to back."),
    ("The first line holds n, the number of days. The second line holds n integers, the price of a stock on "
     "each day. You may buy one share on one day and sell it on a later day. Print the largest profit you can "
     "make, or 0 if no transaction makes a profit.",
     "Find the largest profit from buying a stock once and selling it later, given its daily prices."),
    ("Given a string s of lowercase letters, return the length of the longest substring of s in which no letter "
     "appears twice. For example, for s = 'abcabcbb' the answer is 3, and for s = 'bbbbb' it is 1.",
     "Determine the length of the longest stretch of a text in which every letter is different."),
)


def few_shot_summary_messages(problem: str, sentences: str = "one") -> list[Message]:
    """Fig. 17's few-shot prompt asking for a ``sentences``-sentence summary of ``problem``."""
    shots = "\n".join(f"###EX QUESTION\n{q}\n###EX SUMMARY\n{a}" for q, a in SUMMARY_EXAMPLES)
    return [Message(role="user", content=(
        "Summarize the question with header 'FORMAL QUESTION' using only natural language. Write your summary "
        "under 'SUMMARY' Do not use any variable or function names from the question. Do not write any code. "
        f"You are given a coding/algorithmic question below. Your goal is to come up with a {sentences} sentence "
        "summary using natural language to describe the problem. Here are examples of a question and a summary "
        "labeled 'EX QUESTION' and 'EX SUMMARY'. Format your summary of 'FORMAL QUESTION' in a similar way to "
        f"these summaries using {sentences} sentence(s).\n{shots}\n###FORMAL QUESTION\n{problem.strip()}\n"
        "###SUMMARY\n"))]


def summary_reply(text: str) -> str:
    """The summary in a reply to :func:`few_shot_summary_messages` (after a repeated
    ``###SUMMARY`` header, if the model wrote one)."""
    for header in ("###SUMMARY", "SUMMARY:", "SUMMARY"):
        if header in text:
            text = text.rsplit(header, 1)[1]
            break
    return text.strip()
