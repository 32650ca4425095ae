"""``codeforces``: Codeforces Python submissions (PAIR-BENCH's own raw data).

Source: rows of the Hugging Face dataset "MatrixStudio/Codeforces-Python-Submissions",
as parquet (needs ``pyarrow``, the ``parquet`` extra) or JSON Lines (optionally
gzipped). One row per submission; a problem's statement and tests repeat in each of
its rows. The column mapping is :data:`.codeforces_rows.COLUMNS`, the only place column
names appear; that module reads the rows and validates their fields.

What becomes an instance (stdin/stdout kind):

* ``WRONG_ANSWER`` submissions are the buggy programs; ``OK`` submissions of the
  same problem are *reference candidates*; other verdicts are skipped per verdict.
* ``test_cases`` become the hidden tests, the demo input/output public tests shown
  in the problem text (and kept in ``public_tests``). Codeforces truncates long tests
  when it displays them, so an input or output ending in ``...`` is dropped and
  counted (``tests dropped: truncated``).
* A reference is an ``OK`` submission of the same problem that passes *every* test
  (hidden and public) in the sandbox; candidates are tried most similar to the
  buggy program first (difflib ratio), at most ``reference_candidates`` of them. A
  row with no such submission is reported (``no reference``/``no valid reference``),
  never given an invented one: ``python -m pairbench_async build-dataset`` (``datasets.build``)
  makes references by repairing the wrong submission itself, from the same scan
  (:func:`scan_sources`) and the same pieces (:func:`pass_rate_skip`,
  :func:`validated_reference`, :func:`make_instance`).
* Instance ids are ``cf<contestId><index>-<hash of code>`` (the dataset has no
  submission id); a second row with the same code is a duplicate.
* A submission whose language is Python 2, or whose code does not parse as Python 3,
  is reported and never run (nor used as a reference).
* ``time-limit``/``memory-limit`` strings ("2 seconds", "256 megabytes") are parsed
  defensively; an unparsable one falls back to 2 s / 256 MB and is counted.
* The checker is Codeforces' usual one: tokens, numbers within 1e-6 absolute or
  relative; yes/no words are case-insensitive when the statement says "any case".

Filters (PAIR-BENCH, seed 000: "more than 100 test cases, an initial pass rate
between 10% and 55%, 15-80 lines of code, and cyclomatic complexity of at least 8"),
each off unless given, applied in this order, the first failing one naming the skip:
language/syntax, ``min_tests`` (hidden tests after truncated ones are dropped,
inclusive: the paper's strict "more than 100" is ``--min-tests 101``), ``loc``
(non-blank lines, inclusive), ``min_complexity`` (radon's total cyclomatic
complexity: module-level code plus every function and method), reference
available, then in the sandbox ``pass_rate`` (the buggy program's share of passed
hidden tests, inclusive) and a validated reference. A buggy program that passes
every kept test is skipped whatever the filters: it has nothing to repair.
"""

from __future__ import annotations

import asyncio
import difflib
import os
from collections.abc import Sequence
from typing import Any

from ...core.errors import ConfigError, DatasetError
from ...core.types import Instance, Program, TestResult
from ...sandbox.pool import SandboxPool
from .codeforces_rows import Problem, Submission, parse_rows
from .common import (
    ImportOptions,
    ImportReport,
    content_hash,
    describe_failures,
    run_program,
)

__all__ = [
    "Candidate",
    "ReferenceValidator",
    "Scan",
    "complexity",
    "hidden_pass_rate",
    "import_codeforces",
    "lines_of_code",
    "make_instance",
    "pass_rate_skip",
    "scan_sources",
    "validated_reference",
]

#: OK submissions kept per problem as reference candidates (the first ones read).
MAX_REFERENCE_POOL = 50

# skip categories (those of a row's code are in :mod:`.codeforces_rows`)
NO_TESTS = "no usable tests"
NO_REFERENCE = "no reference (no usable OK submission of the problem)"
NO_VALID_REFERENCE = "no valid reference (no OK submission passes every test)"
PASSES = "buggy program passes every test"
DUPLICATE = "duplicate submission"


def lines_of_code(code: str) -> int:
    """Non-blank lines."""
    return sum(1 for line in code.splitlines() if line.strip())


def complexity(code: str) -> float:
    """radon's total cyclomatic complexity (module-level code, functions and methods).

    Raises :class:`ConfigError` when radon is not installed.
    """
    try:
        from radon.visitors import ComplexityVisitor  # type: ignore[import-untyped]
    except ImportError as exc:
        raise ConfigError("the complexity filter needs radon: "
                          "pip install 'pairbench_async[complexity]'") from exc
    return float(ComplexityVisitor.from_code(code).total_complexity)


