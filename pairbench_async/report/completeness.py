"""Is the run finished, and on which instances can its models be compared?

An interrupted sweep (^C, a crash, a killed machine) leaves a model with 15 finished
instances next to one with 9. Ranking them as they are compares different problems.
Every report therefore says how many of the planned episodes finished, and ranks the
models only on the instances that every compared (model, protocol) group finished.
Pure: records and the manifest in, numbers out.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from ..runlog.records import EpisodeRecord, Record, RunManifest

__all__ = ["Completeness", "common_instances", "completeness", "restrict"]


class Completeness(msgspec.Struct, frozen=True, kw_only=True):
    #: episodes the manifest plans (instances x candidates x protocols x runs); None without one
    planned: int | None
    #: episodes with an end record (done or errored)
    finished: int
    errored: int
    #: instances every (model, protocol) group finished, and how many instances have any record
    common: int
    instances: int
    #: episodes with a record but no end record (started, then cut off)
    started: int = 0

    @property
    def complete(self) -> bool:
        return self.planned is None or self.finished >= self.planned

    @property
    def unfinished(self) -> int:
        """Episodes planned or started that have no end record. A killed run leaves
        planned episodes with no record at all, so the records alone would say 0."""
        return max(self.started, (self.planned or 0) - self.finished)

    def banner(self) -> str | None:
        """The line a report puts at its top when the run is not finished, else None."""
        if self.complete and self.common == self.instances:
            return None
        parts = []
        if not self.complete:
            parts.append(f"incomplete: {self.finished} of {self.planned} episodes finished")
        if self.common < self.instances:
            parts.append(f"models ranked on the {self.common} of {self.instances} instances that every "
                         "compared model finished")
        return "; ".join(parts)


def _groups(records: Sequence[Record]) -> dict[tuple[str, str], set[str]]:
    done: dict[tuple[str, str], set[str]] = {}
    for r in records:
        if isinstance(r, EpisodeRecord):
            done.setdefault((r.model, r.protocol), set()).add(r.instance_id)
    return done


def common_instances(records: Sequence[Record]) -> set[str]:
    """Instances with an end record in every (model, protocol) group."""
    groups = list(_groups(records).values())
    return set.intersection(*groups) if groups else set()


def completeness(records: Sequence[Record], manifest: RunManifest | None) -> Completeness:
    ends = {r.episode_id: r for r in records if isinstance(r, EpisodeRecord)}
    planned = None
    if manifest is not None:
        planned = manifest.instances * len(manifest.candidates) * len(manifest.protocols) * manifest.runs
    seen = {r.instance_id for r in records}
    started = {r.episode_id for r in records} - set(ends)
    return Completeness(planned=planned, finished=len(ends),
                        errored=sum(1 for r in ends.values() if r.status == "error"),
                        common=len(common_instances(records)), instances=len(seen),
                        started=len(started))


def restrict(records: Sequence[Record]) -> list[Record]:
    """The records of the instances every (model, protocol) group finished."""
    keep = common_instances(records)
    return [r for r in records if r.instance_id in keep]
