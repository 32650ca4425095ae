"""The transcript viewer of the HTML report, end to end.

A small real run (``python -m pairbench_async run``: 2 instances x 2 sim candidates x
(pair, vanilla)) is copied and given a few crafted records: hints the leakage validator
rejected (with reasons), a fallback hint, a hint carrying ``<script>``, an errored and an
unfinished episode. ``python -m pairbench_async report DIR --html`` then writes the page,
which is parsed back: every episode of the records is there with each of its turns, its
hints, levels, rejected attempts and their reasons, its diffs and its tests, and nothing
of a run's text became markup. Finally headless Chromium loads it (no console error; an
index link opens its episode) and screenshots one transcript. A missing Chromium is a
failure, never a skip: ``apt-get install -y chromium``.
"""

from __future__ import annotations

import difflib
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Final

import msgspec
import pytest

from pairbench_async.datasets.files import load_dataset
from pairbench_async.protocol.leakage import HintAttempt
from pairbench_async.report.html import render_transcript_page
from pairbench_async.report.transcript import (
    WITHHELD_DRAFT,
    TranscriptLimits,
    build_transcripts,
    fold_ids,
    level_label,
)
from pairbench_async.runlog.records import EpisodeRecord, Record, TurnRecord
from pairbench_async.runlog.store import read_records
from tests.integration.test_html_report import (
    HOSTILE_INSTANCE,
    HOSTILE_MODEL,
    _assert_not_blank,
    _chromium,
    _load_in_chromium,
)

ROOT: Final = Path(__file__).resolve().parents[2]
SCRIPT_HINT: Final = 'Look at the running total. <script>alert("hint")</script>'
REJECTED: Final = (
    HintAttempt(text="Test 026 expects 12345678901234567890.",
                reasons=("quotes a hidden expected output", "names a hidden test id")),
    HintAttempt(text="Use int() on line 9 </pre><b>bold</b>", reasons=("gives the repair away",)),
)
HOSTILE_ERROR: Final = ('Traceback (most recent call last):\n  File "x", line 1\n'
                        'ClientError: HTTP 500 <img src=x onerror="alert(1)">')


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "pairbench_async", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, f"{args[0]} failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("transcript") / "run"
    _cli("run", "--no-progress", "--limit", "2", "--candidate", "sim:0.3", "sim:0.8",
         "--protocol", "pair", "vanilla", "--out", str(out))
    return out


def _craft(records: list[Record]) -> list[Record]:
    """The run's records plus what a sim run does not produce (see the module docstring)."""
    hinted = sorted((r for r in records if isinstance(r, TurnRecord) and r.protocol == "pair"
                     and r.hint is not None), key=lambda r: (r.episode_id, r.turn))
    rejected, fallback = hinted[0], hinted[1]
    changed: dict[tuple[str, int], TurnRecord] = {}
    assert rejected.hint is not None and fallback.hint is not None
    changed[rejected.episode_id, rejected.turn] = msgspec.structs.replace(
        rejected, hint=msgspec.structs.replace(
            rejected.hint, text=SCRIPT_HINT, attempts=[*REJECTED, HintAttempt(text=SCRIPT_HINT)]))
    changed[fallback.episode_id, fallback.turn] = msgspec.structs.replace(
        fallback, hint=msgspec.structs.replace(fallback.hint, fallback=True, attempts=[
            HintAttempt(text=f"attempt {k}", reasons=(f"reason {k}",)) for k in range(3)]))
    out: list[Record] = [changed.get((r.episode_id, r.turn), r) if isinstance(r, TurnRecord) else r
                         for r in records]
    turn0 = next(r for r in records if isinstance(r, TurnRecord) and r.turn == 0)
    for run, end in ((1, "error"), (2, None)):  # an errored and an unfinished episode
        eid = f"{turn0.episode_id}#run{run}"
        out.append(msgspec.structs.replace(turn0, episode_id=eid, run=run))
        if end is not None:
            out.append(EpisodeRecord(
                run_id=turn0.run_id, episode_id=eid, instance_id=turn0.instance_id,
                model=turn0.model, protocol=turn0.protocol, run=run, seed=turn0.seed,
                status="error", turns=0, error=HOSTILE_ERROR))
    return out


