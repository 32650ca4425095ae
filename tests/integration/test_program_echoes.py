"""Program output that echoes a hidden input never reaches the candidate, end to end.

A program under evaluation chooses every string it prints, raises or returns, and its
output on a hidden test is a function of that test's input: treated as hidden data
wherever hidden data is not allowed. Real episodes (real sandbox, ``pair`` and the
model-written baselines) run buggy programs that carry a hidden canary in the name of
the exception class they raise, on stderr and in an exception message, encoded as
letters, reversed, spelled out, and in the class of a returned object. Two feedback
models write the hints: the offline ``rules`` model, and an adversarial one that copies
the evidence's program output and symptom into its hint (as a careless LLM would), so
that the validator rejects every draft and the fallback hint is used. The canary (in
any of the encodings a rule can see) must reach no candidate prompt, no hint, no
fallback hint, no judge prompt, and no feedback prompt whose level hides the inputs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pairbench_async.core.failures import PROGRAM_DEFINED
from pairbench_async.core.types import Completion, Instance, Message, Test, Usage
from pairbench_async.models.rules import RulesFeedback
from pairbench_async.protocol.context import TurnContext
from pairbench_async.runlog.records import EpisodeRecord, TurnRecord
from pairbench_async.runner.evaluator import Evaluator, RunConfig
from pairbench_async.sandbox.traces import TraceCache

CANARY = "CANARY_7731"
#: the canary as a rule can still recognise it: verbatim, reversed, its digits as letters
#: (a=0..j=9), reversed or spelled out, each searched in casefolded text without separators
FORMS = ("canary", "yranac", "7731", "1377", "hhdb", "bdhh", "sevenseventhreeone",
         "onethreesevenseven")
PAIRS = [(4242 + 3 * i, 1717 + 5 * i) for i in range(12)]

_STDIO = dict(
    kind="stdio", time_limit=1.0, memory_limit_mb=64,
    problem="Each test is one line: a label and two integers. Print the sum of the two integers.",
    reference="label, a, b = input().split()\nprint(int(a) + int(b))\n",
    tests=[Test(id=f"{i:02d}", input=f"{CANARY} {a} {b}\n", output=f"{a + b}\n")
           for i, (a, b) in enumerate(PAIRS)],
)
BUGGY = {
    # the reproduced bug: the class name is built from the hidden input
    "class-name": 'import sys\nraise type("_" + "_".join(sys.stdin.read().split()), (Exception,), {})()\n',
    "stderr-and-message": "import sys\ndata = sys.stdin.read()\nsys.stderr.write(data)\nraise ValueError(data)\n",
    "digits-as-letters": 'import sys\nprint("".join("abcdefghij"[int(c)] for c in sys.stdin.read() if c.isdigit()))\n',
    "reversed": "import sys\nprint(sys.stdin.read().strip()[::-1])\n",
    "spelled": ('import sys\nW = "zero one two three four five six seven eight nine".split()\n'
                'print(" ".join(W[int(c)] for c in sys.stdin.read() if c.isdigit()))\n'),
}
INSTANCES = [Instance(id=f"echo-{name}", buggy=source, **_STDIO) for name, source in BUGGY.items()]
INSTANCES.append(Instance(
    id="echo-returned-class", kind="call", time_limit=1.0, memory_limit_mb=64, entry_point="add",
    problem="def add(label: str, a: int, b: int) -> int:\n    Return a + b (the label is ignored).\n",
    buggy='def add(label, a, b):\n    return type("R_" + label, (), {})()\n',
    reference="def add(label, a, b):\n    return a + b\n",
    tests=[Test(id=f"{i:02d}", args=[CANARY, a, b], expected=a + b) for i, (a, b) in enumerate(PAIRS)],
))
#: the validated protocols: these six with baselines="pairbench"; by default ("paper") the
#: last four reach the candidate unvalidated, as their papers ran them, and are marked not
#: hidden-test protected (tests/integration/test_protocols.py holds them to that)
PROTOCOLS = ["pair", "vanilla", "human", "paragraph", "sentence", "rephrase"]


def _squash(text: str) -> str:
    return re.sub(r"[\W_]+", "", text.casefold())


def _leaks(text: str) -> list[str]:
    squashed = _squash(text)
    return [form for form in FORMS if form in squashed]


class Recorder:
    """A candidate that keeps every message it gets and never fixes anything."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def complete(self, messages: list[Message], **_: object) -> Completion:
        self.seen.extend(m.content for m in messages)
        return Completion(text="Perhaps the sum is off.", model="recorder", usage=Usage(1, 1))

    async def aclose(self) -> None:
        return None


