"""``python -m pairbench_async validate``: check a dataset in the sandbox and print the verdicts."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import msgspec

from ..datasets.files import load_dataset
from ..datasets.validate import validate_instances
from .args import add_sandbox_flags, rate_range

__all__ = ["add_validate_parser", "validate_command"]


def add_validate_parser(sub: Any) -> None:
    va = sub.add_parser("validate", help="check a dataset: references pass, buggy pass rates",
                        description="Run every reference (must pass all its tests) and every buggy "
                        "program (its pass rate is reported) in the sandbox. Default dataset: the "
                        "bundled fixtures.")
    va.add_argument("dataset", nargs="*", metavar="DATASET", help="JSON Lines instance files")
    va.add_argument("--json", action="store_true", help="print a JSON summary")
    va.add_argument("--verbose", action="store_true", help="with --json: include every instance")
    va.add_argument("--skip-invalid", action="store_true",
                    help="skip (and count) malformed lines instead of stopping at the first")
    va.add_argument("--pass-rate", type=rate_range, default=(0.10, 0.55), metavar="LO:HI",
                    help="expected buggy pass-rate range (outside it: a warning)")
    add_sandbox_flags(va)


async def validate_command(args: argparse.Namespace) -> int:
    from ..sandbox.config import SandboxConfig  # the sandbox only when needed
    from .args import make_command_sandbox

    read = load_dataset(args.dataset or None, skip_invalid=args.skip_invalid)
    lo, hi = args.pass_rate
    config = SandboxConfig(workers=args.workers, confine=not args.no_confine,
                           require_full=args.require_full_confinement)
    sandbox = make_command_sandbox(args, config)
    try:
        await sandbox.start()
        summary = await validate_instances(read.instances, sandbox, pass_rate=(lo, hi),
                                           skipped=read.skipped)
    finally:
        await sandbox.aclose()
    if args.json:
        data = msgspec.to_builtins(summary)
        if not args.verbose:
            data.pop("checks")
        sys.stdout.write(msgspec.json.encode(data).decode() + "\n")
    else:
        for c in summary.checks:
            flag = "FAIL" if c.problems else ("warn" if c.warnings else "ok")
            print(f"{flag:4}  {c.id:45} tests={c.tests:4}  buggy pass rate={c.buggy_pass_rate:.2f}  "
                  f"fails as: {', '.join(c.buggy_failure_kinds) or '-'}")
            for p in (*c.problems, *c.warnings):
                print(f"        {p}")
        for s in read.skipped:
            print(f"skipped: {s}")
        print(f"{summary.instances} instances, {summary.problems} problems; tests per instance "
              f"min {summary.tests_min}, median {summary.tests_median:g}; buggy pass rate "
              f"{summary.buggy_pass_rate_min:.2f}..{summary.buggy_pass_rate_max:.2f}")
    return 1 if summary.problems else 0
