"""``pairbench export DIR --format parquet|csv|jsonl``: a run (or a ``--sweep`` folder)
as three tidy tables, ``turns``, ``episodes`` and ``metrics``, for pandas, polars or
DuckDB. The columns are :mod:`..report.tables`' (documented in ``docs/EXPORT.md``).
Parquet needs pyarrow (``pip install -e '.[parquet]'``); without ``--format`` the tables
are Parquet when pyarrow is installed, else CSV, and the command says which and why."""

from __future__ import annotations

import argparse
import csv
import os
import sys
from pathlib import Path
from typing import Any

import msgspec

from ..core.errors import ConfigError

__all__ = ["add_export_parser", "export_command"]


def add_export_parser(sub: Any) -> None:
    p = sub.add_parser("export", help="a run's records as tidy tables (Parquet, CSV, JSON Lines)",
                       description="Write turns, episodes and metrics tables of DIR (a run, or a --sweep "
                       "folder: every run under it, with its setting in a column).")
    p.add_argument("dir", metavar="DIR")
    p.add_argument("--format", choices=("parquet", "csv", "jsonl"), default=None,
                   help="default: parquet when pyarrow is installed (pip install -e '.[parquet]'), else csv")
    p.add_argument("--out", metavar="OUTDIR", help="where the tables go (default: DIR/export)")


def _pyarrow() -> tuple[Any, Any]:
    """pyarrow and pyarrow.parquet, or a ConfigError naming the extra that brings them."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError("--format parquet needs pyarrow: pip install -e '.[parquet]' "
                          "(or use --format csv / jsonl)") from None
    return pa, pq


def _write_parquet(path: Path, rows: list[dict[str, Any]], columns: tuple[tuple[str, str], ...]) -> None:
    pa, pq = _pyarrow()
    types = {"string": pa.string(), "int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_()}
    schema = pa.schema([(name, types[kind]) for name, kind in columns])
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(table, path)


def _write_csv(path: Path, rows: list[dict[str, Any]], columns: tuple[tuple[str, str], ...]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=[name for name, _ in columns])
        writer.writeheader()
        writer.writerows(rows)


def _write_jsonl(path: Path, rows: list[dict[str, Any]], columns: tuple[tuple[str, str], ...]) -> None:
    encoder = msgspec.json.Encoder()
    with open(path, "wb") as f:
        for row in rows:
            f.write(encoder.encode(row) + b"\n")


def _default_format() -> str:
    """Parquet when pyarrow can be imported, else CSV (which needs nothing)."""
    try:
        _pyarrow()
    except ConfigError:
        return "csv"
    return "parquet"


async def export_command(args: argparse.Namespace) -> int:
    from ..report.runs import load_run
    from ..report.tables import TABLES, export_tables

    root = Path(args.dir)
    loaded = load_run(root)  # ConfigError when there is no run here
    out = Path(args.out) if args.out else root / "export"
    if args.format is None:
        args.format = _default_format()
        print(f"format: {args.format} (" + ("pyarrow is installed; --format csv|jsonl for others)"
              if args.format == "parquet" else "pyarrow is not installed, so not parquet: "
              "pip install -e '.[parquet]' adds it; --format jsonl for JSON Lines)"), file=sys.stderr)
    write = {"parquet": _write_parquet, "csv": _write_csv, "jsonl": _write_jsonl}[args.format]
    if args.format == "parquet":
        _pyarrow()  # before any folder is made
    tables = export_tables((setting, run.all_records) for setting, run in loaded.runs())
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file of that name, a read-only place...
        raise ConfigError(f"--out {out}: cannot make the tables' folder: {exc.strerror}") from None
    for name, columns in TABLES.items():
        rows = tables[name]
        path = out / f"{name}.{args.format}"
        tmp = path.with_name(f".{path.name}.tmp")
        write(tmp, rows, columns)
        os.replace(tmp, path)
        print(f"{path}: {len(rows)} rows", file=sys.stderr)
    return 0
