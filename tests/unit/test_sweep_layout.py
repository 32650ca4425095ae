"""The ``--sweep`` folder's layout (:mod:`pairbench_async.runlog.sweep`): which runs a folder
holds, in which order, and how a setting's folder is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from pairbench_async.core.errors import ConfigError
from pairbench_async.runlog.records import RunManifest, SweepSetting
from pairbench_async.runlog.store import write_manifest
from pairbench_async.runlog.sweep import NAME_LIMIT, is_run, run_dirs, safe_part, setting_name


def _run(folder: Path, index: int | None = None) -> Path:
    folder.mkdir(parents=True)
    (folder / "records.jsonl").write_bytes(b"")
    if index is not None:
        write_manifest(folder, RunManifest(
            run_id="r", created="", software_version="", dataset=[], dataset_hash="", instances=1,
            candidates=["sim:0.3"], feedback="rules", protocols=["pair"], runs=1, seed=0, params={},
            sweep=SweepSetting(name=folder.name, index=index, values={})))
    return folder


def test_a_run_folder_is_its_own_single_setting(tmp_path: Path) -> None:
    run = _run(tmp_path / "run")
    assert is_run(run) and not is_run(tmp_path)
    assert run_dirs(run) == [("", run)]


def test_a_sweep_lists_its_settings_in_grid_order_from_the_manifests(tmp_path: Path) -> None:
    # the grid said turns=10 first (the main setting): name order would put it last
    second = _run(tmp_path / "turns=2", index=1)
    first = _run(tmp_path / "turns=10", index=0)
    assert run_dirs(tmp_path) == [("turns=10", first), ("turns=2", second)]


def test_settings_without_a_recorded_place_sort_by_number_not_by_text(tmp_path: Path) -> None:
    names = ["turns=10", "turns=6", "turns=100"]
    for name in names:
        _run(tmp_path / name)
    assert [name for name, _ in run_dirs(tmp_path)] == ["turns=6", "turns=10", "turns=100"]


def test_a_folder_without_runs_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    with pytest.raises(ConfigError, match="no records.jsonl"):
        run_dirs(tmp_path)


def test_folder_names_round_trip_through_the_reader(tmp_path: Path) -> None:
    """What the writer names, the reader finds: each setting once, under the writer's name."""
    grid: list[dict[str, int | str]] = [{"turns": t, "feedback": f} for t in (2, 10)
                                        for f in ("rules", "openai:m@http://h:8000/v1")]
    names = [setting_name(point, grid) for point in grid]
    for index, name in enumerate(names):
        _run(tmp_path / name, index=index)
    assert [name for name, _ in run_dirs(tmp_path)] == names


def test_safe_part_keeps_safe_values_and_marks_lossy_ones() -> None:
    assert safe_part(6, [6, 10]) == "6"
    assert safe_part("openai:m", ["openai:m", "rules"]) == "openai-m"
    # two specs that read alike keep apart by a digest of each exact value
    a, b = safe_part("a:b", ["a:b", "a/b"]), safe_part("a/b", ["a:b", "a/b"])
    assert a != b and a.startswith("a-b-") and len(a) == len("a-b-") + 6
    assert len(safe_part("x" * 100, [])) == NAME_LIMIT + 7
    assert safe_part("::", ["::"]) == safe_part("::", [])  # nothing readable: the digest alone
