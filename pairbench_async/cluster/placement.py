"""Where the next batch of tests goes: least outstanding work per worker, with affinity.

Pure bookkeeping, no Ray and no I/O, so that the rule is tested by hand. A node's
load is its tests in flight per sandbox worker. A batch goes to the least-loaded node
that has room (back-pressure: at most ``tests_per_worker`` tests in flight per worker,
or one batch when the node is idle, so a batch larger than the bound still runs);
a node that just lost the batch is avoided while another has room. A program keeps to
the node that ran it last (its zygote's node, where its chunks find the program
loaded) unless that node is a whole batch per worker busier than the least-loaded one.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TypeVar

__all__ = ["NodeLoad", "has_room", "pick_node"]


class NodeLoad:
    """The driver's view of one node: its workers and the tests it has in flight."""

    __slots__ = ("node_id", "order", "outstanding", "ready", "workers")

    def __init__(self, node_id: str, workers: int, order: int = 0) -> None:
        self.node_id = node_id
        self.workers = max(1, workers)
        self.order = order  # tie-break: the node seen first
        self.outstanding = 0
        self.ready = False

    @property
    def load(self) -> float:
        return self.outstanding / self.workers


N = TypeVar("N", bound=NodeLoad)


def has_room(node: NodeLoad, tests: int, tests_per_worker: int) -> bool:
    return node.outstanding == 0 or node.outstanding + tests <= tests_per_worker * node.workers


def pick_node(nodes: Sequence[N], tests: int, *, tests_per_worker: int,
              preferred: str | None = None, avoid: Collection[str] = ()) -> N | None:
    """The node for a batch of ``tests``, or None when every ready node is at its bound."""
    open_ = [n for n in nodes if n.ready and has_room(n, tests, tests_per_worker)]
    fresh = [n for n in open_ if n.node_id not in avoid] or open_
    if not fresh:
        return None
    best = min(fresh, key=lambda n: (n.load, n.order))
    if preferred is not None and preferred != best.node_id:
        for n in fresh:
            if n.node_id == preferred and n.load <= best.load + tests / n.workers:
                return n
    return best
