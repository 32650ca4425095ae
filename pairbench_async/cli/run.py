"""``python -m pairbench_async [run]`` and ``report``: the sweep and its leaderboard.

With no arguments the run sweeps the bundled fixtures with two simulated candidates
of different skill (``sim:0.3``, ``sim:0.8``) and the ``rules`` feedback model into
a fresh directory under ``runs/``, shows a progress bar and ends with the
leaderboard. SIGINT/SIGTERM stop it cleanly: in-flight turns are abandoned, every
record already written stays valid, and ``--resume --out DIR`` continues.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError
from .args import add_sandbox_choice, make_command_sandbox, non_negative_float, positive_int

__all__ = ["add_run_arguments", "error_summary", "render_errors", "run_command", "run_loop"]


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dataset", nargs="+", metavar="PATH", help="instance files (default: bundled fixtures)")
    p.add_argument("--candidate", nargs="+", metavar="SPEC",
                   help="candidate models: sim:SKILL[?latency=S][&loop=P], openai:MODEL[@URL], replay:PATH "
                   "(default: sim:0.3 sim:0.8)")
    p.add_argument("--feedback", metavar="SPEC", default="rules", help="feedback model (default: rules)")
    p.add_argument("--validator-model", metavar="SPEC", default=None,
                   help="an LLM judge for the leakage validator, openai:MODEL[@URL]: asked with Table II's "
                   "rubric about every hint the rules accept, its verdicts recorded (default: the rules alone)")
    p.add_argument("--protocol", nargs="+", default=["pair"], metavar="NAME",
                   help="pair (default); baselines: nohint vanilla simple compiler test human paragraph "
                   "sentence code rephrase selfcritique (several: each its own episodes)")
    p.add_argument("--concurrency", type=positive_int, default=64, metavar="N",
                   help="episodes in flight (default 64)")
    p.add_argument("--runs", type=positive_int, default=1, metavar="K", help="repeated runs with derived seeds")
    p.add_argument("--seed", type=int, default=0, metavar="S")
    p.add_argument("--turns", type=positive_int, default=10, metavar="A", help="alpha: hinted turns (default 10)")
    p.add_argument("--scenario-turns", type=positive_int, default=3, metavar="B",
                   help="beta: turns per scenario (default 3)")
    p.add_argument("--out", metavar="DIR", help="output directory (default: a new runs/<time>)")
    p.add_argument("--resume", action="store_true", help="continue the run recorded in --out")
    p.add_argument("--config", metavar="FILE", help="TOML file with per-model endpoint settings")
    p.add_argument("--limit", type=positive_int, metavar="N", help="only the first N instances")
    p.add_argument("--skip-invalid", action="store_true",
                   help="skip (and count) malformed dataset lines instead of stopping at the first")
    p.add_argument("--allow-errors", action="store_true",
                   help="exit 0 even when episodes ended in error (default: exit 1, causes listed)")
    p.add_argument("--temperature", type=non_negative_float, default=None)
    p.add_argument("--max-tokens", type=positive_int, default=None)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="more on stderr: -v each retry and errored episode, -vv debug")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress bar and no banner; only the leaderboard, the summary and errors")
    p.add_argument("--dry-run", action="store_true",
                   help="print the episodes, model calls and token budget the run would spend, "
                        "and stop (nothing is run or written)")
    p.add_argument("--prompt-style", nargs="+", default=[], metavar="STYLE",
                   help="candidate prompt ablations: persona cot fewshot nodocstring nocontext (project "
                        "context) nohistory (earlier turns) noguidelines")
    p.add_argument("--obfuscate", action="store_true",
                   help="the candidate sees a one-sentence summary of each problem (When Benchmarks Talk)")
    p.add_argument("--after-deferral", choices=("stay", "escalate", "reset"), default="stay",
                   help="the hint level after a scenario is deferred: stay (Algorithm 1, default), "
                   "escalate (Section IV-D.2's text: +1, capped at 6) or reset (L1)")
    p.add_argument("--evidence-reading", choices=("table-ii", "section-iv"), default="table-ii",
                   help="what the feedback model sees of the programs: table-ii (each level's column: "
                   "the candidate's code from L4, the reference from L5; default) or section-iv (both "
                   "programs at every level, as Section IV words it); the validator is the same")
    p.add_argument("--minimal-edit", action="store_true",
                   help="ask the candidate for the smallest change (PDB's minimal-edit mode)")
    p.add_argument("--workers", type=positive_int, default=None, help="sandbox workers (default: cores)")
    add_sandbox_choice(p)
    p.add_argument("--sweep", nargs="+", metavar="KEY=V1,V2",
                   help="run the grid of these parameters (turns, scenario-turns, max-scenarios, "
                   "min-scenario-size, representatives, hint-budget, feedback=SPEC1,SPEC2, "
                   "after-deferral=stay,escalate), one "
                   "subdirectory each; the first setting is the report's main setting")


def _out_dir(args: argparse.Namespace) -> Path:
    from ..runlog.sweep import holds_run

    if args.out:
        out = Path(args.out)
        if args.resume and not holds_run(out):
            # a mistyped folder must not silently start a new run
            raise ConfigError(f"--resume: no run to continue in {out} (no manifest.json there)")
        return out
    if args.resume:
        raise ConfigError("--resume needs --out DIR (the run to continue)")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for k in range(1000):
        p = Path("runs") / (stamp if k == 0 else f"{stamp}-{k}")
        if not p.exists():
            return p
    raise ConfigError("cannot find a fresh directory under runs/")


def _check_keys(config: object, model_config: str | None) -> None:
    """An ``openai:`` model of the public endpoint without its key fails every call:
    say so before a folder is written (a local server may need no key)."""
    import os

    from ..models.endpoint import parse_model_spec
    from ..models.specs import load_model_config, openai_settings

    settings = load_model_config(model_config)
    validator = [config.validator] if config.validator else []  # type: ignore[attr-defined]
    for spec in {*config.candidates, config.feedback, *validator}:  # type: ignore[attr-defined]
        if parse_model_spec(spec)[0] != "openai":
            continue
        s = openai_settings(spec, settings)
        if s.api_key_env and "api.openai.com" in s.base_url and not os.environ.get(s.api_key_env, "").strip():
            raise ConfigError(f"{spec}: the environment variable {s.api_key_env} (its API key) is not set")


_SWEEPABLE = {"turns": "turns", "scenario-turns": "scenario_turns", "max-scenarios": "max_scenarios",
              "min-scenario-size": "min_scenario_size", "representatives": "representatives",
              "hint-budget": "hint_budget", "feedback": "feedback", "after-deferral": "after_deferral",
              "evidence-reading": "evidence_reading"}
#: sweep keys whose values are words (model specs, readings), not integers
_SPEC_KEYS = frozenset({"feedback", "after-deferral", "evidence-reading"})
#: the words a reading's axis may take
_READINGS = {"after-deferral": ("stay", "escalate", "reset"), "evidence-reading": ("table-ii", "section-iv")}


def parse_grid(items: list[str] | None) -> dict[str, list[int | str]]:
    """``turns=10,15 scenario-turns=2,3`` -> ``{"turns": [10, 15], "scenario_turns": [2, 3]}``
    (:func:`~..runner.sweep.run_sweep`'s grid, in the given order; ``feedback=SPEC1,SPEC2``
    sweeps the feedback model)."""
    grid: dict[str, list[int | str]] = {}
    for item in items or ():
        key, _, values = item.partition("=")
        if key not in _SWEEPABLE or not values:
            raise ConfigError(f"--sweep {item!r}: expected KEY=V1,V2 with KEY in {', '.join(_SWEEPABLE)}")
        if _SWEEPABLE[key] in grid:
            raise ConfigError(f"--sweep names {key} twice; give its values once, comma-separated")
        raw = values.split(",")
        if key in _SPEC_KEYS:
            parsed: list[int | str] = [v.strip() for v in raw]
            if key in _READINGS and not set(parsed) <= set(_READINGS[key]):
                *first, last = _READINGS[key]
                raise ConfigError(f"--sweep {item!r}: {key} is {', '.join(first)} or {last}")
            if not all(parsed):
                raise ConfigError(f"--sweep {item!r}: an empty {'model spec' if key == 'feedback' else 'value'}")
        else:
            try:
                parsed = [int(v) for v in raw]
            except ValueError:
                raise ConfigError(f"--sweep {item!r}: values must be integers") from None
        twice = sorted({str(v) for v in parsed if parsed.count(v) > 1})
        if twice:  # two settings would share a folder
            raise ConfigError(f"--sweep {key}: {', '.join(twice)} given more than once")
        grid[_SWEEPABLE[key]] = parsed
    return grid


def parse_sweep(items: list[str] | None) -> list[dict[str, int | str]]:
    """Every point of ``--sweep``'s grid as the command line spells it, in a stable order
    (the first is the report's main setting)."""
    from ..runner.sweep import grid_points

    return [{k.replace("_", "-"): v for k, v in point.items()} for point in grid_points(parse_grid(items))]


def _run_config(args: argparse.Namespace) -> Any:
    from ..runner.config import RunConfig

    return RunConfig(
        candidates=args.candidate or ["sim:0.3", "sim:0.8"], feedback=args.feedback,
        validator=args.validator_model,
        protocols=args.protocol, runs=args.runs, seed=args.seed, turns=args.turns,
        scenario_turns=args.scenario_turns, concurrency=args.concurrency,
        temperature=args.temperature, max_tokens=args.max_tokens, model_config=args.config,
        prompt_styles=args.prompt_style, minimal_edit=args.minimal_edit, obfuscate=args.obfuscate,
        after_deferral=args.after_deferral, evidence_reading=args.evidence_reading,
    )


def _instances(args: argparse.Namespace) -> list[Any]:
    from ..datasets.files import load_dataset

    read = load_dataset(args.dataset, skip_invalid=args.skip_invalid)
    for skipped in read.skipped:
        print(f"skipped: {skipped}", file=sys.stderr)
    instances = read.instances[: args.limit] if args.limit is not None else read.instances
    if not instances:
        raise ConfigError("no instances to run")
    if "nocontext" in args.prompt_style and not any(i.context.strip() for i in instances):
        print("warning: --prompt-style nocontext drops the project context (FeedbackEval's sense), "
              "but no instance of this dataset has one, so it changes nothing; nohistory drops "
              "the earlier turns (what nocontext meant before)", file=sys.stderr)
    return instances


class _Printer:
    """What a run prints of each setting (``run_sweep``'s observer): a banner and a
    progress bar while it runs; its leaderboard, statistics and errors when it ends."""

    def __init__(self, args: argparse.Namespace, instances: list[Any]) -> None:
        self.args, self.instances = args, instances
        self.out: Path | None = None
        self.errored = 0

    async def __call__(self, point: Any, records: Any, ev: Any) -> None:
        from ..report.leaderboard import leaderboard, render_text
        from ..runlog.store import read_records

        args, config, sweep, out = self.args, point.config, point.setting, point.out_dir
        self.out = out
        if not args.quiet:
            print(f"pairbench: {len(self.instances)} instances x {len(config.candidates)} candidates x "
                  f"{len(config.protocols)} protocols x {config.runs} runs"
                  + (f" (setting {sweep.name})" if sweep else "") + f" -> {out}", file=sys.stderr)
        await _consume(records, ev, args.no_progress or args.quiet)
        written, _ = read_records(out)
        if sweep is not None:
            print(f"\n== {', '.join(f'{k}={v}' for k, v in sweep.values.items())} ==")
        print(render_text(leaderboard(written)))
        stats = ev.statistics()
        print(f"{stats.episodes_done} episodes ({stats.episodes_skipped} already done, "
              f"{stats.errors} errors), {stats.turns} turns, {stats.tests_run} tests in "
              f"{stats.elapsed_s:.1f}s; records: {out / 'records.jsonl'}")
        if stats.sandbox_nodes_lost or stats.sandbox_retries:
            print(f"sandbox: {stats.sandbox_nodes_lost} node(s) lost, {stats.sandbox_retries} "
                  "batch(es) of tests run again on another node (one result per test)")
        errors = error_summary(written)
        self.errored += sum(count for _, count, _ in errors)
        if errors:
            print(render_errors(errors, stats.stopped_models, out), file=sys.stderr)


async def run_command(args: argparse.Namespace) -> int:
    from ..runner.sweep import plan_sweep, run_sweep
    from ..sandbox.config import SandboxConfig

    instances = _instances(args)
    base = _run_config(args)
    grid = parse_grid(args.sweep)
    configs = [point.config for point in plan_sweep(base, grid, ".")]  # every setting checked first
    if args.dry_run:
        print(dry_run_text(instances, configs, len(configs), args.config))
        return 0
    for config in configs:
        _check_keys(config, args.config)
    sandbox = make_command_sandbox(args, SandboxConfig(workers=args.workers))  # Ray present?
    root = _out_dir(args)
    printer = _Printer(args, instances)
    main = asyncio.current_task()
    loop = asyncio.get_running_loop()
    interrupted = False

    def stop() -> None:
        nonlocal interrupted
        interrupted = True
        if main is not None:
            main.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop)
    try:
        async with contextlib.AsyncExitStack() as stack:
            stack.push_async_callback(sandbox.aclose)
            await sandbox.start()
            await run_sweep(base, grid, instances, root, resume=args.resume, sandbox=sandbox,
                            dataset_paths=[str(p) for p in (args.dataset or [])], observe=printer)
    except asyncio.CancelledError:
        if not interrupted:
            raise
        print(f"\ninterrupted: records so far are in {printer.out or root}; continue with: pairbench run "
              f"--resume --out {root} (and the same arguments)", file=sys.stderr)
        return 130
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    return 1 if printer.errored and not args.allow_errors else 0


