"""``load_run``: a run or a sweep folder read once, with the numbers ``report --json`` prints.

Real folders, written by the real CLI in a subprocess (offline models, two instances), and
read back both ways: through the command line and through the library call.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

import pairbench_async
from pairbench_async.core.errors import ConfigError
from pairbench_async.report.completeness import restrict
from pairbench_async.runlog.records import EpisodeRecord
from pairbench_async.runlog.store import read_manifest, read_records


def _cli(*args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "pairbench_async", *args], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _report_json(*args: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(_cli("report", *args, "--json"))
    return data


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A run of two protocols, and a two-setting sweep, each on two bundled instances."""
    base = tmp_path_factory.mktemp("load_run")
    common = ("run", "--limit", "2", "--turns", "2", "--no-progress", "-q")
    _cli(*common, "--protocol", "pair", "nohint", "--out", str(base / "run"))
    _cli(*common, "--sweep", "scenario-turns=1,2", "--out", str(base / "sweep"))
    return base / "run", base / "sweep"


def test_a_runs_metrics_are_report_jsons_models(folders: tuple[Path, Path]) -> None:
    run_dir, _ = folders
    run = pairbench_async.load_run(run_dir)
    report = _report_json(str(run_dir))
    assert run.metrics() == report["models"]
    assert sorted(run.metrics()) == ["sim:0.3|nohint", "sim:0.3|pair", "sim:0.8|nohint", "sim:0.8|pair"]
    board = run.leaderboard()
    assert (board.episodes, board.errored, board.unfinished) == (
        report["episodes"], report["errored"], report["unfinished"])
    assert len(run.trajectories()) == report["episodes"] == 8
    records, _ = read_records(run_dir)
    assert run.all_records == records and run.records == restrict(records)
    assert run.manifest == read_manifest(run_dir)
    assert run.settings == {} and run.main is None and run.main_run is run and not run.is_sweep
    assert run.notices() == [] and run.completeness.complete


def test_a_sweep_gives_each_setting_and_the_combined_view(folders: tuple[Path, Path]) -> None:
    _, sweep_dir = folders
    sweep = pairbench_async.load_run(sweep_dir)
    report = _report_json(str(sweep_dir))
    # the combined table of every setting, as the sweep report ranks it
    assert sweep.metrics() == report["models"]
    assert sorted(sweep.metrics()) == ["scenario-turns=1 sim:0.3", "scenario-turns=1 sim:0.8",
                                       "scenario-turns=2 sim:0.3", "scenario-turns=2 sim:0.8"]
    assert list(sweep.settings) == report["settings"] == ["scenario-turns=1", "scenario-turns=2"]
    assert sweep.is_sweep and sweep.main == "scenario-turns=1"
    assert sweep.main_run is sweep.settings["scenario-turns=1"]
    assert sweep.main_run.metrics() == report["main"]["models"]
    assert sweep.manifest == sweep.main_run.manifest
    assert sweep.sensitivity().main == report["main_setting"]
    for name, run in sweep.settings.items():  # each setting, as its own folder reports it
        assert run.path == sweep_dir / name
        assert run.metrics() == _report_json(str(sweep_dir / name))["models"]
    assert len(sweep.records) == sum(len(run.records) for run in sweep.settings.values())


def test_a_sweeps_main_setting_can_be_chosen(folders: tuple[Path, Path]) -> None:
    _, sweep_dir = folders
    sweep = pairbench_async.load_run(sweep_dir, setting="scenario-turns=2")
    report = _report_json(str(sweep_dir), "--setting", "scenario-turns=2")
    assert sweep.main == report["main_setting"] == "scenario-turns=2"
    assert sweep.main_run.metrics() == report["main"]["models"]
    assert sweep.metrics() == report["models"]  # the combined view does not depend on it
    with pytest.raises(ConfigError, match="is not a setting of"):
        pairbench_async.load_run(sweep_dir, setting="turns=9")


