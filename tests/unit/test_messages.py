"""The run's message store (``runlog.messages``): content-addressed, compressed, append-only."""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

from pairbench_async.core.types import Message
from pairbench_async.runlog.messages import MESSAGES, MessageLog, message_id, read_messages, resolve

SYSTEM = Message(role="system", content="You repair programs.")


def _user(k: int) -> Message:
    return Message(role="user", content=f"## Problem\nSum the numbers.\n\n## Program\nprint({k})\n")


def test_a_message_id_is_the_sha256_of_its_role_and_content() -> None:
    assert message_id(SYSTEM) == hashlib.sha256(b"system\0You repair programs.").hexdigest()
    assert message_id(SYSTEM) != message_id(Message(role="user", content=SYSTEM.content))


async def test_each_message_is_stored_once_and_read_back(tmp_path: Path) -> None:
    log = MessageLog(tmp_path)
    first = log.put([SYSTEM, _user(1)])
    second = log.put([SYSTEM, _user(2)])
    assert first[0] == second[0] and first[1] != second[1]
    # readable while the segment is open (a report on a run in progress)
    assert resolve(second, read_messages(tmp_path)) == [SYSTEM, _user(2)]
    await log.sync()
    await log.aclose()
    segment = tmp_path / MESSAGES / "000001.jsonl.gz"
    lines = gzip.decompress(segment.read_bytes()).splitlines()
    assert len(lines) == 3  # the system prompt once
    assert resolve(first + second, read_messages(tmp_path)) == [SYSTEM, _user(1), SYSTEM, _user(2)]


async def test_a_segment_cut_short_is_read_as_far_as_it_goes_and_the_next_process_starts_another(
        tmp_path: Path) -> None:
    log = MessageLog(tmp_path)
    kept = log.put([SYSTEM, _user(1)])
    lost = log.put([_user(2)])
    await log.sync()
    segment = tmp_path / MESSAGES / "000001.jsonl.gz"
    data = segment.read_bytes()  # as a kill leaves it: no end of stream
    segment.write_bytes(data[:-7])  # and the last write torn
    stored = read_messages(tmp_path)
    assert resolve(kept, stored) == [SYSTEM, _user(1)] and resolve(lost, stored) is None
    again = MessageLog(tmp_path)  # a resumed run: what is readable is not stored again
    assert again.put([SYSTEM, _user(1), _user(2)]) == kept + lost
    await again.aclose()
    assert sorted(p.name for p in (tmp_path / MESSAGES).iterdir()) == ["000001.jsonl.gz", "000002.jsonl.gz"]
    assert len(gzip.decompress((tmp_path / MESSAGES / "000002.jsonl.gz").read_bytes()).splitlines()) == 1
    assert resolve(kept + lost, read_messages(tmp_path)) == [SYSTEM, _user(1), _user(2)]


async def test_nothing_is_written_without_a_new_message_and_memory_mode_writes_nothing(
        tmp_path: Path) -> None:
    log = MessageLog(tmp_path)
    await log.aclose()
    assert not (tmp_path / MESSAGES).exists()
    memory = MessageLog(None)
    ids = memory.put([SYSTEM, SYSTEM])
    assert memory.memory == {ids[0]: SYSTEM}
    assert read_messages(tmp_path) == {} and resolve([], {}) is None
