"""Are the references right? Checked before a run, once per dataset (cached by its hash).

An instance whose reference fails one of its own hidden tests cannot be repaired to a
full pass: every model would score 0 on it and the run would exit 0. :func:`check_references`
runs every reference on its tests in the sandbox (as ``validate`` does), keeps the
instances whose reference passes everything and names the others with the tests they
fail. The answer is cached under ``$XDG_CACHE_HOME/pairbench_async/references`` keyed by
the dataset's content hash (a sandbox fault is never cached), so that a resumed run sees
the same instances without running the references again.

The same runs time each reference on each test (its own CPU time, ``TestResult.work_ms``):
``ReferenceCheck.ref_ms``, cached with the answer, which a run gives its evaluator
(``reference_times``) so that the sandbox's loop rule can stop a looping program at a
bound of its reference's time on tests whose file gives none (the bundled fixtures).

A run records the check it used in its folder (:func:`record_check`, ``references.json``:
the instances left out and the times), and a resume reads it back (:func:`recorded_check`)
instead of checking again: the loop rule's bounds of a resumed run, or of a run folder
carried to another machine, are those it started with, whatever the cache holds there.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from pathlib import Path

import msgspec

from ..core.types import Instance, Verdict
from ..datasets.files import dataset_hash
from ..datasets.validate import failing_tests
from ..sandbox.interface import Sandbox
from ..sandbox.traces import default_cache_dir

__all__ = ["RECORDED", "ReferenceCheck", "check_references", "record_check", "recorded_check"]


class ReferenceCheck(msgspec.Struct, frozen=True):
    """The instances to run (those whose reference passes every hidden test) and the
    others by id, each with the tests its reference fails (``{"003": "WA"}``)."""

    kept: list[Instance]
    failed: dict[str, dict[str, str]]
    cached: bool = False
    #: each kept instance's reference time per test (ms, in test order), by id
    ref_ms: dict[str, list[float]] = msgspec.field(default_factory=dict)

    def lines(self) -> list[str]:
        """One line per instance left out, for a screen."""
        out = []
        for iid, tests in self.failed.items():
            first = next(iter(tests.items()), ("?", "?"))
            out.append(f"{iid}: its reference fails {len(tests)} of its hidden tests (e.g. test {first[0]}: "
                       f"{first[1]}), so no repair can pass them all; left out of the run")
        return out


class _Cached(msgspec.Struct, frozen=True):
    """What the cache keeps of a check (a file of another shape is a miss)."""

    failed: dict[str, dict[str, str]]
    ref_ms: dict[str, list[float]]


#: the version of what a cached time means (TestResult.work_ms: the program's own CPU from
#: before its input is decoded to its report encoded); a change makes every cache a miss
_TIMES = "work2"


def _cache_root() -> Path:
    return default_cache_dir().parent / "references"


async def check_references(instances: Sequence[Instance], sandbox: Sandbox, *,
                           cache_dir: str | os.PathLike[str] | None = None) -> ReferenceCheck:
    """Run every reference on its hidden tests (once per dataset content: cached)."""
    root = Path(cache_dir) if cache_dir is not None else _cache_root()
    # keyed by the dataset's content and by what the times mean (_TIMES: the sandbox's
    # work_ms), so that a cache from another definition is never read as this one
    path = root / f"{dataset_hash(instances)}.{_TIMES}.json"
    found: _Cached | None = None
    cached = False
    try:
        found = msgspec.json.decode(path.read_bytes(), type=_Cached)
        cached = True
    except (OSError, msgspec.DecodeError):
        found = None
    if found is None:
        results = await asyncio.gather(*(sandbox.run(i.program(i.reference), i.tests, i.limits, checker=i.checker)
                                         for i in instances))
        failed: dict[str, dict[str, str]] = {}
        times: dict[str, list[float]] = {}
        for inst, res in zip(instances, results, strict=True):
            # a sandbox fault (SF) is not the reference's: it does not leave an instance out
            fails = {t: why for t, why in failing_tests(res).items() if not why.startswith(Verdict.SF.value)}
            if fails:
                failed[inst.id] = fails
            elif all(r.work_ms is not None for r in res):
                times[inst.id] = [round(r.work_ms, 3) for r in res]  # type: ignore[arg-type]
        found = _Cached(failed=failed, ref_ms=times)
        faulted = any(t.verdict is Verdict.SF for r in results for t in r)
        if not faulted:  # a sandbox fault says nothing about the reference: never cached
            try:
                root.mkdir(parents=True, exist_ok=True)
                tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
                tmp.write_bytes(msgspec.json.encode(found))
                os.replace(tmp, path)
            except OSError:
                pass  # a cache that cannot be written costs a re-check next time, nothing more
    return _answer(instances, found.failed, found.ref_ms, cached)


def _answer(instances: Sequence[Instance], failed: dict[str, dict[str, str]],
            ref_ms: dict[str, list[float]], cached: bool) -> ReferenceCheck:
    """The check's answer for ``instances``: those whose reference failed left out, and
    their times with them."""
    return ReferenceCheck(kept=[i for i in instances if i.id not in failed], failed=failed, cached=cached,
                          ref_ms={k: v for k, v in ref_ms.items() if k not in failed})


#: the file of a run folder that holds the check the run used
RECORDED = "references.json"


class _Recorded(msgspec.Struct, frozen=True):
    """``references.json``: the check a run used, for the dataset it names."""

    dataset: str
    times: str
    failed: dict[str, dict[str, str]]
    ref_ms: dict[str, list[float]]


def record_check(check: ReferenceCheck, instances: Sequence[Instance], folder: str | os.PathLike[str]) -> None:
    """Write the check a run uses into its folder (atomically; ``instances``: every instance
    the check was asked about, for the dataset's hash). An OSError is the caller's: a run
    whose folder cannot be written stops there, as for any other record."""
    path = Path(folder) / RECORDED
    data = _Recorded(dataset=dataset_hash(instances), times=_TIMES, failed=check.failed, ref_ms=check.ref_ms)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(msgspec.json.encode(data))
    os.replace(tmp, path)


def recorded_check(instances: Sequence[Instance], folder: str | os.PathLike[str]) -> ReferenceCheck | None:
    """The check recorded in a run folder for these instances, or None: no such file (a run
    from before it was recorded), one of another shape, or one for another dataset or
    another meaning of the times (then the run checks again, as it did before)."""
    try:
        found = msgspec.json.decode((Path(folder) / RECORDED).read_bytes(), type=_Recorded)
    except (OSError, msgspec.DecodeError):
        return None
    if found.dataset != dataset_hash(instances) or found.times != _TIMES:
        return None
    return _answer(instances, found.failed, found.ref_ms, cached=True)
