"""The visual report's building blocks: sections of tables whose cells carry their marks.

HTML and Markdown (:mod:`.html`) print the same :class:`Section` lists, so both show the
same thing. Here are the cell, table and section types, how a metric value is shown
(:func:`fmt`, from the metric registry), how best and worst are chosen (:func:`extremes`)
and the model order the tables share. What goes on the page: :mod:`.sections` (the
composer) over :mod:`.run_tables`, :mod:`.paper_sections` and :mod:`.sweep_sections`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal

import msgspec

from .model import Report
from .registry import metric

__all__ = [
    "LEVELS",
    "Cell",
    "Mark",
    "Section",
    "Table",
    "extremes",
    "fmt",
    "model_order",
    "model_protocols",
    "statistic",
]

#: best/worst: Table III's top and bottom three; top1..top3: Table VII's places per setting
Mark = Literal["", "best", "worst", "top1", "top2", "top3"]
LEVELS: Final = ("L1", "L2", "L3", "L4", "L5", "L6", "unresolved")


class Cell(msgspec.Struct, frozen=True):
    """One table cell: plain text (escaped on output), a best/worst mark, a superscript."""

    text: str
    mark: Mark = ""
    sup: str = ""


class Table(msgspec.Struct, frozen=True, kw_only=True):
    """A table both renderers print; ``groups`` are (label, span) header groups."""

    header: list[str]
    rows: list[list[Cell]]
    groups: list[tuple[str, int]] = []
    caption: str = ""
    #: how many leading columns hold text (left-aligned); the rest are numbers
    left: int = 1


class Section(msgspec.Struct, frozen=True, kw_only=True):
    """A titled part of the page: an intro, an optional figure, tables, notes."""

    id: str
    title: str
    intro: str = ""
    figure: str | None = None
    figure_caption: str = ""
    tables: list[Table] = []
    notes: list[str] = []


def fmt(name: str, value: float | None) -> str:
    """A metric for display: rates in % and HE/turns with two decimals; ``-`` if undefined."""
    return metric(name).format(value)


def extremes(values: Mapping[str, float | None], *,
             higher_is_better: bool = True, top: int = 3) -> dict[str, Mark]:
    """``{key: "best" | "worst" | ""}``: the ``top`` best and ``top`` worst defined values.

    Table III of the paper marks the top three and the bottom three models per metric
    (eight models). With fewer models the marks shrink to ``len // 2`` on each side so
    that they never meet: three models get one best and one worst. A value tied with
    the last marked one shares its mark; with fewer than two defined values, or all of
    them equal, nothing is marked (there is nothing to tell apart).
    """
    defined = sorted((v for v in values.values() if v is not None), reverse=higher_is_better)
    marks: dict[str, Mark] = dict.fromkeys(values, "")
    if len(defined) < 2 or defined[0] == defined[-1]:
        return marks
    k = max(1, min(top, len(defined) // 2))
    best_edge, worst_edge = defined[k - 1], defined[-k]

    def better_or_equal(a: float, b: float) -> bool:
        return a >= b if higher_is_better else a <= b

    for key, v in values.items():
        if v is None:
            continue
        if better_or_equal(v, best_edge):
            marks[key] = "best"
        elif better_or_equal(worst_edge, v):
            marks[key] = "worst"
    return marks


def model_order(report: Report) -> list[str]:
    return sorted(report.average_rank, key=lambda m: (report.average_rank[m], m))


def statistic(value: float | None) -> str:
    """A rank statistic (Kendall τ, footrule) to three decimals; '-' when undefined."""
    return "-" if value is None else f"{value:.3f}"


def model_protocols(report: Report) -> list[tuple[str, str]]:
    """(model, protocol) of every group, models in name order, protocols in report order."""
    models = sorted({m for v in report.views.values() for m in v.models})
    return [(m, p) for m in models for p in report.protocols if m in report.views[p].models]
