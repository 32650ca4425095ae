"""The transcripts show every model call, and hidden test data only on request.

A real run through the command line (``run --dataset``) of an instance whose hidden
tests all carry a canary string, under ``pair`` (the feedback model's evidence holds
failing tests) and ``test`` (the candidate is shown a failing test): the canary is in the
records. ``report --html`` and ``report --viewer`` must not hold it; with ``--with-tests``
both do, with each turn's failing tests' inputs and expected outputs. Every call of the
page's turns shows the messages recorded for it and its raw reply.
"""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path
from typing import Any, Final

import msgspec
import pytest

from pairbench_async.core.types import Instance, Test
from pairbench_async.runlog.messages import MESSAGES, read_messages, resolve
from pairbench_async.runlog.records import TurnRecord
from pairbench_async.runlog.store import read_records
from tests.integration.test_transcript import _dom, _episodes

ROOT: Final = Path(__file__).resolve().parents[2]
CANARY: Final = "HIDDENc4n4ry"
INSTANCE: Final = Instance(
    id="echo-length", kind="stdio", time_limit=1.0, memory_limit_mb=64,
    problem="Read a word and print it followed by its length, separated by a space.",
    buggy="w = input()\nprint(w, len(w) + 1)\n",
    reference="w = input()\nprint(w, len(w))\n",
    tests=[Test(id=f"{i:03}", input=f"{CANARY}{'x' * i}\n", output=f"{CANARY}{'x' * i} {12 + i}\n")
           for i in range(12)],
)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "pairbench_async", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, f"{args[0]} failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
    return proc


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("calls")
    dataset = base / "canary.jsonl"
    dataset.write_bytes(msgspec.json.encode(INSTANCE) + b"\n")
    _cli("run", "--no-progress", "--dataset", str(dataset), "--candidate", "sim:0.3",
         "--protocol", "pair", "test", "--turns", "3", "--out", str(base / "run"))
    return base / "run"


@pytest.fixture(scope="module")
def pages(run_dir: Path) -> dict[str, str]:
    out = {}
    for name, extra in (("default", ()), ("with-tests", ("--with-tests",))):
        html, viewer = run_dir.parent / f"{name}.html", run_dir.parent / f"{name}-viewer.html"
        _cli("report", str(run_dir), "--html", str(html), "--viewer", str(viewer), *extra)
        out[name], out[name + "-viewer"] = html.read_text(), viewer.read_text()
    return out


def test_the_canary_is_recorded_but_shown_only_with_tests(run_dir: Path, pages: dict[str, str]) -> None:
    recorded = b"".join(gzip.decompress(p.read_bytes()) for p in (run_dir / MESSAGES).iterdir())
    assert CANARY.encode() in recorded  # the feedback model's evidence, as sent
    records, _ = read_records(run_dir)
    assert any(r.hint and CANARY in r.hint.text for r in records
               if isinstance(r, TurnRecord) and r.protocol == "test")
    for name in ("default", "default-viewer"):
        assert CANARY not in pages[name], name
        assert "report --with-tests shows" in pages[name], name
    for name in ("with-tests", "with-tests-viewer"):
        assert CANARY in pages[name], name
        assert "do not share this page" in pages[name], name


def test_with_tests_each_turn_lists_its_failing_tests_inputs_and_outputs(
        run_dir: Path, pages: dict[str, str]) -> None:
    records, _ = read_records(run_dir)
    by_id = {t.id: t for t in INSTANCE.tests}
    episodes = _episodes(_dom(pages["with-tests"]))
    for rec in (r for r in records if isinstance(r, TurnRecord) and r.failed):
        block = episodes[rec.episode_id].all("div", "turn")[rec.turn]
        rows = block.kv()["Failing"].one("tbody").all("tr")
        shown = [[td.text() for td in row.all("td")] for row in rows]
        assert shown == [[t, by_id[t].input, by_id[t].output] for t in rec.failed[:5]]
    assert "Failing" not in pages["default"]


def test_every_call_shows_its_messages_and_raw_reply(run_dir: Path, pages: dict[str, str]) -> None:
    records, _ = read_records(run_dir)
    stored = read_messages(run_dir)
    seen = {True: 0, False: 0}
    for name in ("default", "with-tests"):
        episodes = _episodes(_dom(pages[name]))
        for rec in (r for r in records if isinstance(r, TurnRecord)):
            block = episodes[rec.episode_id].all("div", "turn")[rec.turn]
            if not rec.calls:  # the erroneous program as given: no call
                assert rec.given and "Calls" not in block.kv()
                continue
            calls = block.kv()["Calls"].all("details", "call")
            assert len(calls) == len(rec.calls)
            for call, node in zip(rec.calls, calls, strict=True):
                assert node.one("summary").text().startswith(call.role)
                sent = [p.text() for p in node.all("pre", "msg")]
                hidden = name == "default" and (call.role == "feedback" or not rec.protected)
                seen[hidden] += 1
                if hidden:
                    assert sent == [] and "withheld" in node.text()
                else:
                    assert sent == [m.content for m in resolve(call.messages, stored) or []]
                    assert sent, "a call without its messages"
                replies = [p.text() for p in node.all("pre", "reply")]
                # a feedback model's or judge's own text may quote its evidence (the validator
                # rejects exactly such drafts): shown only on request, like its prompt
                quiet = name == "default" and (not rec.protected or call.role in ("feedback", "validator"))
                assert replies == ([] if quiet else [call.text])
    assert seen[True] and seen[False]


class _Quoting:
    """A careless feedback model: its every draft quotes the evidence it was shown (the
    validator rejects them all and the level's fallback hint is given)."""

    name = "quoting"

    async def complete(self, messages: list[Any], *, temperature: float | None = None,
                       max_tokens: int | None = None, seed: int | None = None) -> Any:
        from pairbench_async import Completion, Usage

        return Completion(text=messages[-1].content[-1500:], model=self.name, usage=Usage(1, 1))


async def test_drafts_that_quote_hidden_tests_are_withheld_from_shared_pages(tmp_path: Path) -> None:
    from pairbench_async import Evaluator, RunConfig
    from pairbench_async.sandbox.traces import TraceCache

    dataset = tmp_path / "canary.jsonl"
    dataset.write_bytes(msgspec.json.encode(INSTANCE) + b"\n")
    config = RunConfig(candidates=["sim:0.3"], feedback=_Quoting(), protocols=["pair"], turns=2)
    async with Evaluator(config, out_dir=tmp_path / "run", dataset_paths=[str(dataset)],
                         trace_cache=TraceCache(tmp_path / "tc")) as ev:
        records = [r async for r in ev.run([INSTANCE])]
    drafts = [a.text for r in records if isinstance(r, TurnRecord) and r.hint for a in r.hint.attempts]
    assert any(CANARY in d for d in drafts)  # the model did quote the tests; the validator caught it
    for extra, shown in (((), False), (("--with-tests",), True)):
        html, viewer = tmp_path / "p.html", tmp_path / "v.html"
        _cli("report", str(tmp_path / "run"), "--html", str(html), "--viewer", str(viewer), *extra)
        for page in (html.read_text(), viewer.read_text()):
            assert (CANARY in page) == shown
