"""The transcript viewer (``report DIR --viewer OUT.html``) in headless Chromium, used as a
person would: filter by model, search free text (a hint, a raw reply, a prompt), sort a
column, open an episode and read its turns; screenshots of each step.

A real run (2 instances x 2 sim candidates x (pair, vanilla), through the command line) is
copied 18 times over under new ids, so the page holds 144 episodes, the default fixtures
run's size; one copy gets a unique hint with rejected drafts, one a unique raw reply, one a
unique prompt and one a hint carrying markup. The page must need no network, embed each
message once, and parse an episode's details only when it is needed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Final

import msgspec
import pytest

from pairbench_async.core.types import Message
from pairbench_async.protocol.leakage import HintAttempt
from pairbench_async.runlog.messages import MessageLog, read_messages
from pairbench_async.runlog.records import EpisodeRecord, Record, TurnRecord
from pairbench_async.runlog.store import read_records
from tests.integration.cdp import Browser

ROOT: Final = Path(__file__).resolve().parents[2]
COPIES: Final = 18
HINT: Final = "ZEBRA-hint: compare the running total with the expected sum."
REPLY: Final = "QUOKKA-reply: I kept the program."
PROMPT: Final = "PANGOLIN-prompt: a problem statement nobody else was shown."
HOSTILE: Final = '</script><script>window.pwned = 1</script><img src=x onerror="window.pwned=2">'
REJECTED: Final = (HintAttempt(text="Test 026 expects 41.", reasons=("quotes a hidden expected output",)),
                   HintAttempt(text=HINT))


def _cli(*args: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "pairbench_async", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, f"{args[0]} failed ({proc.returncode}):\n{proc.stderr[-3000:]}"


def _copy(r: Record, k: int) -> Record:
    return msgspec.structs.replace(r, episode_id=f"{r.episode_id}~{k}", instance_id=f"{r.instance_id}~{k:02}")


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Record]]:
    base = tmp_path_factory.mktemp("viewer")
    _cli("run", "--no-progress", "--limit", "2", "--candidate", "sim:0.3", "sim:0.8",
         "--protocol", "pair", "vanilla", "--out", str(base / "run"))
    records, _ = read_records(base / "run")
    out = base / "big"
    shutil.copytree(base / "run", out)
    log = MessageLog(out)
    prompt_ids = log.put([Message(role="system", content="You repair programs."),
                          Message(role="user", content=PROMPT)])
    big: list[Record] = [_copy(r, k) for k in range(COPIES) for r in records]
    hinted = [i for i, r in enumerate(big) if isinstance(r, TurnRecord) and r.hint is not None
              and r.protocol == "pair"]
    turn0 = [i for i, r in enumerate(big) if isinstance(r, TurnRecord) and r.turn == 0 and r.calls]
    edits = {hinted[0]: "hint", hinted[-1]: "hostile", turn0[5]: "reply", turn0[9]: "prompt"}
    for i, what in edits.items():
        r = big[i]
        assert isinstance(r, TurnRecord)
        if what == "hint" and r.hint is not None:
            big[i] = msgspec.structs.replace(r, hint=msgspec.structs.replace(r.hint, text=HINT, attempts=list(REJECTED)))
        elif what == "hostile" and r.hint is not None:
            big[i] = msgspec.structs.replace(r, hint=msgspec.structs.replace(r.hint, text=HOSTILE))
        elif what == "reply":
            big[i] = msgspec.structs.replace(r, calls=[msgspec.structs.replace(r.calls[0], text=REPLY)])
        else:
            big[i] = msgspec.structs.replace(r, calls=[msgspec.structs.replace(r.calls[0], messages=prompt_ids)])
    enc = msgspec.json.Encoder()
    (out / "records.jsonl").write_bytes(b"".join(enc.encode(r) + b"\n" for r in big))
    import asyncio

    asyncio.run(log.aclose())
    page = base / "viewer.html"
    _cli("report", str(out), "--viewer", str(page))
    return page, big


def _assert_not_blank(shot: Path) -> None:
    from matplotlib.image import imread

    pixels = imread(str(shot))[..., :3]
    assert pixels.shape[:2] == (900, 1400)
    ink = (pixels.min(axis=2) < 0.9).mean()
    assert pixels.std() > 0.05 and ink > 0.02, f"blank-looking: std {pixels.std():.3f}, ink {ink:.3f}"
    shutil.copy(shot, SHOTS / shot.name) if SHOTS else None


#: where to keep the screenshots to look at them (PAIRBENCH_SHOTS=DIR), else only in tmp
SHOTS: Final = Path(os.environ["PAIRBENCH_SHOTS"]) if os.environ.get("PAIRBENCH_SHOTS") else None


def _episode_of(records: list[Record], text: str) -> TurnRecord:
    return next(r for r in records if isinstance(r, TurnRecord) and (
        (r.hint is not None and text in r.hint.text) or any(text in c.text for c in r.calls)))


def test_the_page_is_self_contained_and_embeds_each_message_once(
        viewer: tuple[Path, list[Record]]) -> None:
    page, records = viewer
    text = page.read_text()
    assert not re.search(r'\b(?:src|href)="(?!data:|#)', text), "an external resource"
    assert "http://" not in text and "https://" not in text
    episodes = {r.episode_id for r in records}
    assert len(re.findall(r'<script type="application/json" id="ep-\d+">', text)) == len(episodes) == 144
    system = next(iter(m for m in read_messages(page.parent / "big").values() if m.role == "system"))
    assert text.count(msgspec.json.encode(system.content).decode()[1:40]) == 1
    # nothing of a run can close its JSON block or become markup
    assert "<script>window.pwned" not in text and "<img src=x" not in text
    assert len(text) < 6_000_000, f"{len(text):,} bytes for 144 small episodes"


async def test_filter_search_sort_and_open_an_episode_in_headless_chromium(
        viewer: tuple[Path, list[Record]], tmp_path: Path) -> None:
    page, records = viewer
    total = len({r.episode_id for r in records})
    async with Browser(tmp_path) as b:
        await b.open(page.resolve().as_uri())
        rows = "[...document.querySelectorAll('#rows tr')]"
        assert await b.js(f"{rows}.length") == total
        assert await b.js("cache.size") == 0  # no episode parsed before it is needed
        _assert_not_blank(await b.screenshot(tmp_path / "1-loaded.png"))

        # filter by model
        await b.choose("#f-model", "sim:0.8")
        models = await b.js(f"{rows}.map((tr) => tr.children[1].textContent)")
        assert models and set(models) == {"sim:0.8"} and len(models) == total // 2
        assert await b.js("document.getElementById('count').textContent") == f"{total // 2} of {total} episodes"

        # sort by the initial pass rate: ascending, then descending
        await b.click('thead th[data-key="initial"]')
        rates = await b.js(f"{rows}.map((tr) => parseFloat(tr.children[6].textContent))")
        assert rates == sorted(rates) and len(set(rates)) > 1
        await b.click('thead th[data-key="initial"]')
        rates = await b.js(f"{rows}.map((tr) => parseFloat(tr.children[6].textContent))")
        assert rates == sorted(rates, reverse=True)
        assert await b.js("document.querySelector('th[data-key=initial]').getAttribute('aria-sort')") == "descending"
        _assert_not_blank(await b.screenshot(tmp_path / "2-filtered-sorted.png"))
        # the keyboard: a clicked row has the focus, the down arrow opens the next one
        await b.click("#rows tr")
        first, second = await b.js(f"{rows}.slice(0, 2).map((tr) => Number(tr.dataset.n))")
        assert await b.js("current") == first
        await b.key("ArrowDown", 40)
        assert await b.js("current") == second
        assert await b.js("document.activeElement.dataset.n") == str(second)
        await b.choose("#f-model", "")

        # free text: a hint, a raw reply, a prompt each find their one episode
        for needle, want in ((REPLY, _episode_of(records, REPLY)), (HINT, _episode_of(records, HINT))):
            await b.js("document.getElementById('q').value = ''")
            await b.type("#q", needle.split(":")[0].lower())
            await b.settle()
            found = await b.js(f"{rows}.map((tr) => [tr.children[0].textContent, tr.children[1].textContent, "
                               "tr.children[2].textContent])")
            assert found == [[want.instance_id, want.model, want.protocol]], needle
        await b.js("document.getElementById('q').value = ''")
        await b.type("#q", "pangolin-prompt")
        await b.settle()
        assert await b.js(f"{rows}.length") == 1
        await b.click("#rows tr")
        await b.settle()
        assert await b.js("document.querySelectorAll('#detail mark').length") >= 1
        assert "PANGOLIN-prompt" in await b.js("document.querySelector('#detail mark').closest('pre').textContent")
        assert await b.js("document.querySelector('#detail mark').closest('details').open")
        _assert_not_blank(await b.screenshot(tmp_path / "3-search-prompt.png"))

        # open the episode with the rejected drafts: its turns, hints, drafts, calls, diffs
        await b.js("document.getElementById('q').value = ''")
        await b.type("#q", "zebra-hint")
        await b.settle()
        await b.click("#rows tr")
        await b.settle()
        rec = _episode_of(records, HINT)
        turns = sorted(r.turn for r in records if isinstance(r, TurnRecord) and r.episode_id == rec.episode_id)
        heads = await b.js("[...document.querySelectorAll('#detail .turn-head')].map((e) => e.textContent)")
        assert [int(re.match(r"Turn (\d+)", h)[1]) for h in heads] == turns  # type: ignore[index]
        detail = await b.js("document.getElementById('detail').innerText")
        assert HINT in detail and "rejected: quotes a hidden expected output" in detail
        # the rejected draft quotes a hidden output: its text is withheld, its reasons are not
        assert "Test 026 expects 41." not in detail and "withheld" in detail and "attempt 2 accepted" in detail
        assert await b.js("document.querySelectorAll('#detail details.call').length") == sum(
            len(r.calls) for r in records if isinstance(r, TurnRecord) and r.episode_id == rec.episode_id)
        assert await b.js("document.querySelectorAll('#detail pre.code span.a, #detail pre.code span.d').length") > 0
        assert re.search(r"AC \d+", detail)
        assert await b.js("cache.size") >= 1
        assert (await b.js("location.hash")).startswith("#ep-")
        _assert_not_blank(await b.screenshot(tmp_path / "4-episode.png"))

        # a hint with markup is text
        await b.js("document.getElementById('q').value = ''")
        await b.type("#q", "window.pwned")
        await b.settle()
        await b.click("#rows tr")
        await b.settle()
        assert HOSTILE in await b.js("document.getElementById('detail').innerText")
        assert await b.js("typeof window.pwned") == "undefined"
        assert b.errors == [], b.errors
    ends = [r for r in records if isinstance(r, EpisodeRecord)]
    assert len(ends) == total


async def test_a_sweeps_viewer_holds_every_setting_labelled(tmp_path: Path) -> None:
    """``report SWEEP --viewer``: every setting's episodes, each labelled with its setting
    (a column and a filter, in the sweep's order), not only the main setting's."""
    sweep, page = tmp_path / "sweep", tmp_path / "sweep.html"
    _cli("run", "--no-progress", "-q", "--limit", "2", "--candidate", "sim:0.3", "sim:0.8",
         "--sweep", "turns=2,1", "--out", str(sweep))
    _cli("report", str(sweep), "--viewer", str(page))
    settings = ["turns=2", "turns=1"]
    per_setting = {name: len({r.episode_id for r in read_records(sweep / name)[0]}) for name in settings}
    assert all(per_setting.values())
    index = msgspec.json.decode(re.search(r'id="tx-index">(.*?)</script>', page.read_text())[1])  # type: ignore[index]
    assert {name: sum(1 for row in index if row["setting"] == name) for name in settings} == per_setting
    async with Browser(tmp_path) as b:
        await b.open(page.resolve().as_uri())
        rows = "[...document.querySelectorAll('#rows tr')]"
        assert await b.js(f"{rows}.length") == sum(per_setting.values())
        assert await b.js("[...document.querySelectorAll('#f-setting option')].map((o) => o.value)") == ["", *settings]
        assert await b.js("document.getElementById('l-setting').offsetParent !== null")
        assert await b.js("document.querySelector('thead th').textContent") == "Setting"
        await b.choose("#f-setting", "turns=1")
        cells = await b.js(f"{rows}.map((tr) => tr.children[0].textContent)")
        assert cells == ["turns=1"] * per_setting["turns=1"]
        await b.click("#rows tr")
        await b.settle()
        assert (await b.js("document.querySelector('#detail h2').textContent")).startswith("turns=1 · ")
        assert b.errors == [], b.errors
    # a single run's page has no setting column
    _cli("report", str(sweep / "turns=1"), "--viewer", str(tmp_path / "run.html"))
    async with Browser(tmp_path) as b:
        await b.open((tmp_path / "run.html").resolve().as_uri())
        assert await b.js("document.querySelector('thead th').textContent") == "Instance"
        assert await b.js("document.getElementById('l-setting').offsetParent") is None


def test_a_sweeps_html_report_embeds_every_settings_transcripts(tmp_path: Path) -> None:
    """``report SWEEP --html``: the embedded transcripts are every setting's, each episode
    labelled with its setting (a column, and in its heading), anchors unique over the page."""
    sweep, page = tmp_path / "sweep", tmp_path / "report.html"
    _cli("run", "--no-progress", "-q", "--limit", "2", "--candidate", "sim:0.3",
         "--sweep", "turns=2,1", "--out", str(sweep))
    _cli("report", str(sweep), "--html", str(page))
    html = page.read_text()
    section = html[html.index('<section id="transcripts">'):]
    settings = ["turns=2", "turns=1"]
    per_setting = {name: len({r.episode_id for r in read_records(sweep / name)[0]}) for name in settings}
    assert all(per_setting.values())
    index = section[: section.index("</table>")]
    assert '<th scope="col" class="l">Setting</th>' in index
    rows = re.findall(r'<a href="#(ep-\d+)">', index)
    assert len(rows) == len(set(rows)) == sum(per_setting.values())
    for name in settings:
        assert f'<h3 class="tx-inst">{name} · ' in section
    # a single run's page has no setting column
    _cli("report", str(sweep / "turns=1"), "--html", str(tmp_path / "run.html"))
    single = (tmp_path / "run.html").read_text()
    assert '<th scope="col" class="l">Setting</th>' not in single
