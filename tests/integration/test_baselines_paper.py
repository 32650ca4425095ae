"""The source papers' baselines as the papers ran them (``baselines="paper"``, the default),
each against what it was before (``baselines="pairbench"``), and old run folders resuming
as they ran. docs/PROTOCOL.md, "Baselines as the papers ran them", quotes the papers."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec
import pytest

from pairbench_async.core.types import Completion, Message, Usage
from pairbench_async.protocol.feedbackeval_prompts import FIG5_PERSONA, pylint_lines
from pairbench_async.protocol.leakage import hidden_data, validate_hint
from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.wbt_prompts import SUMMARY_EXAMPLES
from pairbench_async.runlog.records import TurnRecord
from pairbench_async.runner.config import RunConfig
from pairbench_async.runner.evaluator import Evaluator
from pairbench_async.runner.resume import recorded_run
from pairbench_async.sandbox.traces import TraceCache
from tests.integration.test_protocols import CANARY, INSTANCE

ROOT = Path(__file__).resolve().parents[2]


class Client:
    """A model that keeps every message list it is sent and answers ``answer(n)`` to its n-th call."""

    def __init__(self, name: str, answer: Callable[[int], str]) -> None:
        self.name, self.answer = name, answer
        self.sent: list[list[Message]] = []

    async def complete(self, messages: Sequence[Message], **_: object) -> Completion:
        self.sent.append(list(messages))
        return Completion(text=self.answer(len(self.sent)), model=self.name, usage=Usage(1, 1))

    async def aclose(self) -> None:
        return None


def _rewriting(n: int) -> str:
    """The candidate's n-th program: a different wrong one each time (``+ 1 + n``)."""
    return f"```python\nw = input()\nprint(w, len(w) + {1 + n})\n```"


async def _run(tmp_path: Path, config: RunConfig, models: dict[str, object], instance=INSTANCE) -> list[TurnRecord]:
    async with Evaluator(config, models=models, trace_cache=TraceCache(tmp_path / "tc")) as ev:
        return [r async for r in ev.run([instance]) if isinstance(r, TurnRecord)]


# -- FeedbackEval ---------------------------------------------------------------------------

#: a recorded review the leakage validator rejects: it quotes the reference's line
LEAKY_REVIEW = f"The reference starts with `# {CANARY} reference`; print len(w) itself."


@pytest.mark.parametrize("baselines", ["paper", "pairbench"])
async def test_the_recorded_human_review_reaches_the_candidate_verbatim(tmp_path: Path, baselines: str) -> None:
    inst = msgspec.structs.replace(INSTANCE, feedback={"human": LEAKY_REVIEW})
    # the validator would reject it: the old behaviour replaced it with a generated review
    assert validate_hint(LEAKY_REVIEW, 6, Evidence(problem=inst.problem), inst.buggy, hidden_data(inst))
    cand = Client("cand", _rewriting)
    turns = await _run(tmp_path, RunConfig(candidates=["cand"], feedback="rules", protocols=["human"], turns=2,
                                           baselines=baselines), {"cand": cand}, inst)
    first = turns[1].hint
    assert first is not None
    if baselines == "paper":  # seed 001: the dataset's human feedback, as it is
        assert first.text == LEAKY_REVIEW and first.source == "recorded" and first.attempts == []
        assert LEAKY_REVIEW in cand.sent[0][-1].content
        assert not turns[1].protected  # a recorded review may quote the reference: marked so
    else:
        assert first.text != LEAKY_REVIEW and first.source == "generated" and turns[1].protected
    # turn 2's program is no longer the recorded one: the feedback model writes the review
    assert turns[2].hint is not None and turns[2].hint.source == "generated"


async def test_a_row_without_a_recorded_review_says_what_was_used(tmp_path: Path) -> None:
    turns = await _run(tmp_path, RunConfig(candidates=["c"], feedback="rules", protocols=["human"], turns=1),
                       {"c": Client("c", lambda n: "no code")})
    assert turns[1].hint is not None and turns[1].hint.source == "generated"
    assert any(c.role == "feedback" for c in turns[1].calls)


