"""Dataset files: reading, checking and writing instances in the native JSON Lines format.

One :class:`~pairbench_async.core.types.Instance` per line. A malformed line raises
:class:`~pairbench_async.core.errors.DatasetError` naming the file, the line and the
field; with ``skip_invalid=True`` such lines are skipped and *counted* (each error
is kept), never silently dropped. The bundled fixtures are the default dataset.
"""

from __future__ import annotations

import hashlib
import math
import os
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from ..core.errors import DatasetError
from ..core.types import Instance, Test
from ..protocol.leakage import HiddenData, hidden_data, hidden_quotes

__all__ = [
    "DatasetRead",
    "bundled_dataset",
    "check_instance",
    "dataset_hash",
    "load_dataset",
    "read_instances",
    "read_tests",
    "write_instances",
]

_DECODER = msgspec.json.Decoder(Instance)
_ENCODER = msgspec.json.Encoder()
_TEST = msgspec.json.Decoder(Test)


class DatasetRead(msgspec.Struct):
    """What a read produced: the instances, and every line skipped (with why)."""

    instances: list[Instance]
    skipped: list[str] = []
    #: ``file:line`` of each instance, in the order of ``instances`` (so that a caller
    #: leaving one out later can say where it came from)
    where: list[str] = []


def bundled_dataset() -> list[Path]:
    """The bundled fixture files (in the package when installed, else the repo's ``fixtures/``)."""
    package = Path(__file__).resolve().parents[1]
    for folder in (package / "fixtures", package.parent / "fixtures"):
        files = [folder / "stdio.jsonl", folder / "call.jsonl"]
        if all(f.is_file() for f in files):
            return files
    raise DatasetError(str(package / "fixtures"), None, None,
                       "the bundled fixtures are missing; pass --dataset PATH")


def _field(exc: msgspec.ValidationError) -> str | None:
    """The field a msgspec validation message points at (``... - at `$.args```)."""
    text = str(exc)
    marker = "- at `$."
    return text.split(marker, 1)[1].rstrip("`") if marker in text else None


def _decode_line(decoder: msgspec.json.Decoder[Any], line: bytes | str, path: str, number: int) -> Any:
    """One JSON Lines line, or a :class:`DatasetError` naming its file, line and field."""
    try:
        return decoder.decode(line)
    except msgspec.ValidationError as exc:
        raise DatasetError(path, number, _field(exc), str(exc).split(" - at ")[0]) from exc
    except msgspec.DecodeError as exc:
        raise DatasetError(path, number, None, f"not valid JSON ({exc})") from exc


def read_tests(path: str) -> list[Test]:
    """Decode a JSON Lines tests file; any bad line raises :class:`DatasetError`."""
    try:
        with open(path, "rb") as f:
            raw_lines = f.read().splitlines()
    except OSError as exc:
        raise DatasetError(path, None, None, f"cannot read: {exc.strerror}") from exc
    tests: list[Test] = []
    seen: set[str] = set()
    for number, raw in enumerate(raw_lines, start=1):
        if not raw.strip():
            continue
        test = _decode_line(_TEST, raw, path, number)
        if test.kind == "stdio" and test.input is None:
            raise DatasetError(path, number, "input", "a stdio test needs `input` (or `args` for a call test)")
        if test.kind == "stdio" and test.output is None:
            # with nothing to compare, every program would get AC
            raise DatasetError(path, number, "output", "a stdio test needs its expected `output`")
        if test.kind == "call" and test.expected is msgspec.UNSET:
            raise DatasetError(path, number, "expected", "a call test needs `expected`")
        if test.id in seen:
            raise DatasetError(path, number, "id", f"duplicate test id {test.id!r}")
        for why in _test_limit_problems(test):
            field, _, reason = why.partition(": ")
            raise DatasetError(path, number, field, reason)
        seen.add(test.id)
        tests.append(test)
    if not tests:
        raise DatasetError(path, None, None, "no tests in file")
    kinds = {t.kind for t in tests}
    if len(kinds) > 1:
        raise DatasetError(path, None, None, "mixes stdio and call tests; use one kind per file")
    return tests


def _context_leaks(inst: Instance) -> list[str]:
    """Why ``inst.context`` shows the candidate hidden data: a hidden test's input or output
    (the hints' quote rules), or a whole line of the reference. Names the reference uses
    are what a project context is for ("related APIs, class definitions, or global
    variables"), so shorter runs of the reference are allowed, unlike in a hint."""
    public = "\n".join((inst.problem, inst.buggy,
                        *(f"{t.input or ''}\n{t.output or ''}" for t in inst.public_tests)))
    tests = hidden_data(inst)
    reasons = hidden_quotes(inst.context, HiddenData(inputs=tests.inputs, outputs=tests.outputs, reference=""),
                            public)
    shown, known = " ".join(inst.context.split()), " ".join(public.split())
    for line in inst.reference.splitlines():
        line = " ".join(line.split())
        if len(line) >= 16 and line in shown and line not in known:
            reasons.append("repeats a whole line of the reference solution")
            break
    return reasons


