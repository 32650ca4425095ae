"""The command line: argparse in, exit code out.

Subcommands import what they need lazily, so that ``exec`` (which is timed from
its own start) does not pay for HTTP clients or progress bars.

Exit codes: 0 success (whatever the verdicts), 1 a finding the command exists to
report (e.g. ``validate`` found problems), 2 bad arguments or input files,
3 the sandbox could not run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence

from ..core.errors import ConfigError, PairbenchError, SandboxError, StoreError
from .args import add_sandbox_choice, non_negative_float, rate_range
from .args import positive_float as _positive_float
from .args import positive_int as _positive_int

__all__ = ["main"]

EXIT_OK, EXIT_FINDING, EXIT_USAGE, EXIT_SANDBOX = 0, 1, 2, 3


def _prog() -> str:
    """``pairbench`` when started as the console script, else the module form."""
    return "pairbench" if os.path.basename(sys.argv[0]) == "pairbench" else "python -m pairbench_async"


def _configure_logging(verbose: int, quiet: bool) -> None:
    """Warnings by default (a model stopped by its circuit breaker), retries and
    errored episodes with -v, debug with -vv, errors only with -q."""
    import logging

    level = logging.ERROR if quiet else {0: logging.WARNING, 1: logging.INFO}.get(verbose, logging.DEBUG)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("pairbench_async")
    logger.handlers[:] = [handler]
    logger.setLevel(level)
    logger.propagate = False


def _add_sandbox_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workers", type=_positive_int, default=None,
                   help="sandbox worker processes (default: the number of cores)")
    p.add_argument("--require-full-confinement", action="store_true",
                   help="refuse to run when a confinement mechanism is missing")
    p.add_argument("--no-confine", action="store_true",
                   help="run with no confinement at all (benchmarking only; never for untrusted code)")
    add_sandbox_choice(p)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=_prog(),
        description="PAIR-BENCH: how well do LLMs improve wrong code under controlled feedback?",
        epilog="Exit status: 0 success; 1 a finding (episodes ended in error, validate found "
               "problems); 2 bad arguments or input files; 3 the sandbox could not run; 130 interrupted.",
    )
    from ..core.version import __version__

    parser.add_argument("--version", action="version", version=f"pairbench_async {__version__}")
    sub = parser.add_subparsers(dest="command")

    from .run import add_run_arguments

    run = sub.add_parser("run", help="run a sweep (the default command)",
                         description="Run PAIR-BENCH episodes and print the leaderboard. With no "
                         "arguments: the bundled fixtures, candidates sim:0.3 and sim:0.8, feedback rules.")
    add_run_arguments(run)
    rep = sub.add_parser("report", help="the leaderboard of a run directory (text, JSON, HTML, Markdown)",
                         description="Tables and figures of a run, from its records.")
    from .report import add_report_arguments

    add_report_arguments(rep)

    ex = sub.add_parser("exec", help="run one program on a tests file in the sandbox",
                        description="Run PROGRAM on every test of TESTS (JSON Lines) in the "
                        "sandbox; print one JSON object per test, in test order.")
    ex.add_argument("program", metavar="PROGRAM", help="Python source file")
    ex.add_argument("--tests", required=True, metavar="TESTS.jsonl",
                    help='stdio {"id","input","output"} or call {"id","args","kwargs","expected"}')
    ex.add_argument("--time-limit", type=_positive_float, default=2.0, metavar="SECONDS",
                    help="CPU seconds per test (default 2)")
    ex.add_argument("--wall-limit", type=_positive_float, default=None, metavar="SECONDS",
                    help="wall-clock seconds per test (default 3 x time limit + 1)")
    ex.add_argument("--memory-limit", type=_positive_int, default=256, metavar="MB",
                    help="memory budget in MB (default 256)")
    ex.add_argument("--output-limit", type=_positive_int, default=8 * 1024 * 1024, metavar="BYTES",
                    help="stdout bytes kept; more is OLE (default 8 MiB)")
    ex.add_argument("--entry", metavar="NAME", help="entry point for function-call tests")
    ex.add_argument("--trace", action="store_true",
                    help="record the executed lines of the program (reference traces)")
    ex.add_argument("--checker", choices=("tokens", "exact"), default="tokens",
                    help="output comparison (default: tokens, numbers within 1e-8)")
    ex.add_argument("--float-tol", type=non_negative_float, default=1e-8, metavar="TOL",
                    help="absolute and relative tolerance for numeric tokens (default 1e-8)")
    _add_sandbox_flags(ex)

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
    _add_sandbox_flags(va)

    ls = sub.add_parser("list", help="what is available: protocols, metrics, datasets",
                        description="List the protocols (with their properties and sources), the "
                        "metrics (formula, direction, source) or the datasets (bundled fixtures and "
                        "importable formats).")
    ls.add_argument("what", choices=("protocols", "metrics", "datasets"))
    sub.add_parser("metrics", help="every metric with its direction, formula and source (= list metrics)",
                   description="Every metric the reports show: name, direction, meaning, formula, source.")

    from .export import add_export_parser

    add_export_parser(sub)
    from .import_ import add_import_parser

    add_import_parser(sub)
    from .build_dataset import add_build_parser

    add_build_parser(sub)
    from .validate_hints import add_validate_hints_parser

    add_validate_hints_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m pairbench_async``; returns the exit code."""
    parser = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = {"run", "report", "exec", "validate", "import", "build-dataset", "list", "export", "metrics",
                "validate-hints"}
    if not argv or (argv[0] not in commands and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "run")  # `python -m pairbench_async --concurrency 256` is a run
    args = parser.parse_args(argv)
    _configure_logging(getattr(args, "verbose", 0), getattr(args, "quiet", False))
    try:
        if args.command == "exec":
            from .exec import exec_command

            return asyncio.run(exec_command(args))
        if args.command == "run":
            from .run import run_command, run_loop

            return run_loop(run_command(args))
        if args.command == "report":
            from .report import report_command

            return asyncio.run(report_command(args))
        if args.command == "import":
            from .import_ import run_import

            return asyncio.run(run_import(args))
        if args.command == "build-dataset":
            from .build_dataset import run_build

            return asyncio.run(run_build(args))
        if args.command == "export":
            from .export import export_command

            return asyncio.run(export_command(args))
        if args.command == "metrics":
            from .listing import list_command

            return list_command("metrics")
        if args.command == "list":
            from .listing import list_command

            return list_command(args.what)
        if args.command == "validate":
            from .validate import validate_command

            return asyncio.run(validate_command(args))
        if args.command == "validate-hints":
            from .validate_hints import validate_hints_command

            return asyncio.run(validate_hints_command(args))
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SandboxError as exc:
        print(f"sandbox error: {exc}", file=sys.stderr)
        return EXIT_SANDBOX
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except PairbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_SANDBOX
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away (`report DIR | head`): not an error of ours; keep the
        # interpreter's flush at exit from raising again on the dead pipe
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    parser.error(f"unknown command {args.command!r}")
    return EXIT_USAGE
