"""The leakage rules' figures on every labelled set: per set, pooled, and per rejection reason.

    python -m bench.validator_sets [--json OUT]

Per set (``tests/data/labelled_hints*.jsonl``): overall precision / recall. Pooled over
fresh2-fresh15 and over every set: per boundary. Per rule: every reason the rules give, keyed by
its boundary and kind (the reason up to its first quote, e.g. ``direction: imperative``), with how
often it fired on a hint labelled with that boundary (TP) or not (FP): a rule to narrow is one
whose precision over every set is poor. Measures; changes nothing.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

from pairbench_async.protocol.boundaries import BOUNDARY_NAMES
from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.hint_labels import _hidden, parse_labelled_set, rule_prediction, score
from pairbench_async.protocol.leakage import validate_hint

ROOT = Path(__file__).resolve().parent.parent


def _sets() -> list[Path]:
    def key(p: Path) -> tuple[str, int]:
        m = re.search(r"(\D*)(\d*)$", p.stem)
        return (m.group(1), int(m.group(2) or 0))
    return sorted((ROOT / "tests" / "data").glob("labelled_hints*.jsonl"), key=key)


def _kind(reason: str) -> str:
    head = re.split(r"['\"(]|\d", reason, maxsplit=1)[0]
    return " ".join(head.split()[:5]).rstrip(" :")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    per_set: dict[str, dict] = {}
    pools: dict[str, tuple[list, dict]] = {"fresh2-fresh15": ([], {}), "every set": ([], {})}
    rules: Counter[tuple[str, str]] = Counter()
    for path in _sets():
        name = path.stem.removeprefix("labelled_hints").lstrip("_") or "main"
        data = parse_labelled_set(path.read_bytes().splitlines(), str(path))
        predicted = {}
        for hint in data.hints:
            task = data.tasks[hint.task]
            predicted[f"{name}:{hint.id}"] = rule_prediction(hint, task)
            reasons = validate_hint(hint.text, hint.level, Evidence(problem=task.problem), task.program,
                                    _hidden(task.reference))
            for kind in {_kind(r) for r in reasons}:
                boundary = kind.split(":", 1)[0]
                # a rule of no Table II boundary (quote, length) is right when the hint breaks any
                right = boundary in hint.broken if boundary in BOUNDARY_NAMES else bool(hint.broken)
                rules[(kind, "TP" if right else "FP")] += 1
        hints = [h.__class__(**{**{f: getattr(h, f) for f in h.__struct_fields__}, "id": f"{name}:{h.id}"})
                 for h in data.hints]
        overall = score(hints, predicted)[-1]
        per_set[name] = {"hints": len(hints), "positives": overall.positives, "tp": overall.tp, "fp": overall.fp,
                         "fn": overall.fn}
        m = re.fullmatch(r"fresh(\d+)", name)
        targets = ["every set"] + (["fresh2-fresh15"] if m and 2 <= int(m.group(1)) <= 15 else [])
        for target in targets:
            pools[target][0].extend(hints)
            pools[target][1].update(predicted)
    fmt = lambda v: "  -  " if v is None else f"{v:.2f}"  # noqa: E731
    print(f"{'set':16} hints pos  TP  FP  FN  prec  rec")
    for name, s in per_set.items():
        p = s["tp"] / (s["tp"] + s["fp"]) if s["tp"] + s["fp"] else None
        r = s["tp"] / (s["tp"] + s["fn"]) if s["tp"] + s["fn"] else None
        print(f"{name:16} {s['hints']:5} {s['positives']:3} {s['tp']:3} {s['fp']:3} {s['fn']:3}  {fmt(p)}  {fmt(r)}")
    out = {"sets": per_set, "pools": {}, "rules": {}}
    for target, (hints, predicted) in pools.items():
        print(f"\npooled {target}: boundary pos TP FP FN prec rec")
        out["pools"][target] = {}
        for s in score(hints, predicted):
            print(f"  {s.name:14} {s.positives:4} {s.tp:4} {s.fp:4} {s.fn:4}  {fmt(s.precision)}  {fmt(s.recall)}")
            out["pools"][target][s.name] = [s.positives, s.tp, s.fp, s.fn]
    print("\nper rule over every set (fired on a hint labelled with its boundary: TP, else FP), worst first")
    kinds = {k for k, _ in rules}
    rows = sorted(kinds, key=lambda k: (rules[(k, "TP")] / max(1, rules[(k, "TP")] + rules[(k, "FP")]), k))
    for kind in rows:
        tp, fp = rules[(kind, "TP")], rules[(kind, "FP")]
        print(f"  {tp / (tp + fp):.2f}  TP {tp:4}  FP {fp:3}  {kind}")
        out["rules"][kind] = [tp, fp]
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
