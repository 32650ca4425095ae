"""``python -m pairbench_async report DIR``: the leaderboard, JSON, HTML and Markdown of a run.

Owns the command's flags and its files; the numbers and the rendering are
:mod:`..report.leaderboard` (text, JSON) and :mod:`..report.html` (HTML, Markdown, figures).

Outputs: stdout carries exactly one of ``--json``, ``--markdown`` without a file, or the
plain-text leaderboard (then the token usage, repair precision and seed 002's test-case
accuracy). ``--html OUT.html`` writes a self-contained
page and the same figures as PNG files in ``OUT_files/`` beside it (handy for papers);
``--markdown OUT.md`` writes Markdown that links the PNGs in ``OUT_files/``. Files are
replaced atomically, so a reader never sees half a report. ``--config FILE`` prices the
tokens with a model config's ``prompt_price_per_million``/``completion_price_per_million``:
the manifest keeps no prices, so the report is told which apply. The work runs in a
thread: reading a large log and drawing figures would otherwise stall the event loop
this command is awaited on.

A ``--sweep`` folder (one run per setting) reports as its main setting (the sweep's first,
or ``--setting NAME``) exactly as that run alone would, plus Table VII (seed 000, RQ3) and
the Kendall τ between every pair of settings' model rankings
(:mod:`..report.sensitivity`); the text also keeps the combined leaderboard of every
setting, and ``--json`` keeps it on top (``models``, ``settings``) with the main setting's
report under ``main``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ..core.errors import ConfigError, StoreError

if TYPE_CHECKING:
    from ..models.prices import PriceBook
    from ..report.cost import TokenRow
    from ..report.sensitivity import Sensitivity
    from ..runlog.records import RunManifest

__all__ = ["add_report_arguments", "report_command"]


def add_report_arguments(p: argparse.ArgumentParser) -> None:
    """The ``report`` subcommand's arguments (DIR first: ``--markdown`` takes an optional file)."""
    p.add_argument("dir", metavar="DIR",
                   help="a run directory (records.jsonl, manifest.json), or a --sweep folder: its "
                        "main setting's report plus Table VII and the Kendall τ between settings")
    p.add_argument("--setting", metavar="NAME", default=None,
                   help="a sweep's main setting (its folder name; default: the sweep's first)")
    p.add_argument("--json", action="store_true",
                   help='print {"completeness": {planned, finished, errored, complete, '
                        'common_instances, instances, notice}, "models": {name: {metric: value}}, '
                        '"episodes", "errored", '
                        '"unfinished", "tokens": [{model, protocol, role, called, calls, '
                        'prompt_tokens, completion_tokens, cost}], "cost_total", "unprotected": '
                        '[protocols], "repair_at_k": {name: {k: value}}, "precision": {name: '
                        '{edit_precision, edit_recall, regeneration_rate, exact_match_rate, '
                        'exact_match_code_rate (without comments), bleu, corpus_bleu, verdict_mix, '
                        'verdict_mix_by_turn, codebleu: {codebleu, ngram_match, '
                        'weighted_ngram_match, syntax_match, dataflow_match} or null}}, '
                        '"precision_note": why precision or CodeBLEU is missing, or null, "pass_at_k": {name: '
                        '{instances, samples, pass_at_k: {k: value}, tca_at_k, initial_pass_at_k, '
                        'initial_tca_at_k}} (FixEval, over the runs; initial_* read turn 0, null when '
                        'turn 0 is the given erroneous program), '
                        '"test_case_accuracy": {"static": {model: {mean, se, n}}, "static_all", '
                        '"protocols": {protocol: {"interactive": {model: {mean, se, n}}, "all_models", '
                        '"static_rank", "interactive_rank", "footrule", "tau"}}, "word_caps": {protocol: '
                        '{cap, hints, cut}}} (costs null when unpriced; cost_total sums the priced rows; '
                        'precision only when the run\'s dataset reads back; test_case_accuracy is seed '
                        '002\'s TCA: static = turn 0, interactive = the last program, footrule/tau '
                        'between their model rankings); for a sweep folder: the combined '
                        '{"models", "settings"}, the main setting\'s report as "main", and '
                        '"main_setting", "setting_info", "table_vii", "setting_tau", '
                        '"setting_tau_mean", "protocol_agreement"')
    p.add_argument("--config", metavar="FILE", default=None,
                   help="model config (TOML) whose prompt_price_per_million and "
                        "completion_price_per_million price the tokens (cost columns)")
    p.add_argument("--html", metavar="OUT.html",
                   help="write a self-contained HTML report (figures also as PNGs in OUT_files/)")
    p.add_argument("--markdown", nargs="?", const="-", default=None, metavar="OUT.md",
                   help="Markdown report: to OUT.md (figures in OUT_files/), or to stdout "
                        "without a file")
    p.add_argument("--protocol", metavar="NAME", default=None,
                   help="main protocol of Tables III/IV and Figs. 3-6 (default: pair if run)")
    p.add_argument("--instances", nargs="+", metavar="ID", default=None,
                   help="instances of Fig. 5 (default: the 3 where the models differ most)")
    p.add_argument("--complete-only", action="store_true",
                   help="refuse (exit 1) to report a run whose planned episodes did not all finish; "
                        "by default such a report says so at its top and ranks the models only on "
                        "the instances every one of them finished")


