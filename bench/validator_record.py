"""The leakage rules' record on hints never seen, reproduced from git history (revision 19's data).

    python -m bench.validator_record [--folds]

Each round below is the revision that first measured a blind set (its tree at the commit named, taken with
``git archive``), run on that set's hints in a subprocess: the reasons it gave, the first time anyone's rules met
them. Printed: each (kind, level) cell's right / wrong / right alone / wrong alone (alone: the kind's boundary was
the only one the hint was flagged for), the cells whose record is worse than a coin (wrong alone at least twice
and more often than right alone), and with ``--folds`` the leave-one-round-out estimate of dropping such cells
(chosen on three rounds, the fourth scored before and after). Revision 19 read this record: the cells are mostly
readings that the unit tests' Table II examples need (dropping all eight failed 71 of them), so only the code
span below L3 was narrowed, structurally (``leakage_patterns.writes_python``). Needs a clone with history (not a
shallow one). Measures; changes nothing.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterable
from io import BytesIO
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parent.parent
DATA: Final = ROOT / "tests" / "data"

#: where a reason's kind ends: the first quote or bracket of what it cites
_CITED: Final = re.compile(r"\s*[`'\"(].*", re.DOTALL)


def reason_kind(reason: str) -> str:
    """A reason's kind, its rule and reading without what it cites."""
    return _CITED.sub("", reason).strip()


def untrusted_cells(record: Iterable[dict[str, object]], least: int = 2) -> frozenset[tuple[str, int]]:
    """(kind, level) cells wrong alone at least ``least`` times and more often than right alone."""
    return frozenset(cell for cell, (_, _, right, wrong) in _cells(list(record)).items()
                     if wrong >= least and wrong > right)


#: (revision, commit of its tree when it first measured the sets, the sets)
ROUNDS: Final = (
    ("14", "d24c1df", (30, 33, 34)),
    ("15", "f50c2f3", (35, 36, 37, 38)),
    ("16", "b54b750", (39, 40, 41, 42, 43, 44)),
    ("18", "6876e99", (45, 46, 47)),
)

#: run inside the old tree: one JSON row per hint with the reasons it got
_PROBE: Final = """
import json, sys
from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.hint_labels import _hidden, parse_labelled_set
from pairbench_async.protocol.leakage import validate_hint
for path in sys.argv[1:]:
    labelled = parse_labelled_set(open(path, 'rb'))
    for h in labelled.hints:
        t = labelled.tasks[h.task]
        reasons = validate_hint(h.text, h.level, Evidence(problem=t.problem), t.program, _hidden(t.reference))
        print(json.dumps({"id": h.id, "level": h.level, "broken": sorted(h.broken), "reasons": reasons}))
"""


def _tree(commit: str, into: Path) -> None:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "pairbench_async"],
                             check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")


def record() -> list[dict[str, object]]:
    """Every round's flagged hints: revision, set, id, level, label, reasons and their kinds."""
    rows: list[dict[str, object]] = []
    for revision, commit, sets in ROUNDS:
        with tempfile.TemporaryDirectory() as tmp:
            _tree(commit, Path(tmp))
            paths = [str(DATA / f"labelled_hints_fresh{n}.jsonl") for n in sets]
            out = subprocess.run([sys.executable, "-c", _PROBE, *paths], check=True, capture_output=True,
                                 text=True, cwd=tmp, env={"PYTHONPATH": tmp, "PATH": "/usr/bin:/bin"}).stdout
        for line in out.splitlines():
            row = json.loads(line)
            if row["reasons"]:
                kinds = sorted({reason_kind(reason) for reason in row["reasons"]})
                rows.append({"revision": revision, **row, "kinds": kinds})
    return rows


def _cells(rows: list[dict[str, object]]) -> dict[tuple[str, int], list[int]]:
    table: dict[tuple[str, int], list[int]] = {}
    for row in rows:
        kinds = row["kinds"]
        alone = len({str(kind).split(":", 1)[0] for kind in kinds}) == 1  # type: ignore[attr-defined]
        for kind in kinds:  # type: ignore[attr-defined]
            counts = table.setdefault((kind, int(row["level"])), [0, 0, 0, 0])  # type: ignore[call-overload]
            wrong = not row["broken"]
            counts[wrong] += 1
            counts[2 + wrong] += alone
    return table


def _score(rows: list[dict[str, object]], drop: frozenset[tuple[str, int]]) -> tuple[int, int, int, int]:
    """Flagged hints right / wrong, before and after dropping ``drop``'s readings."""
    right = wrong = right_after = wrong_after = 0
    for row in rows:
        crossing = bool(row["broken"])
        kept = [k for k in row["kinds"] if (k, row["level"]) not in drop]  # type: ignore[attr-defined]
        right += crossing
        wrong += not crossing
        right_after += crossing and bool(kept)
        wrong_after += (not crossing) and bool(kept)
    return right, wrong, right_after, wrong_after


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folds", action="store_true", help="leave-one-round-out estimate")
    args = parser.parse_args(argv)
    rows = record()
    print("right wrong right-alone wrong-alone  level kind")
    for (kind, level), (r, w, ra, wa) in sorted(_cells(rows).items(), key=lambda x: (x[1][2] - x[1][3], x[0])):
        if w:
            print(f"{r:5d} {w:5d} {ra:11d} {wa:11d}  L{level}    {kind}")
    drop = untrusted_cells(rows)
    print("\ncells worse than a coin:", *sorted(drop), sep="\n  ")
    if args.folds:
        total = [0, 0, 0, 0]
        print("\nleave one round out (cells chosen on the other rounds): flagged right/wrong, precision")
        for revision, _, _ in ROUNDS:
            held = [row for row in rows if row["revision"] == revision]
            cells = untrusted_cells(row for row in rows if row["revision"] != revision)
            s = _score(held, cells)
            total = [a + b for a, b in zip(total, s, strict=True)]
            print(f"  revision {revision}: {len(cells)} cells; before {s[0]}/{s[1]} P={s[0] / (s[0] + s[1]):.3f}; "
                  f"after {s[2]}/{s[3]} P={s[2] / (s[2] + s[3]):.3f}")
        print(f"  pooled: before P={total[0] / (total[0] + total[1]):.3f}; after P={total[2] / (total[2] + total[3]):.3f}"
              f" ({total[0] - total[2]} true positives lost)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
