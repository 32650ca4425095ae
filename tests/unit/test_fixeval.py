"""Hand-worked tests of FixEval's metrics (seed 004): pass@k, TCA@k, exact match without
comments, CodeBLEU and its parts.

The code: report/pass_at_k.py, report/bleu.py (code_only_tokens), report/codebleu.py and
report/codebleu_package.py, and their use in report/precision.py and the report layout.
Every expected number is worked out in a comment from the definitions in
docs/PRECISION.md; "mutation:" names the altered rule a test is there to catch. The
CodeBLEU tests run the real codebleu package (the `test` extra installs it): a missing
package fails them with the install command, never skips them.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pairbench_async.core.errors import ConfigError
from pairbench_async.core.types import Instance, Test
from pairbench_async.report.bleu import code_only_tokens, code_tokens, exact_match
from pairbench_async.report.codebleu import CodeBleu, codebleu_from_parts
from pairbench_async.report.codebleu_package import (
    CODEBLEU_HASH_SEED,
    CODEBLEU_INSTALL,
    codebleu_problem,
    corpus_codebleu,
)
from pairbench_async.report.model import build_report
from pairbench_async.report.pass_at_k import (
    PassAtK,
    pass_at_k,
    pass_at_k_by_model,
    summarise_samples,
    tca_at_k,
)
from pairbench_async.report.precision import exact_match_code, precision_by_model
from pairbench_async.report.sections import report_sections
from pairbench_async.report.trajectory import Trajectory, TurnOutcome
from pairbench_async.runlog.records import EpisodeRecord, Record, TurnRecord

# --------------------------------------------------------------------------- pass@k


def test_pass_at_k_on_three_samples_with_one_correct() -> None:
    # n = 3, c = 1: pass@k = 1 - C(n-c, k) / C(n, k) = 1 - C(2, k) / C(3, k)
    #   k = 1: 1 - 2/3 = 1/3  (the share of correct samples)
    #   k = 2: 1 - 1/3 = 2/3  (two of the three 2-subsets hold the correct sample)
    #   k = 3: 1 - 0/1 = 1    (C(2, 3) = 0: every 3-subset holds it)
    # mutation: the biased 1 - (1 - c/n)^k would give 1 - 4/9 = 5/9 at k = 2.
    assert pass_at_k(3, 1, 1) == pytest.approx(1 / 3, abs=1e-15)
    assert pass_at_k(3, 1, 2) == pytest.approx(2 / 3, abs=1e-15)
    assert pass_at_k(3, 1, 3) == 1.0
    # no correct sample: 0 at every k; all correct: 1 at every k
    assert [pass_at_k(3, 0, k) for k in (1, 2, 3)] == [0.0, 0.0, 0.0]
    assert [pass_at_k(3, 3, k) for k in (1, 2, 3)] == [1.0, 1.0, 1.0]


@pytest.mark.parametrize(("n", "c", "k"), [(3, 1, 0), (3, 1, 4), (3, 4, 1), (3, -1, 1), (0, 0, 1)])
def test_pass_at_k_outside_its_domain_is_a_value_error(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError, match="need"):
        pass_at_k(n, c, k)


@given(st.integers(1, 30).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n),
                                                      st.integers(1, n))))
def test_pass_at_k_equals_the_codex_papers_product_form(nck: tuple[int, int, int]) -> None:
    # Chen et al.'s numerically stable form: 1 - prod_{i = n-c+1..n} (1 - k / i) (1 if n-c < k)
    n, c, k = nck
    product = 1.0 if n - c < k else 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))
    assert pass_at_k(n, c, k) == pytest.approx(product, abs=1e-12)


def test_tca_at_k_averages_the_first_k_samples() -> None:
    # shares 1, 1/2, 0: TCA@1 = 1, TCA@2 = (1 + 1/2)/2 = 3/4, TCA@3 = (1 + 1/2 + 0)/3 = 1/2
    # mutation: best-of-k (pass@k-like) would give 1 at every k.
    assert [tca_at_k([1.0, 0.5, 0.0], k) for k in (1, 2, 3)] == [1.0, 0.75, 0.5]
    with pytest.raises(ValueError, match="need"):
        tca_at_k([1.0], 2)
    with pytest.raises(ValueError, match="need"):
        tca_at_k([1.0], 0)


def traj(instance: str, run: int, *turns: set[str], tests: str = "abcd",
         model: str = "m", protocol: str | None = None) -> Trajectory:
    """An episode whose turn t passes ``turns[t]``, of the tests named by ``tests``' letters."""
    return Trajectory(instance_id=instance, model=model, protocol=protocol, run=run,
                      test_ids=list(tests),
                      turns=[TurnOutcome(turn=t, passed=frozenset(p)) for t, p in enumerate(turns)])


