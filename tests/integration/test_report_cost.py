"""Cost end to end: a real run (sim:0.8 + rules, two fixture instances, the real sandbox),
then ``report --config`` prices its recorded usages in JSON, text, HTML and Markdown."""

from __future__ import annotations

import argparse
from pathlib import Path

import msgspec
import pytest

from pairbench_async.cli.report import add_report_arguments, report_command
from pairbench_async.core.errors import ConfigError
from pairbench_async.report.leaderboard import leaderboard, leaderboard_json
from pairbench_async.runlog.records import TurnRecord
from pairbench_async.runlog.store import read_records
from pairbench_async.runner.evaluator import RunConfig
from tests.integration.sweeps import offline_sweep
from tests.integration.test_html_report import _assert_not_blank, _load_in_chromium

#: per million tokens: (prompt, completion)
SIM_PRICE = (3.0, 15.0)
RULES_PRICE = (0.25, 1.25)
PRICES = f"""
[defaults]
prompt_price_per_million = 100.0
completion_price_per_million = 100.0

[models."sim:0.8"]
prompt_price_per_million = {SIM_PRICE[0]}
completion_price_per_million = {SIM_PRICE[1]}

[models."rules"]
prompt_price_per_million = {RULES_PRICE[0]}
completion_price_per_million = {RULES_PRICE[1]}
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("cost")
    config = RunConfig(candidates=["sim:0.8"], feedback="rules", turns=4, concurrency=8)
    return offline_sweep(base, config, 2)


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_report_arguments(parser)
    return parser.parse_args(list(argv))


def _hand_cost(run_dir: Path, *, rules_priced: bool = True) -> float:
    """Sum over every recorded call of tokens x price / 1e6, by the role that made it."""
    total = 0.0
    records, _ = read_records(run_dir)
    for rec in records:
        if not isinstance(rec, TurnRecord):
            continue
        for call in rec.calls:
            if call.role == "feedback" and not rules_priced:
                continue
            prompt, completion = SIM_PRICE if call.role == "candidate" else RULES_PRICE
            total += (call.usage.prompt_tokens * prompt
                      + call.usage.completion_tokens * completion) / 1e6
    return total


async def test_json_cost_equals_the_hand_formula_over_recorded_usages(
        run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "prices.toml"
    config.write_text(PRICES)
    assert await report_command(_args(str(run_dir), "--json", "--config", str(config))) == 0
    got = msgspec.json.decode(capsys.readouterr().out)
    records, _ = read_records(run_dir)
    # the leaderboard keys are exactly as before
    expected = msgspec.json.decode(msgspec.json.encode(leaderboard_json(leaderboard(records))))
    assert {k: got[k] for k in expected} == expected
    calls = [c for r in records if isinstance(r, TurnRecord) for c in r.calls]
    roles = {c.role for c in calls}
    assert roles == {"candidate", "feedback"}, roles  # both models were called and are priced
    assert {(row["model"], row["role"], row["called"]) for row in got["tokens"]} == {
        ("sim:0.8", "candidate", "sim:0.8"), ("sim:0.8", "feedback", "rules")}
    assert sum(row["calls"] for row in got["tokens"]) == len(calls)
    assert sum(row["prompt_tokens"] for row in got["tokens"]) == sum(
        c.usage.prompt_tokens for c in calls)
    assert sum(row["completion_tokens"] for row in got["tokens"]) == sum(
        c.usage.completion_tokens for c in calls)
    hand = _hand_cost(run_dir)
    assert hand > 0
    assert got["cost_total"] == pytest.approx(hand, rel=1e-12)
    assert sum(row["cost"] for row in got["tokens"]) == pytest.approx(hand, rel=1e-12)


async def test_without_prices_the_cost_is_null_and_a_missing_price_is_left_out(
        run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert await report_command(_args(str(run_dir), "--json")) == 0
    got = msgspec.json.decode(capsys.readouterr().out)
    assert got["cost_total"] is None and all(row["cost"] is None for row in got["tokens"])
    only_sim = tmp_path / "sim.toml"
    only_sim.write_text('[models."sim:0.8"]\nprompt_price_per_million = 3.0\n'
                        "completion_price_per_million = 15.0\n")
    assert await report_command(_args(str(run_dir), "--json", "--config", str(only_sim))) == 0
    got = msgspec.json.decode(capsys.readouterr().out)
    by_role = {row["role"]: row["cost"] for row in got["tokens"]}
    assert by_role["feedback"] == 0.0  # rules answers locally: free, not unpriced (issue 25)
    assert got["cost_total"] == pytest.approx(_hand_cost(run_dir, rules_priced=False))


async def test_text_html_and_markdown_show_the_cost(
        run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "prices.toml"
    config.write_text(PRICES)
    out_md, out_html = tmp_path / "r.md", tmp_path / "r.html"
    assert await report_command(_args(str(run_dir), "--config", str(config),
                                      "--markdown", str(out_md), "--html", str(out_html))) == 0
    text = capsys.readouterr().out
    hand = f"{_hand_cost(run_dir):,.4f}"
    assert "InitialFix" in text and f"cost {hand}" in text and "partial" not in text
    md = out_md.read_text().split("## Token usage", 1)[1]
    assert "| Prompt cost | Completion cost | Total cost | Cost / episode |" in md
    assert "| Total |  |  |  |" in md and f"| {hand} |" in md
    page = out_html.read_text()
    assert "<th scope=\"col\" class=\"r\">Total cost</th>" in page and str(config) in page
    shot, errors = _load_in_chromium(out_html, tmp_path)  # the priced page still renders
    assert errors == [], errors
    _assert_not_blank(shot)


async def test_a_bad_price_file_is_named(run_dir: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[models."rules"]\nprompt_price_per_million = -2\n'
                   "completion_price_per_million = 1\n")
    with pytest.raises(ConfigError, match=f"{bad}: .*rules.*prompt_price_per_million"):
        await report_command(_args(str(run_dir), "--json", "--config", str(bad)))
