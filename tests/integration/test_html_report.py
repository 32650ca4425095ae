"""The visual report end to end: a real run, the ``report`` command, the page in headless Chromium.

One small sweep (sim candidates, two protocols, two runs, the real sandbox) is built
once per module; the tests render it through ``report_command`` and the pure
renderers, check every section, the best/worst marks, escaping, the JSON output, and
finally load the page in headless Chromium (screenshot not blank, no console error).
A missing Chromium is a failure, never a skip: install it with
``apt-get install -y chromium``.
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import shutil
import subprocess
from collections.abc import Sequence
from html.parser import HTMLParser
from pathlib import Path

import msgspec
import pytest

from pairbench_async.cli.report import add_report_arguments, report_command
from pairbench_async.core.errors import ConfigError
from pairbench_async.report.html import (
    build_report,
    text_table,
    draw_figures,
    html_table,
    leaderboard_table,
    markdown_table,
    render_html,
    render_markdown,
)
from pairbench_async.report.leaderboard import leaderboard, leaderboard_json
from pairbench_async.report.metrics import ModelMetrics
from pairbench_async.report.run_tables import robustness_table, stability_table
from pairbench_async.runlog.records import Record, TurnRecord
from pairbench_async.runlog.store import read_manifest, read_records
from pairbench_async.runner.evaluator import RunConfig
from tests.integration.sweeps import offline_sweep

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
ALL_SECTIONS = ("overview", "leaderboard", "ranking", "fig3-closure", "fig4-hcc",
                "fig5-trajectories", "fig6-cumulative", "robustness", "stability", "protocols",
                "agreement", "test-case-accuracy", "repair-at-k", "pdb", "fixeval", "tokens")
MULTI_RUN = ("robustness", "stability")
HOSTILE_MODEL = '<script>throw new Error("xss")</script>$x'
HOSTILE_INSTANCE = '<img src=x onerror="throw 1">&amp;'


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished sweep: 4 instances x 2 sim candidates x (pair, nohint) x 2 runs."""
    base = tmp_path_factory.mktemp("report")
    config = RunConfig(candidates=["sim:0.3", "sim:0.8"], feedback="rules",
                       protocols=["pair", "nohint"], runs=2, turns=3, concurrency=16)
    return offline_sweep(base, config, 4)


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_report_arguments(parser)
    return parser.parse_args(list(argv))


def _section_ids(page: str) -> list[str]:
    return re.findall(r'<section id="([^"]+)">', page)


