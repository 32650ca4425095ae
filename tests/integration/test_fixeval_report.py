"""FixEval's metrics in the ``report`` command, recomputed here from the records.

A real offline sweep with three runs (the samples of pass@k and TCA@k); the JSON, text
and Markdown outputs are checked against numbers recomputed directly from
``records.jsonl`` (not through the report's trajectories), and against the codebleu
package on the final programs. Without the package the report says how to install it.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

import msgspec
import pytest

from pairbench_async.cli.report import add_report_arguments, report_command
from pairbench_async.datasets.files import load_dataset
from pairbench_async.report.codebleu_package import CODEBLEU_INSTALL, corpus_codebleu
from pairbench_async.runlog.records import EpisodeRecord, TurnRecord
from pairbench_async.runlog.store import read_records
from pairbench_async.runner.evaluator import RunConfig
from tests.integration.sweeps import offline_sweep

RUNS = 3


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """4 instances x 2 sim candidates x pair x 3 runs."""
    config = RunConfig(candidates=["sim:0.3", "sim:0.8"], feedback="rules", protocols=["pair"],
                       runs=RUNS, turns=3, concurrency=16)
    return offline_sweep(tmp_path_factory.mktemp("fixeval"), config, 4)


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_report_arguments(parser)
    return parser.parse_args(list(argv))


def _samples(run_dir: Path) -> dict[str, dict[str, list[tuple[TurnRecord, TurnRecord]]]]:
    """model -> instance -> [(turn 0 record, last turn record)] of its done episodes, by run."""
    records, _ = read_records(run_dir)
    done = {r.episode_id for r in records if isinstance(r, EpisodeRecord) and r.status == "done"}
    turns: dict[str, list[TurnRecord]] = {}
    for r in records:
        if isinstance(r, TurnRecord) and r.episode_id in done:
            turns.setdefault(r.episode_id, []).append(r)
    out: dict[str, dict[str, list[tuple[TurnRecord, TurnRecord]]]] = {}
    for episode in sorted(turns.values(), key=lambda e: e[0].run):
        episode.sort(key=lambda r: r.turn)
        out.setdefault(episode[0].model, {}).setdefault(episode[0].instance_id, []).append(
            (episode[0], episode[-1]))
    return out


def _expected(samples: list[list[TurnRecord]], k: int) -> tuple[float, float]:
    """pass@k (Eq. 1) and TCA@k (Eq. 2) over instances, each a list of runs' records."""
    passes, tcas = [], []
    for runs in samples:
        n = len(runs)
        c = sum(not r.failed for r in runs)
        passes.append(1 - math.comb(n - c, k) / math.comb(n, k))
        tcas.append(sum(len(r.passed) / (len(r.passed) + len(r.failed)) for r in runs[:k]) / k)
    return sum(passes) / len(passes), sum(tcas) / len(tcas)


