"""A run folder, or a ``--sweep`` folder, read back once: :func:`load_run`.

The one reading of a run's records that every report uses: the records are read once,
then *restricted* to the instances every compared (model, protocol) group finished
(:func:`.completeness.restrict`), as the leaderboard ranks them. :class:`LoadedRun` keeps
both, with the manifest and the completeness, and gives the trajectories and the
per-model metrics of the restricted records: ``load_run(p).metrics()`` is exactly the
``models`` of ``pairbench report p --json``.

A sweep folder (one run folder per setting, :mod:`..runlog.sweep`) loads as a
:class:`LoadedRun` whose ``settings`` hold each setting's run and whose own records are
the *combined* view the sweep report's every-setting table ranks: every setting's
restricted records, each model renamed ``SETTING MODEL`` (and each episode
``SETTING/EPISODE``), so that one leaderboard holds every setting's models.

Records of one's own (from :meth:`..runner.evaluator.Evaluator.run`, say) get the same
numbers through :meth:`LoadedRun.from_records`.

Every reading takes each episode's latest attempt (``--retry-errors`` appends a new
attempt whose records supersede the earlier ones: :func:`..runlog.records.latest_attempts`);
the superseded records are kept apart in ``superseded``. A folder being written is read as
it stands (a torn last line is dropped): no lock is needed to read.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import msgspec

from ..core.errors import ConfigError
from ..runlog.records import Record, RunManifest, latest_attempts
from ..runlog.store import read_manifest, read_records
from ..runlog.sweep import is_run, run_dirs
from .completeness import Completeness, completeness, restrict
from .leaderboard import Leaderboard, leaderboard, leaderboard_json, trajectories
from .sensitivity import Sensitivity, sensitivity
from .trajectory import Trajectory

__all__ = ["LoadedRun", "load_run"]


class LoadedRun(msgspec.Struct, frozen=True, kw_only=True):
    """A run (or a sweep) read once: what every report of it is computed from.

    Attributes:
        path: the folder it was read from (``None`` for :meth:`from_records`).
        manifest: the run's manifest (``None`` when it has none); for a sweep, the main
            setting's.
        records: the records of the instances every (model, protocol) group finished,
            in file order: what the metrics are computed on. For a sweep, every
            setting's, combined (see the module docstring).
        all_records: every record read, unfinished and errored episodes and instances
            not every group finished included (what token usage and completeness count).
        completeness: how many planned episodes finished; for a sweep, the main setting's.
        settings: a sweep's runs by setting name, in the sweep's order (``{}`` for a run).
        main: a sweep's main setting (its first, unless asked otherwise); ``None`` for a run.
        superseded: the records of earlier attempts of episodes run again (``--retry-errors``),
            in file order; none of the above counts them.
    """

    path: Path | None = None
    manifest: RunManifest | None = None
    records: list[Record]
    all_records: list[Record]
    completeness: Completeness
    settings: dict[str, LoadedRun] = {}
    main: str | None = None
    superseded: list[Record] = []

    @classmethod
    def from_records(cls, records: Sequence[Record], manifest: RunManifest | None = None,
                     path: Path | None = None) -> LoadedRun:
        """A run from records already in memory, restricted as a folder's would be (each
        episode's latest attempt)."""
        everything, superseded = latest_attempts(records)
        return cls(path=path, manifest=manifest, records=restrict(everything),
                   all_records=everything, completeness=completeness(everything, manifest),
                   superseded=superseded)

    @property
    def is_sweep(self) -> bool:
        return bool(self.settings)

    @property
    def main_run(self) -> LoadedRun:
        """The run a report details: a sweep's main setting, or this run itself."""
        return self.settings[self.main] if self.main is not None else self

    def runs(self) -> list[tuple[str, LoadedRun]]:
        """(setting, run) of every run here: a sweep's settings in order, or ``("", self)``."""
        return list(self.settings.items()) if self.settings else [("", self)]

    def notices(self) -> list[str]:
        """What is unfinished, one line per run (``SETTING: banner`` in a sweep); [] if nothing."""
        if not self.settings:
            banner = self.completeness.banner()
            return [banner] if banner else []
        return [f"{name}: {banner}" for name, run in self.settings.items()
                if (banner := run.completeness.banner())]

    def trajectories(self, *, with_protocol: bool | None = None) -> list[Trajectory]:
        """The finished episodes' trajectories (errored and unfinished ones left out);
        ``with_protocol`` keeps each one's protocol (default: when several protocols ran)."""
        return trajectories(self.records, with_protocol=with_protocol)[0]

    def unfinished(self) -> int:
        """Episodes planned or started with no end record, over every run here (not only
        the instances the models are ranked on)."""
        return sum(run.completeness.unfinished for _, run in self.runs())

    def leaderboard(self) -> Leaderboard:
        """Table III per model (``model|protocol`` when several protocols ran); its
        ``unfinished`` is :meth:`unfinished` (the records alone miss episodes never started)."""
        return msgspec.structs.replace(leaderboard(self.records), unfinished=self.unfinished())

    def metrics(self) -> dict[str, dict[str, float | None]]:
        """``{model: {metric: value}}``: the ``models`` of ``report --json``, equal numbers
        (rates as fractions; a sweep's keys are ``SETTING MODEL[|PROTOCOL]``)."""
        models = leaderboard_json(self.leaderboard())["models"]
        return models  # type: ignore[return-value]

    def sensitivity(self) -> Sensitivity:
        """A sweep's Table VII and the τ between its settings (:mod:`.sensitivity`)."""
        if not self.settings:
            raise ConfigError(f"{self.path}: a single run has no settings to compare")
        loaded = [(name, run.records, run.manifest, run.completeness.banner() or "")
                  for name, run in self.settings.items()]
        return sensitivity(loaded, main=self.main)


