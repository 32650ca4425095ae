"""Attacks on the leakage validator's default (the learned reading, :func:`.leakage.validate_hint`), brief of
2026-11-27: each test is a class of hint it gets wrong, seen on main (56f9d0a), with its count.

Measured on the labelled sets the model never trained on (fresh66-71: 432 hints, 210 leaky; its provenance
lists fresh1-65), transforming each hint whose verdict was right and counting the verdicts that change. The
hints keep their meaning under each transformation, so a right verdict should not change.


Stop 34: the fourth model (the packaged one) was trained on fresh66-71 too, so the hints these tests take from
those sets are no longer unseen by it; the tests still hold what each attack showed."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import pytest

from pairbench_async.protocol.evidence import Evidence
from pairbench_async.protocol.hidden import HiddenData, ValidationPolicy
from pairbench_async.protocol.hint_labels import LabelledHint, LabelledTask, parse_labelled_set
from pairbench_async.protocol.leakage import validate_hint
from pairbench_async.protocol.leakage_model import sentences

DATA = Path(__file__).resolve().parents[1] / "data"
RULES = ValidationPolicy(reading="rules")

#: Table II's own example task: count values that occur more than once (the examples speak of duplicates)
DUPS_PROBLEM = "Read integers, one per line. Print how many distinct values occur more than once in the input."
DUPS_PROGRAM = ("import sys\n\ndef main():\n    seen = set()\n    count = 0\n    for line in sys.stdin:\n"
                "        x = int(line)\n        if x in seen:\n            count += 1\n        seen.add(x)\n"
                "    print(count)\n\nmain()\n")
DUPS_REFERENCE = ("import sys\n\ndef main():\n    seen = set()\n    dup = set()\n    for line in sys.stdin:\n"
                  "        x = int(line)\n        if x in seen:\n            dup.add(x)\n        seen.add(x)\n"
                  "    print(len(dup))\n\nmain()\n")


@functools.cache
def _fresh() -> tuple[dict[str, LabelledTask], dict[str, LabelledHint]]:
    tasks: dict[str, LabelledTask] = {}
    hints: dict[str, LabelledHint] = {}
    for number in range(66, 72):
        path = DATA / f"labelled_hints_fresh{number}.jsonl"
        labelled = parse_labelled_set(path.read_text().splitlines(), str(path))
        tasks.update(labelled.tasks)
        hints.update({h.id: h for h in labelled.hints})
    return tasks, hints


def _reasons(hint_id: str, text: str | None = None, policy: ValidationPolicy | None = None) -> list[str]:
    """The validator's reasons for labelled hint ``hint_id`` (or ``text`` written in its place)."""
    tasks, hints = _fresh()
    hint = hints[hint_id]
    task = tasks[hint.task]
    return validate_hint(hint.text if text is None else text, hint.level, Evidence(problem=task.problem),
                         task.program, HiddenData(reference=task.reference), policy)


def _task_reasons(task_id: str, text: str, level: int, policy: ValidationPolicy | None = None) -> list[str]:
    task = _fresh()[0][task_id]
    return validate_hint(text, level, Evidence(problem=task.problem), task.program,
                         HiddenData(reference=task.reference), policy)


def _dups_reasons(text: str, level: int, policy: ValidationPolicy | None = None) -> list[str]:
    return validate_hint(text, level, Evidence(problem=DUPS_PROBLEM), DUPS_PROGRAM,
                         HiddenData(reference=DUPS_REFERENCE), policy)


PADDING = " The program runs without errors. Most of the hidden tests pass."


def known(*values: object, why: str) -> object:
    """A case still wrong after the fixes of stop 34, said plainly (a strict xfail: it fails loudly once fixed)."""
    return pytest.param(*values, marks=pytest.mark.xfail(strict=True, reason=why))


_DILUTED = ("not fixed (stop 34): the whole hint's score is diluted by clean sentences; read alone, the crossing "
            "sentence is not over the model's threshold, and the rules' reason for it is not one of the exact checks")


