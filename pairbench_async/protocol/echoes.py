"""Hidden data as a rule still recognises it once re-encoded, and its removal from program output.

A program's output on a hidden test is a function of that test's input, and the program
chooses how to write it: verbatim, in another case, with other separators, reversed,
with its digits as letters (``a`` = 0 … ``j`` = 9) or as words (``seven seven three
one``). A model that quotes such output re-encodes nothing more. Two rules read hidden
data through the same normalisation and encodings, defined here once:

* the leakage validator's quote rule (:mod:`.leakage_quotes`) compares a hint with every
  :func:`encodings` of the hidden inputs and outputs, not only the verbatim text;
* :func:`redact_echoes` cuts from a program's output every echo of a hidden input a
  feedback model may not see (PAIR-BENCH's L1 hides the failing inputs but shows the
  candidate's output, :func:`.hints.mask_evidence`).

The normalisation (:func:`squash`) casefolds and drops whitespace, punctuation,
separators and zero-width characters, so "CANARY_7731", "canary-77 31" and
"Canary\u200b7731" read alike. Only what a rule can see is covered: an encoding not
listed here (base64, a cipher) passes, which is why the failure vocabulary, the evidence
masks and the bounds on program output do not rely on these rules. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

__all__ = [
    "MIN_ECHO_RUN",
    "MIN_ECHO_TOKEN",
    "REDACTED",
    "SCAN_CHARS",
    "encodings",
    "redact_echoes",
    "spaced_encodings",
    "squash",
]

#: zero-width and formatting characters that could hide inside a quote
INVISIBLE: Final = re.compile(r"[\u00ad\u200b-\u200f\u2060-\u2064\ufeff]")
#: separators and punctuation: "1,000,000", "1 000 000" and "1000000" are one text
SEPARATORS: Final = re.compile(r"[\W_]+")
_WORD_CHAR: Final = re.compile(r"[^\W_]")
_TOKEN: Final = re.compile(r"[^\W_]+")
_ASCII_DIGIT: Final = re.compile(r"[0-9]")
_DIGIT_LETTERS: Final = str.maketrans("0123456789", "abcdefghij")
_DIGIT_WORDS: Final = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")

#: Characters of a hidden text a rule reads (the quote rule's scan; a feedback model is
#: shown at most the first 1,500 of any input).
SCAN_CHARS: Final = 8192
#: The shortest token of a hidden input cut from a program's output (shorter tokens, "1",
#: "yes", occur everywhere: a rule cannot tell an echo of them from an answer).
MIN_ECHO_TOKEN: Final = 4
#: The shortest run of a hidden input's normalised text cut from a program's output
#: whatever its tokens (an input of short tokens, "1 2 3 4 5 6 7 8 9", echoed whole).
MIN_ECHO_RUN: Final = 12
#: What stands in a program's output for a cut echo.
REDACTED: Final = "[hidden]"


def squash(text: str) -> str:
    """Casefolded, with whitespace, punctuation, separators and invisible characters removed."""
    return SEPARATORS.sub("", INVISIBLE.sub("", text).casefold())


def _spell(text: str, sep: str) -> str:
    return _ASCII_DIGIT.sub(lambda m: f"{sep}{_DIGIT_WORDS[int(m.group())]}{sep}", text)


def encodings(squashed: str) -> tuple[str, ...]:
    """The re-encodings of a :func:`squash`-ed text a rule recognises, verbatim excluded:
    reversed, digits as letters (a=0..j=9) and reversed, digits as words and reversed."""
    letters = squashed.translate(_DIGIT_LETTERS)
    found = (squashed[::-1], letters, letters[::-1], _spell(squashed, ""), _spell(squashed[::-1], ""))
    return tuple(dict.fromkeys(v for v in found if v != squashed))


def spaced_encodings(spaced: str) -> tuple[str, ...]:
    """:func:`encodings` of a single-spaced casefolded text, keeping its word spacing (the
    quote rule's whole-line check): reversed, digits as letters, digits as words."""
    letters = spaced.translate(_DIGIT_LETTERS)
    found = (spaced[::-1], letters, letters[::-1], " ".join(_spell(spaced, " ").split()),
             " ".join(_spell(spaced[::-1], " ").split()))
    return tuple(dict.fromkeys(v for v in found if v != spaced))


def _view(text: str) -> tuple[str, list[int]]:
    """``squash(text)`` and, for each of its characters, the index in ``text`` it came from."""
    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        if _WORD_CHAR.match(char) is None:
            continue
        for folded in char.casefold():
            chars.append(folded)
            origin.append(index)
    return "".join(chars), origin


def _secrets(secret: str, public: str) -> tuple[set[str], set[str]]:
    """The token patterns (every encoding of every hidden token of at least
    :data:`MIN_ECHO_TOKEN` characters that ``public`` does not hold) and the run texts
    (the hidden text's squashed form and its encodings)."""
    head = secret[:SCAN_CHARS]
    tokens: set[str] = set()
    for token in set(_TOKEN.findall(head.casefold())):
        if len(token) >= MIN_ECHO_TOKEN and squash(token) not in public:
            tokens.add(token)
            tokens.update(v for v in encodings(token) if len(v) >= MIN_ECHO_TOKEN)
    whole = squash(head)
    return tokens, {whole, *encodings(whole)}


def redact_echoes(text: str, secrets: Iterable[str], public: Iterable[str] = ()) -> str:
    """``text`` (a program's output) with every echo of ``secrets`` (the hidden input it ran
    on) replaced by :data:`REDACTED`.

    An echo is a token of a secret (:data:`MIN_ECHO_TOKEN` characters or more), or a run of
    :data:`MIN_ECHO_RUN` characters of its normalised text, in any of its
    :func:`encodings`, found in the normalised ``text`` (so across case and separators).
    What ``public`` holds (what the reader sees anyway: the problem, the expected output,
    the candidate's code) is never cut. Cut spans separated only by separators are one.
    """
    view, origin = _view(text)
    if not view:
        return text
    shown = "\x00".join(squash(p) for p in public)
    marked = [False] * len(view)
    gram = MIN_ECHO_TOKEN
    starts: dict[str, list[int]] = {}
    for i in range(len(view) - gram + 1):
        starts.setdefault(view[i : i + gram], []).append(i)
    for secret in secrets:
        tokens, runs = _secrets(secret, shown)
        for token in tokens:
            for i in starts.get(token[:gram], ()):
                if view.startswith(token, i):
                    marked[i : i + len(token)] = [True] * len(token)
        hidden = "\x00".join(runs)
        grams = {hidden[i : i + gram] for i in range(len(hidden) - gram + 1)}
        k = MIN_ECHO_RUN
        for i in range(len(view) - k + 1):
            run = view[i : i + k]
            # a run outside ``hidden`` has a gram outside it: screened before the search
            if any(run[j : j + gram] not in grams for j in range(0, k - gram + 1, gram)):
                continue
            if run in hidden and run not in shown:
                marked[i : i + k] = [True] * k
    if not any(marked):
        return text
    spans: list[list[int]] = []
    for i, cut in enumerate(marked):
        if not cut:
            continue
        first, last = origin[i], origin[i] + 1
        if spans and _only_separators(text, spans[-1][1], first):
            spans[-1][1] = max(spans[-1][1], last)
        else:
            spans.append([first, last])
    out: list[str] = []
    pos = 0
    for first, last in spans:
        out.append(text[pos:first])
        out.append(REDACTED)
        pos = last
    out.append(text[pos:])
    return "".join(out)


def _only_separators(text: str, start: int, end: int) -> bool:
    return start >= end or _WORD_CHAR.search(text, start, end) is None