ALL = set("abcd")
# Two instances, three runs each (final = last turn, turn 0 = first):
#   i1, T = {a, b, c, d}
#     run 0: turn 0 {a} (1/4)      -> turn 2 all (1)       final passes
#     run 1: turn 0 {} (0)         -> turn 1 {a, b} (1/2)
#     run 2: turn 0 all (1)        (fixed at turn 0: final = turn 0, passes)
#   i2, T = {x, y}
#     run 0: turn 0 {} (0)         -> turn 1 {x} (1/2)
#     run 1: turn 0 {x} (1/2)      -> turn 1 {x} (1/2)
#     run 2: turn 0 {} (0)         -> turn 1 {} (0)
#
# final programs: i1 shares [1, 1/2, 1], c = 2;  i2 shares [1/2, 1/2, 0], c = 0
#   pass@k  i1: k=1 1 - C(1,1)/C(3,1) = 2/3; k=2 1 - C(1,2)/C(3,2) = 1; k=3 1.   i2: 0, 0, 0
#           mean: 1/3, 1/2, 1/2
#   TCA@k   i1: 1, (1 + 1/2)/2 = 3/4, (1 + 1/2 + 1)/3 = 5/6
#           i2: 1/2, 1/2, (1/2 + 1/2 + 0)/3 = 1/3
#           mean: 3/4, 5/8, (5/6 + 1/3)/2 = 7/12
# turn 0 programs: i1 shares [1/4, 0, 1], c = 1;  i2 shares [0, 1/2, 0], c = 0
#   pass@k  i1: 1/3, 2/3, 1 (the n = 3, c = 1 case above); i2: 0 -> mean 1/6, 1/3, 1/2
#   TCA@k   i1: 1/4, 1/8, 5/12;  i2: 0, 1/4, 1/6 -> mean 1/8, 3/16, 7/24
EPISODES = [
    traj("i1", 2, ALL),  # given out of run order: TCA@k must sort by run (mutation: input order)
    traj("i1", 0, {"a"}, {"a", "b"}, ALL),
    traj("i1", 1, set(), {"a", "b"}),
    traj("i2", 1, {"x"}, {"x"}, tests="xy"),
    traj("i2", 0, set(), {"x"}, tests="xy"),
    traj("i2", 2, set(), set(), tests="xy"),
]


def approx(values: dict[int, float]) -> dict[int, object]:
    return {k: pytest.approx(v, abs=1e-12) for k, v in values.items()}


def test_pass_at_k_and_tca_at_k_of_a_group_by_hand() -> None:
    summary = summarise_samples(EPISODES)
    assert summary is not None
    assert (summary.instances, summary.samples) == (2, 3)
    assert summary.pass_at_k == approx({1: 1 / 3, 2: 1 / 2, 3: 1 / 2})
    assert summary.tca_at_k == approx({1: 3 / 4, 2: 5 / 8, 3: 7 / 12})
    assert summary.initial_pass_at_k == approx({1: 1 / 6, 2: 1 / 3, 3: 1 / 2})
    assert summary.initial_tca_at_k == approx({1: 1 / 8, 2: 3 / 16, 3: 7 / 24})
    decoded = msgspec.json.decode(msgspec.json.encode(summary), type=PassAtK)
    assert decoded == summary


