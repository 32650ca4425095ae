"""Failure signatures and scenarios: grouping the currently failing hidden tests.

PAIR-BENCH (seed 000, Section IV-A) gives every failing test j a signature
σ(j) = (reference trace, expected-output shape, candidate failure type) and groups
tests with equal signatures into *scenarios*, the regions a hint targets. To avoid
fragmenting the failure space, grouping backs off hierarchically: full signature →
(shape, type) → type alone, whenever there are more than ``max_scenarios`` (K_max)
groups or their median size is below ``min_size`` (s_min). The coarsest level is
final even if it still breaks the rule.

This module owns the failure types (runtime errors named from the closed vocabulary of
:mod:`..core.failures`), the signature, the back-off, the
deterministic scenario order (size desc, trace coverage desc, id asc) and seeded
sampling of representative tests. It is pure: no I/O, and randomness only from a
``random.Random`` built from a seed the caller passes.

A scenario's ``id`` is a short hash of its grouping level and key, so the same region
gets the same id on every turn and in every run; its test set is carried beside it.
"""

from __future__ import annotations

import hashlib
import random
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Final, Literal

import msgspec

from ..core.errors import ConfigError
from ..core.failures import runtime_word
from ..core.types import TestResult, Verdict
from .shapes import Shape

__all__ = [
    "LEVELS",
    "Grouping",
    "GroupingLevel",
    "Scenario",
    "ScenarioConfig",
    "coarser",
    "failure_type",
    "group_failures",
    "keys_compatible",
    "sample_representatives",
    "scenario_id",
    "signature",
    "with_tests",
]

GroupingLevel = Literal["full", "shape_type", "type"]

#: Grouping levels from finest to coarsest.
LEVELS: Final[tuple[GroupingLevel, ...]] = ("full", "shape_type", "type")

_MISMATCH_TYPES: Final = {"lines": "wrong_lines", "tokens": "wrong_tokens", "value": "wrong_value"}