def _files_dir(out: Path) -> Path:
    """``report.html`` -> ``report_files/``, as browsers name a saved page's resources."""
    return out.with_name(out.stem + "_files")


def _write_atomic(path: Path, data: bytes) -> None:
    """Write beside ``path`` and rename over it; the umask decides the mode, as for any file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _write_figures(directory: Path, figures: dict[str, bytes]) -> dict[str, str]:
    """Write every figure as ``<key>.png``; return key -> path relative to the report."""
    for key, data in figures.items():
        _write_atomic(directory / f"{key}.png", data)
    return {key: f"{directory.name}/{key}.png" for key in figures}


def _render(run_dir: Path, records: list[Any], manifest: RunManifest | None,
            html_out: Path | None, md_out: Path | None, md_stdout: bool,
            main: str | None, instances: list[str] | None,
            prices: PriceBook | None = None, sensitivity: Sensitivity | None = None,
            title: str | None = None) -> tuple[str | None, list[str]]:
    """Build, draw and write; return the Markdown for stdout (if asked) and what was written."""
    from ..report.completeness import completeness, restrict
    from ..report.html import build_report, draw_figures, render_html, render_markdown

    comp = completeness(records, manifest)
    kept = restrict(records)
    precision, note = _precision(kept, manifest, with_protocol=True)
    report = build_report(kept, manifest, main_protocol=main, instances=instances,
                          title=title or f"PAIR-BENCH report: {run_dir.resolve().name}",
                          prices=prices, notice=comp.banner() or "", precision=precision,
                          precision_note=note, sensitivity=sensitivity)
    written: list[str] = []
    figures = draw_figures(report) if html_out or md_out else {}
    if html_out is not None:
        from ..core.errors import PairbenchError
        from ..datasets.files import dataset_hash, load_dataset
        from ..report.transcript import build_transcripts

        try:  # turn 0's diff base: the buggy programs, if the run's dataset reads back unchanged
            ran = (load_dataset(manifest.dataset or None, skip_invalid=True)
                   .instances[: manifest.instances] if manifest is not None else [])
        except (PairbenchError, OSError):
            ran = []
        same = manifest is not None and bool(ran) and dataset_hash(ran) == manifest.dataset_hash
        transcripts = build_transcripts(records, {i.id: i.buggy for i in ran} if same else None,
                                        protocols=report.protocols)
        _write_figures(_files_dir(html_out), figures)
        _write_atomic(html_out, render_html(report, figures, transcripts).encode())
        written.append(f"{html_out} (+{len(figures)} figures in {_files_dir(html_out)}/)")
    if md_out is not None:
        paths = _write_figures(_files_dir(md_out), figures)
        _write_atomic(md_out, render_markdown(report, paths).encode())
        written.append(str(md_out))
    return (render_markdown(report) if md_stdout else None), written


def _precision(records: list[Any], manifest: RunManifest | None,
               with_protocol: bool | None = None) -> tuple[dict[str, Any] | None, str]:
    """Repair precision, exact match, BLEU and CodeBLEU per model (PDB/FixEval), when the
    run's dataset can be read back (else None); and what is missing, "" if nothing.

    CodeBLEU needs the optional codebleu package: without it the summaries have no
    CodeBLEU and the note says how to install it.
    """
    from ..core.errors import PairbenchError
    from ..datasets.files import load_dataset
    from ..report.codebleu_package import codebleu_problem, corpus_codebleu
    from ..report.precision import precision_by_model

    problem = codebleu_problem()
    try:
        instances = {i.id: i for i in load_dataset(manifest.dataset if manifest and manifest.dataset else None,
                                                   skip_invalid=True).instances}
        return dict(precision_by_model(records, instances, with_protocol=with_protocol,
                                       codebleu=corpus_codebleu if problem is None else None)), \
            problem or ""
    except PairbenchError as exc:  # the dataset moved or changed: leaderboard only
        return None, (f"no repair precision, exact match, BLEU or CodeBLEU: the run's dataset "
                      f"cannot be read back ({exc})")


def _token_rows(records: list[Any], manifest: RunManifest | None,
                prices: PriceBook | None) -> list[TokenRow]:
    """Token usage (and cost) per (candidate, protocol, role, model called) of the run."""
    from ..report.cost import token_rows

    return token_rows(records, manifest.protocols if manifest else (), prices=prices,
                      feedback=manifest.feedback if manifest else None,
                      validator=manifest.validator if manifest else None)


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}"


def _columns(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return lines


def _precision_text(summaries: dict[str, Any], note: str = "") -> str:
    header = ["Model", "EditPrecision", "EditRecall", "Regenerated", "ExactMatch",
              "EM(no comments)", "BLEU", "CodeBLEU", "SM", "DM", "CE"]
    rows = []
    for name, s in sorted(summaries.items()):
        cb = s.codebleu
        rows.append([name, _pct(s.edit_precision), _pct(s.edit_recall), _pct(s.regeneration_rate),
                     _pct(s.exact_match_rate), _pct(s.exact_match_code_rate), _pct(s.bleu),
                     *(["-"] * 3 if cb is None else
                       [_pct(cb.codebleu), _pct(cb.syntax_match), _pct(cb.dataflow_match)]),
                     _pct(s.verdict_mix.get("CE"))])
    lines = _columns(header, rows)
    lines.append("repair precision (PDB/FixEval), in %: edits vs the reference's edit of the buggy "
                 "program (turns >= 1); exact match (with, then without comments), BLEU and "
                 "corpus CodeBLEU with its syntax (SM) and dataflow (DM) match, of the final "
                 "program; CE share")
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
            rows.append([name, program, *(_pct(passes.get(k)) for k in ks),
                         *(_pct(tcas.get(k)) for k in ks), str(s.samples)])
    lines = _columns(header, rows)
    lines.append("FixEval over the runs, in %: pass@k = 1 - C(n-c,k)/C(n,k) (c of n runs pass "
                 "every hidden test), TCA@k = mean share of hidden tests passed by runs 1..k; "
                 "final = each run's last program, turn 0 = its unhinted repair (none for simple, "
                 "compiler, test, human: their turn 0 is the given erroneous program)")
    return "\n".join(lines)


def _turns(manifest: RunManifest | None) -> int | None:
    """The run's α (``--turns``), the last round Repair@k can report."""
    alpha = manifest.params.get("turns") if manifest is not None else None
    return alpha if isinstance(alpha, int) else None


