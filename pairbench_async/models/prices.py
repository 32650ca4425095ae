"""Token prices by model spec, as a model config gives them (``--config FILE``).

The prices sit with the models because the same TOML tables configure a model's
endpoint and price it; the report only applies them (:mod:`..report.cost`).
"""

from __future__ import annotations

import msgspec

__all__ = ["PER_TOKENS", "Price", "PriceBook"]

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
    """Prices by model spec, as a model config gives them (see :func:`.specs.load_prices`).

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