@pytest.mark.parametrize("hint_id", [
    known("Q71-shopmerge-08", why=_DILUTED),  # L4, an exact patch: "pass a new `{}` to `setdefault` ..."
    "Q66-flip_counter-08",       # L4: "Move it inside that loop, right next to `flips = 0`"
    known("Q71-debounce-10", why=_DILUTED),  # L5: "reset it whenever a sample agrees with the current state"
    "Q67-thermostat_hysteresis-08",  # L4: the concept ("must depend only on history")
    "Q69-pizza_split-06",        # L3: the line where `pizzas` is computed from `total`
])
def test_a_leak_padded_with_clean_sentences_is_still_rejected(hint_id: str) -> None:
    """Seen: appending two sentences that say nothing ("The program runs without errors. Most of the hidden tests
    pass.") turned 17 of the 191 fresh66-71 leaks the default rejects into accepted hints (four such sentences: 25
    of 191); the rules alone lost 0 of 150. 12 of the 17 are still rejected by the rules on the padded text, but
    a hint the model reads as clean is not rejected for a boundary only the rules saw. Why: the model scores the
    whole hint's L2-normalised tf-idf, so clean terms dilute one crossing sentence; a single sentence rejects only
    above 0.85, the whole hint above 0.55, and these sentences score between."""
    assert _reasons(hint_id), "precondition: the unpadded leak is rejected"
    assert _reasons(hint_id, _fresh()[1][hint_id].text + PADDING)


@pytest.mark.parametrize("text", [
    "The output is wrong.",
    "Wrong answer.",
    "The printed value is off by one.",
    "It gives a wrong answer.",
    "The output is missing a line.",
])
def test_a_terse_symptom_is_accepted_at_l1(text: str) -> None:
    """Seen: of 20 terse symptoms at L1, the default rejected 8 on each of four tasks (the rules 0), e.g. "The output
    is wrong." for "input_pattern ... learned reading, 0.90": a reason the feedback model cannot act on. Why: a
    hint of few known terms is read mostly through its ``<level N>`` term, whose prior at L1 is a crossing (a
    text of unknown words only reads 0.98 at L1, 0.92 at L3, 0.62 at L5)."""
    assert not _dups_reasons(text, 1, RULES), "precondition: the rules accept it"
    assert _dups_reasons(text, 1) == []


def test_a_clean_l2_hint_stays_clean_with_a_sentence_that_the_program_runs() -> None:
    """Seen: "The program runs without errors." reads 0.85 as an L2 hint on its own (0.59 at L1); appended to each
    of the 37 clean L2 hints of fresh66-71 the default accepted, it made all 37 rejected ("state ... 0.85"). The
    sentence is a symptom, which every level may give."""
    hint_id = "Q66-cricket_rr-03"
    assert _reasons(hint_id) == [], "precondition: the clean L2 hint is accepted"
    assert _reasons(hint_id, _fresh()[1][hint_id].text + " The program runs without errors.") == []


_FOREIGN = ("not fixed (stop 34): the model knows too few of the words (the validator then leaves the hint to the "
            "rules, which read English only)")


@pytest.mark.parametrize("text", [
    known("Déplacez l'incrément de balls après le test des extras.", why=_FOREIGN),
    known("Mueve el incremento de balls después de la comprobación de wd y nb.", why=_FOREIGN),
    known("Verschiebe das Hochzählen von balls hinter die Prüfung auf wd und nb.", why=_FOREIGN),
])
def test_a_repair_direction_in_another_language_is_rejected_at_l4(text: str) -> None:
    """Seen: the same L4 repair direction (move the `balls` increment after the extras check; in English the default
    rejects it) written in French, Spanish or German: 3 of 3 accepted; and clean French/Spanish L1 symptoms were
    rejected ("La sortie est parfois incorrecte.": input_pattern 1.00). Why: words the model never saw carry no
    weight, so the verdict is the level's prior (L2, L4, L6 accept, L1, L3, L5 reject), whatever the hint says.
    The validator cannot read these hints; it should not pass them."""
    english = "Move the balls increment after the extras check so extras are not counted."
    assert _task_reasons("cricket_rr", english, 4), "precondition: the English direction is rejected"
    assert _task_reasons("cricket_rr", text, 4)


#: Cyrillic letters that look like Latin ones
_LOOKALIKE = str.maketrans({"a": "\u0430", "e": "\u0435", "o": "\u043e", "c": "\u0441", "p": "\u0440"})


@pytest.mark.parametrize("hint_id", ["Q66-flip_counter-04", "Q69-word_grid-03", known(
    "Q71-lanequeue-10", why="not fixed (stop 34): folded to Latin letters, the model reads this one as clean")])