async def test_json_pass_at_k_and_tca_at_k_recompute_from_the_records(
        run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert await report_command(_args(str(run_dir), "--json")) == 0
    got = msgspec.json.decode(capsys.readouterr().out)
    samples = _samples(run_dir)
    assert set(got["pass_at_k"]) == set(samples) == set(got["models"])
    for model, by_instance in samples.items():
        row = got["pass_at_k"][model]
        assert (row["instances"], row["samples"]) == (len(by_instance), RUNS)
        finals = [[last for _, last in runs] for runs in by_instance.values()]
        firsts = [[first for first, _ in runs] for runs in by_instance.values()]
        for k in range(1, RUNS + 1):
            assert (row["pass_at_k"][str(k)], row["tca_at_k"][str(k)]) == pytest.approx(
                _expected(finals, k), abs=1e-12)
            assert (row["initial_pass_at_k"][str(k)], row["initial_tca_at_k"][str(k)]) == \
                pytest.approx(_expected(firsts, k), abs=1e-12)
        # with every instance run RUNS times, pass@1 = c/n averaged = the share fixed
        assert row["pass_at_k"]["1"] == pytest.approx(got["models"][model]["FinalFix"], abs=1e-12)


async def test_json_codebleu_is_the_package_on_the_final_programs(
        run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert await report_command(_args(str(run_dir), "--json")) == 0
    got = msgspec.json.decode(capsys.readouterr().out)
    assert got["precision_note"] is None
    references = {i.id: i.reference for i in load_dataset().instances}
    for model, by_instance in _samples(run_dir).items():
        pairs = [(last.program, references[iid]) for iid, runs in sorted(by_instance.items())
                 for _, last in runs]
        precision = got["precision"][model]
        assert precision["codebleu"] == pytest.approx(
            msgspec.to_builtins(corpus_codebleu(pairs)), abs=1e-12)
        # a program equal with its comments is equal without them
        assert precision["exact_match_code_rate"] >= precision["exact_match_rate"]


async def test_text_and_markdown_show_fixeval(run_dir: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert await report_command(_args(str(run_dir))) == 0
    text = capsys.readouterr().out
    assert "EM(no comments)" in text and "CodeBLEU" in text
    assert "pass@3" in text and "TCA@3" in text and "turn 0" in text
    assert await report_command(_args(str(run_dir), "--markdown")) == 0
    md = capsys.readouterr().out
    assert "## FixEval: match-based and execution-based metrics" in md
    assert "| CodeBLEU (%) ↑ |" in md and "| pass@3 (%) ↑ |" in md


async def test_without_the_codebleu_package_the_report_says_how_to_install_it(
        run_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        tmp_path: Path) -> None:
    # the package runs in a child process (its hash seed fixed): hide it there
    shadow = tmp_path / "shadow" / "codebleu"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError(\"No module named 'codebleu'\")\n")
    monkeypatch.setenv("PYTHONPATH", str(shadow.parent))
    assert await report_command(_args(str(run_dir), "--json")) == 0
    got = msgspec.json.decode(capsys.readouterr().out)
    assert CODEBLEU_INSTALL in got["precision_note"]
    assert all(p["codebleu"] is None for p in got["precision"].values())
    assert all(0 <= p["bleu"] <= 1 for p in got["precision"].values())  # the rest is there
    assert await report_command(_args(str(run_dir))) == 0
    assert CODEBLEU_INSTALL in capsys.readouterr().out
    out = tmp_path / "r.md"
    assert await report_command(_args(str(run_dir), "--markdown", str(out))) == 0
    md = out.read_text()
    section = md[md.index("## FixEval"):]
    # the note, Markdown-escaped, and the table with its CodeBLEU cells empty
    assert "pip install 'pairbench\\_async\\[codebleu\\]'" in section
    assert "| CodeBLEU (%) ↑ |" in section


def _text_table(text: str, first: str) -> list[dict[str, str]]:
    """The rows of the plain-text table whose header starts with ``first`` (a regex), by column
    (columns start where their header does: every cell is left-justified to its column)."""
    lines = text.splitlines()
    top = next(i for i, line in enumerate(lines) if re.match(first, line))
    header = lines[top]
    starts = [m.start() for m in re.finditer(r"(?:(?<=  )|^)\S", header)]
    names = [header[a:b].strip() for a, b in zip(starts, [*starts[1:], None])]
    rows = []
    for line in lines[top + 2:]:
        if not line.strip() or not line.startswith(("sim:", "Naive")):
            break
        rows.append({n: line[a:b].strip() for n, a, b in zip(names, starts, [*starts[1:], None])})
    return rows


async def test_the_text_reports_bleu_is_fixevals_corpus_bleu(
        run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # FixEval (seed 004): "We use corpus-level BLEU scores"; the sentence mean is labelled so
    assert await report_command(_args(str(run_dir), "--json")) == 0
    got = msgspec.json.decode(capsys.readouterr().out)["precision"]
    assert await report_command(_args(str(run_dir))) == 0
    text = capsys.readouterr().out
    rows = {row["Model"]: row for row in _text_table(text, r"Model +PDB-Recall ")}
    assert set(got) <= set(rows)
    for model, scores in got.items():
        assert rows[model]["BLEU"] == f"{100 * scores['corpus_bleu']:.1f}"
        assert rows[model]["mean sent. BLEU"] == f"{100 * scores['bleu']:.1f}"
    # the two differ here, so the test tells them apart
    assert any(f"{100 * s['corpus_bleu']:.1f}" != f"{100 * s['bleu']:.1f}" for s in got.values())
    assert "BLEU (FixEval's corpus-level BLEU-4)" in text
