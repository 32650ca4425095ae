"""Repair-precision metrics (PDB, FixEval): how a repair edits the buggy program.

This module owns the definitions of seed 003 (PDB: edit-level precision and recall,
regeneration versus precise debugging) and seed 004 (FixEval: verdict mix with CE, exact
match, BLEU), as DESIGN.md section 4 asks for them beside the execution metrics;
``docs/PRECISION.md`` states every definition and edge case in words. Pass rates say
*whether* a repair works; these numbers say *how*: a model that rewrites the whole
program to fix a one-line bug passes as often as one that edits that line, and only an
edit-level measure tells them apart.

Everything is measured against the instance's buggy program, in its line numbers:

* :func:`changed_lines` diffs two programs line by line (whitespace-normalised) and
  returns the buggy lines an edit replaces or deletes plus its insertion points;
* :func:`edit_precision` / :func:`edit_recall` compare the candidate's edit with the
  reference's edit, with a line tolerance; :func:`regenerated` flags wholesale rewrites;
* :func:`exact_match` and :func:`bleu` / :func:`corpus_bleu` compare code tokens
  (:func:`code_tokens`) with the reference (defined in :mod:`.bleu`, re-exported);
* :func:`verdict_mix` turns a turn's verdict counts into shares, moving the RE tests of
  a program that does not compile (:func:`compiles`) to CE;
* :func:`turn_precision` scores one :class:`~..runlog.records.TurnRecord`, and
  :func:`precision_by_model` averages finished episodes per (model, protocol) group.

Pure and synchronous like the rest of the protocol core: no I/O, no clock, no
randomness. An undefined value (an empty denominator) is ``None`` and is left out of
every average; sums use :func:`math.fsum`.
"""

from __future__ import annotations

import bisect
import difflib
import math
import warnings
from collections.abc import Iterable, Mapping
from typing import Final

import msgspec

from ..core.errors import ConfigError
from ..core.types import Instance
from ..protocol.linediff import source_lines
from ..runlog.records import EpisodeRecord, Record, TurnRecord
from .bleu import (
    BLEU_ORDER,
    BleuStats,
    bleu,
    bleu_from_stats,
    code_tokens,
    corpus_bleu,
    exact_match,
    pair_stats,
)
from .metrics import group_key

__all__ = [
    "BLEU_ORDER",
    "VERDICT_KEYS",
    "EditSet",
    "PrecisionSummary",
    "TurnPrecision",
    "bleu",
    "changed_lines",
    "code_tokens",
    "compiles",
    "corpus_bleu",
    "edit_precision",
    "edit_recall",
    "exact_match",
    "precision_by_model",
    "regenerated",
    "turn_precision",
    "verdict_mix",
]

#: The verdicts of a mix, in table order: the sandbox's seven plus FixEval's CE.
VERDICT_KEYS: Final = ("AC", "WA", "TLE", "RE", "MLE", "CE", "OLE", "SF")



# --------------------------------------------------------------------------- line edits


