"""Reading Codeforces submission rows: files, columns, a problem's statement and tests.

:mod:`.codeforces` decides which wrong submissions become instances; this module turns
the rows it reads (parquet or JSON Lines) into a well-formed :class:`Submission` and,
once per problem, a :class:`Problem` (hidden and public tests without truncated ones,
limits, statement, checker), so that the column names, the field validation and the
parsing of Codeforces' texts sit in one place apart from the filters and the sandbox runs.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from typing import Any

from ...core.errors import ConfigError, DatasetError
from ...core.types import Checker, Limits, Test
from .common import get_field, read_jsonl

__all__ = [
    "COLUMNS",
    "Problem",
    "Submission",
    "parse_rows",
    "is_truncated",
    "parse_megabytes",
    "parse_seconds",
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

# skip categories of a row's code (the importer's own are in :mod:`.codeforces`)
PYTHON2 = "python 2"
SYNTAX = "does not parse as Python 3"


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


def parse_rows(path: str) -> Iterator[tuple[int, dict[str, Any] | DatasetError]]:
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
