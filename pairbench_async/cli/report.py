"""``python -m pairbench_async report DIR``: the leaderboard, JSON, HTML and Markdown of a run.

Owns the command's flags and its files; the numbers and the rendering are
:mod:`..report.leaderboard` (text, JSON) and :mod:`..report.html` (HTML, Markdown, figures).

Outputs: stdout carries exactly one of ``--json``, ``--markdown`` without a file, or the
plain-text leaderboard (then the token usage). ``--html OUT.html`` writes a self-contained
page and the same figures as PNG files in ``OUT_files/`` beside it (handy for papers);
``--markdown OUT.md`` writes Markdown that links the PNGs in ``OUT_files/``. Files are
replaced atomically, so a reader never sees half a report. ``--config FILE`` prices the
tokens with a model config's ``prompt_price_per_million``/``completion_price_per_million``:
the manifest keeps no prices, so the report is told which apply. The work runs in a
thread: reading a large log and drawing figures would otherwise stall the event loop
this command is awaited on.
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
    from ..runlog.records import RunManifest

__all__ = ["add_report_arguments", "report_command"]


def add_report_arguments(p: argparse.ArgumentParser) -> None:
    """The ``report`` subcommand's arguments (DIR first: ``--markdown`` takes an optional file)."""
    p.add_argument("dir", metavar="DIR", help="a run directory (records.jsonl, manifest.json)")
    p.add_argument("--json", action="store_true",
                   help='print {"completeness": {planned, finished, errored, complete, '
                        'common_instances, instances, notice}, "models": {name: {metric: value}}, '
                        '"episodes", "errored", '
                        '"unfinished", "tokens": [{model, protocol, role, called, calls, '
                        'prompt_tokens, completion_tokens, cost}], "cost_total", "unprotected": '
                        '[protocols], "repair_at_k": {name: {k: value}}} (costs null when '
                        'unpriced; cost_total sums the priced rows)')
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


def _render(run_dir: Path, html_out: Path | None, md_out: Path | None, md_stdout: bool,
            main: str | None, instances: list[str] | None,
            prices: PriceBook | None = None) -> tuple[str | None, list[str]]:
    """Build, draw and write; return the Markdown for stdout (if asked) and what was written."""
    from ..report.completeness import completeness, restrict
    from ..report.html import build_report, draw_figures, render_html, render_markdown
    from ..runlog.store import read_manifest, read_records

    records, _ = read_records(run_dir)
    manifest = read_manifest(run_dir)
    comp = completeness(records, manifest)
    report = build_report(restrict(records), manifest, main_protocol=main,
                          instances=instances, title=f"PAIR-BENCH report: {run_dir.resolve().name}",
                          prices=prices, notice=comp.banner() or "")
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


def _precision(records: list[Any], manifest: RunManifest | None) -> dict[str, Any] | None:
    """Repair-precision per model (PDB/FixEval), when the run's dataset can be read back."""
    from ..core.errors import PairbenchError
    from ..datasets.files import load_dataset
    from ..report.precision import precision_by_model

    try:
        instances = {i.id: i for i in load_dataset(manifest.dataset if manifest and manifest.dataset else None,
                                                   skip_invalid=True).instances}
        return dict(precision_by_model(records, instances))
    except PairbenchError:  # the dataset moved or changed: leaderboard only
        return None


def _token_rows(records: list[Any], manifest: RunManifest | None,
                prices: PriceBook | None) -> list[TokenRow]:
    """Token usage (and cost) per (candidate, protocol, role, model called) of the run."""
    from ..report.cost import token_rows

    return token_rows(records, manifest.protocols if manifest else (), prices=prices,
                      feedback=manifest.feedback if manifest else None,
                      validator=manifest.validator if manifest else None)


