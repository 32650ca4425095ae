"""Token cost: prices in the model config, and the arithmetic of the report's cost columns.

Prices are per million tokens (``prompt_price_per_million``, ``completion_price_per_million``,
both or neither); a bad one is a ConfigError naming the file and the table. The cost of
a row is its summed tokens times the price of the spec that made the calls.
"""

from __future__ import annotations

import math
from pathlib import Path

import msgspec
import pytest

from pairbench_async.core.errors import ConfigError
from pairbench_async.core.types import Usage
from pairbench_async.models.endpoint import EndpointSettings
from pairbench_async.models.prices import Price, PriceBook
from pairbench_async.models.specs import load_model_config, load_prices, price_book
from pairbench_async.report.cost import (
    cost_summary,
    format_cost,
    render_tokens_text,
    token_rows,
    tokens_json,
)
from pairbench_async.report.html import build_report, render_markdown
from pairbench_async.runlog.records import CallRecord, EpisodeRecord, Record, TurnRecord

CONFIG = """
[defaults]
max_retries = 2
prompt_price_per_million = 2.0
completion_price_per_million = 8

[models."openai:priced"]
prompt_price_per_million = 0.5
completion_price_per_million = 1.5

[models."openai:limits-only"]
max_concurrency = 4

[models."rules"]
prompt_price_per_million = 0.5
completion_price_per_million = 1
"""


def _config(tmp_path: Path, text: str) -> str:
    path = tmp_path / "models.toml"
    path.write_text(text)
    return str(path)


# --------------------------------------------------------------------------- config


def test_prices_are_read_per_spec_with_defaults_for_openai_specs_only(tmp_path: Path) -> None:
    path = _config(tmp_path, CONFIG)
    book = load_prices(path)
    assert book.source == path
    assert book.default == Price(prompt=2.0, completion=8.0)
    assert book.of("openai:priced") == Price(prompt=0.5, completion=1.5)  # its own table wins
    assert book.of("openai:limits-only") == book.default  # [defaults] is merged under a table
    assert book.of("openai:anything-else") == book.default  # ... and prices tableless openai:
    assert book.of("rules") == Price(prompt=0.5, completion=1.0)  # any spec may have a table
    assert book.of("sim:0.8") is None  # offline models get no default price
    assert load_model_config(path)["openai:limits-only"].max_retries == 2  # settings unchanged


def test_a_config_without_prices_gives_an_empty_book(tmp_path: Path) -> None:
    book = load_prices(_config(tmp_path, '[models."openai:x"]\nmax_concurrency = 2\n'))
    assert book.models == {} and book.default is None and book.of("openai:x") is None


def test_price_fields_are_optional_and_validated_on_the_struct() -> None:
    assert EndpointSettings().prompt_price_per_million is None
    ok = msgspec.convert({"prompt_price_per_million": 0, "completion_price_per_million": 3},
                         EndpointSettings)
    assert ok.completion_price_per_million == 3.0  # TOML integers are fine
    assert price_book({"": ok}).default == Price(prompt=0.0, completion=3.0)  # free is a price
    with pytest.raises(ConfigError, match="completion_price_per_million must be a finite"):
        EndpointSettings(prompt_price_per_million=1.0, completion_price_per_million=math.inf)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("prompt_price_per_million = -1\ncompletion_price_per_million = 1",
         "prompt_price_per_million must be a finite number >= 0"),
        ("prompt_price_per_million = nan\ncompletion_price_per_million = 1",
         "prompt_price_per_million must be a finite number >= 0"),
        ("prompt_price_per_million = 1\ncompletion_price_per_million = inf",
         "completion_price_per_million must be a finite number >= 0"),
        ("prompt_price_per_million = 1", "prompt_price_per_million is set alone"),
        ('prompt_price_per_million = "3 USD"\ncompletion_price_per_million = 1',
         "prompt_price_per_million"),
    ],
)
def test_a_bad_price_is_a_config_error_naming_the_file_and_table(
        tmp_path: Path, table: str, message: str) -> None:
    path = _config(tmp_path, f'[models."openai:bad"]\n{table}\n')
    with pytest.raises(ConfigError, match=message) as info:
        load_prices(path)
    assert str(info.value).startswith(f"{path}: ")
    if "USD" not in table:  # msgspec's own type errors name the field path instead
        assert '[models."openai:bad"]' in str(info.value)


def test_a_bad_default_price_names_the_defaults_table(tmp_path: Path) -> None:
    path = _config(tmp_path, "[defaults]\ncompletion_price_per_million = -0.5\n"
                             "prompt_price_per_million = 1\n")
    with pytest.raises(ConfigError, match=r"\[defaults\]: .*completion_price_per_million"):
        load_model_config(path)


# --------------------------------------------------------------------------- arithmetic