def _run_json(records: list[Any], manifest: RunManifest | None, prices: PriceBook | None) -> dict[str, Any]:
    """``report RUN --json`` of one run's records (a sweep's main setting too)."""
    from ..report.accuracy import talk_accuracy
    from ..report.completeness import completeness, restrict
    from ..report.cost import cost_summary, tokens_json
    from ..report.leaderboard import leaderboard, leaderboard_json, repair_at_k_json, trajectories
    from ..report.pass_at_k import pass_at_k_by_model

    comp = completeness(records, manifest)
    kept = restrict(records)  # the instances every model finished, as the leaderboard ranks them
    board = leaderboard(kept)
    data = {"completeness": {"planned": comp.planned, "finished": comp.finished, "errored": comp.errored,
                             "complete": comp.complete, "common_instances": comp.common,
                             "instances": comp.instances, "notice": comp.banner()},
            **leaderboard_json(board)}
    precision, note = _precision(kept, manifest)
    if precision is not None:
        data["precision"] = msgspec.to_builtins(precision)
    data["precision_note"] = note or None
    data["pass_at_k"] = msgspec.to_builtins(pass_at_k_by_model(trajectories(kept)[0]))
    tokens = _token_rows(records, manifest, prices)
    data["tokens"] = tokens_json(tokens)
    data["cost_total"] = cost_summary(tokens).total
    data["unprotected"] = board.unprotected
    data["repair_at_k"] = repair_at_k_json(kept, _turns(manifest))
    data["test_case_accuracy"] = msgspec.to_builtins(
        talk_accuracy(kept, manifest.protocols if manifest else None))
    return data