_LIMIT_REASONS = {"time_limit": "not in (0, 60] seconds", "ref_ms": "is not a time in ms (finite, >= 0)"}


def _test_limit_problems(test: Test) -> list[str]:
    """A test's own limits that mean nothing (:meth:`Test.bad_limits`), each as ``field: reason``."""
    return [f"{name}: {getattr(test, name)} {_LIMIT_REASONS[name]}" for name in test.bad_limits()]


def check_instance(inst: Instance) -> list[str]:
    """Static problems of one instance (no program is run): each as ``field: reason``."""
    problems: list[str] = []
    if not inst.id.strip():
        problems.append("id: empty")
    if not inst.tests:
        problems.append("tests: no hidden tests")
    if not inst.reference.strip():
        problems.append("reference: empty")
    if not math.isfinite(inst.time_limit) or not 0 < inst.time_limit <= 60:
        problems.append(f"time_limit: {inst.time_limit} not in (0, 60] seconds")
    if not 16 <= inst.memory_limit_mb <= 16384:
        problems.append(f"memory_limit_mb: {inst.memory_limit_mb} not in [16, 16384]")
    if inst.kind == "call" and not (inst.entry_point and inst.entry_point.isidentifier()):
        problems.append("entry_point: a call instance needs a function name")
    seen: set[str] = set()
    for i, test in enumerate([*inst.tests, *inst.public_tests]):
        where = f"tests[{i}]" if i < len(inst.tests) else f"public_tests[{i - len(inst.tests)}]"
        if test.kind != inst.kind:
            problems.append(f"{where}: a {test.kind} test in a {inst.kind} instance")
        elif test.kind == "stdio" and (test.input is None or test.output is None):
            problems.append(f"{where}: a stdio test needs input and output")
        elif test.kind == "call" and test.expected is msgspec.UNSET:
            problems.append(f"{where}: a call test needs expected")
        problems += [f"{where}.{why}" for why in _test_limit_problems(test)]
        if i < len(inst.tests):
            if test.id in seen:
                problems.append(f"{where}.id: duplicate test id {test.id!r}")
            seen.add(test.id)
    if inst.context.strip() and inst.tests:
        # the context is shown to the candidate as is: it must not carry what the hints may
        # not (a hidden test's input or output, the reference), or runs would be unprotected
        problems += [f"context: {reason}" for reason in _context_leaks(inst)]
    return problems


def read_instances(path: str | os.PathLike[str], *, skip_invalid: bool = False,
                   unique_ids: bool = True) -> DatasetRead:
    """Read one JSON Lines dataset file. ``unique_ids=False`` keeps a repeated id for the
    caller to judge (an importer counts it as a duplicate, not as a malformed line)."""
    name = os.fspath(path)
    try:
        raw = Path(name).read_bytes()
    except OSError as exc:
        raise DatasetError(name, None, None, f"cannot read: {exc.strerror}") from exc
    out = DatasetRead(instances=[])
    ids: dict[str, int] = {}
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            inst = _decode_line(_DECODER, line, name, number)
            problems = check_instance(inst)
            if problems:
                field, _, reason = problems[0].partition(": ")
                more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
                raise DatasetError(name, number, field, reason + more)
            if unique_ids and inst.id in ids:
                raise DatasetError(name, number, "id",
                                   f"duplicate instance id {inst.id!r} (first on line {ids[inst.id]})")
        except DatasetError as exc:
            if not skip_invalid:
                raise
            out.skipped.append(str(exc))
            continue
        ids.setdefault(inst.id, number)
        out.instances.append(inst)
        out.where.append(f"{name}:{number}")
    return out


def load_dataset(paths: Sequence[str | os.PathLike[str]] | None = None, *,
                 skip_invalid: bool = False) -> DatasetRead:
    """Read several files (default: the bundled fixtures); ids must be unique across them."""
    files = list(paths) if paths else bundled_dataset()
    total = DatasetRead(instances=[])
    seen: dict[str, str] = {}
    for f in files:
        part = read_instances(f, skip_invalid=skip_invalid)
        total.skipped.extend(part.skipped)
        for inst, where in zip(part.instances, part.where, strict=True):
            if inst.id in seen:
                err = DatasetError(os.fspath(f), None, "id",
                                   f"instance id {inst.id!r} also in {seen[inst.id]}")
                if not skip_invalid:
                    raise err
                total.skipped.append(str(err))
                continue
            seen[inst.id] = os.fspath(f)
            total.instances.append(inst)
            total.where.append(where)
    return total


def dataset_hash(instances: Iterable[Instance]) -> str:
    """A content hash of a dataset, for run manifests (order-sensitive)."""
    h = hashlib.sha256()
    for inst in instances:
        h.update(_ENCODER.encode(inst))
        h.update(b"\n")
    return h.hexdigest()


def write_instances(path: str | os.PathLike[str], instances: Iterable[Instance]) -> int:
    """Write a dataset atomically (temp file in the same directory, fsync, rename)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    count = 0
    try:
        with os.fdopen(fd, "wb") as f:
            for inst in instances:
                f.write(_ENCODER.encode(inst))
                f.write(b"\n")
                count += 1
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return count
