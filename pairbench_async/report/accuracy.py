"""When Benchmarks Talk (seed 002): test-case accuracy, static vs interactive, and the
ranking change between the two settings.

The paper's headline metric is test-case accuracy, "TCA = # Test Cases Passed / Total #
Test Cases" (its Appendix A.5), reported as the "Average TCA of each model with standard
error in each setting" (Tables 4-7) and "averaged across all code models" (Table 1). Its
Static setting uses no feedback: "the code model is not given any feedback and the first
attempt is used as the final output"; each feedback type is an interactive setting whose
refinement loop lasts 5 steps, "terminating early if a correct solution is reached", and
whose output is the loop's last solution. Rankings are compared with "the normalized
Spearman's Footrule distances between the Static and interactive settings" (Table 14).

Here an episode is a question: its Static TCA is p_0 (turn 0, the attempt before any
feedback) and its interactive TCA is p_τ (the last evaluated turn: the episode stops at
all-pass or after α turns, as the paper's loop does). Every protocol shares the same
unhinted turn 0 (the same prompt under the same seed), so the Static column takes one turn 0
per (model, run, instance), from whichever protocol ran it, except
FeedbackEval's protocols, whose turn 0 is the erroneous program as given (no attempt was
made: ``Trajectory.given_start``); each protocol is one interactive setting. A model with no
unhinted turn 0 has no Static value and is left out of the ranking comparison. Pure:
trajectories in, numbers out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import msgspec

from ..protocol.baselines import WORD_CAPS
from ..runlog.records import Record, TurnRecord
from .leaderboard import trajectories
from .metrics import check_unique
from .ranking import footrule, kendall_tau, mean_std, rank_values
from .trajectory import Trajectory
from .trajectory_metrics import pass_rates

__all__ = [
    "Accuracy",
    "ProtocolAccuracy",
    "TalkAccuracy",
    "WordCapCuts",
    "mean_accuracy",
    "static_vs_interactive",
    "talk_accuracy",
    "word_cap_cuts",
]


class Accuracy(msgspec.Struct, frozen=True, kw_only=True):
    """Mean test-case accuracy over ``n`` episodes and its standard error s / √n (sample
    deviation s; ``None`` with a single episode)."""

    mean: float
    se: float | None
    n: int


class ProtocolAccuracy(msgspec.Struct, frozen=True, kw_only=True):
    """One protocol as an interactive setting: its final TCA per model and over all models,
    and how its model ranking differs from the Static one (over the models it ran).

    Ranks: 1 = highest TCA, ties share their average position. ``footrule`` is the
    normalised Spearman footrule (0: the same ranking, 1: reversed) and ``tau`` Kendall's
    τ-b between the two rankings; both ``None`` with fewer than two models (τ also when
    one ranking is all ties).
    """

    interactive: dict[str, Accuracy]
    all_models: Accuracy
    static_rank: dict[str, float]
    interactive_rank: dict[str, float]
    footrule: float | None
    tau: float | None


class WordCapCuts(msgspec.Struct, frozen=True, kw_only=True):
    """How often a protocol's word cap cut the feedback: ``cut`` of ``hints`` hints."""

    cap: int
    hints: int
    cut: int


class TalkAccuracy(msgspec.Struct, frozen=True, kw_only=True):
    """Seed 002's Tables 4-7 and 14 for a run: Static TCA per model (and over all models),
    every protocol as an interactive setting, and the word caps' cuts."""

    static: dict[str, Accuracy]
    static_all: Accuracy | None
    protocols: dict[str, ProtocolAccuracy]
    word_caps: dict[str, WordCapCuts] = {}


def mean_accuracy(values: Iterable[float]) -> Accuracy:
    """Mean and standard error of per-episode TCAs; ``ValueError`` for none."""
    items = list(values)
    stats = mean_std(items, ddof=1)
    if stats.mean is None:
        raise ValueError("test-case accuracy of no episode")
    se = None if stats.std is None else stats.std / math.sqrt(stats.n)
    return Accuracy(mean=stats.mean, se=se, n=stats.n)