class _Cells(HTMLParser):
    """Every table row of a page as [(cell text, class attribute)]."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[tuple[str, str]]] = []
        self._cell: list[str] | None = None
        self._cls = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell, self._cls = [], dict(attrs).get("class") or ""

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append(("".join(self._cell), self._cls))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


# --------------------------------------------------------------------------- Chromium


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("headless Chromium is required for the report test and was not found; "
                "install it with `apt-get update && apt-get install -y chromium`")


BAD_LOG = ("Uncaught", "ERROR:CONSOLE", "Failed to load")


def _load_in_chromium(page: Path, tmp: Path) -> tuple[Path, list[str]]:
    """Screenshot ``page`` in headless Chromium; return the PNG and the console errors."""
    shot = tmp / f"{page.stem}-shot.png"
    cmd = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", f"--user-data-dir={tmp / (page.stem + '-profile')}",
           f"--screenshot={shot}", "--window-size=1280,2000", "--enable-logging=stderr", "--v=0",
           page.resolve().as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=90, check=False)
    assert proc.returncode == 0, f"chromium failed ({proc.returncode}): {proc.stderr[-2000:]}"
    errors = [line for line in (proc.stdout + proc.stderr).splitlines()
              if any(bad in line for bad in BAD_LOG)]
    return shot, errors


def _assert_not_blank(shot: Path) -> None:
    from matplotlib.image import imread

    assert shot.exists() and shot.stat().st_size > 0, "no screenshot written"
    pixels = imread(str(shot))[..., :3]
    assert pixels.shape[:2] == (2000, 1280)
    ink = (pixels.min(axis=2) < 0.9).mean()  # share of pixels that are not (near) white
    assert pixels.std() > 0.05 and ink > 0.02, (
        f"blank-looking page: std {pixels.std():.3f}, ink {ink:.3f}")


def _assert_self_contained(page: str) -> None:
    assert "<script" not in page.lower()
    sources = re.findall(r'\b(?:src|href)="([^"]*)"', page)
    assert sources, "the page should embed its figures"
    for src in sources:
        assert src.startswith(("data:", "#")), f"external resource {src[:60]!r}"
        if src.startswith("data:image/png;base64,"):
            assert base64.b64decode(src.split(",", 1)[1]).startswith(PNG_MAGIC)


# --------------------------------------------------------------------------- tests


async def test_report_command_writes_every_section_as_html_markdown_and_pngs(
        run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out_html, out_md = tmp_path / "r.html", tmp_path / "r.md"
    assert await report_command(_args(str(run_dir), "--html", str(out_html),
                                      "--markdown", str(out_md))) == 0
    captured = capsys.readouterr()
    assert "InitialFix" in captured.out  # the text leaderboard still goes to stdout
    assert f"wrote {out_html}" in captured.err
    page = out_html.read_text()
    assert _section_ids(page) == [*ALL_SECTIONS, "transcripts"]  # the command adds transcripts
    _assert_self_contained(page)
    for key in ("fig3", "fig4", "fig5", "fig6", "fig7"):
        data = (tmp_path / "r_files" / f"{key}.png").read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 5000
        assert base64.b64encode(data).decode() in page, f"{key}.png is not the embedded figure"
    md = out_md.read_text()
    for title in ("Table III.", "Table IV.", "Fig. 3.", "Fig. 4.", "Fig. 5.", "Fig. 6.",
                  "Table V.", "Table VI.", "Per-protocol comparison", "Token usage"):
        assert f"## {title}" in md
    for key in ("fig3", "fig4", "fig5", "fig6", "fig7"):
        assert f"](r_files/{key}.png)" in md
    # every model of the run is on the leaderboard, with its protocols compared
    cells = _Cells()
    cells.feed(page)
    names = {row[0][0] for row in cells.rows if row}
    assert {"sim:0.3", "sim:0.8"} <= names


async def test_markdown_to_stdout_and_json_output_kept(
        run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert await report_command(_args(str(run_dir), "--json")) == 0
    records, _ = read_records(run_dir)
    expected = leaderboard_json(leaderboard(records))
    got = msgspec.json.decode(capsys.readouterr().out)
    # the leaderboard part is exactly as before; repair precision, token usage and cost
    # (issue 6) are added beside it, never in it
    # (and, issue 25, the errors by cause, error_causes; the leaderboard's errors per row;
    # issue 24, FixEval's naive-copy baseline beside the models' precision)
    added = ("precision", "tokens", "cost_total", "unprotected", "repair_at_k", "completeness",
             "test_case_accuracy", "precision_note", "pass_at_k", "error_causes", "naive_copy")
    assert {k: v for k, v in got.items() if k not in added} == msgspec.json.decode(msgspec.json.encode(expected))
    assert set(got) == {"models", "episodes", "errored", "unfinished", "errors", *added}
    assert set(got["precision"]) == set(got["models"])
    assert got["naive_copy"]["exact_match_rate"] == 0.0 and got["naive_copy"]["edit_precision"] is None
    assert got["unprotected"] == []  # pair and nohint both keep the hidden tests hidden
    assert set(got["repair_at_k"]) == set(got["models"])
    assert all(set(v) == {"1", "2", "3"} for v in got["repair_at_k"].values())  # alpha = 3
    assert got["repair_at_k"]["sim:0.8|pair"]["3"] == got["models"]["sim:0.8|pair"]["FinalFix"]
    assert all(0 <= p["bleu"] <= 1 for p in got["precision"].values())

    assert await report_command(_args(str(run_dir), "--markdown")) == 0
    out = capsys.readouterr().out
    assert out.startswith("# PAIR-BENCH report") and "## Table III." in out
    assert "data:image" not in out and "![" not in out  # no figure files to link on stdout

    with pytest.raises(ConfigError, match="stdout"):
        await report_command(_args(str(run_dir), "--json", "--markdown"))


async def test_bad_choices_are_config_errors(run_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="records.jsonl"):
        await report_command(_args(str(tmp_path), "--html", str(tmp_path / "x.html")))
    with pytest.raises(ConfigError, match="protocol 'vanilla'"):
        await report_command(_args(str(run_dir), "--markdown", str(tmp_path / "x.md"),
                                   "--protocol", "vanilla"))
    with pytest.raises(ConfigError, match="no-such-instance"):
        await report_command(_args(str(run_dir), "--markdown", str(tmp_path / "x.md"),
                                   "--instances", "no-such-instance"))


def test_protocol_and_instance_choices(run_dir: Path) -> None:
    records, _ = read_records(run_dir)
    iid = sorted({r.instance_id for r in records})[-1]
    report = build_report(records, read_manifest(run_dir), main_protocol="nohint",
                          instances=[iid])
    assert report.main == "nohint" and list(report.fig5) == [iid]
    assert set(report.fig5[iid]) == {"sim:0.3", "sim:0.8"}
    md = render_markdown(report)
    assert "## Table III. Progress-centric leaderboard (nohint)" in md
    assert "nohint gives no targeted hints" in md  # Figs. 3/4 say why they are empty
    assert set(draw_figures(report)) == {"fig5", "fig6", "fig7"}


def test_table_v_shows_init_fix_as_mean_and_std(run_dir: Path) -> None:
    # turn 0 is drawn once per (candidate, instance, run): shared by the protocols of a run,
    # drawn again each run, so Init. Fix has a spread over runs like the other columns
    records, _ = read_records(run_dir)
    report = build_report(records, read_manifest(run_dir))
    table = robustness_table(report)
    assert table.header[2] == "Init. Fix (%) ↑" and len(table.rows) == 4  # 2 models x (pair, nohint)
    model = ""
    for row in table.rows:
        model = row[0].text or model
        stats = report.robustness[row[1].text][model]["InitialFix"]
        assert stats.n == 2 and stats.mean is not None and stats.std is not None
        assert row[2].text == f"{100 * stats.mean:.2f} ± {100 * stats.std:.2f}"
    # within a run both protocols start from the same turn 0 (§V-B): the same Init. Fix
    pair, nohint = report.robustness["pair"], report.robustness["nohint"]
    assert all(pair[m]["InitialFix"] == nohint[m]["InitialFix"] for m in pair)
    assert "Init. Fix varies too" in render_markdown(report)


async def test_the_text_report_has_tables_v_and_vi_with_several_runs(
        run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert await report_command(_args(str(run_dir))) == 0
    text = capsys.readouterr().out
    records, _ = read_records(run_dir)
    report = build_report(records, read_manifest(run_dir))
    assert "== Table V. Robustness across repeated runs ==" in text
    assert "== Table VI. Ranking stability (Kendall's τ) ==" in text
    # the very tables of the page, as text
    assert text_table(robustness_table(report)) in text and text_table(stability_table(report)) in text
    # one run: no Tables V and VI (as on the page)
    single = tmp_path / "single"
    shutil.copytree(run_dir, single)
    lines = (single / "records.jsonl").read_text().splitlines(keepends=True)
    kept = [ln for ln in lines if json.loads(ln).get("run", 0) == 0]
    assert 0 < len(kept) < len(lines)
    (single / "records.jsonl").write_text("".join(kept))
    assert await report_command(_args(str(single))) == 0
    text = capsys.readouterr().out
    assert "Table V." not in text and "Table VI." not in text


def test_tables_v_and_vi_only_with_several_runs(run_dir: Path) -> None:
    records, _ = read_records(run_dir)
    multi = build_report(records, read_manifest(run_dir))
    assert set(multi.robustness) == set(multi.stability) == {"pair", "nohint"}
    stats = multi.robustness["pair"]["sim:0.8"]["FinalFix"]
    assert stats.n == 2 and stats.std is not None
    single: list[Record] = [r for r in records if r.run == 0]
    report = build_report(single, read_manifest(run_dir))
    assert not report.robustness and not report.stability
    page, md = render_html(report), render_markdown(report)
    assert _section_ids(page) == [s for s in ALL_SECTIONS if s not in MULTI_RUN]
    assert "Table V." not in md and "Table VI." not in md
    one_protocol = build_report([r for r in single if r.protocol == "pair"])
    ids = _section_ids(render_html(one_protocol))
    assert "protocols" not in ids and "leaderboard" in ids and "fig3-closure" in ids
    assert "agreement" not in ids and not one_protocol.agreement


def test_protocol_agreement_is_the_footrule_of_the_pooled_rankings(run_dir: Path) -> None:
    from pairbench_async.report.ranking import footrule, metric_ranks

    records, _ = read_records(run_dir)
    report = build_report(records, read_manifest(run_dir))
    (agreement,) = report.agreement
    assert (agreement.a, agreement.b, agreement.models) == ("pair", "nohint", 2)
    pair, nohint = (metric_ranks(report.views[p].models, ("FinalFix",))["FinalFix"]
                    for p in ("pair", "nohint"))
    assert agreement.footrule["FinalFix"] == footrule(pair, nohint)
    md = render_markdown(report)
    assert "## Ranking agreement between protocols" in md and "| pair vs nohint |" in md


def test_repair_at_k_matches_the_metric(run_dir: Path) -> None:
    from pairbench_async.report.leaderboard import trajectories
    from pairbench_async.report.metrics import repair_at_k
    from pairbench_async.report.run_tables import repair_at_k_table

    records, _ = read_records(run_dir)
    report = build_report(records, read_manifest(run_dir))
    md = render_markdown(report)
    assert "| Model | Protocol | Turn 0 | Repair@1 (%) ↑ | Repair@2 (%) ↑ | Repair@3 (%) ↑ |" in md
    table = repair_at_k_table(report)
    trajs, _, _ = trajectories(records, with_protocol=True)
    model = ""
    for row in table.rows:
        model = row[0].text or model
        mine = [t for t in trajs if t.model == model and t.protocol == row[1].text]
        assert row[2].text == "unhinted repair"  # pair and nohint; FeedbackEval's start from the program
        for k, cell in enumerate(row[3:], start=1):
            assert cell.text == f"{100 * (repair_at_k(mine, k) or 0.0):.1f}", (model, row[1].text, k)
    assert len(table.rows) == 4  # 2 models x 2 protocols


def test_repair_at_k_stops_at_the_round_budget_and_is_in_the_text_report(tmp_path: Path) -> None:
    # --turns 1 is FeedbackEval's single-iteration setting: rounds 2 and 3 never ran, so
    # the JSON has Repair@1 only (it used to print Repair@2 and @3 as 0); the plain-text
    # report shows the table too, and its numbers are the metric's on the same records.
    import json
    import subprocess
    import sys

    from pairbench_async.report.leaderboard import repair_at_k_json, trajectories
    from pairbench_async.report.metrics import repair_at_k

    out = tmp_path / "one"
    subprocess.run([sys.executable, "-m", "pairbench_async", "--protocol", "simple", "pair", "--limit", "4",
                    "--turns", "1", "--out", str(out), "-q"], check=True, capture_output=True)
    data = json.loads(subprocess.run([sys.executable, "-m", "pairbench_async", "report", str(out), "--json"],
                                     check=True, capture_output=True, text=True).stdout)
    assert all(list(row) == ["1"] for row in data["repair_at_k"].values()) and data["repair_at_k"]
    records, _ = read_records(out)
    trajs, _, _ = trajectories(records, with_protocol=True)
    simple = [t for t in trajs if t.model == "sim:0.8" and t.protocol == "simple"]
    assert data["repair_at_k"]["sim:0.8|simple"]["1"] == pytest.approx(repair_at_k(simple, 1))
    assert repair_at_k_json(records, 5)["sim:0.8|simple"].keys() == {"1", "2", "3", "5"}
    text = subprocess.run([sys.executable, "-m", "pairbench_async", "report", str(out)],
                          check=True, capture_output=True, text=True).stdout
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("Model") and "Repair@1" in ln)
    row = next(ln for ln in lines[start:] if ln.startswith("sim:0.8|simple "))
    assert "Repair@2" not in text
    assert row.split() == ["sim:0.8|simple", f"{100 * repair_at_k(simple, 1):.1f}"]



async def test_test_case_accuracy_is_seed_002s_in_every_output(
        run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The section, the text and --json all carry :func:`static_vs_interactive` of the run's
    finished episodes: Static = p_0 pooled over protocols, interactive = p_tau per protocol."""
    from pairbench_async.report.accuracy import static_vs_interactive
    from pairbench_async.report.leaderboard import trajectories

    records, _ = read_records(run_dir)
    report = build_report(records, read_manifest(run_dir))
    trajs, _, _ = trajectories(records, with_protocol=True)
    expected = static_vs_interactive(trajs, ["pair", "nohint"])
    assert report.accuracy is not None and report.accuracy.static == expected.static
    assert report.accuracy.protocols == expected.protocols and list(expected.protocols) == ["pair", "nohint"]
    # recomputed from the records, outside the module: Static of sim:0.8 = mean p_0 of its
    # 4 instances x 2 runs = 8 draws (each protocol's turn 0 is the same prompt and seed, so
    # its 16 episodes hold 8 distinct turn-0 results); pair's last pass rate per episode
    ends = {r.episode_id: r for r in records if isinstance(r, TurnRecord)}
    firsts = [r.pass_rate for r in records if isinstance(r, TurnRecord) and r.turn == 0 and r.model == "sim:0.8"]
    assert len(firsts) == 16 and report.accuracy.static["sim:0.8"].mean == pytest.approx(sum(firsts) / 16)
    draws = {(r.run, r.instance_id): r.pass_rate for r in records
             if isinstance(r, TurnRecord) and r.turn == 0 and r.model == "sim:0.8"}
    assert report.accuracy.static["sim:0.8"].n == len(draws) == 8
    assert report.accuracy.static["sim:0.8"].mean == pytest.approx(sum(draws.values()) / 8)
    last = [r.pass_rate for r in ends.values() if r.model == "sim:0.8" and r.protocol == "pair"]
    assert report.accuracy.protocols["pair"].interactive["sim:0.8"].mean == pytest.approx(sum(last) / len(last))
    md = render_markdown(report)
    assert "## Test-case accuracy, static vs interactive (When Benchmarks Talk)" in md
    assert "| Model | Static ↑ | pair ↑ | nohint ↑ | Static episodes |" in md
    assert f"| {report.accuracy.protocols['pair'].footrule:.3f} |" in md.split("Normalised footrule")[1]

    assert await report_command(_args(str(run_dir), "--json")) == 0
    got = msgspec.json.decode(capsys.readouterr().out)["test_case_accuracy"]
    assert got == msgspec.to_builtins(report.accuracy) and got["word_caps"] == {}
    assert await report_command(_args(str(run_dir))) == 0
    text = capsys.readouterr().out
    assert "Test-case accuracy, static vs interactive" in text and "Static episodes" in text


