"""One sandbox interface, two homes: what crosses it, and the factory behind --sandbox."""

from __future__ import annotations

import sys

import msgspec
import pytest

from pairbench_async.cluster.factory import make_sandbox
from pairbench_async.cluster.options import RayOptions
from pairbench_async.cluster.ray_sandbox import RaySandbox
from pairbench_async.core.errors import ConfigError
from pairbench_async.core.types import Checker, Limits, Program, Test, TestResult, Verdict
from pairbench_async.sandbox.config import SandboxConfig
from pairbench_async.sandbox.interface import (
    Sandbox,
    SandboxJob,
    SandboxStatistics,
    decode_job,
    decode_results,
    decode_statistics,
    encode,
)
from pairbench_async.sandbox.pool import SandboxPool


def test_both_sandboxes_have_the_interface() -> None:
    assert isinstance(SandboxPool(workers=1), Sandbox)
    assert isinstance(RaySandbox(), Sandbox)


def test_a_job_and_its_results_cross_a_boundary_unchanged() -> None:
    job = SandboxJob(Program(source="print(f(2))", kind="call", entry_point="f"),
                     [Test(id="a", args=[1, [2, 3]], kwargs={"k": None}, expected={"x": 1.5}),
                      Test(id="b", input="1\n", output="2\n")],
                     Limits(time_limit=1.5, memory_limit_mb=64), Checker(mode="exact"), trace=True)
    assert decode_job(encode(job)) == job
    results = [TestResult(id="a", verdict=Verdict.AC, value={"x": 1.5}, lines=[1, 2]),
               TestResult(id="b", verdict=Verdict.SF, error="node lost twice")]
    assert decode_results(encode(results)) == results
    stats = SandboxStatistics(workers=4, jobs_done=1, jobs_waiting=0, tests_run=2, worker_restarts=0,
                              sandbox_faults=1, nodes=2, nodes_lost=1, retries=1, tests_retried=2)
    assert decode_statistics(encode(stats)) == stats


def test_what_plain_msgpack_cannot_carry_crosses_tagged_and_comes_back_equal() -> None:
    # the local pool handles a call test's int beyond 64 bits and a lone surrogate in a
    # source or an output; plain msgpack raises on both (OverflowError, UnicodeEncodeError)
    big = 2**70
    job = SandboxJob(Program(source="def f():\n    return 2 ** 70  # \ud800\n", kind="call",
                             entry_point="f"),
                     [Test(id="a", args=[-(2**80)], kwargs={"k": big}, expected=big),
                      Test(id="\udcff", input="\ud800\n", output="x\n")])
    with pytest.raises((OverflowError, UnicodeEncodeError)):
        msgspec.msgpack.encode(job)
    back = decode_job(encode(job))
    assert back == job and back.tests[0].expected == big and type(back.tests[0].expected) is int
    results = [TestResult(id="a", verdict=Verdict.AC, value=big),
               TestResult(id="b", verdict=Verdict.WA, stdout="\ud800" + "y" * 100_000)]
    assert decode_results(encode(results)) == results
    # the tag is an extension type, never a string a program could forge
    forged = [TestResult(id="a", verdict=Verdict.AC, value="1180591620717411303424")]
    assert decode_results(encode(forged)) == forged
    # a value of the wrong type still fails to decode, tagged or not
    with pytest.raises(msgspec.ValidationError):
        decode_results(encode(job))


def test_the_factory_builds_a_local_pool_by_default_and_checks_its_arguments() -> None:
    assert isinstance(make_sandbox(), SandboxPool)
    with pytest.raises(ConfigError, match="--ray-address needs --sandbox ray"):
        make_sandbox("local", ray_address="127.0.0.1:6379")
    with pytest.raises(ConfigError, match="unknown sandbox 'k8s'"):
        make_sandbox("k8s")


def test_the_ray_sandbox_takes_the_address_and_workers_per_node() -> None:
    pytest.importorskip("ray", reason="the ray extra is not installed")
    sandbox = make_sandbox("ray", SandboxConfig(workers=3), ray_address="127.0.0.1:6379")
    assert isinstance(sandbox, RaySandbox)
    assert sandbox.options.address == "127.0.0.1:6379" and sandbox.options.workers_per_node == 3


def test_without_ray_the_ray_sandbox_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # what an absent package looks like to import
    with pytest.raises(ConfigError, match=r"pip install 'pairbench_async\[ray\]'"):
        make_sandbox("ray")


def test_ray_options_refuse_nonsense() -> None:
    with pytest.raises(ConfigError):
        RayOptions(workers_per_node=0)
    with pytest.raises(ConfigError):
        RayOptions(heartbeat_timeout_s=0)
    assert msgspec.structs.replace(RayOptions(), batch_tests=100).batch_tests == 100
