"""Code tokens and BLEU (FixEval): how close a program's text is to the reference's.

:func:`code_tokens` splits Python source into the tokens FixEval compares (comments
kept, indentation as INDENT/DEDENT, a regex fallback for source ``tokenize`` rejects);
:func:`code_only_tokens` drops comments and docstrings from them, as FixEval's Python
processor does; :func:`exact_match`, :func:`exact_match_code`, :func:`bleu` and
:func:`corpus_bleu` compare token sequences.
BLEU's sufficient statistics (:data:`BleuStats`) are exposed so that a caller scoring
many programs can compute each pair's once and sum them (:func:`bleu_from_stats`).
Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import io
import math
import re
import tokenize
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Final

from ..protocol.linediff import source_lines

__all__ = [
    "BLEU_ORDER",
    "BleuStats",
    "bleu",
    "bleu_from_stats",
    "code_only_tokens",
    "code_tokens",
    "corpus_bleu",
    "exact_match",
    "exact_match_code",
    "pair_stats",
]

#: BLEU-4: n-grams of orders 1..4, equally weighted.
BLEU_ORDER: Final = 4

#: Structure tokens standing for a logical line end and an indentation change (the
#: names FixEval's Python tokenizer uses), so token comparison keeps block structure.
_NEW_LINE: Final = "NEW_LINE"
_INDENT: Final = "INDENT"
_DEDENT: Final = "DEDENT"

#: The regex fallback's tokens: a comment, a string literal on one line, a word, a
#: multi-character operator, or any other single non-space character.
_FALLBACK_TOKEN: Final = re.compile(
    r"""\#.*
      | "(?:\\.|[^"\\])*" | '(?:\\.|[^'\\])*'
      | \w+
      | \*\*=? | //=? | <<=? | >>=? | -> | := | [-+*/%&|^@<>=!]=
      | \S""",
    re.VERBOSE,
)


def _python_tokens(source: str) -> list[str]:
    """Python's own tokens with layout reduced to NEW_LINE / INDENT / DEDENT."""
    out: list[str] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        kind = token.type
        if kind == tokenize.NEWLINE:
            out.append(_NEW_LINE)
        elif kind == tokenize.INDENT:
            out.append(_INDENT)
        elif kind == tokenize.DEDENT:
            out.append(_DEDENT)
        elif kind in (tokenize.NL, tokenize.ENDMARKER, tokenize.ENCODING):
            continue
        elif kind == tokenize.COMMENT:
            out.append(token.string.rstrip())
        elif kind == tokenize.ERRORTOKEN and not token.string.strip():
            continue
        else:
            out.append(token.string)
    return out


def _regex_tokens(source: str) -> list[str]:
    """The fallback for text ``tokenize`` rejects: per non-blank line, regex tokens.

    Indentation becomes INDENT / DEDENT by comparing leading widths (tabs expanded to 8)
    with a stack, so the token shape matches :func:`_python_tokens` on ordinary code.
    """
    out: list[str] = []
    widths = [0]
    for line in source_lines(source):
        text = line.rstrip()
        if not text:
            continue
        width = len(text.expandtabs(8)) - len(text.expandtabs(8).lstrip())
        if width > widths[-1]:
            widths.append(width)
            out.append(_INDENT)
        while width < widths[-1]:
            widths.pop()
            out.append(_DEDENT)
        out.extend(match.group().rstrip() for match in _FALLBACK_TOKEN.finditer(text))
        out.append(_NEW_LINE)
    out.extend(_DEDENT for _ in widths[1:])
    return out


def code_tokens(source: str) -> list[str]:
    """The code tokens that exact match and BLEU compare.

    Python's :mod:`tokenize` tokens, comments included (trailing spaces dropped);
    physical line breaks inside brackets and blank lines are dropped, a logical line end
    is ``NEW_LINE`` and indentation changes are ``INDENT`` / ``DEDENT``, so only the
    indentation *level* matters, not its width. Source that ``tokenize`` rejects
    (an unterminated string or bracket, an inconsistent dedent) falls back to a regex
    tokenizer over non-blank lines.
    """
    try:
        return _python_tokens(source)
    except (tokenize.TokenError, SyntaxError, ValueError):
        return _regex_tokens(source)


def _is_comment(token: str) -> bool:
    return token.startswith("#")


def _is_string(token: str) -> bool:
    """A string literal token (any prefix: r, b, f, u and their pairs; any quotes)."""
    return re.fullmatch(r"[A-Za-z]{0,2}(?:'|\")[\s\S]*", token) is not None


def code_only_tokens(source: str) -> list[str]:
    """:func:`code_tokens` without comments and docstrings: what FixEval's exact match compares.

    FixEval (seed 004, Section III-A) tokenizes Python with "the tokenize module" through
    TransCoder's processor, whose ``tokenize_python(s, keep_comments=False)`` drops every
    comment and every docstring, a string literal standing alone on its logical line,
    together with that line's end. We drop the same: every comment token, and every
    string token that is a whole logical line (preceded by a line start, INDENT or
    DEDENT, followed by NEW_LINE) with its NEW_LINE. A block left with nothing in it (an
    INDENT directly followed by its DEDENT, e.g. a function whose body was only a
    docstring) loses both, as TransCoder's processor removes such an empty block.
    """
    kept = [token for token in code_tokens(source) if not _is_comment(token)]
    out: list[str] = []
    i = 0
    while i < len(kept):
        token = kept[i]
        at_line_start = not out or out[-1] in (_NEW_LINE, _INDENT, _DEDENT)
        if (at_line_start and _is_string(token) and i + 1 < len(kept)
                and kept[i + 1] == _NEW_LINE):
            i += 2
            continue
        if token == _DEDENT and out and out[-1] == _INDENT:
            out.pop()
        else:
            out.append(token)
        i += 1
    return out