def test_best_and_worst_marks_on_a_hand_made_leaderboard() -> None:
    models = {
        "a": ModelMetrics(InitialFix=0.5, TRS=0.9, HE=3.0, FinalFix=0.9, TurnsToFix=2.0),
        "b": ModelMetrics(InitialFix=0.2, TRS=None, HE=3.0, FinalFix=0.4, TurnsToFix=3.5),
        "c": ModelMetrics(InitialFix=0.2, TRS=None, HE=3.0, FinalFix=0.7, TurnsToFix=None),
    }
    table = leaderboard_table(models)
    col = {h: i for i, h in enumerate(table.header)}
    by_model = {row[0].text: row for row in table.rows}

    def marks(header: str) -> dict[str, str]:
        return {m: by_model[m][col[header]].mark for m in by_model}

    assert marks("Initial Fix (%) ↑") == {"a": "best", "b": "worst", "c": "worst"}  # tie shares
    assert marks("Final Fix (%) ↑") == {"a": "best", "b": "worst", "c": ""}
    assert marks("Turns to Fix ↓") == {"a": "best", "b": "worst", "c": ""}  # lower is better
    assert marks("Targeted Repair (%) ↑") == {"a": "", "b": "", "c": ""}  # one defined value
    assert marks("Hint Efficiency (0-6) ↑") == {"a": "", "b": "", "c": ""}  # all equal
    assert by_model["a"][col["Final Fix (%) ↑"]].sup == "+40.00"
    assert by_model["c"][col["Turns to Fix ↓"]].text == "-"
    # the same marks reach the page: class best/worst on exactly those cells
    page = html_table(table)
    cells = _Cells()
    cells.feed(page)
    body = [row for row in cells.rows if row and row[0][0] in models]
    classes = {(row[0][0], table.header[i]): cls for row in body for i, (_, cls) in enumerate(row)}
    assert classes[("a", "Initial Fix (%) ↑")] == "best"
    assert classes[("b", "Initial Fix (%) ↑")] == classes[("c", "Initial Fix (%) ↑")] == "worst"
    assert classes[("b", "Turns to Fix ↓")] == "worst" and classes[("c", "Turns to Fix ↓")] == ""
    assert sum("best" in c for c in classes.values()) == 3
    assert sum("worst" in c for c in classes.values()) == 4
    md_rows = {line.split(" | ")[0].lstrip("| "): line.split(" | ")
               for line in markdown_table(table).splitlines()[2:]}
    assert md_rows["a"][col["Initial Fix (%) ↑"]] == "**50.00**"
    assert md_rows["b"][col["Initial Fix (%) ↑"]] == "_20.00_"
    assert md_rows["a"][col["Final Fix (%) ↑"]] == "**90.00 (+40.00)**"