def error_summary(records: list[object]) -> list[tuple[str, int, str]]:
    """Errored episodes grouped by cause: (cause, count, first message), most frequent first.

    The cause is the error's class and its message with numbers, quoted values and
    instance ids blanked, so that the same failure on 140 instances is one line.
    """
    from ..models.redact import redact
    from ..runlog.records import EpisodeRecord

    groups: dict[str, list[str]] = {}
    for rec in records:
        if isinstance(rec, EpisodeRecord) and rec.status == "error":
            message = redact(rec.error or "unknown error")  # keys never reach a screen
            cause = re.sub(r"\d+(\.\d+)?", "#", message.replace(rec.instance_id, "<instance>"))
            cause = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", cause)[:160]
            groups.setdefault(cause, []).append(message)
    ordered = sorted(groups.items(), key=lambda kv: -len(kv[1]))
    return [(cause, len(messages), messages[0]) for cause, messages in ordered]


def render_errors(errors: list[tuple[str, int, str]], stopped: list[str], out: Path) -> str:
    total = sum(count for _, count, _ in errors)
    lines = [f"\n{total} episode(s) ended in error, by cause:"]
    for _, count, first in errors:
        lines.append(f"  {count:5} x {first[:500]}")
    for spec in stopped:
        lines.append(f"  {spec}: stopped early by its circuit breaker (its first calls failed and none "
                     "answered), so its remaining episodes were not attempted")
    lines.append(f"records: {out / 'records.jsonl'} (episode records with \"status\": \"error\"); "
                 "exit status 1 (--allow-errors: 0)")
    return "\n".join(lines)