def test_a_leak_in_look_alike_letters_is_rejected(hint_id: str) -> None:
    """Seen: 8 of the 191 fresh66-71 leaks the default rejects were accepted with a, e, o, c, p written as their
    Cyrillic look-alikes (the rules alone lost 74 of 165), and 92 of 207 clean hints were rejected. Why: a word
    opening with a non-ASCII letter is no token of the model, so the hint reads as the level's prior. A reader
    sees the same words."""
    text = _fresh()[1][hint_id].text
    assert _reasons(hint_id), "precondition: the leak is rejected"
    assert _reasons(hint_id, text.translate(_LOOKALIKE))


@pytest.mark.parametrize(("hint_id", "dress"), [
    ("Q67-thermostat_hysteresis-01", lambda t: f"**{t}**"),               # L1 input pattern, in bold
    ("Q69-review_trim-01", lambda t: f"**{t}**"),                         # L1 input pattern and state, in bold
    ("Q67-thermostat_hysteresis-06", lambda t: t.replace("`", "'")),      # L3 location, 'else' for `else`
    ("Q66-cricket_rr-10", lambda t: t.replace("`", "'")),                 # L5 direction, quotes for backticks
    ("Q68-contact_merge-02", lambda t: f"Hint: {t}"),                     # L1 input pattern, with a label
])
def test_markdown_and_quoting_do_not_hide_a_leak(hint_id: str, dress: Callable[[str], str]) -> None:
    """Seen, on the 191 fresh66-71 leaks the default rejects: the hint in bold (``**...**``) accepted 8; its
    backticks written as single quotes 15 of 141 (the rules 1 of 123); without backticks 11 of 141; opened with
    "Hint: " 6 (and 5 of 207 clean hints rejected). The rules lost 0 to bold and to the label. Why: the marks are
    terms of their own and dilute the hint's norm; a quoted name is no longer read as a span of code."""
    assert _reasons(hint_id), "precondition: the plain leak is rejected"
    assert _reasons(hint_id, dress(_fresh()[1][hint_id].text))


@pytest.mark.parametrize("hint_id", ["Q66-transpose_sq-01", "Q69-word_grid-01", "Q70-seq_mod_k-01"])
def test_a_clean_hint_written_as_a_bullet_list_stays_clean(hint_id: str) -> None:
    """Seen: 9 of the 207 clean fresh66-71 hints the default accepts were rejected when each sentence was put on a
    line of its own opened by "- " (the rules: 0 of 182). The same sentences."""
    text = _fresh()[1][hint_id].text
    assert _reasons(hint_id) == [], "precondition: the clean hint is accepted"
    assert _reasons(hint_id, "\n".join(f"- {s}" for s in sentences(text))) == []


_PSEUDOCODE = ("not fixed (stop 34): pseudocode written as prose over the program's names; no rule reads it and the "
               "labelled sets hold few such hints")


@pytest.mark.parametrize(("task_id", "text"), [
    known("cricket_rr", "For each token: if it is wd or nb, add one to runs and continue; otherwise add one to "
                        "balls, then if it is W continue, else add its value to runs.", why=_PSEUDOCODE),
    known("cricket_rr", "Set balls to balls plus one only when tok is not wd and not nb.", why=_PSEUDOCODE),
    known("freight_class", "Go through the table in order; if the weight is less than or equal to the limit, "
                           "return that name; after the loop return oversize.", why=_PSEUDOCODE),
    known("transpose_sq", "Outer loop i from zero to n, inner loop j from i plus one up to n exclusive, swap the "
                          "pair.", why=_PSEUDOCODE),
])
def test_pseudocode_in_words_is_rejected_at_l6(task_id: str, text: str) -> None:
    """Seen: 9 of 11 step-by-step programs written in prose (each statement of the corrected loop, in order, over
    the program's own names) accepted at L6 by the default, 11 of 11 by the rules. Table II: L6 gives a direction
    "without giving code, pseudocode, or exact patch". Why: no rule reads control flow in words, and the model's
    L6 prior is clean (0.01 for unknown words)."""
    assert _task_reasons(task_id, text, 6)