def test_turn_0_of_a_given_start_group_is_no_sample() -> None:
    # FeedbackEval's protocols start from the erroneous program: their turn 0 was written by
    # no model, so the static ("turn 0") pass@k / TCA@k are undefined, not the buggy
    # program's pass rate; the final programs' numbers are unchanged (1/3, 1/2, 1/2 above).
    given = [msgspec.structs.replace(t, given_start=True) for t in EPISODES]
    summary = summarise_samples(given)
    assert summary is not None
    assert summary.initial_pass_at_k is None and summary.initial_tca_at_k is None
    assert summary.pass_at_k == approx({1: 1 / 3, 2: 1 / 2, 3: 1 / 2})


def test_k_runs_up_to_the_fewest_runs_of_any_instance() -> None:
    # i1 keeps its three runs (final shares [1, 1/2, 1], c = 2, n = 3); i2 has two runs,
    # final shares [1 (T = {x, y} both pass), 1/2], c = 1, n = 2. So k = 1, 2 only.
    #   pass@1: i1 2/3, i2 1 - C(1,1)/C(2,1) = 1/2 -> 7/12;  pass@2: i1 1, i2 1 -> 1
    #   TCA@1: i1 1, i2 1 -> 1;  TCA@2: i1 3/4, i2 3/4 -> 3/4
    # mutation: pooling n over the group, or dropping i2.
    episodes = [*EPISODES[:3], traj("i2", 0, set(), {"x", "y"}, tests="xy"),
                traj("i2", 3, {"x"}, tests="xy")]
    summary = summarise_samples(episodes)
    assert summary is not None and summary.samples == 2
    assert summary.pass_at_k == approx({1: 7 / 12, 2: 1.0})
    assert summary.tca_at_k == approx({1: 1.0, 2: 3 / 4})


def test_groups_are_model_and_protocol_and_runs_must_not_repeat() -> None:
    other = [traj("i1", 0, ALL, model="n", protocol="pair"), traj("i1", 0, set(), model="n",
                                                                  protocol="nohint")]
    result = pass_at_k_by_model([*EPISODES, *other])
    assert list(result) == ["m", "n|nohint", "n|pair"]
    assert result["n|pair"].pass_at_k == {1: 1.0} and result["n|nohint"].pass_at_k == {1: 0.0}
    assert summarise_samples([]) is None
    with pytest.raises(ValueError, match="two episodes of run 0"):
        summarise_samples(other)


# --------------------------------------------------------------------------- exact match


def test_code_only_tokens_drop_comments_and_docstrings_by_hand() -> None:
    source = (
        '"""Module doc."""\n'
        "# a comment line\n"
        "def f(a):\n"
        "    '''Function doc,\n"
        "    two lines.'''\n"
        "    return a  # trailing\n"
    )
    # the module docstring with its NEW_LINE, both comments and the function docstring
    # with its NEW_LINE go; the rest is code_tokens as before
    assert code_only_tokens(source) == [
        "def", "f", "(", "a", ")", ":", "NEW_LINE",
        "INDENT", "return", "a", "NEW_LINE", "DEDENT",
    ]  # fmt: skip
    # a body that was only a docstring leaves no empty INDENT DEDENT pair behind
    assert code_only_tokens('def g():\n    """Only a doc."""\nx = 1\n') == [
        "def", "g", "(", ")", ":", "NEW_LINE", "x", "=", "1", "NEW_LINE",
    ]  # fmt: skip


