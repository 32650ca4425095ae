"""pairbench_async: PAIR-BENCH code-improvement evaluation with a native sandbox."""


from ._errors import (
    BadResponse,
    ClientError,
    ConfigError,
    ConfinementUnavailable,
    DatasetError,
    HelperMissing,
    PairbenchError,
    RateLimited,
    ResumeMismatch,
    SandboxError,
    StoreError,
    TransientError,
    WorkerCrashed,
)
from ._api import Evaluator, RunConfig, RunStatistics
from ._dataset import DatasetRead, load_dataset, read_instances, write_instances
from ._endpoint import EndpointSettings, ModelClient, parse_model_spec
from ._metrics import ModelMetrics, Trajectory, TurnOutcome, compute_metrics, metrics_by_model
from ._offline import RulesFeedback, SimCandidate, TurnContext
from ._pool import SandboxConfig, SandboxPool, SandboxStatistics
from ._runlog import EpisodeRecord, RunManifest, TurnRecord
from ._records import (
    SCHEMA_VERSION,
    Checker,
    Instance,
    Limits,
    Program,
    Test,
    TestResult,
    Verdict,
)

__version__ = "0.1.0"

__all__ = [
    "BadResponse",
    "Checker",
    "ClientError",
    "ConfigError",
    "ConfinementUnavailable",
    "DatasetError",
    "DatasetRead",
    "EndpointSettings",
    "EpisodeRecord",
    "Evaluator",
    "HelperMissing",
    "Instance",
    "Limits",
    "ModelClient",
    "ModelMetrics",
    "OpenAIClient",
    "PairbenchError",
    "Program",
    "RateLimited",
    "ResumeMismatch",
    "RulesFeedback",
    "RunConfig",
    "RunManifest",
    "RunStatistics",
    "SCHEMA_VERSION",
    "SandboxConfig",
    "SandboxError",
    "SandboxPool",
    "SandboxStatistics",
    "SimCandidate",
    "StoreError",
    "Test",
    "TestResult",
    "Trajectory",
    "TransientError",
    "TurnContext",
    "TurnOutcome",
    "TurnRecord",
    "Verdict",
    "WorkerCrashed",
    "__version__",
    "compute_metrics",
    "load_dataset",
    "metrics_by_model",
    "parse_model_spec",
    "read_instances",
    "write_instances",
]


def __getattr__(name: str) -> object:
    """``OpenAIClient`` is imported on first use: it brings aiohttp, which offline runs,
    reports and dataset tools never need."""
    if name == "OpenAIClient":
        from ._client import OpenAIClient

        return OpenAIClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "OpenAIClient"})
