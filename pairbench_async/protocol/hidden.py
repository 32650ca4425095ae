"""What the leakage validator protects and how hard: the hidden data of an instance
(test inputs, expected outputs, the reference) and the validation policy.

Kept apart from :mod:`.leakage` so that the rules' modules (:mod:`.leakage_quotes`)
and the validator that applies them both depend on it, and not on each other. Pure.
"""

from __future__ import annotations

import functools
from typing import Any, Literal

import msgspec

from ..core.errors import ConfigError
from ..core.types import Instance
from .evidence import render_value

__all__ = ["HiddenData", "ValidationPolicy", "hidden_data"]


class ValidationPolicy(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """How many generations a hint gets and what happens when all of them leak.

    ``budget`` counts generation attempts, the first one included.
    """

    budget: int = 3
    on_exhausted: Literal["fallback", "omit"] = "fallback"
    min_quote_chars: int = 12
    min_item_chars: int = 6
    min_token_chars: int = 8
    max_chars: int = 1200
    #: how Table II's boundaries are read: ``"learned"`` (the default) by the model trained on the labelled sets
    #: (:mod:`.leakage_model`), with the rules' exact checks (a quote of hidden data, the length) and the rules'
    #: reasons where they agree; ``"rules"`` by the hand-written rules alone
    reading: Literal["learned", "rules"] = "learned"

    def __post_init__(self) -> None:
        if self.budget < 1:
            raise ConfigError(f"validation budget must be >= 1, got {self.budget}")
        if min(self.min_quote_chars, self.min_item_chars, self.min_token_chars) < 2:
            raise ConfigError("quote thresholds must be >= 2 characters")


class HiddenData(msgspec.Struct, frozen=True, kw_only=True, dict=True):
    """What the candidate must never see: test inputs, expected outputs, the reference.

    What the validator derives from this data alone (the quote rule's index, its
    verdicts) is built on first use and kept in :attr:`derived`: a hint's validation
    then costs time in the hint's length, not in the size of the test suite.
    """

    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    reference: str = ""

    @functools.cached_property
    def derived(self) -> dict[str, Any]:
        """Built from this data by the rules that need it (``quote_index``), keyed by name."""
        return {}

    @functools.cached_property
    def verdicts(self) -> dict[tuple[Any, ...], tuple[str, ...]]:
        """Memo of :func:`validate_hint` against this data (bounded; see there).

        A hint is validated by the model that drafts it and again by the episode that
        gives it: the second time is a lookup.
        """
        return {}



def hidden_data(instance: Instance) -> HiddenData:
    """The hidden part of ``instance``: every test's input and expected output, the reference."""
    inputs: list[str] = []
    outputs: list[str] = []
    for test in instance.tests:
        if test.kind == "call":
            inputs.extend(render_value(arg) for arg in test.args or [])
            inputs.extend(render_value(value) for value in (test.kwargs or {}).values())
            if test.expected is not msgspec.UNSET:
                outputs.append(render_value(test.expected))
        else:
            inputs.append(test.input or "")
            outputs.append(test.output or "")
    return HiddenData(inputs=tuple(inputs), outputs=tuple(outputs), reference=instance.reference)
