"""``codeforces``: Codeforces Python submissions (PAIR-BENCH's own raw data).

Source: rows of the Hugging Face dataset "MatrixStudio/Codeforces-Python-Submissions",
as parquet (needs ``pyarrow``, the ``parquet`` extra) or JSON Lines (optionally
gzipped). One row per submission; a problem's statement and tests repeat in each of
its rows. The column mapping is :data:`COLUMNS`, the only place column names appear.

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
  never given an invented one: ``python -m pairbench_async build-dataset`` (``_build``)
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

import ast
import asyncio
import difflib
import json
import os
import re
from collections.abc import Iterator, Sequence
from typing import Any

from ...core.errors import ConfigError, DatasetError
from ...core.types import Checker, Instance, Limits, Program, Test, TestResult
from ...sandbox.pool import SandboxPool
from ._common import (
    ImportOptions,
    ImportReport,
    content_hash,
    describe_failures,
    get_field,
    read_jsonl,
    run_program,
)

__all__ = [
    "COLUMNS",
    "Candidate",
    "Problem",
    "ReferenceValidator",
    "Scan",
    "Submission",
    "complexity",
    "hidden_pass_rate",
    "import_codeforces",
    "is_truncated",
    "lines_of_code",
    "make_instance",
    "parse_megabytes",
    "parse_seconds",
    "pass_rate_skip",
    "scan_sources",
    "validated_reference",
]

#: Our name -> the dataset's column. Every column the importer reads is here.
COLUMNS: dict[str, str] = {
    "contest_id": "contestId",
    "index": "index",
    "name": "name",
    "title": "title",
    "rating": "rating",
    "tags": "tags",
    "time_limit": "time-limit",
    "memory_limit": "memory-limit",
    "description": "problem-description",
    "input_spec": "input-specification",
    "output_spec": "output-specification",
    "demo_input": "demo-input",
    "demo_output": "demo-output",
    "note": "note",
    "tests": "test_cases",
    "language": "programmingLanguage",
    "verdict": "verdict",
    "passed": "passedTestCount",
    "code": "code",
}

#: OK submissions kept per problem as reference candidates (the first ones read).
MAX_REFERENCE_POOL = 50
DEFAULT_TIME_LIMIT = 2.0
DEFAULT_MEMORY_MB = 256
CHECKER = Checker(abs_tol=1e-6, rel_tol=1e-6)
CHECKER_ANY_CASE = Checker(abs_tol=1e-6, rel_tol=1e-6, yes_no_case=True)

_PY2 = re.compile(r"\b(?:python|pypy)\s*2", re.IGNORECASE)
_ANY_CASE = re.compile(r"\bany\s+(?:letter\s+)?case\b|\bcase[- ]insensitive", re.IGNORECASE)
_SECONDS = re.compile(
    r"\s*(\d+(?:[.,]\d+)?)\s*(ms|milliseconds?|s|secs?|seconds?)?\.?\s*\Z", re.IGNORECASE)
_MEMORY = re.compile(
    r"\s*(\d+(?:[.,]\d+)?)\s*(bytes?|b|kilobytes?|kb|kib|k|megabytes?|mb|mib|m|gigabytes?|gb|gib|g)?"
    r"\.?\s*\Z", re.IGNORECASE)
_MB_PER_UNIT = {"b": 1 / 2**20, "k": 1 / 1024, "m": 1.0, "g": 1024.0}

# skip categories
PYTHON2 = "python 2"
SYNTAX = "does not parse as Python 3"
NO_TESTS = "no usable tests"
NO_REFERENCE = "no reference (no usable OK submission of the problem)"
NO_VALID_REFERENCE = "no valid reference (no OK submission passes every test)"
PASSES = "buggy program passes every test"
DUPLICATE = "duplicate submission"


def parse_seconds(value: Any) -> float | None:
    """Seconds from ``2``, ``"2 seconds"``, ``"1 second"``, ``"0.5 s"``, ``"500 ms"``; else None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and (m := _SECONDS.match(value)):
        seconds = float(m.group(1).replace(",", "."))
        if (m.group(2) or "s").lower().startswith("m"):
            seconds /= 1000
    else:
        return None
    return seconds if 0 < seconds <= 60 else None