async def _consume(records: Any, ev: Any, quiet: bool) -> None:
    """Read a setting's records to the end, with a progress bar unless ``quiet``."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..runlog.records import EpisodeRecord

    progress = Progress(TextColumn("episodes"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("{task.fields[info]}"), disable=quiet, transient=False,
                        console=_stderr_console())
    with progress:
        task = None
        t0 = time.monotonic()
        async for record in records:
            s = ev.statistics()
            if task is None:
                task = progress.add_task("run", total=s.episodes_total, completed=s.episodes_skipped, info="")
            if isinstance(record, EpisodeRecord):
                progress.advance(task)
            rate = s.tests_run / max(1e-9, time.monotonic() - t0)
            progress.update(task, info=f"turns {s.turns}  tests/s {rate:,.0f}  tokens "
                            f"{s.prompt_tokens + s.completion_tokens:,}  errors {s.errors}")


def _stderr_console() -> object:
    from rich.console import Console

    return Console(stderr=True)


def run_loop(coro: object) -> int:
    """Run on uvloop when it is installed, else on asyncio's default loop."""
    try:
        import uvloop
    except ImportError:
        return asyncio.run(coro)  # type: ignore[arg-type]
    return uvloop.run(coro)  # type: ignore[arg-type,no-any-return]


def dry_run_text(instances: list[Any], configs: list[Any], settings: int, config: str | None) -> str:
    """What a run would spend (:func:`~..runner.estimate.estimate_sweep`), as the dry run prints it."""
    from ..models.specs import answers_locally, load_prices
    from ..runner.estimate import estimate_sweep

    prices = load_prices(config) if config else None
    estimate = estimate_sweep(instances, configs, prices)
    base = configs[0]
    lines = [f"dry run: {estimate.episodes} episodes = {len(instances)} instances x {len(base.candidates)} "
             f"candidates x {len(base.protocols)} protocols x {base.runs} runs x {settings} settings; "
             "nothing run or written",
             "model calls (upper bound) and tokens (estimate) per model:"]
    unpriced = []
    for spec, s in estimate.models.items():
        offline = answers_locally(spec)
        cost = f", cost <= {estimate.costs[spec]:,.2f}" if spec in estimate.costs else ""
        if prices is not None and spec not in estimate.costs and not offline:
            unpriced.append(spec)
        elif prices is None and not offline:
            unpriced.append(spec)
        lines.append(f"  {spec}: <= {s.calls:,} calls, ~{s.prompt_tokens:,} prompt + <= {s.completion_tokens:,} "
                     f"completion tokens{cost}" + (" (offline: free)" if offline else ""))
    if prices is not None:
        lines.append(f"total cost <= {sum(estimate.costs.values()):,.2f} (prices from {config})"
                     + (f"; unpriced: {', '.join(unpriced)}" if unpriced else ""))
    elif unpriced:
        lines.append("no prices given: --config FILE with prompt_price_per_million and "
                     "completion_price_per_million prices the calls")
    return "\n".join(lines)
