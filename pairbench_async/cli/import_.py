"""``python -m pairbench_async import FORMAT SRC... --out OUT.jsonl``: the importers' command.

Kept out of ``cli/main.py``, and importing the importers only when the command runs, so
that the other subcommands do not pay for them. ``cli/main.py`` wires it with
:func:`add_import_parser` and :func:`run_import`.

Exit codes: 0 imported (rows that make no instance are reported, not an error);
2 bad arguments, an unreadable source, or malformed rows without ``--skip-invalid``
(the other rows are imported and written all the same, and every malformed row is
listed with its file, line and field). A sandbox failure propagates as
:class:`~pairbench_async.core.errors.SandboxError` (``cli.main`` exits 3).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import msgspec

from ..core.errors import ConfigError
from .args import non_negative_int as _non_negative_int
from .args import positive_int as _positive_int

if TYPE_CHECKING:
    from ..datasets.importers import ImportOptions

__all__ = [
    "FORMAT_NAMES",
    "add_codeforces_arguments",
    "add_import_parser",
    "options_from_args",
    "run_import",
]

EXIT_OK, EXIT_USAGE = 0, 2

#: The importers' formats (``importers.FORMATS``, which a test keeps equal to this).
FORMAT_NAMES = ("feedbackeval", "codeforces", "humaneval", "jsonl")
_FORMAT_HELP = (
    "feedbackeval: FeedbackEval's HumanEval_feedback.jsonl, with --humaneval; "
    "codeforces: MatrixStudio/Codeforces-Python-Submissions rows (parquet or JSON Lines); "
    "humaneval: HumanEval-style JSON Lines (generation from a blank program); "
    "jsonl: the native format (validate and normalise)"
)


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def _bounds(kind: Callable[[str], Any]) -> Callable[[str], tuple[Any, Any]]:
    """A ``LOW:HIGH`` parser (inclusive bounds)."""

    def parse(text: str) -> tuple[Any, Any]:
        low, sep, high = text.partition(":")
        if not sep:
            raise argparse.ArgumentTypeError(f"expected LOW:HIGH, got {text!r}")
        try:
            lo, hi = kind(low), kind(high)
        except ValueError:
            raise argparse.ArgumentTypeError(f"bad bounds {text!r}") from None
        if lo > hi:
            raise argparse.ArgumentTypeError(f"low bound above high bound: {text!r}")
        return lo, hi

    return parse


def add_import_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``import`` subcommand."""
    p = subparsers.add_parser(
        "import", help="convert a public dataset into instances (JSON Lines)",
        description=f"Import SRC files of FORMAT into OUT. Formats: {_FORMAT_HELP}. Rows that "
        "make no instance are counted per reason in the printed summary.")
    p.add_argument("format", metavar="FORMAT", choices=FORMAT_NAMES, help=", ".join(FORMAT_NAMES))
    p.add_argument("sources", metavar="SRC", nargs="+", help="source files (.jsonl, .jsonl.gz, "
                   ".parquet for codeforces)")
    p.add_argument("--out", required=True, metavar="OUT.jsonl", help="instances file (written "
                   "atomically)")
    p.add_argument("--humaneval", metavar="HumanEval.jsonl",
                   help="feedbackeval: HumanEval itself (prompt, canonical solution, entry point)")
    add_codeforces_arguments(p)
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def add_codeforces_arguments(p: argparse.ArgumentParser) -> None:
    """The codeforces filters, ``--skip-invalid`` and ``--workers`` (``import``, ``build-dataset``)."""
    filters = p.add_argument_group("codeforces filters (off unless given)")
    filters.add_argument("--min-tests", type=_non_negative_int, metavar="N",
                         help="at least N hidden tests after truncated ones are dropped")
    filters.add_argument("--pass-rate", type=_bounds(float), metavar="LOW:HIGH",
                         help="buggy program's pass rate, measured in the sandbox (inclusive)")
    filters.add_argument("--loc", type=_bounds(int), metavar="LOW:HIGH",
                         help="non-blank lines of the buggy program (inclusive)")
    filters.add_argument("--min-complexity", type=_number, metavar="C",
                         help="cyclomatic complexity of the buggy program (needs radon)")
    filters.add_argument("--paper-filters", action="store_true",
                         help="PAIR-BENCH's filters: --min-tests 101 (more than 100) --pass-rate 0.10:0.55 "
                         "--loc 15:80 --min-complexity 8 (explicit flags win)")
    p.add_argument("--skip-invalid", action="store_true",
                   help="accept malformed rows (still reported) and exit 0")
    p.add_argument("--workers", type=_positive_int, default=None,
                   help="sandbox worker processes (default: the number of cores)")
    limits = p.add_argument_group(
        "time limits (humaneval, feedbackeval; jsonl with --derive-limits): each test's CPU "
        "limit is min(--time-limit, max(--time-floor, --time-factor x the reference's CPU time "
        "on it)), the reference timed --time-runs times in the sandbox (median); the limit and "
        "the time are written into each test, the rule into the instance's meta")
    limits.add_argument("--derive-limits", action=argparse.BooleanOptionalAction, default=None,
                        help="derive per-test limits (default: yes for humaneval and "
                        "feedbackeval, no for jsonl; codeforces keeps each problem's limit)")
    limits.add_argument("--time-limit", type=_number, default=3.0, metavar="S",
                        help="CPU seconds per test: the cap of derived limits, or every "
                        "test's limit with --no-derive-limits (default 3; jsonl: each "
                        "instance's own limit is the cap)")
    limits.add_argument("--time-floor", type=_number, default=1.0, metavar="S",
                        help="the least derived limit, in CPU seconds (default 1, as EvalPlus)")
    limits.add_argument("--time-factor", type=_number, default=4.0, metavar="F",
                        help="times the reference's CPU time (default 4, as EvalPlus)")
    limits.add_argument("--time-runs", type=_positive_int, default=3, metavar="N",
                        help="timed runs of the reference per test; the median counts "
                        "(default 3)")


def options_from_args(args: argparse.Namespace) -> ImportOptions:
    """The :class:`ImportOptions` of parsed ``import`` (or ``build-dataset``) arguments."""
    from ..datasets.importers import PAPER_FILTERS, ImportOptions

    filters: dict[str, Any] = dict(PAPER_FILTERS) if args.paper_filters else {}
    for name in ("min_tests", "pass_rate", "loc", "min_complexity"):
        if getattr(args, name) is not None:
            filters[name] = getattr(args, name)
    timing: dict[str, Any] = {}
    for name in ("derive_limits", "time_limit", "time_floor", "time_factor", "time_runs"):
        if getattr(args, name, None) is not None:  # build-dataset has none of these
            timing[name] = getattr(args, name)
    return ImportOptions(humaneval=getattr(args, "humaneval", None), workers=args.workers,
                         skip_invalid=args.skip_invalid, **filters, **timing)


async def run_import(args: argparse.Namespace) -> int:
    """Run ``import``; print the summary; the exit code of the module docstring."""
    from ..datasets.importers import import_dataset

    try:
        report = await import_dataset(args.format, args.sources, args.out, options_from_args(args))
    except ConfigError as exc:  # DatasetError included: a source that cannot be read
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.json:
        print(msgspec.json.encode(report).decode())
    else:
        print(report.summary())
    if report.malformed and not args.skip_invalid:
        print(f"error: {report.malformed} malformed row(s), listed above; the other rows were "
              f"imported into {args.out}. Fix them, or pass --skip-invalid to accept this.",
              file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK
