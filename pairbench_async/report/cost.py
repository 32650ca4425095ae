"""Token usage and cost per (candidate, protocol, role): pure functions over records.

Errored episodes' calls still count (they were paid for); prices come from a
:class:`~..models.prices.PriceBook`, and a spec without one is named as unpriced.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from ..models.prices import PriceBook
from ..models.specs import answers_locally
from ..runlog.records import Record, TurnRecord

__all__ = ["CostSummary", "TokenRow", "cost_summary", "format_cost", "render_tokens_text", "token_rows",
           "tokens_json"]


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


def _priced_spec(candidate: str, role: str, called: str, feedback: str | None,
                 validator: str | None = None) -> str:
    """Which spec made a call: the config is keyed by spec, and ``called`` is what the
    endpoint named itself (``gpt-4o-mini-2024-07-18`` for ``openai:gpt-4o-mini``)."""
    if role == "candidate":
        return candidate
    if role == "validator":
        return validator if validator is not None else called
    return feedback if feedback is not None else called


def token_rows(records: Sequence[Record], protocols: Sequence[str] = (), *,
               prices: PriceBook | None = None, feedback: str | None = None,
               validator: str | None = None, specs: Mapping[str, str] | None = None) -> list[TokenRow]:
    """Usage per (candidate, protocol, role, model called), with its cost when priced.

    ``protocols`` orders the rows (others follow, sorted); ``feedback`` and
    ``validator`` are the run's feedback and judge specs (the manifest's), without
    which such a call is priced by the name the model answered with. The judge's calls
    are rows of their own, role ``validator``. ``specs`` (the manifest's) maps a named
    model (``NAME=SPEC``) to its spec: priced by a table of its name, else of its spec.
    """
    specs = specs or {}
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
        spec = _priced_spec(m, role, called, feedback, validator)
        price = prices.of(spec) if prices is not None else None
        if price is None and prices is not None and spec in specs:
            price = prices.of(specs[spec])
        if price is not None:
            pc, cc = price.cost(pt, ct)
        elif prices is not None and answers_locally(specs.get(spec, spec)):
            pc, cc = 0.0, 0.0  # an offline model (sim, rules, replay) is free: never "no price"
        else:
            pc, cc = None, None
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
