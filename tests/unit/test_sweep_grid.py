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


def test_the_evidence_reading_is_an_option_and_shows_the_programs_at_every_level() -> None:
    # Section IV: the feedback model "receives the problem requirement, the correct reference
    # program, the current buggy program, the selected scenario test cases, and the requested
    # hint level": section-iv, the default, shows all of them at L1 too; table-ii (the
    # project's masks) shows the candidate's code from L4 and the reference from L5.
    from pairbench_async.protocol.evidence import Evidence
    from pairbench_async.protocol.feedback_prompt import build_feedback_prompt
    from pairbench_async.protocol.hints import mask_evidence
    from pairbench_async.runner.config import RunConfig

    from pairbench_async.protocol.evidence import FailureEvidence

    failing = FailureEvidence(id="1", failure="WA", shape="token", summary="wrong answer", input="INPUT_Z",
                              expected="EXPECTED_W", actual="ACTUAL_V")
    evidence = Evidence(scenario="s", problem="P", tests=(failing,),
                        candidate_code="CANDIDATE_CODE_X", reference_code="REFERENCE_CODE_Y")
    table = mask_evidence(1, evidence)
    assert table.candidate_code is None and table.reference_code is None
    assert table.tests[0].input is None  # L1's column: no failing inputs
    text = mask_evidence(1, evidence, "section-iv")
    assert text.candidate_code == "CANDIDATE_CODE_X" and text.reference_code == "REFERENCE_CODE_Y"
    assert (text.tests[0].input, text.tests[0].expected) == ("INPUT_Z", "EXPECTED_W")  # the scenario's tests
    prompt = "\n".join(m.content for m in build_feedback_prompt(1, evidence, "s", "section-iv"))
    assert "CANDIDATE_CODE_X" in prompt and "REFERENCE_CODE_Y" in prompt
    assert "REFERENCE_CODE_Y" not in "\n".join(m.content for m in build_feedback_prompt(1, evidence, "s"))
    assert RunConfig().policy().evidence_reading == "section-iv"
    # recorded unless table-ii, the reading of every manifest written before section-iv
    # became the default (a manifest without it resumes as table-ii)
    assert RunConfig().params()["evidence_reading"] == "section-iv"
    assert "evidence_reading" not in RunConfig(evidence_reading="table-ii").params()
    assert parse_sweep(["evidence-reading=table-ii,section-iv"])[1] == {"evidence-reading": "section-iv"}
    with pytest.raises(ConfigError, match="table-ii or section-iv"):
        parse_sweep(["evidence-reading=all"])