def _renamed(records: Sequence[Record], model: str, instance: str) -> list[Record]:
    out: list[Record] = []
    for r in records:
        new_model = model if r.model == "sim:0.8" else r.model
        new_instance = instance if r.instance_id == records[0].instance_id else r.instance_id
        if isinstance(r, TurnRecord):
            calls = [msgspec.structs.replace(c, model=new_model) if c.role == "candidate" else c
                     for c in r.calls]
            out.append(msgspec.structs.replace(r, model=new_model, instance_id=new_instance,
                                               episode_id=f"{r.episode_id}{new_model}",
                                               calls=calls))
        else:
            out.append(msgspec.structs.replace(r, model=new_model, instance_id=new_instance,
                                               episode_id=f"{r.episode_id}{new_model}"))
    return out


def test_untrusted_names_are_escaped_in_html_markdown_and_figures(
        run_dir: Path, tmp_path: Path) -> None:
    records, _ = read_records(run_dir)
    hostile = _renamed(records, HOSTILE_MODEL, HOSTILE_INSTANCE)
    report = build_report(hostile, instances=[HOSTILE_INSTANCE])
    figures = draw_figures(report)  # a "$" in a label must not break matplotlib's mathtext
    page = render_html(report, figures)
    assert "<script" not in page and "<img src=x" not in page
    assert "&lt;script&gt;throw new Error(&quot;xss&quot;)&lt;/script&gt;$x" in page
    assert "&lt;img src=x onerror=&quot;throw 1&quot;&gt;&amp;amp;" in page
    md = render_markdown(report)
    assert "<script>" not in md and r"\<script\>" in md
    out = tmp_path / "hostile.html"
    out.write_text(page)
    shot, errors = _load_in_chromium(out, tmp_path)
    assert errors == [], errors
    _assert_not_blank(shot)