def parse_megabytes(value: Any) -> int | None:
    """Megabytes from ``256``, ``"256 megabytes"``, ``"512 MB"``, ``"1 GB"``, ``"65536 KB"``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        mb = float(value)
    elif isinstance(value, str) and (m := _MEMORY.match(value)):
        mb = float(m.group(1).replace(",", ".")) * _MB_PER_UNIT[(m.group(2) or "m")[0].lower()]
    else:
        return None
    return int(mb) if 16 <= mb <= 16384 else None


def is_truncated(text: str) -> bool:
    """Codeforces shows long tests cut off with a trailing ``...``."""
    return text.rstrip().endswith("...")


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


# -- reading -------------------------------------------------------------------------------


def _parquet_rows(path: str) -> Iterator[tuple[int, dict[str, Any] | DatasetError]]:
    try:
        import pyarrow.parquet as pq  # type: ignore[import-untyped]
    except ImportError as exc:
        raise ConfigError(f"{path}: reading parquet needs pyarrow: "
                          "pip install 'pairbench_async[parquet]' "
                          "(or convert the file to JSON Lines)") from exc
    try:
        handle = pq.ParquetFile(path)
        present = set(handle.schema_arrow.names)
        columns = [c for c in COLUMNS.values() if c in present]
        batches = handle.iter_batches(batch_size=512, columns=columns)
        number = 0
        for batch in batches:
            for row in batch.to_pylist():
                number += 1
                yield number, row
    except OSError as exc:  # pyarrow's ArrowInvalid/ArrowIOError derive from it or ValueError
        raise DatasetError(path, None, None, f"cannot read as parquet: {exc}") from exc
    except ValueError as exc:
        raise DatasetError(path, None, None, f"cannot read as parquet: {exc}") from exc


def _is_parquet(path: str) -> bool:
    """By name, or by magic number (Hugging Face caches files under hashed names)."""
    if path.endswith(".parquet"):
        return True
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"PAR1"
    except OSError:
        return False  # read_jsonl reports it


def _rows(path: str) -> Iterator[tuple[int, dict[str, Any] | DatasetError]]:
    return _parquet_rows(path) if _is_parquet(path) else read_jsonl(path)


def _col(row: dict[str, Any], key: str, types: type | tuple[type, ...], path: str, line: int,
         required: bool = False) -> Any:
    return get_field(row, COLUMNS[key], types, path, line, required=required)


def _pairs(value: Any, path: str, line: int, field: str) -> list[tuple[str, str]]:
    """``test_cases`` items as (input, output); a JSON string holding the list is accepted."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise DatasetError(path, line, field,
                               f"a string that is not a JSON list ({exc})") from exc
    if not isinstance(value, list):
        raise DatasetError(path, line, field, f"expected a list, got {type(value).__name__}")
    pairs: list[tuple[str, str]] = []
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise DatasetError(path, line, f"{field}[{i}]", "expected an {input, output} object")
        for key in ("input", "output"):
            if not isinstance(item.get(key), str):
                raise DatasetError(path, line, f"{field}[{i}].{key}", "missing or not a string")
        pairs.append((item["input"], item["output"]))
    return pairs


def _strings(value: Any, path: str, line: int, field: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        return list(value)
    raise DatasetError(path, line, field, "expected a string or a list of strings")


class Submission:
    """One well-formed row."""

    __slots__ = ("code", "contest_id", "index", "language", "line", "passed", "path", "verdict")

    def __init__(self, path: str, line: int, row: dict[str, Any]) -> None:
        self.path = path
        self.line = line
        contest = _col(row, "contest_id", (int, str), path, line, required=True)
        if isinstance(contest, str) and not contest.strip().isdigit():
            raise DatasetError(path, line, COLUMNS["contest_id"],
                               f"not a contest number: {contest!r}")
        self.contest_id = int(contest)
        self.index: str = _col(row, "index", str, path, line, required=True).strip()
        if not self.index or not self.index.isalnum():
            raise DatasetError(path, line, COLUMNS["index"], f"not a problem index: {self.index!r}")
        self.verdict: str = _col(row, "verdict", str, path, line, required=True).strip()
        self.language: str = _col(row, "language", str, path, line, required=True)
        self.code: str = _col(row, "code", str, path, line, required=True)
        passed = row.get(COLUMNS["passed"])
        self.passed = passed if isinstance(passed, int) and not isinstance(passed, bool) else None

    @property
    def key(self) -> tuple[int, str]:
        return (self.contest_id, self.index)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}: cf{self.contest_id}{self.index}"

    def python3_problem(self) -> str | None:
        """The skip reason when this code must not be run as Python 3, else None."""
        if _PY2.search(self.language):
            return PYTHON2
        try:
            ast.parse(self.code)
        except (SyntaxError, ValueError):
            return SYNTAX
        return None


