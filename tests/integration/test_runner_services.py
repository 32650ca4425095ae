"""What the evaluator does for its episodes, tested through the public API: each distinct
program runs once per test suite (the cache), episodes that reach a program while it runs
wait for that one run (the de-duplication), the sandbox's own failures are never cached,
and an episode resumed after its recorded turns continues exactly where they end.

The sandbox is a counting stand-in that implements the public ``Sandbox`` protocol, and
the candidates are model objects of the embedder's kind (``ModelClient``), so that every
sandbox run and every call is seen. Synchronisation is by events, never by sleeps.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import pytest

from pairbench_async import (
    Checker,
    Completion,
    EpisodeRecord,
    Evaluator,
    Limits,
    Message,
    Program,
    RunConfig,
    Sandbox,
    SandboxError,
    Test,
    TestResult,
    TurnRecord,
    Usage,
    Verdict,
)
from pairbench_async.datasets.files import load_dataset
from pairbench_async.protocol.leakage import ValidationPolicy, hidden_data
from pairbench_async.protocol.policy import PolicyConfig
from pairbench_async.protocol.prompts import fenced
from pairbench_async.runner.episode import EpisodeEnv, EpisodeSpec, run_episode
from pairbench_async.sandbox.interface import SandboxStatistics

INSTANCE = load_dataset().instances[0]
FIXED = "# fixed\n" + INSTANCE.reference


class CountingSandbox:
    """Runs nothing: a program passes every test if it is the reference (or ``FIXED``),
    else the first test only. Every run is kept; ``gate`` (if set) holds runs back."""

    def __init__(self, *, faults: int = 0, raises: int = 0) -> None:
        self.runs: list[str] = []
        self.gate: asyncio.Event | None = None
        self.faults = faults  # the next runs that answer SF on every test
        self.raises = raises  # the next runs that raise SandboxError

    @property
    def workers(self) -> int:
        return 1

    async def start(self) -> None:
        return None

    async def aclose(self) -> None:
        return None

    def statistics(self) -> SandboxStatistics:
        return SandboxStatistics(workers=1, jobs_done=len(self.runs), jobs_waiting=0, tests_run=0,
                                 worker_restarts=0, sandbox_faults=0)

    def confinement(self) -> dict[str, Any]:
        return {}

    async def run(self, program: Program, tests: Sequence[Test], limits: Limits = Limits(), *,
                  checker: Checker = Checker(), trace: bool = False) -> list[TestResult]:
        if trace:  # the reference's line traces: not a program's evaluation
            return [TestResult(id=t.id, verdict=Verdict.AC, trace=[1]) for t in tests]
        self.runs.append(program.source)
        if self.gate is not None:
            await self.gate.wait()
        if self.raises:
            self.raises -= 1
            raise SandboxError("the stand-in sandbox is down")
        if self.faults:
            self.faults -= 1
            return [TestResult(id=t.id, verdict=Verdict.SF, error="stand-in fault") for t in tests]
        good = program.source in (INSTANCE.reference, FIXED)
        return [TestResult(id=t.id, verdict=Verdict.AC if good or i == 0 else Verdict.WA)
                for i, t in enumerate(tests)]


class Answering:
    """A candidate that always answers with the same program; ``answered`` fires once it
    has answered ``after`` times."""

    def __init__(self, name: str, program: str, after: int = 1) -> None:
        self.name, self.program = name, program
        self.calls: list[Sequence[Message]] = []
        self.answered = asyncio.Event()
        self.after = after

    async def complete(self, messages: Sequence[Message], *, temperature: float | None = None,
                       max_tokens: int | None = None, seed: int | None = None) -> Completion:
        self.calls.append(messages)
        if len(self.calls) >= self.after:
            self.answered.set()
        return Completion(text=fenced(self.program), model=self.name, usage=Usage(1, 1))


def _turns(records: list[Any]) -> list[TurnRecord]:
    return sorted((r for r in records if isinstance(r, TurnRecord)), key=lambda r: (r.episode_id, r.turn))


async def _run(config: RunConfig, sandbox: Sandbox, tmp_path: Path) -> list[Any]:
    async with Evaluator(config, out_dir=tmp_path / "run", sandbox=sandbox) as ev:
        return [r async for r in ev.run([INSTANCE])]


async def test_a_program_runs_once_per_test_suite(tmp_path: Path) -> None:
    sandbox = CountingSandbox()
    same = [Answering("a", INSTANCE.buggy), Answering("b", INSTANCE.buggy)]
    records = await _run(RunConfig(candidates=same, protocols=["nohint"], turns=3, concurrency=1),
                         sandbox, tmp_path)
    turns = _turns(records)
    assert len(turns) == 2 * 4 and all(t.program == INSTANCE.buggy for t in turns)
    assert sandbox.runs == [INSTANCE.buggy]  # 8 evaluations, 1 run
    assert sum(t.sandbox_ms > 0 for t in turns) == 1


async def test_another_suite_runs_the_same_program_again(tmp_path: Path) -> None:
    sandbox = CountingSandbox()
    other = msgspec.structs.replace(INSTANCE, id=INSTANCE.id + "-other", tests=INSTANCE.tests[:3])
    config = RunConfig(candidates=[Answering("a", INSTANCE.buggy)], protocols=["nohint"], turns=1)
    async with Evaluator(config, out_dir=tmp_path / "run", sandbox=sandbox) as ev:
        records = [r async for r in ev.run([INSTANCE, other])]
    assert sandbox.runs == [INSTANCE.buggy, INSTANCE.buggy]
    by_instance = {t.instance_id: t for t in _turns(records) if t.turn == 0}
    assert len(by_instance[other.id].passed) + len(by_instance[other.id].failed) == 3


def _hold_runs_until_both_answered(sandbox: CountingSandbox, a: Answering, b: Answering) -> asyncio.Task[None]:
    """Hold the sandbox's runs until both candidates have answered: the second episode then
    reaches the program while the first one's run of it is in flight."""
    gate = sandbox.gate = asyncio.Event()

    async def release() -> None:
        await a.answered.wait()
        await b.answered.wait()
        gate.set()

    return asyncio.create_task(release())


