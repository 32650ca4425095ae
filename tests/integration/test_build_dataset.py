"""``build-dataset``: references by iterative repair of wrong submissions, end to end.

The sample (``tests/data/importers/codeforces_build.jsonl``, the exact schema of
MatrixStudio/Codeforces-Python-Submissions) holds three problems: 9101A with two wrong
submissions and two OK ones (one close to the first wrong one, one a rewrite), 9101B
with no OK submission (the sim stand-in cannot aim anywhere), 9102A with a near miss
and a program that always prints YES, and one malformed row (``code`` is a number).
Everything runs in the real sandbox; the sim model stands in for the LLM, and the
local fault server for a real endpoint that fails.
"""

from __future__ import annotations

import argparse
import shutil
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

from pairbench_async.cli.build_dataset import add_build_parser, run_build
from pairbench_async.core.errors import ResumeMismatch, StoreError
from pairbench_async.core.types import Completion, Message, Usage
from pairbench_async.datasets.build import build_dataset
from pairbench_async.datasets.build_repair import MODEL_ERROR, NO_TARGET
from pairbench_async.datasets.build_workdir import (
    BuildParams,
    RepairTurn,
    SubmissionDone,
    read_log,
)
from pairbench_async.datasets.files import read_instances
from pairbench_async.datasets.importers import ImportOptions
from pairbench_async.sandbox.pool import SandboxPool
from tests.integration.fault_server import FaultServer

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "importers" / "codeforces_build.jsonl"


@pytest.fixture
async def pool() -> AsyncIterator[SandboxPool]:
    async with SandboxPool(workers=2) as p:
        yield p


def params(tmp_path: Path, **kw: Any) -> BuildParams:
    base: dict[str, Any] = dict(sources=[str(SAMPLE)], out=str(tmp_path / "out.jsonl"),
                                model="sim:0.8", turns=4, concurrency=4,
                                options=ImportOptions(workers=2, skip_invalid=True))
    base.update(kw)
    return BuildParams(**base)


def log_of(p: BuildParams) -> list[Any]:
    return read_log(p.work_dir)[0]


async def test_sim_build_repairs_and_every_reference_passes(tmp_path: Path,
                                                          pool: SandboxPool) -> None:
    p = params(tmp_path)
    report = await build_dataset(p, pool=pool)
    # every row accounted for: built, skipped for a reason, or an OK submission
    assert report.rows == 9
    assert report.imported + sum(report.skipped.values()) + 3 == report.rows
    assert report.skipped[NO_TARGET] == 1 and report.malformed == 1
    assert f"{SAMPLE}:6: field 'code'" in "\n".join(report.problems)
    built = read_instances(p.out).instances
    assert len(built) == report.imported >= 2
    rows = [msgspec.json.decode(line) for line in SAMPLE.read_bytes().splitlines()]
    wrong = {r["code"] for r in rows if r["verdict"] == "WRONG_ANSWER"}
    oks = {r["code"] for r in rows if r["verdict"] == "OK"}
    for inst in built:
        assert inst.buggy in wrong  # the submission itself is the buggy program
        assert inst.meta["reference_origin"] == "repair"
        assert inst.meta["repair_model"] == "sim:0.8" and inst.meta["repair_turns"] >= 1
        # the reference is the last repaired program and passes every hidden test for real
        results = await pool.run(inst.program(inst.reference), inst.tests, inst.limits,
                                 checker=inst.checker)
        assert all(r.passed for r in results)
        buggy = await pool.run(inst.program(inst.buggy), inst.tests, inst.limits,
                               checker=inst.checker)
        assert not all(r.passed for r in buggy)
    # the sim aims at the most similar OK submission; the reference is what passed
    assert any(inst.reference in oks for inst in built)
    # the log: turn 0 of every candidate, consecutive turns, one end per submission
    records = log_of(p)
    turns = [(r.id, r.turn) for r in records if isinstance(r, RepairTurn)]
    assert len(turns) == len(set(turns))
    ends = [r.id for r in records if isinstance(r, SubmissionDone)]
    assert len(ends) == len(set(ends)) == report.counts["candidates (after the static filters)"]
    assert {r.id for r in records if isinstance(r, RepairTurn) and r.turn == 0} == set(ends)
    repairs = [r for r in records if isinstance(r, RepairTurn) and r.turn > 0]
    assert repairs and all(r.call is not None and r.call.usage.completion_tokens > 0
                           for r in repairs)