# -- importing -------------------------------------------------------------------------------


class Candidate:
    """A wrong submission that passed the static filters, with its problem."""

    __slots__ = ("complexity", "id", "loc", "problem", "sub")

    def __init__(self, sub: Submission, problem: Problem, loc: int, cc: float | None) -> None:
        self.sub = sub
        self.problem = problem
        self.loc = loc
        self.complexity = cc
        self.id = f"cf{sub.contest_id}{sub.index}-{content_hash(sub.code)}"


class Scan:
    """Everything the streaming pass keeps: candidates, problems, OK codes per problem."""

    def __init__(self) -> None:
        self.candidates: list[Candidate] = []
        self.problems: dict[tuple[int, str], Problem] = {}
        self.references: dict[tuple[int, str], dict[str, str]] = {}
        self.ids: set[str] = set()

    def similar_ok(self, candidate: Candidate) -> list[str]:
        """The problem's usable OK submissions, most similar to the buggy program first."""
        code = candidate.sub.code
        return sorted(self.references.get(candidate.sub.key, {}).values(),
                      key=lambda c: -difflib.SequenceMatcher(None, code, c).ratio())


def _scan_row(sub: Submission, row: dict[str, Any], options: ImportOptions, report: ImportReport,
              scan: Scan) -> None:
    """The static filters of the module docstring, in order, for one row."""
    if sub.verdict == "OK":
        codes = scan.references.setdefault(sub.key, {})
        if sub.python3_problem() is not None:
            report.count("OK submissions not usable (Python 2 or syntax)")
        elif len(codes) >= MAX_REFERENCE_POOL:
            report.count(f"OK submissions beyond {MAX_REFERENCE_POOL} per problem (not kept)")
        else:
            codes.setdefault(content_hash(sub.code), sub.code)
            report.count("OK submissions (reference candidates)")
        return
    if sub.verdict != "WRONG_ANSWER":
        report.skip(f"verdict {sub.verdict}", sub.where)
        return
    reason = sub.python3_problem()
    if reason is not None:
        report.skip(reason, f"{sub.where} ({sub.language})")
        return
    problem = scan.problems.get(sub.key)
    if problem is None:
        problem = Problem(sub, row)  # DatasetError: the row is malformed
        scan.problems[sub.key] = problem
        report.count("tests dropped: truncated", problem.truncated)
        report.count("problems with unparsable limits (defaulted)", int(problem.limits_defaulted))
    if not problem.tests:
        report.skip(NO_TESTS, sub.where)
        return
    if options.min_tests is not None and len(problem.tests) < options.min_tests:
        report.skip(f"fewer than {options.min_tests} tests", f"{sub.where} ({len(problem.tests)})")
        return
    loc = lines_of_code(sub.code)
    if options.loc is not None and not options.loc[0] <= loc <= options.loc[1]:
        report.skip(f"lines of code outside {options.loc[0]}:{options.loc[1]}",
                    f"{sub.where} ({loc})")
        return
    cc: float | None = None
    if options.min_complexity is not None:
        try:
            cc = complexity(sub.code)
        except (SyntaxError, ValueError, RecursionError) as exc:
            report.skip("complexity not measurable", f"{sub.where} ({exc})")
            return
        if cc < options.min_complexity:
            report.skip(f"complexity below {options.min_complexity:g}", f"{sub.where} ({cc:g})")
            return
    candidate = Candidate(sub, problem, loc, cc)
    if candidate.id in scan.ids:
        report.skip(DUPLICATE, f"{sub.where} ({candidate.id})")
        return
    scan.ids.add(candidate.id)
    scan.candidates.append(candidate)


class ReferenceValidator:
    """Validates each reference candidate once per import (shared by a problem's rows)."""

    def __init__(self, pool: SandboxPool) -> None:
        self.pool = pool
        self.runs: dict[tuple[tuple[int, str], str], asyncio.Task[str]] = {}

    def check(self, problem: Problem, code: str) -> asyncio.Task[str]:
        key = (problem.key, content_hash(code))
        if key not in self.runs:
            self.runs[key] = asyncio.ensure_future(self._run(problem, code))
        return self.runs[key]

    async def _run(self, problem: Problem, code: str) -> str:
        tests = [*problem.tests, *problem.public]
        results = await run_program(self.pool, Program(source=code), tests, problem.limits,
                                    problem.checker)
        return describe_failures(results)


def hidden_pass_rate(results: Sequence[TestResult], candidate: Candidate) -> float:
    """The share of the problem's hidden tests passed (``results`` may go on with public ones)."""
    hidden = results[:len(candidate.problem.tests)]
    return sum(r.passed for r in hidden) / len(hidden)


