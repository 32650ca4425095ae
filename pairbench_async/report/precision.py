"""Repair-precision metrics (PDB, FixEval) per turn and per model: how a repair edits the program.

This module owns the scoring of seed 003 (PDB: bug-level recall and edit-level precision,
regeneration versus precise debugging) and seed 004 (FixEval: verdict mix with CE, exact
match with and without comments, BLEU, CodeBLEU), as DESIGN.md section 4 asks for them
beside the execution metrics;
``docs/PRECISION.md`` states every definition and edge case in words. The measures
themselves are defined beside it: line edits in :mod:`.edits`, the verdict mix in
:mod:`.verdicts`, code tokens, exact match and BLEU in :mod:`.bleu` (re-exported here), CodeBLEU's arithmetic in
:mod:`.codebleu` (its parts come from a scorer the caller passes in, normally
:func:`.codebleu_package.corpus_codebleu`, so that this module stays pure).
This module applies them to records:

* :func:`turn_precision` scores one :class:`~..runlog.records.TurnRecord` against its
  instance (each (instance, program) scored once per sweep);
* :func:`precision_by_model` averages finished episodes per (model, protocol) group;
* PDB's own two measures, bug-level recall and fix-verified edit-level precision, are taken
  on each finished episode's **final** program (:mod:`.bugs`): :func:`pdb_programs` lists the
  programs whose verdicts they need beyond those the records already hold, and
  ``precision_by_model(..., bug_verdicts=...)`` scores with the caller's verdicts (the CLI
  runs them in the sandbox). The per-turn ``edit_precision`` / ``edit_recall`` are line
  proximity to the reference's edit, not PDB's definitions.

Pure and synchronous like the rest of the protocol core: no I/O, no clock, no
randomness. An undefined value (an empty denominator) is ``None`` and is left out of
every average; sums use :func:`math.fsum`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

import msgspec

from ..core.errors import ConfigError
from ..core.types import Instance
from ..runlog.records import EpisodeRecord, Record, TurnRecord
from .bleu import (
    BLEU_ORDER,
    BleuStats,
    bleu,
    bleu_from_stats,
    code_only_tokens,
    code_tokens,
    corpus_bleu,
    exact_match,
    exact_match_code,
    pair_stats,
)
from .bugs import BugScore, Verdict, bug_programs, canonical, score_bugs
from .codebleu import CodeBleu
from .edits import (
    EditSet,
    changed_lines,
    check_threshold,
    check_tolerance,
    is_regenerated,
    set_precision,
    set_recall,
)
from .metrics import group_key
from .trajectory_metrics import mean_of_defined
from .verdicts import VERDICT_KEYS, compiles, verdict_shares

__all__ = [
    "BLEU_ORDER",
    "CodeBleuScorer",
    "PrecisionSummary",
    "TurnPrecision",
    "bleu",
    "code_tokens",
    "corpus_bleu",
    "exact_match",
    "exact_match_code",
    "NAIVE_COPY",
    "naive_copy",
    "pdb_programs",
    "precision_by_model",
    "verdict_key",
    "turn_precision",
]

#: The key of FixEval's Naive Copy baseline among the summaries (:func:`naive_copy`).
NAIVE_COPY = "Naive Copy (the buggy program)"


# --------------------------------------------------------------------------- per turn


class TurnPrecision(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The repair-precision metrics of one turn's program against its instance."""

    episode_id: str
    instance_id: str
    model: str
    protocol: str
    run: int
    turn: int
    #: :func:`~.edits.edit_precision` (line proximity, not PDB's); None when the program
    #: equals the buggy one (whitespace aside)
    edit_precision: float | None
    #: :func:`~.edits.edit_recall` (line proximity, not PDB's); None when the reference
    #: equals the buggy program
    edit_recall: float | None
    #: share of the buggy program's non-blank lines replaced or deleted
    changed_share: float | None
    regenerated: bool
    exact_match: bool
    #: exact match without comments and docstrings (:func:`~.bleu.exact_match_code`)
    exact_match_code: bool
    bleu: float
    compiles: bool
    #: :func:`~.verdicts.verdict_mix` of the turn
    verdicts: dict[str, float]


class _Reference(msgspec.Struct, frozen=True):
    """An instance's reference edit and tokens, computed once per instance."""

    edit: EditSet
    tokens: list[str]
    code_only: list[str]


