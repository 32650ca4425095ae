"""One metric registry (:mod:`pairbench_async.report.registry`): every list of metrics the
reports use is derived from it, so a metric added or renamed there shows up everywhere."""

from __future__ import annotations

import pytest

from pairbench_async.report.glossary import legend_lines, metrics_table
from pairbench_async.report.leaderboard import LEADERBOARD_COLUMNS, Leaderboard, leaderboard_rows
from pairbench_async.report.metrics import METRIC_NAMES, ModelMetrics
from pairbench_async.report.ranking import HIGHER_IS_BETTER
from pairbench_async.report.registry import BY_NAME, METRICS, PERCENT_METRICS, metric
from pairbench_async.report.run_tables import COMPARISON, TABLE_III, leaderboard_table
from pairbench_async.report.sensitivity import TABLE_VII_METRICS

COUNTS = ("instances", "initially_failing", "fixed")


def test_entries_are_unique_and_well_formed() -> None:
    assert len(BY_NAME) == len(METRICS)
    for m in METRICS:
        assert m.better in ("higher", "lower") and m.unit in ("%", "0..1", "0..6", "turns"), m.name
        assert m.meaning and m.formula and m.source, m.name


def test_every_per_model_number_is_a_registered_metric_in_field_order() -> None:
    """ModelMetrics declares the JSON's fields; the registry must know each one (a new
    field without an entry would be missing from every table, the export and the legend)."""
    fields = ModelMetrics.__struct_fields__
    assert METRIC_NAMES == tuple(f for f in fields if f not in COUNTS)
    assert METRIC_NAMES[:3] == ("InitialFix", "TRS", "BRG") and METRIC_NAMES[-1] == "HCCShown"


def test_directions_columns_and_formats_come_from_the_registry() -> None:
    assert dict(HIGHER_IS_BETTER) == {n: BY_NAME[n].better == "higher" for n in METRIC_NAMES}
    assert [n for n, up in HIGHER_IS_BETTER.items() if not up] == ["TurnsToFix"]
    # the text leaderboard: every per-model metric but Table V's two rates, in JSON order
    assert LEADERBOARD_COLUMNS == tuple(n for n in METRIC_NAMES if n not in ("RepairRate", "PreservationRate"))
    header, _ = leaderboard_rows(Leaderboard(models={}, episodes=0, errored=0, unfinished=0))
    assert header == ["Model", *LEADERBOARD_COLUMNS]
    assert PERCENT_METRICS >= set(METRIC_NAMES) - {"HE", "TurnsToFix"}
    assert {"HE", "TurnsToFix"}.isdisjoint(PERCENT_METRICS)
    for names in (TABLE_III, COMPARISON, TABLE_VII_METRICS):
        assert set(names) <= set(METRIC_NAMES)


def test_the_pages_table_iii_takes_labels_and_groups_from_the_registry() -> None:
    table = leaderboard_table({"m": ModelMetrics(InitialFix=0.5, FinalFix=1.0, TurnsToFix=2.0)})
    assert table.header[1:-1] == [metric(m).header() for m in TABLE_III]
    assert table.header[1] == "Initial Fix (%) ↑" and "Turns to Fix ↓" in table.header
    assert [g for g, _ in table.groups[1:-1]] == ["Before feedback", "Interactive repair",
                                                  "After feedback / outcome"]
    assert sum(span for _, span in table.groups) == len(table.header)


def test_header_and_format() -> None:
    assert metric("HE").header() == "Hint Efficiency (0-6) ↑"
    assert metric("PMR").header("Prog. Mono.") == "Prog. Mono. (%) ↑"
    assert metric("Footrule").header() == "Footrule (0-1) ↓"  # no label: the name
    assert (metric("GC").format(0.125), metric("GC").format(0.125, 1)) == ("12.50", "12.5")
    assert (metric("HE").format(4.5, 1), metric("TurnsToFix").format(None)) == ("4.50", "-")
    with pytest.raises(ValueError, match="unknown metric 'Speed'"):
        metric("Speed")


def test_the_legend_and_the_listing_cover_the_registry() -> None:
    assert len(legend_lines(LEADERBOARD_COLUMNS)) == len(LEADERBOARD_COLUMNS)
    assert legend_lines(["TurnsToFix", "not a metric"]) == [
        f"  TurnsToFix ↓ {BY_NAME['TurnsToFix'].meaning}"]
    listing = metrics_table()
    assert all(f"{m.name} ({m.better} is better; {m.unit})" in listing for m in METRICS)