async def test_episodes_that_reach_a_running_program_wait_for_that_run(tmp_path: Path) -> None:
    sandbox = CountingSandbox()
    a, b = Answering("a", FIXED), Answering("b", FIXED)
    releaser = _hold_runs_until_both_answered(sandbox, a, b)
    records = await _run(RunConfig(candidates=[a, b], protocols=["nohint"], turns=2, concurrency=2),
                         sandbox, tmp_path)
    await releaser
    assert sandbox.runs == [FIXED]  # the second episode waited for the first one's run
    first = [t for t in _turns(records) if t.turn == 0]
    assert len(first) == 2 and all(t.pass_rate == 1.0 for t in first)
    assert sorted(t.sandbox_ms > 0 for t in first) == [False, True]
    ends = [r for r in records if isinstance(r, EpisodeRecord)]
    assert [e.stop_reason for e in ends] == ["all_pass", "all_pass"]


async def test_the_sandboxs_own_faults_are_never_cached(tmp_path: Path) -> None:
    sandbox = CountingSandbox(faults=1)
    config = RunConfig(candidates=[Answering("a", INSTANCE.buggy)], protocols=["nohint"], turns=2)
    records = await _run(config, sandbox, tmp_path)
    turns = _turns(records)
    assert turns[0].verdicts == {"SF": len(INSTANCE.tests)}
    assert turns[1].verdicts != turns[0].verdicts  # run again, not served from the cache
    assert sandbox.runs == [INSTANCE.buggy, INSTANCE.buggy]


