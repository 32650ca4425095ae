"""When Benchmarks Talk's word caps: paragraph feedback <= 100 words, sentence <= 50.

Seed 002's user prompts say "Write one paragraph of feedback ... Do not write more than
100 words" (Fig. 9) and "Write one sentence of feedback ... Do not write more than 50
words" (Fig. 10). The prompt says so, the reply is cut at the cap on a word boundary,
and the cut is recorded (``words_cut``) on the hint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec
import pytest

from pairbench_async.core.types import Instance, Message, Test, TestResult, Verdict
from pairbench_async.protocol.baselines import (
    WORD_CAPS,
    cap_words,
    feedback_messages,
    first_sentence,
)
from pairbench_async.protocol.context import TurnContext
from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.leakage import HiddenData, ValidationPolicy, hidden_data
from pairbench_async.protocol.policy import PolicyConfig
from pairbench_async.protocol.protocols import PROTOCOLS, Feedback, TurnInput
from pairbench_async.runlog.records import HintRecord


def _words(n: int, start: int = 0) -> str:
    """``n`` distinct plain words (wordaa wordab ...: no digit of the hidden tests, no code)."""
    return " ".join(f"word{chr(97 + (i // 26) % 26)}{chr(97 + i % 26)}" for i in range(start, start + n))


def test_cap_words_by_hand() -> None:
    # 130 words, cap 100: the first 100 words are kept, 130 - 100 = 30 are cut
    text, cut = cap_words(_words(130), 100)
    assert (len(text.split()), cut) == (100, 30) and text == _words(100)
    # 60 words, cap 50: 50 kept, 60 - 50 = 10 cut
    text, cut = cap_words(_words(60), 50)
    assert (len(text.split()), cut) == (50, 10) and text == _words(50)
    # at or under the cap nothing changes, spacing included
    assert cap_words("one  two\nthree", 3) == ("one  two\nthree", 0)
    # the kept words keep their own spacing; the cut falls after the cap-th word
    assert cap_words("a b\n\nc d e", 3) == ("a b\n\nc", 2)
    with pytest.raises(ValueError, match="at least 1"):
        cap_words("a", 0)


def test_the_prompts_state_the_papers_caps() -> None:
    assert dict(WORD_CAPS) == {"paragraph": 100, "sentence": 50}
    ev = Evidence(problem="Print the sum.")
    assert "Do not write more than 100 words." in feedback_messages("paragraph", ev)[1].content
    assert "Do not write more than 50 words." in feedback_messages("sentence", ev)[1].content
    # Code Feedback's prompt says it too (seed 002, Fig. 11); nothing else gets a cap
    assert "Do not write more than 100 words." in feedback_messages("code", ev)[1].content
    assert "Do not write more than" not in feedback_messages("vanilla", ev)[1].content
    assert PROTOCOLS["paragraph"].word_cap == 100 and PROTOCOLS["sentence"].word_cap == 50  # type: ignore[attr-defined]
    assert PROTOCOLS["code"].word_cap is None and PROTOCOLS["vanilla"].word_cap is None  # type: ignore[attr-defined]
    # the paper's own prompts (baselines="paper") say the same words
    from pairbench_async.protocol.wbt_prompts import user_model_messages

    for kind, cap in (("paragraph", 100), ("sentence", 50), ("code", 100)):
        asked = user_model_messages(kind, "Print the sum.", "print(1)", "print(2)")[1].content
        assert f"Do not write more than {cap} words." in asked


INSTANCE = Instance(
    id="sum", kind="stdio", time_limit=1.0, memory_limit_mb=64, problem="Read two numbers and print their sum.",
    buggy="a, b = map(int, input().split())\nprint(a - b)\n",
    reference="a, b = map(int, input().split())\nprint(a + b)\n",
    tests=[Test(id="t1", input="1 2\n", output="3\n"), Test(id="t2", input="5 5\n", output="10\n")],
)


class _IO:
    """A feedback model that always replies ``reply``; no linter, no view change."""

    def __init__(self, reply: str, paper: bool = True) -> None:
        self.reply = reply
        self.paper = paper  # baselines="paper": seed 002's own prompts, unvalidated
        self.policy = PolicyConfig()
        self.validation = ValidationPolicy(max_chars=5000)
        self.offline_feedback = False
        self.judging = False  # no --validator-model: the rules alone
        self.prompts: list[list[Message]] = []

    def hidden(self, instance: Instance) -> HiddenData:
        return hidden_data(instance)

    async def ask_feedback(self, messages: list[Message], context: TurnContext) -> str:
        self.prompts.append(messages)
        return self.reply

    async def ask_candidate(self, messages: list[Message], context: TurnContext) -> str:
        raise AssertionError("not asked")

    async def ask_validator(self, messages: list[Message], context: TurnContext) -> str:
        raise AssertionError("no judge in these runs")

    async def lint(self, program: str) -> str:
        return ""

    async def view(self, instance: Instance) -> Instance:
        return instance


def _turn() -> TurnInput:
    results: Mapping[str, TestResult] = {t.id: TestResult(id=t.id, verdict=Verdict.WA, stdout="-1\n")
                                         for t in INSTANCE.tests}
    failing: Sequence[str] = [t.id for t in INSTANCE.tests]
    return TurnInput(instance=INSTANCE, program=INSTANCE.buggy, turn=1, failing=failing, results=results,
                     traces={}, shapes={}, seed=7, state=None)


@pytest.mark.parametrize("paper", [True, False])
@pytest.mark.parametrize(("protocol", "reply_words", "kept", "cut"), [
    ("paragraph", 130, 100, 30),  # 130 - 100 = 30 words cut
    ("paragraph", 100, 100, 0),   # exactly at the cap: nothing cut
    ("sentence", 60, 50, 10),     # 60 - 50 = 10 words cut
    ("sentence", 50, 50, 0),
    ("vanilla", 130, 130, 0),     # no cap
])
async def test_the_reply_is_cut_at_the_cap_and_the_cut_recorded(
        protocol: str, reply_words: int, kept: int, cut: int, paper: bool) -> None:
    reply = "The sum " + _words(reply_words - 3) + " matters."  # one sentence of reply_words words
    assert len(reply.split()) == reply_words
    io = _IO(reply, paper)
    step = await PROTOCOLS[protocol].feedback(_turn(), io)
    assert isinstance(step, Feedback) and step.hint is not None
    hint = step.hint
    assert not hint.fallback and len(hint.text.split()) == kept and hint.words_cut == cut
    assert reply.startswith(hint.text)  # a prefix: cut on a word boundary, nothing rewritten
    assert hint.attempts[-1].text == hint.text  # the validator saw what the candidate gets
    # the record keeps the count; a hint with nothing cut stays as before on disk
    record = HintRecord(level=hint.level, text=hint.text, fallback=hint.fallback, words_cut=hint.words_cut)
    encoded = msgspec.json.encode(record)
    assert (b'"words_cut"' in encoded) == (cut > 0)
    assert msgspec.json.decode(encoded, type=HintRecord).words_cut == cut


def test_the_transcript_says_a_cut_happened() -> None:
    from pairbench_async.report.html import render_transcript_page
    from pairbench_async.report.transcript import build_transcripts
    from pairbench_async.runlog.records import TurnRecord

    def turn(t: int, hint: HintRecord | None) -> TurnRecord:
        return TurnRecord(run_id="r", episode_id="e", instance_id="i", model="m", protocol="paragraph",
                          run=0, seed=0, turn=t, program="pass", passed=[], failed=["t1"], pass_rate=0.0,
                          hint=hint)

    records = [turn(0, None), turn(1, HintRecord(level=0, text=_words(100), words_cut=30)),
               turn(2, HintRecord(level=0, text=_words(20)))]
    (episode,) = build_transcripts(records).episodes
    assert [t.words_cut for t in episode.turns] == [0, 30, 0]
    page = render_transcript_page(build_transcripts(records))
    assert page.count("words past the word cap cut") == 1 and "30 words past the word cap cut" in page


@pytest.mark.parametrize(("reply", "sentence"), [
    ("It fails on empty input. Check the loop.", "It fails on empty input."),
    ("1. The sum is wrong. 2. Fix the loop.", "The sum is wrong."),  # a list marker is no sentence
    ("- Off by one at the end. More.", "Off by one at the end."),
    ("Check small cases, e.g. an empty list. Then the rest.", "Check small cases, e.g. an empty list."),
    ("Compare i.e. the counts vs. the sums here. Later.", "Compare i.e. the counts vs. the sums here."),
    ("Does it handle zero? It does not.", "Does it handle zero?"),
    ("No full stop at all", "No full stop at all"),
])
def test_the_sentence_feedback_keeps_one_whole_sentence(reply: str, sentence: str) -> None:
    assert first_sentence(reply) == sentence
