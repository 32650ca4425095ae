"""From records to numbers: trajectories, the leaderboard (Table III), token usage and cost.

Pure functions over records; reading the directory is :mod:`._store`'s job, reading
prices is :mod:`._models`' and printing is the caller's. Errored episodes are left out
of the metrics and counted; their calls still count as tokens (they were paid for).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from ._metrics import METRIC_NAMES, ModelMetrics, Trajectory, TurnOutcome, metrics_by_model
from ._runlog import EpisodeRecord, Record, TurnRecord

__all__ = [
    "LEADERBOARD_COLUMNS",
    "UNPROTECTED_NOTE",
    "CostSummary",
    "Leaderboard",
    "Price",
    "PriceBook",
    "TokenRow",
    "cost_summary",
    "format_cost",
    "leaderboard",
    "render_tokens_text",
    "repair_at_k_json",
    "token_rows",
    "tokens_json",
    "trajectories",
    "unprotected_protocols",
]

#: The paper's Table III columns, in order.
LEADERBOARD_COLUMNS = ("InitialFix", "TRS", "BRG", "BP", "PMR", "HE", "GC", "FinalFix", "TurnsToFix", "HCC")
_PERCENT = {"InitialFix", "TRS", "BRG", "BP", "PMR", "GC", "FinalFix", "HCC", "RepairRate",
            "PreservationRate"}


class Leaderboard(msgspec.Struct):
    models: dict[str, ModelMetrics]
    episodes: int
    errored: int
    unfinished: int
    #: protocols whose candidate saw hidden test data or reference-derived text
    unprotected: list[str] = []


#: How the reports say that a protocol is not hidden-test protected.
UNPROTECTED_NOTE = ("not hidden-test protected (the candidate saw hidden test data or "
                    "corrections derived from the reference)")


def unprotected_protocols(records: Iterable[Record]) -> list[str]:
    """The protocols of turns recorded as not hidden-test protected (``test``, ``code``)."""
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
            test_ids=sorted({*first.passed, *first.failed}),
            turns=[TurnOutcome(turn=r.turn, passed=frozenset(r.passed),
                               target_id=r.target.scenario_id if r.target else None,
                               target_tests=list(r.target.tests) if r.target else None,
                               level=r.hint_level if r.target else None) for r in recs],
        ))
    errored += sum(1 for eid, e in ends.items() if e.status == "error" and eid not in turns)
    return out, errored, unfinished


def leaderboard(records: Sequence[Record]) -> Leaderboard:
    trajs, errored, unfinished = trajectories(records)
    return Leaderboard(models=metrics_by_model(trajs), episodes=len(trajs), errored=errored,
                       unfinished=unfinished, unprotected=unprotected_protocols(records))


def repair_at_k_json(records: Sequence[Record], alpha: int | None = None) -> dict[str, dict[str, float | None]]:
    """FeedbackEval's Repair@k per leaderboard row (``model`` or ``model|protocol``), for
    k = 1, 2, 3 and ``alpha`` (the run's hinted-turn budget) when it is larger."""
    from ._metrics import group_key, repair_at_k

    trajs, _, _ = trajectories(records)
    ks = sorted({1, 2, 3, *([alpha] if alpha is not None and alpha > 3 else [])})
    groups: dict[str, list[Trajectory]] = {}
    for traj in trajs:
        groups.setdefault(group_key(traj.model, traj.protocol), []).append(traj)
    return {name: {str(k): repair_at_k(items, k) for k in ks} for name, items in sorted(groups.items())}


def leaderboard_json(board: Leaderboard) -> dict[str, object]:
    """``{"models": {name: {metric: value}}}`` with DESIGN.md's metric names."""
    return {
        "models": {name: {m: getattr(row, m) for m in METRIC_NAMES} for name, row in board.models.items()},
        "episodes": board.episodes,
        "errored": board.errored,
        "unfinished": board.unfinished,
    }


def _fmt(metric: str, value: float | None) -> str:
    if value is None:
        return "-"
    if metric in _PERCENT:
        return f"{100 * value:.1f}"
    return f"{value:.2f}"


def leaderboard_rows(board: Leaderboard) -> tuple[list[str], list[list[str]]]:
    """Header and rows of Table III (rates in %), best value per column marked ``*``."""
    header = ["Model", *LEADERBOARD_COLUMNS]
    best: dict[str, float] = {}
    for m in LEADERBOARD_COLUMNS:
        values = [getattr(r, m) for r in board.models.values() if getattr(r, m) is not None]
        if values and len(board.models) > 1:
            best[m] = min(values) if m == "TurnsToFix" else max(values)
    rows = []
    for name, row in sorted(board.models.items()):
        cells = [name + ("†" if name.rpartition("|")[2] in board.unprotected else "")]
        for m in LEADERBOARD_COLUMNS:
            v = getattr(row, m)
            cells.append(_fmt(m, v) + ("*" if m in best and v == best[m] else ""))
        rows.append(cells)
    return header, rows


def render_text(board: Leaderboard) -> str:
    """A plain-text table (terminals, logs, papers)."""
    header, rows = leaderboard_rows(board)
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    lines.append(f"{board.episodes} episodes; rates in %, HE in 0..6, TurnsToFix in turns; "
                 f"* best per column; {board.errored} errored, {board.unfinished} unfinished")
    if board.unprotected:
        lines.append(f"† {', '.join(board.unprotected)}: {UNPROTECTED_NOTE}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- tokens and cost

#: Prices are per this many tokens.
PER_TOKENS = 1_000_000


class Price(msgspec.Struct, frozen=True):
    """What one million prompt and completion tokens of a model cost, in the config's currency.

    Both or neither: a model whose completion price is unknown has no known cost at all.
    """

    prompt: float
    completion: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> tuple[float, float]:
        """(prompt cost, completion cost) of that many tokens."""
        return (prompt_tokens * self.prompt / PER_TOKENS,
                completion_tokens * self.completion / PER_TOKENS)


class PriceBook(msgspec.Struct, frozen=True):
    """Prices by model spec, as a model config gives them (see :func:`._models.load_prices`).

    ``default`` (the config's ``[defaults]``) prices the ``openai:`` specs without a table
    of their own, exactly as it configures their clients; other specs (``sim:``, ``rules``,
    ``replay:``) are priced only by their own table: their token counts are estimates
    (replayed answers count none).
    """

    models: dict[str, Price] = {}
    default: Price | None = None
    #: where the prices came from (a config path), for the report to say
    source: str = ""

    def of(self, spec: str) -> Price | None:
        """The price of ``spec``, or None when the book does not know it."""
        if spec in self.models:
            return self.models[spec]
        return self.default if spec.startswith("openai:") else None


class TokenRow(msgspec.Struct, frozen=True, kw_only=True):
    """Token usage (and cost) of one kind of call within one (candidate, protocol) group."""

    model: str
    protocol: str
    role: str
    called: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    episodes: int
    #: the spec whose price applies: the candidate, or the run's feedback model
    spec: str = ""
    #: what the tokens cost; both None when ``spec`` has no price
    prompt_cost: float | None = None
    completion_cost: float | None = None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cost(self) -> float | None:
        if self.prompt_cost is None or self.completion_cost is None:
            return None
        return self.prompt_cost + self.completion_cost


class CostSummary(msgspec.Struct, frozen=True):
    """Sums of the priced rows; ``unpriced`` names the specs that have calls but no price."""

    prompt: float | None
    completion: float | None
    unpriced: list[str]

    @property
    def total(self) -> float | None:
        if self.prompt is None or self.completion is None:
            return None
        return self.prompt + self.completion

    @property
    def partial(self) -> bool:
        """Some rows are priced and some are not: the total is a lower bound."""
        return self.total is not None and bool(self.unpriced)


def _priced_spec(candidate: str, role: str, called: str, feedback: str | None) -> str:
    """Which spec made a call: the config is keyed by spec, and ``called`` is what the
    endpoint named itself (``gpt-4o-mini-2024-07-18`` for ``openai:gpt-4o-mini``)."""
    if role == "candidate":
        return candidate
    return feedback if feedback is not None else called


def token_rows(records: Sequence[Record], protocols: Sequence[str] = (), *,
               prices: PriceBook | None = None, feedback: str | None = None) -> list[TokenRow]:
    """Usage per (candidate, protocol, role, model called), with its cost when priced.

    ``protocols`` orders the rows (others follow, sorted); ``feedback`` is the run's
    feedback spec (the manifest's), without which a feedback call is priced by the name
    the model answered with.
    """
    usage: dict[tuple[str, str, str, str], list[int]] = {}
    episodes: dict[tuple[str, str], set[str]] = {}
    for rec in records:
        episodes.setdefault((rec.model, rec.protocol), set()).add(rec.episode_id)
        if not isinstance(rec, TurnRecord):
            continue
        for call in rec.calls:
            row = usage.setdefault((rec.model, rec.protocol, call.role, call.model), [0, 0, 0])
            row[0] += 1
            row[1] += call.usage.prompt_tokens
            row[2] += call.usage.completion_tokens
    rank = {p: i for i, p in enumerate(protocols)}
    rows = []
    for (m, p, role, called), (c, pt, ct) in sorted(
            usage.items(), key=lambda kv: (kv[0][0], rank.get(kv[0][1], len(rank)), kv[0][1:])):
        spec = _priced_spec(m, role, called, feedback)
        price = prices.of(spec) if prices is not None else None
        pc, cc = price.cost(pt, ct) if price is not None else (None, None)
        rows.append(TokenRow(model=m, protocol=p, role=role, called=called, calls=c,
                             prompt_tokens=pt, completion_tokens=ct,
                             episodes=len(episodes[(m, p)]), spec=spec,
                             prompt_cost=pc, completion_cost=cc))
    return rows


def cost_summary(rows: Sequence[TokenRow]) -> CostSummary:
    """The total cost of the priced rows, and which specs were left out."""
    priced = [r for r in rows if r.cost is not None]
    unpriced = sorted({r.spec for r in rows if r.cost is None})
    if not priced:
        return CostSummary(prompt=None, completion=None, unpriced=unpriced)
    return CostSummary(prompt=sum(r.prompt_cost or 0.0 for r in priced),
                       completion=sum(r.completion_cost or 0.0 for r in priced),
                       unpriced=unpriced)


def format_cost(value: float | None, unknown: str = "—") -> str:
    """A cost for display: 4 decimals, and ``<0.0001`` rather than a misleading zero."""
    if value is None:
        return unknown
    if 0 < value < 0.0001:
        return "<0.0001"
    return f"{value:,.4f}"


def tokens_json(rows: Sequence[TokenRow]) -> list[dict[str, Any]]:
    """The rows of ``report --json``'s ``"tokens"``; ``cost`` is null when unknown."""
    return [{"model": r.model, "protocol": r.protocol, "role": r.role, "called": r.called,
             "calls": r.calls, "prompt_tokens": r.prompt_tokens,
             "completion_tokens": r.completion_tokens, "cost": r.cost} for r in rows]


def render_tokens_text(rows: Sequence[TokenRow]) -> str:
    """A short token table for the terminal; a Cost column once any row is priced."""
    summary = cost_summary(rows)
    priced = summary.total is not None
    header = ["Candidate", "Protocol", "Role", "Called", "Calls", "Prompt tok", "Compl. tok"]
    header += ["Cost"] if priced else []
    body = [[r.model, r.protocol, r.role, r.called, f"{r.calls:,}", f"{r.prompt_tokens:,}",
             f"{r.completion_tokens:,}", *([format_cost(r.cost, "-")] if priced else [])]
            for r in rows]
    widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True))
             for row in [header, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    calls = sum(r.calls for r in rows)
    prompt, completion = sum(r.prompt_tokens for r in rows), sum(r.completion_tokens for r in rows)
    total = f"total: {calls:,} calls, {prompt:,} prompt + {completion:,} completion tokens; "
    if not priced:
        total += "cost unknown (give prices with --config FILE)"
    else:
        total += f"cost {format_cost(summary.total, '-')}"
        if summary.partial:
            total += f" (partial: no price for {', '.join(summary.unpriced)})"
    return "\n".join([*lines, total])
