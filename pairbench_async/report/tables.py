"""A sweep as tidy tables: one row per turn, one per episode, one per metric value.

What ``pairbench export`` writes, so that pandas, polars and DuckDB users read a run
in one line. Pure: records in, rows (plain dicts with a fixed column order) out; the
schema below is the documented contract (``docs/EXPORT.md``), and every table carries
``setting`` (the ``--sweep`` subdirectory, ``""`` for a plain run).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..runlog.records import EpisodeRecord, Record, TurnRecord
from .leaderboard import leaderboard
from .metrics import METRIC_NAMES

__all__ = ["EPISODE_COLUMNS", "METRIC_COLUMNS", "TABLES", "TURN_COLUMNS", "episode_rows", "export_tables",
           "metric_rows", "turn_rows"]

#: (name, type) of every column; types are those of Parquet/Arrow: string, int64, float64, bool
TURN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("setting", "string"), ("run_id", "string"), ("episode_id", "string"), ("instance_id", "string"),
    ("model", "string"), ("protocol", "string"), ("run", "int64"), ("seed", "int64"), ("turn", "int64"),
    ("pass_rate", "float64"), ("passed", "int64"), ("failed", "int64"), ("code_found", "bool"),
    ("protected", "bool"), ("hint_level", "int64"), ("hint", "string"), ("hint_attempts", "int64"),
    ("hint_rejected", "int64"), ("hint_fallback", "bool"), ("target_scenario", "string"),
    ("target_tests", "int64"), ("target_passed", "int64"), ("verdicts", "string"), ("calls", "int64"),
    ("prompt_tokens", "int64"), ("completion_tokens", "int64"), ("sandbox_ms", "float64"),
)
EPISODE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("setting", "string"), ("run_id", "string"), ("episode_id", "string"), ("instance_id", "string"),
    ("model", "string"), ("protocol", "string"), ("run", "int64"), ("seed", "int64"), ("status", "string"),
    ("turns", "int64"), ("stop_reason", "string"), ("initial_pass_rate", "float64"),
    ("final_pass_rate", "float64"), ("best_pass_rate", "float64"), ("error", "string"),
)
METRIC_COLUMNS: tuple[tuple[str, str], ...] = (
    ("setting", "string"), ("model", "string"), ("protocol", "string"), ("metric", "string"),
    ("value", "float64"), ("instances", "int64"),
)


#: the tables ``pairbench export`` writes, by name, with their columns
TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "turns": TURN_COLUMNS, "episodes": EPISODE_COLUMNS, "metrics": METRIC_COLUMNS}


def export_tables(runs: Iterable[tuple[str, Sequence[Record]]]) -> dict[str, list[dict[str, Any]]]:
    """The rows of every table in :data:`TABLES` for (setting, records) pairs, e.g.
    ``LoadedRun.runs()`` with each run's ``all_records`` (every record: errored and
    unfinished episodes are rows too; the metrics are those of the finished episodes)."""
    tables: dict[str, list[dict[str, Any]]] = {name: [] for name in TABLES}
    for setting, records in runs:
        tables["turns"] += turn_rows(records, setting)
        tables["episodes"] += episode_rows(records, setting)
        tables["metrics"] += metric_rows(records, setting)
    return tables


def turn_rows(records: Iterable[Record], setting: str = "") -> list[dict[str, Any]]:
    rows = []
    for r in records:
        if not isinstance(r, TurnRecord):
            continue
        target = r.target
        attempts = r.hint.attempts if r.hint else []
        rows.append({
            "setting": setting, "run_id": r.run_id, "episode_id": r.episode_id, "instance_id": r.instance_id,
            "model": r.model, "protocol": r.protocol, "run": r.run, "seed": r.seed, "turn": r.turn,
            "pass_rate": r.pass_rate, "passed": len(r.passed), "failed": len(r.failed),
            "code_found": r.code_found, "protected": r.protected, "hint_level": r.hint_level,
            "hint": r.hint.text if r.hint else None, "hint_attempts": len(attempts),
            "hint_rejected": sum(1 for a in attempts if a.reasons),
            "hint_fallback": r.hint.fallback if r.hint else None,
            "target_scenario": target.scenario_id if target else None,
            "target_tests": len(target.tests) if target else None,
            "target_passed": len(set(target.tests) & set(r.passed)) if target else None,
            "verdicts": ",".join(f"{k}={v}" for k, v in sorted(r.verdicts.items())),
            "calls": len(r.calls),
            "prompt_tokens": sum(c.usage.prompt_tokens for c in r.calls),
            "completion_tokens": sum(c.usage.completion_tokens for c in r.calls),
            "sandbox_ms": r.sandbox_ms,
        })
    return rows


def episode_rows(records: Iterable[Record], setting: str = "") -> list[dict[str, Any]]:
    return [{
        "setting": setting, "run_id": r.run_id, "episode_id": r.episode_id, "instance_id": r.instance_id,
        "model": r.model, "protocol": r.protocol, "run": r.run, "seed": r.seed, "status": r.status,
        "turns": r.turns, "stop_reason": r.stop_reason, "initial_pass_rate": r.initial_pass_rate,
        "final_pass_rate": r.final_pass_rate, "best_pass_rate": r.best_pass_rate, "error": r.error,
    } for r in records if isinstance(r, EpisodeRecord)]


def metric_rows(records: Sequence[Record], setting: str = "") -> list[dict[str, Any]]:
    """Every metric of every (model, protocol) group, long format; undefined values left out."""
    board = leaderboard(records)
    protocols = {r.protocol for r in records}
    only = protocols.pop() if len(protocols) == 1 else ""
    rows = []
    for key, m in sorted(board.models.items()):
        model, _, protocol = key.rpartition("|") if "|" in key else (key, "", only)
        for name in METRIC_NAMES:
            value = getattr(m, name)
            if value is not None:
                rows.append({"setting": setting, "model": model, "protocol": protocol, "metric": name,
                             "value": float(value), "instances": m.instances})
    return rows
