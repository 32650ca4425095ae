"""The record store: an output directory with ``manifest.json`` and ``records.jsonl``.

Durability policy: every record is encoded once and written with a single
``write()`` to a file opened ``O_APPEND``, as soon as it exists, so the operating
system holds it even if the process is killed the next instant (SIGKILL included).
``fsync`` runs after every episode record and at close (off the event loop), so a
power loss costs at most the turns of unfinished episodes, which resume recomputes.

Reading tolerates exactly one kind of damage: a torn *last* line (a write cut short
by a kill). It is dropped, and :class:`RecordWriter` (given ``valid_length``) truncates it away before
appending. A bad line anywhere else is corruption and raises :class:`StoreError`.
The manifest is replaced atomically.
"""

from __future__ import annotations

import asyncio
import errno
import os
import tempfile
from pathlib import Path
from typing import Any, Protocol, TypeVar

import msgspec

from ..core.errors import FolderWriteError, ResumeMismatch, StoreError
from .records import Record, RunManifest

__all__ = [
    "RecordWriter",
    "Resumable",
    "check_resume",
    "folder_write_error",
    "read_log",
    "read_manifest",
    "read_manifest_as",
    "read_records",
    "write_manifest",
]

T = TypeVar("T")

RECORDS = "records.jsonl"
MANIFEST = "manifest.json"

_DECODER = msgspec.json.Decoder(Record)


def folder_write_error(folder: object, exc: OSError) -> FolderWriteError:
    """The :class:`FolderWriteError` of ``exc`` raised while writing ``folder``, its cause in
    words and by name (``No space left on device (ENOSPC)``)."""
    name = errno.errorcode.get(exc.errno or 0, "")
    cause = (exc.strerror or os.strerror(exc.errno or 0) or str(exc)) + (f" ({name})" if name else "")
    where = f" at {exc.filename}" if exc.filename and str(exc.filename) != str(folder) else ""
    return FolderWriteError(f"the run folder {folder} could not be written: {cause}{where}", folder, exc.errno)
_MANIFEST = msgspec.json.Decoder(RunManifest)


def read_log(path: str | os.PathLike[str], decoder: msgspec.json.Decoder[T]) -> tuple[list[T], int]:
    """The records of an append-only JSON Lines log, and the byte length of its valid prefix.

    A last line without its newline, or an undecodable last line, was cut short by a
    crash: it is dropped (the writer truncates it away on resume). An undecodable line
    anywhere else is corruption: :class:`StoreError` naming the file and line. A
    missing file is an empty log.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], 0
    except OSError as exc:
        raise StoreError(f"{path}: cannot read records: {exc.strerror}") from exc
    records: list[T] = []
    pos = 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        if end == -1:
            return records, pos  # a last line without its newline was cut short: drop it
        try:
            records.append(decoder.decode(data[pos:end]))
        except msgspec.DecodeError as exc:
            if data[end + 1:].strip() == b"":
                return records, pos  # a torn tail: drop it
            lineno = data.count(b"\n", 0, pos) + 1
            raise StoreError(f"{path}:{lineno}: corrupt record ({exc})") from exc
        pos = end + 1
    return records, pos


def read_records(out_dir: str | os.PathLike[str]) -> tuple[list[Record], int]:
    """All records of a run, and the byte length of the valid prefix of the file."""
    return read_log(Path(out_dir) / RECORDS, _DECODER)


def read_manifest(out_dir: str | os.PathLike[str]) -> RunManifest | None:
    """The run's manifest, or None when the directory has none."""
    return read_manifest_as(out_dir, _MANIFEST)


def read_manifest_as(out_dir: str | os.PathLike[str], decoder: msgspec.json.Decoder[T]) -> T | None:
    """The manifest of ``out_dir`` decoded by ``decoder`` (a sweep's, a dataset build's...);
    None when there is none, :class:`StoreError` when it cannot be read."""
    path = Path(out_dir) / MANIFEST
    try:
        return decoder.decode(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, msgspec.DecodeError) as exc:
        raise StoreError(f"{path}: unreadable manifest: {exc}") from exc


