"""What was sent to the models: every message of a run, stored once, by content, compressed.

A :class:`~.records.CallRecord` keeps the reply whole (``text``) and, for the messages
it sent, their ids (``messages``): the SHA-256 of each message (role and content, see
:func:`message_id`). The messages themselves are in the run's ``messages/`` folder, one
JSON line per distinct message (:class:`MessageBlob`), written before the record that
names them. The same system prompt, and an instance's turn-0 prompt for every model and
protocol, are stored once however many calls sent them.

Each process that writes the run (the run, then each ``--resume``) appends to a segment
of its own, ``messages/000001.jsonl.gz``, ``000002``...: one gzip stream, flushed
(``Z_SYNC_FLUSH``) after every batch of new messages and written with one ``write()``,
so what was written is readable at once, by a report reading a run in progress too
(``zcat DIR/messages/*.jsonl.gz`` reads them all). The prompts of one run repeat most of
their text (the problem statement, the program of the turn before), which the stream's
window finds: on the bundled fixtures run the messages take 190 kB instead of 1.6 MB
as plain JSON Lines (docs/EXPORT.md). A segment cut short by a kill is read as far as
it goes (its last, partial line dropped) and never written again: a resumed run starts
the next segment, so nothing has to be repaired.

A run written before messages were recorded has no such folder and no ids: its calls
read as "messages not recorded". An id whose message is missing (a power loss between
the two files' ``fsync``, a damaged segment) reads the same way, never as an error.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

import msgspec

from ..core.types import Message
from .records import SummaryCall
from .store import folder_write_error, read_log

__all__ = ["MESSAGES", "SUMMARY_CALLS", "MessageBlob", "MessageLog", "append_summary_call", "message_id",
           "read_messages", "read_summary_calls", "resolve"]

#: the folder of a run's message segments
MESSAGES = "messages"
#: the ``--obfuscate`` summaries' calls (:class:`~.records.SummaryCall`), one JSON line each
SUMMARY_CALLS = "summaries.calls.jsonl"
_SUMMARY = msgspec.json.Decoder(SummaryCall)
_SEGMENT = re.compile(r"(\d{6})\.jsonl\.gz")
_CHUNK = 1 << 16


class MessageBlob(msgspec.Struct, frozen=True):
    """One line of a message segment: a message and its id."""

    id: str
    role: Literal["system", "user", "assistant"]
    content: str


_DECODER = msgspec.json.Decoder(MessageBlob)


def message_id(message: Message) -> str:
    """The SHA-256 (hex) of ``role``, a NUL byte and ``content`` (UTF-8): the message's id."""
    h = hashlib.sha256(message.role.encode())
    h.update(b"\0")
    h.update(message.content.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _segments(folder: Path) -> list[Path]:
    try:
        names = sorted(p.name for p in folder.iterdir() if _SEGMENT.fullmatch(p.name))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [folder / n for n in names]


def _inflate(data: bytes) -> bytes:
    """The text of a segment's gzip members, as far as it can be read: a member cut short
    (a kill), or bytes that do not decode, end it."""
    out = bytearray()
    while data:
        d = zlib.decompressobj(31)
        try:
            for k in range(0, len(data), _CHUNK):
                out += d.decompress(data[k:k + _CHUNK])
                if d.eof:
                    break
        except zlib.error:
            break
        if not d.eof:
            break
        data = d.unused_data
    return bytes(out)


def _blobs(path: Path) -> list[MessageBlob]:
    try:
        text = _inflate(path.read_bytes())
    except OSError:
        return []
    out = []
    for line in text.split(b"\n")[:-1]:  # the part after the last newline is unfinished
        try:
            out.append(_DECODER.decode(line))
        except msgspec.DecodeError:
            continue  # a damaged line: its messages read as not recorded
    return out


def read_messages(out_dir: str | os.PathLike[str]) -> dict[str, Message]:
    """Every message of the run in ``out_dir`` by id (empty when it recorded none)."""
    return {b.id: Message(role=b.role, content=b.content)
            for path in _segments(Path(out_dir) / MESSAGES) for b in _blobs(path)}


def resolve(ids: Sequence[str], messages: Mapping[str, Message]) -> list[Message] | None:
    """The messages ``ids`` name, in order; None when there are none or one is missing."""
    if not ids:
        return None
    out = [messages.get(i) for i in ids]
    return None if any(m is None for m in out) else out  # type: ignore[return-value]


class MessageLog:
    """The messages a process stores in a run: :meth:`put` writes those not stored yet
    (by this process or an earlier one) to this process's segment and returns the ids.
    Without a directory they are kept in memory (:attr:`memory`), for an evaluator that
    writes no files."""

    def __init__(self, out_dir: str | os.PathLike[str] | None) -> None:
        self._fd = -1
        self._seen: set[str] = set()
        #: id -> message, when there is no directory to write to
        self.memory: dict[str, Message] | None = None
        self._encoder = msgspec.json.Encoder()
        self._deflate = zlib.compressobj(6, zlib.DEFLATED, 31)
        self._dirty = False
        self._folder: Path | None = None
        if out_dir is None:
            self.memory = {}
            return
        self._folder = Path(out_dir) / MESSAGES
        segments = _segments(self._folder)
        self._seen = {b.id for path in segments for b in _blobs(path)}
        last = int(_SEGMENT.fullmatch(segments[-1].name)[1]) if segments else 0  # type: ignore[index]
        self._path = self._folder / f"{last + 1:06d}.jsonl.gz"

    def put(self, messages: Iterable[Message]) -> list[str]:
        """The ids of ``messages``; those not stored yet are written (one ``write()``)."""
        ids: list[str] = []
        buf = bytearray()
        for m in messages:
            mid = message_id(m)
            ids.append(mid)
            if mid in self._seen:
                continue
            self._seen.add(mid)
            if self.memory is not None:
                self.memory[mid] = m
                continue
            self._encoder.encode_into(MessageBlob(id=mid, role=m.role, content=m.content), buf, len(buf))
            buf.extend(b"\n")
        if buf:
            self._write(self._deflate.compress(bytes(buf)) + self._deflate.flush(zlib.Z_SYNC_FLUSH))
        return ids

    def _write(self, data: bytes) -> None:
        """Append ``data`` to the segment; a folder that cannot take it is a
        :class:`~..core.errors.FolderWriteError` naming the cause (the run ends, resumable)."""
        assert self._folder is not None
        try:
            if self._fd < 0:
                self._folder.mkdir(parents=True, exist_ok=True)
                self._fd = os.open(self._path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND
                                   | os.O_CLOEXEC, 0o644)
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as exc:
            raise folder_write_error(self._folder.parent, exc) from exc
        self._dirty = True

    async def sync(self) -> None:
        """Put what was written on disk (off the event loop), if anything new was."""
        if self._fd >= 0 and self._dirty:
            self._dirty = False
            await asyncio.to_thread(os.fsync, self._fd)

    async def aclose(self) -> None:
        """End the segment's gzip stream (a complete member) and close it."""
        if self._fd >= 0:
            self._write(self._deflate.flush(zlib.Z_FINISH))
            fd, self._fd = self._fd, -1
            await asyncio.to_thread(os.fsync, fd)
            os.close(fd)


def append_summary_call(out_dir: str | os.PathLike[str], record: SummaryCall) -> None:
    """Append ``record`` to the run's ``summaries.calls.jsonl`` (one ``write()``)."""
    fd = os.open(Path(out_dir) / SUMMARY_CALLS, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
    try:
        os.write(fd, msgspec.json.encode(record) + b"\n")
    finally:
        os.close(fd)


def read_summary_calls(out_dir: str | os.PathLike[str]) -> dict[str, SummaryCall]:
    """The ``--obfuscate`` summary calls of the run in ``out_dir`` by instance id (the
    last of an instance's, should a resumed run have made another); a torn last line is
    dropped."""
    records, _ = read_log(Path(out_dir) / SUMMARY_CALLS, _SUMMARY)
    return {r.instance_id: r for r in records}