class Echo(Recorder):
    """A careless feedback model: its hint repeats the evidence's first program output and
    symptom verbatim, so the validator has to catch every echo of hidden data."""

    async def complete(self, messages: list[Message], **_: object) -> Completion:
        self.seen.extend(m.content for m in messages)
        prompt = next(m.content for m in messages if m.role == "user")
        output = re.search(r"Program output:\n(.*?)(?:\n## |\n[A-Z][a-z ]+:|\Z)", prompt, re.S)
        symptom = re.search(r"Symptom: (.*)", prompt)
        text = (f"The program printed {(output.group(1).strip() if output else '')[:200]} and "
                f"{symptom.group(1) if symptom else 'fails'}.")
        return Completion(text=text, model="echo", usage=Usage(1, 1))


class Spy:
    """The offline ``rules`` feedback model, with every prompt it is sent kept."""

    name = "rules"

    def __init__(self) -> None:
        self.model = RulesFeedback()
        self.seen: list[str] = []

    async def complete_in_context(self, messages: list[Message], context: TurnContext) -> Completion:
        self.seen.extend(m.content for m in messages)
        return await self.model.complete_in_context(messages, context)

    async def aclose(self) -> None:
        await self.model.aclose()


class Judge(Recorder):
    """A validator model that accepts every hint the rules accepted (and keeps its prompts)."""

    async def complete(self, messages: list[Message], **_: object) -> Completion:
        self.seen.extend(m.content for m in messages)
        return Completion(text='{"verdict": "accept"}', model="judge", usage=Usage(1, 1))


def _fields(prompt: str) -> dict[str, list[str]]:
    """The feedback prompt's text by evidence field (``other``: everything else)."""
    fields: dict[str, list[str]] = {}
    current = "other"
    for line in prompt.splitlines():
        head = re.match(r"(Input|Expected output|Program output):\s*$", line)
        if head:
            current = head.group(1)
            continue
        if line.startswith(("## ", "Symptom: ", "Failure scenario: ", "Reference lines")):
            current = "other"
        fields.setdefault(current, []).append(line)
    return fields


@pytest.mark.parametrize("writer", ["rules", "echo"])
async def test_no_echo_of_a_hidden_input_reaches_a_candidate(tmp_path: Path, writer: str) -> None:
    candidate, judge = Recorder(), Judge()
    feedback: Spy | Echo = Spy() if writer == "rules" else Echo()
    config = RunConfig(candidates=["recorder"], feedback=writer, protocols=PROTOCOLS, turns=6,
                       scenario_turns=6, validator="openai:judge", baselines="pairbench")
    models = {"recorder": candidate, writer: feedback, "openai:judge": judge}
    async with Evaluator(config, models=models, out_dir=tmp_path / "run",
                         trace_cache=TraceCache(tmp_path / "tc")) as ev:
        records = [r async for r in ev.run(INSTANCES)]
    ends = [r for r in records if isinstance(r, EpisodeRecord)]
    assert len(ends) == len(INSTANCES) * len(PROTOCOLS) and all(e.status == "done" for e in ends)
    turns = [r for r in records if isinstance(r, TurnRecord)]
    hinted = [t for t in turns if t.hint is not None]
    assert len(hinted) >= 5 * len(INSTANCES) * len(PROTOCOLS)

    # the candidate: every prompt, every hint it was given (fallbacks included)
    assert candidate.seen and not [(_leaks(s), s) for s in candidate.seen if _leaks(s)]
    assert not [(t.instance_id, t.protocol, t.hint.text) for t in hinted if t.hint and _leaks(t.hint.text)]
    fallbacks = [t for t in hinted if t.hint and t.hint.fallback]
    if writer == "echo":  # every echo was rejected somewhere: the fallback was used, and is clean
        assert {t.protocol for t in fallbacks} == set(PROTOCOLS)
        assert any(_leaks(a.text) for t in hinted if t.hint for a in t.hint.attempts)
    # the judge sees only hints the rules accepted, the problem and the program
    assert judge.seen and not [s for s in judge.seen if _leaks(s)]

    # the feedback model: failure types and symptoms carry no program-chosen name at any
    # level; where the level hides the failing inputs, nothing carries the canary at all
    prompts = [s for s in feedback.seen if "## Failing test" in s]
    assert prompts
    for prompt in prompts:
        fields = _fields(prompt)
        assert not _leaks("\n".join(fields.get("other", []) + fields.get("Expected output", []))), prompt
        if "Input" not in fields:
            assert not _leaks(prompt), prompt
    l1 = [p for p in prompts if "Input" not in _fields(p)]
    assert l1 and any("Program output" in _fields(p) for p in l1)

    # records: the failure type of the class-name program is the closed vocabulary's word
    targets = [t.target for t in turns if t.target is not None and t.instance_id == "echo-class-name"]
    assert targets and {t.failure for t in targets} == {f"runtime:{PROGRAM_DEFINED}"}