@pytest.fixture(scope="module")
def crafted(run_dir: Path) -> Path:
    out = run_dir.parent / "crafted"
    shutil.copytree(run_dir, out)
    records, _ = read_records(run_dir)
    enc = msgspec.json.Encoder()
    (out / "records.jsonl").write_bytes(b"".join(enc.encode(r) + b"\n" for r in _craft(records)))
    return out


@pytest.fixture(scope="module")
def page(crafted: Path) -> Path:
    out = crafted.parent / "report.html"
    _cli("report", str(crafted), "--html", str(out))
    return out


# --------------------------------------------------------------------------- a small DOM

VOID: Final = frozenset({"meta", "link", "img", "br", "hr", "input", "source", "col", "wbr"})


class Node:
    def __init__(self, tag: str, attrs: dict[str, str | None], parent: Node | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    @property
    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self) -> list[Node]:
        out = [self]
        for c in self.children:
            if isinstance(c, Node):
                out += c.iter()
        return out

    def all(self, tag: str | None = None, cls: str | None = None) -> list[Node]:
        return [n for n in self.iter()[1:]
                if (tag is None or n.tag == tag) and (cls is None or cls in n.classes)]

    def one(self, tag: str | None = None, cls: str | None = None) -> Node:
        found = self.all(tag, cls)
        assert len(found) == 1, f"{len(found)} <{tag} class={cls}> in <{self.tag}>"
        return found[0]

    def kv(self) -> dict[str, Node]:
        """A ``<dl class="kv">``'s terms and their values."""
        dl = self.one("dl", "kv")
        kids = [c for c in dl.children if isinstance(c, Node)]
        return {dt.text(): dd for dt, dd in zip(kids[::2], kids[1::2], strict=True)}


class _Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = self.cur = Node("#root", {}, None)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs), self.cur)
        self.cur.children.append(node)
        if tag not in VOID:
            self.cur = node

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.cur.children.append(Node(tag, dict(attrs), self.cur))

    def handle_endtag(self, tag: str) -> None:
        node: Node | None = self.cur
        while node is not None and node.tag != tag:
            node = node.parent
        assert node is not None and node.parent is not None, f"stray </{tag}>"
        self.cur = node.parent

    def handle_data(self, data: str) -> None:
        self.cur.children.append(data)


def _dom(text: str) -> Node:
    parser = _Dom()
    parser.feed(text)
    parser.close()
    assert parser.cur is parser.root, f"unclosed <{parser.cur.tag}>"
    return parser.root


def _episodes(root: Node) -> dict[str, Node]:
    """Episode id -> its ``<details>``."""
    out = {}
    for details in root.all("details", "ep"):
        body = details.one("div", "ep-body")
        eid = body.all("div", "m")[0].one("code").text()
        assert eid not in out, f"episode {eid} twice"
        out[eid] = details
    return out


# --------------------------------------------------------------------------- tests


