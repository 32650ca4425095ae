"""The folder a ``--sweep`` leaves: one run folder per setting, named for its grid point.

Owns the layout both sides agree on: the writer names each setting's folder with
:func:`setting_name`; the readers (``report``, ``export``, :func:`~..report.runs.load_run`)
find the runs of a folder, in the sweep's order, with :func:`run_dirs`. A run folder holds
``records.jsonl`` and ``manifest.json`` (:mod:`.store`); a sweep folder holds only run
folders, whose manifests record their grid point (``RunManifest.sweep``).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ..core.errors import ConfigError
from .lock import LOCK
from .store import MANIFEST, RECORDS, read_manifest

__all__ = ["NAME_LIMIT", "check_layout", "holds_run", "is_run", "run_dirs", "safe_part", "setting_name"]

#: the longest readable part of a setting's folder name taken from one value
NAME_LIMIT = 48


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._+-]+", "-", text).strip("-.")


def safe_part(value: int | str, siblings: list[int | str]) -> str:
    """A value as part of a folder name: kept when already safe, else its unsafe runs
    (``:``, ``/``, ``@``, ``?``...) as ``-``; a 6-hex digest of the exact value is added when
    that loses information another value of the axis (``siblings``) needs, or the name had
    to be cut."""
    text = str(value)
    readable = _slug(text)
    cut = len(readable) > NAME_LIMIT
    clash = sum(1 for s in siblings if _slug(str(s)) == readable) > 1
    if readable == text and not cut:
        return text
    if cut or clash or not readable:
        digest = hashlib.sha256(text.encode()).hexdigest()[:6]
        return f"{readable[:NAME_LIMIT]}-{digest}" if readable else digest
    return readable


def setting_name(point: dict[str, int | str], grid: list[dict[str, int | str]]) -> str:
    """The folder of a sweep point: ``turns=6``, ``turns=6_feedback=openai-deepseek-chat``;
    filesystem-safe, readable, and distinct for distinct points of ``grid``."""
    return "_".join(f"{k}={safe_part(v, sorted({p[k] for p in grid}, key=str))}"
                    for k, v in point.items())


def is_run(folder: Path) -> bool:
    """Does ``folder`` hold one run (its records file), rather than a sweep's runs?"""
    return (folder / RECORDS).is_file()


def holds_run(root: Path) -> bool:
    """Does ``root`` hold a run or a sweep that ``--resume`` could continue (a manifest)?"""
    return (root / MANIFEST).is_file() or any(root.glob(f"*/{MANIFEST}"))


def check_layout(root: Path, *, sweep: bool) -> None:
    """A folder holds one run or one sweep (a run per setting), never both: a mix would
    make ``report`` and ``export`` show the one and silently hide the other."""
    single = (root / MANIFEST).is_file()
    settings = sorted(p.parent.name for p in root.glob(f"*/{MANIFEST}"))
    if sweep and single:
        raise ConfigError(f"{root} holds a single run; a --sweep needs a folder of its own")
    if not sweep and settings and not single:
        raise ConfigError(f"{root} holds a --sweep ({', '.join(settings)}); continue it with the same "
                          "--sweep, or choose another --out")


def run_dirs(root: Path) -> list[tuple[str, Path]]:
    """(setting, run directory) of a run (setting ``""``), or of every run under a
    ``--sweep`` folder in the sweep's order: the grid position its manifest records (the
    first is the main setting), then, for runs written before that was recorded, the
    folder names with their numbers compared as numbers (``turns=6`` before ``turns=10``).
    :class:`ConfigError` when there is no run here."""
    if is_run(root):
        return [("", root)]
    found = [p.parent for p in root.glob(f"*/{RECORDS}")]
    if not found:
        if holds_run(root) or (root / LOCK).is_file():
            # a run that has begun but recorded nothing yet (its references are being checked,
            # its first turns are running): nothing to read yet, which is not a wrong folder
            raise ConfigError(f"{root}: the run has recorded nothing yet (it is starting); "
                              "report it again once its first turns are in")
        raise ConfigError(f"{root}: no records.jsonl here or in its subdirectories "
                          "(is this a run directory?)")

    def order(run: Path) -> tuple[int, list[tuple[int, str]]]:
        manifest = read_manifest(run)
        sweep = manifest.sweep if manifest is not None else None
        index = sweep.index if sweep is not None else 1 << 30
        return index, [(int(part), "") if part.isdigit() else (-1, part)
                       for part in re.split(r"(\d+)", run.name)]

    return [(p.name, p) for p in sorted(found, key=order)]
