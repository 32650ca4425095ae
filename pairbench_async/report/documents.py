"""A loaded run's (or sweep's) report as documents: plain text, JSON, and the page.

What ``pairbench report`` prints, as library calls over a :class:`~.runs.LoadedRun`:
:func:`run_text` / :func:`run_json` for one run (a sweep's main setting too),
:func:`sweep_text` / :func:`sweep_json` for a sweep folder, and :func:`page` (the
:class:`~.model.Report` that :mod:`.html` renders and :mod:`.figures` draws) with
:func:`page_html` (its HTML with the per-episode transcripts). Nothing here writes a
file or prints: the caller does.

Numbers that need the run's dataset (repair precision, exact match, BLEU, CodeBLEU, the
transcripts' turn-0 diff base) are computed when the dataset the manifest names reads
back; otherwise the documents say so and go on without them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from ..core.errors import PairbenchError
from ..core.types import Instance
from ..datasets.files import dataset_hash, load_dataset
from ..models.prices import PriceBook
from ..runlog.messages import read_messages, read_summary_calls
from ..runlog.records import EpisodeRecord, Record, RunManifest
from .accuracy import talk_accuracy
from .codebleu_package import CodeBleuProcess, codebleu_problem
from .cost import TokenRow, cost_summary, render_tokens_text, token_rows, tokens_json
from .errors import error_summary, errors_text
from .html import render_html, render_sections_text, sensitivity_sections
from .leaderboard import (
    leaderboard_json,
    render_repair_at_k_text,
    render_text,
    repair_at_k_json,
    trajectories,
    unprotected_protocols,
)
from .model import Report, build_report
from .paper_sections import accuracy_section
from .pass_at_k import pass_at_k_by_model
from .pdb_section import PDB_LEGEND, bugs_fixed, pct
from .precision import NAIVE_COPY, naive_copy, pdb_programs, precision_by_model
from .runs import LoadedRun
from .sections import robustness_sections
from .sensitivity import Sensitivity, sensitivity_json
from .transcript import TranscriptLimits, Transcripts, build_transcripts, of_settings

__all__ = ["BugVerdicts", "page", "page_html", "pdb_needed", "precision", "run_json", "run_text",
           "sweep_json", "sweep_text", "token_usage", "transcripts"]

#: Verdicts of PDB's pseudo-fixed programs, keyed by :func:`.precision.verdict_key`.
BugVerdicts = Mapping[tuple[str, str], bool]


def _instances(manifest: RunManifest | None) -> dict[str, Instance]:
    return {i.id: i for i in load_dataset(manifest.dataset if manifest and manifest.dataset else None,
                                          skip_invalid=True).instances}


def pdb_needed(run: LoadedRun) -> list[tuple[Instance, str]]:
    """The programs PDB's recall and precision of ``run`` need run (:func:`.precision.pdb_programs`);
    none when the run's dataset cannot be read back (the report says why without them)."""
    try:
        return pdb_programs(run.records, _instances(run.manifest))
    except PairbenchError:
        return []


def precision(records: list[Record], manifest: RunManifest | None,
              with_protocol: bool | None = None,
              bug_verdicts: BugVerdicts | None = None) -> tuple[dict[str, Any] | None, str]:
    """Repair precision, exact match, BLEU and CodeBLEU per model (PDB/FixEval), when the
    run's dataset can be read back (else None); and what is missing, "" if nothing.

    CodeBLEU needs the optional codebleu package: without it the summaries have no
    CodeBLEU and the note says how to install it. PDB's recall and precision use the
    verdicts the records hold and ``bug_verdicts`` (the programs :func:`pdb_needed` lists,
    run by the caller); episodes still missing one are counted as unverified.
    """
    problem = codebleu_problem()
    try:
        instances = _instances(manifest)
        with CodeBleuProcess() as codebleu:  # one child process for every group's score
            scorer = codebleu if problem is None else None
            summaries = dict(precision_by_model(records, instances, with_protocol=with_protocol,
                                                codebleu=scorer, bug_verdicts=bug_verdicts))
            copied = [instances[i] for i in sorted({r.instance_id for r in records}) if i in instances]
            if summaries and copied:  # FixEval's baseline on the same instances
                summaries[NAIVE_COPY] = naive_copy(copied, scorer)
            return summaries, problem or ""
    except PairbenchError as exc:  # the dataset moved or changed: leaderboard only
        return None, (f"no repair precision, exact match, BLEU or CodeBLEU: the run's dataset "
                      f"cannot be read back ({exc})")


