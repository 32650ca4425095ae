"""What a run writes: the manifest and the record kinds of its log.

The log (``records.jsonl``) is append-only JSON Lines, one :class:`TurnRecord` per
evaluated turn and one :class:`EpisodeRecord` per finished episode, tagged by a
``kind`` field. It is also the checkpoint: a turn record carries the policy state
after that turn, so an interrupted episode resumes from its last record. Records
never hold an API key; model replies and hints are kept so runs can be replayed.

Schema rules (msgspec): new fields get defaults, old records keep decoding, and
``schema`` is bumped when a change alters what a recorded value means or how a run
proceeds (a run of one schema never resumes in another). A field that only adds
information, which a reader may lack without reading anything else differently
(``CallRecord.messages``), is not a change of schema.

The messages a call sent are stored once by content in ``messages.jsonl``
(:mod:`.messages`); a call record holds their ids.
"""

from __future__ import annotations

from collections.abc import Iterable
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
    "SummaryCall",
    "SweepSetting",
    "TargetRecord",
    "TurnRecord",
    "latest_attempts",
]


class CallRecord(msgspec.Struct, frozen=True, omit_defaults=True):
    """One model call of a turn: who, what was sent, what came back, what it cost."""

    #: ``validator``: the leakage validator's LLM judge (``--validator-model``)
    role: Literal["candidate", "feedback", "validator"]
    model: str
    #: the reply, raw (before any code extraction or word cap)
    text: str
    usage: Usage = Usage()
    latency_ms: float = 0.0
    attempts: int = 1
    #: the ids of the messages sent, in order (:func:`.messages.message_id`; the messages
    #: are in the run's ``messages.jsonl``); empty in runs recorded before messages were
    #: (an optional field: schema 3 records with and without it read alike)
    messages: list[str] = []


class SummaryCall(msgspec.Struct, frozen=True, omit_defaults=True):
    """The feedback model's call that wrote an instance's one-sentence problem for
    ``--obfuscate`` (made once per instance, outside any turn): a line of the run's
    ``summaries.calls.jsonl``; the summary itself is in ``summaries.json``."""

    instance_id: str
    call: CallRecord


class HintRecord(msgspec.Struct, frozen=True, omit_defaults=True):
    """The hint the candidate got, and every generation that led to it."""

    level: int
    text: str
    attempts: list[HintAttempt] = []
    fallback: bool = False
    #: words past the protocol's word cap cut from the feedback model's reply (0: none)
    words_cut: int = 0
    #: FeedbackEval's protocols: ``recorded`` (the dataset's text for this program, replayed
    #: verbatim) or ``generated`` (no recorded text: the feedback model wrote it)
    source: str | None = None


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
    """One evaluated turn of one episode (turn 0 is the unhinted repair, or the
    erroneous program as given for a protocol that starts from it: ``given``)."""

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
    #: turn 0 only: the program is the instance's erroneous program as given, not a
    #: candidate's reply (FeedbackEval's protocols start from it; no model was called)
    given: bool = False
    #: turn 0 only: the episode whose candidate call this turn's program comes from. Every
    #: protocol that starts from an unhinted repair shares one per (candidate, instance,
    #: run), so paired comparisons start from the same program; the call is recorded once,
    #: in that episode's turn 0 (None: this turn made its own call, or none)
    shared_from: str | None = None
    #: which attempt of the episode this is: 0 the first; ``--retry-errors`` runs an
    #: errored episode again as attempt 1, 2, ... whose records supersede the earlier
    #: ones (read with :func:`latest_attempts`; omitted when 0, as before it existed)
    attempt: int = 0
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
    #: the attempt of the episode this ends (see :attr:`TurnRecord.attempt`)
    attempt: int = 0
    schema: int = SCHEMA_VERSION


Record = TurnRecord | EpisodeRecord


def latest_attempts(records: Iterable[Record]) -> tuple[list[Record], list[Record]]:
    """The records of each episode's latest attempt (what every reader uses), and the
    superseded ones (earlier attempts, kept in the file), both in file order."""
    records = list(records)
    latest: dict[str, int] = {}
    for r in records:
        if r.attempt > latest.get(r.episode_id, 0):
            latest[r.episode_id] = r.attempt
    if not latest:
        return records, []
    keep: list[Record] = []
    old: list[Record] = []
    for r in records:
        (keep if r.attempt == latest.get(r.episode_id, 0) else old).append(r)
    return keep, old


class SweepSetting(msgspec.Struct, frozen=True):
    """Which point of a ``--sweep`` grid a run is: its folder name, its place in the grid
    (the report's "main setting" is index 0 unless asked otherwise) and the values that
    the sweep set (``{"turns": 6}``, ``{"feedback": "openai:deepseek-chat@http://..."}``)."""

    name: str
    index: int
    values: dict[str, int | str]


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
    #: the ``--sweep`` point this run is (None for a plain run, and in sweeps written
    #: before it was recorded); not compared on resume: feedback and params already are
    sweep: SweepSetting | None = None
    #: the record schema the run was written with. The default is 2 because manifests
    #: used to omit the field (it equalled the default): a manifest without it predates
    #: schema 3; a new run always sets it (``schema=SCHEMA_VERSION``), so it is written.
    schema: int = 2
    #: the leakage validator's LLM judge (``--validator-model``); None: the rules alone
    validator: str | None = None
    #: the spec of each model given a name (``--candidate NAME=SPEC``), by name (the records
    #: and ``candidates`` say the name); empty when no model was named
    specs: dict[str, str] = {}
    #: the effective base URL of each ``openai:`` model, by name (its ``@URL``, the model
    #: config's, ``OPENAI_BASE_URL``'s or the public one): a resume against another endpoint
    #: is refused unless asked for
    endpoints: dict[str, str] = {}
    #: how the run was asked for beyond the parameters above (``model_config``: the
    #: ``--config`` file; ``limit``; ``skip_invalid``): what ``--resume`` uses when the
    #: command line leaves them out
    options: dict[str, object] = {}

    def comparable(self) -> dict[str, object]:
        """The fields that must match for a resume (the schema too: a turn 0 recorded under
        one protocol rule must not meet one recorded under another in the same run)."""
        return {
            "schema": self.schema,
            "dataset_hash": self.dataset_hash,
            "candidates": self.candidates,
            "feedback": self.feedback,
            "validator": self.validator,
            "protocols": self.protocols,
            "runs": self.runs,
            "seed": self.seed,
            "params": self.params,
            "specs": self.specs,
        }
