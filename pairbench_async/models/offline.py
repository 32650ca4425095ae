"""Built-in offline models and their spec strings: ``sim:SKILL`` and ``rules``.

They let a whole PAIR-BENCH sweep run with no network and give the same records for
the same seed on every machine. :mod:`.sim` holds the simulated candidate,
:mod:`.rules` (with :mod:`.rules_code`) the rule-based feedback model and
:mod:`..protocol.context` the out-of-band :class:`TurnContext` both of them need: without a
context they raise ``ConfigError``, as they cannot work from text alone.
"""

from __future__ import annotations

import math

from ..core.errors import ConfigError
from ..protocol.context import TurnContext, stable_seed
from .endpoint import OFFLINE_SCHEMES
from .rules import RulesFeedback
from .sim import (
    LEVEL_FACTORS,
    MAX_LATENCY,
    REGRESSION_RATE,
    TARGET_FACTOR,
    SimCandidate,
    SimRevision,
)

__all__ = [
    "LEVEL_FACTORS",
    "OFFLINE_SCHEMES",
    "REGRESSION_RATE",
    "TARGET_FACTOR",
    "RulesFeedback",
    "SimCandidate",
    "SimRevision",
    "TurnContext",
    "parse_offline_spec",
    "stable_seed",
]



def _number(text: str, what: str, spec: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"model spec {spec!r}: {what} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ConfigError(f"model spec {spec!r}: {what} must be finite")
    return value


def parse_offline_spec(spec: str) -> SimCandidate | RulesFeedback:
    """The offline model of ``sim:SKILL``, ``sim:SKILL?latency=SECONDS&loop=P`` (either
    option alone too) or ``rules``."""
    text = spec.strip()
    if text == "rules":
        return RulesFeedback()
    scheme, colon, rest = text.partition(":")
    if scheme == "rules":
        raise ConfigError(f"model spec {spec!r}: 'rules' takes no options")
    if scheme != "sim" or not colon:
        raise ConfigError(f"model spec {spec!r}: expected sim:SKILL[?latency=SECONDS][&loop=P] or rules")
    body, _, query = rest.partition("?")
    skill = _number(body, "skill", spec)
    if not 0.0 <= skill <= 1.0:
        raise ConfigError(f"model spec {spec!r}: skill must be in [0, 1]")
    latency = loop = 0.0
    seen: set[str] = set()
    for part in query.split("&") if query else ():
        key, equals, value = part.partition("=")
        if key not in ("latency", "loop") or not equals or key in seen:
            raise ConfigError(f"model spec {spec!r}: unknown or repeated option {part!r}")
        seen.add(key)
        if key == "loop":
            loop = _number(value, "loop", spec)
            if not 0.0 <= loop <= 1.0:
                raise ConfigError(f"model spec {spec!r}: loop must be a probability in [0, 1]")
            continue
        latency = _number(value, "latency", spec)
        if not 0.0 <= latency <= MAX_LATENCY:
            raise ConfigError(
                f"model spec {spec!r}: latency must be in [0, {MAX_LATENCY:g}] seconds"
            )
    return SimCandidate(skill, latency=latency, loop=loop, name=text)