def test_every_episode_appears_with_each_turn_hint_level_and_rejected_attempt(
        crafted: Path, page: Path) -> None:
    records, _ = read_records(crafted)
    turns: dict[str, list[TurnRecord]] = {}
    ends = {r.episode_id: r for r in records if isinstance(r, EpisodeRecord)}
    for r in records:
        if isinstance(r, TurnRecord):
            turns.setdefault(r.episode_id, []).append(r)
    buggy = {i.id: i.buggy for i in load_dataset().instances}
    root = _dom(page.read_text())
    section = next(s for s in root.all("section") if s.attrs.get("id") == "transcripts")
    episodes = _episodes(section)
    assert set(episodes) == set(turns) | set(ends)
    assert len(episodes) == 10  # 2 instances x 2 models x 2 protocols, + errored + unfinished

    # the index: one row per episode, linking to an anchor inside that episode's <details>
    index = section.one("table", "tx-index")
    rows = index.one("tbody").all("tr")
    assert len(rows) == len(episodes)
    anchors = {d.one("div", "ep-body").attrs["id"]: eid for eid, d in episodes.items()}
    instance = ""
    for row in rows:
        cells = [td.text() for td in row.all("td")]
        instance = cells[0] or instance
        eid = anchors[row.one("a").attrs["href"].removeprefix("#")]
        head = (turns.get(eid) or [ends[eid]])[0]
        assert (instance, cells[1], cells[2], cells[3]) == (
            head.instance_id, head.model, head.protocol, str(head.run))
        end = ends.get(eid)
        assert cells[4].startswith(end.status if end else "unfinished")
    assert [r.all("td")[4].text() for r in rows].count("unfinished") == 1

    seen_rejected = seen_fallback = 0
    for eid, details in episodes.items():
        recs = sorted(turns.get(eid, []), key=lambda r: r.turn)
        blocks = details.all("div", "turn")
        assert [int(re.match(r"Turn (\d+)", b.one("div", "turn-head").text())[1])  # type: ignore[index]
                for b in blocks] == [r.turn for r in recs], eid
        if eid in ends and ends[eid].status == "error":
            assert details.one("pre", "err").text() == HOSTILE_ERROR
        for rec, block, prev in zip(recs, blocks, [None, *recs], strict=False):
            head, kv = block.one("div", "turn-head"), block.kv()
            badges = head.all("span", "lvl")
            if rec.hint is None:
                assert badges == [] and "Feedback" not in kv
                assert kv.get("Hint") is None or kv["Hint"].text().startswith("none: turn 0")
            else:
                assert [b.text() for b in badges] == [level_label(rec.hint.level)]
                assert kv["Hint" if rec.hint.level else "Feedback"].text() == rec.hint.text
                rejected = [a for a in rec.hint.attempts if a.reasons]
                items = kv["Attempts"].all("li")
                shown = [(li.one("div", "att").text(), li.one("div", "why").text()) for li in items]
                # a rejected draft may quote hidden data: its text is withheld from a page that may
                # be shared (report --with-tests shows it), its reasons are shown
                assert shown == [(WITHHELD_DRAFT, "rejected: " + "; ".join(a.reasons)) for a in rejected]
                assert ("fallback hint" in head.text()) == rec.hint.fallback
                seen_rejected += bool(rejected)
                seen_fallback += rec.hint.fallback
            if rec.target is not None:
                assert rec.target.scenario_id in kv["Target"].text()
            # the program: a diff against the turn before (turn 0: against the buggy program)
            before = prev.program if prev is not None else buggy[rec.instance_id]
            program = kv["Program"]
            if before == rec.program:
                assert program.text().startswith("unchanged from")
            else:
                diff = difflib.unified_diff(before.splitlines(), rec.program.splitlines(),
                                            f"turn {prev.turn}" if prev else "buggy program",
                                            f"turn {rec.turn}", n=3, lineterm="")
                assert program.one("pre", "code").text() == "".join(f"{line}\n" for line in diff)
            tests = kv["Tests"].text()
            assert " · ".join(f"{k} {v}" for k, v in sorted(rec.verdicts.items())) in tests
            assert f"pass rate {100 * rec.pass_rate:.1f}%" in head.text()
            if "the same" not in tests:
                for label, ids in (("failed", rec.failed), ("passed", rec.passed)):
                    if ids:
                        assert f"{label} ({len(ids)})" in tests
                        assert ", ".join(fold_ids(ids)) in tests
    assert seen_rejected == 2 and seen_fallback == 1  # the fallback came after 3 rejections


def test_a_hint_with_a_script_tag_renders_as_text(crafted: Path, page: Path) -> None:
    text = page.read_text()
    assert "<script" not in text.lower()  # nothing of the run became markup
    assert "<img src=x" not in text and "<b>bold</b>" not in text
    assert "&lt;script&gt;alert(&quot;hint&quot;)&lt;/script&gt;" in text
    hints = [b.text() for b in _dom(text).all("blockquote", "hint")]
    assert SCRIPT_HINT in hints
    # hostile model names, instance ids and programs too
    records, _ = read_records(crafted)
    hostile = [msgspec.structs.replace(r, model=HOSTILE_MODEL, instance_id=HOSTILE_INSTANCE,
                                       episode_id=r.episode_id + HOSTILE_MODEL) for r in records]
    hostile = [msgspec.structs.replace(r, program=r.program + "\n# </pre><script>x()</script>")
               if isinstance(r, TurnRecord) else r for r in hostile]
    out = render_transcript_page(build_transcripts(hostile), title=HOSTILE_MODEL)
    assert "<script" not in out.lower() and "<img src=x" not in out
    assert len(_episodes(_dom(out))) == 10


