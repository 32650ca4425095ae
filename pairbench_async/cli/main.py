"""The command line: argparse in, exit code out.

Subcommands import what they need lazily, so that ``exec`` (which is timed from
its own start) does not pay for HTTP clients or progress bars.

Exit codes: 0 success (whatever the verdicts), 1 a finding the command exists to
report (e.g. ``validate`` found problems, episodes ended in error), 2 bad arguments,
input files or a record store that cannot be read or resumed, 3 the sandbox could
not run, 4 a model endpoint failed outside any episode (an episode's failure is
data: it ends that episode), 5 the run folder could not be written (a full disk, a
read-only file system, no permission: the cause is named, every record written before
it is kept, ``--resume`` continues), 6 the run folder is being written by another
process (its lock is held: the holder is named), 130 interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from typing import Any, cast

from ..core.errors import (
    ClientError,
    ConfigError,
    FolderLocked,
    FolderWriteError,
    PairbenchError,
    SandboxError,
    StoreError,
)

__all__ = ["main"]

EXIT_OK, EXIT_FINDING, EXIT_USAGE, EXIT_SANDBOX, EXIT_MODEL, EXIT_WRITE, EXIT_BUSY = 0, 1, 2, 3, 4, 5, 6


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


class _ExactFlagsParser(argparse.ArgumentParser):
    """A parser that refuses abbreviated flags (``--concur`` for ``--concurrency``): a
    typo must be an error, not a silently different meaning. ``add_parser`` builds the
    subcommands' parsers with this class too, since they do not inherit ``allow_abbrev``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        """Refuse what is left over here, in the command's own parser, with its usage and the
        flag an abbreviation stood for: left to the top parser, ``--concur`` was only
        "pairbench: error: unrecognized arguments" under the list of commands."""
        parsed, extras = super().parse_known_args(args, namespace)
        if extras and not self._subparsers:
            meant = [(given, " or ".join(full)) for given, full in
                     ((x, self._spelled_out(x)) for x in extras) if full]
            hint = "; ".join(f"did you mean {full}?" if len(meant) == 1
                             else f"{given}: did you mean {full}?" for given, full in meant)
            self.error(f"unrecognized arguments: {' '.join(extras)}"
                       + (f" (flags are not abbreviated: {hint})" if meant else ""))
        return parsed, extras

    def _spelled_out(self, given: str) -> list[str]:
        """The flags ``given`` (``--flag`` or ``--flag=value``) abbreviates."""
        flag = given.split("=", 1)[0]
        if not flag.startswith("--") or len(flag) < 3:
            return []
        return sorted(o for o in self._option_string_actions if o.startswith(flag) and o != flag)


def _parser() -> argparse.ArgumentParser:
    parser = _ExactFlagsParser(
        prog=_prog(),
        description="PAIR-BENCH: how well do LLMs improve wrong code under controlled feedback?",
        epilog="Exit status: 0 success; 1 a finding (episodes ended in error, validate found "
               "problems); 2 bad arguments, input files or records; 3 the sandbox could not run; "
               "4 a model endpoint failed outside an episode; 5 the run folder could not be written "
               "(full disk, read-only, no permission: records kept, --resume continues); 6 the run "
               "folder is being written by another process (its lock's holder is named); 130 interrupted.",
    )
    from ..core.version import __version__

    parser.add_argument("--version", action="version", version=f"pairbench_async {__version__}")
    # the subcommands' add_* functions take the plain type: they only call add_parser
    sub = cast("argparse._SubParsersAction[argparse.ArgumentParser]",
               parser.add_subparsers(dest="command", parser_class=_ExactFlagsParser))

    from .run import add_run_arguments

    run = sub.add_parser("run", help="run a sweep (the default command)",
                         description="Run PAIR-BENCH episodes and print the leaderboard. With no "
                         "arguments: the bundled fixtures, candidates sim:0.3 and sim:0.8, feedback rules.")
    add_run_arguments(run)
    rep = sub.add_parser("report", help="the leaderboard of a run directory (text, JSON, HTML, Markdown)",
                         description="Tables and figures of a run, from its records.")
    from .report import add_report_arguments

    add_report_arguments(rep)

    from .exec import add_exec_parser

    add_exec_parser(sub)
    from .validate import add_validate_parser

    add_validate_parser(sub)
    from .listing import add_list_parsers

    add_list_parsers(sub)
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
    except FolderLocked as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BUSY
    except FolderWriteError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_WRITE
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except ClientError as exc:
        print(f"model error: {exc}", file=sys.stderr)
        return EXIT_MODEL
    except PairbenchError as exc:  # a kind of error added later and not mapped above
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away (`report DIR | head`): not an error of ours; keep the
        # interpreter's flush at exit from raising again on the dead pipe
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    parser.error(f"unknown command {args.command!r}")
    return EXIT_USAGE
