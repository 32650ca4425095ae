"""What every reported metric means, as text: the leaderboard's legend and
``pairbench list metrics``, both printed from the metric registry (:mod:`.registry`), so
they cannot drift apart from the numbers.
"""

from __future__ import annotations

from collections.abc import Iterable

from .registry import BY_NAME, METRICS

__all__ = ["legend_lines", "metrics_table"]


def legend_lines(columns: Iterable[str]) -> list[str]:
    """One line per known column: name, direction, meaning (under a text leaderboard)."""
    lines = []
    for col in columns:
        info = BY_NAME.get(col)
        if info is not None:
            lines.append(f"  {info.name:<10} {info.arrow} {info.meaning}")
    return lines


def metrics_table() -> str:
    """Every metric with its direction, formula and source (``pairbench list metrics``)."""
    return "\n".join(f"{m.name} ({m.better} is better; {m.unit})\n    {m.meaning}\n    {m.formula}\n"
                     f"    {m.source}" for m in METRICS)
