"""``python -m pairbench_async report DIR``: the command's flags, its files and its stdout.

The report itself is library calls: :func:`..report.runs.load_run` reads the run (or the
sweep) once, :mod:`..report.documents` turns it into the plain text, the JSON and the
page's numbers, :mod:`..report.html` renders the page as HTML or Markdown and
:mod:`..report.figures` draws its figures. This module parses the flags, calls them,
writes the files and prints.

Outputs: stdout carries exactly one of ``--json``, ``--markdown`` without a file, or the
plain text (the leaderboard, then token usage, Repair@k, repair precision, FixEval's
pass@k / TCA@k and seed 002's test-case accuracy). ``--html OUT.html`` writes a
self-contained page and the same figures as PNG files in ``OUT_files/`` beside it (handy
for papers); ``--markdown OUT.md`` writes Markdown that links the PNGs in ``OUT_files/``.
Files are replaced atomically, so a reader never sees half a report; what was written is
listed on stderr. ``--config FILE`` prices the tokens with a model config's
``prompt_price_per_million``/``completion_price_per_million``: the manifest keeps no
prices, so the report is told which apply. Reading the records, and building, drawing
and writing the page, run in a thread, so that a large log does not stall the event loop
this command is awaited on.

A ``--sweep`` folder (one run per setting) reports its main setting (the sweep's first,
or ``--setting NAME``) as that run alone would, plus Table VII (seed 000, RQ3) and the
Kendall τ between every pair of settings' model rankings (:mod:`..report.sensitivity`);
the text also keeps the combined leaderboard of every setting, and ``--json`` keeps it on
top (``models``, ``settings``) with the main setting's report under ``main``.

PDB's bug-level recall and precision verify each bug fix by running a pseudo-fixed program
(:mod:`..report.bugs`); the ones the records do not already hold run here, in the sandbox
(``--workers``, ``--no-confine``, ``--sandbox`` as for ``validate``), before the report is
built, and the pure report code gets their verdicts. ``--no-bug-check`` skips them: the
episodes that needed one are then counted as unverified.
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

from ..core.errors import ConfigError, SandboxError, StoreError

if TYPE_CHECKING:
    from ..core.types import Instance
    from ..models.prices import PriceBook
    from ..report.runs import LoadedRun
    from ..report.sensitivity import Sensitivity

__all__ = ["add_report_arguments", "report_command"]


def add_report_arguments(p: argparse.ArgumentParser) -> None:
    """The ``report`` subcommand's arguments (DIR first: ``--markdown`` takes an optional file)."""
    from .args import add_sandbox_flags

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
                        '{edit_precision, edit_recall (line proximity over turns, not PDB\'s), '
                        'regeneration_rate, exact_match_rate, '
                        'exact_match_code_rate (without comments), bleu (the mean of the final programs\' '
                        'sentence BLEU, not FixEval\'s), corpus_bleu (FixEval\'s corpus-level BLEU-4, the '
                        '"BLEU" of the text and Markdown reports), verdict_mix, '
                        'verdict_mix_by_turn, codebleu: {codebleu, ngram_match, '
                        'weighted_ngram_match, syntax_match, dataflow_match} or null, '
                        'compilation_accuracy, pdb_recall, pdb_precision (PDB\'s bug-level recall and '
                        'fix-verified edit-level precision of the final programs), pdb_episodes, '
                        'pdb_bugs, pdb_fixed, pdb_unverified}}, '
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
    p.add_argument("--viewer", metavar="OUT.html",
                   help="write the transcript viewer: one self-contained page to filter, search "
                        "and sort the episodes and read each one's turns (prompts, replies, hints, "
                        "rejected drafts, diffs, verdicts)")
    p.add_argument("--with-tests", action="store_true",
                   help="show hidden test data in the transcripts (--html, --viewer): the feedback "
                        "model's prompts, the turns of protocols that show tests, and each turn's "
                        "failing tests' inputs and expected outputs. Off by default: a page may be "
                        "shared")
    p.add_argument("--markdown", nargs="?", const="-", default=None, metavar="OUT.md",
                   help="Markdown report: to OUT.md (figures in OUT_files/), or to stdout "
                        "without a file")
    p.add_argument("--protocol", metavar="NAME", default=None,
                   help="main protocol of Tables III/IV and Figs. 3-6 (default: pair if run)")
    p.add_argument("--instances", nargs="+", metavar="ID", default=None,
                   help="instances of Fig. 5 (default: the 3 where the models differ most)")
    p.add_argument("--no-bug-check", action="store_true",
                   help="do not run PDB's pseudo-fixed programs in the sandbox: PDB recall and "
                        "precision then score only the episodes whose verdicts the records hold")
    add_sandbox_flags(p)
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


