"""RayOptions: how the Ray sandbox finds its cluster, places its actors and notices a lost node.

A module of its own so that the factory and the CLI can check these settings without
importing Ray (which only :mod:`.ray_sandbox` does, when a Ray sandbox starts).
"""

from __future__ import annotations

import msgspec

from ..core.errors import ConfigError

__all__ = ["RayOptions"]


class RayOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Settings of a :class:`~.ray_sandbox.RaySandbox`; defaults suit a production cluster."""

    #: ``ray.init(address=...)``: None is ``"auto"`` (the cluster ``ray start`` started on
    #: this machine, or ``RAY_ADDRESS``). Ignored when this process is connected already.
    address: str | None = None
    #: Sandbox workers per node; None: the node's ``CPU`` resource (a node started with
    #: ``--num-cpus 0``, such as a head kept free of work, gets no actor).
    workers_per_node: int | None = None
    #: Tests per actor call: a job larger than this is cut into batches that spread over
    #: nodes; ~100 keeps Ray's ~1 ms per call under 1 % of the batch's work.
    batch_tests: int = 128
    #: Back-pressure: tests in flight per node worker; a node at its bound takes no new
    #: batch (callers wait), so no node's queue grows without limit.
    tests_per_worker: int = 256
    #: Seconds between heartbeats (a statistics call) to every node.
    heartbeat_s: float = 1.0
    #: A node whose heartbeat is unanswered this long is lost (frozen, e.g. SIGSTOP, or
    #: cut off): its batches are retried elsewhere. Ray alone notices a frozen node late.
    heartbeat_timeout_s: float = 10.0
    #: Seconds between looks for nodes that joined (or came back).
    discover_s: float = 2.0
    #: Seconds an actor may take to start its pool on a node before it is given up.
    start_timeout_s: float = 60.0
    #: Seconds a batch waits while NO node is serving before its tests become ``SF``; while
    #: one serves, a batch waits its turn for room however long (first come, first served).
    node_wait_s: float = 120.0
    #: Seconds connecting to the cluster (``ray.init``) may take before it is a clear
    #: error; the address itself must accept a TCP connection within 5 s.
    connect_timeout_s: float = 60.0

    def __post_init__(self) -> None:
        if self.workers_per_node is not None and self.workers_per_node < 1:
            raise ConfigError(f"workers per node must be >= 1 (got {self.workers_per_node})")
        for name in ("batch_tests", "tests_per_worker"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1 (got {getattr(self, name)})")
        for name in ("heartbeat_s", "heartbeat_timeout_s", "discover_s", "start_timeout_s",
                     "node_wait_s", "connect_timeout_s"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"{name} must be > 0 (got {getattr(self, name)})")
