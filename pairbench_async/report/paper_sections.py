"""The other papers' sections of a run's report: FixEval's match- and execution-based
metrics (its Tables III and IV) and When Benchmarks Talk's test-case accuracy, static
vs interactive (seed 002's Tables 4-7, Fig. 3 and Table 14)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from .accuracy import Accuracy, TalkAccuracy
from .layout import Cell, Section, Table, extremes, model_protocols, statistic
from .leaderboard import UNPROTECTED_NOTE
from .metrics import group_key
from .model import Report
from .precision import NAIVE_COPY

__all__ = ["accuracy_section", "fixeval_section"]


#: FixEval reports pass@k and TCA@k at k = 1, 3, 5, 10; with three runs we show k = 1, 2, 3.
_SAMPLE_KS: Final = (1, 2, 3, 5, 10)


def _sample_ks(n: int) -> list[int]:
    """The k shown for n samples: 1, 2, 3, 5, 10 up to n, and n itself."""
    return sorted({k for k in (*_SAMPLE_KS, n) if 1 <= k <= n})


def _pct(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{100 * value:.{digits}f}"


def _match_table(report: Report) -> Table:
    """FixEval's Table III on the final programs: EM (with and without comments), BLEU,
    CodeBLEU and its parts, per model and protocol."""
    rows = []
    last = ""
    groups = [(model, p, report.precision.get(group_key(model, p))) for model, p in model_protocols(report)]
    groups.append((NAIVE_COPY, "-", report.precision.get(NAIVE_COPY)))  # FixEval's baseline
    for model, p, s in groups:
        if s is None:
            continue
        cb = s.codebleu
        parts = ([None] * 5 if cb is None else
                 [cb.codebleu, cb.ngram_match, cb.weighted_ngram_match, cb.syntax_match,
                  cb.dataflow_match])
        rows.append([Cell(model if model != last else ""), Cell(p),
                     Cell(_pct(s.exact_match_rate)), Cell(_pct(s.exact_match_code_rate)),
                     Cell(_pct(s.corpus_bleu)), *(Cell(_pct(v)) for v in parts),
                     Cell(_pct(s.compilation_accuracy)), Cell(str(s.episodes))])
        last = model
    return Table(header=["Model", "Protocol", "EM (%) ↑", "EM w/o comments (%) ↑",
                         "Corpus BLEU (%) ↑", "CodeBLEU (%) ↑", "n-gram (%)", "weighted n-gram (%)", "SM (%)",
                         "DM (%)", "CA (%) ↑", "Episodes"], rows=rows, left=2)


def _execution_table(report: Report) -> Table:
    """FixEval's Table IV: pass@k and TCA@k over the runs, final and turn 0 programs."""
    groups = [(m, p, report.views[p].pass_at_k[m]) for m, p in model_protocols(report)
              if m in report.views[p].pass_at_k]
    ks = _sample_ks(max((g.samples for _, _, g in groups), default=1))

    def values(series: dict[int, float]) -> list[Cell]:
        return [Cell(_pct(series.get(k))) for k in ks]

    rows = []
    last = ""
    for model, p, g in groups:
        for program, passes, tcas in (("final", g.pass_at_k, g.tca_at_k),
                                      ("turn 0", g.initial_pass_at_k, g.initial_tca_at_k)):
            if passes is None or tcas is None:  # turn 0 is the given program: no sample
                continue
            rows.append([Cell(model if model != last else ""), Cell(p if program == "final" else ""),
                         Cell(program), *values(passes), *values(tcas), Cell(str(g.instances)),
                         Cell(str(g.samples))])
            last = model
    return Table(header=["Model", "Protocol", "Program", *(f"pass@{k} (%) ↑" for k in ks),
                         *(f"TCA@{k} (%) ↑" for k in ks), "Instances", "Runs (n)"],
                 rows=rows, left=3)


def fixeval_section(report: Report) -> Section:
    """FixEval's match-based (Table III) and execution-based (Table IV) metrics."""
    notes = [report.precision_note] if report.precision_note else []
    n = min((g.samples for v in report.views.values() for g in v.pass_at_k.values()),
            default=1)
    if n == 1:
        notes.append("One run per instance: pass@1 is the share of episodes fixed and TCA@1 the "
                     "mean share of hidden tests the final program passes; --runs N gives n = N "
                     "samples.")
    tables = [_execution_table(report)]
    if report.precision:
        tables.insert(0, _match_table(report))
    return Section(
        id="fixeval", title="FixEval: match-based and execution-based metrics",
        intro="Match-based (FixEval Table III), on each episode's final program against the "
              "reference: exact match of the code tokens (whitespace normalised) with and "
              "without comments and docstrings, corpus BLEU-4, and CodeBLEU = (n-gram + "
              "weighted n-gram + syntax match SM + dataflow match DM) / 4. Execution-based "
              "(FixEval Table IV): each run is one sample of an (instance, model, protocol); "
              "pass@k = 1 − C(n−c, k)/C(n, k) with c of the n runs passing every hidden test, "
              "TCA@k the mean share of hidden tests passed by the first k runs, both averaged "
              "over instances; 'final' samples each run's last program, 'turn 0' its unhinted "
              "repair (the static view).",
        tables=tables, notes=notes)