def _write_viewer(run: LoadedRun, out: Path, with_tests: bool, title: str) -> str:
    """Write the transcript viewer of ``run``, of every setting of a sweep (each episode
    labelled with its setting, the page's text budget shared among them); return what was
    written."""
    from ..report.documents import transcripts
    from ..report.transcript import of_settings
    from ..report.transcript_viewer import VIEWER_LIMITS, render_viewer

    runs = run.runs()
    limits = msgspec.structs.replace(VIEWER_LIMITS,
                                     total_chars=VIEWER_LIMITS.total_chars // len(runs))
    parts = [(name, transcripts(r, list(r.manifest.protocols) if r.manifest is not None else [],
                                with_tests=with_tests, limits=limits)) for name, r in runs]
    tx = of_settings(parts) if run.is_sweep else parts[0][1]
    data = render_viewer(tx, title).encode()
    _write_atomic(out, data)
    return f"{out} ({len(tx.episodes)} episodes, {len(data) / 1e6:.1f} MB)"


def _write_page(run: LoadedRun, html_out: Path | None, md_out: Path | None, md_stdout: bool,
                main: str | None, instances: list[str] | None, prices: PriceBook | None,
                sweep: tuple[Path, Sensitivity] | None,
                with_tests: bool = False,
                verdicts: dict[tuple[str, str], bool] | None = None,
                everything: LoadedRun | None = None) -> tuple[str | None, list[str]]:
    """Build, draw and write the page (a sweep's: its folder and Table VII; the tables of
    ``run``, its main setting, the transcripts of ``everything``, every setting); return
    the Markdown for stdout (if asked) and what was written."""
    from ..report.documents import page, page_html
    from ..report.html import draw_figures, render_markdown

    title = (f"PAIR-BENCH report: {sweep[0].resolve().name} (sweep, main setting {sweep[1].main})"
             if sweep is not None else None)
    report = page(run, main=main, instances=instances, prices=prices,
                  sensitivity=sweep[1] if sweep is not None else None, title=title,
                  bug_verdicts=verdicts)
    written: list[str] = []
    figures = draw_figures(report) if html_out or md_out else {}
    if html_out is not None:
        _write_figures(_files_dir(html_out), figures)
        _write_atomic(html_out, page_html(everything or run, report, figures,
                                          with_tests=with_tests).encode())
        written.append(f"{html_out} (+{len(figures)} figures in {_files_dir(html_out)}/)")
    if md_out is not None:
        paths = _write_figures(_files_dir(md_out), figures)
        _write_atomic(md_out, render_markdown(report, paths).encode())
        written.append(str(md_out))
    return (render_markdown(report) if md_stdout else None), written


async def _load(root: Path, args: argparse.Namespace) -> LoadedRun:
    """The run or sweep in ``root``, read once in a thread; the flags that name a setting
    or a protocol checked against it."""
    from ..report.runs import load_run
    from ..runlog.sweep import is_run

    setting: str | None = getattr(args, "setting", None)
    if setting is not None and is_run(root):
        raise ConfigError(f"--setting {setting!r}: {root} is a single run, not a --sweep folder")
    loaded = await asyncio.to_thread(load_run, root, setting=setting)
    run = loaded.main_run
    chosen = getattr(args, "protocol", None)
    if chosen is not None and chosen not in {r.protocol for r in run.all_records}:
        raise ConfigError(f"--protocol {chosen!r} is not in {run.path} (it has: "
                          f"{', '.join(sorted({r.protocol for r in run.all_records}))})")
    return loaded


def _stdout(args: argparse.Namespace, loaded: LoadedRun, s: Sensitivity | None,
            prices: PriceBook | None, md_text: str | None,
            verdicts: dict[tuple[str, str], bool] | None = None) -> str:
    """What stdout carries: the JSON, the Markdown, or the plain text."""
    from ..report.documents import run_json, run_text, sweep_json, sweep_text

    if args.json:
        data = (run_json(loaded.main_run, prices, bug_verdicts=verdicts) if s is None
                else sweep_json(loaded, s, prices, bug_verdicts=verdicts))
        return msgspec.json.encode(data).decode() + "\n"
    if md_text is not None:
        return md_text
    return (run_text(loaded.main_run, prices, bug_verdicts=verdicts) + "\n" if s is None
            else sweep_text(loaded, s, prices, bug_verdicts=verdicts))


async def _passes(sandbox: Any, instance: Instance, program: str) -> bool | None:
    """Does ``program`` pass every hidden test? None on a sandbox fault (says nothing)."""
    results = await sandbox.run(instance.program(program), instance.tests, instance.limits,
                                checker=instance.checker)
    if any(r.verdict.value == "SF" for r in results):
        return None
    return all(r.passed for r in results)


async def _bug_verdicts(run: LoadedRun, args: argparse.Namespace) -> dict[tuple[str, str], bool]:
    """Run the programs PDB's measures need and the records do not hold (none: no sandbox)."""
    from ..report.documents import pdb_needed
    from ..report.precision import verdict_key
    from ..sandbox.config import SandboxConfig
    from .args import make_command_sandbox

    needed = await asyncio.to_thread(pdb_needed, run)
    if not needed:
        return {}
    config = SandboxConfig(workers=args.workers, confine=not args.no_confine,
                           require_full=args.require_full_confinement)
    sandbox = make_command_sandbox(args, config)
    try:
        await sandbox.start()
        got = await asyncio.gather(*(_passes(sandbox, inst, program) for inst, program in needed))
    except SandboxError as exc:  # the report does not need a sandbox for anything else
        print(f"warning: PDB's bug checks could not run ({exc}): the episodes that need them are "
              "reported as unverified", file=sys.stderr)
        return {}
    finally:
        await sandbox.aclose()
    return {verdict_key(inst.id, program): ok
            for (inst, program), ok in zip(needed, got, strict=True) if ok is not None}


async def report_command(args: argparse.Namespace) -> int:
    """Print (and write) the report of the run, or the ``--sweep`` folder, in ``args.dir``;
    0 on success, 1 when ``--complete-only`` refuses an unfinished run.

    A sweep's report is its main setting's (the first of the sweep, or ``--setting``) with
    Table VII and the Kendall τ between the settings added. :class:`ConfigError` for a
    directory without records, for two outputs that both want stdout, for an unknown
    ``--protocol``/``--instances``/``--setting``, or for a ``--config`` that cannot be read
    or has a bad price (the message names the file).
    """
    from ..models.specs import load_prices

    root = Path(args.dir)
    loaded = await _load(root, args)  # read once: every output below is computed from it
    incomplete = loaded.notices()
    if getattr(args, "complete_only", False) and incomplete:
        print(f"error: {root}: {'; '.join(incomplete)} (--complete-only); finish it with "
              f"pairbench run --resume --out {root}"
              + (" (and the same --sweep)" if loaded.is_sweep else ""), file=sys.stderr)
        return 1
    config: str | None = getattr(args, "config", None)
    prices = load_prices(config) if config is not None else None
    markdown: str | None = getattr(args, "markdown", None)
    html: str | None = getattr(args, "html", None)
    md_stdout = markdown == "-"
    with_tests: bool = getattr(args, "with_tests", False)
    if args.json and md_stdout:
        raise ConfigError("--json and --markdown without a file both print to stdout; "
                          "give --markdown a file")
    s = loaded.sensitivity() if loaded.is_sweep else None
    verdicts = None if getattr(args, "no_bug_check", False) else await _bug_verdicts(loaded.main_run, args)
    written: list[str] = []
    md_text: str | None = None
    if html or markdown:
        try:
            md_text, written = await asyncio.to_thread(
                _write_page, loaded.main_run, Path(html) if html else None,
                Path(markdown) if markdown and not md_stdout else None, md_stdout,
                getattr(args, "protocol", None), getattr(args, "instances", None), prices,
                (root, s) if s is not None else None, with_tests, verdicts, loaded)
        except OSError as exc:
            raise StoreError(f"cannot write the report: {exc}") from exc
    viewer: str | None = getattr(args, "viewer", None)
    if viewer:
        name = loaded.path.resolve().name if loaded.path is not None else ""
        try:
            written.append(await asyncio.to_thread(
                _write_viewer, loaded, Path(viewer), with_tests,
                f"PAIR-BENCH transcripts: {name}"))
        except OSError as exc:
            raise StoreError(f"cannot write the viewer: {exc}") from exc
    sys.stdout.write(_stdout(args, loaded, s, prices, md_text, verdicts))
    for line in written:
        print(f"wrote {line}", file=sys.stderr)
    return 0
