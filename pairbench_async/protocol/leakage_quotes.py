"""The leakage validator's quote rule: no hidden test data or reference code, verbatim.

The one rule that compares a hint with hidden data. Its hint-independent half (a
:class:`_QuoteIndex` per :class:`~.leakage.HiddenData`, built once and kept) and the
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

A ``quote`` reason names the source but never repeats the quoted text. Pure: no I/O.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

import msgspec

from .leakage_patterns import _WORD

if TYPE_CHECKING:
    from .leakage import HiddenData, ValidationPolicy

__all__: list[str] = []


#: Characters scanned from the start of each hidden input or output. The feedback model
#: is shown at most the first 1,500 of each (``feedback_prompt``), so a hint cannot quote more.
_SCAN_CHARS: Final = 8192


#: zero-width and formatting characters a hint could hide inside a quote
_INVISIBLE: Final = re.compile(r"[\u00ad\u200b-\u200f\u2060-\u2064\ufeff]")
#: separators and punctuation: "1,000,000", "1 000 000" and "1000000" are one quote
_SEPARATORS: Final = re.compile(r"[\W_]+")
#: a thousands separator between digits: "1,000,000" and "1 000 000" read as "1000000"
_DIGIT_GROUPS: Final = re.compile(r"(?<=\d)[,_'\u2009\u202f ](?=\d{3}(?!\d))")


def _squash(text: str) -> str:
    """Casefolded, with whitespace, punctuation, separators and invisible characters removed."""
    return _SEPARATORS.sub("", _INVISIBLE.sub("", text).casefold())


def _spaced(text: str) -> str:
    """Casefolded words, single-spaced, invisible characters removed."""
    return " ".join(_DIGIT_GROUPS.sub("", _INVISIBLE.sub("", text).casefold()).split())


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


class _QuoteIndex(msgspec.Struct, frozen=True):
    """The hint-independent half of the quote rule, computed once per :class:`HiddenData`."""

    sources: tuple[_QuoteSource, ...]
    #: the maximal ``\w+`` runs of the scanned hidden inputs and outputs
    data_tokens: frozenset[str]

    @classmethod
    def build(cls, hidden: HiddenData) -> _QuoteIndex:
        inputs = tuple(text[:_SCAN_CHARS] for text in hidden.inputs)
        outputs = tuple(text[:_SCAN_CHARS] for text in hidden.outputs)
        sources = []
        for what, texts, items in (
            ("a hidden test input", inputs, inputs),
            ("a hidden expected output", outputs, outputs),
            ("the reference solution", (hidden.reference,), hidden.reference.splitlines()),
        ):
            prepared = []
            lines = [line for text in items for line in text.splitlines()] if what != "the reference solution" else []
            for item in (*items, *lines):
                if len(item) < _SCAN_CHARS:
                    spaced = _spaced(item)
                    prepared.append((spaced, len(_squash(spaced))))
            squashed = "\x00".join(_squash(t) for t in texts)
            sources.append(_QuoteSource(what, squashed, _grams(squashed), tuple(prepared)))
        tokens = frozenset(_WORD.findall("\x00".join((*inputs, *outputs)).casefold()))
        return cls(tuple(sources), tokens)


def _quote_reasons(
    hint: str, hidden: HiddenData, public: str, policy: ValidationPolicy
) -> list[str]:
    reasons: list[str] = []
    index = hidden.quote_index
    squashed_public = _squash(public)
    spaced_public = _spaced(public)
    squashed_hint = _squash(hint)
    spaced_hint = _spaced(hint)
    k = policy.min_quote_chars
    for source in index.sources:
        if _shares_run(squashed_hint, source.squashed, source.grams, squashed_public, k):
            reasons.append(f"quote: repeats {k}+ characters of {source.what} verbatim")
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
    leaked = {t for t in _WORD.findall(_INVISIBLE.sub("", hint).casefold()) if len(t) >= policy.min_token_chars}
    leaked &= index.data_tokens
    if leaked:
        leaked -= set(_WORD.findall(public.casefold()))
    if leaked:
        token = min(leaked)
        reasons.append(f"quote: repeats a {len(token)}-character token of hidden test data")
    return reasons
