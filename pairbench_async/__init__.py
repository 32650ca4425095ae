"""pairbench_async: PAIR-BENCH code-improvement evaluation with a native sandbox."""


from typing import TYPE_CHECKING as _TYPE_CHECKING

from .core.errors import (
    BadResponse,
    ClientError,
    ConfigError,
    ConfinementUnavailable,
    DatasetError,
    FolderLocked,
    FolderWriteError,
    NativeModuleMissing,
    PairbenchError,
    RateLimited,
    ResumeMismatch,
    SandboxError,
    SandboxNotice,
    StoreError,
    TransientError,
)
from .core.types import (
    SCHEMA_VERSION,
    Checker,
    Completion,
    Instance,
    Limits,
    Message,
    Program,
    Test,
    TestResult,
    Usage,
    Verdict,
)
from .core.version import __version__ as __version__

if _TYPE_CHECKING:  # what the lazy names below are, for type checkers and editors
    from .cluster.factory import make_sandbox
    from .cluster.options import RayOptions
    from .cluster.ray_sandbox import RaySandbox
    from .datasets.files import DatasetRead, load_dataset, read_instances, write_instances
    from .models.client import OpenAIClient
    from .models.endpoint import EndpointSettings, parse_model_spec
    from .models.interface import ContextModel, ModelClient
    from .models.offline import RulesFeedback, SimCandidate, TurnContext
    from .report.metrics import ModelMetrics, compute_metrics, metrics_by_model
    from .report.runs import LoadedRun, load_run
    from .report.trajectory import Trajectory, TurnOutcome
    from .runlog.records import (
        CallRecord,
        EpisodeRecord,
        HintRecord,
        Record,
        RunManifest,
        SweepSetting,
        TargetRecord,
        TurnRecord,
    )
    from .runner.estimate import SweepEstimate, estimate_sweep
    from .runner.evaluator import Evaluator, RunConfig, RunStatistics
    from .runner.sweep import SWEEPABLE, SettingRun, SweepObserver, SweepPoint, run_sweep
    from .sandbox.interface import Sandbox, SandboxJob
    from .sandbox.pool import SandboxConfig, SandboxPool, SandboxStatistics
    from .sandbox.traces import TraceCache

#: Public names imported on first use, so that ``python -m pairbench_async exec`` (timed
#: from its own start) and every other command pay only for what they use: the runner
#: brings the event loop and the models, the client brings aiohttp.
_LAZY = {
    "DatasetRead": ".datasets.files", "load_dataset": ".datasets.files", "read_instances": ".datasets.files",
    "write_instances": ".datasets.files",
    "EndpointSettings": ".models.endpoint", "ContextModel": ".models.interface", "ModelClient": ".models.interface",
    "parse_model_spec": ".models.endpoint",
    "RulesFeedback": ".models.offline", "SimCandidate": ".models.offline", "TurnContext": ".models.offline",
    "ModelMetrics": ".report.metrics", "compute_metrics": ".report.metrics", "metrics_by_model": ".report.metrics",
    "Trajectory": ".report.trajectory", "TurnOutcome": ".report.trajectory",
    "CallRecord": ".runlog.records", "EpisodeRecord": ".runlog.records", "HintRecord": ".runlog.records",
    "Record": ".runlog.records", "RunManifest": ".runlog.records", "SweepSetting": ".runlog.records",
    "TargetRecord": ".runlog.records", "TurnRecord": ".runlog.records",
    "LoadedRun": ".report.runs", "load_run": ".report.runs",
    "Evaluator": ".runner.evaluator", "RunConfig": ".runner.evaluator", "RunStatistics": ".runner.evaluator",
    "SettingRun": ".runner.sweep", "SweepPoint": ".runner.sweep", "run_sweep": ".runner.sweep",
    "SWEEPABLE": ".runner.sweep", "SweepObserver": ".runner.sweep",
    "SweepEstimate": ".runner.estimate", "estimate_sweep": ".runner.estimate",
    "TraceCache": ".sandbox.traces",
    "SandboxConfig": ".sandbox.pool", "SandboxPool": ".sandbox.pool", "SandboxStatistics": ".sandbox.pool",
    "OpenAIClient": ".models.client",
    "Sandbox": ".sandbox.interface", "SandboxJob": ".sandbox.interface",
    "RaySandbox": ".cluster.ray_sandbox", "RayOptions": ".cluster.options",
    "make_sandbox": ".cluster.factory",
}

__all__ = [
    "BadResponse",
    "CallRecord",
    "Checker",
    "ClientError",
    "Completion",
    "ConfigError",
    "ConfinementUnavailable",
    "ContextModel",
    "DatasetError",
    "FolderLocked",
    "FolderWriteError",
    "DatasetRead",
    "EndpointSettings",
    "EpisodeRecord",
    "Evaluator",
    "HintRecord",
    "Instance",
    "Limits",
    "LoadedRun",
    "Message",
    "ModelClient",
    "ModelMetrics",
    "NativeModuleMissing",
    "OpenAIClient",
    "PairbenchError",
    "Program",
    "RateLimited",
    "RayOptions",
    "RaySandbox",
    "Record",
    "ResumeMismatch",
    "RulesFeedback",
    "RunConfig",
    "RunManifest",
    "RunStatistics",
    "SCHEMA_VERSION",
    "SWEEPABLE",
    "Sandbox",
    "SandboxConfig",
    "SandboxError",
    "SandboxJob",
    "SandboxNotice",
    "SandboxPool",
    "SandboxStatistics",
    "SettingRun",
    "SimCandidate",
    "StoreError",
    "SweepEstimate",
    "SweepObserver",
    "SweepPoint",
    "SweepSetting",
    "TargetRecord",
    "Test",
    "TestResult",
    "TraceCache",
    "Trajectory",
    "TransientError",
    "TurnContext",
    "TurnOutcome",
    "TurnRecord",
    "Usage",
    "Verdict",
    "compute_metrics",
    "estimate_sweep",
    "load_dataset",
    "load_run",
    "make_sandbox",
    "metrics_by_model",
    "parse_model_spec",
    "read_instances",
    "run_sweep",
    "write_instances",
]


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module, __name__), name)
    globals()[name] = value  # once: later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
