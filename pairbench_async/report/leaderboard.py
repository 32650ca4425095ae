"""From records to numbers: trajectories and the leaderboard (Table III).

Pure functions over records; reading the directory is :mod:`..runlog.store`'s job and
printing is the caller's. Errored episodes are left out of the metrics and counted.
Token usage and cost are :mod:`.cost`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from ..runlog.records import EpisodeRecord, Record, TurnRecord
from .glossary import legend_lines
from .metrics import METRIC_NAMES, ModelMetrics, metrics_by_model
from .registry import BY_NAME, metric
from .trajectory import Trajectory, TurnOutcome

__all__ = [
    "LEADERBOARD_COLUMNS",
    "UNPROTECTED_NOTE",
    "Leaderboard",
    "leaderboard",
    "render_repair_at_k_text",
    "repair_at_k_json",
    "trajectories",
    "unprotected_protocols",
]

#: The text leaderboard's columns: the registry's leaderboard metrics (Table III and HCCShown).
LEADERBOARD_COLUMNS = tuple(name for name in METRIC_NAMES if BY_NAME[name].leaderboard)


class Leaderboard(msgspec.Struct):
    models: dict[str, ModelMetrics]
    episodes: int
    errored: int
    unfinished: int
    #: protocols whose candidate saw hidden test data or reference-derived text
    unprotected: list[str] = []
    #: errored episodes per row (``model`` or ``model|protocol``), for every row with any;
    #: a row whose every episode errored is here and not in ``models`` (it has no metrics)
    errors: dict[str, int] = {}


#: How the reports say that a protocol is not hidden-test protected.
UNPROTECTED_NOTE = ("not hidden-test protected (the candidate saw hidden test data or text "
                    "derived from the reference, or unvalidated feedback from a model shown them)")


def unprotected_protocols(records: Iterable[Record]) -> list[str]:
    """The protocols of turns recorded as not hidden-test protected (``test``, ``code``; by
    default also ``human``, ``paragraph``, ``sentence``, ``rephrase``: unvalidated)."""
    return sorted({r.protocol for r in records if isinstance(r, TurnRecord) and not r.protected})


def trajectories(records: Iterable[Record], *, with_protocol: bool | None = None) -> tuple[list[Trajectory], int, int]:
    """Trajectories of the finished episodes; also (errored, unfinished) counts."""
    turns: dict[str, list[TurnRecord]] = {}
    ends: dict[str, EpisodeRecord] = {}
    for rec in records:
        if isinstance(rec, TurnRecord):
            turns.setdefault(rec.episode_id, []).append(rec)
        else:
            ends[rec.episode_id] = rec
    protocols = {t[0].protocol for t in turns.values() if t}
    use_protocol = len(protocols) > 1 if with_protocol is None else with_protocol
    out: list[Trajectory] = []
    errored = unfinished = 0
    for eid, recs in turns.items():
        end = ends.get(eid)
        if end is None:
            unfinished += 1
            continue
        if end.status != "done":
            errored += 1
            continue
        recs.sort(key=lambda r: r.turn)
        first = recs[0]
        out.append(Trajectory(
            instance_id=first.instance_id, model=first.model,
            protocol=first.protocol if use_protocol else None, run=first.run,
            test_ids=sorted({*first.passed, *first.failed}), given_start=first.given,
            turns=[TurnOutcome(turn=r.turn, passed=frozenset(r.passed),
                               target_id=r.target.scenario_id if r.target else None,
                               target_tests=list(r.target.tests) if r.target else None,
                               level=r.hint_level if r.target else None,
                               shown_tests=list(r.target.representatives)
                               if r.target and r.target.representatives else None) for r in recs],
        ))
    errored += sum(1 for eid, e in ends.items() if e.status == "error" and eid not in turns)
    return out, errored, unfinished


def errors_by_row(records: Iterable[Record], *, with_protocol: bool | None = None) -> dict[str, int]:
    """Errored episodes per leaderboard row, keyed as :func:`trajectories` keys its rows."""
    from .metrics import group_key

    records = list(records)
    protocols = {r.protocol for r in records if isinstance(r, TurnRecord)} or {r.protocol for r in records}
    use_protocol = len(protocols) > 1 if with_protocol is None else with_protocol
    out: dict[str, int] = {}
    for r in records:
        if isinstance(r, EpisodeRecord) and r.status == "error":
            key = group_key(r.model, r.protocol if use_protocol else None)
            out[key] = out.get(key, 0) + 1
    return dict(sorted(out.items()))


def leaderboard(records: Sequence[Record]) -> Leaderboard:
    trajs, errored, unfinished = trajectories(records)
    return Leaderboard(models=metrics_by_model(trajs), episodes=len(trajs), errored=errored,
                       unfinished=unfinished, unprotected=unprotected_protocols(records),
                       errors=errors_by_row(records))


def repair_at_k_json(records: Sequence[Record], alpha: int | None = None) -> dict[str, dict[str, float | None]]:
    """FeedbackEval's Repair@k per leaderboard row (``model`` or ``model|protocol``), for
    k = 1, 2, 3 and ``alpha`` (the run's feedback-round budget), never past ``alpha``: a
    round that never ran has no Repair@k (a ``--turns 1`` run has Repair@1 only)."""
    from .metrics import group_key, repair_at_k

    trajs, _, _ = trajectories(records)
    ks = sorted({k for k in (1, 2, 3, alpha or 0) if k >= 1 and (alpha is None or k <= alpha)})
    groups: dict[str, list[Trajectory]] = {}
    for traj in trajs:
        groups.setdefault(group_key(traj.model, traj.protocol), []).append(traj)
    return {name: {str(k): repair_at_k(items, k) for k in ks} for name, items in sorted(groups.items())}


def render_repair_at_k_text(table: dict[str, dict[str, float | None]]) -> str:
    """:func:`repair_at_k_json`'s table for the terminal, in %."""
    ks = sorted({int(k) for row in table.values() for k in row})
    header = ["Model", *(f"Repair@{k}" for k in ks)]
    rows = [[name, *("-" if row.get(str(k)) is None else f"{100 * row[str(k)]:.1f}"  # type: ignore[operator]
                     for k in ks)] for name, row in table.items()]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("Repair@k (FeedbackEval), in %: episodes passing every hidden test after k feedback rounds; "
                 "simple, compiler, test and human start from the erroneous program, the others' "
                 "unhinted turn 0 precedes the k rounds and counts")
    return "\n".join(lines)


def leaderboard_json(board: Leaderboard) -> dict[str, object]:
    """``{"models": {name: {metric: value}}}`` with DESIGN.md's metric names."""
    return {
        "models": {name: {m: getattr(row, m) for m in METRIC_NAMES} for name, row in board.models.items()},
        "episodes": board.episodes,
        "errored": board.errored,
        "unfinished": board.unfinished,
        "errors": board.errors,
    }


def _fmt(name: str, value: float | None) -> str:
    """A terminal cell: rates in % with one decimal."""
    return metric(name).format(value, 1)


def leaderboard_rows(board: Leaderboard) -> tuple[list[str], list[list[str]]]:
    """Header and rows of Table III (rates in %), best value per column marked ``*``: the
    rows that share the best value as shown are all marked, unless every row shares it
    (a column where all tie has no best)."""
    header = ["Model", *LEADERBOARD_COLUMNS]
    best: dict[str, float] = {}
    for m in LEADERBOARD_COLUMNS:
        values = [getattr(r, m) for r in board.models.values() if getattr(r, m) is not None]
        if values and len(board.models) > 1:
            top = max(values) if BY_NAME[m].higher_is_better else min(values)
            shown = {_fmt(m, v) for v in values}
            if len(shown) > 1 or len(values) < len(board.models):  # a tie of every row is no best
                best[m] = top
    rows = []
    names = sorted({*board.models, *board.errors})  # a row whose every episode errored keeps its place
    for name in names:
        row = board.models.get(name)
        cells = [name + ("†" if name.rpartition("|")[2] in board.unprotected else "")]
        for m in LEADERBOARD_COLUMNS:
            v = getattr(row, m) if row is not None else None
            cells.append(_fmt(m, v) + ("*" if m in best and v is not None and _fmt(m, v) == _fmt(m, best[m])
                                        else ""))
        rows.append(cells)
    return header, rows


def render_text(board: Leaderboard, *, legend: bool = True) -> str:
    """A plain-text table (terminals, logs, papers); ``legend=False`` leaves out the
    columns' legend (``run -q``)."""
    header, rows = leaderboard_rows(board)
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.append(f"{board.episodes} episodes; rates in %, HE in 0..6, TurnsToFix in turns; "
                 f"* best per column (ties all marked; none when every row ties); {board.errored} errored, "
                 f"{board.unfinished} unfinished")
    if board.errors:
        only = [n for n in board.errors if n not in board.models]
        lines.append("errored episodes: " + ", ".join(f"{n} {c}" for n, c in board.errors.items())
                     + (f" ({', '.join(only)}: no episode finished, so no metrics)" if only else ""))
    if board.unprotected:
        lines.append(f"† {', '.join(board.unprotected)}: {UNPROTECTED_NOTE}")
    if legend:
        lines.append("legend (↑ higher is better, ↓ lower; `pairbench list metrics` for the formulas):")
        lines += legend_lines(LEADERBOARD_COLUMNS)
    return "\n".join(lines)