async def test_resume_from_any_point_writes_the_same_bytes(tmp_path: Path,
                                                          pool: SandboxPool) -> None:
    whole = params(tmp_path / "whole")
    (tmp_path / "whole").mkdir()
    await build_dataset(whole, pool=pool)
    expected = Path(whole.out).read_bytes()
    log = (whole.work_dir / "records.jsonl").read_bytes()
    lines = log.splitlines(keepends=True)
    assert len(lines) >= 10
    # a cut after every record, and torn lines inside a few of them
    cuts = [sum(len(x) for x in lines[:k]) for k in range(len(lines))]
    cuts += [cuts[k] + len(lines[k]) // 2 for k in (0, len(lines) // 2, len(lines) - 1)]
    for i, cut in enumerate(sorted(cuts)):
        d = tmp_path / f"cut{i}"
        d.mkdir()
        p = params(d, resume=True)
        shutil.copytree(whole.work_dir, p.work_dir)
        (p.work_dir / "records.jsonl").write_bytes(log[:cut])
        await build_dataset(p, pool=pool)
        assert Path(p.out).read_bytes() == expected, f"resumed after {cut} bytes"
        records = log_of(p)
        turns = [(r.id, r.turn) for r in records if isinstance(r, RepairTurn)]
        assert len(turns) == len(set(turns)), "a turn was recorded twice"
        # resuming a finished build runs nothing and writes the same file again
        before = (p.work_dir / "records.jsonl").read_bytes()
        if i == 0:
            await build_dataset(p, pool=pool)
            assert (p.work_dir / "records.jsonl").read_bytes() == before
            assert Path(p.out).read_bytes() == expected


async def test_resume_refuses_other_parameters_and_a_fresh_build_refuses_old_work(
        tmp_path: Path, pool: SandboxPool) -> None:
    p = params(tmp_path)
    await build_dataset(p, pool=pool)
    with pytest.raises(StoreError, match="--resume"):
        await build_dataset(p, pool=pool)
    for named, change in (("turns", {"turns": 5}), ("model", {"model": "sim:0.5"}),
                          ("seed", {"seed": 1}),
                          ("filters", {"options": ImportOptions(workers=2, loc=(1, 50))})):
        with pytest.raises(ResumeMismatch, match=named):
            await build_dataset(params(tmp_path, resume=True, **change), pool=pool)
    # what is not a parameter of the result may change: workers, concurrency
    await build_dataset(params(tmp_path, resume=True, concurrency=1,
                               options=ImportOptions(workers=1, skip_invalid=True)), pool=pool)
    # the other source content is refused too, whatever its path
    other = tmp_path / "other.jsonl"
    other.write_bytes(SAMPLE.read_bytes().splitlines(keepends=True)[0])
    with pytest.raises(ResumeMismatch, match="sources_hash"):
        await build_dataset(params(tmp_path, resume=True, sources=[str(other)]), pool=pool)


class ScriptedModel:
    """A stand-in endpoint: answers with a fixed program and keeps every prompt."""

    name = "scripted"

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.prompts: list[Sequence[Message]] = []

    async def complete(self, messages: Sequence[Message], **_: Any) -> Completion:
        self.prompts.append(messages)
        return Completion(text=self.answer, model="scripted",
                          usage=Usage(prompt_tokens=10, completion_tokens=5))

    async def aclose(self) -> None:
        return None


async def test_a_real_model_sees_the_failing_tests_and_its_fix_becomes_the_reference(
        tmp_path: Path, pool: SandboxPool) -> None:
    fixed = ("a, b, c = sorted(map(int, input().split()))\n"
             "print('YES' if a + b > c else 'NO')\n")
    model = ScriptedModel(f"Here it is:\n```python\n{fixed}```\n")
    p = params(tmp_path, model="openai:scripted", sources=[str(SAMPLE)], turns=2)
    report = await build_dataset(p, pool=pool, model=model)
    built = {i.buggy: i for i in read_instances(p.out).instances}
    # the two 9102A submissions are repaired by the answer; the others fail with it
    triangle = [i for i in built.values() if i.id.startswith("cf9102A")]
    assert len(triangle) == 2 and all(i.reference == fixed for i in triangle)
    assert all(i.meta["repair_turns"] == 1 for i in triangle)
    assert report.skipped.get("repair failed after 2 turns") == 3
    # what the model saw: the statement, the program, a failing test with its expected
    # output and the program's own output
    first = next(m for m in model.prompts if "print(\"YES\")" in m[-1].content)
    text = first[-1].content
    assert "Three sticks have lengths" in text and "## Failing tests" in text
    assert "Expected output:\n```\nNO\n```" in text
    assert "The program's output:\n```\nYES\n```" in text
    assert "```python\na, b, c = map(int, input().split())\nprint(\"YES\")\n```" in text


async def test_model_errors_are_recorded_and_retried_on_resume(
        tmp_path: Path, pool: SandboxPool, fault_server: FaultServer) -> None:
    spec = f"openai:broken@{fault_server.base_url('503,k=4')}"
    cfg = tmp_path / "models.toml"
    cfg.write_text(f'[models."{spec}"]\nmax_retries = 0\napi_key_env = "PB_UNSET_KEY"\n')
    p = params(tmp_path, model=spec, config=str(cfg), turns=1, concurrency=1)
    report = await build_dataset(p, pool=pool)
    # the first 4 requests fail: those submissions end as recorded model errors
    assert report.skipped[MODEL_ERROR] == 4 and report.imported == 0
    assert report.skipped["repair failed after 1 turn"] == 1  # the 5th got an answer
    errors = [r for r in log_of(p) if isinstance(r, SubmissionDone) and r.status == "error"]
    assert len(errors) == 4 and all("503" in (e.detail or "") for e in errors)
    # the endpoint has recovered (it echoes the prompt, so the program stays as it was):
    # resume retries exactly the errored submissions, which now end as failed repairs
    requests = fault_server.count()
    report = await build_dataset(params(tmp_path, model=spec, config=str(cfg), turns=1,
                                        concurrency=1, resume=True), pool=pool)
    assert fault_server.count() - requests == 4
    assert MODEL_ERROR not in report.skipped
    assert report.skipped["repair failed after 1 turn"] == 5


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="pairbench")
    add_build_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["build-dataset", *argv])


