"""Errored episodes grouped by cause: what ``run`` prints after its leaderboard and what
``report`` shows of a run with errors (an all-errored run included), keys scrubbed."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

__all__ = ["error_summary", "errors_text", "render_errors"]


def error_summary(records: Sequence[object]) -> list[tuple[str, int, str]]:
    """Errored episodes grouped by cause: (cause, count, first message), most frequent first.

    The cause is the error's class and its message with numbers, quoted values and
    instance ids blanked, so that the same failure on 140 instances is one line.
    """
    from ..models.redact import redact
    from ..runlog.records import EpisodeRecord

    groups: dict[str, list[str]] = {}
    for rec in records:
        if isinstance(rec, EpisodeRecord) and rec.status == "error":
            message = redact(rec.error or "unknown error")  # keys never reach a screen
            cause = re.sub(r"\d+(\.\d+)?", "#", message.replace(rec.instance_id, "<instance>"))
            cause = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", cause)[:160]
            groups.setdefault(cause, []).append(message)
    ordered = sorted(groups.items(), key=lambda kv: -len(kv[1]))
    return [(cause, len(messages), messages[0]) for cause, messages in ordered]


def render_errors(errors: list[tuple[str, int, str]], stopped: list[str], out: Path) -> str:
    total = sum(count for _, count, _ in errors)
    lines = [f"\n{total} episode(s) ended in error, by cause:"]
    for _, count, first in errors:
        lines.append(f"  {count:5} x {first[:500]}")
    for spec in stopped:
        lines.append(f"  {spec}: stopped early by its circuit breaker (its first calls failed and none "
                     "answered), so its remaining episodes were not attempted")
    lines.append(f"records: {out / 'records.jsonl'} (episode records with \"status\": \"error\"); "
                 "exit status 1 (--allow-errors: 0)")
    return "\n".join(lines)


def errors_text(records: Sequence[object]) -> str:
    """``report``'s errors table: errored episodes by cause, with a count and the first
    message of each; "" when none errored."""
    errors = error_summary(records)
    if not errors:
        return ""
    total = sum(count for _, count, _ in errors)
    return "\n".join([f"{total} episode(s) ended in error, by cause:",
                      *(f"  {count:5} x {first[:500]}" for _, count, first in errors)])
