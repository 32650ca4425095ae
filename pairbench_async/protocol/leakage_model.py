"""The learned half of the leakage validator: Table II's boundaries read by a linear model trained on labelled hints.

Nineteen revisions of hand-written rules reached 0.97 / 0.82 on the sets they were fitted to and 0.77-0.82 /
0.66-0.73 on the newest sets nobody had read (fresh48-53). The same labelled hints (4,000 of them, over 300 tasks,
written blind by others and labelled by Table II) teach a plain model more than they taught the rules: a
logistic regression over the hint's words, read structurally (a name of the candidate's program, a name only the
reference has, a backquoted span and whether it is Python, the hint's level), scored on sets it never saw.

The model is data (:mod:`.leakage_model_data`, written by ``python -m bench.train_leakage_model --write``, which
says how it was chosen and measured, and keeps that in the model's ``provenance``); this module only reads it: tokens, n-grams, sublinear tf-idf with an L2 norm, a dot
product and a sigmoid, the same arithmetic scikit-learn's ``TfidfVectorizer`` and ``LogisticRegression`` fitted.
Pure and deterministic: no I/O.
"""

from __future__ import annotations

import base64
import functools
import math
import re
import unicodedata
import zlib
from collections import Counter
from typing import Final

import msgspec

from .leakage_model_data import MODEL
from .leakage_patterns import writes_python

__all__ = ["MIN_KNOWN_WORDS", "LeakageModel", "Reading", "features", "leakage_model", "normalised", "sentences"]

#: a backquoted span, a word, a number or one other character
_TOKEN: Final = re.compile(r"`[^`\n]*`|[A-Za-z_][\w']*|\d+(?:\.\d+)?|[^\s\w]")
_NAME: Final = re.compile(r"[A-Za-z_]\w*")


def _names(text: str) -> set[str]:
    return set(_NAME.findall(text))


#: letters of other scripts that look like Latin ones (a hint in Cyrillic look-alikes reads as its Latin twin)
_LOOK_ALIKES: Final = str.maketrans("АВЕКМНОРСТУХаеорсухіјѕԁɡΑΒΕΖΗΙΚΜΝΟΡΤΥΧοικνρτυχ",
                                    "ABEKMHOPCTYXaeopcyxijsdgABEZHIKMNOPTYXoikvptux")
#: markdown that marks up prose: emphasis, headings, list markers, rules
_EMPHASIS: Final = re.compile(r"(?<![\w*])(\*\*|__|\*|_)(?=\S)([^*_\n`]+?)(?<=\S)\1(?![\w*])")
_LINE_MARKUP: Final = re.compile(r"(?m)^[ \t>]*(?:#{1,6}[ \t]+|[-*+•][ \t]+|\d{1,2}[.)][ \t]+|[-*_=]{3,}[ \t]*$)")


#: a name or a small expression quoted with ' or " ('seen', "total[i]")
_QUOTED: Final = re.compile(r"(?<![\w`])(['\"])([A-Za-z_][\w.\[\]()]*)\1(?![\w`])")


def normalised(text: str, names: frozenset[str] = frozenset()) -> str:
    """``text`` as the model reads it: Unicode compatibility forms and Latin look-alikes folded, markdown's
    emphasis, headings, list markers and rules dropped, and a name of the programs quoted with ' or " read as
    a code span (```name```)."""
    text = unicodedata.normalize("NFKC", text).translate(_LOOK_ALIKES)
    text = _LINE_MARKUP.sub("", _EMPHASIS.sub(r"\2", text))
    if names:
        def spanned(found: re.Match[str]) -> str:
            name = _NAME.match(found.group(2))
            return f"`{found.group(2)}`" if name is not None and name.group() in names else found.group()
        text = _QUOTED.sub(spanned, text)
    return text


def features(text: str, level: int, problem: str, program: str, reference: str) -> list[str]:
    """The hint's terms (of its :func:`normalised` text): its tokens read structurally (``<pid>`` a name only the candidate's program and the
    reference use, ``<rid>`` a name only the reference has, ``<num>`` a number, a backquoted span as ``<bq>`` or
    ``<bq-py>`` then its own terms), their n-grams up to three, and the level's own copies of the unigrams and
    bigrams (a term means one thing in an L1 hint and another in an L5 one)."""
    public = {name.lower() for name in _names(problem)}
    own = {n for n in _names(program) if n.lower() not in public}
    hidden = {n for n in _names(reference) if n.lower() not in public} - own
    text = normalised(text, frozenset(own | hidden))

    def word(token: str) -> str:
        if token[0].isdigit():
            return "<num>"
        if token in own:
            return "<pid>"
        if token in hidden:
            return "<rid>"
        return token.lower()

    tokens: list[str] = []
    for token in _TOKEN.findall(text):
        if token.startswith("`"):
            inner = token[1:-1]
            tokens.append("<bq-py>" if writes_python(inner) else "<bq>")
            tokens.extend(f"`{word(t)}" for t in _TOKEN.findall(inner) if not t.startswith("`"))
        elif token[0].isalnum() or token[0] == "_":
            tokens.append(word(token))
        else:
            tokens.append(token)
    grams = [" ".join(tokens[i:i + n]) for n in (1, 2, 3) for i in range(len(tokens) - n + 1)]
    tagged = [f"L{level}|{g}" for g in grams if g.count(" ") < 2]
    return [f"<level {level}>", *grams, *tagged]


