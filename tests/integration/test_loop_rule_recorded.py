"""A run records the sandbox's loop rule (factor, floor, probe) with its options, since the
rule decides verdicts past its bounds: a resume keeps the recorded rule and refuses a flag
that differs from it, and a folder from before it was recorded resumes with the defaults of
that time (LEGACY_LOOP_RULE), not today's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pairbench_async.runner.resume import LEGACY_LOOP_RULE
from pairbench_async.sandbox.config import SandboxConfig

ROOT = Path(__file__).resolve().parents[2]


def _run(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pairbench_async", "run", "--out", str(out), "--limit", "2",
                           "--turns", "1", "--no-progress", "-q", *extra],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def _options(out: Path) -> dict[str, object]:
    return json.loads((out / "manifest.json").read_text())["options"]


def test_the_rule_is_recorded_and_kept_on_resume(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert _run(out, "--loop-floor", "0.003", "--loop-probe", "0.2").returncode == 0
    now = SandboxConfig()
    assert {k: _options(out)[k] for k in LEGACY_LOOP_RULE} == {
        "loop_factor": now.loop_factor, "loop_floor": 0.003, "loop_probe": 0.2, "resident": True}
    refused = _run(out, "--resume", "--loop-floor", "0.002")
    assert refused.returncode == 2
    assert "--loop-floor: the run has 0.003, this command gives 0.002" in refused.stderr
    assert _run(out, "--resume").returncode == 0
    assert _options(out)["loop_floor"] == 0.003


def test_a_folder_without_the_rule_resumes_with_the_defaults_of_its_time(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert _run(out).returncode == 0
    manifest = json.loads((out / "manifest.json").read_text())
    for key in LEGACY_LOOP_RULE:
        del manifest["options"][key]
    (out / "manifest.json").write_text(json.dumps(manifest))
    refused = _run(out, "--resume", "--loop-floor", str(SandboxConfig().loop_floor))
    assert refused.returncode == 2
    assert f"the run has {LEGACY_LOOP_RULE['loop_floor']}" in refused.stderr
    assert _run(out, "--resume").returncode == 0


def test_the_rule_turned_off_is_recorded_as_off(tmp_path: Path) -> None:
    """``--loop-factor 0`` (the rule off) is a recorded value like any other: 0 is not a
    missing option, so a resume neither falls back to the legacy factor 10 nor refuses 0."""
    out = tmp_path / "run"
    assert _run(out, "--loop-factor", "0").returncode == 0
    assert _options(out)["loop_factor"] == 0
    kept = _run(out, "--resume", "--loop-factor", "0")
    assert kept.returncode == 0, kept.stderr
    refused = _run(out, "--resume", "--loop-factor", "10")
    assert refused.returncode == 2
    assert "--loop-factor: the run has 0, this command gives 10" in refused.stderr


def test_a_child_per_test_is_recorded_and_a_folder_from_before_keeps_it(tmp_path: Path) -> None:
    """``--child-per-test`` (no resident child) is recorded and kept: as every false option,
    by its absence, which is also how a folder from before the resident child existed reads
    (LEGACY_LOOP_RULE: a child per test); the resident child, the default, is recorded."""
    out = tmp_path / "run"
    assert _run(out, "--child-per-test").returncode == 0
    assert "resident" not in _options(out)
    assert _run(out, "--resume").returncode == 0
    assert "resident" not in _options(out)
    old = tmp_path / "old"
    assert _run(old).returncode == 0
    assert _options(old)["resident"] is True
    manifest = json.loads((old / "manifest.json").read_text())
    del manifest["options"]["resident"]
    (old / "manifest.json").write_text(json.dumps(manifest))
    assert _run(old, "--resume").returncode == 0
    assert "resident" not in _options(old)


def test_the_shared_floor_is_recorded_and_a_folder_from_before_keeps_the_floor(tmp_path: Path) -> None:
    """``loop_floor_shared`` (stop 31) is recorded; a folder from before it ran every test,
    a resident child's too, under ``loop_floor``, so that is what it resumes with."""
    out = tmp_path / "run"
    assert _run(out).returncode == 0
    assert _options(out)["loop_floor_shared"] == SandboxConfig().loop_floor_shared
    manifest = json.loads((out / "manifest.json").read_text())
    del manifest["options"]["loop_floor_shared"]
    (out / "manifest.json").write_text(json.dumps(manifest))
    refused = _run(out, "--resume", "--loop-floor-shared", str(SandboxConfig().loop_floor_shared))
    assert refused.returncode == 2
    assert f"--loop-floor-shared: the run has {manifest['options']['loop_floor']}" in refused.stderr
    assert _run(out, "--resume").returncode == 0
    assert "loop_floor_shared" not in _options(out)  # the folder still reads as before
    kept = _run(out, "--resume", "--loop-floor-shared", str(manifest["options"]["loop_floor"]))
    assert kept.returncode == 0, kept.stderr