def test_exact_match_without_comments_beside_the_exact_match() -> None:
    reference = "def f(a, b):\n    return a + b\n"
    commented = '# add\ndef f(a, b):\n    """Sum."""\n    return a + b  # done\n'
    assert not exact_match(commented, reference)  # comments are content for EM
    assert exact_match_code(commented, reference)  # not for EM without comments
    assert exact_match_code("def f(a,b):\n  return a+b\n\n", reference)  # whitespace as EM
    # code still counts: a changed operator, a string that is a value, not a statement
    assert not exact_match_code("def f(a, b):\n    return a - b  # sum\n", reference)
    assert not exact_match_code('x = "a"\n', 'x = "b"\n')
    assert not exact_match_code('x = "a"\n', "x =\n")  # mutation: dropping every string
    # a string alone on a physical line inside brackets is an argument, not a docstring
    assert not exact_match_code('f(\n    "x"\n)\n', "f()\n")
    # prefixed and single-quoted docstrings go too
    assert exact_match_code("r'doc'\nx = 1\n", "x = 1\n")
    # text tokenize rejects still compares (the regex fallback): comment dropped
    assert exact_match_code("if x:\n    y = f(1,  # c\n", "if x:\n    y = f(1,\n")


def test_exact_match_code_rate_per_model_by_hand() -> None:
    # Two finished episodes on instance i1 (reference "x = 1\ny = x\n"):
    #   A final = reference + "# checked"      EM no (a comment), EM w/o comments yes
    #   B final = "x = 1\ny = 2\n"             neither
    # exact_match_rate 0/2 = 0, exact_match_code_rate 1/2. mutation: keeping comments.
    reference = "x = 1\ny = x\n"
    inst = Instance(id="i1", problem="p", buggy="x = 1\ny = 1\n", reference=reference,
                    tests=[Test(id="t1", input="", output="")], kind="stdio", time_limit=1.0,
                    memory_limit_mb=64)
    records: list[Record] = [
        turn_record("A", 0, "i1", reference + "# checked\n", ["t1"], []), end("A", "i1"),
        turn_record("B", 0, "i1", "x = 1\ny = 2\n", [], ["t1"]), end("B", "i1"),
    ]
    summary = precision_by_model(records, {"i1": inst})["m"]
    assert (summary.exact_match_rate, summary.exact_match_code_rate) == (0.0, 0.5)
    assert summary.codebleu is None  # no scorer given


# --------------------------------------------------------------------------- CodeBLEU


@pytest.fixture
def package() -> None:
    problem = codebleu_problem()
    if problem is not None:
        pytest.fail(problem)


def test_codebleu_is_the_mean_of_its_four_parts() -> None:
    # (1/4)(0.5 + 0.25 + 1 + 0) = 0.4375: a dataflow match of 0 counts 0
    # (mutation: the package's `dataflow or 1` would give 0.6875)
    assert codebleu_from_parts(0.5, 0.25, 1.0, 0.0).codebleu == 0.4375
    # no reference data flow at all: the term counts 1, as the package does -> 0.6875
    undefined = codebleu_from_parts(0.5, 0.25, 1.0, None)
    assert (undefined.codebleu, undefined.dataflow_match) == (0.6875, None)
    with pytest.raises(ValueError, match="outside"):
        codebleu_from_parts(1.5, 0.0, 0.0, 0.0)


