"""``python -m pairbench_async validate-hints SET``: the leakage validator against labelled hints.

Prints the precision and recall of the validator's default (the learned reading with the rules' exact
checks, :func:`..protocol.leakage.validate_hint`) and of the hand-written rules alone (offline, always) and, with
``--validator-model SPEC``, of the LLM judge alone (asked about every hint) and of
the pipeline a run uses (the judge asked only about the hints the validator accepts), per
Table II boundary and overall (:mod:`..protocol.hint_labels` says how they count).
``--misses`` lists the hints each got wrong: wrongly accepted or rejected, or rejected for a
boundary other than the labelled ones (each per-boundary FP and FN of the table). Exit 0 (the numbers are the finding).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

import msgspec

from ..core.errors import ConfigError
from ..protocol.hint_labels import (
    LabelledSet,
    Score,
    judge_prediction,
    parse_labelled_set,
    rule_prediction,
    score,
    validator_prediction,
)
from ..protocol.judge import judge_messages, parse_verdict
from ..protocol.leakage import JudgeVerdict
from .args import positive_int

__all__ = ["add_validate_hints_parser", "validate_hints_command"]

DEFAULT_SET = "tests/data/labelled_hints.jsonl"


def add_validate_hints_parser(sub: Any) -> None:
    p = sub.add_parser(
        "validate-hints", help="precision and recall of the leakage validator on labelled hints",
        description="Run the leakage validator's rules (and, with --validator-model, its LLM judge) on a "
        "labelled hint set and print precision and recall per Table II boundary and overall.")
    p.add_argument("set", nargs="?", default=DEFAULT_SET, metavar="SET",
                   help=f"labelled hints, JSON Lines of tasks and hints (default: {DEFAULT_SET})")
    p.add_argument("--validator-model", metavar="SPEC", default=None,
                   help="also measure this LLM judge, openai:MODEL[@URL]")
    p.add_argument("--config", metavar="FILE", help="TOML file with per-model endpoint settings")
    p.add_argument("--concurrency", type=positive_int, default=4, metavar="N",
                   help="judge calls in flight (default 4)")
    p.add_argument("--max-tokens", type=positive_int, default=256, metavar="N",
                   help="answer budget of a judge call (default 256)")
    p.add_argument("--misses", action="store_true", help="list every hint a validator got wrong, including those rejected for the wrong boundary")
    p.add_argument("--json", action="store_true", help="print one JSON object")


async def _judge_all(labelled: LabelledSet, spec: str, args: argparse.Namespace) -> tuple[
        dict[str, JudgeVerdict], dict[str, int]]:
    from ..models.endpoint import parse_model_spec
    from ..models.specs import load_model_config, make_model

    if parse_model_spec(spec)[0] != "openai":
        raise ConfigError(f"--validator-model {spec!r}: the judge must be a real model, openai:MODEL[@URL]")
    model = make_model(spec, load_model_config(args.config))
    gate = asyncio.Semaphore(args.concurrency)
    verdicts: dict[str, JudgeVerdict] = {}
    usage = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}

    async def one(hint: Any) -> None:
        task = labelled.tasks[hint.task]
        async with gate:
            reply = await model.complete(judge_messages(hint.text, hint.level, task.problem, task.program),
                                         temperature=0.0, max_tokens=args.max_tokens, seed=0)
        verdicts[hint.id] = parse_verdict(reply.text, hint.level)
        usage["calls"] += 1
        usage["prompt_tokens"] += reply.usage.prompt_tokens
        usage["completion_tokens"] += reply.usage.completion_tokens

    try:
        await asyncio.gather(*(one(h) for h in labelled.hints))
    finally:
        await model.aclose()
    return verdicts, usage


def _fmt(value: float | None) -> str:
    return "   -" if value is None else f"{value:.2f}"


def _table(title: str, scores: list[Score]) -> list[str]:
    lines = [title, f"  {'boundary':<14}{'positives':>10}{'TP':>5}{'FP':>5}{'FN':>5}{'precision':>11}{'recall':>8}"]
    for s in scores:
        lines.append(f"  {s.name:<14}{s.positives:>10}{s.tp:>5}{s.fp:>5}{s.fn:>5}{_fmt(s.precision):>11}"
                     f"{_fmt(s.recall):>8}")
    return lines


def _scores_json(scores: list[Score]) -> list[dict[str, Any]]:
    return [{**msgspec.to_builtins(s), "precision": s.precision, "recall": s.recall} for s in scores]


async def validate_hints_command(args: argparse.Namespace) -> int:
    path = Path(args.set)
    try:
        lines = path.read_bytes().splitlines()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the labelled set: {exc}") from None
    labelled = parse_labelled_set(lines, str(path))
    hints = labelled.hints
    default = {h.id: validator_prediction(h, labelled.tasks[h.task]) for h in hints}
    rules = {h.id: rule_prediction(h, labelled.tasks[h.task]) for h in hints}
    results: dict[str, dict[str, frozenset[str]]] = {
        "validator (the default: the learned reading and the rules' exact checks)": default,
        "rules (the hand-written rules alone)": rules}
    verdicts: dict[str, JudgeVerdict] = {}
    usage: dict[str, int] = {}
    if args.validator_model:
        verdicts, usage = await _judge_all(labelled, args.validator_model, args)
        judge = {h.id: judge_prediction(verdicts[h.id]) for h in hints}
        results[f"judge {args.validator_model}"] = judge
        results["validator + judge (a run: the judge sees what the validator accepts)"] = {
            h.id: default[h.id] or judge[h.id] for h in hints}
    scored = {name: score(hints, predicted) for name, predicted in results.items()}
    malformed = sum(1 for v in verdicts.values() if v.verdict == "malformed")
    # a miss: rejected or accepted wrongly, or rejected for a boundary other than the labelled ones
    # (per-boundary false positives and negatives count in the table, so they are listed too)
    misses = {name: [(h.id, h.level, sorted(h.broken), sorted(predicted[h.id]), h.text) for h in hints
                     if set(h.broken) != set(predicted[h.id])] for name, predicted in results.items()}
    if args.json:
        out = {"set": str(path), "hints": len(hints), "breaking": sum(1 for h in hints if h.broken),
               "tasks": len(labelled.tasks),
               "results": {name: _scores_json(s) for name, s in scored.items()},
               "judge": {"spec": args.validator_model, "malformed": malformed, **usage,
                         "verdicts": {k: msgspec.to_builtins(v) for k, v in sorted(verdicts.items())}}
               if args.validator_model else None}
        if args.misses:
            out["misses"] = {name: [dict(zip(("id", "level", "label", "predicted", "text"), m, strict=True))
                                    for m in ms] for name, ms in misses.items()}
        sys.stdout.write(msgspec.json.encode(out).decode() + "\n")
        return 0
    print(f"{path}: {len(hints)} hints ({sum(1 for h in hints if h.broken)} break a Table II boundary) "
          f"over {len(labelled.tasks)} tasks")
    for name, s in scored.items():
        print("\n".join(_table(name, s)))
        if args.misses:
            for hid, level, label, predicted, text in misses[name]:
                print(f"    miss {hid} L{level} label={label or 'none'} predicted={predicted or 'none'}: "
                      f"{' '.join(text.split())[:100]}")
    if args.validator_model:
        print(f"judge: {usage['calls']} calls, {usage['prompt_tokens']:,} prompt + "
              f"{usage['completion_tokens']:,} completion tokens; {malformed} malformed replies "
              "(counted as accept)")
    return 0