def exact_match_code(candidate: str, reference: str) -> bool:
    """FixEval's exact match without comments: equal :func:`code_only_tokens`.

    Whitespace is normalised as in :func:`exact_match`, and comments and docstrings are
    ignored; names, literals and the indentation structure are compared.
    """
    return code_only_tokens(candidate) == code_only_tokens(reference)


def exact_match(candidate: str, reference: str) -> bool:
    """FixEval's exact match: equal token sequences (:func:`code_tokens`).

    Only whitespace is normalised: spacing inside a line, indentation width, blank
    lines, trailing whitespace and line continuations inside brackets are ignored;
    comments, names, literals and the indentation structure are compared.
    """
    return code_tokens(candidate) == code_tokens(reference)


def _ngrams(tokens: Sequence[str], order: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i : i + order]) for i in range(len(tokens) - order + 1))


def _bleu_stats(candidate: Sequence[str], reference: Sequence[str]) -> tuple[list[int], list[int]]:
    """Clipped n-gram matches and candidate n-gram totals for orders 1..BLEU_ORDER."""
    matches: list[int] = []
    totals: list[int] = []
    for order in range(1, BLEU_ORDER + 1):
        cand, ref = _ngrams(candidate, order), _ngrams(reference, order)
        matches.append(sum((cand & ref).values()))
        totals.append(max(len(candidate) - order + 1, 0))
    return matches, totals


def _bleu_score(
    matches: Sequence[int], totals: Sequence[int], cand_len: int, ref_len: int
) -> float:
    """BLEU-4 from summed statistics: add-one smoothing on orders 2..4, brevity penalty."""
    if cand_len == 0 or matches[0] == 0:
        return 0.0
    logs = [math.log(matches[0] / totals[0])]
    logs.extend(math.log((m + 1) / (t + 1)) for m, t in zip(matches[1:], totals[1:], strict=True))
    brevity = 1.0 if cand_len > ref_len else math.exp(1.0 - ref_len / cand_len)
    return brevity * math.exp(math.fsum(logs) / BLEU_ORDER)


def bleu(candidate: str, reference: str) -> float:
    """Sentence-level BLEU-4 of the candidate's code tokens against the reference's.

    Clipped n-gram precisions p_1..p_4, geometric mean with equal weights, times the
    brevity penalty exp(1 - r/c) when the candidate (c tokens) is not longer than the
    reference (r tokens). Lin & Och's add-one smoothing on orders 2..4:
    p_n = (matches_n + 1) / (total_n + 1); p_1 is unsmoothed, so a candidate sharing no
    token with the reference scores 0. Two programs without any token score 1 (they
    match exactly), an empty candidate against a non-empty reference 0.
    """
    return _corpus_score([(code_tokens(candidate), code_tokens(reference))])


#: BLEU sufficient statistics of one (candidate, reference) pair:
#: (clipped matches per order, candidate n-grams per order, candidate length, reference length)
BleuStats = tuple[list[int], list[int], int, int]


def pair_stats(cand: Sequence[str], ref: Sequence[str]) -> BleuStats:
    matches, totals = _bleu_stats(cand, ref)
    return matches, totals, len(cand), len(ref)


def bleu_from_stats(stats: Iterable[BleuStats]) -> float:
    """Corpus BLEU-4 from summed pair statistics; 1 when no side has a token."""
    matches = [0] * BLEU_ORDER
    totals = [0] * BLEU_ORDER
    cand_len = ref_len = 0
    for pair_matches, pair_totals, c, r in stats:
        matches = [a + b for a, b in zip(matches, pair_matches, strict=True)]
        totals = [a + b for a, b in zip(totals, pair_totals, strict=True)]
        cand_len += c
        ref_len += r
    if cand_len == 0 and ref_len == 0:
        return 1.0
    return _bleu_score(matches, totals, cand_len, ref_len)


def _corpus_score(pairs: Sequence[tuple[Sequence[str], Sequence[str]]]) -> float:
    """Corpus BLEU-4 of tokenised (candidate, reference) pairs; 1 when no side has a token."""
    return bleu_from_stats(pair_stats(cand, ref) for cand, ref in pairs)


def corpus_bleu(pairs: Iterable[tuple[str, str]]) -> float | None:
    """FixEval's corpus-level BLEU-4 over (candidate, reference) pairs.

    The statistics of :func:`bleu` (clipped matches, totals, lengths) are summed over
    the corpus before the precisions and the brevity penalty are taken, with the same
    smoothing, so one pair gives :func:`bleu` of that pair. ``None`` for no pairs.
    """
    tokens = [(code_tokens(candidate), code_tokens(reference)) for candidate, reference in pairs]
    return _corpus_score(tokens) if tokens else None
