"""Embedding as a user of the package would: only public names, a model object of one's own,
a sweep as a library call, and the metrics read back equal to what ``report --json`` says."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pairbench_async

README = Path(__file__).resolve().parents[2] / "README.md"


def _readme_example() -> str:
    text = README.read_text()
    marker = text.index("<!-- embedding example:")
    return re.search(r"```python\n(.*?)\n```\n", text[marker:], re.S).group(1)  # type: ignore[union-attr]


def test_the_readme_embedding_example_runs_and_agrees_with_the_report(tmp_path: Path) -> None:
    source = _readme_example()
    imported = set(re.findall(r"from pairbench_async import ([\w, ]+)", source)[0].replace(" ", "").split(","))
    assert imported <= set(pairbench_async.__all__)  # public names only
    assert "pairbench_async." not in source.replace("from pairbench_async import", "")
    proc = subprocess.run([sys.executable, "-c", source], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert len(lines) == 4 and {line.split()[0] for line in lines} == {"turns=2", "turns=4"}
    folder = tmp_path / "runs" / "embedded-sweep"
    for setting in ("turns=2", "turns=4"):
        report = subprocess.run([sys.executable, "-m", "pairbench_async", "report", str(folder / setting),
                                 "--json"], capture_output=True, text=True, timeout=300)
        assert report.returncode == 0, report.stderr
        models = json.loads(report.stdout)["models"]
        assert set(models) == {"keeps-the-program", "sim:0.8"}
        for line in lines:
            name, model, _, final_fix, _, gc = line.split()
            if name == setting:
                assert f"{models[model]['FinalFix']:.2f}" == final_fix and f"{models[model]['GC']:.2f}" == gc
        # the model that never changes its program fixes nothing
        assert models["keeps-the-program"]["FinalFix"] == 0.0


async def test_a_sweep_resumes_and_a_model_object_is_checked(tmp_path: Path) -> None:
    from pairbench_async import ConfigError, RunConfig, load_dataset, load_run, run_sweep

    instances = load_dataset().instances[:2]
    config = RunConfig(candidates=["sim:0.8"], concurrency=8)
    first = await run_sweep(config, {"turns": [1, 2]}, instances, tmp_path / "s")
    assert [r.point.setting.name for r in first if r.point.setting] == ["turns=1", "turns=2"]
    again = await run_sweep(config, {"turns": [1, 2]}, instances, tmp_path / "s", resume=True)
    assert all(r.statistics.episodes_done == 0 and r.statistics.episodes_skipped == 2 for r in again)
    assert set(load_run(tmp_path / "s").settings) == {"turns=1", "turns=2"}

    class Nameless:
        async def complete(self, messages: object, **kw: object) -> object:
            return None

    for bad in (Nameless(), object()):
        try:
            RunConfig(candidates=[bad])
        except ConfigError as exc:
            assert "ModelClient" in str(exc) or "name" in str(exc)
        else:
            raise AssertionError(f"{bad!r} accepted as a model")
    try:
        await run_sweep(config, {"colour": ["red"]}, instances, tmp_path / "bad")
    except ConfigError as exc:
        assert "sweepable" in str(exc)
    else:
        raise AssertionError("an unknown grid field was accepted")
