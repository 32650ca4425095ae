"""The work directory of a ``build-dataset`` run: its parameters, manifest and log.

A build must survive interruption and resume without re-running anything it already
did, so everything it learns goes into an append-only log of :class:`RepairTurn` and
:class:`SubmissionDone` records next to a :class:`BuildManifest` of its parameters.
This module holds those record types, reads the log back (:func:`read_log`,
:func:`read_prior`) and opens a work directory, checking ``--resume`` against the
manifest (:func:`open_work`); :mod:`.build_repair` writes the records and
:mod:`.build` derives the output from them.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec

from ..core.errors import ConfigError, StoreError
from ..runlog.records import CallRecord
from ..runlog.store import RECORDS, check_resume, read_manifest_as, write_manifest
from ..runlog.store import read_log as read_jsonl_log
from .importers.common import ImportOptions

__all__ = [
    "BUILD_SCHEMA",
    "FORMAT",
    "BuildManifest",
    "BuildParams",
    "BuildRecord",
    "RepairTurn",
    "ShownFailure",
    "Status",
    "SubmissionDone",
    "PriorWork",
    "build_manifest",
    "open_work",
    "read_prior",
    "hash_sources",
    "read_log",
]

#: Bumped when a record or the manifest changes shape.
BUILD_SCHEMA = 1
FORMAT = "build-dataset"

Status = Literal["repaired", "ok", "skipped", "failed", "error"]


class BuildParams(msgspec.Struct, frozen=True, kw_only=True):
    """One build's parameters (the CLI's flags)."""

    sources: list[str]
    out: str
    model: str
    turns: int = 5
    concurrency: int = 16
    seed: int = 0
    prefer_ok: bool = False
    resume: bool = False
    #: the work directory; default ``OUT`` + ``.work``
    work: str | None = None
    #: TOML model config (``--config``)
    config: str | None = None
    options: ImportOptions = ImportOptions()

    @property
    def work_dir(self) -> Path:
        return Path(self.work) if self.work else Path(self.out + ".work")


class BuildManifest(msgspec.Struct, frozen=True, omit_defaults=True):
    """What a work directory's records belong to; ``--resume`` compares :meth:`comparable`."""

    created: str
    software_version: str
    sources: list[str]
    sources_hash: str
    model: str
    turns: int
    seed: int
    prefer_ok: bool
    filters: dict[str, Any]
    schema: int = BUILD_SCHEMA

    def comparable(self) -> dict[str, Any]:
        """Source paths may differ (another working directory); their content may not."""
        return {"sources_hash": self.sources_hash, "model": self.model, "turns": self.turns,
                "seed": self.seed, "prefer_ok": self.prefer_ok, "filters": self.filters,
                "schema": self.schema}


class ShownFailure(msgspec.Struct, frozen=True, omit_defaults=True):
    """A failing test as the next prompt shows it: what the program did (clipped)."""

    id: str
    verdict: str
    output: str = ""
    error: str = ""


class RepairTurn(msgspec.Struct, frozen=True, omit_defaults=True, tag_field="kind", tag="turn"):
    """One evaluated program: turn 0 is the submission itself, 1..N the model's repairs."""

    id: str
    turn: int
    program: str
    #: tests passed, of the hidden ones and of all (hidden + public)
    hidden_passed: int
    passed: int
    total: int
    #: the failing tests the next turn's prompt shows
    shown: list[ShownFailure] = []
    code_found: bool = True
    call: CallRecord | None = None
    schema: int = BUILD_SCHEMA

    @property
    def all_pass(self) -> bool:
        return self.passed == self.total


class SubmissionDone(msgspec.Struct, frozen=True, omit_defaults=True, tag_field="kind",
                     tag="submission"):
    """How a submission ended. ``repaired``/``ok`` carry the reference; ``error`` is retried
    on resume; the others are final and name their report category in ``reason``."""

    id: str
    status: Status
    reason: str | None = None
    detail: str | None = None
    #: repair turns used
    turns: int = 0
    reference: str | None = None
    buggy_pass_rate: float | None = None
    best_pass_rate: float | None = None
    schema: int = BUILD_SCHEMA


BuildRecord = RepairTurn | SubmissionDone
_LOG = msgspec.json.Decoder(BuildRecord)
_MANIFEST = msgspec.json.Decoder(BuildManifest)


# -- the work directory ----------------------------------------------------------------------


def read_log(work: Path) -> tuple[list[BuildRecord], int]:
    """The records and the byte length of their valid prefix (``runlog.store.read_log``'s rule:
    a torn last line is dropped, a bad line anywhere else is corruption)."""
    return read_jsonl_log(work / RECORDS, _LOG)


def hash_sources(paths: Sequence[str]) -> str:
    """A content hash of the sources (blocking: run in a thread)."""
    h = hashlib.sha256()
    for path in paths:
        try:
            with open(path, "rb") as f:
                while chunk := f.read(1 << 20):
                    h.update(chunk)
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read: {exc.strerror}") from exc
        h.update(b"\0")
    return h.hexdigest()


def build_manifest(params: BuildParams, sources_hash: str) -> BuildManifest:
    from ..core.version import __version__

    o = params.options
    filters = msgspec.to_builtins({"min_tests": o.min_tests, "pass_rate": o.pass_rate,
                                   "loc": o.loc, "min_complexity": o.min_complexity,
                                   "reference_candidates": o.reference_candidates})
    return BuildManifest(created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                         software_version=__version__, sources=list(params.sources),
                         sources_hash=sources_hash, model=params.model, turns=params.turns,
                         seed=params.seed, prefer_ok=params.prefer_ok, filters=filters)


class PriorWork(msgspec.Struct):
    """What the log already says: turns per submission, and the finished ones."""

    turns: dict[str, list[RepairTurn]]
    done: dict[str, SubmissionDone]


def read_prior(records: Sequence[BuildRecord], work: Path) -> PriorWork:
    prior = PriorWork(turns={}, done={})
    for rec in records:
        if isinstance(rec, RepairTurn):
            prior.turns.setdefault(rec.id, []).append(rec)
        else:
            prior.done[rec.id] = rec  # a later record supersedes (an error, then retried)
    for sid, turns in prior.turns.items():
        turns.sort(key=lambda r: r.turn)
        if [r.turn for r in turns] != list(range(len(turns))):
            raise StoreError(f"{work}: submission {sid} has non-consecutive turns")
    return prior


def open_work(params: BuildParams, manifest: BuildManifest) -> tuple[PriorWork, int]:
    """Check or write the manifest; the prior records and the log's valid length."""
    work = params.work_dir
    old = read_manifest_as(work, _MANIFEST)
    records, valid = read_log(work)
    if old is not None or records:
        if not params.resume:
            raise StoreError(f"{work} already holds a build; pass --resume to continue it "
                             "(or another --work)")
        if old is None:
            raise StoreError(f"{work}: records without a manifest; cannot resume")
        check_resume(old, manifest, what="build", where=str(work))
    else:
        write_manifest(work, manifest)
    return read_prior(records, work), valid

