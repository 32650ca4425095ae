"""The leakage rules' revision 19 (issue 24): below L3 an inline span is code only if it is Python over names.

Chosen from the rules' record on hints never seen (``python -m bench.validator_record``: "code: inline code span"
at L1 and L2 was wrong alone 7 times and right once, every wrong one test data: an output line, a board, a tuple, a
half-typed input). Sentences written for these tests in a domain of their own (a ferry's car deck), not the
labelled sets'. Each test holds a span revision 18 rejected as code (so it fails without the change) and a
neighbour that is still code."""

from __future__ import annotations

import pytest

from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.leakage import HiddenData, rule_reasons
from pairbench_async.protocol.leakage_patterns import writes_python

PROBLEM = ("A ferry loads cars into lanes in arrival order. Read the lane length and the cars' lengths; print for "
           "each car its lane, or `wait` when no lane has room.")
PROGRAM = ("def load(lane, cars):\n    lanes = [0, 0]\n    out = []\n    for c in cars:\n"
           "        i = 0 if lanes[0] <= lanes[1] else 1\n        if lanes[i] + c < lane:\n"
           "            lanes[i] += c\n            out.append(i + 1)\n        else:\n            out.append('wait')\n"
           "    return out\n")
REFERENCE = PROGRAM.replace("lanes[i] + c < lane", "lanes[i] + c <= lane")


def rules(hint: str, level: int) -> set[str]:
    reasons = rule_reasons(hint, level, Evidence(problem=PROBLEM), PROGRAM, HiddenData(reference=REFERENCE))
    return {reason.split(":", 1)[0] for reason in reasons}


@pytest.mark.parametrize("level", [1, 2])
def test_below_l3_a_span_that_is_no_python_is_data(level: int) -> None:
    # an output line that does not parse, and one that parses only as a bare annotation (`lane: wait`)
    assert "code" not in rules("Your lanes come out wrong: in one test the last line was `lane1=7 lane2=3 wait=1` "
                               "but `lane1=7 lane2=5 wait=0` was expected.", level)
    assert "code" not in rules("Some cars are reported as `lane: wait` where `lane: 2` was expected.", level)


@pytest.mark.parametrize("level", [1, 2])
def test_below_l3_python_over_names_in_a_span_is_still_code(level: int) -> None:
    assert "code" in rules("It goes wrong when `lanes[i] + c <= lane` would hold.", level)
    assert "code" in rules("Cars are refused though `lanes[0] += c` would fit them.", level)
    assert "code" in rules("Some cars are reported as `lane: wait` where `lane = 2` was expected.", level)


def test_from_l3_up_a_span_is_read_as_before() -> None:
    # the new reading is only below L3, where hints speak of inputs and outputs
    assert "code" in rules("Some cars are reported as `lane: wait` where `lane: 2` was expected.", 3)
    assert "code" in rules("Look at the lane check; `lanes[i] + c <= lane` is what it needs.", 4)


def test_what_parses_as_python_over_names() -> None:
    assert writes_python("lanes[i] += c")
    assert writes_python("if lanes[i] + c <= lane:")  # a block header, its body left out
    assert writes_python("elif c > lane:")
    assert not writes_python("else:")  # no name
    assert not writes_python("(1, 'wait', 3)")  # literals only
    assert not writes_python("x*")
    assert not writes_python("1 2 wait 1:3")
    assert not writes_python("lane: wait")  # a bare annotation: the shape of an output line
    assert writes_python("lane: int = 0")
