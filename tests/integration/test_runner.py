"""The runner end to end: real sandbox, real HTTP against a misbehaving server, offline models."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import anyio
import msgspec

from pairbench_async.core.types import Completion, Instance, Message, Test, Usage
from pairbench_async.datasets.files import load_dataset
from pairbench_async.report.leaderboard import leaderboard, leaderboard_json
from pairbench_async.runlog.records import EpisodeRecord, TurnRecord
from pairbench_async.runlog.store import read_records
from pairbench_async.runner.evaluator import Evaluator, RunConfig
from pairbench_async.sandbox.pool import SandboxPool
from pairbench_async.sandbox.traces import TraceCache
from tests.integration.fault_server import FaultServer

FEW = load_dataset().instances[:4]


def _by_episode(records: list[object]) -> tuple[dict[str, list[TurnRecord]], dict[str, EpisodeRecord]]:
    turns: dict[str, list[TurnRecord]] = {}
    ends: dict[str, EpisodeRecord] = {}
    for r in records:
        if isinstance(r, TurnRecord):
            turns.setdefault(r.episode_id, []).append(r)
        else:
            ends[r.episode_id] = r  # type: ignore[assignment,union-attr]
    return turns, ends


async def test_every_episode_ends_recorded_against_a_misbehaving_endpoint(
        fault_server: FaultServer, tmp_path: Path) -> None:
    flaky = f"openai:flaky@{fault_server.base_url('503,k=3')}"
    broken = f"openai:broken@{fault_server.base_url('500')}"
    cfg = tmp_path / "models.toml"
    cfg.write_text(f'[defaults]\nbackoff_base = 0.01\nbackoff_max = 0.05\nmax_retries = 4\napi_key_env = "PB_TEST_KEY"\n'
                   f'[models."{broken}"]\nmax_retries = 1\nbackoff_base = 0.01\n')
    config = RunConfig(candidates=[flaky, broken], feedback="rules", turns=2, concurrency=8,
                       model_config=str(cfg))
    async with Evaluator(config, out_dir=tmp_path / "run", trace_cache=TraceCache(tmp_path / "tc")) as ev:
        seen = [r async for r in ev.run(FEW)]
    records, _ = read_records(tmp_path / "run")
    assert len(records) == len(seen)
    turns, ends = _by_episode(records)
    assert len(ends) == 2 * len(FEW)
    for eid, end in ends.items():
        if "/openai:broken@" in eid:
            assert end.status == "error" and "TransientError" in (end.error or "")
        else:
            assert end.status == "done", end.error
            assert turns[eid][0].calls[0].usage.total_tokens > 0
    assert fault_server.count("503,k=3") >= 3
    board = leaderboard(records)
    assert board.errored == len(FEW) and board.episodes == len(FEW)


class Recorder:
    """A candidate that records every message it is given and never changes the program."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def complete(self, messages: list[Message], **_: object) -> Completion:
        self.seen.extend(m.content for m in messages)
        return Completion(text="I could not find the bug.", model="recorder", usage=Usage(1, 1))

    async def aclose(self) -> None:
        return None


async def test_hidden_tests_never_reach_the_candidate_in_a_real_sweep(tmp_path: Path) -> None:
    canary = "CANARY7f3a"
    inst = Instance(
        id="canary", kind="stdio", time_limit=1.0, memory_limit_mb=64,
        problem="Read a word and print it followed by its length.",
        buggy="w = input()\nprint(w, len(w) + 1)\n",
        reference=f"# {canary} reference\nw = input()\nprint(w, len(w))\n",
        tests=[Test(id=str(i), input=f"{canary}{'x' * i}\n", output=f"{canary}{'x' * i} {10 + i}\n")
               for i in range(12)],
    )
    rec = Recorder()
    config = RunConfig(candidates=["recorder"], feedback="rules", turns=6)
    async with Evaluator(config, models={"recorder": rec}, out_dir=tmp_path / "run",
                         trace_cache=TraceCache(tmp_path / "tc")) as ev:
        records = [r async for r in ev.run([inst])]
    hinted = [r for r in records if isinstance(r, TurnRecord) and r.hint is not None]
    assert len(hinted) >= 3 and {r.hint_level for r in hinted} >= {1, 2, 3}
    assert rec.seen and not any(canary in text for text in rec.seen)


