"""How much of the rules' error is the labels' own: a second, independent labelling of blind sets.

    python -m bench.label_agreement

Each labelled hint set was labelled by the one who wrote it. A second labeller (same Table II brief,
shown the tasks and the hints' texts and levels, never the first labels, the rules or their output) labelled
fresh39-44 again (``tests/data/second_labels/``). This prints, per hint (does it cross any Table II
boundary?): the two labellings' agreement and Cohen's kappa, and the rules' precision and recall against
each labelling. Where the rules' false positives are also clean by the second labeller, they are the rules'
errors, not label noise. Both labellers were language models of one family: their agreement bounds two
humans' from above. Measures; changes nothing.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Final

import msgspec

from pairbench_async.protocol.hint_labels import BOUNDARY_NAMES, parse_labelled_set, rule_prediction

ROOT: Final = Path(__file__).resolve().parent.parent
DATA: Final = ROOT / "tests" / "data"
#: a second labelling: its file, and the sets it covers
SECOND: Final = {"fresh39-41.jsonl": ("fresh39", "fresh40", "fresh41"),
                 "fresh42-44.jsonl": ("fresh42", "fresh43", "fresh44")}


class SecondLabel(msgspec.Struct, forbid_unknown_fields=True):
    id: str
    broken: list[str]


class Counts(msgspec.Struct):
    hints: int = 0
    first: int = 0  #: hints crossing, by the first labelling
    second: int = 0
    agreed: int = 0
    tp: list[int] = msgspec.field(default_factory=lambda: [0, 0])  #: against the first, the second labelling
    fp: list[int] = msgspec.field(default_factory=lambda: [0, 0])
    fn: list[int] = msgspec.field(default_factory=lambda: [0, 0])
    confirmed: list[str] = msgspec.field(default_factory=list)  #: rules' FPs the second labeller finds crossing


def second_labels(path: Path) -> dict[str, frozenset[str]]:
    """The second labelling of ``path``: hint id -> boundaries; an unknown boundary is an error."""
    out = {}
    for number, line in enumerate(path.read_bytes().splitlines(), 1):
        label = msgspec.json.decode(line, type=SecondLabel)
        unknown = set(label.broken) - set(BOUNDARY_NAMES)
        if unknown:
            raise ValueError(f"{path}:{number}: field 'broken': unknown boundaries {sorted(unknown)}")
        out[label.id] = frozenset(label.broken)
    return out


def measure() -> Counts:
    counts = Counts()
    for name, sets in SECOND.items():
        second = second_labels(DATA / "second_labels" / name)
        for set_name in sets:
            path = DATA / f"labelled_hints_{set_name}.jsonl"
            data = parse_labelled_set(path.read_bytes().splitlines(), str(path))
            for hint in data.hints:
                if hint.id not in second:
                    raise ValueError(f"{name}: no second label for {hint.id}")
                labels = (bool(set(hint.broken) & set(BOUNDARY_NAMES)), bool(second[hint.id]))
                flagged = bool(rule_prediction(hint, data.tasks[hint.task]))
                counts.hints += 1
                counts.first += labels[0]
                counts.second += labels[1]
                counts.agreed += labels[0] == labels[1]
                for k, crossing in enumerate(labels):
                    counts.tp[k] += flagged and crossing
                    counts.fp[k] += flagged and not crossing
                    counts.fn[k] += crossing and not flagged
                if flagged and not labels[0] and labels[1]:
                    counts.confirmed.append(f"{set_name}:{hint.id}")
    return counts


def kappa(c: Counts) -> float:
    """Cohen's kappa of the two labellings' crossing / clean."""
    observed = c.agreed / c.hints
    a, b = c.first / c.hints, c.second / c.hints
    chance = a * b + (1 - a) * (1 - b)
    return (observed - chance) / (1 - chance)


def main(argv: list[str] | None = None) -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    c = measure()
    print(f"hints {c.hints}; crossing by the first labelling {c.first}, by the second {c.second}; "
          f"agreement {c.agreed / c.hints:.3f}, Cohen's kappa {kappa(c):.3f}")
    for k, who in enumerate(("first", "second")):
        tp, fp, fn = c.tp[k], c.fp[k], c.fn[k]
        print(f"rules against the {who} labelling: precision {tp / (tp + fp):.3f}, recall {tp / (tp + fn):.3f} "
              f"(tp {tp}, fp {fp}, fn {fn})")
    print(f"the rules' false positives (first labelling) the second labeller calls crossing: "
          f"{len(c.confirmed)} of {c.fp[0]} {c.confirmed}")


if __name__ == "__main__":
    main()
