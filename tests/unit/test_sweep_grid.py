"""A ``--sweep`` grid: its points, its order, and the folder names of its settings."""

from __future__ import annotations

import pytest

from pairbench_async.cli.run import parse_sweep
from pairbench_async.core.errors import ConfigError
from pairbench_async.runlog.sweep import setting_name


def test_the_feedback_model_is_a_sweep_axis_kept_in_order() -> None:
    grid = parse_sweep(["turns=10,15", "feedback=rules,openai:deepseek-chat@http://127.0.0.1:8000/v1"])
    # the given order, last axis fastest: the first point is the report's main setting
    assert grid == [
        {"turns": 10, "feedback": "rules"},
        {"turns": 10, "feedback": "openai:deepseek-chat@http://127.0.0.1:8000/v1"},
        {"turns": 15, "feedback": "rules"},
        {"turns": 15, "feedback": "openai:deepseek-chat@http://127.0.0.1:8000/v1"},
    ]
    names = [setting_name(p, grid) for p in grid]
    # a safe value is kept as it is; ':', '@', '/' become '-' (readable, no subfolder)
    assert names == ["turns=10_feedback=rules",
                     "turns=10_feedback=openai-deepseek-chat-http-127.0.0.1-8000-v1",
                     "turns=15_feedback=rules",
                     "turns=15_feedback=openai-deepseek-chat-http-127.0.0.1-8000-v1"]
    assert all("/" not in n and ":" not in n and "@" not in n for n in names)


def test_values_that_read_alike_get_a_digest_and_long_ones_are_cut() -> None:
    grid = parse_sweep(["feedback=openai:a@http://h/v1,openai:a@http://h:/v1"])
    a, b = (setting_name(p, grid) for p in grid)
    # both read "openai-a-http-h-v1": each gets 6 hex digits of its exact spec
    assert a != b and a.startswith("feedback=openai-a-http-h-v1-") and len(a) == len(b)
    long = "openai:" + "m" * 80
    (point,) = parse_sweep([f"feedback={long}"])
    name = setting_name(point, [point])
    assert len(name) == len("feedback=") + 48 + 7 and name != setting_name({"feedback": long + "x"},
                                                                           [{"feedback": long + "x"}])


@pytest.mark.parametrize(("items", "message"), [
    (["turns=6,6"], "6 given more than once"),
    (["turns=6", "turns=10"], "names turns twice"),
    (["feedback=rules,"], "an empty model spec"),
    (["turns=six"], "values must be integers"),
    (["colour=red"], "KEY=V1,V2"),
])
def test_a_bad_grid_is_refused(items: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_sweep(items)


def test_the_reading_after_a_deferral_is_an_option_and_a_sweep_axis(tmp_path: object) -> None:
    # PROTOCOL.md: Algorithm 1 keeps the level after a deferral (stay), §IV-D.2's text raises it
    # (escalate); both are reachable from `run` and `--sweep`, and the default leaves a
    # manifest as it was (runs made before the option resume unchanged)
    from pairbench_async.runner.config import RunConfig

    assert parse_sweep(["after-deferral=stay,escalate"]) == [{"after-deferral": "stay"},
                                                              {"after-deferral": "escalate"}]
    with pytest.raises(ConfigError, match="stay, escalate or reset"):
        parse_sweep(["after-deferral=up"])
    assert RunConfig(after_deferral="escalate").policy().after_deferral == "escalate"
    assert "after_deferral" not in RunConfig().params()
    assert RunConfig(after_deferral="reset").params()["after_deferral"] == "reset"
    with pytest.raises(ConfigError, match="after-deferral"):
        RunConfig(after_deferral="sideways")  # type: ignore[arg-type]