async def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "b.jsonl"
    common = (str(SAMPLE), "--out", str(out), "--model", "sim:0.8", "--workers", "2")
    # the malformed row is listed and the rest built, exit 2 ...
    assert await run_build(parse(*common)) == 2
    printed = capsys.readouterr()
    assert f"malformed: {SAMPLE}:6: field 'code'" in printed.out
    assert "--skip-invalid" in printed.err and out.exists()
    # ... a second build into the same work directory needs --resume ...
    assert await run_build(parse(*common, "--skip-invalid")) == 2
    assert "--resume" in capsys.readouterr().err
    # ... which finishes with exit 0 and the same instances
    before = out.read_bytes()
    assert await run_build(parse(*common, "--skip-invalid", "--resume", "--json")) == 0
    report = msgspec.json.decode(capsys.readouterr().out)
    assert report["imported"] == len(read_instances(out).instances) and out.read_bytes() == before
    # other turns: refused, naming the difference
    assert await run_build(parse(*common, "--resume", "--turns", "9")) == 2
    assert "turns" in capsys.readouterr().err
    # a model that cannot repair anything
    assert await run_build(parse(str(SAMPLE), "--out", str(tmp_path / "c.jsonl"),
                                 "--model", "rules")) == 2
    assert "candidate model" in capsys.readouterr().err
