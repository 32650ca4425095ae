"""The record store: one line per record, torn tails dropped, corruption named, resume checks."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from pairbench_async.core.errors import ResumeMismatch, StoreError
from pairbench_async.runlog.records import EpisodeRecord, RunManifest, TurnRecord
from pairbench_async.runlog.store import (
    RecordWriter,
    check_resume,
    read_manifest,
    read_records,
    write_manifest,
)


def turn(t: int) -> TurnRecord:
    return TurnRecord(run_id="r", episode_id="e", instance_id="i", model="m", protocol="pair", run=0,
                      seed=1, turn=t, program="print(1)\n", passed=["a"], failed=["b"], pass_rate=0.5)


def manifest(**kw: object) -> RunManifest:
    base = dict(run_id="r", created="now", software_version="0", dataset=[], dataset_hash="h", instances=1,
                candidates=["sim:0.3"], feedback="rules", protocols=["pair"], runs=1, seed=0,
                params={"turns": 10})
    return RunManifest(**{**base, **kw})  # type: ignore[arg-type]


async def test_records_round_trip_and_a_torn_tail_is_dropped(tmp_path: Path) -> None:
    w = RecordWriter(tmp_path)
    for t in range(3):
        w.write(turn(t))
    w.write(EpisodeRecord(run_id="r", episode_id="e", instance_id="i", model="m", protocol="pair", run=0,
                          seed=1, status="done", turns=2, stop_reason="budget"))
    await w.aclose()
    records, valid = read_records(tmp_path)
    assert [type(r).__name__ for r in records] == ["TurnRecord"] * 3 + ["EpisodeRecord"]
    assert records[0] == turn(0)
    path = tmp_path / "records.jsonl"
    good = path.read_bytes()
    assert valid == len(good)
    path.write_bytes(good + good.splitlines(keepends=True)[0][:40])  # a write cut short
    records, valid = read_records(tmp_path)
    assert len(records) == 4 and valid == len(good)
    w = RecordWriter(tmp_path, valid_length=valid)  # resume truncates the torn tail away
    w.write(turn(9))
    await w.aclose()
    records, _ = read_records(tmp_path)
    assert records[-1] == turn(9) and len(records) == 5


def test_a_complete_last_line_without_newline_is_not_trusted(tmp_path: Path) -> None:
    import msgspec

    (tmp_path / "records.jsonl").write_bytes(msgspec.json.encode(turn(0)) + b"\n" + msgspec.json.encode(turn(1)))
    records, valid = read_records(tmp_path)
    assert records == [turn(0)] and valid == len(msgspec.json.encode(turn(0))) + 1


def test_corruption_in_the_middle_is_an_error(tmp_path: Path) -> None:
    import msgspec

    line = msgspec.json.encode(turn(0)) + b"\n"
    (tmp_path / "records.jsonl").write_bytes(line + b"{garbage\n" + line)
    with pytest.raises(StoreError, match=r"records.jsonl:2"):
        read_records(tmp_path)


def test_manifest_atomic_and_resume_mismatch_names_the_differences(tmp_path: Path) -> None:
    write_manifest(tmp_path, manifest())
    assert read_manifest(tmp_path) == manifest()
    check_resume(manifest(), manifest(created="later", run_id="x"), where=tmp_path)
    with pytest.raises(ResumeMismatch) as err:
        check_resume(manifest(), manifest(seed=1, params={"turns": 5}), where=tmp_path)
    assert "seed" in str(err.value) and "params" in str(err.value)
    assert str(err.value).startswith(f"cannot resume {tmp_path}: ")
    assert not list(tmp_path.glob(".manifest.*"))


def test_writer_is_usable_from_many_tasks(tmp_path: Path) -> None:
    async def main() -> None:
        w = RecordWriter(tmp_path)

        async def emit(k: int) -> None:
            for t in range(50):
                w.write(turn(t))
                await asyncio.sleep(0)

        await asyncio.gather(*(emit(k) for k in range(20)))
        await w.aclose()

    asyncio.run(main())
    records, _ = read_records(tmp_path)
    assert len(records) == 1000


def test_schema_1_records_still_decode(tmp_path: Path) -> None:
    old = (b'{"kind":"turn","run_id":"r","episode_id":"e","instance_id":"i","model":"m","protocol":"pair",'
           b'"run":0,"seed":1,"turn":0,"program":"x","passed":[],"failed":["a"],"pass_rate":0.0,"schema":1}\n')
    (tmp_path / "records.jsonl").write_bytes(old)
    (record,), _ = read_records(tmp_path)
    assert isinstance(record, TurnRecord) and record.schema == 1 and record.protected is True


def test_a_run_of_another_record_schema_never_resumes(tmp_path: Path) -> None:
    # A manifest written before schema 3 has no "schema" field (it was omitted as the
    # default): it reads back as schema 2, and a schema-3 run must not resume it, since its
    # FeedbackEval episodes began with an unhinted turn 0 and the new ones with the given
    # program (one run would mix both definitions of Repair@k).
    from pairbench_async.core.types import SCHEMA_VERSION

    new = manifest(schema=SCHEMA_VERSION)
    write_manifest(tmp_path, new)
    import json

    data = json.loads((tmp_path / "manifest.json").read_text())
    assert data["schema"] == SCHEMA_VERSION  # written, not omitted as a default
    del data["schema"]
    (tmp_path / "manifest.json").write_text(json.dumps(data))
    old = read_manifest(tmp_path)
    assert old is not None and old.schema == 2
    with pytest.raises(ResumeMismatch, match="schema: records have 2"):
        check_resume(old, new, where=tmp_path)