def _tca(a: Accuracy | None) -> str:
    """A TCA as seed 002 prints it: a fraction to three decimals, the standard error in
    parentheses; '-' for a model the setting did not run."""
    if a is None:
        return "-"
    return f"{a.mean:.3f}" + ("" if a.se is None else f" ({a.se:.3f})")


def _accuracy_tables(acc: TalkAccuracy) -> list[Table]:
    """Seed 002's Tables 4-7 (TCA per model and setting), Fig. 3 (each model's rank, Static
    → interactive) and Table 14 (the normalised footrule of each setting against Static)."""
    protocols = list(acc.protocols)
    models = sorted({*acc.static, *(m for a in acc.protocols.values() for m in a.interactive)})
    columns = {"Static": {m: a.mean for m, a in acc.static.items()},
               **{p: {m: a.mean for m, a in acc.protocols[p].interactive.items()} for p in protocols}}
    marks = {k: extremes(v) for k, v in columns.items()}
    rows = [[Cell(m), Cell(_tca(acc.static.get(m)), marks["Static"].get(m, "")),
             *(Cell(_tca(acc.protocols[p].interactive.get(m)), marks[p].get(m, "")) for p in protocols),
             Cell(str(acc.static[m].n) if m in acc.static else "0")] for m in models]
    rows.append([Cell("All models"), Cell(_tca(acc.static_all)),
                 *(Cell(_tca(acc.protocols[p].all_models)) for p in protocols),
                 Cell(str(acc.static_all.n) if acc.static_all else "0")])
    tca = Table(header=["Model", "Static ↑", *(f"{p} ↑" for p in protocols), "Static episodes"], rows=rows,
                caption="Test-case accuracy (standard error)")

    def moved(p: str, m: str) -> Cell:
        change = acc.protocols[p]
        if m not in change.interactive_rank or m not in change.static_rank:
            return Cell("-")
        before, after = change.static_rank[m], change.interactive_rank[m]
        return Cell(f"{before:g} → {after:g}", sup="" if before == after else f"{before - after:+g}")

    ranks = Table(header=["Model", *(f"{p}: Static → interactive rank" for p in protocols)],
                  rows=[[Cell(m), *(moved(p, m) for p in protocols)] for m in models],
                  caption="Rank 1 = highest TCA (ties share their average rank); +k / -k: places gained or "
                          "lost against Static")
    footrules = Table(header=["Protocol", "Normalised footrule vs Static ↓", "Kendall τ-b vs Static ↑", "Models"],
                      rows=[[Cell(p), Cell(statistic(a.footrule)), Cell(statistic(a.tau)),
                             Cell(str(len(a.interactive)))] for p, a in acc.protocols.items()])
    return [tca, ranks, footrules]


def accuracy_section(acc: TalkAccuracy, unprotected: Sequence[str] = ()) -> Section:
    """Seed 002's numbers: test-case accuracy static vs interactive, the ranking change, and
    how often the word caps cut the feedback."""
    notes = [f"{p}: {c.cut} of {c.hints} feedback texts were cut at seed 002's {c.cap}-word cap "
             "(the words past it never reached the candidate)" for p, c in acc.word_caps.items()]
    notes += [f"{p}: {UNPROTECTED_NOTE}" for p in acc.protocols if p in unprotected]
    return Section(
        id="test-case-accuracy", title="Test-case accuracy, static vs interactive (When Benchmarks Talk)",
        intro="Test-case accuracy (seed 002's TCA): the share of hidden tests a program passes, averaged "
              "over episodes, standard error in parentheses, as fractions like the paper. Static is turn 0, "
              "the attempt before any feedback, one per (model, run, instance) however many protocols ran "
              "it (they share its prompt and seed); FeedbackEval's protocols, whose turn 0 is the "
              "erroneous program as given, add none. Each "
              "protocol is an interactive setting scored on its episode's last program (an episode stops at "
              "all-pass or after α turns, as the paper's loop stops at a correct solution). The ranking "
              "change is the normalised Spearman footrule between the Static ranking and each setting's, "
              "over the models the setting ran (0 = the same ranking, 1 = reversed; the paper's Table 14), "
              "beside Kendall's τ-b. With --obfuscate, turn 0 sees the one-sentence problem too, whereas "
              "the paper's Static setting sees the full one.",
        tables=_accuracy_tables(acc), notes=notes)