def write_manifest(out_dir: str | os.PathLike[str], manifest: msgspec.Struct) -> None:
    """Write ``manifest`` to ``out_dir`` atomically (temporary file, fsync, rename);
    :class:`~..core.errors.FolderWriteError` naming the cause when the folder cannot be
    written (the manifest there before, if any, is left as it was)."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".manifest.", dir=out)
    except OSError as exc:
        raise folder_write_error(out, exc) from exc
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(msgspec.json.format(msgspec.json.encode(manifest)))
            f.write(b"\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, out / MANIFEST)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise folder_write_error(out, exc) from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Resumable(Protocol):
    """A manifest: the parameters a resumed run (or build) must share with the records."""

    def comparable(self) -> dict[str, Any]: ...


def check_resume(old: Resumable, new: Resumable, *, where: str | os.PathLike[str],
                 what: str = "run") -> None:
    """Raise :class:`ResumeMismatch` naming the folder ``where`` and every parameter that
    differs (``what`` names what is resumed). The folder is required: a sweep resumes one
    folder per setting, and the message must say which one refused."""
    a, b = old.comparable(), new.comparable()
    diffs = [f"{k}: records have {a[k]!r}, this {what} has {b[k]!r}" for k in a if a[k] != b[k]]
    if diffs:
        raise ResumeMismatch(f"cannot resume {os.fspath(where)}: the {what}'s parameters differ ("
                             + "; ".join(diffs) + ")")


class RecordWriter:
    """Append-only writer of records, one ``write()`` per record.

    An operating-system error (``ENOSPC``, ``EROFS``, ``EACCES``, ``EDQUOT``, ``EIO``...)
    raises :class:`~..core.errors.FolderWriteError` naming it; a record cut short by it is
    the log's torn last line, which readers drop and a resumed writer truncates away."""

    def __init__(self, out_dir: str | os.PathLike[str], *, valid_length: int | None = None) -> None:
        self.path = Path(out_dir) / RECORDS
        self._fd = -1
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
            if valid_length is not None and os.fstat(self._fd).st_size > valid_length:
                os.ftruncate(self._fd, valid_length)  # drop a torn last line before appending
        except OSError as exc:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
            raise folder_write_error(self.path.parent, exc) from exc
        self._encoder = msgspec.json.Encoder()
        self._buffer = bytearray()
        #: records written (handed to the kernel) and known to be on disk
        self.written = 0
        self._durable = 0
        self._syncing: asyncio.Future[None] | None = None
        #: the first write error: every later write and sync raises it again
        self.failed: Exception | None = None

    def write(self, record: Record) -> None:
        if self.failed is not None:
            raise self.failed
        buf = self._buffer
        self._encoder.encode_into(record, buf)
        buf.extend(b"\n")
        try:
            with memoryview(buf) as whole:
                view = whole
                try:
                    while view:
                        view = view[os.write(self._fd, view):]
                finally:
                    view.release()  # no export left: the buffer is re-used (resized) next time
        except OSError as exc:
            self.failed = folder_write_error(self.path.parent, exc)
            raise self.failed from exc
        self.written += 1

    async def sync(self) -> None:
        """Return once every record written so far is on disk (group commit).

        At most one ``fsync`` runs at a time, off the event loop, and it covers every
        record written before it started: a thousand episodes ending together share a
        few ``fsync`` calls instead of queueing a thousand threads, whose GIL hand-offs
        would stall the loop's own writes.
        """
        target = self.written
        while self._fd >= 0 and self._durable < target:
            if self._syncing is None:
                self._syncing = asyncio.ensure_future(self._fsync())
            await asyncio.shield(self._syncing)

    async def _fsync(self) -> None:
        try:
            await asyncio.sleep(0)  # let the records of this loop iteration join the batch
            upto = self.written
            if self._fd >= 0:
                try:
                    await asyncio.to_thread(os.fsync, self._fd)
                except OSError as exc:
                    self.failed = self.failed or folder_write_error(self.path.parent, exc)
                    raise self.failed from exc
            self._durable = max(self._durable, upto)
        finally:
            self._syncing = None

    async def aclose(self) -> None:
        if self._syncing is not None:
            await asyncio.gather(self._syncing, return_exceptions=True)
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            try:
                await asyncio.to_thread(os.fsync, fd)
            except OSError as exc:
                if self.failed is None:
                    self.failed = folder_write_error(self.path.parent, exc)
                    raise self.failed from exc
            finally:
                os.close(fd)
