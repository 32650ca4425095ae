"""Importers record per-test time limits derived from the reference's measured time,
with the rule's parameters; the options and their CLI flags."""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from pairbench_async.cli.import_ import add_import_parser, options_from_args
from pairbench_async.core.errors import ConfigError
from pairbench_async.datasets.files import read_instances, write_instances
from pairbench_async.datasets.importers import ImportOptions, import_dataset
from pairbench_async.sandbox.pool import SandboxPool

DATA = Path(__file__).resolve().parents[1] / "data" / "importers"
HE_SAMPLE = DATA / "humaneval.jsonl"
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "call.jsonl"


@pytest.fixture
async def pool() -> AsyncIterator[SandboxPool]:
    async with SandboxPool(workers=2) as p:
        yield p


async def test_humaneval_limits_follow_the_options(tmp_path: Path, pool: SandboxPool) -> None:
    out = tmp_path / "he.jsonl"
    # a floor under the references' time: factor x ref decides, per test
    options = ImportOptions(time_floor=0.001, time_factor=3.0, time_runs=2, time_limit=2.0,
                            skip_invalid=True)
    await import_dataset("humaneval", [HE_SAMPLE], out, options, pool=pool)
    instances = read_instances(out).instances
    assert instances
    for inst in instances:
        assert inst.meta["limits"] == {"rule": "max(floor, factor x ref)", "floor": 0.001,
                                       "factor": 3.0, "runs": 2, "cap": 2.0}
        for t in inst.tests:
            assert t.ref_ms is not None and t.time_limit is not None
            # max(0.001, 3 x ref), rounded up to 10 ms
            assert t.time_limit >= 3 * t.ref_ms / 1000 and t.time_limit - 3 * t.ref_ms / 1000 < 0.01 + 1e-9
        assert inst.time_limit == max(t.time_limit for t in inst.tests)


async def test_no_derive_limits_keeps_the_flat_limit(tmp_path: Path, pool: SandboxPool) -> None:
    out = tmp_path / "he.jsonl"
    await import_dataset("humaneval", [HE_SAMPLE], out,
                         ImportOptions(derive_limits=False, skip_invalid=True), pool=pool)
    for inst in read_instances(out).instances:
        assert inst.time_limit == 3.0 and "limits" not in inst.meta
        assert all(t.time_limit is None and t.ref_ms is None for t in inst.tests)


async def test_jsonl_derives_only_when_asked_and_caps_at_the_instances_limit(
        tmp_path: Path, pool: SandboxPool) -> None:
    src = tmp_path / "src.jsonl"
    write_instances(src, read_instances(FIXTURES).instances[:2])
    plain, derived = tmp_path / "plain.jsonl", tmp_path / "derived.jsonl"
    await import_dataset("jsonl", [src], plain, pool=pool)
    assert all(t.time_limit is None for i in read_instances(plain).instances for t in i.tests)
    await import_dataset("jsonl", [src], derived,
                         ImportOptions(derive_limits=True, time_floor=0.5, time_runs=1), pool=pool)
    for inst in read_instances(derived).instances:
        assert inst.meta["limits"]["cap"] == 1.0  # the fixture's own limit
        assert all(t.time_limit == 0.5 and t.ref_ms for t in inst.tests)
        assert inst.time_limit == 0.5


def test_cli_flags_reach_the_options() -> None:
    parser = argparse.ArgumentParser()
    add_import_parser(parser.add_subparsers())
    args = parser.parse_args(["import", "humaneval", "x.jsonl", "--out", "o.jsonl",
                              "--time-floor", "0.5", "--time-factor", "8", "--time-runs", "5",
                              "--time-limit", "4", "--no-derive-limits"])
    options = options_from_args(args)
    assert (options.time_floor, options.time_factor, options.time_runs, options.time_limit,
            options.derive_limits) == (0.5, 8.0, 5, 4.0, False)
    defaults = options_from_args(parser.parse_args(["import", "humaneval", "x", "--out", "o"]))
    assert (defaults.time_floor, defaults.time_factor, defaults.time_runs, defaults.time_limit,
            defaults.derive_limits) == (1.0, 4.0, 3, 3.0, None)


async def test_bad_limit_options_and_codeforces_are_refused(tmp_path: Path) -> None:
    for options in (ImportOptions(time_floor=5.0), ImportOptions(time_factor=0.0),
                    ImportOptions(time_runs=0)):
        with pytest.raises(ConfigError):
            await import_dataset("humaneval", [HE_SAMPLE], tmp_path / "o.jsonl", options)
    with pytest.raises(ConfigError, match="own time limit"):
        await import_dataset("codeforces", [DATA / "codeforces.jsonl"], tmp_path / "o.jsonl",
                             ImportOptions(derive_limits=True))


async def test_jsonl_counts_the_tests_it_wrote_and_names_the_rows_it_left_out(
        tmp_path: Path, pool: SandboxPool) -> None:
    """An instance left out while timed (its reference fails a test) is not in the
    ``tests`` count, and the report says where it was (file:line)."""
    import msgspec

    kept, broken = read_instances(FIXTURES).instances[:2]
    wrong = msgspec.structs.replace(broken.tests[0], expected=["not", "this"])
    broken = msgspec.structs.replace(broken, tests=[wrong, *broken.tests[1:]])
    src = tmp_path / "src.jsonl"
    write_instances(src, [kept, broken])
    out = tmp_path / "out.jsonl"
    report = await import_dataset("jsonl", [src], out,
                                  ImportOptions(derive_limits=True, time_floor=0.5, time_runs=1), pool=pool)
    written = read_instances(out).instances
    assert [i.id for i in written] == [kept.id] and report.imported == 1
    assert report.counts["tests"] == sum(len(i.tests) for i in written) == len(kept.tests)
    assert report.skipped == {"reference fails a test while timed": 1}
    assert f"reference fails a test while timed: {src}:2: {broken.id}" in report.summary()