def _precision_text(summaries: dict[str, Any]) -> str:
    def pct(v: float | None) -> str:
        return "-" if v is None else f"{100 * v:.1f}"

    header = ["Model", "EditPrecision", "EditRecall", "Regenerated", "ExactMatch", "BLEU", "CE"]
    rows = [[name, pct(s.edit_precision), pct(s.edit_recall), pct(s.regeneration_rate),
             pct(s.exact_match_rate), f"{100 * s.bleu:.1f}", pct(s.verdict_mix.get("CE"))]
            for name, s in sorted(summaries.items())]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in [header, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.append("repair precision (PDB/FixEval), in %: edits vs the reference's edit of the buggy "
                 "program (turns >= 1), exact match and BLEU of the final program, CE share")
    return "\n".join(lines)


async def report_command(args: argparse.Namespace) -> int:
    """Print (and write) the report of the run in ``args.dir``; 0 on success.

    :class:`ConfigError` for a directory without records, for two outputs that both
    want stdout, for an unknown ``--protocol``/``--instances``, or for a ``--config``
    that cannot be read or has a bad price (the message names the file).
    """
    from ..models.specs import load_prices
    from ..report.cost import cost_summary, render_tokens_text, tokens_json
    from ..report.leaderboard import leaderboard, leaderboard_json, render_text, repair_at_k_json
    from ..runlog.store import read_manifest, read_records

    run_dir = Path(args.dir)
    if not (run_dir / "records.jsonl").exists():
        return _sweep_report(run_dir, args)
    from ..report.completeness import completeness, restrict

    all_records, _ = read_records(run_dir)
    comp = completeness(all_records, read_manifest(run_dir))
    chosen = getattr(args, "protocol", None)
    if chosen is not None and chosen not in {r.protocol for r in all_records}:
        raise ConfigError(f"--protocol {chosen!r} is not in {run_dir} (it has: "
                          f"{', '.join(sorted({r.protocol for r in all_records}))})")
    if getattr(args, "complete_only", False) and comp.banner():
        print(f"error: {run_dir}: {comp.banner()} (--complete-only); finish it with "
              f"pairbench run --resume --out {run_dir}", file=sys.stderr)
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
        try:
            md_text, written = await asyncio.to_thread(
                _render, run_dir, Path(html) if html else None,
                Path(markdown) if markdown and not md_stdout else None, md_stdout,
                getattr(args, "protocol", None), getattr(args, "instances", None), prices)
        except OSError as exc:
            raise StoreError(f"cannot write the report: {exc}") from exc
    if args.json:
        records, _ = read_records(run_dir)
        manifest = read_manifest(run_dir)
        board = leaderboard(restrict(records))
        data = {"completeness": {"planned": comp.planned, "finished": comp.finished, "errored": comp.errored,
                                 "complete": comp.complete, "common_instances": comp.common,
                                 "instances": comp.instances, "notice": comp.banner()},
                **leaderboard_json(board)}
        precision = _precision(records, manifest)
        if precision is not None:
            data["precision"] = msgspec.to_builtins(precision)
        tokens = _token_rows(records, manifest, prices)
        data["tokens"] = tokens_json(tokens)
        data["cost_total"] = cost_summary(tokens).total
        data["unprotected"] = board.unprotected
        alpha = manifest.params.get("turns") if manifest is not None else None
        data["repair_at_k"] = repair_at_k_json(records, alpha if isinstance(alpha, int) else None)
        sys.stdout.write(msgspec.json.encode(data).decode() + "\n")
    elif md_text is not None:
        sys.stdout.write(md_text)
    else:
        records, _ = read_records(run_dir)
        manifest = read_manifest(run_dir)
        if comp.banner():
            print(f"{comp.banner()}.")
        print(render_text(leaderboard(restrict(records))))
        tokens = _token_rows(records, manifest, prices)
        if tokens:
            print("\n" + render_tokens_text(tokens))
        precision = _precision(records, manifest)
        if precision:
            print("\n" + _precision_text(precision))
    for line in written:
        print(f"wrote {line}", file=sys.stderr)
    return 0


def _sweep_report(root: Path, args: argparse.Namespace) -> int:
    """A ``--sweep`` folder: one combined leaderboard, each row named by its setting."""
    from ..report.leaderboard import leaderboard, leaderboard_json, render_text
    from ..runlog.store import read_records
    from .export import run_dirs

    runs = run_dirs(root)  # ConfigError when there is no run here at all
    ignored = [flag for flag, attr in (("--config", "config"), ("--protocol", "protocol"),
                                       ("--instances", "instances")) if getattr(args, attr, None)]
    if ignored:
        raise ConfigError(f"{root} is a sweep; {', '.join(ignored)} apply to one run: give one of "
                          f"{', '.join(str(run) for _, run in runs)}")
    if getattr(args, "html", None) or getattr(args, "markdown", None):
        raise ConfigError(f"{root} is a sweep of {len(runs)} runs; --html/--markdown report one run: "
                          f"give one of {', '.join(str(run) for _, run in runs)}")
    combined = []
    for setting, run in runs:
        records, _ = read_records(run)
        combined += [msgspec.structs.replace(r, model=f"{setting} {r.model}", episode_id=f"{setting}/{r.episode_id}")
                     for r in records]
    board = leaderboard(combined)
    if args.json:
        data = leaderboard_json(board)
        data["settings"] = [setting for setting, _ in runs]
        sys.stdout.write(msgspec.json.encode(data).decode() + "\n")
    else:
        print(f"sweep {root}: {len(runs)} settings ({', '.join(setting for setting, _ in runs)}); "
              "each row is SETTING MODEL[|PROTOCOL]")
        print(render_text(board))
    return 0
