"""Where a model lives and how hard it may be pushed: specs, endpoint settings, statistics.

``parse_model_spec`` reads the spec strings (``openai:MODEL[@BASE_URL]``, ``sim:...``,
``rules``, ``replay:...``); :class:`EndpointSettings` holds one endpoint's limits, retry
policy, request defaults and prices (the *name* of the API key's variable, never the
key); the protocol every model meets is in :mod:`.interface`. No aiohttp here:
offline runs and tools that only read configs never import the HTTP stack
(:mod:`.client` does).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Final
from urllib.parse import urlsplit

import msgspec

from ..core.errors import ConfigError
from ..core.types import Message

__all__ = [
    "ASSUMED_COMPLETION_TOKENS",
    "ClientStatistics",
    "EndpointSettings",
    "BUILTIN_SCHEMES",
    "LOCAL_SCHEMES",
    "OFFLINE_SCHEMES",
    "estimate_prompt_tokens",
    "estimate_tokens",
    "parse_model_spec",
]

#: Spec schemes of the built-in offline models (:mod:`.offline`): ``sim:SKILL``, ``rules``.
OFFLINE_SCHEMES: Final = ("sim", "rules")
#: Spec schemes answered on this machine with no endpoint: the offline models and
#: ``replay:`` (free, never rate-limited, never unreachable).
LOCAL_SCHEMES: Final = (*OFFLINE_SCHEMES, "replay")
#: Every spec scheme this package makes a model for (:func:`.specs.make_model`).
BUILTIN_SCHEMES: Final = ("openai", *LOCAL_SCHEMES)
#: Completion tokens assumed by the token bucket when a request sets no ``max_tokens``.
ASSUMED_COMPLETION_TOKENS = 512
_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SCHEME_RE = re.compile(r"[a-z][a-z0-9_+.-]*\Z")
_URL_SUFFIX_RE = re.compile(r"@(https?://\S+)\Z")
#: After '@', text that looks like a host or another URL scheme (``localhost:8000/v1``,
#: ``ftp://``) rather than a version tag.
_HOSTLIKE_RE = re.compile(r"@[\w.+-]+(:\d*)?/")
#: what may follow '@' inside a model name: a version tag such as Vertex AI's ``@20240229``
_VERSION_TAG_RE = re.compile(r"@\d[\w.-]*\Z")


def _check_base_url(url: str) -> str | None:
    """The reason ``url`` is not a usable base URL, or None when it is."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "is not a URL"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "must be an http:// or https:// URL with a host"
    if parts.username is not None or parts.password is not None:
        # Never echo the URL: it holds credentials.
        return "must not contain credentials (use api_key_env)"
    if parts.query or parts.fragment:
        return "must not have a query or fragment"
    return None