class Problem:
    """A problem's statement and tests, built from the first row that needs it."""

    __slots__ = ("checker", "key", "limits", "limits_defaulted", "meta", "public", "tags", "tests",
                 "text", "truncated")

    def __init__(self, sub: Submission, row: dict[str, Any]) -> None:
        path, line = sub.path, sub.line
        self.key = sub.key
        hidden = _pairs(row.get(COLUMNS["tests"]), path, line, COLUMNS["tests"])
        demo_in = _strings(row.get(COLUMNS["demo_input"]), path, line, COLUMNS["demo_input"])
        demo_out = _strings(row.get(COLUMNS["demo_output"]), path, line, COLUMNS["demo_output"])
        if len(demo_in) != len(demo_out):
            raise DatasetError(path, line, COLUMNS["demo_output"],
                               f"{len(demo_out)} outputs for {len(demo_in)} demo inputs")
        kept = [(i, o) for i, o in hidden if not (is_truncated(i) or is_truncated(o))]
        demos = [(i, o) for i, o in zip(demo_in, demo_out, strict=True)
                 if not (is_truncated(i) or is_truncated(o))]
        self.truncated = len(hidden) - len(kept) + len(demo_in) - len(demos)
        width = max(3, len(str(len(kept))))
        self.tests = [Test(id=f"{k:0{width}d}", input=i, output=o)
                      for k, (i, o) in enumerate(kept, start=1)]
        self.public = [Test(id=f"p{k}", input=i, output=o) for k, (i, o) in enumerate(demos, 1)]

        texts = {k: _col(row, k, str, path, line) or "" for k in
                 ("name", "title", "description", "input_spec", "output_spec", "note")}
        raw_time, raw_memory = row.get(COLUMNS["time_limit"]), row.get(COLUMNS["memory_limit"])
        seconds, megabytes = parse_seconds(raw_time), parse_megabytes(raw_memory)
        self.limits_defaulted = seconds is None or megabytes is None
        self.limits = Limits(time_limit=seconds or DEFAULT_TIME_LIMIT,
                             memory_limit_mb=megabytes or DEFAULT_MEMORY_MB)
        tags = row.get(COLUMNS["tags"])
        self.tags = [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else []
        rating = row.get(COLUMNS["rating"])
        self.meta: dict[str, Any] = {
            "contest_id": sub.contest_id,
            "index": sub.index,
            "name": texts["name"],
            "rating": rating if isinstance(rating, (int, float)) and not isinstance(rating, bool)
            else None,
            "tests_truncated": self.truncated,
        }
        if self.limits_defaulted:
            self.meta["limits_as_given"] = [str(raw_time), str(raw_memory)]
        self.text = _statement(texts, raw_time, raw_memory, self.public)
        any_case = _ANY_CASE.search(texts["output_spec"] + "\n" + texts["description"]
                                    + "\n" + texts["note"])
        self.checker = CHECKER_ANY_CASE if any_case else CHECKER


def _statement(texts: dict[str, str], raw_time: Any, raw_memory: Any, public: list[Test]) -> str:
    title = texts["title"].strip() or texts["name"].strip()
    parts = [f"# {title}"] if title else []
    limits = []
    if raw_time is not None:
        limits.append(f"time limit per test: {raw_time}")
    if raw_memory is not None:
        limits.append(f"memory limit per test: {raw_memory}")
    if limits:
        parts.append("; ".join(limits))
    for heading, key in (("", "description"), ("## Input", "input_spec"),
                         ("## Output", "output_spec")):
        if texts[key].strip():
            parts.append((heading + "\n\n" if heading else "") + texts[key].strip())
    if public:
        examples = [f"Input:\n```\n{(test.input or '').rstrip()}\n```\n"
                    f"Output:\n```\n{(test.output or '').rstrip()}\n```" for test in public]
        parts.append("\n\n".join(["## Examples", *examples]))
    if texts["note"].strip():
        parts.append("## Note\n\n" + texts["note"].strip())
    return "\n\n".join(parts) + "\n"


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
        for line, row in _rows(name):
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