async def test_page_loads_in_headless_chromium_without_errors(
        run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    assert await report_command(_args(str(run_dir), "--html", str(out))) == 0
    shot, errors = _load_in_chromium(out, tmp_path)
    assert errors == [], "console errors:\n" + "\n".join(errors)
    _assert_not_blank(shot)
    # the error check itself works on this Chromium: a throwing page is caught
    broken = tmp_path / "broken.html"
    broken.write_text('<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head>'
                      '<body><p>x</p><script>throw new Error("deliberate")</script></body></html>')
    _, broken_errors = _load_in_chromium(broken, tmp_path)
    assert any("deliberate" in line for line in broken_errors), broken_errors


def test_unprotected_protocols_are_marked_in_every_output(tmp_path: Path) -> None:
    """``test`` shows the candidate a hidden test: the text, HTML and Markdown say so."""
    from pairbench_async.report.leaderboard import render_text

    config = RunConfig(candidates=["sim:0.3", "sim:0.8"], feedback="rules",
                       protocols=["pair", "test"], turns=2, concurrency=8)
    run = offline_sweep(tmp_path, config, 2)
    records, _ = read_records(run)
    text = render_text(leaderboard(records))
    assert "sim:0.3|test†" in text and "sim:0.3|pair†" not in text
    assert "† test: not hidden-test protected" in text
    report = build_report(records, read_manifest(run))
    assert report.unprotected == ["test"]
    md = render_markdown(report)
    assert "| Not hidden-test protected | test |" in md
    assert "> test: not hidden-test protected" in md and "> pair:" not in md
    comparison = [line for line in md.splitlines()
                  if line.startswith("|") and ("| yes |" in line or "| no |" in line)]
    assert len(comparison) == 4  # 2 models x 2 protocols
    assert any("| test |" in line and "| no |" in line for line in comparison)
    assert any("| pair |" in line and "| yes |" in line for line in comparison)
    # a protected run says nothing of the kind
    protected = build_report([r for r in records if r.protocol == "pair"])
    assert protected.unprotected == [] and "protected" not in render_markdown(protected).lower()


def test_table_iii_marks_the_top_and_bottom_three_like_the_paper() -> None:
    from pairbench_async.report.layout import extremes

    # eight models, as in the paper: values 8..1 (higher is better) -> top three 8, 7, 6
    # are "best", bottom three 3, 2, 1 are "worst", 5 and 4 unmarked
    values = {f"m{v}": float(v) for v in range(1, 9)}
    marks = extremes(values)
    assert {k for k, m in marks.items() if m == "best"} == {"m8", "m7", "m6"}
    assert {k for k, m in marks.items() if m == "worst"} == {"m3", "m2", "m1"}
    # lower is better (Turns to Fix): the roles swap
    low = extremes(values, higher_is_better=False)
    assert {k for k, m in low.items() if m == "best"} == {"m1", "m2", "m3"}
    # a tie with the third value shares its mark: 8, 7, 6, 6 are all best
    tied = extremes({**values, "x": 6.0})
    assert {k for k, m in tied.items() if m == "best"} == {"m8", "m7", "m6", "x"}
    # four models: two each side never meet; an undefined value is never marked
    four = extremes({"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0, "e": None})
    assert four == {"a": "best", "b": "best", "c": "worst", "d": "worst", "e": ""}
    # every model ties: no mark at all (a mark would say nothing), and the legend says so
    assert set(extremes({"a": 0.5, "b": 0.5, "c": 0.5, "d": None}).values()) == {""}


def test_table_iii_legend_says_an_all_tied_column_is_unmarked(tmp_path: Path) -> None:
    config = RunConfig(candidates=["sim:0.3", "sim:0.8"], feedback="rules", turns=1, concurrency=8)
    records, _ = read_records(offline_sweep(tmp_path, config, 1))
    assert "a column whose values are all equal is not marked" in render_markdown(build_report(records))
