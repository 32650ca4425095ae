"""``sim:SKILL?loop=P``: a looping revision with probability P, drawn from its own seeded
generator; apart from the looping turns, a trajectory is the one of ``sim:SKILL``."""

from __future__ import annotations

import pytest

from pairbench_async.core.errors import ConfigError
from pairbench_async.datasets.files import load_dataset
from pairbench_async.models.offline import SimCandidate, TurnContext, parse_offline_spec
from pairbench_async.models.sim import LOOP_LINE

INSTANCES = load_dataset().instances[:8]


def ctx(instance, program: str, turn: int) -> TurnContext:  # type: ignore[no-untyped-def]
    return TurnContext(instance=instance, program=program, turn=turn, level=3,
                       target_lines=[], evidence=None, attempt=0, seed=7)


def test_specs_parse() -> None:
    sim = parse_offline_spec("sim:0.5?loop=0.05")
    assert isinstance(sim, SimCandidate) and sim.loop == 0.05 and sim.latency == 0.0
    both = parse_offline_spec("sim:0.5?latency=0.01&loop=1")
    assert isinstance(both, SimCandidate) and both.loop == 1.0 and both.latency == 0.01
    for bad in ("sim:0.5?loop=2", "sim:0.5?loop=-0.1", "sim:0.5?loop=x", "sim:0.5?loop=0.1&loop=0.2"):
        with pytest.raises(ConfigError):
            parse_offline_spec(bad)


def test_looping_turns_are_drawn_and_the_rest_is_sim_skill() -> None:
    plain = SimCandidate(0.5, name="sim:0.5")
    loopy = SimCandidate(0.5, loop=0.3, name="sim:0.5?loop=0.3")
    looped = turns = 0
    for inst in INSTANCES:
        a = b = inst.buggy
        for turn in range(10):
            a = plain.revise(ctx(inst, a, turn)).program
            b = loopy.revise(ctx(inst, b, turn)).program
            turns += 1
            if b.startswith(LOOP_LINE):
                looped += 1
                assert b[len(LOOP_LINE):] == a  # the same revision, with the loop first
            else:
                assert b == a
            # deterministic: the same context gives the same program
            assert loopy.revise(ctx(inst, b, turn)).program == loopy.revise(ctx(inst, b, turn)).program
    assert 0.15 * turns < looped < 0.45 * turns


def test_loop_one_always_loops_and_zero_never() -> None:
    inst = INSTANCES[0]
    assert SimCandidate(0.5, loop=1.0).revise(ctx(inst, inst.buggy, 1)).program.startswith(LOOP_LINE)
    assert not SimCandidate(0.5).revise(ctx(inst, inst.buggy, 1)).program.startswith(LOOP_LINE)