# Pair A: reference "y = x\nz = y", candidate "y = x\nz = x".
#   code tokens r = [y = x NL z = y NL], c = [y = x NL z = x NL] (8 each; NL = NEW_LINE)
#   n-gram (BLEU-4, clipped precision):
#     p1: c has y1 =2 x2 NL2 z1, r has y2 =2 x1 NL2 z1 -> min: 1+2+1+2+1 = 7/8
#     p2: c bigrams y= =x xNL NLz z= =x xNL; r has y= =x xNL NLz z= =y yNL
#         -> y=, =x (once), xNL (once), NLz, z= = 5/7
#     p3: c y=x =xNL xNLz NLz= z=x =xNL; r y=x =xNL xNLz NLz= z=y =yNL -> 4/6
#     p4: c y=xNL =xNLz xNLz= NLz=x z=xNL; r y=xNL =xNLz xNLz= NLz=y z=yNL -> 3/5
#     BP 1 (8 = 8); BLEU = (7/8 · 5/7 · 4/6 · 3/5)^(1/4) = (1/4)^(1/4) = 2^(-1/2)
#   weighted n-gram: recall, unigrams weighted 0.2 (no Python keyword here), so
#     p1 = 0.2·7 / 0.2·8 = 7/8 and the higher orders are the same counts over r -> 2^(-1/2)
#   syntax: both trees are (module (expression_statement (assignment left: (identifier)
#     right: (identifier))) x2): the 5 non-leaf subtrees of r are all in c -> 1
#   dataflow (variables renamed in order of appearance: x var_0, y var_1, z var_2):
#     r: y <- x, x (no source), z <- y, y (use) <- y (def)
#     c: y <- x, x (no source), z <- x, x (use) <- x (def)
#     the first two match, "z <- y" (var_2 <- var_1) and "var_1 <- var_1" do not -> 2/4
#   CodeBLEU = (2^(-1/2) + 2^(-1/2) + 1 + 1/2) / 4
PAIR_A = ("y = x\nz = x\n", "y = x\nz = y\n")
# Pair B: reference "if a:\n    x = 1", candidate "if b:\n    x = 1".
#   r = [if a : NL INDENT x = 1 NL DEDENT], c the same with b (10 tokens each)
#   n-gram: p1 9/10 (all but a/b); each n-gram through a/b misses:
#     p2 7/9, p3 6/8, p4 5/7 -> (9/10 · 7/9 · 6/8 · 5/7)^(1/4) = (3/8)^(1/4)
#   weighted: "if" is a Python keyword (weight 1), the other 8 distinct tokens 0.2:
#     p1 = (1 + 0.2·8) / (1 + 0.2·9) = 2.6/2.8 = 13/14 -> (13/14 · 7/9 · 6/8 · 5/7)^(1/4)
#     = (65/168)^(1/4)
#   syntax 1 (identifiers are leaves; the 5 subtrees match); dataflow: x <- 1, 1 -> 2/2
#   CodeBLEU = ((3/8)^(1/4) + (65/168)^(1/4) + 1 + 1) / 4
PAIR_B = ("if b:\n    x = 1\n", "if a:\n    x = 1\n")


def expected(ngram: float, weighted: float, syntax: float, dataflow: float) -> CodeBleu:
    return CodeBleu(codebleu=(ngram + weighted + syntax + dataflow) / 4, ngram_match=ngram,
                    weighted_ngram_match=weighted, syntax_match=syntax, dataflow_match=dataflow)


def same(got: CodeBleu, want: CodeBleu) -> None:
    for field in CodeBleu.__struct_fields__:
        assert getattr(got, field) == pytest.approx(getattr(want, field), abs=1e-12), field


def package_parts(pairs: list[tuple[str, str]]) -> dict[str, float]:
    """The codebleu package's own output, called directly."""
    from codebleu import calc_codebleu

    return dict(calc_codebleu([r for _, r in pairs], [c for c, _ in pairs], lang="python",
                              tokenizer=code_tokens))


@pytest.mark.usefixtures("package")
@pytest.mark.parametrize(("pair", "want"), [
    (PAIR_A, expected(2 ** -0.5, 2 ** -0.5, 1.0, 0.5)),
    (PAIR_B, expected((3 / 8) ** 0.25, (65 / 168) ** 0.25, 1.0, 1.0)),
])
def test_codebleu_of_two_tiny_snippets_by_hand_and_by_the_package(
        pair: tuple[str, str], want: CodeBleu) -> None:
    got = corpus_codebleu([pair])
    same(got, want)
    theirs = package_parts([pair])
    assert theirs == pytest.approx({
        "codebleu": got.codebleu, "ngram_match_score": got.ngram_match,
        "weighted_ngram_match_score": got.weighted_ngram_match,
        "syntax_match_score": got.syntax_match, "dataflow_match_score": got.dataflow_match,
    }, abs=1e-12)


