"""The labelled hint set of the leakage validator, and precision and recall on it.

A labelled set (``tests/data/labelled_hints.jsonl``) is JSON Lines of two kinds:
``{"kind": "task", "id", "bug", "problem", "program", "reference"}`` (a buggy program and its
statement, what a hint is about; the optional correct ``reference`` is given to the validator
as hidden data, as a run gives it) and ``{"kind": "hint", "id", "task", "level", "text",
"broken", "source"}``: a hint written for ``level`` and every Table II boundary it
breaks (:mod:`.boundaries`; empty: the hint may be given at its level). A label may
only name a boundary the level reserves.

Scores (:func:`score`) count, per boundary, a hint as a true positive when its label
and the prediction both name the boundary, a false positive when only the prediction
does, a false negative when only the label does; ``overall`` asks only whether the
hint is rejected (label non-empty vs prediction non-empty). Precision is TP/(TP+FP),
recall TP/(TP+FN), None when the denominator is 0. Pure: decoding and arithmetic.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

import msgspec

from ..core.errors import ConfigError
from .boundaries import BOUNDARY_NAMES, BoundaryName, reserved
from .evidence import Evidence
from .leakage import HiddenData, JudgeVerdict, rule_reasons, validate_hint

__all__ = [
    "LabelledHint",
    "LabelledSet",
    "LabelledTask",
    "Score",
    "judge_prediction",
    "parse_labelled_set",
    "rule_prediction",
    "validator_prediction",
    "score",
]


class LabelledTask(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind", tag="task",
                   forbid_unknown_fields=True):
    """A buggy program and its problem statement: what the hints are about."""

    id: str
    problem: str
    program: str
    bug: str = ""
    #: the correct program (hidden data of the validator: the candidate never sees it)
    reference: str = ""


class LabelledHint(msgspec.Struct, frozen=True, kw_only=True, tag_field="kind", tag="hint",
                   forbid_unknown_fields=True):
    """A hint written for ``level`` and the Table II boundaries it breaks."""

    id: str
    task: str
    level: int
    text: str
    broken: list[BoundaryName] = []
    source: str = "written"


class LabelledSet(msgspec.Struct, frozen=True, kw_only=True):
    tasks: dict[str, LabelledTask]
    hints: list[LabelledHint]


_ROW: Final = msgspec.json.Decoder(LabelledTask | LabelledHint)


def parse_labelled_set(lines: Iterable[bytes | str], where: str = "labelled set") -> LabelledSet:
    """Decode and check a labelled set (ConfigError naming the line on any problem)."""
    tasks: dict[str, LabelledTask] = {}
    hints: list[LabelledHint] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = _ROW.decode(line)
        except msgspec.DecodeError as exc:
            raise ConfigError(f"{where}:{number}: {exc}") from None
        if isinstance(row, LabelledTask):
            if row.id in tasks:
                raise ConfigError(f"{where}:{number}: task {row.id!r} twice")
            tasks[row.id] = row
            continue
        if row.task not in tasks:
            raise ConfigError(f"{where}:{number}: hint {row.id!r} is about an unknown task {row.task!r} "
                              "(a task line must come first)")
        if not 1 <= row.level <= 6:
            raise ConfigError(f"{where}:{number}: hint {row.id!r} has level {row.level} (1..6)")
        allowed = set(row.broken) - {b.name for b in reserved(row.level)}
        if allowed:
            raise ConfigError(f"{where}:{number}: hint {row.id!r} cannot break {sorted(allowed)} at "
                              f"L{row.level}: that level may reveal it")
        hints.append(row)
    ids = [h.id for h in hints]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise ConfigError(f"{where}: hint ids used twice: {', '.join(twice)}")
    if not hints:
        raise ConfigError(f"{where}: no hints")
    return LabelledSet(tasks=tasks, hints=hints)


def rule_prediction(hint: LabelledHint, task: LabelledTask) -> frozenset[str]:
    """The Table II boundaries the hand-written rules alone reject ``hint`` for (``other`` for any other rule)."""
    return _boundaries(rule_reasons(hint.text, hint.level, Evidence(problem=task.problem), task.program,
                                    _hidden(task.reference)))


def validator_prediction(hint: LabelledHint, task: LabelledTask) -> frozenset[str]:
    """The Table II boundaries the validator's default (the learned reading with the rules' exact checks,
    :func:`.leakage.validate_hint`) rejects ``hint`` for (``other`` for any other rule)."""
    return _boundaries(validate_hint(hint.text, hint.level, Evidence(problem=task.problem), task.program,
                                     _hidden(task.reference)))


def _boundaries(reasons: list[str]) -> frozenset[str]:
    names = {reason.split(":", 1)[0] for reason in reasons}
    return frozenset({n for n in names if n in BOUNDARY_NAMES}
                     | ({"other"} if names - set(BOUNDARY_NAMES) else set()))


@functools.lru_cache(maxsize=256)
def _hidden(reference: str) -> HiddenData:
    """A task's hidden data, one per reference (its quote index is built once)."""
    return HiddenData(reference=reference)


def judge_prediction(verdict: JudgeVerdict | None) -> frozenset[str]:
    """What a judge's verdict rejects for (``other`` when it names no known boundary)."""
    if verdict is None or verdict.verdict != "reject":
        return frozenset()
    return frozenset({verdict.boundary or "other"})


class Score(msgspec.Struct, frozen=True, kw_only=True):
    """Counts for one boundary (or ``overall``) and what they give."""

    name: str
    #: hints whose label names it (overall: hints breaking any boundary)
    positives: int
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


def score(hints: Sequence[LabelledHint], predicted: Mapping[str, frozenset[str]]) -> list[Score]:
    """Per-boundary and overall counts of ``predicted`` (hint id → boundaries) against the labels."""
    scores: list[Score] = []
    names: tuple[str, ...] = (*BOUNDARY_NAMES, "overall")
    for name in names:
        tp = fp = fn = positives = 0
        for hint in hints:
            got = predicted.get(hint.id, frozenset())
            want: bool
            said: bool
            if name == "overall":
                want, said = bool(hint.broken), bool(got)
            else:
                want, said = name in hint.broken, name in got
            positives += want
            tp += want and said
            fp += said and not want
            fn += want and not said
        scores.append(Score(name=name, positives=positives, tp=tp, fp=fp, fn=fn))
    return scores