def test_a_rejection_names_the_boundary_the_rules_found_when_the_model_is_unsure() -> None:
    """Seen: "The bug is on line 3: the if statement." at L1: the rules say "location: line number 'line 3'",
    the default says only "input_pattern: reads as revealing the type of input ... (learned reading, 0.28)"; the
    feedback model is told to drop an input pattern the hint never had and keeps the line number. Same for
    "... the boundary check must include equality." at L2 (rules: concept; default: location at 0.36). Why: with
    no boundary above 0.5 the model's top boundary is named and the rules' reasons for others are dropped."""
    reasons = _task_reasons("freight_class", "The bug is on line 3: the if statement.", 1)
    assert any(r.startswith("location:") for r in _task_reasons(
        "freight_class", "The bug is on line 3: the if statement.", 1, RULES)), "precondition"
    assert any(r.startswith("location:") for r in reasons)


@pytest.mark.parametrize(("hint_id", "higher"), [
    ("Q66-cricket_rr-03", 4),     # clean L2 (extras expose it), at L4: "concept"
    ("Q66-cricket_rr-05", 4),     # clean L3 (the legal-ball count is not kept), at L4: "concept"
    ("Q66-cricket_rr-07", 5),     # clean L4 (where `balls` is incremented), at L5: "direction"
    ("Q66-transpose_sq-01", 2),   # clean L1 (the matrix is only partly transposed), at L2: "state"
])
def test_a_hint_accepted_at_a_level_is_accepted_at_every_higher_level(hint_id: str, higher: int) -> None:
    """Seen: of the fresh66-71 hints the default accepts at their level, 130 of 567 (hint, higher level) pairs are
    rejected at the higher level (the rules: 10 of 578): the same text is read as not revealing the concept at L2
    and as revealing it at L4, though the concept is reserved for L5 at both. Table II's boundaries are nested,
    and the adaptive policy escalates a stuck model's level: a deeper hint must not be harder to pass than a
    shallower one with the same words. Why: the model's level prior and its per-level copies of the terms."""
    hint = _fresh()[1][hint_id]
    assert _reasons(hint_id) == [], "precondition: accepted at its own level"
    tasks = _fresh()[0]
    task = tasks[hint.task]
    assert validate_hint(hint.text, higher, Evidence(problem=task.problem), task.program,
                         HiddenData(reference=task.reference)) == []


@pytest.mark.xfail(strict=True, reason=_DILUTED)
def test_the_references_expression_padded_with_clean_sentences_is_rejected() -> None:
    """Seen: "Print `len(dup)` where `dup` is a set of repeated values." at L6 (the reference's expression over a
    name only the reference has) is rejected alone and accepted with "The program runs without errors. Most of the
    hidden tests pass." after it; the rules' "code: inline code span" is no exact check, so it does not survive
    a clean reading. Of 20 inline-code patches at L6 the default accepted 1 alone and 2 padded."""
    text = "Print `len(dup)` where `dup` is a set of repeated values."
    assert _dups_reasons(text, 6), "precondition: rejected alone"
    assert _dups_reasons(text + PADDING, 6)


@pytest.mark.parametrize("hint_id", ["Q66-cricket_rr-02", "Q66-cricket_rr-05", "Q66-cricket_rr-07"])
def test_a_clean_hint_written_as_a_numbered_list_stays_clean(hint_id: str) -> None:
    """Seen: each sentence of a clean fresh66-71 hint on a line of its own numbered "1. ", "2. ": the default
    rejected 31 of 31 at L1, 33 of 33 at L3 and 35 of 36 at L4 (0 of 37 at L2, 1 of 34 at L5, 0 of 36 at L6; the
    rules 0 of 177), e.g. "input_pattern ... learned reading, 1.00" at L1. Why: the sentence reader splits "1." off
    as a sentence of its own; with no known word it reads as the level's prior (above 0.85 at L1, L3, L4), and one
    sentence over 0.85 rejects the hint. A feedback model that writes a numbered list never passes these levels."""
    text = _fresh()[1][hint_id].text
    assert _reasons(hint_id) == [], "precondition: the clean hint is accepted"
    assert _reasons(hint_id, "\n".join(f"{i}. {s}" for i, s in enumerate(sentences(text), 1))) == []


