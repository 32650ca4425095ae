"""The data model: typed msgspec Structs for everything that crosses a boundary.

Instances and tests are read from dataset files, programs and limits travel to the
sandbox, test results come back from it. Every Struct here can be encoded to JSON
or msgpack and decoded with the same typed decoder, so a remote sandbox pool or a
record file can stand in for a local object without any other module changing.

This module imports nothing from the package.
"""

from __future__ import annotations

import enum
import math
from typing import Any, Literal

import msgspec

__all__ = [
    "SCHEMA_VERSION",
    "Checker",
    "Completion",
    "Instance",
    "Kind",
    "Limits",
    "Message",
    "Mismatch",
    "Program",
    "Test",
    "TestResult",
    "Usage",
    "Verdict",
]

#: Bumped whenever a record field changes; old records stay decodable.
#: 2: TurnRecord.protected; 3: FeedbackEval's protocols start from the erroneous program
#: (TurnRecord.given), HintRecord.words_cut, HintAttempt.judge, CallRecord role
#: "validator", RunManifest.validator: a run of one schema never resumes in another.
#: Not bumped for CallRecord.messages (the ids of the messages a call sent): an optional
#: field that changes no recorded value's meaning, so a schema-3 run recorded without it
#: resumes with it, and its earlier calls read as "messages not recorded"
#: Nor for HintRecord.source (where a FeedbackEval text came from), optional in the same
#: way; the baselines' behaviour is a run setting (``RunConfig.baselines``, in the manifest)
SCHEMA_VERSION = 3

Kind = Literal["stdio", "call"]

#: How a wrong answer differs from the expected output (stdio tests):
#: the number of lines, the number of tokens on some line, or a token's value.
Mismatch = Literal["lines", "tokens", "value"]


class Verdict(str, enum.Enum):
    """The outcome of one program on one test.

    ``SF`` (sandbox fault) is the sandbox's own failure and never the program's.
    """

    AC = "AC"
    WA = "WA"
    TLE = "TLE"
    MLE = "MLE"
    RE = "RE"
    OLE = "OLE"
    SF = "SF"


class Checker(msgspec.Struct, frozen=True, omit_defaults=True, forbid_unknown_fields=True):
    """How an output is compared with the expected one; a per-instance option.

    The default is FixEval's 1e-8 with a relative half of our own: whitespace-separated
    tokens, numeric tokens equal within 1e-8 absolute or relative (FixEval's threshold is
    absolute: ``rel_tol=0`` is its rule; README's "Comparison" says why). ``exact`` compares the text itself, after
    normalising line endings and dropping trailing whitespace at the very end.
    """

    mode: Literal["tokens", "exact"] = "tokens"
    #: Numbers are equal within this absolute *or* relative tolerance (0 = exact).
    abs_tol: float = 1e-8
    rel_tol: float = 1e-8
    #: Compare yes/no-style tokens (yes, no, true, false) case-insensitively.
    yes_no_case: bool = False
    #: Compare every token case-insensitively (CodeContests' rule).
    case_insensitive: bool = False


class Test(msgspec.Struct, frozen=True, omit_defaults=True, forbid_unknown_fields=True):
    """One hidden test: stdin/stdout (``input``/``output``) or a function call.

    A call test passes ``args`` and ``kwargs`` (decoded fresh from JSON for every
    call) to the instance's entry point and compares the returned value, normalised
    to JSON, with ``expected``.
    """

    id: str
    input: str | None = None
    output: str | None = None
    args: list[Any] | None = None
    kwargs: dict[str, Any] | None = None
    expected: Any | msgspec.UnsetType = msgspec.UNSET
    #: This test's CPU limit in seconds, when an importer derived one from the
    #: reference's time; None (absent from the file): the instance's ``time_limit``.
    time_limit: float | None = None
    #: The reference's CPU time on this test in milliseconds (its module and call,
    #: without the test's ~1 ms fixed cost: ``TestResult.work_ms``), as measured when
    #: the limit was derived (the sandbox's loop rule reads it); None: not measured.
    ref_ms: float | None = None

    __test__ = False  # not a pytest test class, despite the name

    @property
    def kind(self) -> Kind:
        return "stdio" if self.args is None and self.kwargs is None else "call"

    def bad_limits(self) -> list[str]:
        """The fields of this test's own limits whose value means nothing: ``time_limit``
        not a finite number of seconds in (0, 60], ``ref_ms`` not a finite time >= 0. One
        rule for every place that takes tests (a dataset or tests file, ``SandboxPool.run``),
        each naming the field in its own words."""
        def bad(value: object) -> bool:
            return (isinstance(value, bool) or not isinstance(value, (int, float))
                    or not math.isfinite(value))

        out = []
        if self.time_limit is not None and (bad(self.time_limit) or not 0 < self.time_limit <= 60):
            out.append("time_limit")
        if self.ref_ms is not None and (bad(self.ref_ms) or self.ref_ms < 0):
            out.append("ref_ms")
        return out