def test_caps_are_applied_and_said() -> None:
    """Tiny limits: a long hint, diff and list are cut, the cut is said, and an episode
    past the report's budget is in the index only."""
    def turn(eid: str, t: int, program: str, failed: list[str],
             hint: str | None = None) -> TurnRecord:
        from pairbench_async.runlog.records import HintRecord

        return TurnRecord(run_id="r", episode_id=eid, instance_id="i", model="m", protocol="pair",
                          run=0, seed=0, turn=t, program=program, passed=[], failed=failed,
                          pass_rate=0.0, hint=HintRecord(level=2, text=hint) if hint else None)

    long_program = "\n".join(f"x = {k}" for k in range(50))
    records: list[Record] = [
        turn("a", 0, "pass", [f"t{k:03}" for k in range(30)]),
        turn("a", 1, long_program, [f"t{k:03}" for k in range(30)], hint="h" * 100),
        turn("b", 0, "pass", ["t1"]),
    ]
    # the budget holds the first episode (about 1,800 characters) but not both (about 2,800)
    limits = TranscriptLimits(turn_code_lines=10, text_chars=20, test_ids=5, total_chars=2_300)
    tx = build_transcripts(records, limits=limits)
    a, b = tx.episodes
    assert a.shown and not b.shown and b.turns == [] and "1 of 2 episodes" in tx.notes[0]
    one = a.turns[1]
    assert one.hint == "h" * 20 + " … [80 more characters cut]"
    assert one.code == "diff" and len(one.code_lines) == 10 and one.code_omitted > 0
    assert a.turns[0].failed == ["t000", "t001", "t002", "t003", "t004"]
    assert a.turns[0].failed_total == 30 and one.tests_as_turn == 0 and one.failed == []
    assert any("code lines cut" in c for c in a.cuts) and any("hint cut" in c for c in a.cuts)
    html = render_transcript_page(tx)
    assert "… and 25 more" in html and "more lines cut" in html and "index only" in html
    folded = fold_ids(["t1", "t2", "t3", "t5", "x", "u09", "u10", "u11"])
    assert folded == ["t1–t3", "t5", "x", "u09–u11"]


# --------------------------------------------------------------------------- Chromium


def _dump_dom(url: str, tmp: Path) -> str:
    cmd = [_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           f"--user-data-dir={tmp / 'dump-profile'}", "--dump-dom", url]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=90, check=False)
    assert proc.returncode == 0, f"chromium failed ({proc.returncode}): {proc.stderr[-2000:]}"
    return proc.stdout


def test_page_and_a_transcript_in_headless_chromium(
        crafted: Path, page: Path, tmp_path: Path) -> None:
    _, errors = _load_in_chromium(page, tmp_path)
    assert errors == [], "console errors:\n" + "\n".join(errors)
    # following an index link opens the episode's <details> (the anchor is inside it)
    root = _dom(page.read_text())
    episodes = _episodes(root)
    errored = next(eid for eid, d in episodes.items() if d.all("pre", "err"))
    anchor = episodes[errored].one("div", "ep-body").attrs["id"]
    dom = _dump_dom(f"{page.resolve().as_uri()}#{anchor}", tmp_path)
    assert '<section id="transcripts">' in dom
    opened = re.findall(r'<details class="ep" open="">\s*<summary>.*?</summary>\s*'
                        r'<div class="ep-body" id="([^"]+)"', dom, re.S)
    assert opened == [anchor]
    # a screenshot of one transcript, open: the crafted episode with rejected attempts
    records, _ = read_records(crafted)
    buggy = {i.id: i.buggy for i in load_dataset().instances}
    tx = build_transcripts(records, buggy, protocols=["pair", "vanilla"])
    shown = next(e.anchor for e in tx.episodes
                 if any(t.rejected for t in e.turns))
    single = tmp_path / "transcript.html"
    single.write_text(render_transcript_page(tx, opened={shown}))
    shot, errors = _load_in_chromium(single, tmp_path)
    assert errors == [], errors
    _assert_not_blank(shot)
