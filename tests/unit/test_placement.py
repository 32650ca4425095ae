"""Where a batch goes (cluster/placement.py), on small node sets worked by hand."""

from __future__ import annotations

from pairbench_async.cluster.placement import NodeLoad, has_room, pick_node


def _nodes(*spec: tuple[str, int, int]) -> list[NodeLoad]:
    out = []
    for order, (node_id, workers, outstanding) in enumerate(spec):
        n = NodeLoad(node_id, workers, order)
        n.outstanding = outstanding
        n.ready = True
        out.append(n)
    return out


def test_least_outstanding_tests_per_worker_wins() -> None:
    # a: 200 tests / 2 workers = 100 per worker; b: 60 / 1 = 60; c: 300 / 4 = 75 -> b
    nodes = _nodes(("a", 2, 200), ("b", 1, 60), ("c", 4, 300))
    assert pick_node(nodes, 100, tests_per_worker=256).node_id == "b"


def test_ties_go_to_the_node_seen_first() -> None:
    nodes = _nodes(("a", 2, 0), ("b", 2, 0))
    assert pick_node(nodes, 10, tests_per_worker=256).node_id == "a"


def test_back_pressure_bounds_each_node_and_an_idle_node_takes_any_batch() -> None:
    # bound: 256 x 1 worker = 256 tests; a holds 200: 200 + 100 = 300 > 256 -> no room
    a = _nodes(("a", 1, 200))
    assert not has_room(a[0], 100, 256)
    assert pick_node(a, 100, tests_per_worker=256) is None
    assert pick_node(a, 56, tests_per_worker=256).node_id == "a"  # 200 + 56 = 256: fits
    idle = _nodes(("b", 1, 0))
    assert pick_node(idle, 1000, tests_per_worker=256).node_id == "b"  # larger than the bound


def test_a_node_not_ready_gets_nothing() -> None:
    nodes = _nodes(("a", 1, 0), ("b", 1, 50))
    nodes[0].ready = False
    assert pick_node(nodes, 10, tests_per_worker=256).node_id == "b"


def test_affinity_holds_within_one_batch_per_worker_of_the_least_loaded() -> None:
    # batch of 100; least loaded b at 0/1 = 0; a at 150/2 = 75 <= 0 + 100/2 = 50? no -> b
    nodes = _nodes(("a", 2, 150), ("b", 1, 0))
    assert pick_node(nodes, 100, tests_per_worker=256, preferred="a").node_id == "b"
    # a at 80/2 = 40 <= 0 + 50 -> the program stays on a
    nodes = _nodes(("a", 2, 80), ("b", 1, 0))
    assert pick_node(nodes, 100, tests_per_worker=256, preferred="a").node_id == "a"


def test_a_retry_avoids_the_node_it_lost_while_another_has_room() -> None:
    nodes = _nodes(("a", 1, 0), ("b", 1, 100))
    assert pick_node(nodes, 10, tests_per_worker=256, avoid=("a",)).node_id == "b"
    full = _nodes(("a", 1, 0), ("b", 1, 250))  # b: 250 + 10 > 256: only a has room
    assert pick_node(full, 10, tests_per_worker=256, avoid=("a",)).node_id == "a"
    # the avoided node is not preferred either, even when the program ran there
    assert pick_node(nodes, 10, tests_per_worker=256, preferred="a", avoid=("a",)).node_id == "b"