class EditSet(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Where an edit touches its base program, in the base's 1-based line numbers.

    ``changed`` holds the base lines the edit replaces or deletes; ``inserted`` the
    insertion points, each the number of the non-blank base line the inserted lines
    precede (one past the last non-blank line for an insertion at the end). ``lines``
    is the number of non-blank base lines, the denominator of :func:`regenerated`.
    """

    changed: frozenset[int]
    inserted: frozenset[int]
    lines: int

    @property
    def points(self) -> frozenset[int]:
        """Every base position the edit touches: changed lines and insertion points."""
        return self.changed | self.inserted

    @property
    def changed_share(self) -> float | None:
        """The share of non-blank base lines replaced or deleted; None for an empty base."""
        return len(self.changed) / self.lines if self.lines else None


def _keyed(text: str) -> tuple[list[int], list[str]]:
    """The non-blank lines' numbers and comparison keys (the line without trailing whitespace)."""
    numbers: list[int] = []
    keys: list[str] = []
    for number, line in enumerate(source_lines(text), start=1):
        key = line.rstrip()
        if key:
            numbers.append(number)
            keys.append(key)
    return numbers, keys


def changed_lines(base: str, new: str) -> EditSet:
    """The line-level edit that turns ``base`` into ``new``, located in ``base``.

    Lines are compared after dropping trailing whitespace (spaces, tabs, ``\\r``, form
    feeds), and blank lines are left out of the comparison altogether, so adding,
    removing or resizing a run of blank lines is never an edit. Leading whitespace is
    compared exactly: re-indenting a line changes it, since indentation is Python syntax.
    The diff is :class:`difflib.SequenceMatcher`'s opcodes with ``autojunk=False`` (its
    popular-line heuristic would make long programs' diffs depend on line frequency).
    """
    numbers, base_keys = _keyed(base)
    _, new_keys = _keyed(new)
    end = numbers[-1] + 1 if numbers else 1
    changed: set[int] = set()
    inserted: set[int] = set()
    matcher = difflib.SequenceMatcher(None, base_keys, new_keys, autojunk=False)
    for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            changed.update(numbers[i1:i2])
        elif tag == "insert":
            inserted.add(numbers[i1] if i1 < len(numbers) else end)
    return EditSet(changed=frozenset(changed), inserted=frozenset(inserted), lines=len(numbers))


def _check_tolerance(tolerance: int) -> None:
    if tolerance < 0:
        raise ValueError(f"tolerance must be >= 0 lines, got {tolerance}")


def _near_share(points: frozenset[int], others: frozenset[int], tolerance: int) -> float | None:
    """The share of ``points`` within ``tolerance`` lines of some point of ``others``."""
    if not points:
        return None
    ordered = sorted(others)
    near = 0
    for point in points:
        at = bisect.bisect_left(ordered, point - tolerance)
        if at < len(ordered) and ordered[at] <= point + tolerance:
            near += 1
    return near / len(points)


def _precision(candidate: EditSet, reference: EditSet, tolerance: int) -> float | None:
    return _near_share(candidate.points, reference.points, tolerance)


def _recall(candidate: EditSet, reference: EditSet, tolerance: int) -> float | None:
    return _near_share(reference.points, candidate.points, tolerance)


def edit_precision(buggy: str, candidate: str, reference: str, tolerance: int = 1) -> float | None:
    """How much of what the candidate changed was needed (PDB's edit-level precision).

    The share of the candidate's edit points in ``buggy`` (changed lines and insertion
    points, :func:`changed_lines`) that lie within ``tolerance`` lines of a point the
    reference's edit also touches. ``None`` when the candidate changed nothing; 0 when
    the reference changes nothing but the candidate does.
    """
    _check_tolerance(tolerance)
    return _precision(changed_lines(buggy, candidate), changed_lines(buggy, reference), tolerance)


def edit_recall(buggy: str, candidate: str, reference: str, tolerance: int = 1) -> float | None:
    """How much of the needed edit the candidate made: the converse of :func:`edit_precision`.

    The share of the reference's edit points within ``tolerance`` lines of a point the
    candidate touched; ``None`` when the reference changes nothing.
    """
    _check_tolerance(tolerance)
    return _recall(changed_lines(buggy, candidate), changed_lines(buggy, reference), tolerance)


def _check_threshold(threshold: float) -> None:
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold}")


def _is_regenerated(edit: EditSet, threshold: float) -> bool:
    share = edit.changed_share
    return share is not None and share > threshold


def regenerated(buggy: str, candidate: str, threshold: float = 0.5) -> bool:
    """True when the candidate replaced or deleted more than ``threshold`` of the buggy lines.

    Counted over the buggy program's non-blank lines; insertions alone never make a
    regeneration (they leave every buggy line in place). An empty buggy program is
    never regenerated.
    """
    _check_threshold(threshold)
    return _is_regenerated(changed_lines(buggy, candidate), threshold)


# --------------------------------------------------------------------------- verdicts


def compiles(program: str) -> bool:
    """Whether Python compiles ``program`` (FixEval's compilation check, without running it).

    ``compile(program, "<candidate>", "exec")`` failing with SyntaxError (IndentationError
    and TabError included), ValueError (null bytes on some Python versions), or
    RecursionError / MemoryError (nesting too deep for the parser or compiler) is a compile
    error: the sandboxed interpreter fails the same way before running anything. Warnings are
    silenced for the call: under ``-W error`` a SyntaxWarning would otherwise turn a
    program that runs into a "compile error".
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compile(program, "<candidate>", "exec", dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    return True


def _mix(verdicts: Mapping[str, int], compiled: bool) -> dict[str, float]:
    counts = dict.fromkeys(VERDICT_KEYS, 0)
    for key, count in verdicts.items():
        if key not in counts:
            raise ValueError(f"unknown verdict {key!r}; expected one of {', '.join(VERDICT_KEYS)}")
        if count < 0:
            raise ValueError(f"verdict {key!r} has a negative count {count}")
        counts[key] += count
    total = sum(counts.values())
    if total == 0:
        return {}
    if not compiled:
        counts["CE"] += counts["RE"]
        counts["RE"] = 0
    return {key: counts[key] / total for key in VERDICT_KEYS}


def verdict_mix(record: TurnRecord) -> dict[str, float]:
    """The shares of each verdict over a turn's hidden tests, with FixEval's CE.

    Keys are :data:`VERDICT_KEYS` in order and the shares sum to 1. When the turn's
    program does not compile (:func:`compiles`) every RE test is counted as CE: the
    sandbox reports a syntax error as a runtime error on each test. A turn without
    verdict counts gives ``{}``, left out of every average.
    """
    return _mix(record.verdicts, compiles(record.program))


# --------------------------------------------------------------------------- per turn


class TurnPrecision(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The repair-precision metrics of one turn's program against its instance."""

    episode_id: str
    instance_id: str
    model: str
    protocol: str
    run: int
    turn: int
    #: :func:`edit_precision`; None when the program equals the buggy one (whitespace aside)
    edit_precision: float | None
    #: :func:`edit_recall`; None when the reference equals the buggy program
    edit_recall: float | None
    #: share of the buggy program's non-blank lines replaced or deleted
    changed_share: float | None
    regenerated: bool
    exact_match: bool
    bleu: float
    compiles: bool
    #: :func:`verdict_mix` of the turn
    verdicts: dict[str, float]