#: the fewest known words a text needs for the model to read it (a terse "The output is wrong." is read on the
#: level's prior alone: 32 of 80 clean terse L1 symptoms were rejected so, attack of stop 34)
MIN_KNOWN_WORDS: Final = 4

#: where a sentence ends: after ., ! or ? and a space before what opens the next, or at a line break
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*\"'(\d])|\s*\n+\s*")


def sentences(text: str) -> list[str]:
    """``text``'s sentences (its lines, and the sentences within them), empty ones left out."""
    return [part for part in _SENTENCE_END.split(text) if part.strip()]


class Reading(msgspec.Struct, frozen=True):
    """What the model reads in one hint: the chance that it crosses any boundary, and each boundary's (the
    highest over the hint and its sentences), and the highest chance of crossing among its sentences (0 for a
    hint of one sentence)."""

    crossing: float
    boundaries: dict[str, float]
    sentence: float = 0.0
    #: how many of the hint's words the model knows: below :data:`MIN_KNOWN_WORDS` it reads the level, not the hint
    known: int = 0


class LeakageModel(msgspec.Struct, frozen=True):
    """A fitted model: the vocabulary's idf, one weight vector per output (``crossing`` and each boundary),
    their intercepts, and the threshold above which ``crossing`` rejects a hint."""

    terms: dict[str, int]
    idf: list[float]
    weights: dict[str, list[float]]
    intercepts: dict[str, float]
    threshold: float
    #: the threshold above which one sentence's chance of crossing rejects the hint (above 1: sentences are not
    #: read on their own): a crossing clause then counts in a long hint as in a short one, where the whole hint's
    #: L2 norm dilutes one clause among many
    sentence_threshold: float = 2.0
    #: how the model was chosen and what it scored (``bench.train_leakage_model``), kept with it
    provenance: dict[str, object] = {}

    def read(self, text: str, level: int, problem: str, program: str, reference: str) -> Reading:
        scores, known = self._scores(text, level, problem, program, reference)
        crossing = scores.pop("crossing")
        split = sentences(text) if self.sentence_threshold <= 1.0 else []
        sentence = 0.0
        for part in split if len(split) > 1 else ():
            more, words = self._scores(part, level, problem, program, reference)
            if words < MIN_KNOWN_WORDS:  # a list marker, a heading, "Thanks!": read on the level alone
                continue
            sentence = max(sentence, more.pop("crossing"))
            scores = {name: max(score, more[name]) for name, score in scores.items()}
        return Reading(crossing=crossing, boundaries=scores, sentence=sentence, known=known)

    def crosses(self, reading: Reading) -> bool:
        """Whether ``reading`` rejects its hint: the whole hint's chance, or one sentence's, over its threshold."""
        return reading.crossing > self.threshold or reading.sentence > self.sentence_threshold

    def _scores(self, text: str, level: int, problem: str, program: str,
                reference: str) -> tuple[dict[str, float], int]:
        terms = features(text, level, problem, program, reference)
        counts = Counter(i for t in terms if (i := self.terms.get(t)) is not None)
        known = sum(1 for t in terms if " " not in t and not t.startswith(("L", "<level"))
                    and t[:1].isalnum() and t in self.terms)
        values = {i: (1.0 + math.log(c)) * self.idf[i] for i, c in counts.items()}
        norm = math.sqrt(sum(v * v for v in values.values())) or 1.0
        return ({name: _sigmoid(self.intercepts[name] + sum(w[i] * v for i, v in values.items()) / norm)
                 for name, w in self.weights.items()}, known)


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


@functools.cache
def leakage_model() -> LeakageModel:
    """The packaged model (:mod:`.leakage_model_data`, decoded once)."""
    return msgspec.json.decode(zlib.decompress(base64.b85decode(MODEL)), type=LeakageModel)