def _reference(instance: Instance) -> _Reference:
    return _Reference(
        changed_lines(instance.buggy, instance.reference), code_tokens(instance.reference),
        code_only_tokens(instance.reference),
    )


class _ProgramScore(msgspec.Struct, frozen=True):
    """What a program scores against its instance, whoever wrote it and whenever."""

    edit_precision: float | None
    edit_recall: float | None
    changed_share: float | None
    regenerated: bool
    exact_match: bool
    exact_match_code: bool
    compiles: bool
    stats: BleuStats


def _program_score(program: str, instance: Instance, reference: _Reference, tolerance: int,
                   threshold: float) -> _ProgramScore:
    edit = changed_lines(instance.buggy, program)
    tokens = code_tokens(program)
    return _ProgramScore(
        edit_precision=set_precision(edit, reference.edit, tolerance),
        edit_recall=set_recall(edit, reference.edit, tolerance),
        changed_share=edit.changed_share,
        regenerated=is_regenerated(edit, threshold),
        exact_match=tokens == reference.tokens,
        exact_match_code=code_only_tokens(program) == reference.code_only,
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
        exact_match_code=done.exact_match_code,
        bleu=bleu_from_stats([done.stats]),
        compiles=done.compiles,
        verdicts=verdict_shares(record.verdicts, done.compiles),
    )


def turn_precision(
    record: TurnRecord, instance: Instance, *, tolerance: int = 1, threshold: float = 0.5
) -> TurnPrecision:
    """Every repair-precision metric of one turn record's program."""
    check_tolerance(tolerance)
    check_threshold(threshold)
    if record.instance_id != instance.id:
        raise ValueError(
            f"record of instance {record.instance_id!r} scored against {instance.id!r}"
        )
    return _score(record, instance, _reference(instance), tolerance, threshold)


# --------------------------------------------------------------------------- per model


