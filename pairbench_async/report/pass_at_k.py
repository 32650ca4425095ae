"""FixEval's execution-based metrics over repeated runs: pass@k and TCA@k.

FixEval (seed 004, Section IV-A.2) scores n generated fixes per problem by running them:
pass@k, the unbiased estimate of the chance that one of k samples passes every test, and
TCA@k, the average share of test cases the first k samples pass. Here a *sample* is one
run (``--runs N``) of an (instance, model, protocol) episode: its **final** program (the
program the episode ended with) and, for the static view without feedback, its **turn 0**
program (the unhinted repair). ``docs/PRECISION.md`` states every choice. Pure: no I/O,
no clock, no randomness.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import msgspec

from .metrics import group_key
from .trajectory import Trajectory

__all__ = ["PassAtK", "pass_at_k", "pass_at_k_by_model", "summarise_samples", "tca_at_k"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimator of pass@k for one problem with ``n`` samples, ``c`` correct.

    FixEval, Eq. (1): "we generate k ≤ n samples per task (in this work, n = 10 and
    k ≤ 10), count the number of correct samples c ≤ n that pass all unit tests and
    calculate the unbiased estimator of pass@k": pass@k := E[1 − C(n−c, k) / C(n, k)].
    C(n−c, k) is 0 when k > n − c (every k-subset holds a correct sample). Computed as
    (C(n, k) − C(n−c, k)) / C(n, k) in integers, one rounding. ``ValueError`` unless
    0 ≤ c ≤ n and 1 ≤ k ≤ n.
    """
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got c={c}, n={n}")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")
    total = math.comb(n, k)
    return (total - math.comb(n - c, k)) / total


def tca_at_k(shares: Sequence[float], k: int) -> float:
    """TCA@k of one problem: the mean test-case pass share of its first ``k`` samples.

    FixEval, Eq. (2): TCA@k = (1/|P|) Σ_p (1/k) Σ_{i=1..k} (1/|C_p|) Σ_c
    1{eval(code_p^i, x_{p,c}) = y_{p,c}}; ``shares`` holds each sample's
    (1/|C_p|) Σ_c 1{...} in sample order (i = 1, 2, ...). This is the inner mean; the
    outer mean over problems is the caller's. ``ValueError`` unless 1 ≤ k ≤ len(shares).
    """
    if not 1 <= k <= len(shares):
        raise ValueError(f"need 1 <= k <= {len(shares)} samples, got k={k}")
    return math.fsum(shares[:k]) / k


class PassAtK(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """pass@k and TCA@k of one (model, protocol) group, for k = 1..``samples``.

    ``pass_at_k`` / ``tca_at_k`` read each run's final program; ``initial_*`` its turn 0
    program (the static, feedback-free view). Every instance counts at every k: k runs
    up to the fewest finished runs of any instance of the group.
    """

    #: instances with at least one finished run
    instances: int
    #: n of the estimator's k range: the fewest finished runs of any of these instances
    samples: int
    pass_at_k: dict[int, float]
    tca_at_k: dict[int, float]
    #: the same for turn 0; None when turn 0 is the erroneous program as given (FeedbackEval's
    #: protocols: no model wrote it, so it is no sample of the model)
    initial_pass_at_k: dict[int, float] | None
    initial_tca_at_k: dict[int, float] | None


def _share(traj: Trajectory, index: int) -> float:
    return len(traj.turns[index].passed) / len(traj.test_ids)


def _means(per_instance: list[list[Trajectory]], index: int, n: int) -> tuple[dict[int, float],
                                                                             dict[int, float]]:
    """pass@k and TCA@k for k = 1..n over instances, sampling turn ``index`` of each run."""
    passes: dict[int, list[float]] = {k: [] for k in range(1, n + 1)}
    tcas: dict[int, list[float]] = {k: [] for k in range(1, n + 1)}
    for runs in per_instance:
        shares = [_share(traj, index) for traj in runs]
        correct = sum(share == 1.0 for share in shares)
        for k in range(1, n + 1):
            passes[k].append(pass_at_k(len(runs), correct, k))
            tcas[k].append(tca_at_k(shares, k))
    size = len(per_instance)
    return ({k: math.fsum(v) / size for k, v in passes.items()},
            {k: math.fsum(v) / size for k, v in tcas.items()})


def summarise_samples(trajectories: Iterable[Trajectory]) -> PassAtK | None:
    """:class:`PassAtK` of one group's finished episodes (None without any).

    The samples of an instance are its runs, in run order (TCA@k's i = 1..k are the k
    lowest run indices); a run's final program passes when its last turn passes every
    hidden test. ``ValueError`` when one instance has two episodes with the same run
    index (the trajectories mix groups).
    """
    by_instance: dict[str, dict[int, Trajectory]] = {}
    for traj in trajectories:
        runs = by_instance.setdefault(traj.instance_id, {})
        if traj.run in runs:
            raise ValueError(f"instance {traj.instance_id!r} has two episodes of run {traj.run}; "
                             "pass one (model, protocol) group")
        runs[traj.run] = traj
    if not by_instance:
        return None
    per_instance = [[runs[r] for r in sorted(runs)] for _, runs in sorted(by_instance.items())]
    n = min(len(runs) for runs in per_instance)
    final_pass, final_tca = _means(per_instance, -1, n)
    given = all(traj.given_start for runs in per_instance for traj in runs)
    first_pass, first_tca = (None, None) if given else _means(per_instance, 0, n)
    return PassAtK(instances=len(per_instance), samples=n, pass_at_k=final_pass,
                   tca_at_k=final_tca, initial_pass_at_k=first_pass, initial_tca_at_k=first_tca)


def pass_at_k_by_model(trajectories: Iterable[Trajectory]) -> dict[str, PassAtK]:
    """:class:`PassAtK` per :func:`~.metrics.group_key` (model, and protocol where given)."""
    groups: dict[str, list[Trajectory]] = {}
    for traj in trajectories:
        groups.setdefault(group_key(traj.model, traj.protocol), []).append(traj)
    out: dict[str, PassAtK] = {}
    for key in sorted(groups):
        summary = summarise_samples(groups[key])
        if summary is not None:
            out[key] = summary
    return out
