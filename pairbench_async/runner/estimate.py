"""What a sweep would spend before it runs: episodes, model calls and tokens per model.

Turn 0's unhinted repair is one call per (candidate, instance, run), shared by every
protocol of a setting that starts from it (the evaluator's ``_first_repair``).

``run --dry-run`` prints this; an embedder can ask the same before committing to a
sweep. Calls are an upper bound from each protocol's :meth:`~..protocol.protocols.Protocol.call_budget`;
tokens are estimated from each instance's first prompt (chars/4; later turns counted at
1.5x, feedback and judge prompts at 2x) plus the answer budget (``max_tokens``, else
512): an estimate, not a bill. Pure: prices are passed in.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from ..core.types import Instance
from ..models.endpoint import ASSUMED_COMPLETION_TOKENS, estimate_prompt_tokens
from ..models.prices import PriceBook
from ..models.specs import answers_locally
from ..protocol.prompts import initial_prompt
from ..protocol.protocols import PROTOCOLS
from .config import RunConfig

__all__ = ["ModelSpend", "SweepEstimate", "estimate_sweep"]


class ModelSpend(msgspec.Struct):
    """One model's share: calls (upper bound), prompt and completion tokens (estimates)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: answered on this machine with no endpoint (``sim:``, ``rules``, ``replay:``): free
    local: bool = False

    def add(self, calls: int, prompt_tokens: int, completion_tokens: int) -> None:
        self.calls += calls
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens


class SweepEstimate(msgspec.Struct):
    episodes: int
    #: by model name, in name order
    models: dict[str, ModelSpend]
    #: by model name: cost (prompt + completion) at ``prices``; models without a price absent
    costs: dict[str, float] = {}


def estimate_sweep(instances: Sequence[Instance], configs: Sequence[RunConfig],
                   prices: PriceBook | None = None) -> SweepEstimate:
    """The spend of running ``configs`` (a sweep's settings; one for a run) on ``instances``."""
    first = [estimate_prompt_tokens(initial_prompt(inst)) for inst in instances]
    spend: dict[str, ModelSpend] = {}
    specs: dict[str, str] = {}  # name -> spec, for models given as (named) spec strings
    episodes = 0
    for given in configs:
        specs.update(given.specs())
        config, _ = given.named()  # models by name: objects and NAME=SPEC alike
        answer = config.max_tokens or ASSUMED_COMPLETION_TOKENS
        turns, runs = config.turns, config.runs
        asked: set[tuple[str, int]] = set()  # turn 0's repair is one call shared by the protocols
        for name in config.protocols:
            budget = PROTOCOLS[name].call_budget(config.hint_budget, judged=config.validator is not None,
                                                 paper=config.baselines == "paper")
            for cand in config.candidates:
                for index, tokens in enumerate(first):
                    episodes += runs
                    first_call = budget.first_candidate if (cand, index) not in asked else 0
                    if first_call:
                        asked.add((cand, index))
                    n = runs * (first_call + budget.candidate_per_turn * turns)
                    spend.setdefault(cand, ModelSpend()).add(
                        n, runs * (first_call * tokens
                                   + int(1.5 * tokens) * budget.candidate_per_turn * turns), n * answer)
                    for model, per_turn in ((config.feedback, budget.feedback_per_turn),
                                            (config.validator, budget.judge_per_turn)):
                        if per_turn and model is not None:
                            m = runs * per_turn * turns
                            spend.setdefault(model, ModelSpend()).add(m, m * 2 * tokens, m * answer)
        if config.obfuscate:  # each setting's evaluator summarises every problem once
            spend.setdefault(config.feedback, ModelSpend()).add(len(instances), sum(first), len(instances) * answer)
    models = dict(sorted(spend.items()))
    costs: dict[str, float] = {}
    for name, s in models.items():
        s.local = name in specs and answers_locally(specs[name])
        price = None
        if prices is not None:
            price = prices.of(name) or (prices.of(specs[name]) if name in specs else None)
        if price is not None:
            p_cost, c_cost = price.cost(s.prompt_tokens, s.completion_tokens)
            costs[name] = p_cost + c_cost
    return SweepEstimate(episodes=episodes, models=models, costs=costs)
