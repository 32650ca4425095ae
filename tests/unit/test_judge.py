"""The leakage validator's LLM judge: its rubric per level, its verdict read back, its place
after the rules (seed 000, Section IV-C; Table II's definitions in the rubric)."""

from __future__ import annotations

import asyncio

import pytest

from pairbench_async.core.types import Instance, Message
from pairbench_async.core.types import Test as HiddenTest
from pairbench_async.protocol.boundaries import BOUNDARIES, reserved
from pairbench_async.protocol.context import TurnContext
from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.hints import HINT_LEVELS
from pairbench_async.protocol.judge import judge_hint, judge_messages, parse_verdict
from pairbench_async.protocol.leakage import HiddenData, JudgeVerdict, review

PROBLEM = "Given n numbers, print how many pairs (i, j) with i < j have equal values."
PROGRAM = "n = int(input())\nvalues = input().split()\nprint(len(values) - len(set(values)))\n"
SECRET_INPUT = "5\n7 7 7 7 7\n"
HIDDEN = HiddenData(inputs=(SECRET_INPUT,), outputs=("10\n",), reference="print('REFERENCE_CANARY')\n")


@pytest.mark.parametrize("level", range(1, 7))
def test_the_rubric_forbids_exactly_what_the_level_reserves_in_the_papers_words(level: int) -> None:
    system, user = judge_messages("Some hint.", level, PROBLEM, PROGRAM)
    # every level of Table II, with its definition and example, in the system message
    for lv in HINT_LEVELS:
        assert f"L{lv.number} {lv.name}:" in system.content and lv.example in system.content
    for b in BOUNDARIES[:5]:
        assert b.what in system.content
    # the user message lists the reserved boundaries, and only those, as forbidden
    forbidden = user.content.split("must NOT reveal any of these:")[1].split("\n\n")[0]
    named = {line[2:].split(":")[0] for line in forbidden.strip().splitlines()}
    assert named == {b.name for b in reserved(level)}
    # L2: forbidden are state, location, concept, direction, code (5); L6: code only (1)
    assert len(named) == 6 - level + 1
    assert f"Hint written for level L{level}" in user.content and "Some hint." in user.content


def test_the_judge_sees_the_problem_and_program_but_never_hidden_data() -> None:
    text = " ".join(m.content for m in judge_messages("A hint.", 3, PROBLEM, PROGRAM))
    assert PROBLEM in text and PROGRAM.strip() in text
    assert "REFERENCE_CANARY" not in text and "7 7 7 7 7" not in text


def test_a_long_program_is_cut() -> None:
    text = judge_messages("A hint.", 4, PROBLEM, "x = 1\n" * 2000)[1].content
    assert "# ... (cut)" in text and len(text) < 6000


@pytest.mark.parametrize(
    ("reply", "verdict", "boundary"),
    [
        ('{"verdict": "reject", "boundary": "location", "reason": "names the loop"}', "reject", "location"),
        ('```json\n{"verdict": "REJECT", "boundary": "fault location", "reason": "x"}\n```', "reject", "location"),
        ('Sure! {"Verdict": "Reject", "Boundary": "L5", "Reason": "states the rule"}', "reject", "concept"),
        ('{"verdict": "accept", "boundary": "none", "reason": "only the symptom"}', "accept", None),
        ("ACCEPT: it only describes the output.", "accept", None),
        ("Reject. Boundary: repair direction", "reject", "direction"),
        ('{"verdict": "reject", "boundary": "pseudocode"}', "reject", "code"),
        ('{"verdict": "reject", "reason": "it leaks"}', "reject", None),
    ],
)
def test_verdicts_are_read_in_the_forms_models_write_them(reply: str, verdict: str,
                                                          boundary: str | None) -> None:
    got = parse_verdict(reply, 2)
    assert (got.verdict, got.boundary) == (verdict, boundary)


@pytest.mark.parametrize("reply", ["", "I am not sure about this one.", '{"verdict": "maybe"}', "{broken json"])
def test_an_unreadable_reply_is_malformed_and_keeps_its_head(reply: str) -> None:
    got = parse_verdict(reply, 3)
    assert got.verdict == "malformed" and got.boundary is None
    assert got.reason == " ".join(reply.split())[:300]


def test_a_rejection_naming_a_boundary_the_level_allows_counts_as_acceptance() -> None:
    # an L5 hint may reveal a location (L4): the judge contradicts its rubric
    got = parse_verdict('{"verdict": "reject", "boundary": "location", "reason": "names the loop"}', 5)
    assert got.verdict == "accept" and got.boundary == "location"
    assert got.reason.startswith("[rejection names location, which L5 may reveal]")
    # an unknown boundary name does not undo the rejection, but is flagged
    got = parse_verdict('{"verdict": "reject", "boundary": "vibes", "reason": "odd"}', 5)
    assert got.verdict == "reject" and got.boundary is None and got.reason.startswith("[unknown boundary]")


