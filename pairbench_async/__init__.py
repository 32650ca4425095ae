"""pairbench_async: PAIR-BENCH code-improvement evaluation with a native sandbox."""

from __future__ import annotations

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
from ._pool import SandboxConfig, SandboxPool, SandboxStatistics
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
    "SCHEMA_VERSION",
    "BadResponse",
    "Checker",
    "ClientError",
    "ConfigError",
    "ConfinementUnavailable",
    "DatasetError",
    "HelperMissing",
    "Instance",
    "Limits",
    "PairbenchError",
    "Program",
    "RateLimited",
    "ResumeMismatch",
    "SandboxConfig",
    "SandboxError",
    "SandboxPool",
    "SandboxStatistics",
    "StoreError",
    "Test",
    "TestResult",
    "TransientError",
    "Verdict",
    "WorkerCrashed",
    "__version__",
]
