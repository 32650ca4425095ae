"""What a sweep is asked to do (:class:`RunConfig`) and what it did (:class:`RunStatistics`).

Kept apart from the evaluator so that the CLI can check a configuration (every
argument, before anything is written) and embedders can build one without the
scheduling machinery.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Collection, Mapping
from typing import Any

import msgspec

from ..core.errors import ConfigError
from ..protocol.hints import EVIDENCE_READINGS, EvidenceReading
from ..protocol.policy import AfterDeferral, PolicyConfig
from ..protocol.protocols import BASELINE_MODES, PROTOCOLS, BaselineMode
from ..protocol.scenarios import ScenarioConfig

__all__ = ["RunConfig", "RunStatistics", "model_name", "split_name"]


#: ``NAME=SPEC``: a name of letters, digits, ``.``, ``_``, ``-`` (never ``:``, ``/``, ``?``, ``@``,
#: so that no spec reads as a name: ``sim:0.5?latency=1`` is a spec)
_NAMED = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]{0,63})=(.+)", re.S)


def split_name(ref: str) -> tuple[str, str]:
    """``"coder=openai:qwen@http://h/v1"`` -> ``("coder", "openai:qwen@http://h/v1")``; a spec
    without a name is its own name (``"sim:0.8"`` -> ``("sim:0.8", "sim:0.8")``)."""
    m = _NAMED.fullmatch(ref)
    if m is None:
        return ref, ref
    return m.group(1), m.group(2)


def model_name(model: Any) -> str:
    """What the records call a model given as a spec string (``NAME=SPEC``: its NAME; a
    spec without one: the spec) or as a client object.

    An object must be a :class:`~..models.interface.ModelClient` or a
    :class:`~..models.interface.ContextModel`, with a non-empty ``name``.
    """
    from ..models.endpoint import BUILTIN_SCHEMES
    from ..models.interface import ContextModel, ModelClient

    if isinstance(model, str):
        return split_name(model)[0]
    if not isinstance(model, (ModelClient, ContextModel)):
        raise ConfigError(f"{model!r} is neither a model spec nor a model: a model object needs a `name` "
                          "and `async complete(messages, *, temperature, max_tokens, seed)` (ModelClient)")
    name = model.name
    if not isinstance(name, str) or not name.strip() or name != name.strip():
        raise ConfigError(f"{model!r}: a model's name must be a non-empty string without surrounding "
                          f"spaces (got {name!r})")
    if name.split(":", 1)[0].split("?", 1)[0] in BUILTIN_SCHEMES:
        raise ConfigError(f"{model!r}: the name {name!r} reads as a built-in model's spec; give your "
                          "model a name of its own (Evaluator's models= maps a spec to a client)")
    return name


class RunConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The parameters of a sweep (everything that decides its numbers).

    ``candidates``, ``feedback`` and ``validator`` each take a spec string
    (``openai:MODEL[@URL]``, ``sim:SKILL``, ``rules``, ``replay:PATH``), optionally named
    (``NAME=SPEC``: the records, rows and episode ids say NAME), or a model object of the
    embedder's own (:class:`~..models.interface.ModelClient`), recorded under its ``name``.
    """

    candidates: list[Any] = msgspec.field(default_factory=lambda: ["sim:0.3", "sim:0.8"])
    feedback: Any = "rules"
    #: the leakage validator's LLM judge (``openai:MODEL[@URL]`` or a model object);
    #: None: the rules alone
    validator: Any = None
    protocols: list[str] = msgspec.field(default_factory=lambda: ["pair"])
    runs: int = 1
    seed: int = 0
    turns: int = 10
    scenario_turns: int = 3
    max_scenarios: int = 8
    min_scenario_size: int = 3
    representatives: int = 3
    hint_budget: int = 3
    concurrency: int = 64
    temperature: float | None = None
    max_tokens: int | None = None
    model_config: str | None = None
    prompt_styles: list[str] = msgspec.field(default_factory=list)
    minimal_edit: bool = False
    #: the candidate sees a one-sentence summary of each problem (When Benchmarks Talk)
    obfuscate: bool = False
    #: the hint level after a deferral: ``stay`` (Algorithm 1), ``escalate`` (§IV-D.2's
    #: text: +1, capped) or ``reset`` (L1); see docs/PROTOCOL.md
    after_deferral: AfterDeferral = "stay"
    #: what the feedback model is shown: ``section-iv`` (§IV's words: the reference, the
    #: current program and the scenario's tests at every level) or ``table-ii`` (the
    #: project's masks by level, derived from what each level may reveal); see
    #: docs/PROTOCOL.md
    evidence_reading: EvidenceReading = "section-iv"
    #: how the leakage validator reads Table II's boundaries: "learned" (default since stop 34: the model trained
    #: on the labelled sets, with the rules' exact checks) or "rules" (the hand-written rules alone, as runs made
    #: before it ran; :func:`..protocol.leakage.validate_hint`)
    validator_reading: str = "learned"
    #: how the source papers' baselines run: ``paper`` (as FeedbackEval and When Benchmarks
    #: Talk ran them: their prompts, no leakage validator, recorded human reviews verbatim)
    #: or ``pairbench`` (the earlier PAIR-BENCH adaptation: validated feedback, PAIR-BENCH's
    #: candidate prompt with history); see docs/PROTOCOL.md, "Baselines as the papers ran them"
    baselines: BaselineMode = "paper"

    def __post_init__(self) -> None:
        self.validate(models=None)

    def named(self) -> tuple[RunConfig, dict[str, Any]]:
        """This configuration with every model object replaced by its name, and those
        objects by name (what the evaluator calls instead of making a client)."""
        given: dict[str, Any] = {}
        named = False
        for ref in (*self.candidates, self.feedback, self.validator):
            if ref is None or isinstance(ref, str):
                named = named or (ref is not None and split_name(ref)[0] != ref)
                continue
            name = model_name(ref)
            if given.setdefault(name, ref) is not ref:
                raise ConfigError(f"two different model objects are both named {name!r}")
        if not given and not named:
            return self, given
        # a copy with the names in place: a replace() would run __post_init__, which would
        # check the names as spec strings (an object's name needs no spec syntax)
        config = copy.copy(self)
        msgspec.structs.force_setattr(config, "candidates", [model_name(c) for c in self.candidates])
        msgspec.structs.force_setattr(config, "feedback", model_name(self.feedback))
        msgspec.structs.force_setattr(config, "validator",
                                      None if self.validator is None else model_name(self.validator))
        return config, given

    def specs(self) -> dict[str, str]:
        """The spec of every model given as a string, by name (``NAME=SPEC``; a spec without
        a name is its own); :class:`ConfigError` when one name is given two specs."""
        out: dict[str, str] = {}
        for ref in (*self.candidates, self.feedback, self.validator):
            if isinstance(ref, str):
                name, spec = split_name(ref)
                if out.setdefault(name, spec) != spec:
                    raise ConfigError(f"the name {name!r} is given to two models ({out[name]} and {spec})")
        return out

    def validate(self, models: Collection[str] | Mapping[str, Any] | None = ()) -> None:
        """Every parameter checked before anything is written (a ``--sweep`` point too:
        ``msgspec.structs.replace`` does not run ``__post_init__``).

        ``models``: the specs an embedder supplies its own clients for (any name
        goes); every other spec must be one this package can make. None skips that
        check (at construction, when the clients are not known yet). A model given
        as an object is checked for the protocol and a name.
        """
        if not self.candidates:
            raise ConfigError("at least one candidate model is needed")
        config, given = self.named()  # an object's name is checked here, and needs no spec syntax
        specs = self.specs()
        clash = sorted(set(specs) & set(given))
        if clash:
            raise ConfigError(f"the name {clash[0]!r} is given to a model object and to {specs[clash[0]]}")
        config._check(supplied={*(models or ()), *given}, known=models is not None, specs=specs)

    def _check(self, *, supplied: Collection[str], known: bool, specs: Mapping[str, str]) -> None:
        """:meth:`validate` on a configuration of names: ``supplied`` are the models given
        as clients; with ``known``, every other spec must be one this package can make;
        ``specs``: the spec of each name given as ``NAME=SPEC``."""
        from ..models.endpoint import (
            BUILTIN_SCHEMES,
            LOCAL_SCHEMES,
            OFFLINE_SCHEMES,
            parse_model_spec,
        )
        from ..models.offline import parse_offline_spec

        for what, values in (("--candidate", self.candidates), ("--protocol", self.protocols),
                             ("--prompt-style", self.prompt_styles)):
            twice = sorted({v for v in values if values.count(v) > 1})
            if twice:  # the same episode twice would collide in the records
                raise ConfigError(f"{what} names {', '.join(twice)} more than once")
        if any(specs.get(c, c) == "rules" for c in self.candidates):
            raise ConfigError("'rules' is a feedback model (it writes hints, not programs); use it as "
                              "--feedback rules, and sim:SKILL as an offline candidate")
        if self.feedback not in supplied and specs.get(self.feedback, self.feedback).startswith("sim:"):
            # it would write a program as every hint: each rejected, every hint the fallback
            raise ConfigError(f"--feedback {specs.get(self.feedback, self.feedback)!r}: sim:SKILL is an "
                              "offline candidate (it writes programs, not hints); the offline feedback "
                              "model is rules")
        for name in (*self.candidates, self.feedback):
            if name in supplied:
                continue
            spec = specs.get(name, name)
            scheme, _, _ = parse_model_spec(spec)  # ConfigError naming the spec
            if scheme in OFFLINE_SCHEMES:
                parse_offline_spec(spec)
            elif scheme not in BUILTIN_SCHEMES and known:
                raise ConfigError(f"unknown model spec {spec!r} (openai:MODEL[@URL], sim:SKILL, rules, "
                                  "replay:PATH)")
        if self.validator is not None and self.validator not in supplied:
            judge = specs.get(self.validator, self.validator)
            scheme, _, _ = parse_model_spec(judge)
            # an offline model writes hints, not verdicts; replay cannot tell a verdict call apart
            if scheme in LOCAL_SCHEMES or (scheme not in BUILTIN_SCHEMES and known):
                raise ConfigError(f"--validator-model {judge!r}: the judge must be a real model, "
                                  "openai:MODEL[@URL]")
        for name in ("runs", "concurrency", "turns", "scenario_turns", "max_scenarios", "min_scenario_size",
                     "representatives", "hint_budget", "seed"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ConfigError(f"{name.replace('_', '-')} must be an integer (got {value!r})")
            if name != "seed" and value < 1:
                raise ConfigError(f"{name.replace('_', '-')} must be >= 1 (got {getattr(self, name)})")
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ConfigError(f"max-tokens must be >= 1 (got {self.max_tokens})")
        if self.temperature is not None and not 0 <= self.temperature <= 2:
            raise ConfigError(f"temperature must be in 0..2 (got {self.temperature})")
        for p in self.protocols:
            if p not in PROTOCOLS:
                raise ConfigError(f"unknown protocol {p!r} (known: {', '.join(PROTOCOLS)})")
        if self.evidence_reading not in EVIDENCE_READINGS:
            raise ConfigError(f"evidence-reading must be {' or '.join(EVIDENCE_READINGS)} "
                              f"(got {self.evidence_reading!r})")
        if self.validator_reading not in ("learned", "rules"):
            raise ConfigError(f"validator-reading must be learned or rules (got {self.validator_reading!r})")
        if self.after_deferral not in ("stay", "escalate", "reset"):
            raise ConfigError(f"after-deferral must be stay, escalate or reset (got {self.after_deferral!r})")
        if self.baselines not in BASELINE_MODES:
            raise ConfigError(f"baselines must be {' or '.join(BASELINE_MODES)} (got {self.baselines!r})")
        from ..protocol.styles import STYLES

        bad = set(self.prompt_styles) - set(STYLES)
        if bad:
            raise ConfigError(f"unknown prompt styles {sorted(bad)} (known: {', '.join(STYLES)})")

    def policy(self) -> PolicyConfig:
        return PolicyConfig(turns=self.turns, scenario_turns=self.scenario_turns,
                            after_deferral=self.after_deferral, evidence_reading=self.evidence_reading,
                            scenarios=ScenarioConfig(max_scenarios=self.max_scenarios,
                                                     min_size=self.min_scenario_size,
                                                     representatives=self.representatives))

    def params(self) -> dict[str, object]:
        """The parameters a manifest records (a resume must match them). A reading left at
        its default is not written, so runs made before it existed resume unchanged.

        ``baselines``, ``evidence_reading`` and ``validator_reading`` are the other way round: a manifest written
        before their default changed ran the baselines the ``pairbench`` way and the
        ``table-ii`` reading, so those values are the ones left unwritten (an old folder
        resumes as it ran; a new run records ``"baselines": "paper"`` and
        ``"evidence_reading": "section-iv"``)."""
        readings: dict[str, object] = {}
        if self.baselines != "pairbench":
            readings["baselines"] = self.baselines
        if self.after_deferral != "stay":
            readings["after_deferral"] = self.after_deferral
        if self.evidence_reading != "table-ii":
            readings["evidence_reading"] = self.evidence_reading
        if self.validator_reading != "rules":
            readings["validator_reading"] = self.validator_reading
        return {"turns": self.turns, "scenario_turns": self.scenario_turns,
                "max_scenarios": self.max_scenarios, "min_scenario_size": self.min_scenario_size,
                "representatives": self.representatives, "hint_budget": self.hint_budget,
                "temperature": self.temperature, "max_tokens": self.max_tokens,
                "prompt_styles": sorted(self.prompt_styles), "minimal_edit": self.minimal_edit,
                "obfuscate": self.obfuscate, **readings}


class RunStatistics(msgspec.Struct, frozen=True):
    episodes_total: int
    episodes_done: int
    episodes_skipped: int
    errors: int
    turns: int
    tests_run: int
    prompt_tokens: int
    completion_tokens: int
    elapsed_s: float
    #: models whose circuit breaker opened (every later call failed at once)
    stopped_models: list[str] = []
    #: batches of tests the sandbox ran again on another node after losing one (a
    #: cluster sandbox; each test still has one result) and the nodes it lost
    sandbox_retries: int = 0
    sandbox_nodes_lost: int = 0
    #: ``--resume``: episodes whose latest attempt ended in error, kept as they are (without
    #: ``retry_errors``) or run again (``retried``, with it)
    errors_kept: int = 0
    retried: int = 0
    #: model calls started so far, in flight now, and the retries of the model clients
    calls: int = 0
    calls_in_flight: int = 0
    call_retries: int = 0
