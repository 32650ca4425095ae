"""The leakage validator's LLM judge in a real sweep (an embedder's client standing in for the
model) and ``validate-hints --validator-model`` against a judge served on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from pairbench_async.core.errors import StoreError
from pairbench_async.core.types import Completion, Message, Usage
from pairbench_async.datasets.files import load_dataset
from pairbench_async.report.cost import token_rows
from pairbench_async.runlog.records import TurnRecord
from pairbench_async.runlog.store import read_manifest, read_records
from pairbench_async.runner.evaluator import Evaluator, RunConfig
from pairbench_async.sandbox.traces import TraceCache

FEW = load_dataset().instances[:3]
ROOT = Path(__file__).resolve().parents[2]


class ScriptedJudge:
    """Rejects every L1 hint (boundary ``state``), answers L2 hints with prose it cannot parse,
    accepts the rest."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def complete(self, messages: Sequence[Message], **kw: Any) -> Completion:
        user = messages[-1].content
        self.asked.append(user)
        if "written for level L1 " in user:
            text = '{"verdict": "reject", "boundary": "state", "reason": "scripted rejection"}'
        elif "written for level L2 " in user:
            text = "Hmm, hard to say."
        else:
            text = '{"verdict": "accept", "boundary": "none", "reason": "fine"}'
        return Completion(text=text, model="scripted-judge", usage=Usage(prompt_tokens=100, completion_tokens=10))

    async def aclose(self) -> None:
        return None


async def test_a_sweep_with_a_judge_records_every_verdict_and_call(tmp_path: Path) -> None:
    judge = ScriptedJudge()
    config = RunConfig(candidates=["sim:0.2"], feedback="rules", validator="judge", turns=4, hint_budget=2)
    async with Evaluator(config, models={"judge": judge}, out_dir=tmp_path / "run",
                         trace_cache=TraceCache(tmp_path / "tc")) as ev:
        records = [r async for r in ev.run(FEW)]
    assert read_manifest(tmp_path / "run").validator == "judge"  # type: ignore[union-attr]
    hinted = [r for r in records if isinstance(r, TurnRecord) and r.hint is not None]
    by_level = {r.hint_level for r in hinted}
    assert {1, 2} <= by_level
    for rec in hinted:
        attempts = rec.hint.attempts  # type: ignore[union-attr]
        validator_calls = [c for c in rec.calls if c.role == "validator"]
        judged = [a for a in attempts if a.judge is not None]
        # one validator call per judged attempt, every verdict kept with its attempt
        assert len(validator_calls) == len(judged) >= 1
        if rec.hint_level == 1:
            # every L1 draft the rules accepted was rejected by the judge: budget 2, then the fallback
            assert rec.hint.fallback and len(attempts) == 2  # type: ignore[union-attr]
            assert all(a.judge.verdict == "reject" for a in judged)  # type: ignore[union-attr]
            assert all(a.reasons == ("judge: state: scripted rejection",) for a in judged)
        elif rec.hint_level == 2:
            # a reply the parser cannot read: recorded as malformed, the rules' acceptance stands
            assert not rec.hint.fallback and judged[-1].judge.verdict == "malformed"  # type: ignore[union-attr]
            assert judged[-1].judge.reason == "Hmm, hard to say."  # type: ignore[union-attr]
    # the judge's tokens are a row of their own in the token table, priced as the validator spec
    rows = [r for r in token_rows(records, ["pair"], feedback="rules", validator="judge") if r.role == "validator"]
    assert len(rows) == 1 and rows[0].spec == "judge" and rows[0].calls == len(judge.asked)
    assert rows[0].prompt_tokens == 100 * len(judge.asked)
    # the validator is part of what a resume must match
    with pytest.raises(StoreError, match="validator"):
        async with Evaluator(RunConfig(candidates=["sim:0.2"], feedback="rules", turns=4, hint_budget=2),
                             out_dir=tmp_path / "run", resume=True,
                             trace_cache=TraceCache(tmp_path / "tc")) as ev:
            [r async for r in ev.run(FEW)]
    assert len(read_records(tmp_path / "run")[0]) == len(records)


async def test_validate_hints_measures_a_judge_served_on_localhost(tmp_path: Path) -> None:
    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        user = body["messages"][-1]["content"]
        hint = user.split("<<<\n", 1)[1].split("\n>>>", 1)[0]
        if "Pseudocode" in hint or "```" in hint:
            text = '{"verdict": "reject", "boundary": "code", "reason": "code"}'
        elif "sorry" in hint:
            text = "no idea"
        else:
            text = '{"verdict": "accept", "boundary": "none", "reason": "ok"}'
        return web.json_response({"id": "x", "object": "chat.completion", "model": "local-judge",
                                  "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                               "finish_reason": "stop"}],
                                  "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    tasks = {"kind": "task", "id": "t", "problem": "Print the sum of the numbers.", "program": "print(0)\n"}
    rows = [tasks,
            {"kind": "hint", "id": "a", "task": "t", "level": 6, "text": "Pseudocode: add them up.",
             "broken": ["code"]},
            {"kind": "hint", "id": "b", "task": "t", "level": 6, "text": "```\nprint(sum(a))\n```",
             "broken": ["code"]},
            {"kind": "hint", "id": "c", "task": "t", "level": 1, "text": "The printed sum is too small."},
            {"kind": "hint", "id": "d", "task": "t", "level": 1, "text": "The output is wrong, sorry."}]
    path = tmp_path / "set.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    try:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "pairbench_async", "validate-hints", str(path), "--json",
            "--validator-model", f"openai:local-judge@http://127.0.0.1:{port}/v1", cwd=ROOT,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 120)
    finally:
        await runner.cleanup()
    assert proc.returncode == 0, err.decode()
    data = json.loads(out)
    judge = {s["name"]: s for s in data["results"]["judge openai:local-judge@http://127.0.0.1:%d/v1" % port]}
    # two code hints, both rejected as code; two clean hints, one accepted, one malformed (accept):
    # code TP=2 FP=0 FN=0 -> precision 2/2 = 1.0, recall 2/2 = 1.0; overall the same
    assert (judge["code"]["tp"], judge["code"]["fp"], judge["code"]["fn"]) == (2, 0, 0)
    assert judge["overall"]["precision"] == 1.0 and judge["overall"]["recall"] == 1.0
    assert data["judge"]["malformed"] == 1 and data["judge"]["calls"] == 4
    assert data["judge"]["verdicts"]["d"]["verdict"] == "malformed"