@pytest.mark.parametrize("protocol", ["simple", "compiler", "test", "human"])
async def test_feedbackeval_protocols_use_the_papers_fig5_prompt(tmp_path: Path, protocol: str) -> None:
    cand = Client("cand", _rewriting)
    recorded = {"human": "Count the characters only.", "simple": "The code is wrong. Please fix it."}
    inst = msgspec.structs.replace(INSTANCE, feedback=recorded)
    await _run(tmp_path, RunConfig(candidates=["cand"], feedback="rules", protocols=[protocol], turns=2),
               {"cand": cand}, inst)
    assert len(cand.sent) == 2  # turns 1 and 2 (turn 0 is the erroneous program, no call)
    for sent in cand.sent:
        assert [m.role for m in sent] == ["user"]  # Fig. 5 is one prompt
        text = sent[0].content
        assert text.startswith(FIG5_PERSONA + "\n\nYour task is to correct the given erroneous code @@Existing Code.")
        for part in ("@@Existing Code\n", "@@Docstring\n" + inst.problem, "@@Feedback\n",
                     "3.Only need to fix the code; do not modify the function signature."):
            assert part in text
        assert "## Earlier turns" not in text and "@@Context" not in text  # no history; no context here
    # turn 2 shows the repaired program and only its own feedback
    assert "len(w) + 2" in cand.sent[1][0].content and "len(w) + 1)" not in cand.sent[1][0].content
    if protocol == "human":
        assert "Count the characters only." not in cand.sent[1][0].content


async def test_pairbench_keeps_its_own_prompt_for_feedbackeval(tmp_path: Path) -> None:
    cand = Client("cand", _rewriting)
    await _run(tmp_path, RunConfig(candidates=["cand"], feedback="rules", protocols=["simple"], turns=2,
                                   baselines="pairbench"), {"cand": cand})
    assert cand.sent[0][0].role == "system" and "## Current program" in cand.sent[0][-1].content
    assert "## Earlier turns" in cand.sent[1][-1].content


def test_pylint_messages_are_worded_as_feedbackevals_recorded_ones() -> None:
    # seed 001, Fig. 1: "In line: def verify_relayable_signature(public_key, doc, signature):.
    # Unused argument 'public_key'"; the released data: "In line: <line> . <message>"
    program = "def f(a, b):\n    x = 1\n    return a\n"
    output = ("************* Module candidate\n"
              "1:9: W0613: Unused argument 'b' (unused-argument)\n"
              "2:4: W0612: Unused variable 'x' (unused-variable)\n")
    assert pylint_lines(output, program) == ["In line: def f(a, b): . Unused argument 'b'",
                                             "In line:     x = 1 . Unused variable 'x'"]


async def test_compiler_feedback_on_a_new_program_is_worded_as_the_recorded_one(tmp_path: Path) -> None:
    pytest.importorskip("pylint")
    cand = Client("cand", lambda n: "```python\nimport os\nw = input()\nprint(w, len(w) + 2)\n```")
    turns = await _run(tmp_path, RunConfig(candidates=["cand"], feedback="rules", protocols=["compiler"], turns=2),
                       {"cand": cand})
    hint = turns[2].hint
    assert hint is not None and hint.text.startswith("In line: import os . Unused import os")
    # FeedbackEval's released code runs pylint with --disable=C,R (its recorded feedback holds
    # no convention or refactoring message): no "Missing module docstring" (C0114) here either
    assert "docstring" not in hint.text.lower()


# -- When Benchmarks Talk -------------------------------------------------------------------

@pytest.mark.parametrize("protocol", ["paragraph", "sentence", "code"])
async def test_wbt_candidate_sees_only_its_latest_attempt_and_the_feedback_on_it(tmp_path: Path,
                                                                                 protocol: str) -> None:
    cand = Client("cand", _rewriting)
    fb = Client("fb", lambda n: f"Feedback number {n} on the length.")
    await _run(tmp_path, RunConfig(candidates=["cand"], feedback="fb", protocols=[protocol], turns=3),
               {"cand": cand, "fb": fb})
    # the candidate's programs: turn 0 "+ 2", turn 1 "+ 3", turn 2 "+ 4" (the erroneous one "+ 1")
    last = cand.sent[-1][-1].content  # turn 3: the turn-2 program and the turn-3 feedback
    assert "Here is your last version of the code:" in last and "len(w) + 4)" in last
    assert "Feedback number 3 on the length." in last
    for earlier in ("len(w) + 3)", "len(w) + 2)", "len(w) + 1)", "Feedback number 1", "Feedback number 2",
                    "Earlier turns"):
        assert earlier not in last
    # the user model (Fig. 8) was given the full question and the correct solution, no validator
    assert len(fb.sent) == 3 and INSTANCE.reference.strip() in fb.sent[0][0].content
    assert INSTANCE.problem in fb.sent[0][0].content


