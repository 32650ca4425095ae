"""Every protocol end to end: what the candidate sees, and the hidden-test canary."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from pairbench_async.core.types import Completion, Instance, Message, Test, Usage
from pairbench_async.protocol.baselines import SIMPLE_FEEDBACK
from pairbench_async.protocol.protocols import BASELINES, PROTOCOLS

PROTECTED = {name for name, p in PROTOCOLS.items() if p.protected}
from pairbench_async.runlog.records import EpisodeRecord, TurnRecord
from pairbench_async.runner.evaluator import Evaluator, RunConfig
from pairbench_async.sandbox.traces import TraceCache

CANARY = "CANARY7f3a"
INSTANCE = Instance(
    id="canary", kind="stdio", time_limit=1.0, memory_limit_mb=64,
    problem="Read a word and print it followed by its length.",
    buggy="w = input()\nprint(w, len(w) + 1)\n",
    reference=f"# {CANARY} reference\nw = input()\nprint(w, len(w))\n",
    tests=[Test(id=str(i), input=f"{CANARY}{'x' * i}\n", output=f"{CANARY}{'x' * i} {10 + i}\n")
           for i in range(12)],
)


class Recorder:
    """A candidate that keeps every message it gets and never fixes anything."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def complete(self, messages: list[Message], **_: object) -> Completion:
        self.seen.extend(m.content for m in messages)
        return Completion(text="Perhaps the length is off.", model="recorder", usage=Usage(1, 1))

    async def aclose(self) -> None:
        return None


@pytest.mark.parametrize("baselines", ["paper", "pairbench"])
@pytest.mark.parametrize("protocol", ["pair", *BASELINES])
async def test_candidate_sees_no_hidden_data_unless_the_protocol_says_so(tmp_path: Path, protocol: str,
                                                                         baselines: str) -> None:
    rec = Recorder()
    config = RunConfig(candidates=["recorder"], feedback="rules", protocols=[protocol], turns=3,
                       baselines=baselines)
    async with Evaluator(config, models={"recorder": rec}, out_dir=tmp_path / "run",
                         trace_cache=TraceCache(tmp_path / "tc")) as ev:
        records = [r async for r in ev.run([INSTANCE])]
    turns = [r for r in records if isinstance(r, TurnRecord)]
    end = [r for r in records if isinstance(r, EpisodeRecord)]
    assert len(turns) == 4 and end[0].status == "done" and end[0].stop_reason == "budget"
    leaked = any(CANARY in text for text in rec.seen)
    protected = PROTOCOLS[protocol].protected_in(baselines == "paper")
    if baselines == "pairbench" or protocol in ("test", "code"):
        assert leaked == (not protected)
    else:  # unvalidated feedback (paper): the offline rules model happens not to leak; a
        # model that does is test_a_leaking_feedback_model_reaches_only_unprotected_protocols'
        assert not leaked or not protected
    assert all(t.protected == protected for t in turns[1:])
    hints = [t.hint.text for t in turns[1:] if t.hint]
    if protocol == "nohint":
        assert not hints
    elif protocol == "simple":
        assert hints == [SIMPLE_FEEDBACK] * 3
    elif protocol == "code":
        assert all("should be" in h or "add `" in h for h in hints)  # reference lines: unprotected
    elif protocol == "compiler":
        assert all(h.startswith("pylint reports") for h in hints)
    elif protocol == "test":
        assert all("Expected:" in h and CANARY in h for h in hints)
    elif protocol == "sentence":
        assert all(h.count(". ") == 0 for h in hints) and len(hints) == 3
    elif protocol == "selfcritique":
        assert all("Perhaps the length is off" in h for h in hints)
        # the critique prompt: seed 002's Fig. 9 goal said to the code model (paper), or ours
        ask = "Your goal is to provide feedback about your solution" if baselines == "paper" else "Critique it"
        assert sum(ask in s for s in rec.seen) == 3
    elif protocol == "pair":
        assert len(hints) == 3 and all(hints)
        assert all(t.target is not None and t.hint_level for t in turns[1:])
    elif PROTOCOLS[protocol].model_written:  # a baseline whose feedback model writes the hints
        assert len(hints) == 3 and all(hints)
        assert all(t.target is None and t.hint and t.hint.level == 0 for t in turns[1:])
        assert all(any(c.role == "feedback" for c in t.calls) for t in turns[1:])
    else:  # a baseline of fixed or computed texts: no feedback model is asked
        assert len(hints) == 3 and all(hints)
        assert not any(c.role == "feedback" for t in turns for c in t.calls)


class Echo:
    """A feedback model that repeats every line of its prompt that holds hidden data."""

    name = "echo"

    async def complete(self, messages: list[Message], **_: object) -> Completion:
        lines = [ln.strip() for m in messages for ln in m.content.splitlines() if CANARY in ln]
        return Completion(text=" ".join(lines[:2]) or "Nothing to add.", model="echo", usage=Usage(1, 1))

    async def aclose(self) -> None:
        return None


