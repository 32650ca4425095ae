"""``python -m pairbench_async build-dataset SRC... --out OUT.jsonl --model SPEC``.

Argparse wiring of :mod:`pairbench_async.datasets.build`, kept apart so that other commands
do not import it. The codeforces filters, ``--skip-invalid`` and ``--workers`` are
``import codeforces``' own flags (:func:`~pairbench_async.cli.import_.add_codeforces_arguments`).

Exit codes: 0 built (submissions that make no instance are reported, not an error);
2 bad arguments, an unreadable source, a work directory that cannot be resumed, or
malformed rows without ``--skip-invalid`` (the output is written all the same);
3 the sandbox failed (it could not start, or a submission hit a sandbox fault: the
output holds the rest, and ``--resume`` retries those submissions).
"""

from __future__ import annotations

import argparse
import sys

import msgspec

from ..core.errors import ConfigError, StoreError
from .args import add_sandbox_choice, make_command_sandbox
from .args import positive_int as _positive_int
from .import_ import add_codeforces_arguments, options_from_args

__all__ = ["add_build_parser", "run_build"]

EXIT_OK, EXIT_USAGE, EXIT_SANDBOX = 0, 2, 3


def add_build_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``build-dataset`` subcommand."""
    p = subparsers.add_parser(
        "build-dataset", help="build instances from wrong Codeforces submissions by LLM repair",
        description="Read MatrixStudio/Codeforces-Python-Submissions rows (parquet or JSON "
        "Lines); for every WRONG_ANSWER submission that passes the filters, repair it with "
        "--model, failing tests as feedback, until every test passes (at most --turns turns); "
        "the repaired program becomes the reference. Resumable (--resume).")
    p.add_argument("sources", metavar="SRC", nargs="+", help="source files (.parquet, .jsonl)")
    p.add_argument("--out", required=True, metavar="OUT.jsonl",
                   help="instances file (written atomically at the end)")
    p.add_argument("--model", required=True, metavar="SPEC",
                   help="openai:MODEL[@URL], or sim:SKILL (offline stand-in that aims at the "
                   "problem's most similar OK submission)")
    p.add_argument("--turns", type=_positive_int, default=5, metavar="N",
                   help="repair turns per submission (default 5)")
    p.add_argument("--concurrency", type=_positive_int, default=16, metavar="N",
                   help="submissions in flight (default 16)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the model calls")
    p.add_argument("--config", metavar="FILE", help="TOML file with per-model endpoint settings")
    p.add_argument("--prefer-ok", action="store_true",
                   help="use a validated OK submission as the reference when there is one "
                   "(the paper always repairs)")
    p.add_argument("--work", metavar="DIR",
                   help="work directory: manifest and repair log (default: OUT.jsonl.work)")
    p.add_argument("--resume", action="store_true",
                   help="continue the build recorded in the work directory")
    add_codeforces_arguments(p)
    add_sandbox_choice(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")


async def run_build(args: argparse.Namespace) -> int:
    """Run ``build-dataset``; print the summary; the exit code of the module docstring."""
    from ..datasets.build import build_dataset
    from ..datasets.build_repair import SANDBOX_FAULT
    from ..datasets.build_workdir import BuildParams

    params = BuildParams(sources=list(args.sources), out=args.out, model=args.model,
                         turns=args.turns, concurrency=args.concurrency, seed=args.seed,
                         prefer_ok=args.prefer_ok, resume=args.resume, work=args.work,
                         config=args.config, options=options_from_args(args))
    from ..sandbox.config import SandboxConfig

    sandbox = make_command_sandbox(args, SandboxConfig(workers=params.options.workers))
    try:
        report = await build_dataset(params, pool=sandbox)  # started only when there is work
    except (ConfigError, StoreError) as exc:  # ResumeMismatch included
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        await sandbox.aclose()
    print(msgspec.json.encode(report).decode() if args.json else report.summary())
    if report.skipped.get(SANDBOX_FAULT):
        print(f"sandbox error: {report.skipped[SANDBOX_FAULT]} submission(s) hit a sandbox "
              f"fault (listed above); --resume retries them.", file=sys.stderr)
        return EXIT_SANDBOX
    if report.malformed and not args.skip_invalid:
        print(f"error: {report.malformed} malformed row(s), listed above; the other rows were "
              f"built into {args.out}. Fix them, or pass --skip-invalid to accept this.",
              file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK
