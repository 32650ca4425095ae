"""The exception tree of pairbench_async.

A candidate program that crashes, a model that answers garbage or a hint that leaks
are *data* (verdicts and records). Exceptions are for the infrastructure: bad
configuration or input files, an endpoint that cannot be reached after the retry
budget, a sandbox that cannot run anything, a record store that cannot be resumed.

    PairbenchError
    ├── ConfigError               bad arguments, options or configuration files
    │   └── DatasetError          a malformed dataset file (names file, line, field)
    ├── ClientError               talking to a model endpoint failed
    │   ├── RateLimited           429 after the retry budget
    │   ├── TransientError        5xx, resets, timeouts after the retry budget
    │   └── BadResponse           the endpoint answered something unusable
    ├── SandboxError              the sandbox itself failed (never the program)
    │   ├── NativeModuleMissing   the native confinement module is not built
    │   └── ConfinementUnavailable  full confinement was required but is missing
    └── StoreError                the record store cannot be written or read
        ├── ResumeMismatch        --resume with parameters that differ from the run's
        ├── FolderLocked          another process is writing the run folder (its lock)
        └── FolderWriteError      the run folder could not be written (a full disk,
                                  a read-only file system, no permission, ...)
"""

from __future__ import annotations

__all__ = [
    "BadResponse",
    "ClientError",
    "ConfigError",
    "ConfinementUnavailable",
    "DatasetError",
    "FolderLocked",
    "FolderWriteError",
    "NativeModuleMissing",
    "PairbenchError",
    "RateLimited",
    "ResumeMismatch",
    "SandboxError",
    "SandboxNotice",
    "StoreError",
    "TransientError",
]


class PairbenchError(Exception):
    """Base class of every error raised by pairbench_async."""


class ConfigError(PairbenchError):
    """Bad arguments, options or configuration."""


class DatasetError(ConfigError):
    """A dataset file is malformed; the message names the file, line and field."""

    def __init__(self, path: str, line: int | None, field: str | None, message: str) -> None:
        self.path = path
        self.line = line
        self.field = field
        self.reason = message
        where = path if line is None else f"{path}:{line}"
        if field:
            where += f": field {field!r}"
        super().__init__(f"{where}: {message}")


class ClientError(PairbenchError):
    """A model endpoint could not produce a usable answer."""


class RateLimited(ClientError):
    """The endpoint kept answering 429 until the retry budget was spent."""


class TransientError(ClientError):
    """Server errors, resets or timeouts outlasted the retry budget."""


class BadResponse(ClientError):
    """The endpoint answered, but not with a usable chat completion."""


class SandboxError(PairbenchError):
    """The sandbox failed; this is never the evaluated program's own failure."""


class NativeModuleMissing(SandboxError):
    """The native confinement module (``sandbox/confine.c``, built as
    ``pairbench_async.sandbox.native``) cannot be found: the package was not built."""


class ConfinementUnavailable(SandboxError):
    """Full confinement was required, but this kernel lacks a mechanism."""


class SandboxNotice(UserWarning):
    """Said once when a pool starts: a layer that only root may have is replaced by its
    fallback (as an ordinary user, no cgroup: memory is counted by hand)."""


class StoreError(PairbenchError):
    """The record store cannot be written or read back."""


class ResumeMismatch(StoreError):
    """The records in the output directory belong to a run with other parameters."""


class FolderLocked(StoreError):
    """Another process holds the run folder's lock (one writer per folder)."""


class FolderWriteError(StoreError):
    """An operating-system error while writing a run folder (records, manifest, lock):
    ``ENOSPC``, ``EROFS``, ``EACCES``, ``EDQUOT``... ``folder`` is the folder, ``errno``
    the cause; what was written before it stays valid."""

    def __init__(self, message: str, folder: object = None, errno: int | None = None) -> None:
        super().__init__(message)
        self.folder = folder
        self.errno = errno