async def test_two_evaluators_share_one_loop_and_one_pool(tmp_path: Path) -> None:
    config = RunConfig(candidates=["sim:0.6"], feedback="rules", turns=3, concurrency=4)
    async with SandboxPool(workers=2) as pool:
        async def one(name: str) -> list[object]:
            async with Evaluator(config, out_dir=tmp_path / name, sandbox=pool,
                                 trace_cache=TraceCache(tmp_path / f"tc-{name}")) as ev:
                return [r async for r in ev.run(FEW)]

        a, b = await asyncio.gather(one("a"), one("b"))
    def strip(rs: list[object]) -> list[object]:  # drop what is timing, not behaviour
        out = []
        for r in rs:
            r = msgspec.structs.replace(r, run_id="")
            if isinstance(r, TurnRecord):
                r = msgspec.structs.replace(r, sandbox_ms=0.0, calls=[msgspec.structs.replace(c, latency_ms=0.0)
                                                                       for c in r.calls])
            out.append(r)
        return out

    key = lambda r: (r.episode_id, getattr(r, "turn", 99))  # noqa: E731
    assert sorted(strip(a), key=key) == sorted(strip(b), key=key)
    assert leaderboard_json(leaderboard(read_records(tmp_path / "a")[0])) == \
        leaderboard_json(leaderboard(read_records(tmp_path / "b")[0]))


def test_evaluator_runs_under_anyio(tmp_path: Path) -> None:
    async def main() -> int:
        config = RunConfig(candidates=["sim:1.0"], feedback="rules", turns=2, protocols=["pair", "nohint"])
        async with Evaluator(config, trace_cache=TraceCache(tmp_path / "tc")) as ev:
            return sum([isinstance(r, EpisodeRecord) async for r in ev.run(FEW[:2])])

    assert anyio.run(main, backend="asyncio") == 4


def test_cli_run_and_report_agree(tmp_path: Path) -> None:
    out = tmp_path / "run"
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-m", "pairbench_async", "--limit", "6", "--turns", "3",
                           "--out", str(out), "--no-progress"], capture_output=True, text=True, timeout=300,
                          env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "FinalFix" in proc.stdout and "sim:0.3" in proc.stdout and "sim:0.8" in proc.stdout
    rep = subprocess.run([sys.executable, "-m", "pairbench_async", "report", str(out), "--json"],
                         capture_output=True, text=True, timeout=60, env=env)
    assert rep.returncode == 0, rep.stderr
    data = json.loads(rep.stdout)
    assert set(data["models"]) == {"sim:0.3", "sim:0.8"}
    assert set(data["models"]["sim:0.8"]) >= {"InitialFix", "TRS", "BRG", "BP", "PMR", "HE", "GC", "FinalFix",
                                              "TurnsToFix", "HCC", "RepairRate", "PreservationRate"}
    again = subprocess.run([sys.executable, "-m", "pairbench_async", "--limit", "6", "--out", str(out)],
                           capture_output=True, text=True, timeout=60, env=env)
    assert again.returncode == 2 and "--resume" in again.stderr
    other = subprocess.run([sys.executable, "-m", "pairbench_async", "--limit", "6", "--turns", "4",
                            "--out", str(out), "--resume", "--no-progress"],
                           capture_output=True, text=True, timeout=60, env=env)
    assert other.returncode == 2 and "turns" in other.stderr


def test_sweep_runs_every_grid_point(tmp_path: Path) -> None:
    from pairbench_async.cli.run import parse_sweep

    assert parse_sweep(["turns=1,2", "scenario-turns=2,3"]) == [
        {"turns": 1, "scenario-turns": 2}, {"turns": 1, "scenario-turns": 3},
        {"turns": 2, "scenario-turns": 2}, {"turns": 2, "scenario-turns": 3}]
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-m", "pairbench_async", "--limit", "2", "--candidate", "sim:0.5",
                           "--sweep", "turns=1,2", "--out", str(tmp_path / "grid"), "--no-progress"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for turns in (1, 2):
        manifest = json.loads((tmp_path / "grid" / f"turns={turns}" / "manifest.json").read_text())
        assert manifest["params"]["turns"] == turns
    bad = subprocess.run([sys.executable, "-m", "pairbench_async", "--sweep", "colour=1"],
                         capture_output=True, text=True, timeout=60, env=env)
    assert bad.returncode == 2 and "KEY=V1,V2" in bad.stderr