@pytest.mark.usefixtures("package")
def test_corpus_codebleu_sums_counts_over_the_pairs() -> None:
    # A and B together (18 candidate and 18 reference tokens, BP 1):
    #   n-gram p1 (7+9)/(8+10) = 8/9, p2 (5+7)/(7+9) = 3/4, p3 (4+6)/(6+8) = 5/7,
    #     p4 (3+5)/(5+7) = 2/3 -> (8/9 · 3/4 · 5/7 · 2/3)^(1/4) = (20/63)^(1/4)
    #   weighted p1 (1.4 + 2.6)/(1.6 + 2.8) = 10/11, then 3/4, 5/7, 2/3 -> (25/77)^(1/4)
    #   syntax (5 + 5)/(5 + 5) = 1; dataflow (2 + 2)/(4 + 2) = 2/3
    # mutation: averaging the two pairs' scores instead (dataflow would be 3/4).
    same(corpus_codebleu([PAIR_A, PAIR_B]),
         expected((20 / 63) ** 0.25, (25 / 77) ** 0.25, 1.0, 2 / 3))


@pytest.mark.usefixtures("package")
def test_a_dataflow_match_of_zero_counts_zero_unlike_the_package() -> None:
    # reference "x = 1" has two flows (x <- 1, and 1); print(1) has neither -> DM 0/2 = 0.
    # We count that 0 (Ren et al.); the package's `dataflow or 1` counts it 1: exactly
    # 1/4 more than ours.
    pair = ("print(1)\n", "x = 1\n")
    got = corpus_codebleu([pair])
    assert got.dataflow_match == 0.0
    assert package_parts([pair])["codebleu"] == pytest.approx(got.codebleu + 0.25, abs=1e-12)


@pytest.mark.usefixtures("package")
def test_no_reference_data_flow_is_undefined_and_counts_one_as_in_the_package() -> None:
    # reference print(1) has no data-flow edge: DM undefined (None), its term counts 1
    pair = ("x = 1\n", "print(1)\n")
    got = corpus_codebleu([pair])
    assert got.dataflow_match is None
    assert got.codebleu == pytest.approx(package_parts([pair])["codebleu"], abs=1e-12)
    with pytest.raises(ValueError, match="no programs"):
        corpus_codebleu([])


def _shadow(monkeypatch: pytest.MonkeyPatch, folder: Path, package: str, source: str) -> None:
    """A package of this name, first on the path of the process that runs the codebleu
    package (a child: the hash seed is fixed there), with ``source`` as its code."""
    (folder / package).mkdir(parents=True)
    (folder / package / "__init__.py").write_text(source)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")])))


def test_without_the_package_codebleu_says_how_to_install_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _shadow(monkeypatch, tmp_path, "codebleu", "raise ImportError(\"No module named 'codebleu'\")\n")
    problem = codebleu_problem()
    assert problem is not None and CODEBLEU_INSTALL in problem
    with pytest.raises(ConfigError, match="pairbench_async\\[codebleu\\]"):
        corpus_codebleu([PAIR_A])