def _read(path: Path) -> LoadedRun:
    records, _ = read_records(path)
    return LoadedRun.from_records(records, read_manifest(path), path)


def _combined(settings: dict[str, LoadedRun], *, everything: bool = False) -> list[Record]:
    """Every setting's restricted records (``everything``: all its records), each model
    named ``SETTING MODEL`` and each episode ``SETTING/EPISODE``."""
    return [msgspec.structs.replace(r, model=f"{name} {r.model}", episode_id=f"{name}/{r.episode_id}")
            for name, run in settings.items()
            for r in (run.all_records if everything else run.records)]


def load_run(path: str | os.PathLike[str], *, setting: str | None = None) -> LoadedRun:
    """Read a run folder, or a ``--sweep`` folder, once.

    Args:
        path: a run folder (``records.jsonl``, ``manifest.json``) or a sweep folder (a run
            folder per setting).
        setting: a sweep's main setting (default: the sweep's first); refused for a run.

    Returns:
        The :class:`LoadedRun`; ``load_run(p).metrics()`` equals ``report p --json``'s
        ``models``.

    Raises:
        ConfigError: no run in ``path``, or an unknown ``setting``.
        StoreError: a records file or manifest that cannot be read.

    Example::

        run = pairbench_async.load_run("runs/20260101-120000")
        run.metrics()["sim:0.8"]["FinalFix"]            # as report --json prints it
        [t.instance_id for t in run.trajectories()]     # finished episodes, restricted

        sweep = pairbench_async.load_run("runs/sweep")  # written by --sweep turns=6,10
        sweep.metrics()["turns=6 sim:0.8"]              # the combined table
        {name: s.metrics() for name, s in sweep.settings.items()}
    """
    root = Path(path)
    if is_run(root):
        if setting is not None:
            raise ConfigError(f"setting {setting!r}: {root} is a single run, not a sweep folder")
        return _read(root)
    runs = run_dirs(root)  # ConfigError when there is no run here
    names = [name for name, _ in runs]
    main = setting if setting is not None else names[0]
    if main not in names:
        raise ConfigError(f"setting {main!r} is not a setting of {root} (it has: {', '.join(names)})")
    settings = {name: _read(run) for name, run in runs}
    return LoadedRun(path=root, manifest=settings[main].manifest, records=_combined(settings),
                     all_records=_combined(settings, everything=True),
                     completeness=settings[main].completeness,
                     settings=settings, main=main)
