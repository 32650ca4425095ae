"""pairbench_async: PAIR-BENCH code-improvement evaluation with a native sandbox."""


from .core.errors import (
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
from .core.types import (
    SCHEMA_VERSION,
    Checker,
    Instance,
    Limits,
    Program,
    Test,
    TestResult,
    Verdict,
)
from .core.version import __version__
from .datasets.files import DatasetRead, load_dataset, read_instances, write_instances
from .models.endpoint import EndpointSettings, ModelClient, parse_model_spec
from .models.offline import RulesFeedback, SimCandidate, TurnContext
from .report.metrics import ModelMetrics, compute_metrics, metrics_by_model
from .report.trajectory import Trajectory, TurnOutcome
from .runlog.records import EpisodeRecord, RunManifest, TurnRecord
from .runner.evaluator import Evaluator, RunConfig, RunStatistics
from .sandbox.pool import SandboxConfig, SandboxPool, SandboxStatistics

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
        from .models.client import OpenAIClient

        return OpenAIClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "OpenAIClient"})