@pytest.mark.usefixtures("package")
def test_a_parser_too_new_for_tree_sitter_is_reported_not_raised(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # tree-sitter-python 0.23+ hands tree-sitter 0.22 an object it rejects (TypeError)
    _shadow(monkeypatch, tmp_path, "tree_sitter_python", "def language():\n    return object()\n")
    problem = codebleu_problem()
    assert problem is not None and "does not work here" in problem and CODEBLEU_INSTALL in problem


@pytest.mark.usefixtures("package")
def test_precision_scores_each_groups_final_programs_as_one_codebleu_corpus() -> None:
    # two episodes of m on i1 (reference A's), finals A's candidate and the reference itself:
    # the group's CodeBLEU is corpus_codebleu of those two pairs, not of every turn
    # (turn 0's "z = 0" is not a final program). mutation: scoring the last episode only.
    candidate, reference = PAIR_A
    inst = Instance(id="i1", problem="p", buggy="y = x\nz = 0\n", reference=reference,
                    tests=[Test(id="t1", input="", output="")], kind="stdio", time_limit=1.0,
                    memory_limit_mb=64)
    records: list[Record] = [
        turn_record("A", 0, "i1", "y = x\nz = 0\n", [], ["t1"]),
        turn_record("A", 1, "i1", candidate, [], ["t1"]), end("A", "i1"),
        turn_record("B", 0, "i1", reference, ["t1"], []), end("B", "i1"),
    ]
    summary = precision_by_model(records, {"i1": inst}, codebleu=corpus_codebleu)["m"]
    assert summary.codebleu == corpus_codebleu([(candidate, reference), (reference, reference)])
    assert summary.codebleu != corpus_codebleu([(reference, reference)])


# --------------------------------------------------------------------------- in the report


def turn_record(episode: str, turn: int, instance: str, program: str, passed: list[str],
                failed: list[str], *, run: int = 0, model: str = "m") -> TurnRecord:
    return TurnRecord(run_id="r", episode_id=episode, instance_id=instance, model=model,
                      protocol="pair", run=run, seed=run, turn=turn, program=program,
                      passed=passed, failed=failed,
                      pass_rate=len(passed) / max(1, len(passed) + len(failed)))


def end(episode: str, instance: str, *, run: int = 0, model: str = "m") -> EpisodeRecord:
    return EpisodeRecord(run_id="r", episode_id=episode, instance_id=instance, model=model,
                         protocol="pair", run=run, seed=run, status="done", turns=1)


def records_of(trajectories: list[Trajectory]) -> list[Record]:
    out: list[Record] = []
    for t in trajectories:
        eid = f"{t.instance_id}-{t.run}"
        for outcome in t.turns:
            passed = sorted(outcome.passed)
            out.append(turn_record(eid, outcome.turn, t.instance_id, "x = 1\n", passed,
                                   sorted(set(t.test_ids) - set(passed)), run=t.run))
        out.append(end(eid, t.instance_id, run=t.run))
    return out


def test_the_report_section_shows_the_hand_worked_numbers() -> None:
    # EPISODES as records: the section's execution table has, for model m (protocol pair),
    # final: pass@1..3 = 33.33, 50.00, 50.00; TCA@1..3 = 75.00, 62.50, 58.33
    # turn 0: pass@1..3 = 16.67, 33.33, 50.00; TCA@1..3 = 12.50, 18.75, 29.17
    report = build_report(records_of(EPISODES), precision_note="CodeBLEU: " + CODEBLEU_INSTALL)
    section = next(s for s in report_sections(report) if s.id == "fixeval")
    table = section.tables[-1]
    assert table.header[3:] == ["pass@1 (%) ↑", "pass@2 (%) ↑", "pass@3 (%) ↑", "TCA@1 (%) ↑",
                                "TCA@2 (%) ↑", "TCA@3 (%) ↑", "Instances", "Runs (n)"]
    rows = [[cell.text for cell in row] for row in table.rows]
    assert rows == [
        ["m", "pair", "final", "33.33", "50.00", "50.00", "75.00", "62.50", "58.33", "2", "3"],
        ["", "", "turn 0", "16.67", "33.33", "50.00", "12.50", "18.75", "29.17", "2", "3"],
    ]
    assert section.notes == ["CodeBLEU: " + CODEBLEU_INSTALL]
    assert len(section.tables) == 1  # no match-based table without the dataset's scores


_FLOW_REF = """def f(xs, k):
    best = 0
    total = 0
    for x in xs:
        if x > k:
            total = total + x
        else:
            total = total - k
        best = max(best, total)
    return best
"""
_FLOW_CAND = _FLOW_REF.replace("x > k", "x >= k").replace("total - k", "k - total").replace(
    "max(best, total)", "max(total, best)")


def test_the_dataflow_match_is_one_number_whatever_the_hash_seed() -> None:
    # The package merges a variable's parents with list(set(...)): with Python's string
    # hashing varying per process, this pair scored 0.90, 0.95 or 1.00 in different
    # processes (the same report printed different CodeBLEU twice). Scored in processes
    # with four different hash seeds, it must be one value.
    import os
    import subprocess

    script = ("import sys\nfrom pairbench_async.report.codebleu_package import corpus_codebleu\n"
              "ref, cand = sys.argv[1], sys.argv[2]\n"
              "print(repr(corpus_codebleu([(cand, ref)]).dataflow_match))\n")
    seen = {subprocess.run([sys.executable, "-c", script, _FLOW_REF, _FLOW_CAND], check=True,
                           capture_output=True, text=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}).stdout.strip()
            for seed in ("1", "3", "6", "9")}  # the package alone: 1.00, 0.95, 0.90, 1.00
    assert len(seen) == 1, seen