class ScenarioConfig(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Grouping parameters.

    ``max_scenarios`` is K_max and ``min_size`` is s_min of the back-off rule;
    ``representatives`` is m, the number of tests sampled to ground a hint. The
    defaults (8, 3, 3) keep a typical 10-50-test suite at a handful of scenarios of a
    few tests each, so every hint is grounded in several tests that share a region.
    """

    max_scenarios: int = 8
    min_size: float = 3
    representatives: int = 3

    def __post_init__(self) -> None:
        if self.max_scenarios < 1:
            raise ConfigError(f"max_scenarios (K_max) must be >= 1, got {self.max_scenarios}")
        if self.min_size < 1:
            raise ConfigError(f"min_size (s_min) must be >= 1, got {self.min_size}")
        if self.representatives < 1:
            raise ConfigError(f"representatives (m) must be >= 1, got {self.representatives}")


class Scenario(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A group of failing tests sharing one signature key at one grouping level.

    The key is ``(trace, shape, failure)`` with the parts the level drops set to
    ``None``: ``full`` keeps all three, ``shape_type`` drops the trace, ``type`` keeps
    only the failure type. ``coverage`` is the number of distinct reference lines the
    tests' traces cover, the first tie-breaker after size.
    """

    id: str
    level: GroupingLevel
    failure: str
    shape: Shape | None = None
    trace: tuple[int, ...] | None = None
    tests: tuple[str, ...] = ()
    coverage: int = 0

    @property
    def key(self) -> tuple[tuple[int, ...] | None, Shape | None, str]:
        return (self.trace, self.shape, self.failure)

    @property
    def size(self) -> int:
        return len(self.tests)


class Grouping(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The scenarios of one failing set, in selection order, and the level used."""

    level: GroupingLevel
    scenarios: tuple[Scenario, ...]


def failure_type(result: TestResult) -> str:
    """The candidate failure type of a failing test result.

    ``timeout`` (TLE), ``runtime:<word>`` (RE; the word is from the closed vocabulary of
    :mod:`..core.failures`, since the type reaches feedback prompts and hints: a builtin
    exception, ``ProgramDefinedException``, a signal, or the sandbox's own), ``memory`` (MLE),
    ``output_limit`` (OLE), ``wrong_lines`` / ``wrong_tokens`` / ``wrong_value`` (WA by
    its mismatch; a WA without one, e.g. a call test, is ``wrong_value``) and
    ``sandbox_fault`` (SF). A passing result has no failure type.
    """
    verdict = result.verdict
    if verdict is Verdict.AC:
        raise ConfigError(f"test {result.id!r} passed; only failing tests have a failure type")
    if verdict is Verdict.TLE:
        return "timeout"
    if verdict is Verdict.MLE:
        return "memory"
    if verdict is Verdict.OLE:
        return "output_limit"
    if verdict is Verdict.SF:
        return "sandbox_fault"
    if verdict is Verdict.RE:
        # never the error text itself: a name the program chose would reach every hint
        return f"runtime:{runtime_word(result.error)}"
    return _MISMATCH_TYPES.get(result.mismatch or "value", "wrong_value")


def signature(
    result: TestResult, trace: Iterable[int], shape: Shape
) -> tuple[tuple[int, ...], Shape, str]:
    """σ(j) = (sorted distinct reference trace lines, expected-output shape, failure type)."""
    return (tuple(sorted(set(trace))), shape, failure_type(result))


def _project(
    key: tuple[tuple[int, ...] | None, Shape | None, str], level: GroupingLevel
) -> tuple[tuple[int, ...] | None, Shape | None, str]:
    trace, shape, failure = key
    if level == "full":
        return key
    if level == "shape_type":
        return (None, shape, failure)
    return (None, None, failure)


def scenario_id(level: GroupingLevel, key: tuple[tuple[int, ...] | None, Shape | None, str]) -> str:
    """A 12-hex-digit id from the level and the key: stable across turns, runs and machines."""
    trace, shape, failure = _project(key, level)
    text = "|".join(
        (level, "" if trace is None else ",".join(map(str, trace)), shape or "", failure)
    )
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def coarser(a: GroupingLevel, b: GroupingLevel) -> GroupingLevel:
    """The coarser of two grouping levels."""
    return LEVELS[max(LEVELS.index(a), LEVELS.index(b))]


def keys_compatible(a: Scenario, b: Scenario) -> bool:
    """Whether two scenarios' keys agree once both are cut down to the coarser level.

    Equal ids imply compatible keys; compatible keys at different levels mean one
    scenario is a refinement of (or equal to) the other's region.
    """
    level = coarser(a.level, b.level)
    return _project(a.key, level) == _project(b.key, level)


def _groups(
    signatures: Mapping[str, tuple[tuple[int, ...], Shape, str]], level: GroupingLevel
) -> dict[tuple[tuple[int, ...] | None, Shape | None, str], list[str]]:
    groups: dict[tuple[tuple[int, ...] | None, Shape | None, str], list[str]] = {}
    for test_id in sorted(signatures):
        groups.setdefault(_project(signatures[test_id], level), []).append(test_id)
    return groups


def _too_fragmented(sizes: Sequence[int], config: ScenarioConfig) -> bool:
    return len(sizes) > config.max_scenarios or statistics.median(sizes) < config.min_size


def group_failures(
    failing: Iterable[str],
    results: Mapping[str, TestResult],
    traces: Mapping[str, Sequence[int]],
    shapes: Mapping[str, Shape],
    config: ScenarioConfig | None = None,
) -> Grouping:
    """Group the failing tests into scenarios, backing off while too fragmented.

    ``traces`` maps a test id to the reference lines executed on it (a missing test
    has an empty trace); ``results`` and ``shapes`` must cover every failing test.
    The returned scenarios partition the failing set exactly and come in selection
    order: most tests first, then most trace coverage, then id.
    """
    config = config or ScenarioConfig()
    signatures: dict[str, tuple[tuple[int, ...], Shape, str]] = {}
    for test_id in set(failing):
        if test_id not in results:
            raise ConfigError(f"failing test {test_id!r} has no result")
        if test_id not in shapes:
            raise ConfigError(f"failing test {test_id!r} has no expected-output shape")
        signatures[test_id] = signature(results[test_id], traces.get(test_id, ()), shapes[test_id])
    if not signatures:
        return Grouping(level="full", scenarios=())
    level: GroupingLevel = "full"
    groups = _groups(signatures, level)
    for coarse in LEVELS[1:]:
        if not _too_fragmented([len(tests) for tests in groups.values()], config):
            break
        level, groups = coarse, _groups(signatures, coarse)
    scenarios = [
        Scenario(
            id=scenario_id(level, key),
            level=level,
            failure=key[2],
            shape=key[1],
            trace=key[0],
            tests=tuple(tests),
            coverage=_coverage(tests, traces),
        )
        for key, tests in groups.items()
    ]
    scenarios.sort(key=lambda s: (-s.size, -s.coverage, s.id))
    return Grouping(level=level, scenarios=tuple(scenarios))


def _coverage(tests: Iterable[str], traces: Mapping[str, Sequence[int]]) -> int:
    lines: set[int] = set()
    for test_id in tests:
        lines.update(traces.get(test_id, ()))
    return len(lines)


def with_tests(
    scenario: Scenario, tests: Iterable[str], traces: Mapping[str, Sequence[int]]
) -> Scenario:
    """The same scenario (same id and key) restricted to ``tests``, coverage recomputed."""
    chosen = tuple(sorted(set(tests)))
    return msgspec.structs.replace(scenario, tests=chosen, coverage=_coverage(chosen, traces))


def sample_representatives(scenario: Scenario, m: int, seed: int) -> tuple[str, ...]:
    """Up to ``m`` of the scenario's tests, picked by a generator seeded with ``seed``.

    The draw depends only on the seed, the scenario id and its (sorted) test set, so
    the same seed gives the same picks in every run and process. Returned sorted.
    """
    if m < 1:
        raise ConfigError(f"m must be >= 1, got {m}")
    tests = sorted(scenario.tests)
    if len(tests) <= m:
        return tuple(tests)
    rng = random.Random(f"{seed}|{scenario.id}")
    return tuple(sorted(rng.sample(tests, m)))