async def test_a_failed_run_fails_every_waiting_episode_and_is_tried_again(tmp_path: Path) -> None:
    sandbox = CountingSandbox(raises=1)
    a, b = Answering("a", FIXED), Answering("b", FIXED)
    releaser = _hold_runs_until_both_answered(sandbox, a, b)
    records = await _run(RunConfig(candidates=[a, b], protocols=["nohint"], turns=1, concurrency=2),
                         sandbox, tmp_path)
    await releaser
    ends = [r for r in records if isinstance(r, EpisodeRecord)]
    assert [e.status for e in ends] == ["error", "error"]
    assert all("the stand-in sandbox is down" in (e.error or "") for e in ends)
    assert sandbox.runs == [FIXED]  # one run, both episodes saw its failure
    # nothing of the failure was kept: the next evaluation runs the program
    again = await _run(RunConfig(candidates=[Answering("c", FIXED)], protocols=["nohint"], turns=1),
                       sandbox, tmp_path / "again")
    assert sandbox.runs == [FIXED, FIXED]
    assert [r.status for r in again if isinstance(r, EpisodeRecord)] == ["done"]


# --------------------------------------------------------------------------- resume


def _env(sandbox: CountingSandbox, emitted: list[Any], baselines: str = "paper") -> EpisodeEnv:
    async def evaluate(instance: Any, program: str) -> tuple[dict[str, TestResult], float]:
        results = await sandbox.run(instance.program(program), instance.tests, instance.limits)
        return {r.id: r for r in results}, 1.0

    async def traces(instance: Any) -> dict[str, list[int]]:
        return {}

    async def emit(record: Any) -> None:
        emitted.append(record)

    async def lint(program: str) -> str:
        return ""

    async def view(instance: Any) -> Any:
        return instance

    return EpisodeEnv(evaluate=evaluate, traces=traces, shapes=lambda i: {}, hidden=hidden_data, emit=emit,
                      lint=lint, view=view, policy=PolicyConfig(turns=4), validation=ValidationPolicy(),
                      baselines=baselines)


@pytest.mark.parametrize("baselines", ["paper", "pairbench"])
@pytest.mark.parametrize("protocol", ["nohint", "simple"])
async def test_a_resumed_episode_continues_after_its_recorded_turns(protocol: str, baselines: str) -> None:
    spec = EpisodeSpec(run_id="r", episode_id=f"{protocol}/x/r0/{INSTANCE.id}", instance_id=INSTANCE.id,
                       model="x", feedback="rules", protocol=protocol, run=0, seed=7)
    # the straight episode: the candidate keeps the buggy program twice, then fixes it
    straight: list[Any] = []
    keeps = Answering("x", INSTANCE.buggy)
    await run_episode(spec, INSTANCE, keeps, None, _env(CountingSandbox(), straight, baselines))
    assert [r.turn for r in straight if isinstance(r, TurnRecord)] == [0, 1, 2, 3, 4]
    # an interruption after turn 2: resume with the first three records
    prior = [r for r in straight if isinstance(r, TurnRecord)][:3]
    sandbox, resumed = CountingSandbox(), []
    fixer = Answering("x", FIXED)
    end = await run_episode(spec, INSTANCE, fixer, None, _env(sandbox, resumed, baselines), prior)
    turns = [r for r in resumed if isinstance(r, TurnRecord)]
    assert [r.turn for r in turns] == [3]  # numbering continues; nothing recorded twice
    assert sandbox.runs[0] == prior[-1].program  # the last recorded program, run again first
    assert turns[0].program == FIXED and turns[0].pass_rate == 1.0
    assert end.status == "done" and end.stop_reason == "all_pass" and end.turns == 3
    # the rates of the whole episode, recorded turns included
    assert end.initial_pass_rate == prior[0].pass_rate and end.final_pass_rate == 1.0
    prompt = "\n".join(m.content for m in fixer.calls[0])
    if protocol == "simple" and baselines == "paper":
        # FeedbackEval's Fig. 5 holds no history: the last recorded program and its feedback
        assert "Earlier turns" not in prompt and f"@@Existing Code\n```python\n{prior[-1].program.rstrip()}" in prompt
    else:  # the candidate is shown the recorded turns as its history
        assert "Earlier turns" in prompt or "turn 2" in prompt.lower()


# --------------------------------------------------------------------------- turn 0, shared