class _Reference(msgspec.Struct, frozen=True):
    """An instance's reference edit and tokens, computed once per instance."""

    edit: EditSet
    tokens: list[str]


def _reference(instance: Instance) -> _Reference:
    return _Reference(
        changed_lines(instance.buggy, instance.reference), code_tokens(instance.reference)
    )


class _ProgramScore(msgspec.Struct, frozen=True):
    """What a program scores against its instance, whoever wrote it and whenever."""

    edit_precision: float | None
    edit_recall: float | None
    changed_share: float | None
    regenerated: bool
    exact_match: bool
    compiles: bool
    stats: BleuStats


def _program_score(program: str, instance: Instance, reference: _Reference, tolerance: int,
                   threshold: float) -> _ProgramScore:
    edit = changed_lines(instance.buggy, program)
    tokens = code_tokens(program)
    return _ProgramScore(
        edit_precision=_precision(edit, reference.edit, tolerance),
        edit_recall=_recall(edit, reference.edit, tolerance),
        changed_share=edit.changed_share,
        regenerated=_is_regenerated(edit, threshold),
        exact_match=tokens == reference.tokens,
        compiles=compiles(program),
        stats=pair_stats(tokens, reference.tokens),
    )


def _score(
    record: TurnRecord, instance: Instance, reference: _Reference, tolerance: int, threshold: float,
    memo: dict[tuple[str, str], _ProgramScore] | None = None,
) -> TurnPrecision:
    """``memo`` keeps each (instance, program)'s score: a sweep's turns, runs and protocols
    repeat the same programs many times."""
    key = (instance.id, record.program)
    done = memo.get(key) if memo is not None else None
    if done is None:
        done = _program_score(record.program, instance, reference, tolerance, threshold)
        if memo is not None:
            memo[key] = done
    return TurnPrecision(
        episode_id=record.episode_id,
        instance_id=record.instance_id,
        model=record.model,
        protocol=record.protocol,
        run=record.run,
        turn=record.turn,
        edit_precision=done.edit_precision,
        edit_recall=done.edit_recall,
        changed_share=done.changed_share,
        regenerated=done.regenerated,
        exact_match=done.exact_match,
        bleu=bleu_from_stats([done.stats]),
        compiles=done.compiles,
        verdicts=_mix(record.verdicts, done.compiles),
    )


def turn_precision(
    record: TurnRecord, instance: Instance, *, tolerance: int = 1, threshold: float = 0.5
) -> TurnPrecision:
    """Every repair-precision metric of one turn record's program."""
    _check_tolerance(tolerance)
    _check_threshold(threshold)
    if record.instance_id != instance.id:
        raise ValueError(
            f"record of instance {record.instance_id!r} scored against {instance.id!r}"
        )
    return _score(record, instance, _reference(instance), tolerance, threshold)


# --------------------------------------------------------------------------- per model