async def test_rephrase_rewrites_the_question_and_the_candidate_codes_from_it(tmp_path: Path) -> None:
    cand = Client("cand", _rewriting)
    fb = Client("fb", lambda n: f"Question: REPHRASED-{n}: print the word, a space and its length.")
    turns = await _run(tmp_path, RunConfig(candidates=["cand"], feedback="fb", protocols=["rephrase"], turns=2),
                       {"cand": cand, "fb": fb})
    turn1, turn2 = cand.sent[1][-1].content, cand.sent[2][-1].content
    # Fig. 13 with the rephrased question as the problem, no earlier code and no "feedback"
    assert "Here is the programming problem description: Question: REPHRASED-1" in turn1
    assert "REPHRASED-2" in turn2 and "REPHRASED-1" not in turn2
    for text in (turn1, turn2):
        assert "last version of the code" not in text and "print(w, len(w)" not in text
        assert "feedback on the code" not in text
    # Fig. 12: the user model rewrites the latest program's question: the previous rephrasing
    assert "Here is the previous version of the question. Question: REPHRASED-1" in fb.sent[1][-1].content
    assert "Here is the previous version of the question. " + INSTANCE.problem in fb.sent[0][-1].content
    assert [t.hint.text for t in turns[1:] if t.hint] == [fb.answer(1), fb.answer(2)]


async def test_pairbench_rephrase_is_feedback_next_to_the_code(tmp_path: Path) -> None:
    cand = Client("cand", _rewriting)
    await _run(tmp_path, RunConfig(candidates=["cand"], feedback="rules", protocols=["rephrase"], turns=2,
                                   baselines="pairbench"), {"cand": cand})
    assert "## Current program" in cand.sent[1][-1].content and "## Feedback" in cand.sent[1][-1].content


def _critiquing(n: int) -> str:
    """The candidate's n-th reply with the calls alternating critique (even n: turn t's
    critique is call 2t) and revision: a critique naming its number, or a new program."""
    return f"CRITIQUE-{n}: the length is off." if n % 2 == 0 else _rewriting(n)


async def test_selfcritique_runs_as_the_papers_self_critique_baseline(tmp_path: Path) -> None:
    # seed 002: the Self-Critique Baseline "uses five iterations of self-critique to generate
    # feedback using the underspecified question and the output from the previous step" (§3),
    # its code model gets Fig. 13, and "We do not provide a history" (§2.3)
    cand = Client("cand", _critiquing)
    await _run(tmp_path, RunConfig(candidates=["cand"], feedback="rules", protocols=["selfcritique"], turns=3),
               {"cand": cand})
    assert len(cand.sent) == 7  # turn 0, then a critique and a revision per turn
    # programs: turn 0 "+ 2" (call 1), turn 1 "+ 4" (call 3), turn 2 "+ 6" (call 5)
    critique3, revise3 = cand.sent[5][-1].content, cand.sent[6][-1].content
    assert [m.role for m in cand.sent[5]] == ["user"] and [m.role for m in cand.sent[6]] == ["user"]
    assert critique3.startswith("You are a coding assistant who is writing code in order to solve some "
                                "programming puzzles.\n\nHere is the programming problem description: "
                                + INSTANCE.problem)
    assert "Here is your last version of the code:" in critique3 and "len(w) + 6)" in critique3
    assert "Your goal is to provide feedback about your solution" in critique3
    # the code step: Fig. 13, then the latest attempt and its own critique, no user
    assert revise3.startswith("You are a coding assistant who is writing code in order to solve some programming "
                              "puzzles. You will be provided with a summary of the problem.")
    assert "len(w) + 6)" in revise3 and "CRITIQUE-6: the length is off." in revise3
    assert revise3.rstrip().endswith("please end the markdown block with ``` on a new line.")
    for text in (critique3, revise3):  # the most recent attempt only: nothing of earlier turns
        for earlier in ("len(w) + 4)", "len(w) + 2)", "len(w) + 1)", "CRITIQUE-2", "CRITIQUE-4", "Earlier turns",
                        "## Problem", "The user provided"):
            assert earlier not in text
    # no hidden data and no reference anywhere: the candidate alone, as in the paper
    assert not any(CANARY in m.content for sent in cand.sent for m in sent)


async def test_pairbench_keeps_its_own_prompts_for_selfcritique(tmp_path: Path) -> None:
    cand = Client("cand", _critiquing)
    await _run(tmp_path, RunConfig(candidates=["cand"], feedback="rules", protocols=["selfcritique"], turns=2,
                                   baselines="pairbench"), {"cand": cand})
    critique2, revise2 = cand.sent[3][-1].content, cand.sent[4][-1].content
    assert "Critique it" in critique2 and cand.sent[3][0].role == "system"
    assert "## Current program" in revise2 and "CRITIQUE-4" in revise2
    assert "## Earlier turns" in revise2 and "CRITIQUE-2" in revise2  # the history, as before


