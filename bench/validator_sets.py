"""The leakage rules' figures on every labelled set: per set, pooled, and per rejection reason.

    python -m bench.validator_sets [--json OUT]

Per set (``tests/data/labelled_hints*.jsonl``): overall precision / recall. Pooled over
fresh2-fresh15 and over every set: per boundary. Per rule: every reason the rules give, keyed by
its boundary and kind (the reason up to its first quote, e.g. ``direction: imperative``), with how
often it fired on a hint labelled with that boundary (TP) or not (FP; a rule of no Table II boundary,
``quote``, is right when the hint breaks any): a rule to narrow is one whose precision over every set
is poor. Measures; changes nothing.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

import msgspec

from pairbench_async.protocol.boundaries import BOUNDARY_NAMES
from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.hint_labels import (
    LabelledHint,
    _hidden,
    parse_labelled_set,
    rule_prediction,
    score,
)
from pairbench_async.protocol.leakage import validate_hint

ROOT = Path(__file__).resolve().parent.parent
FRESH_POOL = range(2, 16)


def _sets() -> list[Path]:
    def key(path: Path) -> tuple[str, int]:
        digits = re.search(r"\d+$", path.stem)
        return (path.stem.rstrip("0123456789"), int(digits.group()) if digits else 0)
    return sorted((ROOT / "tests" / "data").glob("labelled_hints*.jsonl"), key=key)


def _kind(reason: str) -> str:
    head = re.split(r"['\"(]|\d", reason, maxsplit=1)[0]
    return " ".join(head.split()[:5]).rstrip(" :")


def _ratio(num: int, den: int) -> str:
    return f"{num / den:.2f}" if den else "  -  "


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    per_set: dict[str, list[int]] = {}
    pool_hints: dict[str, list[LabelledHint]] = {"fresh2-fresh15": [], "every set": []}
    pool_predicted: dict[str, dict[str, frozenset[str]]] = {"fresh2-fresh15": {}, "every set": {}}
    rules: Counter[tuple[str, str]] = Counter()
    for path in _sets():
        name = path.stem.removeprefix("labelled_hints").lstrip("_") or "main"
        data = parse_labelled_set(path.read_bytes().splitlines(), str(path))
        hints = [msgspec.structs.replace(h, id=f"{name}:{h.id}") for h in data.hints]
        predicted: dict[str, frozenset[str]] = {}
        for hint in hints:
            task = data.tasks[hint.task]
            predicted[hint.id] = rule_prediction(hint, task)
            reasons = validate_hint(hint.text, hint.level, Evidence(problem=task.problem), task.program,
                                    _hidden(task.reference))
            for kind in {_kind(r) for r in reasons}:
                boundary = kind.split(":", 1)[0]
                right = boundary in hint.broken if boundary in BOUNDARY_NAMES else bool(hint.broken)
                rules[(kind, "TP" if right else "FP")] += 1
        overall = score(hints, predicted)[-1]
        per_set[name] = [len(hints), overall.positives, overall.tp, overall.fp, overall.fn]
        fresh = re.fullmatch(r"fresh(\d+)", name)
        for target in ["every set"] + (["fresh2-fresh15"] if fresh and int(fresh.group(1)) in FRESH_POOL else []):
            pool_hints[target].extend(hints)
            pool_predicted[target].update(predicted)
    print(f"{'set':16} hints pos  TP  FP  FN  prec  rec")
    for name, (count, pos, tp, fp, fn) in per_set.items():
        print(f"{name:16} {count:5} {pos:3} {tp:3} {fp:3} {fn:3}  {_ratio(tp, tp + fp)}  {_ratio(tp, tp + fn)}")
    pools: dict[str, dict[str, list[int]]] = {}
    for target, hints in pool_hints.items():
        print(f"\npooled {target}: boundary pos TP FP FN prec rec")
        pools[target] = {}
        for s in score(hints, pool_predicted[target]):
            print(f"  {s.name:14} {s.positives:4} {s.tp:4} {s.fp:4} {s.fn:4}  {_ratio(s.tp, s.tp + s.fp)}  "
                  f"{_ratio(s.tp, s.tp + s.fn)}")
            pools[target][s.name] = [s.positives, s.tp, s.fp, s.fn]
    print("\nper rule over every set (fired on a hint labelled with its boundary: TP, else FP), worst first")
    kinds = {k for k, _ in rules}
    rows = sorted(kinds, key=lambda k: (rules[(k, "TP")] / max(1, rules[(k, "TP")] + rules[(k, "FP")]), k))
    for kind in rows:
        tp, fp = rules[(kind, "TP")], rules[(kind, "FP")]
        print(f"  {_ratio(tp, tp + fp)}  TP {tp:4}  FP {fp:3}  {kind}")
    if args.json:
        out = {"sets": per_set, "pools": pools,
               "rules": {k: [rules[(k, "TP")], rules[(k, "FP")]] for k in rows}}
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