class Drifting:
    """A candidate whose every answer differs (an API that does not honour the seed)."""

    name = "drifting"

    def __init__(self) -> None:
        self.first_calls = 0
        self.calls = 0

    async def complete(self, messages: Sequence[Message], *, temperature: float | None = None,
                       max_tokens: int | None = None, seed: int | None = None) -> Completion:
        self.calls += 1
        self.first_calls += "## Program" in messages[-1].content  # turn 0's prompt
        return Completion(text=fenced(f"# answer {self.calls}\n" + INSTANCE.buggy), model=self.name,
                          usage=Usage(1, 1))


async def test_every_unhinted_protocol_starts_from_one_shared_repair(tmp_path: Path) -> None:
    drifting = Drifting()
    config = RunConfig(candidates=[drifting], protocols=["pair", "nohint", "vanilla", "simple"], turns=1,
                       concurrency=4)
    records = await _run(config, CountingSandbox(), tmp_path)
    first = {t.protocol: t for t in _turns(records) if t.turn == 0}
    assert drifting.first_calls == 1  # one turn-0 call for three unhinted protocols
    unhinted = [first[p] for p in ("pair", "nohint", "vanilla")]
    assert len({t.program for t in unhinted}) == 1
    owner = [t for t in unhinted if t.shared_from is None]
    assert len(owner) == 1 and len(owner[0].calls) == 1
    assert all(t.shared_from == owner[0].episode_id and not t.calls for t in unhinted if t is not owner[0])
    # FeedbackEval's protocols start from the erroneous program: nothing to share
    assert first["simple"].given and first["simple"].shared_from is None and first["simple"].program == INSTANCE.buggy


async def test_a_resumed_run_shares_the_recorded_repair(tmp_path: Path) -> None:
    config = RunConfig(candidates=[Drifting()], protocols=["pair", "nohint"], turns=1, concurrency=1)
    await _run(config, CountingSandbox(), tmp_path)
    records_file = tmp_path / "run" / "records.jsonl"
    lines = records_file.read_bytes().splitlines(keepends=True)
    owner_protocol = next(msgspec.json.decode(line)["protocol"] for line in lines
                          if b'"turn":0' in line and b"shared_from" not in line)
    other = "nohint" if owner_protocol == "pair" else "pair"
    # as if the run stopped before the other protocol's episode began
    records_file.write_bytes(b"".join(line for line in lines if f'"protocol":"{other}"'.encode() not in line))
    again = Drifting()
    resumed = RunConfig(candidates=[again], protocols=["pair", "nohint"], turns=1, concurrency=1)
    async with Evaluator(resumed, out_dir=tmp_path / "run", resume=True, sandbox=CountingSandbox()) as ev:
        new = [r async for r in ev.run([INSTANCE])]
    first = next(t for t in _turns(new) if t.turn == 0)
    assert first.protocol == other and first.shared_from is not None and not first.calls
    assert again.first_calls == 0  # the recorded reply was reused, not asked again
    kept = {msgspec.json.decode(line)["program"] for line in lines
            if b'"turn":0' in line and f'"protocol":"{owner_protocol}"'.encode() in line}
    assert {first.program} == kept


# --------------------------------------------------------------------------- an embedder's client


class Misbehaving:
    """A client of one's own that fails its own way: an exception of its own, or not a Completion."""

    def __init__(self, name: str, how: str) -> None:
        self.name, self.how = name, how

    async def complete(self, messages: Sequence[Message], *, temperature: float | None = None,
                       max_tokens: int | None = None, seed: int | None = None) -> Any:
        if self.how == "raise":
            raise RuntimeError("my backend is down")
        return "```python\nprint(1)\n```"  # a str, not a Completion


@pytest.mark.parametrize(("how", "said"), [
    ("raise", "ClientError: model 'Qwen/Qwen2.5-Coder-7B' raised RuntimeError: my backend is down"),
    ("str", "BadResponse: model 'Qwen/Qwen2.5-Coder-7B' returned a str, not a Completion"),
])
async def test_a_clients_own_failure_is_that_models_error(tmp_path: Path, how: str, said: str) -> None:
    # any name goes for a model object (no spec syntax), and what it does wrong is recorded
    # as its episode's error, named after it, not as an internal error of the evaluator
    config = RunConfig(candidates=[Misbehaving("Qwen/Qwen2.5-Coder-7B", how)], protocols=["nohint"], turns=1)
    records = await _run(config, CountingSandbox(), tmp_path)
    (end,) = [r for r in records if isinstance(r, EpisodeRecord)]
    assert end.status == "error" and end.error == said


