"""Every model call recorded whole: the messages sent (content-addressed in the run's
``messages/``) and the raw reply, for the candidate, the feedback model (every
regeneration of a rejected draft), the validator's judge and selfcritique's critique;
and runs recorded before messages were still load, report and resume."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from pairbench_async.core.types import Completion, Message, Usage
from pairbench_async.runlog.messages import MESSAGES, read_messages, resolve
from pairbench_async.runlog.records import TurnRecord
from pairbench_async.runlog.store import read_records
from pairbench_async.runner.evaluator import Evaluator, RunConfig
from pairbench_async.sandbox.traces import TraceCache
from tests.integration.test_protocols import CANARY, INSTANCE

ROOT = Path(__file__).resolve().parents[2]


class Client:
    """A model that keeps every message list it is sent and answers from a script."""

    def __init__(self, name: str, answer: Any) -> None:
        self.name, self.answer = name, answer
        self.sent: list[tuple[tuple[str, str], ...]] = []

    async def complete(self, messages: Sequence[Message], **_: object) -> Completion:
        self.sent.append(tuple((m.role, m.content) for m in messages))
        return Completion(text=self.answer(len(self.sent)), model=self.name, usage=Usage(3, 2))

    async def aclose(self) -> None:
        return None


def _judge(n: int) -> str:  # every other draft is rejected: each turn regenerates once
    verdict = "reject" if n % 2 else "accept"
    return json.dumps({"verdict": verdict, "boundary": "state" if n % 2 else "none", "reason": f"r{n}"})


async def test_every_call_keeps_its_messages_and_raw_reply(tmp_path: Path) -> None:
    candidate = Client("cand", lambda n: f"Reply {n}.\n```python\nw = input()\nprint(w, len(w) + {n})\n```")
    feedback = Client("fb", lambda n: f"Draft {n}: look at the length you print.")
    judge = Client("judge", _judge)
    # (the rules' reading: its scripted hint, "look at the length you print", is one the rules accept and the
    # judge is then asked about; the learned reading rejects it, and no judge call would be made to record)
    config = RunConfig(candidates=["cand"], feedback="fb", validator="judge", turns=3, hint_budget=3,
                       protocols=["pair", "selfcritique"], validator_reading="rules")
    async with Evaluator(config, models={"cand": candidate, "fb": feedback, "judge": judge},
                         out_dir=tmp_path / "run", trace_cache=TraceCache(tmp_path / "tc")) as ev:
        records = [r async for r in ev.run([INSTANCE])]
    stored = read_messages(tmp_path / "run")
    calls = [c for r in records if isinstance(r, TurnRecord) for c in r.calls]
    enc = msgspec.json.Encoder()  # the stream and the file hold the same records (in their own orders)
    assert sorted(map(enc.encode, records)) == sorted(map(enc.encode, read_records(tmp_path / "run")[0]))
    by_role: dict[str, Counter[tuple[tuple[str, str], ...]]] = {}
    replies: dict[str, Counter[str]] = {}
    for call in calls:
        sent = resolve(call.messages, stored)
        assert sent is not None, f"{call.role} call without its messages"
        by_role.setdefault(call.role, Counter())[tuple((m.role, m.content) for m in sent)] += 1
        replies.setdefault(call.role, Counter())[call.text] += 1
    # exactly what each model was sent, call for call, and the reply it gave, raw
    for role, client in (("candidate", candidate), ("feedback", feedback), ("validator", judge)):
        assert by_role[role] == Counter(client.sent), role
        assert replies[role] == Counter(client.answer(n) for n in range(1, len(client.sent) + 1)), role
    # rejected drafts were regenerated, and each regeneration is a call of its own
    pair_turns = [r for r in records if isinstance(r, TurnRecord) and r.protocol == "pair" and r.hint]
    assert any(len(r.hint.attempts) > 1 for r in pair_turns if r.hint)
    for r in pair_turns:
        assert r.hint is not None
        assert sum(c.role == "feedback" for c in r.calls) == len(r.hint.attempts)
    # selfcritique's critique is the candidate's own call, recorded too
    critique = [r for r in records if isinstance(r, TurnRecord) and r.protocol == "selfcritique" and r.turn]
    assert critique and all(sum(c.role == "candidate" for c in r.calls) == 2 for r in critique)
    # the candidate never saw the hidden tests; the feedback model's evidence is recorded
    cand_text = [m.content for c in calls if c.role == "candidate" for m in resolve(c.messages, stored) or []]
    assert cand_text and not any(CANARY in t for t in cand_text)
    fb_text = [m.content for c in calls if c.role == "feedback" for m in resolve(c.messages, stored) or []]
    assert any(CANARY in t for t in fb_text)
    # the system prompt and the turn-0 prompt are stored once for every call that sent them
    assert len(stored) < sum(len(c.messages) for c in calls)


async def test_an_evaluator_without_a_folder_keeps_the_messages_in_memory(tmp_path: Path) -> None:
    candidate = Client("cand", lambda n: "no code")
    config = RunConfig(candidates=["cand"], feedback="rules", turns=1, protocols=["nohint"])
    async with Evaluator(config, models={"cand": candidate}, trace_cache=TraceCache(tmp_path / "tc")) as ev:
        records = [r async for r in ev.run([INSTANCE])]
        stored = ev.messages
    calls = [c for r in records if isinstance(r, TurnRecord) for c in r.calls]
    assert [tuple((m.role, m.content) for m in resolve(c.messages, stored) or []) for c in calls] == candidate.sent


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "pairbench_async", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, f"{args[0]} failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
    return proc


def _strip_messages(run: Path) -> None:
    """Make ``run`` look recorded before messages were: no ids, no ``messages/``."""
    lines = []
    for line in (run / "records.jsonl").read_bytes().splitlines():
        data = json.loads(line)
        for call in data.get("calls", []):
            call.pop("messages", None)
        lines.append(json.dumps(data).encode())
    (run / "records.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    shutil.rmtree(run / MESSAGES)


def test_a_run_recorded_without_messages_still_reports_and_resumes(tmp_path: Path) -> None:
    run = tmp_path / "run"
    _cli("run", "--no-progress", "--limit", "2", "--candidate", "sim:0.3", "sim:0.8",
         "--protocol", "pair", "nohint", "--out", str(run))
    new_json, new_text = _cli("report", str(run), "--json").stdout, _cli("report", str(run)).stdout
    old = tmp_path / "old"
    shutil.copytree(run, old)
    _strip_messages(old)
    assert b'"messages"' not in (old / "records.jsonl").read_bytes()
    assert _cli("report", str(old), "--json").stdout == new_json
    assert _cli("report", str(old)).stdout == new_text
    _cli("report", str(old), "--html", str(tmp_path / "old.html"))
    # resumed under this version: the old calls stay as they were, the new ones get messages
    partial = tmp_path / "partial"
    shutil.copytree(old, partial)
    records, _ = read_records(partial)
    cut = next(r.episode_id for r in records if isinstance(r, TurnRecord) and r.turn == 2)
    keep = [r for r in records if r.episode_id != cut or (isinstance(r, TurnRecord) and r.turn == 0)]
    enc = msgspec.json.Encoder()
    (partial / "records.jsonl").write_bytes(b"".join(enc.encode(r) + b"\n" for r in keep))
    _cli("run", "--no-progress", "--limit", "2", "--candidate", "sim:0.3", "sim:0.8",
         "--protocol", "pair", "nohint", "--out", str(partial), "--resume")
    assert _cli("report", str(partial), "--json").stdout == new_json
    after, _ = read_records(partial)
    stored = read_messages(partial)
    fresh = [c for r in after[len(keep):] if isinstance(r, TurnRecord) for c in r.calls]
    assert fresh and all(resolve(c.messages, stored) for c in fresh)
    assert all(not c.messages for r in keep if isinstance(r, TurnRecord) for c in r.calls)


async def test_the_obfuscate_summary_call_is_recorded_and_shown_at_turn_0(tmp_path: Path) -> None:
    from pairbench_async.protocol.wbt_prompts import few_shot_summary_messages
    from pairbench_async.report.transcript import build_transcripts
    from pairbench_async.runlog.messages import read_summary_calls

    candidate = Client("cand", lambda n: "no code")
    feedback = Client("fb", lambda n: f"Print each word with its length. (call {n})")
    config = RunConfig(candidates=["cand"], feedback="fb", turns=1, protocols=["nohint", "vanilla"],
                       obfuscate=True)
    async with Evaluator(config, models={"cand": candidate, "fb": feedback}, out_dir=tmp_path / "run",
                         trace_cache=TraceCache(tmp_path / "tc")) as ev:
        records = [r async for r in ev.run([INSTANCE])]
    made = read_summary_calls(tmp_path / "run")
    assert list(made) == [INSTANCE.id]  # once per instance, whatever the episodes
    call = made[INSTANCE.id].call
    stored = read_messages(tmp_path / "run")
    # seed 002's few-shot prompt (Fig. 17), the default (baselines="paper")
    assert resolve(call.messages, stored) == few_shot_summary_messages(INSTANCE.problem)
    assert call.text == feedback.answer(1) and call.model == "fb"
    tx = build_transcripts(records, messages=stored, summaries=made)
    for ep in tx.episodes:
        first = ep.turns[0].calls[0]
        assert first.role == "summary" and first.reply == call.text and first.messages == call.messages
    # turn 0's repair is one call shared by both protocols (recorded in one of the episodes)
    assert sorted([c.role for c in ep.turns[0].calls[1:]] for ep in tx.episodes) == [[], ["candidate"]]