@pytest.mark.parametrize("baselines", ["paper", "pairbench"])
@pytest.mark.parametrize("protocol", ["pair", *BASELINES])
async def test_a_leaking_feedback_model_reaches_only_unprotected_protocols(tmp_path: Path, protocol: str,
                                                                          baselines: str) -> None:
    # "paper": When Benchmarks Talk's and FeedbackEval's model-written feedback goes to the
    # candidate as written (no validator in either paper), so what a feedback model repeats
    # of the hidden data reaches the candidate, and every record says "not protected";
    # "pairbench": the validator stops it and the protocol stays protected
    rec = Recorder()
    config = RunConfig(candidates=["recorder"], feedback="echo", protocols=[protocol], turns=2,
                       baselines=baselines)
    async with Evaluator(config, models={"recorder": rec, "echo": Echo()},
                         trace_cache=TraceCache(tmp_path / "tc")) as ev:
        turns = [r async for r in ev.run([INSTANCE]) if isinstance(r, TurnRecord)]
    protected = PROTOCOLS[protocol].protected_in(baselines == "paper")
    assert len(turns) == 3 and all(t.protected == protected for t in turns[1:])
    assert any(CANARY in text for text in rec.seen) == (not protected)


async def test_recorded_feedbackeval_texts_are_replayed_for_the_original_program(tmp_path: Path) -> None:
    import msgspec

    inst = msgspec.structs.replace(INSTANCE, feedback={"human": "Check how the length is counted.",
                                                       "compiler": ["1:0: W0000: recorded line"]})
    for protocol, expected in (("human", "Check how the length is counted."),
                               ("compiler", "1:0: W0000: recorded line")):
        config = RunConfig(candidates=["recorder"], feedback="rules", protocols=[protocol], turns=1)
        async with Evaluator(config, models={"recorder": Recorder()}, trace_cache=TraceCache(tmp_path)) as ev:
            turns = [r async for r in ev.run([inst]) if isinstance(r, TurnRecord)]
        assert turns[1].hint is not None and turns[1].hint.text == expected


async def test_obfuscate_shows_only_a_one_sentence_summary_and_keeps_it_for_resume(tmp_path: Path) -> None:
    import msgspec

    inst = msgspec.structs.replace(INSTANCE, problem="Print the word and its length. Words are ASCII. "
                                   "SECRET-DETAIL appears only here.")
    rec = Recorder()
    config = RunConfig(candidates=["recorder"], feedback="rules", turns=1, obfuscate=True)
    async with Evaluator(config, models={"recorder": rec}, out_dir=tmp_path / "run",
                         trace_cache=TraceCache(tmp_path / "tc")) as ev:
        [r async for r in ev.run([inst])]
    assert rec.seen and not any("SECRET-DETAIL" in s for s in rec.seen)
    assert any("Print the word and its length." in s for s in rec.seen)
    assert (tmp_path / "run" / "summaries.json").exists()


class Rewriter(Recorder):
    """A candidate that always answers with a different (still wrong) program."""

    async def complete(self, messages: list[Message], **_: object) -> Completion:
        self.seen.append(messages[-1].content)
        return Completion(text="```python\nw = input()\nprint(w, len(w) + 2)\n```", model="rewriter",
                          usage=Usage(1, 1))


FEEDBACKEVAL = [name for name, p in PROTOCOLS.items() if p.starts_from_erroneous]


def test_feedbackeval_protocols_are_exactly_the_papers_four() -> None:
    assert sorted(FEEDBACKEVAL) == ["compiler", "human", "simple", "test"]


@pytest.mark.parametrize("protocol", ["pair", "vanilla", "nohint", *FEEDBACKEVAL])
async def test_feedbackeval_protocols_start_from_the_erroneous_program(tmp_path: Path, protocol: str) -> None:
    # Seed 001 §6: "the LLMs were provided with the initial erroneous code and corresponding
    # feedback, after which they performed a repair iteration". The candidate here rewrites
    # the program on every call, so an unhinted turn 0 would move the first feedback off the
    # original program: the recorded feedback (given for the original program) must still
    # be the first thing the candidate is shown, and turn 0 must cost no model call.
    recorded = {"human": "Check how the length is counted.", "compiler": ["1:0: W0000: recorded line"],
                "simple": "Recorded: the code is wrong.", "test": "Recorded failing test."}
    inst = msgspec.structs.replace(INSTANCE, feedback=recorded)
    rec = Rewriter()
    config = RunConfig(candidates=["rewriter"], feedback="rules", protocols=[protocol], turns=2)
    async with Evaluator(config, models={"rewriter": rec}, trace_cache=TraceCache(tmp_path)) as ev:
        turns = [r async for r in ev.run([inst]) if isinstance(r, TurnRecord)]
    assert [t.turn for t in turns] == [0, 1, 2]
    candidate_calls = [c for t in turns for c in t.calls if c.role == "candidate"]
    if protocol in FEEDBACKEVAL:
        assert turns[0].given and turns[0].calls == [] and turns[0].program == INSTANCE.buggy
        assert len(candidate_calls) == 2 == len(rec.seen)  # one per feedback round, none at turn 0
        first = rec.seen[0]  # the turn-1 prompt: the erroneous program with its own feedback
        assert "print(w, len(w) + 1)" in first
        text = recorded[protocol] if protocol != "compiler" else "1:0: W0000: recorded line"
        assert turns[1].hint is not None and text in turns[1].hint.text and text in first
        # turn 2's feedback is computed on the repaired program: the recording no longer applies
        assert turns[2].hint is not None and text not in turns[2].hint.text
    else:
        assert not turns[0].given and [c.role for c in turns[0].calls] == ["candidate"]
        assert len(candidate_calls) == 3 == len(rec.seen)
        assert turns[0].program != INSTANCE.buggy  # the unhinted repair's program
