"""CodeBLEU's four parts from the optional ``codebleu`` package (tree-sitter), or why not.

The package (``pip install 'pairbench_async[codebleu]'``: ``codebleu`` 0.7 with
``tree-sitter`` 0.22 and ``tree-sitter-python`` 0.21) parses Python with tree-sitter for
the syntax and dataflow parts; writing those by hand would be a second CodeBLEU. It is an
optional extra, so a report without it says how to install it and goes on
(:func:`codebleu_problem`). Not pure: the package reads its keyword list from disk on
every call; the arithmetic of the score is :mod:`.codebleu`.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import Any, Final

from ..core.errors import ConfigError
from .bleu import code_tokens
from .codebleu import CodeBleu, codebleu_from_parts

__all__ = ["CODEBLEU_INSTALL", "codebleu_problem", "corpus_codebleu"]

#: How to get a working CodeBLEU (pinned versions: newer tree-sitter-python wheels do not
#: load in the tree-sitter the package requires).
CODEBLEU_INSTALL: Final = "pip install 'pairbench_async[codebleu]'"


#: Held while the package's data-flow extractor is wrapped (see :func:`_canonical_dataflow`).
_DATAFLOW_LOCK: Final = threading.Lock()


@contextlib.contextmanager
def _canonical_dataflow() -> Iterator[None]:
    """Make the package's dataflow match one number per pair of programs.

    ``codebleu.dataflow_match.get_data_flow`` merges a variable's parents with
    ``list(set(...))``, whose order follows Python's per-process string hashing; the
    normaliser then names variables in that order and compares ordered lists, so the same
    two programs scored 0.90, 0.95 or 1.00 from one process to the next. The parents'
    names are sorted here (the only change), and the original is put back afterwards.
    """
    from codebleu import dataflow_match

    def sorted_parents(code: str, parser: Any) -> list[tuple[Any, ...]]:
        return [(*item[:3], sorted(item[3]), *item[4:]) for item in original(code, parser)]

    with _DATAFLOW_LOCK:
        original = dataflow_match.get_data_flow
        dataflow_match.get_data_flow = sorted_parents
        try:
            yield
        finally:
            dataflow_match.get_data_flow = original


def _calc(references: list[str], candidates: list[str]) -> dict[str, float]:
    from codebleu import calc_codebleu

    # The n-gram parts read FixEval's code tokens (those of our BLEU and exact match:
    # comments kept, layout as NEW_LINE/INDENT/DEDENT), not the package's default
    # whitespace split, so Python keywords are tokens of their own for the weighting.
    with _canonical_dataflow():
        result: dict[str, float] = calc_codebleu(references, candidates, lang="python",
                                                 tokenizer=code_tokens)
    return result


def codebleu_problem() -> str | None:
    """None when CodeBLEU works here; else what is wrong and how to install it.

    Tries one tiny score, so a package that imports but cannot load its parser (a
    tree-sitter-python too new for its tree-sitter) is caught too.
    """
    try:
        _calc(["x = 1\n"], ["x = 1\n"])
    except ImportError as exc:
        return f"CodeBLEU needs the codebleu package ({exc.name or exc}): {CODEBLEU_INSTALL}"
    except Exception as exc:  # noqa: BLE001 - any failure of a third-party parser
        return (f"the codebleu package does not work here ({type(exc).__name__}: {exc}); "
                f"install the pinned versions: {CODEBLEU_INSTALL}")
    return None


def corpus_codebleu(pairs: Sequence[tuple[str, str]]) -> CodeBleu:
    """Corpus CodeBLEU of (candidate, reference) programs, FixEval's aggregate like BLEU's.

    Every part sums its counts over the corpus before dividing (the package's corpus
    functions). The dataflow part is None when no reference has a data-flow edge (the
    package then logs a warning and returns 0; we check the references against
    themselves to tell that from a candidate that matches none). ``ConfigError`` when
    the package is missing or broken (:func:`codebleu_problem` says why); ``ValueError``
    for no pairs.
    """
    if not pairs:
        raise ValueError("CodeBLEU of no programs")
    candidates = [candidate for candidate, _ in pairs]
    references = [reference for _, reference in pairs]
    try:
        parts = _calc(references, candidates)
        dataflow: float | None = float(parts["dataflow_match_score"])
        if dataflow == 0.0 and _calc(references, references)["dataflow_match_score"] == 0:
            dataflow = None
    except Exception as exc:
        problem = codebleu_problem()
        if problem is None:
            raise
        raise ConfigError(problem) from exc
    return codebleu_from_parts(float(parts["ngram_match_score"]),
                               float(parts["weighted_ngram_match_score"]),
                               float(parts["syntax_match_score"]), dataflow)