def _static_tca(traj: Trajectory) -> float:
    """p_0: the share of hidden tests passed before any feedback."""
    return pass_rates(traj)[0]


def _final_tca(traj: Trajectory) -> float:
    """p_τ: the share of hidden tests passed by the episode's last program."""
    return pass_rates(traj)[-1]


def _by(trajs: Iterable[Trajectory], key: str) -> dict[str, list[Trajectory]]:
    groups: dict[str, list[Trajectory]] = {}
    for traj in trajs:
        groups.setdefault(getattr(traj, key) or "", []).append(traj)
    return {name: groups[name] for name in sorted(groups)}


def static_vs_interactive(trajectories: Iterable[Trajectory],
                       protocols: Sequence[str] | None = None) -> TalkAccuracy:
    """Static and interactive TCA per model and protocol, and the ranking change.

    Episodes of repeated runs are pooled (each (protocol, run, instance) once per model).
    ``protocols`` orders the protocols (default: sorted); the Static ranking compared with a
    protocol's is that of the models the protocol ran. ``ValueError`` without trajectories
    or with the same episode twice.
    """
    items = list(trajectories)
    if not items:
        raise ValueError("test-case accuracy of no episode")
    check_unique(items)
    # one Static draw per (model, run, instance): every protocol's turn 0 is the same prompt
    # under the same seed, so counting each protocol's copy would shrink the standard error
    # without adding a draw; the first protocol in ``protocols`` order stands for them all
    rank = {p: k for k, p in enumerate(protocols or ())}
    attempted: dict[tuple[str, int, str], Trajectory] = {}
    for t in sorted((t for t in items if not t.given_start),  # the given program is no attempt
                    key=lambda t: (rank.get(t.protocol or "", len(rank)), t.protocol or "")):
        attempted.setdefault((t.model, t.run, t.instance_id), t)
    static = {m: mean_accuracy(_static_tca(t) for t in ts) for m, ts in _by(attempted.values(), "model").items()}
    by_protocol = _by(items, "protocol")
    order = [p for p in (protocols or sorted(by_protocol)) if p in by_protocol]
    order += [p for p in sorted(by_protocol) if p not in order]
    out: dict[str, ProtocolAccuracy] = {}
    for p in order:
        ts = by_protocol[p]
        final = {m: mean_accuracy(_final_tca(t) for t in group) for m, group in _by(ts, "model").items()}
        both = [m for m in final if m in static]
        ranked = len(both) >= 2
        static_rank = rank_values({m: static[m].mean for m in both})
        final_rank = rank_values({m: final[m].mean for m in both})
        out[p] = ProtocolAccuracy(
            interactive=final, all_models=mean_accuracy(_final_tca(t) for t in ts),
            static_rank=static_rank, interactive_rank=final_rank,
            footrule=footrule(static_rank, final_rank) if ranked else None,
            tau=kendall_tau(static_rank, final_rank) if ranked else None)
    return TalkAccuracy(static=static,
                        static_all=(mean_accuracy(_static_tca(t) for t in attempted.values())
                                    if attempted else None),
                        protocols=out)


def word_cap_cuts(records: Iterable[Record]) -> dict[str, WordCapCuts]:
    """Per capped protocol in ``records`` (paragraph, sentence): hints given, hints cut."""
    counts: dict[str, list[int]] = {}
    for r in records:
        if isinstance(r, TurnRecord) and r.protocol in WORD_CAPS and r.hint is not None:
            c = counts.setdefault(r.protocol, [0, 0])
            c[0] += 1
            c[1] += r.hint.words_cut > 0
    return {p: WordCapCuts(cap=WORD_CAPS[p], hints=h, cut=c) for p, (h, c) in sorted(counts.items())}


def talk_accuracy(records: Sequence[Record], protocols: Sequence[str] | None = None) -> TalkAccuracy | None:
    """:func:`static_vs_interactive` of the finished episodes of ``records``, with the word
    caps' cuts; ``None`` when no episode finished."""
    trajs, _, _ = trajectories(records, with_protocol=True)
    if not trajs:
        return None
    return msgspec.structs.replace(static_vs_interactive(trajs, protocols), word_caps=word_cap_cuts(records))
