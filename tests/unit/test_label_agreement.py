"""The second labelling of fresh39-44 (bench/label_agreement.py): it covers every hint, names only Table II's
boundaries, and its agreement with the first is what the docs say (docs/PROTOCOL.md, "A second labeller")."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.label_agreement import kappa, measure, second_labels


def test_the_second_labelling_agrees_as_documented() -> None:
    counts = measure()
    assert counts.hints == 432
    assert (counts.first, counts.second, counts.agreed) == (211, 210, 427)
    assert kappa(counts) == pytest.approx(0.977, abs=0.001)
    # the rules' errors are their own: all but one false positive is clean by both labellers
    assert len(counts.confirmed) <= 1 and counts.fp[1] <= counts.fp[0]


def test_a_second_label_with_an_unknown_boundary_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text('{"id": "a", "broken": []}\n{"id": "b", "broken": ["syntax"]}\n')
    with pytest.raises(ValueError, match=r"labels.jsonl:2: field 'broken'"):
        second_labels(path)