def token_usage(run: LoadedRun, prices: PriceBook | None) -> list[TokenRow]:
    """Token usage (and cost) per (candidate, protocol, role, model called) of every record
    of the run (errored and unfinished episodes' calls were paid for too, and so were those
    of attempts run again with ``--retry-errors``)."""
    manifest = run.manifest
    return token_rows([*run.all_records, *run.superseded], manifest.protocols if manifest else (), prices=prices,
                      feedback=manifest.feedback if manifest else None,
                      validator=manifest.validator if manifest else None,
                      specs=manifest.specs if manifest else None)


def _turns(manifest: RunManifest | None) -> int | None:
    """The run's α (``--turns``), the last round Repair@k can report."""
    alpha = manifest.params.get("turns") if manifest is not None else None
    return alpha if isinstance(alpha, int) else None


def run_json(run: LoadedRun, prices: PriceBook | None = None, *,
             bug_verdicts: BugVerdicts | None = None) -> dict[str, Any]:
    """``report RUN --json`` of one run (a sweep's main setting too); ``bug_verdicts`` as in
    :func:`precision`."""
    comp, kept, manifest = run.completeness, run.records, run.manifest
    board = run.leaderboard()
    data = {"completeness": {"planned": comp.planned, "finished": comp.finished, "errored": comp.errored,
                             "complete": comp.complete, "common_instances": comp.common,
                             "instances": comp.instances, "notice": comp.banner()},
            **leaderboard_json(board)}
    scores, note = precision(kept, manifest, bug_verdicts=bug_verdicts)
    if scores is not None:
        baseline = scores.pop(NAIVE_COPY, None)  # `precision` is keyed as `models`; the baseline apart
        data["precision"] = msgspec.to_builtins(scores)
        data["naive_copy"] = msgspec.to_builtins(baseline)
    data["precision_note"] = note or None
    data["pass_at_k"] = msgspec.to_builtins(pass_at_k_by_model(trajectories(kept)[0]))
    tokens = token_usage(run, prices)
    data["tokens"] = tokens_json(tokens)
    data["cost_total"] = cost_summary(tokens).total
    data["unprotected"] = board.unprotected
    data["error_causes"] = [{"cause": cause, "count": count, "first": first}
                            for cause, count, first in error_summary(run.all_records)]
    data["repair_at_k"] = repair_at_k_json(kept, _turns(manifest))
    data["test_case_accuracy"] = msgspec.to_builtins(
        talk_accuracy(kept, manifest.protocols if manifest else None))
    return data


