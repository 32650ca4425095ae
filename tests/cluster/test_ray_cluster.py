"""The sandbox on a Ray cluster: a 2-node ``cluster_utils.Cluster`` on this machine.

One run of ``scenario.py`` (its own process, ~35 s) gives the facts each test checks: the
command line's records on the cluster equal a local run's, a node removed mid-sweep
costs no episode and no test result (nor doubles one), a node that joins later gets
work, a frozen actor is given up by the sandbox's own heartbeat, a SIGKILLed actor
leaves no sandbox process, and afterwards no process the scenario saw, Ray's or the
sandbox's, is left (by pid and start time, never by name).

Safety on a shared machine: as root the scenario runs in a fresh network namespace
with only loopback (``unshare -n``); in every case each Ray address is bound to
127.0.0.1 explicitly (checked below), ``RAY_TMPDIR`` is a short directory of this test's
own (removed afterwards),
usage stats are off, and nothing calls ``ray stop``.

"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from bench.netns import netns_command
from tests.cluster.scenario import wait_gone

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.timeout(420),
    pytest.mark.skipif(importlib.util.find_spec("ray") is None,
                       reason="Ray is not installed (pip install -e '.[ray]')"),
]

SCENARIO = Path(__file__).with_name("scenario.py")


@pytest.fixture(scope="module")
def facts(tmp_path_factory: pytest.TempPathFactory) -> Any:
    work = tmp_path_factory.mktemp("ray")
    # Ray's Unix socket paths (~75 bytes of session and socket names) go under RAY_TMPDIR
    # and must stay under 107 bytes: pytest's directory is too deep, so a short one of
    # this test's own, removed afterwards
    rt = Path(tempfile.mkdtemp(prefix="pbray-", dir="/tmp"))
    env = {**os.environ, "RAY_TMPDIR": str(rt), "RAY_USAGE_STATS_ENABLED": "0"}
    cmd, marker = netns_command([sys.executable, str(SCENARIO), str(work / "facts.json")])
    env.update(marker)
    with open(work / "scenario.log", "wb") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            proc.wait(timeout=360)
        finally:
            if proc.poll() is None:  # our own child's session, by its id
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    try:
        data = json.loads((work / "facts.json").read_text())
    except (OSError, ValueError):
        data = {"error": "no facts written"}
    data["log"] = (work / "scenario.log").read_text(errors="replace")[-3000:]
    data["exit"] = proc.returncode
    yield data
    shutil.rmtree(rt, ignore_errors=True)


def test_the_scenario_ran_to_the_end(facts: Any) -> None:
    assert facts["exit"] == 0 and "error" not in facts, facts.get("error", "") + facts["log"]


def test_every_ray_address_is_bound_to_loopback(facts: Any) -> None:
    assert facts["listening_not_loopback"] == []


def test_the_command_line_on_the_cluster_records_what_a_local_run_records(facts: Any) -> None:
    # pairbench run --sandbox ray --ray-address ADDR, same seed: the same records apart
    # from timings and the run id
    assert facts["cli_exit"] == 0, facts["cli_stderr"]
    assert facts["cli_records"] > 0
    assert facts["cli_records_equal"]


def test_a_node_removed_mid_sweep_costs_no_episode_and_no_test_result(facts: Any) -> None:
    assert facts["victim_found"]
    assert facts["victim_in_flight_at_kill"] > 0  # removed while it held batches
    stats = facts["kill_run_statistics"]
    assert stats["episodes_done"] == stats["episodes_total"] > 0 and stats["errors"] == 0
    assert stats["sandbox_nodes_lost"] >= 1 and stats["sandbox_retries"] >= 1  # counted
    assert facts["kill_mismatched"] == 0  # one result per test
    assert facts["kill_faults"] == 0, facts["kill_fault_errors"]
    assert facts["kill_records_equal"]  # the local run's records, apart from timings
    assert facts["victim_left_after_5s"] == []


def test_awkward_programs_get_the_local_verdicts_through_ray(facts: Any) -> None:
    # a call returning 2**70 (expected 2**70, 2**80, 0), a lone surrogate in a source, in a
    # test's input/output and id, a 3 MB output: the same verdicts, errors, values as locally,
    # and no node lost over them (an actor's error is the batch's, never a lost node)
    assert facts["awkward_ray"] == facts["awkward_local"]
    assert [v[1] for v in facts["awkward_local"]][:4] == ["AC", "AC", "WA", "WA"]
    assert facts["awkward_nodes_lost"] == 0 and facts["awkward_retries"] == 0


def test_a_node_that_joins_later_gets_work(facts: Any) -> None:
    assert facts["late_all_ac"]
    assert facts["late_node_tests"] > 0


def test_a_frozen_actor_is_given_up_by_the_heartbeat(facts: Any) -> None:
    # SIGSTOP: Ray sees nothing wrong; the 3 s heartbeat moves its batches elsewhere
    assert facts["frozen_held_batches"]  # frozen while it held batches
    assert facts["frozen_all_ac"] and facts["frozen_retries"] >= 1
    assert facts["frozen_run_s"] < 30
    assert facts["frozen_left_after_10s"] == []


def test_a_sigkilled_actor_leaves_no_sandbox_process(facts: Any) -> None:
    assert facts["killed_actor_mid_test"]  # SIGKILLed while its test child ran
    assert facts["killed_actor_processes"] >= 4  # actor, worker, zygote, test child
    assert facts["killed_actor_left_after_3s"] == []
    assert facts["killed_actor_result"] == ["AC"]  # retried once on another node


def test_the_sandbox_workers_on_the_nodes_never_import_ray(facts: Any) -> None:
    assert facts["worker_threading"] == [False, False]
    assert facts["worker_modules"] == [facts["local_worker_modules"]] * 2


def test_no_process_of_the_scenario_is_left(facts: Any) -> None:
    seen = facts["seen_processes"]
    assert len(seen) > 10
    assert wait_gone(seen, 10) == []
