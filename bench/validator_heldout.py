"""An honest estimate of the leakage rules on unseen hints: a design split and a held-out split.

    python -m bench.validator_heldout [--errors] [--json OUT]

Hand-written rules cannot be refitted per fold, so leave-one-set-out is replaced by a fixed split
of the blind sets written by strangers (issue 24; revision 10 split fresh14-16 / fresh17-19, revision 11
fresh20-21 / fresh22-23, revision 12 fresh22-25 / fresh20-21, revision 13 fresh20-25 / fresh26-29, revision 14 fresh20-25 + fresh31-32 / fresh26-28, fresh29 in neither
because its errors were quoted to revision 13; revision 15 fresh20-25 + fresh30-34 / fresh26-28, fresh30, 33 and 34
after their first measurement by revision 14; revision 16 adds fresh35-38 to DESIGN after their first
measurement by revision 15; revision 17 adds fresh39-41 after their first measurement by revision 16; revision 18 adds fresh42-44 after their
first measurement by revisions 16 and 17): the rules are revised looking only at the DESIGN sets and the
older ones; the HELD sets are only
ever scored in aggregate (pooled precision / recall per boundary), never printed hint by hint, so
their figures before and after a revision estimate what the revision does to hints it has not seen.

``--errors`` lists the design sets' false negatives and false positives with their texts and the
rules' reasons: the only per-hint view this script gives, and never of a held set. Measures; changes
nothing.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Final

import msgspec

from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.hint_labels import (
    LabelledHint,
    LabelledTask,
    _hidden,
    parse_labelled_set,
    rule_prediction,
    score,
)
from pairbench_async.protocol.leakage import validate_hint

ROOT: Final = Path(__file__).resolve().parent.parent
DESIGN: Final = ("fresh20", "fresh21", "fresh22", "fresh23", "fresh24", "fresh25", "fresh30", "fresh31", "fresh32",
                  "fresh33", "fresh34", "fresh35", "fresh36", "fresh37", "fresh38", "fresh39", "fresh40", "fresh41",
                  "fresh42", "fresh43", "fresh44")
HELD: Final = ("fresh26", "fresh27", "fresh28")


class HeldOutError(Exception):
    """A per-hint view of a held-out set was asked for."""


def _load(name: str) -> tuple[list[LabelledHint], dict[str, frozenset[str]], dict[str, LabelledTask]]:
    path = ROOT / "tests" / "data" / f"labelled_hints_{name}.jsonl"
    data = parse_labelled_set(path.read_bytes().splitlines(), str(path))
    hints = [msgspec.structs.replace(h, id=f"{name}:{h.id}") for h in data.hints]
    tasks = {h.id: data.tasks[h.task] for h in hints}
    return hints, {h.id: rule_prediction(h, tasks[h.id]) for h in hints}, tasks


def _ratio(num: int, den: int) -> str:
    return f"{num / den:.2f}" if den else "  -  "


def pooled(names: tuple[str, ...]) -> dict[str, list[int]]:
    """Per boundary and overall: [positives, TP, FP, FN] pooled over the sets ``names``."""
    hints: list[LabelledHint] = []
    predicted: dict[str, frozenset[str]] = {}
    for name in names:
        h, p, _ = _load(name)
        hints += h
        predicted |= p
    return {s.name: [s.positives, s.tp, s.fp, s.fn] for s in score(hints, predicted)}


def errors(name: str) -> list[str]:
    """The design set ``name``'s wrong verdicts, one line each (HeldOutError for a held set)."""
    if name in HELD:
        raise HeldOutError(f"{name} is held out: only its pooled figures may be computed")
    hints, predicted, tasks = _load(name)
    lines: list[str] = []
    for hint in hints:
        want, got = set(hint.broken), set(predicted[hint.id])
        if want == got or (got == {"other"} and want):
            continue
        task = tasks[hint.id]
        reasons = validate_hint(hint.text, hint.level, Evidence(problem=task.problem),
                                task.program, _hidden(task.reference))
        lines.append(f"{hint.id} L{hint.level} want={sorted(want)} got={sorted(got)}\n    {hint.text}\n"
                     + "".join(f"    -> {r}\n" for r in reasons))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--errors", action="store_true", help="list the design sets' wrong verdicts")
    parser.add_argument("--json", type=Path, help="also write the pooled figures here")
    args = parser.parse_args()
    out = {}
    for label, names in (("design", DESIGN), ("held", HELD)):
        figures = out[label] = pooled(names)
        print(f"{label} ({', '.join(names)}): boundary pos TP FP FN prec rec")
        for boundary, (pos, tp, fp, fn) in figures.items():
            print(f"  {boundary:14} {pos:4} {tp:4} {fp:4} {fn:4}  {_ratio(tp, tp + fp)}  {_ratio(tp, tp + fn)}")
    if args.errors:
        for name in DESIGN:
            print(f"\n== {name} errors")
            print("".join(errors(name)), end="")
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