def _turn(model: str, episode: str, turn: int, *calls: tuple[str, str, int, int]) -> TurnRecord:
    return TurnRecord(
        run_id="r", episode_id=episode, instance_id=f"i-{episode}", model=model, protocol="pair",
        run=0, seed=1, turn=turn, program="print(1)\n", passed=["t1"] if turn else [],
        failed=[] if turn else ["t1"], pass_rate=1.0 if turn else 0.0,
        calls=[CallRecord(role=role, model=called, text="x",  # type: ignore[arg-type]
                          usage=Usage(prompt_tokens=pt, completion_tokens=ct))
               for role, called, pt, ct in calls])


def _end(model: str, episode: str) -> EpisodeRecord:
    return EpisodeRecord(run_id="r", episode_id=episode, instance_id=f"i-{episode}",
                         model=model, protocol="pair", run=0, seed=1, status="done", turns=2,
                         stop_reason="fixed", initial_pass_rate=0.0, final_pass_rate=1.0)


#: Two candidates, one episode each. openai:a answers as "a-2024" (what an endpoint calls
#: itself), the feedback model is spec "rules" (called "rules"); own-client (an embedder's own
#: client: neither an openai: model, which [defaults] prices, nor an offline one, which is
#: free) has no price. (It was sim:0.3 until offline models became free, issue 25.)
RECORDS: list[Record] = [
    _turn("openai:a", "e1", 0, ("candidate", "a-2024", 1000, 200)),
    _turn("openai:a", "e1", 1, ("feedback", "rules", 400, 50),
          ("candidate", "a-2024", 1500, 300)),
    _end("openai:a", "e1"),
    _turn("own-client", "e2", 0, ("candidate", "own-client", 100, 10)),
    _turn("own-client", "e2", 1, ("feedback", "rules", 200, 20), ("candidate", "own-client", 0, 0)),
    _end("own-client", "e2"),
]
#: [defaults] 2 / 8 per million prices openai:a; rules costs 0.5 / 1 per million.
BOOK = PriceBook(models={"rules": Price(prompt=0.5, completion=1.0)},
                 default=Price(prompt=2.0, completion=8.0), source="prices.toml")


def test_cost_of_hand_made_records_worked_by_hand() -> None:
    # openai:a candidate: 2 calls, 1000+1500 = 2500 prompt, 200+300 = 500 completion tokens
    #   -> 2500 * 2 / 1e6 = 0.005 and 500 * 8 / 1e6 = 0.004: 0.009
    # openai:a feedback (rules): 400 * 0.5 / 1e6 = 0.0002 and 50 * 1 / 1e6 = 0.00005: 0.00025
    # own-client candidate: no price ([defaults] is for openai: models) -> unknown
    # own-client feedback (rules): 200 * 0.5 / 1e6 = 0.0001 and 20 * 1 / 1e6 = 0.00002: 0.00012
    # known total: 0.005 + 0.0002 + 0.0001 = 0.0053 prompt, 0.004 + 0.00005 + 0.00002 =
    # 0.00407 completion, 0.00937 in all; partial, since own-client is unpriced.
    rows = token_rows(RECORDS, ["pair"], prices=BOOK, feedback="rules")
    got = {(r.model, r.role): r for r in rows}
    assert [(r.model, r.role, r.called) for r in rows] == [
        ("openai:a", "candidate", "a-2024"), ("openai:a", "feedback", "rules"),
        ("own-client", "candidate", "own-client"), ("own-client", "feedback", "rules")]
    a = got[("openai:a", "candidate")]
    assert (a.calls, a.prompt_tokens, a.completion_tokens, a.episodes) == (2, 2500, 500, 1)
    assert a.spec == "openai:a"
    assert a.prompt_cost == pytest.approx(0.005) and a.completion_cost == pytest.approx(0.004)
    assert a.cost == pytest.approx(0.009)
    assert got[("openai:a", "feedback")].cost == pytest.approx(0.00025)
    sim = got[("own-client", "candidate")]
    assert sim.cost is None and sim.prompt_cost is None and sim.completion_cost is None
    assert got[("own-client", "feedback")].cost == pytest.approx(0.00012)
    summary = cost_summary(rows)
    assert summary.prompt == pytest.approx(0.0053)
    assert summary.completion == pytest.approx(0.00407)
    assert summary.total == pytest.approx(0.00937)
    assert summary.partial and summary.unpriced == ["own-client"]


def test_feedback_calls_are_priced_as_the_runs_feedback_spec() -> None:
    # the endpoint calls itself "judge-0613"; the config (and the manifest) say openai:judge
    records: list[Record] = [_turn("sim:0.3", "e", 0, ("feedback", "judge-0613", 1_000_000, 0))]
    book = PriceBook(models={"openai:judge": Price(prompt=3.0, completion=0.0)})
    (row,) = token_rows(records, prices=book, feedback="openai:judge")
    assert row.spec == "openai:judge" and row.cost == pytest.approx(3.0)
    (unknown,) = token_rows(records, prices=book)  # no manifest: the answered name is all
    assert unknown.spec == "judge-0613" and unknown.cost is None