def _run_text(records: list[Any], manifest: RunManifest | None, prices: PriceBook | None) -> str:
    """``report RUN``'s plain text: the notice, the leaderboard, tokens, repair precision,
    FixEval's pass@k / TCA@k and seed 002's test-case accuracy."""
    from ..report.accuracy import talk_accuracy
    from ..report.completeness import completeness, restrict
    from ..report.cost import render_tokens_text
    from ..report.html import render_sections_text
    from ..report.layout import accuracy_section
    from ..report.leaderboard import (
        leaderboard,
        render_repair_at_k_text,
        render_text,
        repair_at_k_json,
        trajectories,
        unprotected_protocols,
    )
    from ..report.pass_at_k import pass_at_k_by_model

    banner = completeness(records, manifest).banner()
    kept = restrict(records)
    parts = [f"{banner}."] if banner else []
    parts.append(render_text(leaderboard(kept)))
    tokens = _token_rows(records, manifest, prices)
    if tokens:
        parts.append("\n" + render_tokens_text(tokens))
    parts.append("\n" + render_repair_at_k_text(repair_at_k_json(kept, _turns(manifest))))
    precision, note = _precision(kept, manifest)
    if precision:
        parts.append("\n" + _precision_text(precision, note))
    elif note:
        parts.append("\n" + note)
    samples = pass_at_k_by_model(trajectories(kept)[0])
    if samples:
        parts.append("\n" + _pass_at_k_text(samples))
    accuracy = talk_accuracy(kept, manifest.protocols if manifest else None)
    if accuracy is not None:
        parts.append("\n" + render_sections_text([accuracy_section(accuracy, unprotected_protocols(records))],
                                                  intro=False).rstrip())
    return "\n".join(parts)


class _Sweep(msgspec.Struct, frozen=True):
    """A ``--sweep`` folder read back: its Table VII, its main run, and every setting's
    records (restricted to the instances all its models finished) for the combined table."""

    root: Path
    main_dir: Path
    sensitivity: Sensitivity
    records: list[tuple[str, list[Any]]]
    incomplete: list[str]


def _load_sweep(root: Path, runs: list[tuple[str, Path]], setting: str | None) -> _Sweep:
    from ..report.completeness import completeness, restrict
    from ..report.sensitivity import sensitivity
    from ..runlog.store import read_manifest, read_records

    names = [name for name, _ in runs]
    main = setting if setting is not None else names[0]
    if main not in names:
        raise ConfigError(f"--setting {main!r} is not a setting of {root} (it has: {', '.join(names)})")
    loaded = []
    for name, run in runs:
        records, _ = read_records(run)
        manifest = read_manifest(run)
        banner = completeness(records, manifest).banner()
        loaded.append((name, restrict(records), manifest, banner or ""))
    return _Sweep(root=root, main_dir=dict(runs)[main],
                  sensitivity=sensitivity(loaded, main=main),
                  records=[(name, records) for name, records, _, _ in loaded],
                  incomplete=[f"{name}: {banner}" for name, _, _, banner in loaded if banner])


def _combined(sweep: _Sweep) -> Any:
    """Every setting's models in one leaderboard, each row named ``SETTING MODEL[|PROTOCOL]``."""
    from ..report.leaderboard import leaderboard

    combined = []
    for setting, records in sweep.records:
        combined += [msgspec.structs.replace(r, model=f"{setting} {r.model}",
                                             episode_id=f"{setting}/{r.episode_id}") for r in records]
    return leaderboard(combined)


