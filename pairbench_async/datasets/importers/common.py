"""What every importer shares: options, the import report, row reading, sandbox runs.

An importer turns rows of a public dataset into native
:class:`~pairbench_async.core.types.Instance` objects. Rows fail in two ways, kept
apart in the :class:`ImportReport`:

* **malformed**: the row is not in the source's schema (a missing or mistyped
  field, a line that is not JSON). It is reported as a
  :class:`~pairbench_async.core.errors.DatasetError` naming the file, the line (the
  row number for parquet) and the field, and the other rows are still imported.
* **skipped**: the row is well-formed but does not make an instance (a Python 2
  submission, a filter, a reference that fails its tests). Counted per reason.

A file that cannot be read at all raises ``DatasetError`` and nothing is written.
Untrusted dataset code (references, buggy programs, test sources) only ever runs in
the sandbox pool; a sandbox fault (``SF``) during an import is an infrastructure
failure and raises :class:`~pairbench_async.core.errors.SandboxError` instead of being
misreported as a property of the row.
"""

from __future__ import annotations

import gzip
import hashlib
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

import msgspec

from ...core.errors import DatasetError, SandboxError
from ...core.types import Checker, Limits, Program, Test, TestResult, Verdict
from ...sandbox.interface import Sandbox

__all__ = [
    "MALFORMED",
    "PAPER_FILTERS",
    "ImportOptions",
    "ImportReport",
    "content_hash",
    "describe_failures",
    "get_field",
    "read_jsonl",
    "run_program",
]

#: Skip category of rows not in the source's schema.
MALFORMED = "malformed"
#: Problems kept per skip category (all are counted; malformed rows are all kept).
DETAILS_PER_CATEGORY = 20


class ImportOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Options of one import. Filters left at ``None`` are off.

    The filters are codeforces' (PAIR-BENCH's dataset construction, seed 000:
    ``min_tests=100, pass_rate=(0.10, 0.55), loc=(15, 80), min_complexity=8``, see
    :data:`PAPER_FILTERS`); ``humaneval`` is feedbackeval's HumanEval file.
    """

    #: HumanEval JSONL (optionally gzipped) joined to FeedbackEval rows by task_id.
    humaneval: str | None = None
    #: Fewest hidden tests (after truncated ones are dropped), inclusive.
    min_tests: int | None = None
    #: Buggy program's pass rate on the hidden tests, measured in the sandbox, inclusive.
    pass_rate: tuple[float, float] | None = None
    #: Non-blank lines of the buggy program, inclusive.
    loc: tuple[int, int] | None = None
    #: Cyclomatic complexity of the buggy program (radon's total), at least.
    min_complexity: float | None = None
    #: Sandbox workers (default: the number of cores).
    workers: int | None = None
    #: Accept malformed rows (they are still reported); else the CLI exits 2.
    skip_invalid: bool = False
    #: Limits of imported call-kind instances (HumanEval, FeedbackEval). With derived
    #: limits, ``time_limit`` is their cap.
    time_limit: float = 3.0
    memory_limit_mb: int = 256
    #: OK submissions tried as a codeforces reference, most similar to the buggy first.
    reference_candidates: int = 3
    #: Derive per-test CPU limits from the reference's measured time (``_limits``):
    #: None is the format's default (humaneval and feedbackeval: yes; jsonl: no;
    #: codeforces keeps the problem's limit).
    derive_limits: bool | None = None
    #: The derived limit: min(time_limit, max(time_floor, time_factor x reference's
    #: CPU time)), the reference timed ``time_runs`` times (median).
    time_floor: float = 1.0
    time_factor: float = 4.0
    time_runs: int = 3

    @property
    def call_limits(self) -> Limits:
        return Limits(time_limit=self.time_limit, memory_limit_mb=self.memory_limit_mb)


#: The filters of PAIR-BENCH's Codeforces dataset (seed 000, "Dataset Construction": "more
#: than 100 test cases, an initial pass rate between 10% and 55%, 15-80 lines of code, and
#: cyclomatic complexity of at least 8"); ``min_tests`` is inclusive, so more than 100 is 101.
PAPER_FILTERS: Final[Mapping[str, Any]] = MappingProxyType({
    "min_tests": 101,
    "pass_rate": (0.10, 0.55),
    "loc": (15, 80),
    "min_complexity": 8.0,
})


class ImportReport(msgspec.Struct):
    """What an import did: rows read, instances imported, and every row left out, by reason.

    ``skipped`` counts rows (or, for feedbackeval, erroneous programs) per reason;
    ``counts`` holds other tallies (tests kept, truncated tests dropped, calls that
    could not be split...); ``problems`` says which rows and why (every malformed
    row; at most :data:`DETAILS_PER_CATEGORY` per other reason).
    """

    format: str
    sources: list[str]
    out: str | None = None
    rows: int = 0
    imported: int = 0
    skipped: dict[str, int] = {}
    counts: dict[str, int] = {}
    problems: list[str] = []
    #: problems not kept because of the per-reason cap
    hidden: int = 0
    #: problems kept per reason (at most DETAILS_PER_CATEGORY, except malformed)
    kept: dict[str, int] = {}

    @property
    def malformed(self) -> int:
        return self.skipped.get(MALFORMED, 0)

    def skip(self, reason: str, detail: str, n: int = 1) -> None:
        """Count ``n`` rows left out for ``reason``; keep ``detail`` once (capped per reason)."""
        if n < 1:
            return
        self.skipped[reason] = self.skipped.get(reason, 0) + n
        if reason == MALFORMED or self.kept.get(reason, 0) < DETAILS_PER_CATEGORY:
            self.kept[reason] = self.kept.get(reason, 0) + 1
            self.problems.append(f"{reason}: {detail}" + (f" ({n} rows)" if n > 1 else ""))
        else:
            self.hidden += 1

    def malformed_row(self, error: DatasetError, n: int = 1) -> None:
        """A row not in the source's schema (``n`` rows when it held several programs)."""
        self.skip(MALFORMED, str(error), n)

    def count(self, key: str, n: int = 1) -> None:
        if n:
            self.counts[key] = self.counts.get(key, 0) + n

    def summary(self) -> str:
        """A few human-readable lines (the CLI prints them)."""
        into = f" into {self.out}" if self.out else ""
        lines = [f"{self.format}: imported {self.imported} instance(s) "
                 f"from {self.rows} row(s){into}"]
        total = sum(self.skipped.values())
        if total:
            lines.append(f"skipped {total}:")
            lines.extend(f"  {reason}: {n}" for reason, n in sorted(self.skipped.items()))
        if self.counts:
            lines.append("counts: " + ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items())))
        if self.problems:
            lines.append("details:")
            lines.extend(f"  {p}" for p in self.problems)
            if self.hidden:
                lines.append(f"  ... and {self.hidden} more (counted above)")
        return "\n".join(lines)