class Limits(msgspec.Struct, frozen=True, omit_defaults=True, forbid_unknown_fields=True):
    """Resource limits of one test run.

    CPU time decides TLE; the wall clock is a backstop for sleeping or blocked
    programs and defaults to ``3 * time_limit + 1`` seconds.
    """

    time_limit: float = 2.0
    memory_limit_mb: int = 256
    wall_limit: float | None = None
    #: Bytes of stdout kept; a program writing more gets OLE.
    output_limit: int = 8 * 1024 * 1024

    @property
    def wall_seconds(self) -> float:
        return self.wall_limit if self.wall_limit is not None else 3 * self.time_limit + 1


class Program(msgspec.Struct, frozen=True, omit_defaults=True, forbid_unknown_fields=True):
    """Source code to run: a whole stdin/stdout program or a module with an entry point."""

    source: str
    kind: Kind = "stdio"
    entry_point: str | None = None


class TestResult(msgspec.Struct, omit_defaults=True):
    """What one run of a program on one test produced.

    ``error`` holds the exception class (``ValueError``), the signal (``SIGSEGV``)
    or, for ``SF``, the sandbox's reason. ``value`` is the JSON-normalised return
    value of a call test. ``lines`` is the sorted set of executed lines of the
    program's own source, present only for traced runs.
    """

    id: str
    verdict: Verdict
    stdout: str = ""
    stderr: str = ""
    cpu_ms: float = 0.0
    wall_ms: float = 0.0
    memory_kb: int = 0
    error: str | None = None
    mismatch: Mismatch | None = None
    timeout: Literal["cpu", "wall"] | None = None
    lines: list[int] | None = None
    value: Any | msgspec.UnsetType = msgspec.UNSET
    #: the CPU time of the program's own module and call, without the test's fixed
    #: cost (fork, confinement, input, output): what a reference's ``Test.ref_ms`` is
    work_ms: float | None = None

    __test__ = False  # not a pytest test class, despite the name

    @property
    def passed(self) -> bool:
        return self.verdict is Verdict.AC


class Instance(msgspec.Struct, frozen=True, omit_defaults=True, forbid_unknown_fields=True):
    """One PAIR-BENCH instance ⟨problem, buggy program, hidden tests, reference⟩.

    ``problem`` is all the candidate ever sees of the task (it may contain public
    examples); ``tests`` and ``reference`` are hidden from it.
    """

    id: str
    problem: str
    buggy: str
    reference: str
    tests: list[Test]
    kind: Kind
    time_limit: float
    memory_limit_mb: int
    entry_point: str | None = None
    public_tests: list[Test] = []
    tags: list[str] = []
    source: str | None = None
    checker: Checker = Checker()
    #: Recorded feedback texts of the source dataset (FeedbackEval), replayable.
    feedback: dict[str, Any] = {}
    #: Project context the candidate is shown beside the problem: "code elements such as
    #: types, APIs, variables, and consts defined outside the function under generation"
    #: (FeedbackEval, seed 001, Fig. 5; its CoderEval rows carry it, HumanEval's have none).
    context: str = ""
    #: Anything else an importer keeps (difficulty, rating, upstream ids).
    meta: dict[str, Any] = {}

    @property
    def limits(self) -> Limits:
        return Limits(time_limit=self.time_limit, memory_limit_mb=self.memory_limit_mb)

    def program(self, source: str) -> Program:
        """A :class:`Program` of this instance's kind running ``source``."""
        return Program(source=source, kind=self.kind, entry_point=self.entry_point)


class Message(msgspec.Struct, frozen=True):
    """One chat message, OpenAI chat-completions style."""

    role: Literal["system", "user", "assistant"]
    content: str


class Usage(msgspec.Struct, frozen=True, omit_defaults=True):
    """Token usage of one model call, as reported by the endpoint (or estimated)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class Completion(msgspec.Struct, frozen=True, omit_defaults=True):
    """A model's answer to one request, with what it cost.

    ``attempts`` counts HTTP attempts including retries; ``latency_ms`` spans the
    whole call, back-off included.
    """

    text: str
    model: str
    usage: Usage = Usage()
    latency_ms: float = 0.0
    attempts: int = 1
    finish_reason: str | None = None