class PrecisionSummary(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The repair-precision metrics of one (model, protocol) group.

    Turn-level values (line-proximity edit precision and recall, regeneration, the overall
    verdict mix) are averaged over turns >= 1 within each episode, then across episodes,
    like the PAIR-BENCH turn metrics. Exact match, BLEU, CodeBLEU and PDB's recall and
    precision (the ``pdb_`` fields) read each episode's final program.
    """

    #: finished episodes of the group
    episodes: int
    #: their turns >= 1 (the hinted or feedback turns)
    turns: int
    edit_precision: float | None
    edit_recall: float | None
    regeneration_rate: float | None
    exact_match_rate: float
    #: exact match without comments and docstrings, FixEval's processing
    exact_match_code_rate: float
    #: mean sentence-level BLEU of the final programs
    bleu: float
    #: corpus-level BLEU of the final programs (FixEval's aggregate)
    corpus_bleu: float
    #: mean verdict mix over turns >= 1 (episode means, then across episodes)
    verdict_mix: dict[str, float]
    #: turn index (0 included) -> verdict mix averaged over the episodes that reached it
    verdict_mix_by_turn: dict[int, dict[str, float]]
    #: corpus CodeBLEU and its parts of the final programs; None when no scorer was given
    codebleu: CodeBleu | None = None
    #: FixEval's Compilation Accuracy: the share of final programs that compile
    #: (``py_compile``'s check, :func:`~.verdicts.compiles`)
    compilation_accuracy: float | None = None
    #: PDB's bug-level recall of the final programs (:func:`.bugs.score_bugs`), mean over the
    #: scored episodes with at least one bug; None when there is none
    pdb_recall: float | None = None
    #: PDB's edit-level precision of the final programs, fix-verified, mean over the scored
    #: episodes whose final program edits the buggy one; None when there is none
    pdb_precision: float | None = None
    #: episodes scored by PDB (every verdict they need known)
    pdb_episodes: int = 0
    #: bugs (PDB's k summed over the scored episodes) and how many of them were fixed
    pdb_bugs: int = 0
    pdb_fixed: int = 0
    #: finished episodes left out of the PDB measures for a verdict nobody supplied
    pdb_unverified: int = 0


#: Corpus CodeBLEU of (candidate, reference) program pairs (:func:`.codebleu_package.corpus_codebleu`).
CodeBleuScorer = Callable[[Sequence[tuple[str, str]]], CodeBleu]


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
    scored: list[list[TurnPrecision]], finals: list[BleuStats], codebleu: CodeBleu | None,
    bugs: Sequence[BugScore | None] = (),
) -> PrecisionSummary:
    hinted = [[turn for turn in episode if turn.turn >= 1] for episode in scored]
    by_turn: dict[int, list[dict[str, float]]] = {}
    for episode in scored:
        for turn in episode:
            by_turn.setdefault(turn.turn, []).append(turn.verdicts)
    mixes_by_turn = {t: _mean_mix(by_turn[t]) for t in sorted(by_turn)}
    last = [episode[-1] for episode in scored]
    known = [b for b in bugs if b is not None]
    return PrecisionSummary(
        episodes=len(scored),
        turns=sum(len(turns) for turns in hinted),
        edit_precision=mean_of_defined(mean_of_defined(t.edit_precision for t in turns) for turns in hinted),
        edit_recall=mean_of_defined(mean_of_defined(t.edit_recall for t in turns) for turns in hinted),
        regeneration_rate=mean_of_defined(
            (sum(t.regenerated for t in turns) / len(turns) if turns else None) for turns in hinted
        ),
        exact_match_rate=sum(t.exact_match for t in last) / len(last),
        exact_match_code_rate=sum(t.exact_match_code for t in last) / len(last),
        bleu=math.fsum(t.bleu for t in last) / len(last),
        corpus_bleu=bleu_from_stats(finals),
        verdict_mix=_mean_mix(_mean_mix(t.verdicts for t in turns) for turns in hinted),
        verdict_mix_by_turn={t: mix for t, mix in mixes_by_turn.items() if mix},
        codebleu=codebleu,
        compilation_accuracy=sum(t.compiles for t in last) / len(last),
        pdb_recall=mean_of_defined(b.recall for b in known),
        pdb_precision=mean_of_defined(b.precision for b in known),
        pdb_episodes=len(known),
        pdb_bugs=sum(b.bugs for b in known),
        pdb_fixed=sum(b.fixed for b in known),
        pdb_unverified=len(bugs) - len(known),
    )


def verdict_key(instance_id: str, program: str) -> tuple[str, str]:
    """The key of a program's verdict in ``bug_verdicts``: its instance and its
    :func:`.bugs.canonical` text (whitespace-only differences share a verdict)."""
    return instance_id, canonical(program)


def _recorded(records: Iterable[Record]) -> dict[tuple[str, str], bool]:
    """Verdicts the records already hold: every evaluated turn's program passes when it
    failed no hidden test (a turn with a sandbox fault says nothing)."""
    known: dict[tuple[str, str], bool] = {}
    for record in records:
        if isinstance(record, TurnRecord) and (record.passed or record.failed) \
                and not record.verdicts.get("SF"):
            known[verdict_key(record.instance_id, record.program)] = not record.failed
    return known


def _lookup(verdicts: Mapping[tuple[str, str], bool], instance_id: str) -> Verdict:
    """The verdict function of one instance over the known verdicts."""
    return lambda program: verdicts.get(verdict_key(instance_id, program))


def _instance(instances: Mapping[str, Instance], record: TurnRecord) -> Instance:
    instance = instances.get(record.instance_id)
    if instance is None:
        raise ConfigError(
            f"episode {record.episode_id!r} is on instance {record.instance_id!r}, "
            "which is not in the dataset"
        )
    return instance


def pdb_programs(
    records: Iterable[Record], instances: Mapping[str, Instance], *, tolerance: int = 1
) -> list[tuple[Instance, str]]:
    """The programs whose verdicts PDB's measures of the finished episodes' final programs
    need and the records do not hold (each once, with its instance): the caller runs them
    and passes the results to :func:`precision_by_model` as ``bug_verdicts``, keyed by
    :func:`verdict_key`. Raises :class:`~..core.errors.ConfigError` as
    :func:`precision_by_model` does."""
    check_tolerance(tolerance)
    records = list(records)
    episodes, _ = _finished(records, None)
    known = _recorded(records)
    seen: set[tuple[str, str]] = set()
    out: dict[tuple[str, str], tuple[Instance, str]] = {}
    for episode in episodes:
        instance = _instance(instances, episode[-1])
        if (instance.id, episode[-1].program) in seen:
            continue
        seen.add((instance.id, episode[-1].program))
        final = episode[-1].program
        for program in bug_programs(instance.buggy, instance.reference, final, tolerance):
            key = verdict_key(instance.id, program)
            if key not in known:
                out.setdefault(key, (instance, program))
    return list(out.values())


def precision_by_model(
    records: Iterable[Record],
    instances: Mapping[str, Instance],
    *,
    tolerance: int = 1,
    threshold: float = 0.5,
    with_protocol: bool | None = None,
    codebleu: CodeBleuScorer | None = None,
    bug_verdicts: Mapping[tuple[str, str], bool] | None = None,
) -> dict[str, PrecisionSummary]:
    """:class:`PrecisionSummary` per :func:`~.metrics.group_key` over finished episodes.

    Only episodes whose :class:`~..runlog.records.EpisodeRecord` says ``done`` count; errored
    and unfinished ones are left out, as in the leaderboard. The protocol is part of the
    key when the records hold several protocols (``with_protocol`` forces it on or off).
    ``codebleu`` scores each group's final programs against their references (one corpus
    per group); without it ``PrecisionSummary.codebleu`` is None. ``bug_verdicts`` (keyed by
    :func:`verdict_key`) adds to the verdicts the records hold for PDB's measures
    (:func:`pdb_programs` lists the missing ones); an episode still missing one is counted in
    ``pdb_unverified``. Raises :class:`~..core.errors.ConfigError` for a record whose
    instance is not in ``instances``.
    """
    check_tolerance(tolerance)
    check_threshold(threshold)
    records = list(records)
    episodes, use_protocol = _finished(records, with_protocol)
    verdicts = {**_recorded(records), **(bug_verdicts or {})}
    references: dict[str, _Reference] = {}
    scored: dict[str, list[list[TurnPrecision]]] = {}
    finals: dict[str, list[BleuStats]] = {}
    final_pairs: dict[str, list[tuple[str, str]]] = {}
    bugs: dict[str, list[BugScore | None]] = {}
    memo: dict[tuple[str, str], _ProgramScore] = {}
    bug_memo: dict[tuple[str, str], BugScore | None] = {}
    for episode in episodes:
        first, last = episode[0], episode[-1]
        instance = _instance(instances, first)
        if first.instance_id not in references:
            references[first.instance_id] = _reference(instance)
        reference = references[first.instance_id]
        key = group_key(first.model, first.protocol if use_protocol else None)
        scored.setdefault(key, []).append(
            [_score(record, instance, reference, tolerance, threshold, memo) for record in episode]
        )
        finals.setdefault(key, []).append(memo[(instance.id, last.program)].stats)
        final_pairs.setdefault(key, []).append((last.program, instance.reference))
        if (instance.id, last.program) not in bug_memo:
            bug_memo[(instance.id, last.program)] = score_bugs(
                instance.buggy, instance.reference, last.program, _lookup(verdicts, instance.id),
                tolerance)
        bugs.setdefault(key, []).append(bug_memo[(instance.id, last.program)])
    return {key: _summarise(scored[key], finals[key],
                            codebleu(final_pairs[key]) if codebleu is not None else None, bugs[key])
            for key in sorted(scored)}


def naive_copy(instances: Iterable[Instance], codebleu: CodeBleuScorer | None = None) -> PrecisionSummary:
    """FixEval's Naive Copy baseline: "the input buggy code is copied to the output (fixed
    code)", scored like a final program, one per instance: "the minimum a model could
    achieve in n-gram-based evaluation metrics" (seed 004, Section IV). Its edit precision
    and recall are undefined (nothing is edited) and it has no verdicts here."""
    scored: list[list[TurnPrecision]] = []
    finals: list[BleuStats] = []
    pairs: list[tuple[str, str]] = []
    for instance in instances:
        reference = _reference(instance)
        copy = TurnRecord(run_id="", episode_id=f"naive-copy/{instance.id}", instance_id=instance.id,
                          model=NAIVE_COPY, protocol="", run=0, seed=0, turn=0, program=instance.buggy,
                          passed=[], failed=[], pass_rate=0.0)
        memo: dict[tuple[str, str], _ProgramScore] = {}
        scored.append([_score(copy, instance, reference, 1, 0.5, memo)])
        finals.append(memo[(instance.id, instance.buggy)].stats)
        pairs.append((instance.buggy, instance.reference))
    if not scored:
        raise ValueError("a naive copy of no instances")
    return _summarise(scored, finals, codebleu(pairs) if codebleu is not None else None)