def _columns(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def _pdb_bugs(s: Any) -> str:
    """Bugs fixed / bugs over the scored episodes, and the unverified ones if any."""
    return bugs_fixed(s) + (f" ({s.pdb_unverified} unverified)" if s.pdb_unverified else "")


def _precision_text(summaries: dict[str, Any], note: str = "") -> str:
    header = ["Model", "PDB-Recall", "PDB-Precision", "PDB bugs fixed", "LineProxP", "LineProxR",
              "Regenerated", "ExactMatch", "EM(no comments)", "BLEU", "mean sent. BLEU", "CodeBLEU", "SM", "DM",
              "CE", "CA"]
    rows = []
    for name, s in sorted(summaries.items()):
        cb = s.codebleu
        rows.append([name, pct(s.pdb_recall), pct(s.pdb_precision),
                     _pdb_bugs(s) if name != NAIVE_COPY else "-",
                     pct(s.edit_precision), pct(s.edit_recall), pct(s.regeneration_rate),
                     pct(s.exact_match_rate), pct(s.exact_match_code_rate),
                     pct(s.corpus_bleu), pct(s.bleu),
                     *(["-"] * 3 if cb is None else
                       [pct(cb.codebleu), pct(cb.syntax_match), pct(cb.dataflow_match)]),
                     pct(s.verdict_mix.get("CE")), pct(s.compilation_accuracy)])
    lines = _columns(header, rows)
    lines.append(f"repair precision, in %: {PDB_LEGEND}; "
                 "LineProxP/R are not PDB's: line proximity to the reference's edit, averaged over "
                 "turns >= 1; exact match (with, then without comments), BLEU (FixEval's "
                 "corpus-level BLEU-4), the mean of the programs' sentence BLEU (not FixEval's), and "
                 "corpus CodeBLEU with its syntax (SM) and dataflow (DM) match, of the final "
                 "program; CE share (turns >= 1); CA, FixEval's compilation accuracy of the final "
                 "programs; the Naive Copy row scores each instance's buggy program as its fix")
    if note:
        lines.append(note)
    return "\n".join(lines)


def _pass_at_k_text(summaries: dict[str, Any]) -> str:
    """FixEval's pass@k and TCA@k per model, final programs then turn 0's, k = 1..n."""
    n = max((s.samples for s in summaries.values()), default=1)
    ks = range(1, n + 1)
    header = ["Model", "Program", *(f"pass@{k}" for k in ks), *(f"TCA@{k}" for k in ks), "n"]
    rows = []
    for name, s in sorted(summaries.items()):
        for program, passes, tcas in (("final", s.pass_at_k, s.tca_at_k),
                                      ("turn 0", s.initial_pass_at_k, s.initial_tca_at_k)):
            if passes is None or tcas is None:  # turn 0 is the given program: no sample
                continue
            rows.append([name, program, *(pct(passes.get(k)) for k in ks),
                         *(pct(tcas.get(k)) for k in ks), str(s.samples)])
    lines = _columns(header, rows)
    lines.append("FixEval over the runs, in %: pass@k = 1 - C(n-c,k)/C(n,k) (c of n runs pass "
                 "every hidden test), TCA@k = mean share of hidden tests passed by runs 1..k; "
                 "final = each run's last program, turn 0 = its unhinted repair (none for simple, "
                 "compiler, test, human: their turn 0 is the given erroneous program)")
    return "\n".join(lines)


def run_text(run: LoadedRun, prices: PriceBook | None = None, *,
             bug_verdicts: BugVerdicts | None = None) -> str:
    """``report RUN``'s plain text: the notice, the leaderboard, tokens, Repair@k, repair
    precision, FixEval's pass@k / TCA@k, seed 002's test-case accuracy and, with several
    runs, Tables V and VI (``bug_verdicts`` as in :func:`precision`)."""
    banner, kept, manifest = run.completeness.banner(), run.records, run.manifest
    parts = [f"{banner}."] if banner else []
    parts.append(render_text(run.leaderboard()))
    errors = errors_text(run.all_records)  # an all-errored run is reported: its errors by cause
    if errors:
        parts.append("\n" + errors)
    tokens = token_usage(run, prices)
    if tokens:
        parts.append("\n" + render_tokens_text(tokens))
    parts.append("\n" + render_repair_at_k_text(repair_at_k_json(kept, _turns(manifest))))
    scores, note = precision(kept, manifest, bug_verdicts=bug_verdicts)
    if scores:
        parts.append("\n" + _precision_text(scores, note))
    elif note:
        parts.append("\n" + note)
    samples = pass_at_k_by_model(trajectories(kept)[0])
    if samples:
        parts.append("\n" + _pass_at_k_text(samples))
    accuracy = talk_accuracy(kept, manifest.protocols if manifest else None)
    if accuracy is not None:
        section = accuracy_section(accuracy, unprotected_protocols(run.all_records))
        parts.append("\n" + render_sections_text([section], intro=False).rstrip())
    if len({r.run for r in kept if isinstance(r, EpisodeRecord) and r.status == "done"}) > 1:
        # the page's Tables V and VI (mean ± std over runs, Kendall τ between runs), intros kept:
        # they say what ± is and why Init. Fix varies
        report = build_report(kept, manifest)
        if report.robustness:  # as on the page: only where some model ran in every run
            parts.append("\n" + render_sections_text(robustness_sections(report)).rstrip())
    return "\n".join(parts)


def sweep_json(sweep: LoadedRun, s: Sensitivity, prices: PriceBook | None = None, *,
               bug_verdicts: BugVerdicts | None = None) -> dict[str, Any]:
    """``report SWEEP --json``: the combined table of every setting on top (``models``,
    ``settings``), the main setting's report as ``main``, then Table VII and the τ
    between settings (``s``: :meth:`~.runs.LoadedRun.sensitivity`)."""
    return {**leaderboard_json(sweep.leaderboard()),
            "settings": [info.name for info in s.settings],
            "main": run_json(sweep.main_run, prices, bug_verdicts=bug_verdicts), **sensitivity_json(s)}


def sweep_text(sweep: LoadedRun, s: Sensitivity, prices: PriceBook | None = None, *,
               bug_verdicts: BugVerdicts | None = None) -> str:
    """``report SWEEP``'s plain text: the main setting's report, the combined table of every
    setting, Table VII and the τ between settings."""
    names = [info.name for info in s.settings]
    return (f"sweep {sweep.path}: {len(names)} settings ({', '.join(names)}); main setting "
            f"{s.main} (--setting NAME for another)\n\n"
            f"== Main setting: {s.main} ==\n{run_text(sweep.main_run, prices, bug_verdicts=bug_verdicts)}\n"
            "\n== Every setting (each row is SETTING MODEL[|PROTOCOL]) ==\n"
            f"{render_text(sweep.leaderboard())}\n"
            "\n" + render_sections_text(sensitivity_sections(s)))


def page(run: LoadedRun, *, main: str | None = None, instances: list[str] | None = None,
         prices: PriceBook | None = None, sensitivity: Sensitivity | None = None,
         title: str | None = None, bug_verdicts: BugVerdicts | None = None) -> Report:
    """The visual report's numbers (:func:`.model.build_report`) of ``run`` (a sweep's main
    setting, with ``sensitivity`` for Table VII): ``main`` protocol, Fig. 5's
    ``instances``, token ``prices``; the title names the run's folder by default.
    ``bug_verdicts`` as in :func:`precision`; None says PDB's programs were not run
    (``--no-bug-check``), and the page's PDB section says so."""
    scores, note = precision(run.records, run.manifest, with_protocol=True, bug_verdicts=bug_verdicts)
    name = run.path.resolve().name if run.path is not None else ""
    report = build_report(run.records, run.manifest, main_protocol=main, instances=instances,
                          title=title or f"PAIR-BENCH report: {name}",
                          prices=prices, notice=run.completeness.banner() or "", precision=scores,
                          precision_note=note, sensitivity=sensitivity)
    return msgspec.structs.replace(report, unfinished=run.unfinished(),
                                   bug_check=bug_verdicts is not None)


def transcripts(run: LoadedRun, protocols: list[str], *, with_tests: bool = False,
                limits: TranscriptLimits | None = None) -> Transcripts:
    """The per-episode transcripts of every record of ``run``, with the messages of its
    calls; turn 0 diffs against the buggy programs (and ``with_tests`` shows the failing
    tests) when the run's dataset reads back unchanged. Hidden test data only
    ``with_tests`` (:mod:`.transcript`)."""
    manifest = run.manifest
    try:
        ran = (load_dataset(manifest.dataset or None, skip_invalid=True).instances[: manifest.instances]
               if manifest is not None else [])
    except (PairbenchError, OSError):
        ran = []
    same = manifest is not None and bool(ran) and dataset_hash(ran) == manifest.dataset_hash
    return build_transcripts(run.all_records, {i.id: i.buggy for i in ran} if same else None,
                             protocols=protocols, limits=limits,
                             messages=read_messages(run.path) if run.path is not None else None,
                             summaries=read_summary_calls(run.path) if run.path is not None else None,
                             with_tests=with_tests,
                             instances={i.id: i for i in ran} if same and with_tests else None)


def page_html(run: LoadedRun, report: Report, figures: dict[str, bytes], *,
              with_tests: bool = False) -> str:
    """The self-contained HTML page of ``report`` with the per-episode transcripts of every
    record of ``run`` (:func:`transcripts`); of a sweep, of every setting's, each episode
    labelled with its setting and the page's text budget shared among the settings."""
    runs = run.runs()
    if not run.is_sweep or len(runs) < 2:
        return render_html(report, figures, transcripts(run, report.protocols, with_tests=with_tests))
    budget = TranscriptLimits()
    limits = msgspec.structs.replace(budget, total_chars=budget.total_chars // len(runs))
    parts = [(name, transcripts(r, list(r.manifest.protocols) if r.manifest is not None
                                else report.protocols, with_tests=with_tests, limits=limits))
             for name, r in runs]
    return render_html(report, figures, of_settings(parts))

