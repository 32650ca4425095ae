"""Hidden data as a rule still recognises it once re-encoded, and its removal from program output.

A program's output on a hidden test is a function of that test's input, and the program
chooses how to write it: verbatim, in another case, with other separators, reversed,
with its digits as letters (``a`` = 0 … ``j`` = 9) or as words (``seven seven three
one``). A model that quotes such output re-encodes nothing more. Two rules read hidden
data through the same normalisation and encodings, defined here once:

* the leakage validator's quote rule (:mod:`.leakage_quotes`) reads a hint reversed and
  the digits it spells (:func:`spelled_digits`) against the hidden inputs and outputs, not
  only the verbatim text;
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
    "spelled_digits",
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
_DIGIT_NAMES: Final = str.maketrans({str(digit): name for digit, name in enumerate(_DIGIT_WORDS)})

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


def encodings(squashed: str) -> tuple[str, ...]:
    """The re-encodings of a :func:`squash`-ed text a rule recognises, verbatim excluded:
    reversed, digits as letters (a=0..j=9) and reversed, digits as words and reversed."""
    backwards = squashed[::-1]
    if _ASCII_DIGIT.search(squashed) is None:  # the digit encodings change nothing
        return (backwards,) if backwards != squashed else ()
    letters = squashed.translate(_DIGIT_LETTERS)
    found = (backwards, letters, letters[::-1], squashed.translate(_DIGIT_NAMES),
             backwards.translate(_DIGIT_NAMES))
    return tuple(dict.fromkeys(v for v in found if v != squashed))


_LETTER_DIGITS: Final = str.maketrans("abcdefghij", "0123456789")
#: a maximal run of words made only of the letters a..j ("hhdb ecec", "hhdb_ecec")
_LETTER_RUN: Final = re.compile(r"(?<![^\W_])[a-j]+(?:[\W_]+[a-j]+)*(?![^\W_])")
_NAMES: Final = "|".join(_DIGIT_WORDS)
#: a maximal run of digit words, with or without separators ("seven seven", "seven-seven")
_WORD_RUN: Final = re.compile(rf"(?<![^\W_])(?:{_NAMES})(?:[\W_]*(?:{_NAMES}))*(?![^\W_])")
_NAME: Final = re.compile(_NAMES)


def spelled_digits(text: str, *, letters: int, words: int) -> list[str]:
    """The digit strings ``text`` may spell: each maximal run of words made only of the
    letters a..j, of ``letters`` letters or more, read a=0..j=9 ("hhdb ecec bhbh" is
    773142421717), and each maximal run of ``words`` digit words or more."""
    folded = INVISIBLE.sub("", text).casefold()
    found = []
    for run in _LETTER_RUN.finditer(folded):
        squashed = SEPARATORS.sub("", run.group())
        if len(squashed) >= letters:
            found.append(squashed.translate(_LETTER_DIGITS))
    for run in _WORD_RUN.finditer(folded):
        names = _NAME.findall(run.group())
        if len(names) >= words:
            found.append("".join(str(_DIGIT_WORDS.index(name)) for name in names))
    return found


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


def _secrets(secret: str, public: frozenset[str]) -> tuple[set[str], list[str]]:
    """The token patterns (every encoding of every hidden token of at least
    :data:`MIN_ECHO_TOKEN` characters that is not a ``public`` token) and the run texts:
    each stretch of shorter tokens, squashed, and its encodings (a run through long tokens
    is cut by the token patterns already)."""
    tokens: set[str] = set()
    runs: list[str] = []
    stretch: list[str] = []
    for token in (*_TOKEN.findall(secret[:SCAN_CHARS].casefold()), ""):
        if token and len(token) < MIN_ECHO_TOKEN:
            stretch.append(token)
            continue
        if len("".join(stretch)) >= MIN_ECHO_RUN:
            runs.append("".join(stretch))
        stretch = []
        if token and token not in public and token not in tokens:
            tokens.add(token)
            tokens.update(v for v in encodings(token) if len(v) >= MIN_ECHO_TOKEN)
    return tokens, [v for run in runs for v in (run, *encodings(run))]


def redact_echoes(text: str, secrets: Iterable[str], public: Iterable[str] = ()) -> str:
    """``text`` (a program's output) with every echo of ``secrets`` (the hidden input it ran
    on) replaced by :data:`REDACTED`.

    An echo is a token of a secret (:data:`MIN_ECHO_TOKEN` characters or more), or a run of
    :data:`MIN_ECHO_RUN` characters of its normalised shorter tokens ("1 2 3 4 5 6 7 8 9 1 2
    3"), in any of its :func:`encodings`, found in the normalised ``text`` (so across case
    and separators). A token ``public`` holds (what the reader sees anyway: the problem, the
    expected output, the candidate's code) is never cut. Cut spans separated only by
    separators are one.
    """
    view, origin = _view(text)
    if not view:
        return text
    public = tuple(public)
    shown = "\x00".join(squash(p) for p in public)
    shown_tokens = frozenset(_TOKEN.findall("\x00".join(public).casefold()))
    marked = [False] * len(view)
    gram = MIN_ECHO_TOKEN
    starts: dict[str, list[int]] = {}
    for i in range(len(view) - gram + 1):
        starts.setdefault(view[i : i + gram], []).append(i)
    for secret in secrets:
        tokens, runs = _secrets(secret, shown_tokens)
        for token in tokens:
            for i in starts.get(token[:gram], ()):
                if view.startswith(token, i):
                    marked[i : i + len(token)] = [True] * len(token)
        if not runs:
            continue
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