def content_hash(text: str, n: int = 10) -> str:
    """A short, stable hash of a text (instance ids, caches)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:n]


_JSON = msgspec.json.Decoder()


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any] | DatasetError]]:
    """``(line number, row)`` per non-blank line; a bad line yields its ``DatasetError``.

    Streams the file (a whole Codeforces export should not sit in memory); gzipped
    files (HumanEval ships ``HumanEval.jsonl.gz``) are read transparently. A file that
    cannot be read raises ``DatasetError`` before anything is yielded; a gzip stream
    that breaks off raises it at the line where it breaks.
    """
    name = os.fspath(path)
    number = 0
    try:
        with open(name, "rb") as raw:
            gzipped = raw.peek(2)[:2] == b"\x1f\x8b"
            stream: Iterable[bytes] = gzip.GzipFile(fileobj=raw) if gzipped else raw
            for number, line in enumerate(stream, start=1):  # noqa: B007 (read in except)
                line = line.strip()
                if not line:
                    continue
                try:
                    row = _JSON.decode(line)
                except msgspec.DecodeError as exc:
                    yield number, DatasetError(name, number, None, f"not valid JSON ({exc})")
                    continue
                if not isinstance(row, dict):
                    yield number, DatasetError(name, number, None, "expected a JSON object, "
                                               f"got {type(row).__name__}")
                    continue
                yield number, row
    except (OSError, EOFError) as exc:  # gzip.BadGzipFile is an OSError
        if number == 0 and not isinstance(exc, (gzip.BadGzipFile, EOFError)):
            raise DatasetError(name, None, None,
                               f"cannot read: {getattr(exc, 'strerror', None) or exc}") from exc
        raise DatasetError(name, number + 1, None, f"corrupt gzip stream: {exc}") from exc


_TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", list: "a list",
               dict: "an object", bool: "a boolean"}


def _type_name(types: type | tuple[type, ...]) -> str:
    kinds = types if isinstance(types, tuple) else (types,)
    return " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in kinds)


def get_field(row: dict[str, Any], name: str, types: type | tuple[type, ...], path: str,
              line: int, *, required: bool = True, nonempty: bool = False) -> Any:
    """``row[name]`` checked against ``types``; a ``DatasetError`` naming the field if not.

    A missing optional field (or ``null``) gives ``None``. ``bool`` is never accepted
    where a number is asked for.
    """
    if name not in row or row[name] is None:
        if required:
            raise DatasetError(path, line, name, "missing")
        return None
    value = row[name]
    kinds = types if isinstance(types, tuple) else (types,)
    if isinstance(value, bool) and bool not in kinds:
        raise DatasetError(path, line, name, f"expected {_type_name(types)}, got a boolean")
    if float in kinds and isinstance(value, int) and not isinstance(value, bool):
        value = float(value) if int not in kinds else value
    if not isinstance(value, kinds):
        raise DatasetError(path, line, name,
                           f"expected {_type_name(types)}, got {type(value).__name__}")
    if nonempty and isinstance(value, (str, list, dict)) and not (
            value.strip() if isinstance(value, str) else value):
        raise DatasetError(path, line, name, "empty")
    return value


async def run_program(pool: Sandbox, program: Program, tests: Sequence[Test], limits: Limits,
                      checker: Checker) -> list[TestResult]:
    """Run in the sandbox; a sandbox fault is the sandbox's failure, so it raises."""
    results = await pool.run(program, tests, limits, checker=checker)
    faults = [r for r in results if r.verdict is Verdict.SF]
    if faults:
        raise SandboxError(f"the sandbox failed while importing: {faults[0].error}")
    return results


def describe_failures(results: Sequence[TestResult]) -> str:
    """``"2 of 7 tests fail (first: test 003 WA)"``; empty when every test passed."""
    failed = [r for r in results if not r.passed]
    if not failed:
        return ""
    first = failed[0]
    why = first.verdict.value + (f" {first.error}" if first.error else "")
    return f"{len(failed)} of {len(results)} tests fail (first: test {first.id} {why})"