def test_a_single_run_has_no_settings(folders: tuple[Path, Path], tmp_path: Path) -> None:
    run_dir, _ = folders
    with pytest.raises(ConfigError, match="single run"):
        pairbench_async.load_run(run_dir, setting="turns=1")
    with pytest.raises(ConfigError, match="single run has no settings"):
        pairbench_async.load_run(run_dir).sensitivity()
    with pytest.raises(ConfigError, match="no records.jsonl"):
        pairbench_async.load_run(tmp_path)


def test_records_in_memory_are_restricted_as_a_folders(folders: tuple[Path, Path]) -> None:
    """An embedder's own records get the folder's numbers, and an unfinished episode takes
    its instance out of every model's ranking, as the report does."""
    run_dir, _ = folders
    records, _ = read_records(run_dir)
    whole = pairbench_async.LoadedRun.from_records(records, read_manifest(run_dir))
    assert whole.metrics() == pairbench_async.load_run(run_dir).metrics()
    cut = next(r for r in records if isinstance(r, EpisodeRecord))
    partial = pairbench_async.LoadedRun.from_records([r for r in records if r is not cut],
                                                     read_manifest(run_dir))
    assert not partial.completeness.complete and partial.notices()
    assert {r.instance_id for r in partial.records} == {r.instance_id for r in records} - {cut.instance_id}
    assert len(partial.all_records) == len(records) - 1
    assert msgspec.json.encode(partial.metrics()) != msgspec.json.encode(whole.metrics())


def test_export_tables_come_from_every_record_of_every_setting(folders: tuple[Path, Path]) -> None:
    from pairbench_async.report.tables import TABLES, export_tables

    run_dir, sweep_dir = folders
    run = pairbench_async.load_run(run_dir)
    assert run.runs() == [("", run)]
    sweep = pairbench_async.load_run(sweep_dir)
    assert [name for name, _ in sweep.runs()] == list(sweep.settings)
    tables = export_tables((name, r.all_records) for name, r in sweep.runs())
    assert list(tables) == list(TABLES) == ["turns", "episodes", "metrics"]
    every = [rec for _, r in sweep.runs() for rec in r.all_records]
    assert len(tables["episodes"]) == sum(isinstance(rec, EpisodeRecord) for rec in every)
    assert len(tables["turns"]) == len(every) - len(tables["episodes"])
    assert {row["setting"] for row in tables["metrics"]} == set(sweep.settings)
    assert {row["model"] for row in tables["turns"]} == {"sim:0.3", "sim:0.8"}  # not renamed


def test_a_killed_run_counts_its_planned_and_started_episodes_as_unfinished(
        folders: tuple[Path, Path], tmp_path: Path) -> None:
    """SIGKILL leaves an episode started (turns, no end record) and others never started
    (no record at all): both are unfinished, though the records alone show only the first."""
    import shutil

    run_dir, _ = folders
    killed = tmp_path / "killed"
    shutil.copytree(run_dir, killed)
    lines = (killed / "records.jsonl").read_text().splitlines()
    decoded = [json.loads(line) for line in lines]
    episodes = list(dict.fromkeys(d["episode_id"] for d in decoded))
    started, never = episodes[0], episodes[1]
    kept = [line for line, d in zip(lines, decoded, strict=True)
            if d["episode_id"] != never and not (d["episode_id"] == started and d["kind"] == "episode")]
    (killed / "records.jsonl").write_text("\n".join(kept) + "\n")
    assert _report_json(str(killed))["unfinished"] == 2
    assert "0 errored, 2 unfinished" in _cli("report", str(killed))
    assert "2 unfinished" in _cli("report", str(killed), "--markdown")
    run = pairbench_async.load_run(killed)
    assert run.completeness.planned == 8 and run.completeness.finished == 6
    assert run.unfinished() == run.leaderboard().unfinished == 2
