"""What a run folder was asked to do, read back from its manifest(s): ``--resume`` alone.

:func:`recorded_run` reads a run folder's manifest, or every setting's of a ``--sweep``
folder, into the :class:`RunConfig` fields, the grid, the dataset and the options the run
was started with. :func:`merge_recorded` puts what a resuming command gives on top: a
value given must equal the recorded one (:class:`ResumeMismatch` naming every
difference, as the command spells it), a value left out is the recorded one. So
``run --resume --out DIR`` continues exactly the run in ``DIR``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

from ..core.errors import ConfigError, ResumeMismatch
from ..runlog.records import RunManifest
from ..runlog.store import read_manifest
from ..runlog.sweep import run_dirs
from .config import RunConfig

__all__ = ["LEGACY_LOOP_RULE", "RecordedRun", "merge_recorded", "recorded_run"]

#: the sandbox's loop rule of a run folder whose manifest does not record it: the defaults
#: of the version before it was recorded (loop_floor was 5 ms then; 2 ms since the zygote
#: kills at the limit), so an old folder resumes with the bounds it ran with; and a child per
#: test for a folder that does not record ``resident`` (every run before stop 30)
LEGACY_LOOP_RULE: dict[str, Any] = {"loop_factor": 10, "loop_floor": 0.005, "loop_probe": 0.1,
                                     "resident": False}

#: the ``params`` of a manifest that are :class:`RunConfig` fields
_PARAMS = ("turns", "scenario_turns", "max_scenarios", "min_scenario_size", "representatives", "hint_budget",
           "temperature", "max_tokens", "prompt_styles", "minimal_edit", "obfuscate", "after_deferral",
           "evidence_reading", "baselines", "validator_reading")


class RecordedRun(msgspec.Struct, frozen=True):
    """What a folder's manifest(s) say it was asked to do.

    ``config``: :class:`RunConfig` fields (models as ``NAME=SPEC`` where they were named;
    for a sweep, the main setting's, without the swept fields); ``grid``: a sweep's grid
    (field -> values in the sweep's order; ``{}`` for a run); ``dataset``: the instance
    files (``[]``: the bundled fixtures); ``options``: ``limit``, ``skip_invalid``, ...
    """

    config: dict[str, Any]
    grid: dict[str, list[Any]]
    dataset: list[str]
    options: dict[str, Any]


def _ref(manifest: RunManifest, name: str) -> str:
    spec = manifest.specs.get(name)
    return f"{name}={spec}" if spec is not None else name


def _config_of(manifest: RunManifest) -> dict[str, Any]:
    config: dict[str, Any] = {
        "candidates": [_ref(manifest, c) for c in manifest.candidates],
        "feedback": _ref(manifest, manifest.feedback),
        "validator": _ref(manifest, manifest.validator) if manifest.validator else None,
        "protocols": list(manifest.protocols), "runs": manifest.runs, "seed": manifest.seed,
    }
    for key in _PARAMS:
        if key in manifest.params:
            config[key] = manifest.params[key]
    # written only when not "pairbench": a manifest without it (every run made before the
    # setting existed) ran the baselines the pairbench way, and resumes so
    config.setdefault("baselines", "pairbench")
    # the same for the evidence reading, written only when not "table-ii" (the default
    # before section-iv)
    config.setdefault("evidence_reading", "table-ii")
    # and the validator's reading, written only when not "rules" (every run before stop 34 read by the rules)
    config.setdefault("validator_reading", "rules")
    if manifest.options.get("model_config"):
        config["model_config"] = manifest.options["model_config"]
    return config


def recorded_run(root: str | Path) -> RecordedRun:
    """Read back what the run (or ``--sweep``) in ``root`` was asked to do.

    :class:`ConfigError` when ``root`` holds no manifest to read it from.
    """
    root = Path(root)
    manifest = read_manifest(root)
    if manifest is not None:
        return RecordedRun(config=_config_of(manifest), grid={}, dataset=list(manifest.dataset),
                           options=_options_of(manifest))
    manifests = [m for _, d in run_dirs(root) if (m := read_manifest(d)) is not None and m.sweep is not None]
    if not manifests:
        raise ConfigError(f"{root}: no manifest.json here or in its settings' folders; nothing to resume")
    manifests.sort(key=lambda m: m.sweep.index)  # type: ignore[union-attr]
    main = manifests[0]
    assert main.sweep is not None
    grid: dict[str, list[Any]] = {}
    recorded_grid = main.options.get("sweep_grid")
    if isinstance(recorded_grid, dict):  # the whole grid, as run_sweep was given it
        grid = {k: list(v) for k, v in recorded_grid.items()}
    for key in main.sweep.values if not grid else ():  # written before the grid was: as far as seen
        field = key.replace("-", "_")
        values: list[Any] = []
        for m in manifests:
            assert m.sweep is not None
            value = m.sweep.values.get(key)
            if field == "feedback" and isinstance(value, str):
                value = _ref(m, value)
            if value is not None and value not in values:
                values.append(value)
        grid[field] = values
    config = {k: v for k, v in _config_of(main).items() if k not in grid}
    return RecordedRun(config=config, grid=grid, dataset=list(main.dataset), options=_options_of(main))


def _options_of(manifest: RunManifest) -> dict[str, Any]:
    """``limit``, ``skip_invalid``, ``references_checked``. A manifest written before the
    options were recorded has none: its instance count is the limit (the first N
    instances, the same choice); a later one records ``limit`` when there was one (its
    count may be smaller: instances whose reference fails are left out after the limit)."""
    options = {k: v for k, v in manifest.options.items() if k not in ("model_config", "sweep_grid")}
    if not manifest.options:
        options["limit"] = manifest.instances
    return options


def merge_recorded(recorded: RecordedRun, given: Mapping[str, Any], *, where: str | Path,
                   spelled: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``recorded``'s config, grid and options with ``given`` on top: every value given
    (a :class:`RunConfig` field, ``grid``, ``dataset``-free options such as ``limit``) must
    equal the recorded one, else :class:`ResumeMismatch` naming each difference (as
    ``spelled`` spells its key: ``{"turns": "--turns"}``); what is left out is recorded.

    Returns ``{"config": ..., "grid": ..., "options": ...}``.
    """
    spelled = spelled or {}
    recorded_values: dict[str, Any] = {**RunConfig().params(), **_defaults(), **recorded.config,
                                       **recorded.options, "grid": recorded.grid}
    # (not recorded before stop 31: every test ran under loop_floor)
    recorded_values.setdefault("loop_floor_shared", recorded_values.get("loop_floor"))
    diffs = []
    grid = dict(recorded.grid)
    for key, value in given.items():
        if key == "grid" and not recorded.grid:
            grid = dict(value)  # a grid on a single run: the folder's layout refuses it, in its words
            continue
        have = recorded_values.get(key)
        if key in ("prompt_styles",) and value is not None and have is not None:
            same = sorted(value) == sorted(have)
        else:
            same = value == have
        if not same:
            diffs.append(f"{spelled.get(key, key)}: the run has {_show(have)}, this command gives {_show(value)}")
    if diffs:
        raise ResumeMismatch(f"cannot resume {where}: " + "; ".join(diffs)
                             + " (leave an argument out to continue with the recorded value)")
    config = {**recorded.config}
    options = {**recorded.options}
    for key, value in given.items():
        if key == "grid":
            continue
        (config if key in RunConfig.__struct_fields__ else options)[key] = value
    return {"config": config, "grid": grid, "options": options}


def _defaults() -> dict[str, Any]:
    d = RunConfig()
    return {"candidates": list(d.candidates), "feedback": d.feedback, "validator": None,
            "protocols": list(d.protocols), "runs": d.runs, "seed": d.seed, "limit": None, "skip_invalid": False,
            # readings a manifest records only when they are not the default
            "after_deferral": d.after_deferral, "evidence_reading": "table-ii", "validator_reading": "rules", **LEGACY_LOOP_RULE}


def _show(value: Any) -> str:
    if isinstance(value, dict):
        return " ".join(f"{k.replace('_', '-')}={','.join(map(str, v))}" for k, v in value.items()) or "no --sweep"
    if isinstance(value, list):
        return " ".join(map(str, value)) or "none"
    return repr(value) if isinstance(value, str) else str(value)