async def test_leaving_the_record_stream_early_cancels_the_episodes_not_fails_them(tmp_path: Path) -> None:
    config = RunConfig(candidates=[Answering("a", INSTANCE.buggy), Answering("b", INSTANCE.buggy)],
                       protocols=["nohint"], turns=3, concurrency=2)
    async with Evaluator(config, out_dir=tmp_path / "run", sandbox=CountingSandbox()) as ev:
        async for _ in ev.run([INSTANCE]):
            break  # an embedder's consumer that stops reading
    assert ev.statistics().errors == 0
    from pairbench_async.runlog.store import read_records

    records, _ = read_records(tmp_path / "run")
    assert not [r for r in records if isinstance(r, EpisodeRecord) and r.status == "error"]


class Cancelling:
    """A client library that lets a CancelledError of its own escape (a timeout of anyio's)."""

    name = "cancelling"

    async def complete(self, messages: Sequence[Message], *, temperature: float | None = None,
                       max_tokens: int | None = None, seed: int | None = None) -> Completion:
        raise asyncio.CancelledError()


class Leaky:
    """A client whose error message carries a key."""

    name = "leaky"

    async def complete(self, messages: Sequence[Message], *, temperature: float | None = None,
                       max_tokens: int | None = None, seed: int | None = None) -> Completion:
        raise RuntimeError("401 for key sk-abcdefghijklmnop1234")


async def test_a_clients_own_cancellation_is_its_error_not_a_lost_episode(tmp_path: Path) -> None:
    config = RunConfig(candidates=[Cancelling()], protocols=["nohint"], turns=1)
    records = await _run(config, CountingSandbox(), tmp_path)
    (end,) = [r for r in records if isinstance(r, EpisodeRecord)]
    assert end.status == "error" and end.error == "ClientError: model 'cancelling' raised CancelledError"


async def test_a_key_in_a_clients_error_never_reaches_the_records(tmp_path: Path) -> None:
    config = RunConfig(candidates=[Leaky()], protocols=["nohint"], turns=1)
    await _run(config, CountingSandbox(), tmp_path)
    text = (tmp_path / "run" / "records.jsonl").read_text()
    assert "sk-abcdefghijklmnop1234" not in text and "[redacted]" in text


async def test_two_evaluators_of_one_process_are_two_writers(tmp_path: Path) -> None:
    from pairbench_async import FolderLocked

    first = Evaluator(RunConfig(candidates=[Answering("a", INSTANCE.buggy)], protocols=["nohint"], turns=1),
                      out_dir=tmp_path / "run", sandbox=CountingSandbox())
    async with first:
        stream = first.run([INSTANCE])
        await stream.__anext__()  # the folder is locked and being written
        second = Evaluator(RunConfig(candidates=[Answering("a", INSTANCE.buggy)], protocols=["nohint"], turns=1),
                           out_dir=tmp_path / "run", resume=True, sandbox=CountingSandbox())

        async def other_task() -> None:
            async with second:
                async for _ in second.run([INSTANCE]):
                    pass

        with pytest.raises(FolderLocked):
            await asyncio.create_task(other_task())
        await stream.aclose()


def test_the_sandbox_refuses_a_checker_that_is_not_one() -> None:
    from pairbench_async import ConfigError, SandboxPool

    async def go() -> None:
        async with SandboxPool(workers=1) as pool:
            await pool.run(Program(source="print(1)\n"), [Test(id="t", input="", output="1\n")],
                           checker={"mode": "exact"})  # type: ignore[arg-type]

    with pytest.raises(ConfigError, match="takes a Checker"):
        asyncio.run(go())