@pytest.mark.parametrize("baselines", ["paper", "pairbench"])
async def test_obfuscation_uses_the_papers_few_shot_prompt(tmp_path: Path, baselines: str) -> None:
    cand = Client("cand", lambda n: "no code")
    fb = Client("fb", lambda n: "###SUMMARY\nEcho a word with its length." if n == 1 else "Check the length.")
    config = RunConfig(candidates=["cand"], feedback="fb", protocols=["nohint"], turns=1, obfuscate=True,
                       baselines=baselines)
    await _run(tmp_path, config, {"cand": cand, "fb": fb})
    asked = fb.sent[0][-1].content
    assert not any(CANARY in m.content for m in fb.sent[0])  # the summariser gets the statement only
    if baselines == "paper":  # seed 002, Fig. 17, with the paper's own example (§2.1, §2.2)
        assert "Here are examples of a question and a summary labeled 'EX QUESTION' and 'EX SUMMARY'" in asked
        assert asked.count("###EX QUESTION") == len(SUMMARY_EXAMPLES) >= 2
        assert ("Calculate the time it takes for a passenger in a specific seat to receive their lunch on an "
                "airplane with an infinite number of rows") in asked
        assert asked.rstrip().endswith(f"###FORMAL QUESTION\n{INSTANCE.problem}\n###SUMMARY")
    else:
        assert "###EX QUESTION" not in asked and "Summarise this task in ONE sentence" in asked
    assert "Echo a word with its length." in cand.sent[0][-1].content
    assert INSTANCE.problem not in cand.sent[0][-1].content


# -- old run folders ------------------------------------------------------------------------

def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pairbench_async", *args], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env=dict(os.environ))


@pytest.mark.timeout(600)
def test_a_folder_from_before_the_setting_resumes_as_it_ran(tmp_path: Path) -> None:
    # a run made before --baselines existed has no "baselines" in its manifest: exactly what
    # --baselines pairbench writes. It resumes the pairbench way; asking for paper is refused.
    old = tmp_path / "old"
    params = ["--dataset", str(ROOT / "fixtures" / "stdio.jsonl"), "--candidate", "sim:0.5", "--protocol",
              "paragraph", "human", "--turns", "2", "--limit", "2"]
    done = _cli("run", "--no-progress", "-q", *params, "--baselines", "pairbench", "--out", str(old))
    assert done.returncode == 0, done.stderr
    manifest = json.loads((old / "manifest.json").read_text())
    assert "baselines" not in manifest["params"]
    assert recorded_run(old).config["baselines"] == "pairbench"
    lines = (old / "records.jsonl").read_text().splitlines(keepends=True)
    cut = tmp_path / "cut"
    shutil.copytree(old, cut)
    (cut / "records.jsonl").write_text("".join(lines[:4]))
    refused = _cli("run", "--no-progress", "--resume", "--out", str(cut), "--baselines", "paper")
    assert refused.returncode == 2 and "--baselines: the run has 'pairbench', this command gives 'paper'" \
        in refused.stderr
    resumed = _cli("run", "--no-progress", "-q", "--resume", "--out", str(cut))
    assert resumed.returncode == 0, resumed.stderr
    turns = [json.loads(line) for line in (cut / "records.jsonl").read_text().splitlines()]
    turns = [t for t in turns if "turn" in t and t["turn"] > 0]
    assert turns and all(t.get("protected", True) for t in turns)  # validated, as it ran (paper: not protected)
    # a new run records the setting
    new = tmp_path / "new"
    assert _cli("run", "--no-progress", "-q", *params, "--out", str(new)).returncode == 0
    assert json.loads((new / "manifest.json").read_text())["params"]["baselines"] == "paper"


@pytest.mark.timeout(600)
def test_a_folder_from_before_section_iv_became_the_default_resumes_with_table_ii(tmp_path: Path) -> None:
    # a manifest without "evidence_reading" ran the table-ii reading (the default then):
    # exactly what --evidence-reading table-ii writes. It resumes so; section-iv is refused.
    old = tmp_path / "old"
    params = ["--dataset", str(ROOT / "fixtures" / "stdio.jsonl"), "--candidate", "sim:0.5", "--protocol",
              "pair", "--turns", "2", "--limit", "2"]
    done = _cli("run", "--no-progress", "-q", *params, "--evidence-reading", "table-ii", "--out", str(old))
    assert done.returncode == 0, done.stderr
    assert "evidence_reading" not in json.loads((old / "manifest.json").read_text())["params"]
    assert recorded_run(old).config["evidence_reading"] == "table-ii"
    refused = _cli("run", "--no-progress", "--resume", "--out", str(old), "--evidence-reading", "section-iv")
    assert refused.returncode == 2 and "the run has 'table-ii', this command gives 'section-iv'" in refused.stderr
    assert _cli("run", "--no-progress", "-q", "--resume", "--out", str(old)).returncode == 0
    new = tmp_path / "new"
    assert _cli("run", "--no-progress", "-q", *params, "--out", str(new)).returncode == 0
    assert json.loads((new / "manifest.json").read_text())["params"]["evidence_reading"] == "section-iv"
