"""CodeBLEU's four parts from the optional ``codebleu`` package (tree-sitter), or why not.

The package (``pip install 'pairbench_async[codebleu]'``: ``codebleu`` 0.7 with
``tree-sitter`` 0.22 and ``tree-sitter-python`` 0.21) parses Python with tree-sitter for
the syntax and dataflow parts; writing those by hand would be a second CodeBLEU. It is an
optional extra, so a report without it says how to install it and goes on
(:func:`codebleu_problem`); the arithmetic of the score is :mod:`.codebleu`.

The numbers are the package's own, unchanged: ``calc_codebleu(references, candidates,
lang="python", tokenizer=code_tokens)``. Its dataflow part merges a variable's parents
with ``list(set(...))``, whose order follows Python's per-process string hashing, so the
same two programs score 0.90, 0.95 or 1.00 from one process to the next. Rather than
change the metric, the package runs in a child process with ``PYTHONHASHSEED=0``
(:class:`CodeBleuProcess`): one number per pair of programs, and anyone can reproduce
it with ``PYTHONHASHSEED=0 python -c 'from codebleu import calc_codebleu; ...'``. The
n-gram parts read FixEval's code tokens (those of our BLEU and exact match: comments
kept, layout as NEW_LINE/INDENT/DEDENT), not the package's default whitespace split, so
Python keywords are tokens of their own for the weighting.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from types import TracebackType
from typing import IO, Final

from ..core.errors import ConfigError
from .codebleu import CodeBleu, codebleu_from_parts

__all__ = ["CODEBLEU_HASH_SEED", "CODEBLEU_INSTALL", "CodeBleuProcess", "codebleu_problem", "corpus_codebleu"]

#: How to get a working CodeBLEU (pinned versions: newer tree-sitter-python wheels do not
#: load in the tree-sitter the package requires).
CODEBLEU_INSTALL: Final = "pip install 'pairbench_async[codebleu]'"
#: The string-hash seed the package runs under (its dataflow part depends on it).
CODEBLEU_HASH_SEED: Final = "0"

#: The child: one JSON request a line (references, candidates), one JSON answer a line.
_CHILD: Final = """
import json, sys
try:
    from codebleu import calc_codebleu
    from pairbench_async.report.bleu import code_tokens
except Exception as exc:
    print(json.dumps({"error": f"{type(exc).__name__}: {exc}", "import": True}), flush=True)
    raise SystemExit(0)
for line in sys.stdin:
    request = json.loads(line)
    try:
        parts = calc_codebleu(request["references"], request["candidates"], lang="python",
                              tokenizer=code_tokens)
        print(json.dumps({"parts": parts}), flush=True)
    except Exception as exc:
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), flush=True)
"""


class CodeBleuProcess:
    """The codebleu package in a child process under :data:`CODEBLEU_HASH_SEED`, kept for
    as many scores as a report needs (``with CodeBleuProcess() as score: score(pairs)``).

    Calling it is :func:`corpus_codebleu`; ``ConfigError`` when the package is missing or
    broken (saying how to install it), ``ValueError`` for no pairs.
    """

    def __init__(self) -> None:
        self._child: subprocess.Popen[str] | None = None

    def __enter__(self) -> CodeBleuProcess:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            assert child.stdin is not None
            child.stdin.close()
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
            finally:
                assert child.stdout is not None
                child.stdout.close()

    def parts(self, references: list[str], candidates: list[str]) -> dict[str, float]:
        """The package's ``calc_codebleu`` of these lists, as it returns them."""
        if self._child is None:
            env = {**os.environ, "PYTHONHASHSEED": CODEBLEU_HASH_SEED}
            self._child = subprocess.Popen([sys.executable, "-c", _CHILD], stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                           env=env)
        stdin, stdout = self._child.stdin, self._child.stdout
        assert stdin is not None and stdout is not None
        try:
            stdin.write(json.dumps({"references": references, "candidates": candidates}) + "\n")
            stdin.flush()
        except BrokenPipeError:
            pass  # the child ended (an import failure): its answer says why
        answer = _answer(stdout)
        if "error" in answer:
            if answer.get("import"):
                self.close()
                raise ImportError(answer["error"])
            raise RuntimeError(answer["error"])
        return {key: float(value) for key, value in answer["parts"].items()}

    def __call__(self, pairs: Sequence[tuple[str, str]]) -> CodeBleu:
        return _score(self, pairs)


def _answer(stdout: IO[str]) -> dict[str, object]:
    line = stdout.readline()
    if not line:
        return {"error": "the codebleu child process ended without an answer"}
    answer: dict[str, object] = json.loads(line)
    return answer


def codebleu_problem() -> str | None:
    """None when CodeBLEU works here; else what is wrong and how to install it.

    Tries one tiny score, so a package that imports but cannot load its parser (a
    tree-sitter-python too new for its tree-sitter) is caught too.
    """
    try:
        with CodeBleuProcess() as child:
            child.parts(["x = 1\n"], ["x = 1\n"])
    except ImportError as exc:
        return f"CodeBLEU needs the codebleu package ({exc}): {CODEBLEU_INSTALL}"
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
    for no pairs. One child process for this call; a report keeps one
    :class:`CodeBleuProcess` for all of its scores.
    """
    with CodeBleuProcess() as child:
        return _score(child, pairs)


def _score(child: CodeBleuProcess, pairs: Sequence[tuple[str, str]]) -> CodeBleu:
    if not pairs:
        raise ValueError("CodeBLEU of no programs")
    candidates = [candidate for candidate, _ in pairs]
    references = [reference for _, reference in pairs]
    try:
        parts = child.parts(references, candidates)
        dataflow: float | None = parts["dataflow_match_score"]
        if dataflow == 0.0 and child.parts(references, references)["dataflow_match_score"] == 0:
            dataflow = None
    except Exception as exc:
        problem = codebleu_problem()
        if problem is None:
            raise
        raise ConfigError(problem) from exc
    return codebleu_from_parts(parts["ngram_match_score"], parts["weighted_ngram_match_score"],
                               parts["syntax_match_score"], dataflow)