class EndpointSettings(msgspec.Struct, frozen=True, omit_defaults=True, forbid_unknown_fields=True):
    """Where an endpoint is, how hard it may be pushed, the request defaults and its prices.

    It holds the *name* of the environment variable with the API key, never the key.
    """

    base_url: str = "https://api.openai.com/v1"
    #: Environment variable holding the API key; None (or unset/empty) sends no key.
    api_key_env: str | None = "OPENAI_API_KEY"
    #: Requests in flight (and pooled connections).
    max_concurrency: int = 16
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    #: Seconds over which the rate limits refill; also the largest burst (see module doc).
    burst_seconds: float = 1.0
    #: Seconds for one attempt, from sending to the last byte of the body.
    timeout: float = 60.0
    max_retries: int = 6
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    #: Longest Retry-After honoured; may exceed backoff_max.
    retry_after_max: float = 60.0
    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    #: Let aiohttp read proxy settings (HTTPS_PROXY, NO_PROXY...) from the environment.
    trust_env: bool = False
    #: What one million prompt (input) tokens cost, in a currency of your choice (the
    #: report only multiplies and adds, so use one currency throughout a config). Used by
    #: ``report --config`` for cost columns, never by the client; None = price unknown.
    #: Set both prices or neither, so that a model's cost is never half known.
    prompt_price_per_million: float | None = None
    #: What one million completion (output) tokens cost, in the same currency.
    completion_price_per_million: float | None = None

    def __post_init__(self) -> None:
        problems: list[str] = []
        reason = _check_base_url(self.base_url)
        if reason is not None:
            problems.append(f"base_url {reason}")
        if self.api_key_env is not None and not _ENV_NAME_RE.fullmatch(self.api_key_env):
            problems.append(f"api_key_env {self.api_key_env!r} is not an environment variable name")
        if not 1 <= self.max_concurrency <= 10_000:
            problems.append(f"max_concurrency must be in [1, 10000], got {self.max_concurrency}")
        for name in ("requests_per_minute", "tokens_per_minute"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                problems.append(f"{name} must be a positive number or None, got {value}")
        if not (math.isfinite(self.burst_seconds) and 0 < self.burst_seconds <= 60):
            problems.append(f"burst_seconds must be in (0, 60], got {self.burst_seconds}")
        if not (math.isfinite(self.timeout) and self.timeout > 0):
            problems.append(f"timeout must be a positive number of seconds, got {self.timeout}")
        if not 0 <= self.max_retries <= 100:
            problems.append(f"max_retries must be in [0, 100], got {self.max_retries}")
        if not (math.isfinite(self.backoff_base) and self.backoff_base >= 0):
            problems.append(f"backoff_base must be >= 0, got {self.backoff_base}")
        if not (math.isfinite(self.backoff_max) and self.backoff_max >= self.backoff_base):
            problems.append(f"backoff_max must be >= backoff_base, got {self.backoff_max}")
        if not (math.isfinite(self.retry_after_max) and self.retry_after_max >= 0):
            problems.append(f"retry_after_max must be >= 0, got {self.retry_after_max}")
        if self.temperature is not None and not 0 <= self.temperature <= 2:
            problems.append(f"temperature must be in [0, 2], got {self.temperature}")
        if self.max_tokens is not None and self.max_tokens < 1:
            problems.append(f"max_tokens must be >= 1, got {self.max_tokens}")
        problems += self._price_problems()
        if problems:
            raise ConfigError("endpoint settings: " + "; ".join(problems))

    def _price_problems(self) -> list[str]:
        """Prices must be finite and >= 0, and come in pairs (a half-known cost is no cost)."""
        prices = {"prompt_price_per_million": self.prompt_price_per_million,
                  "completion_price_per_million": self.completion_price_per_million}
        problems = [f"{name} must be a finite number >= 0 (per million tokens), got {value}"
                    for name, value in prices.items()
                    if value is not None and not (math.isfinite(value) and value >= 0)]
        given = [name for name, value in prices.items() if value is not None]
        if len(given) == 1:
            problems.append(f"{given[0]} is set alone: set both "
                            "prompt_price_per_million and completion_price_per_million, or neither")
        return problems


class ClientStatistics(msgspec.Struct, frozen=True):
    """A snapshot of one client's counters, for progress lines and reports."""

    #: ``complete()`` calls started, answered, and ended in a ClientError.
    calls: int
    completions: int
    errors: int
    #: HTTP attempts sent, and how many of them were retries.
    requests: int
    retries: int
    #: Attempts answered 429, and attempts that timed out.
    rate_limited: int
    timeouts: int
    in_flight: int
    max_in_flight: int
    prompt_tokens: int
    completion_tokens: int
    #: Completions whose usage was estimated because the endpoint sent none.
    estimated_usage: int


def parse_model_spec(spec: str) -> tuple[str, str, str | None]:
    """Split a model spec into ``(scheme, name, base_url)``.

    ``openai:MODEL`` and ``openai:MODEL@http(s)://HOST/...`` are checked here;
    any other scheme (``sim:...``, ``rules``, ``replay:PATH``) comes back with the
    rest of the spec as its name, for the caller to dispatch. An ``@`` not followed
    by a URL stays part of the model name only before a version tag
    (``claude-3@20240229``); anything else after it (``gpt@localhost:8000``,
    ``gpt@notaurl``) is a base URL without ``http://``, a mistake worth naming.
    """
    text = spec.strip()
    if not text:
        raise ConfigError("empty model spec")
    scheme, _, rest = text.partition(":")
    if not _SCHEME_RE.match(scheme):
        raise ConfigError(f"model spec {spec!r}: expected SCHEME:NAME, e.g. openai:gpt-4o-mini")
    if scheme != "openai":
        return scheme, rest, None
    base_url: str | None = None
    match = _URL_SUFFIX_RE.search(rest)
    if match is not None:
        base_url = match.group(1).rstrip("/")
        rest = rest[: match.start()]
        reason = _check_base_url(base_url)
        if reason is not None:
            raise ConfigError(f"model spec for {rest!r}: base URL {reason}")
    if _HOSTLIKE_RE.search(rest) or ("@" in rest and not _VERSION_TAG_RE.search(rest)):
        # ``gpt@notaurl`` would otherwise go to the public endpoint as a model name
        raise ConfigError(
            f"model spec {spec!r}: the base URL after '@' must start with http:// or https:// "
            "(only a version tag such as @20240229 may follow '@' in a model name)"
        )
    if not rest or any(ch.isspace() for ch in rest):
        raise ConfigError(f"model spec {spec!r}: missing or malformed model name")
    return scheme, rest, base_url


def estimate_tokens(messages: Sequence[Message], max_tokens: int | None) -> int:
    """The token-bucket charge of one request: prompt estimate plus the answer budget."""
    completion = max_tokens if max_tokens is not None else ASSUMED_COMPLETION_TOKENS
    return estimate_prompt_tokens(messages) + completion


def estimate_prompt_tokens(messages: Sequence[Message]) -> int:
    return sum(math.ceil(len(m.content) / 4) + 4 for m in messages)