def test_no_prices_means_no_cost_anywhere() -> None:
    rows = token_rows(RECORDS, ["pair"])
    assert all(r.cost is None for r in rows)
    summary = cost_summary(rows)
    assert summary.total is None and not summary.partial
    assert [row["cost"] for row in tokens_json(rows)] == [None] * 4
    assert "cost unknown" in render_tokens_text(rows) and "Cost" not in render_tokens_text(rows)


def test_json_rows_have_exactly_the_documented_keys() -> None:
    (first, *_) = tokens_json(token_rows(RECORDS, ["pair"], prices=BOOK, feedback="rules"))
    assert first == {"model": "openai:a", "protocol": "pair", "role": "candidate",
                     "called": "a-2024", "calls": 2, "prompt_tokens": 2500,
                     "completion_tokens": 500, "cost": pytest.approx(0.009)}


def test_format_cost() -> None:
    assert format_cost(None) == "—" and format_cost(None, "-") == "-"
    assert format_cost(0.0) == "0.0000"
    assert format_cost(0.00002) == "<0.0001"  # known and non-zero: never shown as free
    assert format_cost(1234.5) == "1,234.5000"


def test_text_table_shows_costs_and_names_what_a_partial_total_leaves_out() -> None:
    text = render_tokens_text(token_rows(RECORDS, ["pair"], prices=BOOK, feedback="rules"))
    lines = text.splitlines()
    assert lines[0].split()[-1] == "Cost"
    assert "0.0090" in text and lines[-1].startswith("total: 6 calls, 3,200 prompt + 580")
    assert "cost 0.0094 (partial: no price for own-client)" in lines[-1]


# --------------------------------------------------------------------------- report table


def _token_table_md(records: list[Record], book: PriceBook | None) -> list[str]:
    md = render_markdown(build_report(records, prices=book))
    section = md.split("## Token usage", 1)[1]
    return [line for line in section.splitlines() if line.startswith("|")]


def test_report_table_gains_cost_columns_and_a_partial_total() -> None:
    table = _token_table_md(RECORDS, BOOK)
    header = [c.strip() for c in table[0].strip("|").split("|")]
    assert header[-4:] == ["Prompt cost", "Completion cost", "Total cost", "Cost / episode"]
    rows = {tuple(c.strip() for c in line.strip("|").split("|")[:3]): line for line in table[2:]}
    sim = [c.strip() for c in rows[("own-client", "pair", "candidate")].strip("|").split("|")]
    assert sim[-4:] == ["—"] * 4
    a = [c.strip() for c in rows[("openai:a", "pair", "candidate")].strip("|").split("|")]
    assert a[-4:] == ["0.0050", "0.0040", "0.0090", "0.0090"]  # one episode
    total = [c.strip() for c in table[-1].strip("|").split("|")]
    assert total[0] == "Total (partial)" and total[-2] == "0.0094 (partial)"
    assert "no price for own-client" in render_markdown(build_report(RECORDS, prices=BOOK))


def test_report_table_is_unchanged_without_prices() -> None:
    table = _token_table_md(RECORDS, None)
    assert "cost" not in table[0].lower()
    assert [c.strip() for c in table[-1].strip("|").split("|")][0] == "Total"
    complete = PriceBook(models={"rules": Price(prompt=0.5, completion=1.0),
                                 "own-client": Price(prompt=0.0, completion=0.0)},
                         default=Price(prompt=2.0, completion=8.0))
    total = [c.strip() for c in _token_table_md(RECORDS, complete)[-1].strip("|").split("|")]
    assert total[0] == "Total" and total[-2] == "0.0094"  # every row priced: not partial


def test_offline_models_are_free_never_unpriced() -> None:
    """sim:, rules and replay: answer locally: with prices given they cost 0, and the
    total is not "partial" because of them (issue 25: "partial: no price" for rules)."""
    records: list[Record] = [_turn("sim:0.3", "e", 0, ("candidate", "sim:0.3", 100, 10)),
                             _turn("sim:0.3", "e", 1, ("feedback", "rules", 200, 20))]
    rows = token_rows(records, ["pair"], prices=PriceBook(default=Price(prompt=2.0, completion=8.0)),
                      feedback="rules")
    assert [(r.spec, r.cost) for r in rows] == [("sim:0.3", 0.0), ("rules", 0.0)]
    summary = cost_summary(rows)
    assert summary.total == 0.0 and not summary.partial and summary.unpriced == []
    assert all(r.cost is None for r in token_rows(records, ["pair"]))  # no prices at all: no cost
