"""A reference-trace cache that cannot be written (a read-only home, a full disk) is only a
cache: the traces are used all the same and the run goes on (it used to fail every episode)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pairbench_async import Checker, Limits, Program, Test, TestResult, TraceCache, Verdict
from pairbench_async.datasets.files import load_dataset


class Tracing:
    async def run(self, program: Program, tests: Sequence[Test], limits: Limits = Limits(), *,
                  checker: Checker = Checker(), trace: bool = False) -> list[TestResult]:
        return [TestResult(id=t.id, verdict=Verdict.AC, lines=[1, 2]) for t in tests]


async def test_an_unwritable_cache_still_gives_the_traces(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    cache = TraceCache(blocker / "traces")  # mkdir fails: NotADirectoryError, an OSError
    instance = load_dataset().instances[0]
    traces: Any = await cache.traces(Tracing(), instance)
    assert traces == {t.id: (1, 2) for t in instance.tests}
    assert cache.write_failed and cache.cached(instance) is None