class _IO:
    """A protocol's window with a scripted judge."""

    def __init__(self, replies: list[str], judging: bool = True) -> None:
        self.judging = judging
        self.replies = list(replies)
        self.asked: list[list[Message]] = []

    async def ask_validator(self, messages: list[Message], context: TurnContext) -> str:
        self.asked.append(messages)
        return self.replies.pop(0)


_INSTANCE = Instance(id="i", problem=PROBLEM, buggy=PROGRAM, reference="print(1)\n", kind="stdio",
                     time_limit=1.0, memory_limit_mb=64, tests=[HiddenTest(id="t", input=SECRET_INPUT, output="10\n")])
_CONTEXT = TurnContext(instance=_INSTANCE, program=PROGRAM, turn=1, level=1, target_lines=[], evidence=None,
                       seed=0, protocol="pair")


#: Table II's own L1 example hint: clean by construction, so every reading of the validator accepts it
L1_CLEAN = HINT_LEVELS[0].example


def _judge(io: _IO, text: str, level: int) -> JudgeVerdict | None:
    return asyncio.run(judge_hint(io, text, level=level, evidence=Evidence(problem=PROBLEM),
                                  candidate_code=PROGRAM, hidden=HIDDEN, context=_CONTEXT))


def test_the_judge_sees_only_what_the_rules_accept() -> None:
    io = _IO(['{"verdict": "reject", "boundary": "state", "reason": "says what is kept"}'])
    # the rules reject this L1 hint (an input pattern): the judge is never asked
    assert _judge(io, "The count is wrong when the input is empty.", 1) is None and io.asked == []
    # the validator accepts this one (Table II's own L1 example): the judge is asked once, with the L1 rubric
    # (until stop 33 the hint here was "The printed count of pairs is too small.", which the learned reading,
    # the default since stop 34, rejects: a false positive of the model, crossing read at 0.61)
    got = _judge(io, L1_CLEAN, 1)
    assert got == JudgeVerdict(verdict="reject", boundary="state", reason="says what is kept")
    assert len(io.asked) == 1 and "Hint written for level L1" in io.asked[0][1].content


def test_no_judge_no_call() -> None:
    io = _IO([], judging=False)
    assert _judge(io, "The printed count of pairs is too small.", 1) is None and io.asked == []


def test_review_rejects_on_the_judges_word_and_records_every_verdict() -> None:
    hint = L1_CLEAN
    kw = dict(level=1, evidence=Evidence(problem=PROBLEM), candidate_code=PROGRAM, hidden=HIDDEN,
              failure="wrong_value")
    rejected = JudgeVerdict(verdict="reject", boundary="state", reason="it says what is kept")
    attempts, outcome = review((), hint, judge=rejected, **kw)  # type: ignore[arg-type]
    assert outcome is None  # regenerate
    assert attempts[0].reasons == ("judge: state: it says what is kept",) and attempts[0].judge == rejected
    malformed = JudgeVerdict(verdict="malformed", reason="I am not sure")
    attempts, outcome = review(attempts, hint, judge=malformed, **kw)  # type: ignore[arg-type]
    # a malformed verdict does not reject: the rules' acceptance stands, the verdict is kept
    assert outcome is not None and outcome.text == hint and not outcome.fallback
    assert [a.judge for a in outcome.attempts] == [rejected, malformed]
    assert outcome.attempts[1].reasons == ()


def test_a_rules_rejection_is_never_replaced_by_a_judge_acceptance() -> None:
    accepted = JudgeVerdict(verdict="accept")
    attempts, outcome = review((), "The count is wrong when the input is empty.", level=1,
                               evidence=Evidence(problem=PROBLEM), candidate_code=PROGRAM, hidden=HIDDEN,
                               failure="wrong_value", judge=accepted)
    assert outcome is None and attempts[0].reasons[0].startswith("input_pattern:")


@pytest.mark.parametrize(
    ("reply", "verdict", "boundary"),
    [
        ("VERDICT: REJECT. BOUNDARY: FAULT LOCATION.", "reject", "location"),
        ("Verdict: reject. Boundary: fault location.", "reject", "location"),
        # the thinking block drafts a verdict the answer then changes
        ("<think>Verdict: accept, looks fine... no wait</think>\nVerdict: reject. Boundary: repair direction.",
         "reject", "direction"),
        ('{"verdict": "accept"} on reflection: {"verdict": "reject", "boundary": "code"}', "reject", "code"),
        ("Verdict: reject, boundary: code. Second thoughts. Verdict: accept.", "accept", None),
    ],
)
def test_the_parser_takes_the_last_verdict_in_any_case_after_thinking(reply: str, verdict: str,
                                                                       boundary: str | None) -> None:
    got = parse_verdict(reply, 1)
    assert (got.verdict, got.boundary) == (verdict, boundary), got
