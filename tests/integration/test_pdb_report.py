"""PDB's bug-level recall and precision in ``report --json``, recomputed from the records.

A real offline run (the CLI in a subprocess) on the bundled fixtures whose reference
differs from the buggy program in several places, two sim candidates, two turns, so that
final programs fix some bugs and not others. The recomputation below reads
``records.jsonl`` and the dataset file with its own straightforward code (its own line
diff, programs built from non-blank lines only, a brute-force mapping and grouping) and
runs every program it needs in a sandbox pool of its own, asking nothing of the records'
verdicts or of ``report/bugs.py``; then compares with the report.
"""

from __future__ import annotations

import argparse
import difflib
import html
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import msgspec
import pytest

from pairbench_async.cli.report import add_report_arguments, report_command
from pairbench_async.core.errors import SandboxError
from pairbench_async.core.types import Instance
from pairbench_async.datasets.files import load_dataset
from pairbench_async.runlog.records import EpisodeRecord, TurnRecord
from pairbench_async.runlog.store import read_records
from pairbench_async.sandbox.pool import SandboxPool

EPS = 1  # the report's default tolerance


def nonblank(text: str) -> list[tuple[int, str]]:
    """(line number, line without trailing whitespace) of the non-blank lines."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return [(n, line.rstrip()) for n, line in enumerate(lines, 1) if line.strip()]


def diff(base: str, new: str) -> list[tuple[int, int, list[str], range]]:
    """(i1, i2, new lines, base line numbers touched) per hunk; an insertion touches the
    non-blank base line it precedes (one past the last at the end)."""
    a, b = nonblank(base), nonblank(new)
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
            None, [k for _, k in a], [k for _, k in b], autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            touched = range(a[i1][0], a[i2 - 1][0] + 1)
        else:
            point = a[i1][0] if i1 < len(a) else (a[-1][0] + 1 if a else 1)
            touched = range(point, point + 1)
        out.append((i1, i2, [k for _, k in b[j1:j2]], touched))
    return out


def build(base: str, chosen: list[tuple[int, int, list[str], range]]) -> str:
    """The base's non-blank lines with the chosen hunks applied."""
    keys = [k for _, k in nonblank(base)]
    out: list[str] = []
    at = 0
    for i1, i2, new, _ in sorted(chosen, key=lambda h: (h[0], h[1])):
        assert i1 >= at, "overlapping hunks"
        out += keys[at:i1] + new
        at = i2
    return "\n".join(out + keys[at:]) + "\n"


def clash(x: tuple[int, int, list[str], range], y: tuple[int, int, list[str], range]) -> bool:
    (a1, a2, _, _), (b1, b2, _, _) = x, y
    if a1 == a2 and b1 == b2:
        return a1 == b1
    if a1 == a2:
        return b1 < a1 < b2
    if b1 == b2:
        return a1 < b1 < a2
    return max(a1, b1) < min(a2, b2)


def near(x: range, y: range) -> bool:
    return min(abs(p - q) for p in x for q in y) <= EPS


def size(h: tuple[int, int, list[str], range]) -> int:
    return max(h[1] - h[0], len(h[2]))


async def passes(pool: SandboxPool, inst: Instance, program: str, memo: dict[str, bool]) -> bool:
    if program not in memo:
        results = await pool.run(inst.program(program), inst.tests, inst.limits,
                                 checker=inst.checker)
        assert not any(r.verdict.value == "SF" for r in results)
        memo[program] = all(r.passed for r in results)
    return memo[program]


async def recompute(pool: SandboxPool, inst: Instance, final: str, memo: dict[str, bool]
                    ) -> tuple[int, int, float | None, float | None]:
    """(bugs, fixed, recall, precision) of one final program."""
    gold = diff(inst.buggy, inst.reference)
    edits = diff(inst.buggy, final)
    bugs = [i for i in range(len(gold))
            if not await passes(pool, inst, build(inst.buggy, gold[:i] + gold[i + 1:]), memo)]
    fixed = set()
    for i in bugs:
        mine = [e for e in edits if near(e[3], gold[i][3])]
        others = [g for j, g in enumerate(gold) if j != i and not any(clash(g, m) for m in mine)]
        if mine and await passes(pool, inst, build(inst.buggy, mine + others), memo):
            fixed.add(i)
    # groups: breadth-first over "edit near bug"
    credited, seen = 0, set()
    for start in bugs:
        if start in seen:
            continue
        group_bugs, group_edits, todo = {start}, set(), [start]
        while todo:
            i = todo.pop()
            for e, edit in enumerate(edits):
                if e not in group_edits and near(edit[3], gold[i][3]):
                    group_edits.add(e)
                    for j in bugs:
                        if j not in group_bugs and near(edit[3], gold[j][3]):
                            group_bugs.add(j)
                            todo.append(j)
        seen |= group_bugs
        done = group_bugs & fixed
        if done:
            credited += min(sum(size(edits[e]) for e in group_edits),
                            sum(size(gold[i]) + EPS for i in done))
    edited = sum(size(e) for e in edits)
    return (len(bugs), len(fixed), len(fixed) / len(bugs) if bugs else None,
            credited / edited if edited else None)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("pdb")
    multi = [i for i in load_dataset().instances if len(diff(i.buggy, i.reference)) > 1][:6]
    assert len(multi) == 6
    dataset = base / "multi.jsonl"
    dataset.write_bytes(b"".join(msgspec.json.encode(i) + b"\n" for i in multi))
    subprocess.run([sys.executable, "-m", "pairbench_async", "run", "--dataset", str(dataset),
                    "--candidate", "sim:0.2", "sim:0.6", "--turns", "2",
                    "--out", str(base / "run")],
                   check=True, capture_output=True, text=True, timeout=300)
    return base / "run"


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_report_arguments(parser)
    return parser.parse_args(list(argv))