def pass_rate_skip(candidate: Candidate, rate: float,
                   options: ImportOptions) -> tuple[str, str] | None:
    """(skip reason, detail) when the buggy pass rate leaves the row out, else None."""
    where = candidate.sub.where
    if options.pass_rate is not None and not options.pass_rate[0] <= rate <= options.pass_rate[1]:
        lo, hi = options.pass_rate
        return f"pass rate outside {lo:g}:{hi:g}", f"{where} ({rate:.3f})"
    if rate == 1.0:
        return PASSES, where
    return None


async def validated_reference(candidate: Candidate, ranked: Sequence[str],
                              validator: ReferenceValidator,
                              options: ImportOptions) -> str | tuple[str, str]:
    """The first of ``ranked`` (:meth:`Scan.similar_ok`) that passes every test, else (skip
    reason, detail); at most ``options.reference_candidates`` are run."""
    if not ranked:
        return NO_REFERENCE, candidate.sub.where
    failures: list[str] = []
    for code in ranked[:max(1, options.reference_candidates)]:
        failure = await validator.check(candidate.problem, code)
        if not failure:
            return code
        failures.append(failure)
    return NO_VALID_REFERENCE, f"{candidate.sub.where}: tried {len(failures)}: {failures[0]}"


async def _finish(candidate: Candidate, scan: Scan, validator: ReferenceValidator,
                  pool: SandboxPool, options: ImportOptions) -> Instance | tuple[str, str]:
    """The instance, or (skip reason, detail): reported in row order by the caller."""
    sub, problem = candidate.sub, candidate.problem
    results = await run_program(pool, Program(source=sub.code), problem.tests, problem.limits,
                                problem.checker)
    rate = hidden_pass_rate(results, candidate)
    skip = pass_rate_skip(candidate, rate, options)
    if skip is not None:
        return skip
    reference = await validated_reference(candidate, scan.similar_ok(candidate), validator,
                                          options)
    if isinstance(reference, tuple):
        return reference
    return make_instance(candidate, reference, rate)


def make_instance(candidate: Candidate, reference: str, rate: float) -> Instance:
    """The instance of ``candidate`` with ``reference`` (validated by the caller)."""
    sub, problem = candidate.sub, candidate.problem
    meta = dict(problem.meta)
    meta.update(
        language=sub.language,
        verdict=sub.verdict,
        buggy_pass_rate=round(rate, 6),
        loc=candidate.loc,
        reference_similarity=round(difflib.SequenceMatcher(None, sub.code, reference).ratio(), 4),
    )
    if sub.passed is not None:
        meta["passed_test_count"] = sub.passed
    if candidate.complexity is not None:
        meta["complexity"] = candidate.complexity
    return Instance(
        id=candidate.id,
        problem=problem.text,
        buggy=sub.code,
        reference=reference,
        tests=problem.tests,
        kind="stdio",
        time_limit=problem.limits.time_limit,
        memory_limit_mb=problem.limits.memory_limit_mb,
        public_tests=problem.public,
        tags=problem.tags,
        source="codeforces",
        checker=problem.checker,
        meta=meta,
    )


def scan_sources(sources: Sequence[str], options: ImportOptions, report: ImportReport) -> Scan:
    """Read every row once and apply the static filters (no program runs).

    Blocking file I/O: async callers run it in a thread. Malformed rows and static
    skips go to ``report``; the candidates keep row order.
    """
    if options.min_complexity is not None:
        complexity("x = 1\n")  # fail early, before any row is read, when radon is missing
    scan = Scan()
    for path in sources:
        name = os.fspath(path)
        for line, row in parse_rows(name):
            report.rows += 1
            if isinstance(row, DatasetError):
                report.malformed_row(row)
                continue
            try:
                _scan_row(Submission(name, line, row), row, options, report, scan)
            except DatasetError as exc:
                report.malformed_row(exc)
    return scan


async def import_codeforces(sources: Sequence[str], options: ImportOptions, pool: SandboxPool,
                            report: ImportReport) -> list[Instance]:
    scan = scan_sources(sources, options, report)
    ready: list[Candidate] = []
    for candidate in scan.candidates:
        if scan.references.get(candidate.sub.key):
            ready.append(candidate)
        else:
            report.skip(NO_REFERENCE, candidate.sub.where)
    validator = ReferenceValidator(pool)
    finished = await asyncio.gather(*(_finish(c, scan, validator, pool, options) for c in ready))
    instances: list[Instance] = []
    for outcome in finished:
        if isinstance(outcome, Instance):
            instances.append(outcome)
        else:
            report.skip(*outcome)
    report.count("tests", sum(len(i.tests) for i in instances))
    return instances
