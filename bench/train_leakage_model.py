"""Fit the leakage validator's learned half on the committed labelled hints, and measure it.

    python -m bench.train_leakage_model [--write] [--evaluate SET.jsonl ...]

Training data: every labelled set in ``tests/data`` (``labelled_hints*.jsonl``). The model's one free choice (the
regularisation C), its threshold and the threshold of one sentence read on its own are chosen on out-of-fold predictions, folds grouped by set (a set's hints
never train the fold that scores them: ten folds), as the C and threshold with the highest recall at an
out-of-fold precision of at least ``--precision`` (0.93 by default: the 0.9 target with a margin; out-of-fold figures ran 0.01-0.06 above the next unseen sets). Printed: the
out-of-fold figures per C and threshold. ``--write`` fits the chosen model on every set and writes
``pairbench_async/protocol/leakage_model_data.py`` (the model's JSON, zlib-compressed, base85, with its
provenance). ``--evaluate`` scores the packaged model,
the rules, and the validator's default (rules' exact checks and the model) on sets the model never trained on,
with the package's own inference: the first measurement of a set written after the model.

Needs scikit-learn (``pip install -e '.[train]'``); the package itself only reads the written file.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import sys
import zlib
from pathlib import Path
from typing import Final

import numpy as np

from pairbench_async.protocol.boundaries import BOUNDARY_NAMES
from pairbench_async.protocol.hint_labels import LabelledSet, parse_labelled_set
from pairbench_async.protocol.leakage_model import LeakageModel, features, sentences

ROOT: Final = Path(__file__).resolve().parent.parent
DATA: Final = ROOT / "tests" / "data"
OUT: Final = ROOT / "pairbench_async" / "protocol" / "leakage_model_data.py"
CS: Final = (1.0, 4.0, 16.0)
THRESHOLDS: Final = tuple(round(0.30 + 0.05 * i, 2) for i in range(11))


def load(paths: list[Path]) -> tuple[list[list[str]], np.ndarray, dict[str, np.ndarray], list[str],
                                     list[list[list[str]]]]:
    docs: list[list[str]] = []
    parts: list[list[list[str]]] = []
    crossing: list[bool] = []
    per: dict[str, list[bool]] = {b: [] for b in BOUNDARY_NAMES}
    groups: list[str] = []
    for path in paths:
        labelled: LabelledSet = parse_labelled_set(path.open("rb"))
        for hint in labelled.hints:
            task = labelled.tasks[hint.task]
            docs.append(features(hint.text, hint.level, task.problem, task.program, task.reference))
            split = sentences(hint.text)
            parts.append([features(t, hint.level, task.problem, task.program, task.reference) for t in split]
                         if len(split) > 1 else [])
            crossing.append(bool(hint.broken))
            for b in BOUNDARY_NAMES:
                per[b].append(b in hint.broken)
            groups.append(path.stem)
    return docs, np.array(crossing), {b: np.array(v) for b, v in per.items()}, groups, parts


def _vectorizer():  # noqa: ANN202
    from sklearn.feature_extraction.text import TfidfVectorizer
    return TfidfVectorizer(analyzer=lambda doc: doc, min_df=3, sublinear_tf=True, norm="l2")


def _fit(x, y, c: float):  # noqa: ANN001, ANN202
    from sklearn.linear_model import LogisticRegression
    return LogisticRegression(C=c, max_iter=5000).fit(x, y)


def out_of_fold(docs: list[list[str]], y: np.ndarray, groups: list[str], c: float,
                parts: list[list[list[str]]]) -> tuple[np.ndarray, np.ndarray]:
    """Out-of-fold chances of crossing: the whole hint's, and the highest of its sentences' (0: one sentence)."""
    from sklearn.model_selection import GroupKFold
    p = np.zeros(len(docs))
    best = np.zeros(len(docs))
    for train, test in GroupKFold(n_splits=10).split(docs, y, groups):
        vec = _vectorizer()
        xtr = vec.fit_transform([docs[i] for i in train])
        model = _fit(xtr, y[train], c)
        p[test] = model.predict_proba(vec.transform([docs[i] for i in test]))[:, 1]
        for i in test:
            best[i] = max(model.predict_proba(vec.transform(parts[i]))[:, 1]) if parts[i] else 0.0
    return p, best


def _pr(pred: np.ndarray, y: np.ndarray) -> tuple[float, float, int, int, int]:
    tp = int((pred & y).sum())
    fp = int((pred & ~y).sum())
    fn = int((~pred & y).sum())
    return tp / max(tp + fp, 1), tp / max(tp + fn, 1), tp, fp, fn


def choose(docs: list[list[str]], y: np.ndarray, groups: list[str], floor: float,
           parts: list[list[list[str]]]) -> tuple[float, float, float, dict]:
    """C, the threshold and the sentence threshold (2.0: sentences not read on their own): the highest
    out-of-fold recall at precision >= ``floor``."""
    table = {}
    best = None
    for c in CS:
        whole, sentence = out_of_fold(docs, y, groups, c, parts)
        for t in THRESHOLDS:
            for ts in (*(x for x in THRESHOLDS if x >= t), 0.8, 0.85, 0.9, 0.95, 2.0):
                precision, recall, tp, fp, fn = _pr((whole > t) | (sentence > ts), y)
                name = f"C={c} t={t} ts={ts}"
                table[name] = {"precision": round(precision, 4), "recall": round(recall, 4),
                               "tp": tp, "fp": fp, "fn": fn}
                key = (precision >= floor, recall if precision >= floor else precision)
                if best is None or key > best[0]:
                    best = (key, c, t, ts)
            shown = [f"ts={ts}: {table[f'C={c} t={t} ts={ts}']['precision']:.3f}/"
                     f"{table[f'C={c} t={t} ts={ts}']['recall']:.3f}" for ts in (t, 0.8, 0.9, 2.0) if ts >= t]
            print(f"  C={c:5} t={t:.2f}  out-of-fold P/R  " + "  ".join(shown))
    assert best is not None
    return best[1], best[2], best[3], table


def fit_model(docs: list[list[str]], y: np.ndarray, per: dict[str, np.ndarray], c: float, threshold: float,
              sentence_threshold: float, provenance: dict) -> LeakageModel:
    vec = _vectorizer()
    x = vec.fit_transform(docs)
    outputs = {"crossing": y, **per}
    fitted = {name: _fit(x, target, c) for name, target in outputs.items() if target.any()}
    terms = {term: int(i) for term, i in vec.vocabulary_.items()}
    return LeakageModel(
        terms=terms, idf=[round(float(v), 6) for v in vec.idf_],
        weights={name: [round(float(w), 6) for w in m.coef_[0]] for name, m in fitted.items()},
        intercepts={name: round(float(m.intercept_[0]), 6) for name, m in fitted.items()},
        threshold=threshold, sentence_threshold=sentence_threshold, provenance=provenance)


def evaluate(paths: list[Path]) -> None:
    from pairbench_async.protocol.hint_labels import rule_prediction, score, validator_prediction
    for label, predict in (("rules (validate_hint)", rule_prediction), ("validator (default)", validator_prediction)):
        hints, predicted = [], {}
        print(f"{label}:")
        for path in paths:
            labelled = parse_labelled_set(path.open("rb"))
            p = {h.id: predict(h, labelled.tasks[h.task]) for h in labelled.hints}
            overall = {s.name: s for s in score(labelled.hints, p)}["overall"]
            print(f"  {path.name}: P={overall.precision:.2f} R={overall.recall:.2f}")
            hints += labelled.hints
            predicted.update(p)
        for s in score(hints, predicted):
            print(f"  {s.name:14s} P={s.precision if s.precision is None else round(s.precision, 3)} "
                  f"R={s.recall if s.recall is None else round(s.recall, 3)} tp={s.tp} fp={s.fp} fn={s.fn}")


def write_module(model: LeakageModel) -> None:
    """The model as a module of data: its JSON compressed, in base85 lines of 96 characters."""
    import msgspec
    packed = base64.b85encode(zlib.compress(msgspec.json.encode(model), 9)).decode()
    lines = [packed[i:i + 96] for i in range(0, len(packed), 96)]
    body = "\n".join(f'    b"{line}"' for line in lines)
    OUT.write_text(
        '"""The learned reading\'s fitted model (:mod:`.leakage_model`): data, not code. Written by\n'
        '``python -m bench.train_leakage_model --write`` from the labelled sets in ``tests/data``; do not edit.\n'
        'The model\'s JSON (its provenance: the sets, the choice of C and threshold, their out-of-fold figures),\n'
        'zlib-compressed, in base85."""\n\n'
        "from typing import Final\n\n"
        f"MODEL: Final = (\n{body}\n)\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", action="store_true", help=f"write {OUT.relative_to(ROOT)}")
    parser.add_argument("--precision", type=float, default=0.93, help="out-of-fold precision to hold [0.93]")
    parser.add_argument("--evaluate", nargs="+", type=Path, help="score the packaged model on these sets")
    args = parser.parse_args(argv)
    if args.evaluate:
        evaluate(args.evaluate)
        return 0
    paths = sorted(DATA.glob("labelled_hints*.jsonl"))
    docs, y, per, groups, parts = load(paths)
    print(f"{len(docs)} hints ({int(y.sum())} crossing) from {len(paths)} sets; out-of-fold, grouped by set:")
    c, threshold, sentence_threshold, table = choose(docs, y, groups, args.precision, parts)
    print(f"chosen: C={c}, threshold {threshold}, sentence threshold {sentence_threshold}")
    if args.write:
        provenance = {"trained": datetime.date.today().isoformat(), "sets": [p.name for p in paths],
                      "hints": len(docs), "C": c, "threshold": threshold, "precision_floor": args.precision,
                      "sentence_threshold": sentence_threshold,
                      "out_of_fold": table[f"C={c} t={threshold} ts={sentence_threshold}"],
                      "command": "python -m bench.train_leakage_model --write"}
        model = fit_model(docs, y, per, c, threshold, sentence_threshold, provenance)
        write_module(model)
        print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size // 1024} KiB, {len(model.terms)} terms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