async def report_command(args: argparse.Namespace) -> int:
    """Print (and write) the report of the run, or the ``--sweep`` folder, in ``args.dir``;
    0 on success.

    A sweep's report is its main setting's (the first of the sweep, or ``--setting``) with
    Table VII and the Kendall τ between the settings added. :class:`ConfigError` for a
    directory without records, for two outputs that both want stdout, for an unknown
    ``--protocol``/``--instances``/``--setting``, or for a ``--config`` that cannot be read
    or has a bad price (the message names the file).
    """
    from ..models.specs import load_prices
    from ..report.completeness import completeness
    from ..report.html import render_sections_text, sensitivity_sections
    from ..report.leaderboard import leaderboard_json, render_text
    from ..report.sensitivity import sensitivity_json
    from ..runlog.store import read_manifest, read_records
    from ..runlog.sweep import run_dirs

    root = Path(args.dir)
    setting: str | None = getattr(args, "setting", None)
    sweep: _Sweep | None = None
    if (root / "records.jsonl").exists():
        if setting is not None:
            raise ConfigError(f"--setting {setting!r}: {root} is a single run, not a --sweep folder")
        run_dir = root
    else:
        sweep = _load_sweep(root, run_dirs(root), setting)  # ConfigError when there is no run here
        run_dir = sweep.main_dir
    all_records, _ = read_records(run_dir)  # read once: every output below is computed from it
    manifest = read_manifest(run_dir)
    comp = completeness(all_records, manifest)
    chosen = getattr(args, "protocol", None)
    if chosen is not None and chosen not in {r.protocol for r in all_records}:
        raise ConfigError(f"--protocol {chosen!r} is not in {run_dir} (it has: "
                          f"{', '.join(sorted({r.protocol for r in all_records}))})")
    incomplete = sweep.incomplete if sweep is not None else ([comp.banner()] if comp.banner() else [])
    if getattr(args, "complete_only", False) and incomplete:
        print(f"error: {root}: {'; '.join(incomplete)} (--complete-only); finish it with "
              f"pairbench run --resume --out {root}" + (" (and the same --sweep)" if sweep else ""),
              file=sys.stderr)
        return 1
    config: str | None = getattr(args, "config", None)
    prices = load_prices(config) if config is not None else None
    markdown: str | None = getattr(args, "markdown", None)
    html: str | None = getattr(args, "html", None)
    md_stdout = markdown == "-"
    if args.json and md_stdout:
        raise ConfigError("--json and --markdown without a file both print to stdout; "
                          "give --markdown a file")
    written: list[str] = []
    md_text: str | None = None
    if html or markdown:
        title = (f"PAIR-BENCH report: {root.resolve().name} (sweep, main setting "
                 f"{sweep.sensitivity.main})" if sweep is not None else None)
        try:
            md_text, written = await asyncio.to_thread(
                _render, run_dir, all_records, manifest, Path(html) if html else None,
                Path(markdown) if markdown and not md_stdout else None, md_stdout,
                getattr(args, "protocol", None), getattr(args, "instances", None), prices,
                sweep.sensitivity if sweep is not None else None, title)
        except OSError as exc:
            raise StoreError(f"cannot write the report: {exc}") from exc
    if args.json:
        data = _run_json(all_records, manifest, prices)
        if sweep is not None:  # the combined table stays on top, as before Table VII existed
            data = {**leaderboard_json(_combined(sweep)),
                    "settings": [info.name for info in sweep.sensitivity.settings],
                    "main": data, **sensitivity_json(sweep.sensitivity)}
        sys.stdout.write(msgspec.json.encode(data).decode() + "\n")
    elif md_text is not None:
        sys.stdout.write(md_text)
    elif sweep is None:
        print(_run_text(all_records, manifest, prices))
    else:
        s = sweep.sensitivity
        names = [info.name for info in s.settings]
        print(f"sweep {root}: {len(names)} settings ({', '.join(names)}); main setting {s.main} "
              "(--setting NAME for another)\n")
        print(f"== Main setting: {s.main} ==")
        print(_run_text(all_records, manifest, prices))
        print("\n== Every setting (each row is SETTING MODEL[|PROTOCOL]) ==")
        print(render_text(_combined(sweep)))
        print("\n" + render_sections_text(sensitivity_sections(s)), end="")
    for line in written:
        print(f"wrote {line}", file=sys.stderr)
    return 0
