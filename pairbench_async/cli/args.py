"""Argument types shared by the subcommands: a bad value is refused by argparse
(exit 2, the value named) before anything runs or is written."""

from __future__ import annotations

import argparse
import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..sandbox.config import SandboxConfig
    from ..sandbox.interface import Sandbox

__all__ = ["LOOP_RULE", "add_loop_rule_flags", "add_sandbox_choice", "add_sandbox_flags", "loop_rule",
           "make_command_sandbox", "non_negative_float", "non_negative_int", "positive_float", "positive_int",
           "rate_range"]


def _finite(text: str, limit: float, shown: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value > limit:
        raise argparse.ArgumentTypeError(f"must be a finite number up to {shown}: {text!r}")
    return value


def positive_float(text: str) -> float:
    value = _finite(text, 1e6, "1e6")  # seconds: 1e6 s is 11 days, and fits a C int in ms
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0: {text!r}")
    return value


def non_negative_float(text: str) -> float:
    value = _finite(text, 1e9, "1e9")
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text!r}")
    return value


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def non_negative_int(text: str) -> int:
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text!r}")
    return value


def positive_int(text: str) -> int:
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1: {text!r}")
    return value


def rate_range(text: str) -> tuple[float, float]:
    """``LO:HI`` with 0 <= LO <= HI <= 1 (a pass-rate range)."""
    lo, sep, hi = text.partition(":")
    try:
        low, high = float(lo), float(hi)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected LO:HI with numbers in 0..1, got {text!r}") from None
    if not sep or not 0 <= low <= high <= 1:
        raise argparse.ArgumentTypeError(f"expected LO:HI with 0 <= LO <= HI <= 1, got {text!r}")
    return low, high


def add_sandbox_choice(p: argparse.ArgumentParser) -> None:
    """``--sandbox local|ray`` and ``--ray-address``: where programs run (run, exec, validate,
    build-dataset)."""
    p.add_argument("--sandbox", choices=("local", "ray"), default="local",
                   help="where programs run: this machine's pool (default), or one pool per node "
                   "of a Ray cluster (pip install 'pairbench_async[ray]'; --workers is then per node)")
    p.add_argument("--ray-address", metavar="ADDR", default=None,
                   help="the Ray cluster to use with --sandbox ray (default: auto, the cluster "
                   "`ray start` started here, or RAY_ADDRESS)")


#: the SandboxConfig fields that decide verdicts past a test's own run: the loop rule, as
#: ``--loop-factor``, ``--loop-floor``, ``--loop-floor-shared`` and ``--loop-probe`` give
#: it, and whether a program's tests share a resident child (``--child-per-test`` turns it
#: off); ``run`` records them with its options
LOOP_RULE = ("loop_factor", "loop_floor", "loop_probe", "resident", "loop_floor_shared")


def add_loop_rule_flags(p: argparse.ArgumentParser, kept: str = "") -> None:
    """``--loop-factor``, ``--loop-floor``, ``--loop-probe`` (run, exec); ``kept``: what the
    command does with them, after the factor's help."""
    p.add_argument("--loop-factor", type=non_negative_int, default=None, metavar="K",
                   help="the loop rule's factor: once a test of a program timed out, a later test runs "
                   "under max(floor, floor + K x its ref_ms, K x the slowest finished test), far below "
                   f"its own limit (default 10; 0: off, every test to its own limit){kept}")
    p.add_argument("--loop-floor", type=positive_float, default=None, metavar="S",
                   help="the loop rule's floor, seconds of CPU (default 0.002)")
    p.add_argument("--loop-floor-shared", type=positive_float, default=None, metavar="S",
                   help="the floor of a test that runs after another in a resident child, whose "
                   "CPU has no fork in it; at most --loop-floor (default 0.0005)")
    p.add_argument("--loop-probe", type=positive_float, default=None, metavar="S",
                   help="the loop rule's probe, seconds of CPU: the limit of a test with ref_ms before "
                   "any timeout of its program (default 0.05)")
    p.add_argument("--child-per-test", dest="resident", action="store_const", const=False, default=None,
                   help="run every test in a child process of its own; by default a program's "
                   "tests run one after another in one child, and a test that ran after another and "
                   "failed is run again (docs/PROTOCOL.md, \"One child for a program's tests\")")


def loop_rule(values: Mapping[str, Any]) -> dict[str, Any]:
    """The loop-rule fields ``values`` (parsed arguments' ``vars``, or a run's options) give,
    as SandboxConfig keywords."""
    return {k: values[k] for k in LOOP_RULE if values.get(k) is not None}


def add_sandbox_flags(p: argparse.ArgumentParser) -> None:
    """The pool's flags of ``exec`` and ``validate``: workers, confinement, where."""
    p.add_argument("--workers", type=positive_int, default=None,
                   help="sandbox worker processes (default: the number of cores)")
    p.add_argument("--require-full-confinement", action="store_true",
                   help="refuse to run when a confinement mechanism is missing")
    p.add_argument("--no-confine", action="store_true",
                   help="run with no confinement at all (benchmarking only; never for untrusted code)")
    add_sandbox_choice(p)


def make_command_sandbox(args: argparse.Namespace, config: SandboxConfig | None = None) -> Sandbox:
    """The sandbox a command's arguments ask for (``cluster.factory.make_sandbox``), not started."""
    from ..cluster.factory import make_sandbox

    return make_sandbox(getattr(args, "sandbox", "local"), config,
                        ray_address=getattr(args, "ray_address", None))
