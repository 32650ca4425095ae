"""The bundled fixture set: reproducible, decodable, and as promised.

Regenerating ``fixtures/`` must reproduce the committed files byte for byte; the
committed instances must meet the benchmark's counts and the pass-rate band, and
a sample of recorded pass rates is recomputed here with the generator's own
in-process runner.
"""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
# ``fixtures`` is a development package at the repository root, not part of the
# installed distribution: make it importable however pytest was started.
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from fixtures import generate  # noqa: E402
from fixtures.functions import CALL_PROBLEMS  # noqa: E402
from fixtures.problems import STDIO_PROBLEMS  # noqa: E402
from fixtures.runner import (  # noqa: E402
    call_failure,
    compile_program,
    mismatch,
    run_call,
    run_stdio,
    stdio_failure,
)
from pairbench_async.core.errors import DatasetError  # noqa: E402
from pairbench_async.core.types import Checker, Instance  # noqa: E402


def _load(name: str) -> list[Instance]:
    decoder = msgspec.json.Decoder(Instance)
    return [decoder.decode(line) for line in (FIXTURES / name).read_bytes().splitlines()]


STDIO = _load("stdio.jsonl")
CALL = _load("call.jsonl")
ALL = STDIO + CALL


def test_regenerating_reproduces_the_committed_files(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONHASHSEED": "4242"}  # a different hash seed must not matter
    subprocess.run(
        [sys.executable, str(FIXTURES / "generate.py"), "--out", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        check=True,
        timeout=100,
    )
    for name in ("stdio.jsonl", "call.jsonl"):
        assert (tmp_path / name).read_bytes() == (FIXTURES / name).read_bytes(), name


@pytest.mark.parametrize("name", ["stdio.jsonl", "call.jsonl"])
def test_every_line_decodes_and_reencodes_identically(name: str) -> None:
    decoder = msgspec.json.Decoder(Instance)
    lines = (FIXTURES / name).read_bytes().splitlines()
    assert lines
    for line in lines:
        assert msgspec.json.encode(decoder.decode(line)) == line


def test_counts() -> None:
    assert len(STDIO) >= 40
    assert len({inst.meta["problem"] for inst in STDIO}) >= 20
    assert len(CALL) >= 10
    assert all(len(inst.tests) >= 100 for inst in ALL)
    ids = [inst.id for inst in ALL]
    assert len(ids) == len(set(ids))
    for inst in ALL:
        test_ids = [test.id for test in inst.tests] + [test.id for test in inst.public_tests]
        assert len(test_ids) == len(set(test_ids)), inst.id


def test_recorded_pass_rates_are_in_the_band() -> None:
    for inst in ALL:
        rate = inst.meta["pass_rate"]
        assert generate.MIN_PASS_RATE <= rate <= generate.MAX_PASS_RATE, inst.id
        assert rate == round(inst.meta["passed"] / len(inst.tests), 4), inst.id
        failing = len(inst.tests) - inst.meta["passed"]
        assert sum(inst.meta["failure_counts"].values()) == failing, inst.id
        assert inst.meta["failure_kinds"] == sorted(inst.meta["failure_counts"]), inst.id


def test_instance_fields_follow_the_kind() -> None:
    for inst in STDIO:
        assert inst.kind == "stdio" and inst.entry_point is None
        assert inst.time_limit == 2.0 and inst.memory_limit_mb == 256
        assert all(
            t.input is not None and t.output is not None and t.args is None for t in inst.tests
        )
    for inst in CALL:
        assert inst.kind == "call" and inst.entry_point
        assert inst.time_limit == 1.0 and inst.memory_limit_mb == 256
        assert all(t.args is not None and t.input is None for t in inst.tests)
        assert f"def {inst.entry_point}(" in inst.problem
        assert (
            f"def {inst.entry_point}(" in inst.reference
            and f"def {inst.entry_point}(" in inst.buggy
        )
    assert any(t.kwargs for inst in CALL for t in inst.tests)
    for inst in ALL:
        assert inst.source == generate.SOURCE
        assert inst.public_tests and inst.buggy != inst.reference
        assert any(tag.startswith("bug:") for tag in inst.tags), inst.id
        assert inst.meta["problem"] == inst.id.split(".")[0] and inst.meta["bug"]


def test_call_expectations_are_json_normalised() -> None:
    def has_tuple(value: object) -> bool:
        if isinstance(value, tuple):
            return True
        if isinstance(value, list):
            return any(has_tuple(v) for v in value)
        return isinstance(value, dict) and any(has_tuple(v) for v in value.values())

    assert not any(has_tuple(t.expected) or has_tuple(t.args) for inst in CALL for t in inst.tests)
    # top_words returns tuples: they arrive as lists.
    assert any(
        isinstance(t.expected, list) and t.expected and isinstance(t.expected[0], list)
        for inst in CALL
        if inst.entry_point == "top_words"
        for t in inst.tests
    )


def _sample() -> list[Instance]:
    """Every problem's first instance, and every instance with two or more failure kinds."""
    seen: set[str] = set()
    chosen = []
    for inst in ALL:
        if inst.meta["problem"] not in seen or len(inst.meta["failure_kinds"]) > 1:
            seen.add(inst.meta["problem"])
            chosen.append(inst)
    return chosen[::3]


@pytest.mark.parametrize("inst", _sample(), ids=lambda inst: inst.id)
def test_pass_rate_recomputes_in_process(inst: Instance) -> None:
    reference = compile_program(inst.reference, "reference")
    buggy = compile_program(inst.buggy, "buggy")
    kinds: list[str | None] = []
    for test in inst.tests:
        if inst.kind == "stdio":
            assert (
                stdio_failure(
                    test.output or "", run_stdio(reference, test.input or ""), inst.checker
                )
                is None
            )
            kinds.append(
                stdio_failure(test.output or "", run_stdio(buggy, test.input or ""), inst.checker)
            )
        else:
            entry = inst.entry_point or ""
            assert (
                call_failure(
                    test.expected, run_call(reference, entry, test.args or [], test.kwargs)
                )
                is None
            )
            kinds.append(
                call_failure(test.expected, run_call(buggy, entry, test.args or [], test.kwargs))
            )
    passed = kinds.count(None)
    assert round(passed / len(kinds), 4) == inst.meta["pass_rate"]
    assert sorted({kind for kind in kinds if kind is not None}) == inst.meta["failure_kinds"]


def test_buggy_programs_are_small_diffs_of_their_references() -> None:
    for inst in ALL:
        diff = list(
            difflib.unified_diff(
                inst.reference.splitlines(), inst.buggy.splitlines(), n=0, lineterm=""
            )
        )
        changed = [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]
        hunks = [line for line in diff if line.startswith("@@")]
        assert 1 <= len(changed) <= 12 and len(hunks) <= 4, inst.id


def test_most_instances_fail_in_two_distinct_ways() -> None:
    two_signatures = [inst for inst in ALL if inst.meta["failure_signatures"] >= 2]
    two_kinds = [inst for inst in ALL if len(inst.meta["failure_kinds"]) >= 2]
    assert len(two_signatures) > len(ALL) / 2
    assert len(two_kinds) >= 12
    assert any(kind.startswith("runtime:") for inst in ALL for kind in inst.meta["failure_kinds"])
    assert {"wrong_lines", "wrong_tokens", "wrong_value"} <= {
        kind for inst in STDIO for kind in inst.meta["failure_kinds"]
    }


def _shape(output: str) -> str:
    rows = [line.split() for line in output.splitlines() if line.strip()]
    tokens = [tok for r in rows for tok in r]
    if len(tokens) == 1:
        return "single"
    if all(len(r) == 1 and r[0].lower() in ("yes", "no") for r in rows):
        return "yes-no"
    if len(rows) == 1:
        return "line"
    if len({len(r) for r in rows}) == 1 and len(rows[0]) > 1:
        return "grid"
    return "multi-line"


def test_output_shapes_vary() -> None:
    shapes = {_shape(t.output or "") for inst in STDIO for t in inst.tests}
    assert {"single", "yes-no", "line", "grid", "multi-line"} <= shapes


def test_problem_modules_are_complete() -> None:
    seeds = [p.seed for p in STDIO_PROBLEMS] + [p.seed for p in CALL_PROBLEMS]
    assert len(seeds) == len(set(seeds))
    for problem in STDIO_PROBLEMS:
        assert len(problem.bugs) >= 2 and problem.examples
        assert len({bug.name for bug in problem.bugs}) == len(problem.bugs)
    for function in CALL_PROBLEMS:
        assert len(function.bugs) >= 2 and function.examples
        assert len({bug.name for bug in function.bugs}) == len(function.bugs)


def test_readme_table_matches_the_committed_instances() -> None:
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    assert generate.pass_rate_table(ALL) in readme


def test_select_tests_hits_the_target_and_keeps_every_failure_kind() -> None:
    failures: list[str | None] = [None] * 100 + ["wrong_value"] * 150 + ["runtime:IndexError"] * 3
    picked = generate.select_tests(failures, 120, 0.3, "synthetic")
    assert len(picked) == len(set(picked)) == 120 and picked == sorted(picked)
    chosen = [failures[i] for i in picked]
    assert chosen.count(None) == 36
    assert chosen.count("runtime:IndexError") == 3


def test_select_tests_clips_to_the_band_and_refuses_an_impossible_pool() -> None:
    failures: list[str | None] = [None] * 200 + ["wrong_value"] * 200
    assert [failures[i] for i in generate.select_tests(failures, 100, 0.9, "x")].count(None) == 55
    assert [failures[i] for i in generate.select_tests(failures, 100, 0.0, "x")].count(None) == 10
    with pytest.raises(DatasetError):
        generate.select_tests([None] * 200 + ["wrong_value"] * 20, 100, 0.3, "x")


def test_runner_classifies_mismatches() -> None:
    assert mismatch("1 2\n3\n", "1\n2 3") is None  # tokens match whatever the layout
    assert mismatch("0.1\n", "0.10000000001\n") is None
    assert mismatch("YES\n", "Yes\n") == "value"
    assert mismatch("YES\n", "Yes\n", Checker(yes_no_case=True)) is None
    assert mismatch("1\n2\n", "1\n") == "lines"
    assert mismatch("1 2\n", "12\n") == "tokens"
    assert mismatch("2000000005\n", "2000000001\n") is None  # why EXACT_NUMBERS exists
    assert mismatch("2000000005\n", "2000000001\n", Checker(abs_tol=0.0, rel_tol=0.0)) == "value"
    assert mismatch("5\n", "5  \n", Checker(mode="exact")) is None
    assert mismatch("1 2\n", "1  2\n", Checker(mode="exact")) == "value"


def test_runner_isolates_programs() -> None:
    limit = sys.getrecursionlimit()
    stdin, stdout = sys.stdin, sys.stdout
    code = compile_program(
        "import sys\nsys.setrecursionlimit(50)\nprint(input()[::-1])\nprint([][0])\n", "t"
    )
    outcome = run_stdio(code, "abc\n")
    assert outcome.output == "cba\n" and outcome.error == "IndexError"
    assert (sys.getrecursionlimit(), sys.stdin, sys.stdout) == (limit, stdin, stdout)
    deep = compile_program(
        "def f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\nprint(f(5000))\n", "deep"
    )
    assert run_stdio(deep, "").error == "RecursionError"
    assert (
        run_stdio(compile_program("import sys\nprint(1)\nsys.exit(0)\n", "exit"), "").error is None
    )
    func = compile_program("def pair(a, *, b=0):\n    a.append(b)\n    return (a, b)\n", "pair")
    args = [[1]]
    assert run_call(func, "pair", args, {"b": 2}).value == [[1, 2], 2]
    assert args == [[1]]  # the call got a fresh copy
