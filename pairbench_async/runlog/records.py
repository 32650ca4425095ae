"""What a run writes: the manifest and the record kinds of its log.

The log (``records.jsonl``) is append-only JSON Lines, one :class:`TurnRecord` per
evaluated turn and one :class:`EpisodeRecord` per finished episode, tagged by a
``kind`` field. It is also the checkpoint: a turn record carries the policy state
after that turn, so an interrupted episode resumes from its last record. Records
never hold an API key; model replies and hints are kept so runs can be replayed.

Schema rules (msgspec): new fields get defaults, ``schema`` is bumped on change,
old records keep decoding.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from ..core.types import SCHEMA_VERSION, Usage
from ..protocol.leakage import HintAttempt
from ..protocol.policy import PolicyState

__all__ = [
    "CallRecord",
    "EpisodeRecord",
    "HintRecord",
    "Record",
    "RunManifest",
    "TargetRecord",
    "TurnRecord",
]


class CallRecord(msgspec.Struct, frozen=True, omit_defaults=True):
    """One model call of a turn: who, what came back, what it cost."""

    #: ``validator``: the leakage validator's LLM judge (``--validator-model``)
    role: Literal["candidate", "feedback", "validator"]
    model: str
    text: str
    usage: Usage = Usage()
    latency_ms: float = 0.0
    attempts: int = 1


class HintRecord(msgspec.Struct, frozen=True, omit_defaults=True):
    """The hint the candidate got, and every generation that led to it."""

    level: int
    text: str
    attempts: list[HintAttempt] = []
    fallback: bool = False


class TargetRecord(msgspec.Struct, frozen=True, omit_defaults=True):
    """The targeted failure scenario G_t of a hinted turn."""

    scenario_id: str
    tests: list[str]
    grouping: str
    failure: str
    #: None when the scenario was grouped by failure type alone (the back-off drops it)
    shape: str | None = None
    trace: list[int] = []
    representatives: list[str] = []
    continued: bool = False


class TurnRecord(msgspec.Struct, frozen=True, omit_defaults=True, tag_field="kind", tag="turn"):
    """One evaluated turn of one episode (turn 0 is the unhinted repair)."""

    run_id: str
    episode_id: str
    instance_id: str
    model: str
    protocol: str
    run: int
    seed: int
    turn: int
    program: str
    passed: list[str]
    failed: list[str]
    pass_rate: float
    verdicts: dict[str, int] = {}
    code_found: bool = True
    target: TargetRecord | None = None
    hint_level: int | None = None
    hint: HintRecord | None = None
    calls: list[CallRecord] = []
    #: policy state after this turn (the resume checkpoint); None for baselines
    policy: PolicyState | None = None
    sandbox_ms: float = 0.0
    #: False when the protocol showed hidden tests to the candidate (``test``)
    protected: bool = True
    schema: int = SCHEMA_VERSION


class EpisodeRecord(msgspec.Struct, frozen=True, omit_defaults=True, tag_field="kind", tag="episode"):
    """The end of an episode: why it stopped, or the error that ended it."""

    run_id: str
    episode_id: str
    instance_id: str
    model: str
    protocol: str
    run: int
    seed: int
    status: Literal["done", "error"]
    turns: int
    stop_reason: str | None = None
    initial_pass_rate: float | None = None
    final_pass_rate: float | None = None
    best_pass_rate: float | None = None
    error: str | None = None
    schema: int = SCHEMA_VERSION


Record = TurnRecord | EpisodeRecord


class RunManifest(msgspec.Struct, frozen=True, omit_defaults=True):
    """The parameters a run's records belong to; ``--resume`` refuses if they differ."""

    run_id: str
    created: str
    software_version: str
    dataset: list[str]
    dataset_hash: str
    instances: int
    candidates: list[str]
    feedback: str
    protocols: list[str]
    runs: int
    seed: int
    params: dict[str, object]
    python: str = ""
    platform: str = ""
    schema: int = SCHEMA_VERSION
    #: the leakage validator's LLM judge (``--validator-model``); None: the rules alone
    validator: str | None = None

    def comparable(self) -> dict[str, object]:
        """The fields that must match for a resume."""
        return {
            "dataset_hash": self.dataset_hash,
            "candidates": self.candidates,
            "feedback": self.feedback,
            "validator": self.validator,
            "protocols": self.protocols,
            "runs": self.runs,
            "seed": self.seed,
            "params": self.params,
        }
