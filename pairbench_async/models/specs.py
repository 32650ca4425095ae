"""Model specs to model clients, and the TOML model config.

Specs: ``openai:MODEL`` / ``openai:MODEL@BASE_URL`` (HTTP), ``sim:SKILL[?latency=S][&loop=P]``
and ``rules`` (built-in offline models), ``replay:PATH`` (answers recorded in a
previous run's ``records.jsonl``, for re-scoring without any endpoint).

The config file (``--config FILE``) holds per-model endpoint settings::

    [models."openai:gpt-4o-mini"]
    requests_per_minute = 500
    tokens_per_minute = 200000
    max_concurrency = 32

    [models."openai:qwen2.5-coder@http://127.0.0.1:8000/v1"]
    api_key_env = "LOCAL_KEY"   # the *name* of a variable; keys never go in files

``[defaults]`` applies to every ``openai:`` model without its own table, and is merged
under every table. ``prompt_price_per_million`` and ``completion_price_per_million``
(both or neither) price a model's tokens for ``report --config``; any spec may have a
table for them (``sim:0.8``, ``rules``: offline models report chars/4 estimates).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ..core.errors import ConfigError
from .endpoint import LOCAL_SCHEMES, OFFLINE_SCHEMES
from .prices import Price, PriceBook

if TYPE_CHECKING:  # aiohttp is imported only when an HTTP model is made
    from .endpoint import EndpointSettings

__all__ = ["answers_locally", "load_model_config", "load_prices", "make_model", "openai_settings",
           "price_book", "with_names"]



def answers_locally(spec: str) -> bool:
    """Whether ``spec`` names a model that needs no endpoint (and costs nothing)."""
    return spec.split(":", 1)[0].split("?", 1)[0] in LOCAL_SCHEMES


def with_names(settings: Mapping[str, EndpointSettings], specs: Mapping[str, str]) -> dict[str, EndpointSettings]:
    """``settings`` (keyed by spec) where a named model (``NAME=SPEC``: ``specs`` maps names to
    specs) also finds a table keyed by its NAME (``[models.coder]``); one keyed by the
    spec comes first."""
    out = dict(settings)
    for name, spec in specs.items():
        if name != spec and spec not in out and name in out:
            out[spec] = out[name]
    return out


def load_model_config(path: str | None) -> dict[str, EndpointSettings]:
    """Model spec -> settings (key ``""`` holds ``[defaults]``)."""
    if path is None:
        return {}
    from .endpoint import EndpointSettings

    try:
        raw = tomllib.loads(Path(path).read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read model config: {exc}") from exc
    unknown = set(raw) - {"models", "defaults"}
    if unknown:
        raise ConfigError(f"{path}: unknown sections {sorted(unknown)} (expected [defaults], [models.\"SPEC\"])")
    out: dict[str, EndpointSettings] = {}
    where = "[defaults]"
    try:
        if "defaults" in raw:
            out[""] = msgspec.convert(raw["defaults"], EndpointSettings)
        for spec, table in raw.get("models", {}).items():
            where = f'[models."{spec}"]'
            base = msgspec.to_builtins(out.get("", EndpointSettings()))
            out[spec] = msgspec.convert({**base, **table}, EndpointSettings)
    except msgspec.ValidationError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    except ConfigError as exc:  # a value check of EndpointSettings: say which file and table
        raise ConfigError(f"{path}: {where}: {exc}") from exc
    return out


def price_book(settings: Mapping[str, EndpointSettings], source: str = "") -> PriceBook:
    """The prices of loaded settings (key ``""`` = ``[defaults]``); unpriced tables left out."""
    prices: dict[str, Price] = {}
    for spec, s in settings.items():
        if s.prompt_price_per_million is not None and s.completion_price_per_million is not None:
            prices[spec] = Price(prompt=s.prompt_price_per_million,
                                 completion=s.completion_price_per_million)
    default = prices.pop("", None)
    return PriceBook(models=prices, default=default, source=source)


def load_prices(path: str) -> PriceBook:
    """The prices of the model config at ``path``; :class:`ConfigError` naming it if bad."""
    return price_book(load_model_config(path), source=path)


def openai_settings(spec: str, config: Mapping[str, EndpointSettings] | None = None,
                    environ: Mapping[str, str] | None = None) -> EndpointSettings:
    """The settings an ``openai:`` spec's client gets: its config table (or
    ``[defaults]``), and its base URL, first found: the spec's ``@URL``, the config's,
    ``OPENAI_BASE_URL`` (as openai-python reads it), ``https://api.openai.com/v1``."""
    from .endpoint import EndpointSettings, parse_model_spec

    config = config or {}
    _, _, url = parse_model_spec(spec)
    settings = config.get(spec, config.get("")) or EndpointSettings()
    if url is not None:
        return msgspec.structs.replace(settings, base_url=url)
    env_url = (os.environ if environ is None else environ).get("OPENAI_BASE_URL", "").strip()
    if env_url and settings.base_url == EndpointSettings().base_url:
        settings = msgspec.structs.replace(settings, base_url=env_url.rstrip("/"))
        settings.__post_init__()  # the same checks as a configured URL (scheme, no credentials)
    return settings


def make_model(spec: str, config: dict[str, EndpointSettings] | None = None,
               environ: Mapping[str, str] | None = None) -> Any:
    """A model client for ``spec``.

    An ``openai:`` model's settings and base URL: :func:`openai_settings`.
    """
    from .endpoint import parse_model_spec

    config = config or {}
    scheme, name, url = parse_model_spec(spec)
    if scheme == "openai":
        from .client import OpenAIClient  # aiohttp only when an HTTP model is made

        return OpenAIClient.from_spec(spec, openai_settings(spec, config, environ))
    if scheme in OFFLINE_SCHEMES:
        from .offline import parse_offline_spec

        return parse_offline_spec(spec)
    if scheme == "replay":
        if not name:
            raise ConfigError("replay:PATH needs the records file or run directory")
        from .replay import ReplayModel

        return ReplayModel(name, spec)
    raise ConfigError(f"unknown model spec {spec!r} (openai:MODEL[@URL], sim:SKILL, rules, replay:PATH)")
