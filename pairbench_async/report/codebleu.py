"""CodeBLEU (FixEval's CB, after Ren et al. [35]) from its four parts: the score's arithmetic.

FixEval (seed 004, Section IV-A.1) reports beside BLEU: "Syntax Match (SM) represents the
percentage of the sub-trees extracted from the Abstract Syntax Tree (AST) of a generated
program that matches the subtrees in the AST of the reference programs", "Dataflow Match
(DM) indicates the ratio of the number of matched candidate dataflows and the total number
of reference dataflow [35]" and "CodeBLEU (CB) [...] also considers logical correctness
based on an Abstract Syntax Tree (AST) in conjunction with data flow structure and
grammatical similarity". The parts come from the ``codebleu`` package
(:mod:`.codebleu_package`); this module holds the combination, CodeBLEU =
α·n-gram + β·weighted n-gram + γ·syntax + δ·dataflow with α = β = γ = δ = 1/4 (the
weights of [35] and of the package). Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import math
from typing import Final

import msgspec

__all__ = ["CODEBLEU_WEIGHTS", "CodeBleu", "codebleu_from_parts"]

#: (α, β, γ, δ): the weights of n-gram, weighted n-gram, syntax and dataflow match.
CODEBLEU_WEIGHTS: Final = (0.25, 0.25, 0.25, 0.25)


class CodeBleu(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """CodeBLEU and its four parts over a corpus of (candidate, reference) programs, in [0, 1]."""

    codebleu: float
    #: corpus BLEU-4 of the code tokens (the package's: NLTK's smoothing method 1, a zero
    #: n-gram count becomes 0.1; 0 when no unigram matches)
    ngram_match: float
    #: the same with n-gram *recall*, whose unigrams weigh Python keywords 1, other tokens 0.2
    weighted_ngram_match: float
    #: FixEval's SM: reference AST subtrees found in the candidate's AST
    syntax_match: float
    #: FixEval's DM: matched reference data-flow edges (variables renamed in order of
    #: appearance); None when no reference of the corpus has a data-flow edge
    dataflow_match: float | None


def codebleu_from_parts(ngram: float, weighted: float, syntax: float,
                        dataflow: float | None) -> CodeBleu:
    """CodeBLEU = (1/4)·(n-gram + weighted n-gram + syntax + dataflow), with the parts kept.

    A dataflow match of 0 counts 0, as in [35] (``codebleu`` 0.7 counts a 0 as 1:
    ``theta * (dataflow_match_score or 1)``, which gives an empty program 0.25). When the
    references have no data flow at all (``dataflow`` None) the term is undefined; it
    counts 1 there, as the package does (nothing to match, nothing missed).
    """
    parts = (ngram, weighted, syntax, 1.0 if dataflow is None else dataflow)
    for value in parts:
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"a CodeBLEU part outside [0, 1]: {value}")
    score = math.fsum(w * v for w, v in zip(CODEBLEU_WEIGHTS, parts, strict=True))
    return CodeBleu(codebleu=score, ngram_match=ngram, weighted_ngram_match=weighted,
                    syntax_match=syntax, dataflow_match=dataflow)
