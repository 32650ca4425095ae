"""The leakage validator's quote rule: no hidden test data or reference code, verbatim.

The one rule that compares a hint with hidden data. Its hint-independent half (a
:class:`QuoteIndex` per :class:`~.leakage.HiddenData`, built once and kept) and the
search over it are a module of their own, apart from the wording rules
(:mod:`.leakage_patterns`) and the validation loop (:mod:`.leakage`), because they are
what makes validation cost time in the hint's length rather than the test suite's size.

* ``quote`` (every level): hidden test data or reference code repeated verbatim: any
  run of ``min_quote_chars`` non-whitespace characters shared with a hidden input,
  expected output or the reference (whitespace ignored); a whole hidden input, output
  or reference line of ``min_item_chars`` or more; or a single token of
  ``min_token_chars`` or more that occurs in hidden test data. Text that also occurs in
  the problem statement or the candidate's code is public and never counts. Only the
  first 8 KiB of each hidden input and output are scanned: the feedback model is shown
  at most the first 1,500 characters of any of them.
* The same, re-encoded, the encodings a program's output can give an echo of its input
  (:mod:`.echoes`): a run of ``min_quote_chars`` of the hint *reversed* shared with a hidden
  input or output; the digits a hint spells (a run of ``min_quote_chars`` letters a..j read
  as a=0..j=9, or of four or more digit words, ``seven seven three one``), forwards or
  backwards, found in a hidden input's or output's normalised text; a token of
  ``min_token_chars`` that is a hidden token reversed or with its digits as letters
  ("CANARY_hhdb" for "CANARY_7731"). The hint is decoded, not the hidden data encoded, so
  the index stays the verbatim one.
* The program's output on a hidden test is hidden data as well (it is a function of the
  test's input): the candidate outputs the feedback model was shown (the evidence's) are a
  source of their own for verbatim runs of ``min_quote_chars`` (the output is already in
  the program's own encoding), which also catches an echo in an encoding no rule reads (a
  base64 blob quoted whole).

A ``quote`` reason names the source but never repeats the quoted text. Revision 18: a code span quoting public text
whole is cut out of the verbatim run search, so a run never joins it to the prose beside it. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import Final

import msgspec

from .echoes import INVISIBLE, REDACTED, SCAN_CHARS, spelled_digits, squash
from .hidden import HiddenData, ValidationPolicy
from .leakage_patterns import WORD

__all__: list[str] = []


#: Characters scanned from the start of each hidden input or output. The feedback model
#: is shown at most the first 1,500 of each (``feedback_prompt``), so a hint cannot quote more.
_SCAN_CHARS: Final = SCAN_CHARS
_INVISIBLE: Final = INVISIBLE
#: a thousands separator between digits: "1,000,000" and "1 000 000" read as "1000000"
_DIGIT_GROUPS: Final = re.compile(r"(?<=\d)[,_'\u2009\u202f ](?=\d{3}(?!\d))")
#: one character per character, so that a token keeps its length: reversed, digits as letters
_LETTERS: Final = str.maketrans("0123456789", "abcdefghij")
#: A run of this many digit words ("seven seven three one") is read as the digits it spells.
_MIN_DIGIT_WORDS: Final = 4

_squash = squash

#: a code span: its content, when the candidate's code or the statement holds it whole, is public text
_SPAN: Final = re.compile(r"`([^`\n]+)`")


def _squashed_runs(hint: str, squashed_public: str) -> str:
    """The hint squashed for the verbatim run search, each code span that quotes public text whole (the
    candidate's own line, "`rounds = len(teams) - 1`") cut out with a separator no hidden text holds.

    Revision 18: a span quoting the candidate leaks nothing, and its squashed letters must not join the prose
    around it into a run of the reference ("Suspicious line: `rounds = ...`" gave "e" + "roundslente", the
    reference's "...('BYE')\n rounds = len(te..."): a run is read within the quote or within the prose, never
    across the span's edge. A span holding anything not public is kept, so no hidden run can be hidden by
    splitting it with backticks (the squash drops them either way)."""
    def cut(found: re.Match[str]) -> str:
        inner = _squash(found.group(1))
        return "\x00" if inner and inner in squashed_public else found.group()
    return "\x00".join(_squash(part) for part in _SPAN.sub(cut, hint).split("\x00"))


def _spaced(text: str) -> str:
    """Casefolded words, single-spaced, invisible characters removed."""
    return " ".join(_DIGIT_GROUPS.sub("", _INVISIBLE.sub("", text).casefold()).split())


def _token_encodings(token: str) -> tuple[str, ...]:
    """A token's encodings of its own length (reversed, digits as letters, both)."""
    letters = token.translate(_LETTERS)
    return (token[::-1], letters, letters[::-1])


#: Length of the character n-grams that pre-screen seeds in :func:`_shares_run`.
_GRAM: Final = 4


def _grams(text: str) -> frozenset[str]:
    return frozenset(text[i : i + _GRAM] for i in range(len(text) - _GRAM + 1))


def _shares_run(hint: str, hidden: str, grams: frozenset[str], public: str, k: int) -> bool:
    """Whether ``hint`` and ``hidden`` share a run of ``k`` characters absent from ``public``.

    Seeds of length ``k - s + 1`` taken every ``s`` positions are searched first: any
    shared run of length ``k`` contains one whole seed, so full ``k``-grams are only
    checked around seeds that occur in ``hidden``. ``grams`` (every ``_GRAM``-gram of
    ``hidden``) screens a seed before the substring search over ``hidden``, which can
    be hundreds of KB: a seed with a gram outside the set cannot occur there.
    """
    stride = max(1, k // 2)
    seed = k - stride + 1
    screen = seed >= _GRAM
    for start in range(0, len(hint) - seed + 1, stride):
        piece = hint[start : start + seed]
        if screen and any(piece[i : i + _GRAM] not in grams for i in range(seed - _GRAM + 1)):
            continue
        if piece not in hidden:
            continue
        for begin in range(max(0, start - stride + 1), start + 1):
            gram = hint[begin : begin + k]
            if len(gram) == k and gram in hidden and gram not in public:
                return True
    return False


class _QuoteSource(msgspec.Struct, frozen=True):
    """One kind of hidden text, prepared for the quote rule."""

    what: str
    #: every text with whitespace removed, joined by NUL (no run crosses two texts)
    squashed: str
    #: every ``_GRAM``-gram of ``squashed``
    grams: frozenset[str]
    #: (whitespace-normalised item, its length without whitespace) of each whole item
    items: tuple[tuple[str, int], ...]
    #: test data, read re-encoded too (not the reference: code is not what a program echoes)
    encoded: bool = False

    @classmethod
    def build(cls, what: str, texts: tuple[str, ...], items: list[str] | tuple[str, ...],
              encoded: bool) -> _QuoteSource:
        prepared = []
        for item in items:
            if len(item) < _SCAN_CHARS:
                spaced = _spaced(item)
                prepared.append((spaced, len(_squash(spaced))))
        squashed = "\x00".join(_squash(t) for t in texts)
        return cls(what, squashed, _grams(squashed), tuple(prepared), encoded)


class QuoteIndex(msgspec.Struct, frozen=True):
    """The hint-independent half of the quote rule, computed once per :class:`HiddenData`
    (or per set of program outputs, :func:`_program_index`)."""

    sources: tuple[_QuoteSource, ...]
    #: the maximal ``\w+`` runs of the scanned hidden inputs and outputs, and their
    #: same-length encodings
    data_tokens: frozenset[str]

    @classmethod
    def build(cls, hidden: HiddenData) -> QuoteIndex:
        inputs = tuple(text[:_SCAN_CHARS] for text in hidden.inputs)
        outputs = tuple(text[:_SCAN_CHARS] for text in hidden.outputs)
        sources = []
        for what, texts in (("a hidden test input", inputs), ("a hidden expected output", outputs)):
            lines = [line for text in texts for line in text.splitlines()]
            sources.append(_QuoteSource.build(what, texts, (*texts, *lines), encoded=True))
        reference = hidden.reference
        sources.append(_QuoteSource.build("the reference solution", (reference,), reference.splitlines(),
                                          encoded=False))
        return cls(tuple(sources), _tokens((*inputs, *outputs)))


def _tokens(texts: tuple[str, ...]) -> frozenset[str]:
    tokens = set(WORD.findall("\x00".join(texts).casefold()))
    return frozenset(tokens.union(*(_token_encodings(t) for t in tokens)))


def _program_index(outputs: tuple[str, ...]) -> QuoteIndex:
    """The quote rule's view of the candidate outputs a feedback model was shown: verbatim
    runs only (the output is already in the program's own encoding). A short token or line
    of a program's output is as often the runtime's own words ("solution", "object") as the
    input's, and an echo of the input is caught as the input itself; a cut echo's mark is
    not the program's."""
    texts = tuple(text[:_SCAN_CHARS].replace(REDACTED, "\x00") for text in outputs)
    source = _QuoteSource.build("the program's output on a hidden test", texts, (), encoded=False)
    return QuoteIndex((source,), frozenset())


def quote_reasons(
    hint: str, hidden: HiddenData, public: str, policy: ValidationPolicy,
    program_outputs: tuple[str, ...] = (),
) -> list[str]:
    """Why ``hint`` quotes hidden data or, from ``program_outputs`` (the candidate outputs
    the feedback model was shown), the program's output on a hidden test."""
    reasons: list[str] = []
    squashed_public = _squash(public)
    spaced_public = _spaced(public)
    squashed_hint = _squashed_runs(hint, squashed_public)
    reversed_hint = squashed_hint[::-1]
    spelled = [d for d in spelled_digits(hint, letters=policy.min_quote_chars, words=_MIN_DIGIT_WORDS)
               if d not in squashed_public and d[::-1] not in squashed_public]
    spaced_hint = _spaced(hint)
    hint_tokens = {t for t in WORD.findall(_INVISIBLE.sub("", hint).casefold()) if len(t) >= policy.min_token_chars}
    public_tokens: set[str] | None = None
    k = policy.min_quote_chars
    index = hidden.derived.get("quote_index")
    if index is None:  # built once per instance's hidden data
        index = hidden.derived["quote_index"] = QuoteIndex.build(hidden)
    indexes = [(index, "hidden test data")]
    if program_outputs:
        indexes.append((_program_index(program_outputs), "the program's output on a hidden test"))
    for index, data in indexes:
        for source in index.sources:
            if _shares_run(squashed_hint, source.squashed, source.grams, squashed_public, k):
                reasons.append(f"quote: repeats {k}+ characters of {source.what} verbatim")
                continue
            if source.encoded and (
                _shares_run(reversed_hint, source.squashed, source.grams, squashed_public, k)
                or any(d in source.squashed or d[::-1] in source.squashed for d in spelled)
            ):
                reasons.append(f"quote: repeats {source.what}, re-encoded (reversed, or its digits "
                               "as letters or words)")
                continue
            for spaced, size in source.items:
                if (
                    size >= policy.min_item_chars
                    and spaced in spaced_hint
                    and spaced not in spaced_public
                    and re.search(rf"(?<!\w){re.escape(spaced)}(?!\w)", spaced_hint)
                ):
                    reasons.append(f"quote: repeats a whole line of {source.what}")
                    break
        # a whole-word occurrence of a word-only token is one of the text's maximal \w+ runs
        leaked = hint_tokens & index.data_tokens
        if leaked:
            if public_tokens is None:
                public_tokens = set(WORD.findall(public.casefold()))
            leaked -= public_tokens
        if leaked:
            token = min(leaked)
            reasons.append(f"quote: repeats a {len(token)}-character token of {data}")
    return reasons