@pytest.mark.usefixtures("package")
def test_codebleu_is_the_packages_own_output_under_the_fixed_hash_seed() -> None:
    # an outside recomputation: the package called directly, in a process of its own with
    # the hash seed the report uses; all four parts equal, the dataflow one included
    import subprocess
    import sys

    script = ("import json, sys\nfrom codebleu import calc_codebleu\n"
              "from pairbench_async.report.bleu import code_tokens\n"
              "print(json.dumps(calc_codebleu([sys.argv[1]], [sys.argv[2]], lang='python', "
              "tokenizer=code_tokens)))\n")
    theirs = json.loads(subprocess.run(
        [sys.executable, "-c", script, _FLOW_REF, _FLOW_CAND], check=True, capture_output=True, text=True,
        env={**os.environ, "PYTHONHASHSEED": CODEBLEU_HASH_SEED}).stdout)
    ours = corpus_codebleu([(_FLOW_CAND, _FLOW_REF)])
    assert (ours.ngram_match, ours.weighted_ngram_match, ours.syntax_match, ours.dataflow_match,
            ours.codebleu) == (theirs["ngram_match_score"], theirs["weighted_ngram_match_score"],
                               theirs["syntax_match_score"], theirs["dataflow_match_score"], theirs["codebleu"])


def test_compilation_accuracy_is_the_share_of_final_programs_that_compile() -> None:
    # FixEval: "the percentage of generated program fixes that can be run without any
    # compilation error". By hand: two episodes, finals "x = 1" (compiles) and "def (:"
    # (a SyntaxError; turn 0 compiled, but only the final program counts): CA = 1/2.
    inst = Instance(id="i1", problem="p", buggy="x = 0\n", reference="x = 1\n",
                    tests=[Test(id="t1", input="", output="")], kind="stdio", time_limit=1.0,
                    memory_limit_mb=64)
    records: list[Record] = [
        turn_record("A", 0, "i1", "x = 0\n", [], ["t1"]), turn_record("A", 1, "i1", "x = 1\n", ["t1"], []),
        end("A", "i1"),
        turn_record("B", 0, "i1", "x = 0\n", [], ["t1"]), turn_record("B", 1, "i1", "def (:\n", [], ["t1"]),
        end("B", "i1"),
    ]
    assert precision_by_model(records, {"i1": inst})["m"].compilation_accuracy == 0.5


def test_the_naive_copy_scores_each_buggy_program_as_its_own_fix() -> None:
    # FixEval's Naive Copy: "the input buggy code is copied to the output". By hand, on two
    # instances: one whose buggy program differs from its reference (no exact match, compiles),
    # one whose buggy program does not compile: EM 0, CA 1/2, BLEU the mean of the two
    # programs' sentence BLEU against their references, nothing edited (precision undefined).
    from pairbench_async.report.precision import NAIVE_COPY, bleu, naive_copy

    a = Instance(id="a", problem="p", buggy="total = 0\nprint(total + 1)\n", reference="total = 0\nprint(total)\n",
                 tests=[Test(id="t", input="", output="0\n")], kind="stdio", time_limit=1.0, memory_limit_mb=64)
    b = msgspec.structs.replace(a, id="b", buggy="print(0\n")
    s = naive_copy([a, b])
    assert s.episodes == 2 and s.exact_match_rate == 0.0 and s.compilation_accuracy == 0.5
    assert s.edit_precision is None and s.turns == 0
    assert s.bleu == pytest.approx((bleu(a.buggy, a.reference) + bleu(b.buggy, b.reference)) / 2)
    assert NAIVE_COPY.startswith("Naive Copy")
    with pytest.raises(ValueError):
        naive_copy([])