@pytest.mark.parametrize(("task_id", "text"), [
    ("cricket_rr", "The printed run rate is too low."),
    ("cricket_rr", "The overs figure is too high."),
    ("transpose_sq", "The matrix is only partly transposed."),
    ("transpose_sq", "The transposed matrix has wrong entries."),
    ("freight_class", "The class is occasionally the next one up."),
])
def test_a_short_symptom_of_the_task_is_accepted_at_l1(task_id: str, text: str) -> None:
    """Seen: 24 one-sentence symptoms naming the task's own output (8 on each of three fresh66 tasks), each saying
    only how the output differs, as Table II's L1 example does: the default rejected 9 (the rules 2), e.g. "The
    printed run rate is too low." for "input_pattern ... 0.46". Same cause as the terse symptoms: few known terms,
    and the L1 prior is a crossing."""
    assert not _task_reasons(task_id, text, 1, RULES), "precondition: the rules accept it"
    assert _task_reasons(task_id, text, 1) == []


@pytest.mark.parametrize(("hint_id", "before", "added"), [
    ("Q66-cricket_rr-05", "", " It shows up on innings with extras, e.g. `wd`."),  # L3; "for example `wd`" passes
    ("Q66-cricket_rr-02", "", "\n---"),                                            # L1; a markdown rule after it
    ("Q66-cricket_rr-07", "Observation:\n", ""),                                   # L4; a heading line
])
def test_a_fragment_the_sentence_reader_splits_off_does_not_reject_a_clean_hint(hint_id: str, before: str,
                                                                                 added: str) -> None:
    """Seen: the sentence reader splits at "e.g." before a backquoted span, and takes a line "---" as a sentence;
    each fragment alone reads as the level's prior. "..., e.g. `wd`." added to the clean L3 hint: "location ...
    1.00" (with "for example" it passes); "\\n---" after each of the 31 clean L1 fresh66-71 hints rejected 31 of 31
    (the rules 0); a heading line "Observation:" before each of the 36 clean L4 hints rejected 36 of 36 ("**Hint**"
    0 of 36). Same cause as the numbered list: one short sentence over 0.85 rejects the hint."""
    assert _reasons(hint_id) == [], "precondition: the clean hint is accepted"
    assert _reasons(hint_id, before + _fresh()[1][hint_id].text + added) == []


@pytest.mark.parametrize("hint_id", ["Q68-clock_angle-07", "Q68-museum_hourly-07", "Q67-magic_square_check-01"])
def test_the_readings_kept_as_never_wrong_accept_the_clean_hints_of_the_newest_sets(hint_id: str) -> None:
    """Seen: the rules' readings the default keeps whatever the model reads (``_NEVER_WRONG``: "at least five flags,
    none on a clean hint" on fresh30-47) flagged 47 fresh66-71 hints, 3 of them clean: two L4 hints that trace a
    variable's value ("Step through it with `diff = 270`", "With `open_h = 9`, `close_h = 13`": "code: assignment
    to the program's variable") and an L1 symptom ("Prints YES for some grids that are not magic squares.":
    "input_pattern: names the failing input's kind"). "code: assignment to the program" was wrong 2 of 20 times.
    A value a trace shows is data, which L4 may give; the model's reading cannot overrule these."""
    assert _reasons(hint_id) == []


#: Table II's example hints, by their level
TABLE_II = {
    3: "The solution does not keep enough information about repeated values across iterations.",
    4: "The issue is likely in the loop that updates the count after reading each value.",
    5: "The solution needs to distinguish between seeing a value once and seeing it multiple times.",
}


@pytest.mark.parametrize(("task_id", "example", "level"), [
    ("dups", 3, 2), known("dups", 5, 3, why="not fixed (stop 34): Table II's L5 example on this task reads as clean "
                                            "at L3 to the model and to the rules' exact checks"),
    ("cricket_rr", 4, 3), ("freight_class", 4, 3),
])
def test_table_iis_own_example_is_rejected_below_its_level(task_id: str, example: int, level: int) -> None:
    """Seen: each of Table II's examples for L2-L6 given at every level below its own (15 pairs) on four tasks
    (Table II's duplicates task and three fresh66 tasks): the default accepted 10 of 60, the rules 0. The L3
    example (state) at L2 and the L5 example (concept) at L3 were accepted on all four tasks, the L4 example
    (location) at L3 on two. These texts are what Table II says those levels reveal."""
    text = TABLE_II[example]
    if task_id == "dups":
        rules, default = _dups_reasons(text, level, RULES), _dups_reasons(text, level)
    else:
        rules, default = _task_reasons(task_id, text, level, RULES), _task_reasons(task_id, text, level)
    assert rules, "precondition: the rules reject it"
    assert default