async def test_json_pdb_recall_and_precision_recompute_from_the_records(
        run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert await report_command(_args(str(run_dir), "--json")) == 0
    got = msgspec.json.decode(capsys.readouterr().out)["precision"]
    records, _ = read_records(run_dir)
    manifest = msgspec.json.decode((run_dir / "manifest.json").read_bytes())
    instances = {i.id: i for i in load_dataset(manifest["dataset"]).instances}
    done = {r.episode_id for r in records if isinstance(r, EpisodeRecord) and r.status == "done"}
    finals: dict[str, TurnRecord] = {}
    for r in records:
        if isinstance(r, TurnRecord) and r.episode_id in done and (
                r.episode_id not in finals or r.turn >= finals[r.episode_id].turn):
            finals[r.episode_id] = r
    by_model: dict[str, list[tuple[int, int, float | None, float | None]]] = {}
    memo: dict[tuple[str, str], dict[str, bool]] = {}
    async with SandboxPool(workers=2) as pool:
        for r in sorted(finals.values(), key=lambda r: r.episode_id):
            inst = instances[r.instance_id]
            by_model.setdefault(r.model, []).append(
                await recompute(pool, inst, r.program, memo.setdefault(inst.id, {})))
    assert set(got) == set(by_model) == {"sim:0.2", "sim:0.6"}
    for model, scores in by_model.items():
        recalls = [s[2] for s in scores if s[2] is not None]
        precisions = [s[3] for s in scores if s[3] is not None]
        row = got[model]
        assert (row["pdb_episodes"], row["pdb_unverified"]) == (len(scores), 0)
        assert (row["pdb_bugs"], row["pdb_fixed"]) == (sum(s[0] for s in scores),
                                                       sum(s[1] for s in scores))
        assert row["pdb_recall"] == pytest.approx(sum(recalls) / len(recalls), abs=1e-12)
        assert row["pdb_precision"] == (pytest.approx(sum(precisions) / len(precisions), abs=1e-12)
                                        if precisions else None)
    # the run is not trivial: some bugs fixed, some not (otherwise the check proves little)
    fixed = sum(s[1] for v in by_model.values() for s in v)
    bugs = sum(s[0] for v in by_model.values() for s in v)
    assert 0 < fixed < bugs


async def test_no_bug_check_scores_only_what_the_records_verify(
        run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert await report_command(_args(str(run_dir), "--json", "--no-bug-check")) == 0
    data = msgspec.json.decode(capsys.readouterr().out)
    for row in data["precision"].values():
        # every finished episode is scored or counted unverified, never guessed
        assert row["pdb_episodes"] + row["pdb_unverified"] == row["episodes"]
    assert await report_command(_args(str(run_dir))) == 0
    text = capsys.readouterr().out
    assert "PDB-Recall" in text and "PDB-Precision" in text and "LineProxP" in text



class _BrokenSandbox:
    """A sandbox that cannot start: the report's bug checks cannot run."""

    async def start(self) -> None:
        raise SandboxError("no sandbox here")

    async def aclose(self) -> None:
        pass


async def test_a_sandbox_that_cannot_start_leaves_the_episodes_unverified(
        run_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pairbench_async.cli.args.make_command_sandbox",
                        lambda args, config=None: _BrokenSandbox())
    assert await report_command(_args(str(run_dir), "--json")) == 0
    out = capsys.readouterr()
    assert "PDB's bug checks could not run (no sandbox here)" in out.err
    rows = msgspec.json.decode(out.out)["precision"].values()
    # the report still comes out; what could not be checked is counted, not scored
    assert sum(row["pdb_unverified"] for row in rows) > 0
    assert all(row["pdb_episodes"] + row["pdb_unverified"] == row["episodes"] for row in rows)


# --------------------------------------------------------------------------- the page


class _Rows(HTMLParser):
    """The body rows of the tables in some HTML, as lists of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag == "td":
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _pdb_section(page: str) -> str:
    found = re.search(r'<section id="pdb">(.*?)</section>', page, re.S)
    assert found, "the page has no PDB section"
    return found.group(1)


def _page_rows(section: str) -> dict[str, list[str]]:
    """(the JSON's key: model, or model|protocol with several protocols) -> the row's cells
    after Model and Protocol; an empty Model cell repeats the one above."""
    parser = _Rows()
    parser.feed(section)
    rows, model = {}, ""
    protocols = {row[1] for row in parser.rows if row}
    for row in (r for r in parser.rows if r):
        model = row[0] or model
        rows[model if len(protocols) == 1 else f"{model}|{row[1]}"] = row[2:]
    return rows


def _expected(row: dict[str, object]) -> list[str]:
    """The page's cells for one JSON ``precision`` row, written here on their own: % to one
    decimal as the text report prints them, '-' when undefined."""
    def pct(v: object) -> str:
        return "-" if v is None else f"{100 * float(v):.1f}"  # type: ignore[arg-type]

    fixed = f"{row['pdb_fixed']}/{row['pdb_bugs']}" if row["pdb_episodes"] else "-"
    return [pct(row["pdb_recall"]), pct(row["pdb_precision"]), fixed, str(row["pdb_episodes"]),
            str(row["pdb_unverified"])]


async def test_the_page_shows_the_json_reports_pdb_numbers_and_the_texts_legend(
        run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert await report_command(_args(str(run_dir), "--json")) == 0
    rows = msgspec.json.decode(capsys.readouterr().out)["precision"]
    out_html, out_md = tmp_path / "r.html", tmp_path / "r.md"
    assert await report_command(_args(str(run_dir), "--html", str(out_html),
                                      "--markdown", str(out_md))) == 0
    text = capsys.readouterr().out
    section = _pdb_section(out_html.read_text())
    got = _page_rows(section)
    assert set(got) == set(rows) == {"sim:0.2", "sim:0.6"}
    for key, row in rows.items():
        assert got[key] == _expected(row), key
    # not a page of '-': the run fixes some bugs, and every episode was verified
    assert any(row["pdb_recall"] for row in rows.values())
    assert all(row["pdb_unverified"] == 0 for row in rows.values())
    # the legend quotes the definitions as the text report's legend does
    legend = re.search(r"repair precision, in %: (PDB-Recall .*?docs/PRECISION\.md\))", text)
    assert legend, "the text report has no PDB legend"
    assert legend.group(1) in html.unescape(section)
    assert "--no-bug-check" not in section
    # the Markdown page shows the same rows
    md = out_md.read_text()
    assert "## PDB: bug-level recall and fix-verified precision" in md
    for key, row in rows.items():
        assert f"| {key} | pair | " + " | ".join(_expected(row)) + " |" in md.replace("\\", "")


async def test_no_bug_check_says_so_on_the_page(
        run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert await report_command(_args(str(run_dir), "--json", "--no-bug-check")) == 0
    rows = msgspec.json.decode(capsys.readouterr().out)["precision"]
    out_html, out_md = tmp_path / "r.html", tmp_path / "r.md"
    assert await report_command(_args(str(run_dir), "--no-bug-check", "--html", str(out_html),
                                      "--markdown", str(out_md))) == 0
    section = html.unescape(_pdb_section(out_html.read_text()))
    assert "--no-bug-check was given" in section
    assert "--no-bug-check was given" in out_md.read_text().replace("\\", "")
    if any(row["pdb_episodes"] for row in rows.values()):  # some verdicts in the records
        got = _page_rows(section)
        assert {key: _expected(row) for key, row in rows.items()} == got
    else:  # nothing verified: a note, not a table of '-'
        assert "<table" not in section
        unverified = sum(row["pdb_unverified"] for row in rows.values())
        assert f"({unverified} finished episodes unverified)" in section


async def test_a_page_whose_bug_checks_could_not_run_says_so(
        run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("pairbench_async.cli.args.make_command_sandbox",
                        lambda args, config=None: _BrokenSandbox())
    out_html = tmp_path / "r.html"
    assert await report_command(_args(str(run_dir), "--html", str(out_html))) == 0
    capsys.readouterr()
    section = html.unescape(_pdb_section(out_html.read_text()))
    assert "<table" not in section and "--no-bug-check" not in section
    assert "No PDB recall or precision: no final program could be verified (12 finished " \
           "episodes unverified" in section
