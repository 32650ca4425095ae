"""``report SWEEP_DIR`` on a real small sweep: the main setting's report plus Table VII and
the Kendall τ between settings, in text, JSON, HTML and Markdown; a feedback-model sweep;
resume.

The numbers are checked against a recomputation from each setting's records through the
leaderboard and :func:`rank_values` / :func:`kendall_tau_b`, not through the module that
the report uses (:mod:`pairbench_async.report.sensitivity`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pairbench_async.report.leaderboard import leaderboard
from pairbench_async.report.ranking import kendall_tau_b, rank_values
from pairbench_async.runlog.store import read_manifest, read_records
from tests.integration.fault_server import FaultServer
from tests.integration.test_cli_newcomer import acli, cli

CANDIDATES = ("sim:0.2", "sim:0.5", "sim:0.9")
SWEEP = ("--no-progress", "--limit", "4", "--candidate", *CANDIDATES, "--protocol", "pair", "nohint",
         "--runs", "2", "--sweep", "turns=3,1")


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sweep") / "s"
    proc = cli("run", *SWEEP, "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return out


def _column(run: Path, metric: str, protocol: str) -> dict[str, float | None]:
    board = leaderboard(read_records(run)[0])
    return {m: getattr(board.models[f"{m}|{protocol}"], metric) for m in CANDIDATES}


def test_the_manifest_records_the_setting_in_sweep_order(sweep_dir: Path) -> None:
    for index, turns in enumerate((3, 1)):
        manifest = read_manifest(sweep_dir / f"turns={turns}")
        assert manifest is not None and manifest.sweep is not None
        assert (manifest.sweep.name, manifest.sweep.index, manifest.sweep.values) == (
            f"turns={turns}", index, {"turns": turns})
        assert manifest.params["turns"] == turns


def test_json_has_table_vii_and_the_tau_between_settings(sweep_dir: Path) -> None:
    proc = cli("report", str(sweep_dir), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    # sweep order (turns=3 first, as given), not the folders' alphabetical order
    assert data["settings"] == ["turns=3", "turns=1"] and data["main_setting"] == "turns=3"
    # the main setting's own report, exactly as `report turns=3 --json` prints it
    alone = json.loads(cli("report", str(sweep_dir / "turns=3"), "--json").stdout)
    assert data["main"] == alone
    # the combined table of every setting stays on top: 2 settings x 3 models x 2 protocols
    assert len(data["models"]) == 12
    for setting in ("turns=3", "turns=1"):
        for protocol in ("pair", "nohint"):
            expected = _column(sweep_dir / setting, "FinalFix", protocol)
            got = {m: v["FinalFix"] for m, v in data["table_vii"][protocol][setting].items()}
            assert got == pytest.approx(expected)
    (pair,) = [g for g in data["setting_tau"] if g["protocol"] == "pair"]
    assert (pair["a"], pair["b"], pair["models"], pair["reason"]) == (
        "turns=3", "turns=1", list(CANDIDATES), "")
    for metric in ("FinalFix", "PMR", "HE"):
        a = rank_values(_column(sweep_dir / "turns=3", metric, "pair"))
        b = rank_values(_column(sweep_dir / "turns=1", metric, "pair"))
        tau = kendall_tau_b([a[m] for m in CANDIDATES], [b[m] for m in CANDIDATES])
        assert pair["tau"][metric] == (pytest.approx(tau) if tau is not None else None)
    # two protocols in every setting: their agreement per setting
    assert set(data["protocol_agreement"]) == {"turns=3", "turns=1"}


def test_text_is_the_main_report_then_table_vii(sweep_dir: Path) -> None:
    proc = cli("report", str(sweep_dir))
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    assert text.startswith("sweep ") and "main setting turns=3" in text.splitlines()[0]
    alone = cli("report", str(sweep_dir / "turns=3")).stdout
    assert alone.strip() in text  # the main setting's report, unchanged
    for title in ("== Table VII. Hyperparameter sensitivity (RQ3) ==",
                  "== Ranking stability across settings (Kendall's τ) ==",
                  "== Ranking agreement between protocols, per setting =="):
        assert title in text
    assert text.index("Table VII") > text.index("== Every setting")
    for setting in ("turns=3", "turns=1"):  # every setting x model, as before Table VII
        for model in CANDIDATES:
            assert f"{setting} {model}|pair" in text
    other = cli("report", str(sweep_dir), "--setting", "turns=1")
    assert other.returncode == 0 and "main setting turns=1" in other.stdout.splitlines()[0]
    assert "turns=1 (main)" in other.stdout
    bad = cli("report", str(sweep_dir), "--setting", "turns=9")
    assert bad.returncode == 2 and "turns=3, turns=1" in bad.stderr
    single = cli("report", str(sweep_dir / "turns=1"), "--setting", "turns=1")
    assert single.returncode == 2 and "not a --sweep folder" in single.stderr


def test_html_and_markdown_have_the_main_tables_and_table_vii(sweep_dir: Path, tmp_path: Path) -> None:
    html, md = tmp_path / "r.html", tmp_path / "r.md"
    proc = cli("report", str(sweep_dir), "--html", str(html), "--markdown", str(md))
    assert proc.returncode == 0, proc.stderr
    page, text = html.read_text(), md.read_text()
    for section in ("leaderboard", "ranking", "robustness", "stability", "sensitivity",
                    "setting-tau", "setting-agreement", "repair-at-k"):
        assert f'<section id="{section}">' in page
    assert "Table VII. Hyperparameter sensitivity (RQ3)" in page and 'class="top1"' in page
    assert "sweep, main setting turns=3" in page
    assert '<section id="transcripts">' in page  # every setting's episodes
    for title in ("## Table III.", "## Table V.", "## Table VI.", "## Table VII.",
                  "## Ranking stability across settings"):
        assert title in text
    assert (tmp_path / "r_files" / "fig6.png").is_file()
    stdout = cli("report", str(sweep_dir), "--markdown")
    assert stdout.returncode == 0 and "## Table VII." in stdout.stdout


def test_a_finished_sweep_resumes_to_nothing_to_do(sweep_dir: Path) -> None:
    before = {s: len(read_records(sweep_dir / s)[0]) for s in ("turns=3", "turns=1")}
    proc = cli("run", *SWEEP, "--resume", "--out", str(sweep_dir))
    assert proc.returncode == 0, proc.stderr
    # 4 instances x 3 candidates x 2 protocols x 2 runs = 48 episodes, each setting
    assert proc.stdout.count("0 episodes (48 already done, 0 errors)") == 2
    assert {s: len(read_records(sweep_dir / s)[0]) for s in before} == before


async def test_a_feedback_model_sweep(fault_server: FaultServer, tmp_path: Path) -> None:
    spec = f"openai:ok@{fault_server.url}/v1"
    out = tmp_path / "fb"
    args = ("run", "--no-progress", "--limit", "2", "--candidate", "sim:0.5", "sim:0.9", "--turns", "2",
            "--sweep", f"feedback=rules,{spec}", "--out", str(out))
    code, _, err = await acli(*args)
    assert code == 0, err
    port = fault_server.url.rsplit(":", 1)[1]
    folder = f"feedback=openai-ok-http-127.0.0.1-{port}-v1"
    # the settings' folders (the sweep folder also holds its lock file, .lock, since issue 25,
    # and the reference check every setting used, references.json, since issue 23's last round)
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == [folder, "feedback=rules"]
    assert sorted(p.name for p in out.iterdir() if not p.is_dir()) == [".lock", "references.json"]
    manifest = read_manifest(out / folder)
    assert manifest is not None and manifest.feedback == spec
    assert manifest.sweep is not None and manifest.sweep.values == {"feedback": spec}
    # the echo server's calls were made: the hints came from it, not from rules
    assert fault_server.count() > 0
    code, stdout, err = await acli("report", str(out), "--json")
    assert code == 0, err
    data = json.loads(stdout)
    assert data["settings"] == ["feedback=rules", folder]
    assert [s["feedback"] for s in data["setting_info"]] == ["rules", spec]
    # resuming with the same sweep finds every setting's folder again
    code, stdout, err = await acli(*args, "--resume")
    assert code == 0, err
    assert stdout.count("0 episodes (4 already done, 0 errors)") == 2