class PrecisionSummary(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The repair-precision metrics of one (model, protocol) group.

    Turn-level values (edit precision and recall, regeneration, the overall verdict mix)
    are averaged over turns >= 1 within each episode, then across episodes, like the
    PAIR-BENCH turn metrics. Exact match and BLEU read each episode's final program.
    """

    #: finished episodes of the group
    episodes: int
    #: their turns >= 1 (the hinted or feedback turns)
    turns: int
    edit_precision: float | None
    edit_recall: float | None
    regeneration_rate: float | None
    exact_match_rate: float
    #: mean sentence-level BLEU of the final programs
    bleu: float
    #: corpus-level BLEU of the final programs (FixEval's aggregate)
    corpus_bleu: float
    #: mean verdict mix over turns >= 1 (episode means, then across episodes)
    verdict_mix: dict[str, float]
    #: turn index (0 included) -> verdict mix averaged over the episodes that reached it
    verdict_mix_by_turn: dict[int, dict[str, float]]


def _mean(values: Iterable[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return math.fsum(present) / len(present) if present else None


def _mean_mix(mixes: Iterable[dict[str, float]]) -> dict[str, float]:
    present = [mix for mix in mixes if mix]
    if not present:
        return {}
    return {key: math.fsum(mix[key] for mix in present) / len(present) for key in VERDICT_KEYS}


def _finished(
    records: Iterable[Record], with_protocol: bool | None
) -> tuple[list[list[TurnRecord]], bool]:
    """Turn lists (by turn, the last record of a turn wins) of ``done`` episodes."""
    turns: dict[str, dict[int, TurnRecord]] = {}
    ends: dict[str, EpisodeRecord] = {}
    for record in records:
        if isinstance(record, TurnRecord):
            turns.setdefault(record.episode_id, {})[record.turn] = record
        else:
            ends[record.episode_id] = record
    protocols = {record.protocol for by_turn in turns.values() for record in by_turn.values()}
    use_protocol = len(protocols) > 1 if with_protocol is None else with_protocol
    episodes = [
        [by_turn[t] for t in sorted(by_turn)]
        for episode_id, by_turn in sorted(turns.items())
        if episode_id in ends and ends[episode_id].status == "done"
    ]
    return episodes, use_protocol


def _summarise(
    scored: list[list[TurnPrecision]], finals: list[BleuStats]
) -> PrecisionSummary:
    hinted = [[turn for turn in episode if turn.turn >= 1] for episode in scored]
    by_turn: dict[int, list[dict[str, float]]] = {}
    for episode in scored:
        for turn in episode:
            by_turn.setdefault(turn.turn, []).append(turn.verdicts)
    mixes_by_turn = {t: _mean_mix(by_turn[t]) for t in sorted(by_turn)}
    last = [episode[-1] for episode in scored]
    return PrecisionSummary(
        episodes=len(scored),
        turns=sum(len(turns) for turns in hinted),
        edit_precision=_mean(_mean(t.edit_precision for t in turns) for turns in hinted),
        edit_recall=_mean(_mean(t.edit_recall for t in turns) for turns in hinted),
        regeneration_rate=_mean(
            (sum(t.regenerated for t in turns) / len(turns) if turns else None) for turns in hinted
        ),
        exact_match_rate=sum(t.exact_match for t in last) / len(last),
        bleu=math.fsum(t.bleu for t in last) / len(last),
        corpus_bleu=bleu_from_stats(finals),
        verdict_mix=_mean_mix(_mean_mix(t.verdicts for t in turns) for turns in hinted),
        verdict_mix_by_turn={t: mix for t, mix in mixes_by_turn.items() if mix},
    )


def precision_by_model(
    records: Iterable[Record],
    instances: Mapping[str, Instance],
    *,
    tolerance: int = 1,
    threshold: float = 0.5,
    with_protocol: bool | None = None,
) -> dict[str, PrecisionSummary]:
    """:class:`PrecisionSummary` per :func:`~.metrics.group_key` over finished episodes.

    Only episodes whose :class:`~..runlog.records.EpisodeRecord` says ``done`` count; errored
    and unfinished ones are left out, as in the leaderboard. The protocol is part of the
    key when the records hold several protocols (``with_protocol`` forces it on or off).
    Raises :class:`~..core.errors.ConfigError` for a record whose instance is not in
    ``instances``.
    """
    _check_tolerance(tolerance)
    _check_threshold(threshold)
    episodes, use_protocol = _finished(records, with_protocol)
    references: dict[str, _Reference] = {}
    scored: dict[str, list[list[TurnPrecision]]] = {}
    finals: dict[str, list[BleuStats]] = {}
    memo: dict[tuple[str, str], _ProgramScore] = {}
    for episode in episodes:
        first = episode[0]
        instance = instances.get(first.instance_id)
        if instance is None:
            raise ConfigError(
                f"episode {first.episode_id!r} is on instance {first.instance_id!r}, "
                "which is not in the dataset"
            )
        if first.instance_id not in references:
            references[first.instance_id] = _reference(instance)
        reference = references[first.instance_id]
        key = group_key(first.model, first.protocol if use_protocol else None)
        scored.setdefault(key, []).append(
            [_score(record, instance, reference, tolerance, threshold, memo) for record in episode]
        )
        finals.setdefault(key, []).append(memo[(instance.id, episode[-1].program)].stats)
    return {key: _summarise(scored[key], finals[key]) for key in sorted(scored)}
