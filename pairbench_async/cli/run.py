"""``python -m pairbench_async [run]`` and ``report``: the sweep and its leaderboard.

With no arguments the run sweeps the bundled fixtures with two simulated candidates
of different skill (``sim:0.3``, ``sim:0.8``) and the ``rules`` feedback model into
a fresh directory under ``runs/``, shows a progress bar and ends with the
leaderboard. SIGINT/SIGTERM stop it cleanly: in-flight turns are abandoned, every
record already written stays valid, and ``--resume --out DIR`` continues.

The run parameters default to None here so that a resume can tell what was given from
what was left out: a value left out is the run's recorded one (``runner.resume``), or,
for a new run, :class:`~..runner.config.RunConfig`'s default.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
import time
from pathlib import Path
from typing import Any

from ..core.errors import ConfigError, DatasetError
from ..report.errors import error_summary, render_errors
from .args import (
    LOOP_RULE,
    add_loop_rule_flags,
    add_sandbox_choice,
    loop_rule,
    make_command_sandbox,
    non_negative_float,
    positive_int,
)

#: the exit status of a run whose folder could not be written (``cli.main`` documents it)
EXIT_WRITE = 5  # the same as cli.main.EXIT_WRITE

__all__ = ["EXIT_WRITE", "add_run_arguments", "error_summary", "render_errors", "run_command", "run_loop"]


def add_run_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dataset", nargs="+", metavar="PATH", help="instance files (default: bundled fixtures)")
    p.add_argument("--candidate", nargs="+", metavar="[NAME=]SPEC",
                   help="candidate models: sim:SKILL[?latency=S][&loop=P], openai:MODEL[@URL], replay:PATH "
                   "(default: sim:0.3 sim:0.8); NAME=SPEC names one (letters, digits, . _ -): rows, "
                   "records and episode ids say NAME instead of the spec")
    p.add_argument("--feedback", metavar="[NAME=]SPEC", default=None, help="feedback model (default: rules)")
    p.add_argument("--validator-model", metavar="[NAME=]SPEC", default=None,
                   help="an LLM judge for the leakage validator, openai:MODEL[@URL]: asked with Table II's "
                   "rubric about every hint the rules accept, its verdicts recorded (default: the rules alone)")
    p.add_argument("--protocol", nargs="+", default=None, metavar="NAME",
                   help="pair (default); baselines: nohint vanilla simple compiler test human paragraph "
                   "sentence code rephrase selfcritique (several: each its own episodes)")
    p.add_argument("--concurrency", type=positive_int, default=64, metavar="N",
                   help="episodes in flight (default 64)")
    p.add_argument("--runs", type=positive_int, default=None, metavar="K",
                   help="repeated runs with derived seeds (default 1)")
    p.add_argument("--seed", type=int, default=None, metavar="S", help="(default 0)")
    p.add_argument("--turns", type=positive_int, default=None, metavar="A",
                   help="alpha: hinted turns (default 10)")
    p.add_argument("--scenario-turns", type=positive_int, default=None, metavar="B",
                   help="beta: turns per scenario (default 3)")
    p.add_argument("--out", metavar="DIR", help="output directory (default: a new runs/<time>)")
    p.add_argument("--resume", action="store_true",
                   help="continue the run (or --sweep) recorded in --out with its recorded parameters; "
                   "arguments given must agree with them")
    p.add_argument("--retry-errors", action="store_true",
                   help="with --resume: run the episodes whose latest attempt ended in error again (their "
                   "new records supersede the old ones, which stay in the file)")
    p.add_argument("--allow-endpoint-change", action="store_true",
                   help="with --resume: continue although a model's base URL differs from the recorded one")
    p.add_argument("--config", metavar="FILE", help="TOML file with per-model endpoint settings")
    p.add_argument("--limit", type=positive_int, metavar="N", help="only the first N instances")
    p.add_argument("--skip-invalid", action="store_true", default=None,
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
    p.add_argument("--prompt-style", nargs="+", default=None, metavar="STYLE",
                   help="candidate prompt ablations: persona cot fewshot nodocstring nocontext (project "
                        "context) nohistory (earlier turns) noguidelines")
    p.add_argument("--obfuscate", action="store_true", default=None,
                   help="the candidate sees a one-sentence summary of each problem (When Benchmarks Talk)")
    p.add_argument("--after-deferral", choices=("stay", "escalate", "reset"), default=None,
                   help="the hint level after a scenario is deferred: stay (Algorithm 1, default), "
                   "escalate (Section IV-D.2's text: +1, capped at 6) or reset (L1)")
    p.add_argument("--evidence-reading", choices=("table-ii", "section-iv"), default=None,
                   help="what the feedback model is shown: section-iv (default: the reference, the current "
                   "program and the scenario's tests at every level, as Section IV words it) or table-ii "
                   "(this project's masks by level: the candidate's code from L4, the reference from L5); "
                   "the validator is the same")
    p.add_argument("--validator-reading", choices=("learned", "rules"), default=None,
                   help="how the leakage validator reads Table II's boundaries: learned (default: a model "
                   "trained on the labelled hint sets, with the rules' exact checks; 0.94 / 0.88 on sets it never "
                   "trained on) or rules (the hand-written rules alone, 0.78-0.83 there; how runs made before "
                   "stop 34 read, and resume)")
    p.add_argument("--baselines", choices=("paper", "pairbench"), default=None,
                   help="how FeedbackEval's and When Benchmarks Talk's protocols run: paper (as the papers "
                   "ran them: their prompts, recorded human reviews verbatim, no leakage validator; "
                   "default) or pairbench (validated feedback, PAIR-BENCH's prompt with the history; how "
                   "runs made before this option ran, and resume)")
    p.add_argument("--minimal-edit", action="store_true", default=None,
                   help="ask the candidate for the smallest change (PDB's minimal-edit mode)")
    p.add_argument("--workers", type=positive_int, default=None, help="sandbox workers (default: cores)")
    add_loop_rule_flags(p, "; recorded, so a resume keeps it")
    add_sandbox_choice(p)
    p.add_argument("--sweep", nargs="+", metavar="KEY=V1,V2",
                   help="run the grid of these parameters (turns, scenario-turns, max-scenarios, "
                   "min-scenario-size, representatives, hint-budget, feedback=SPEC1,SPEC2, "
                   "after-deferral=stay,escalate, evidence-reading=section-iv,table-ii, "
                   "validator-reading=learned,rules), one "
                   "subdirectory each; the first setting is the report's main setting")


def _out_dir(args: argparse.Namespace) -> Path:

    if args.out:
        out = Path(args.out)
        if args.resume and not out.is_dir():
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
    from ..models.specs import load_model_config, openai_settings, with_names

    settings = with_names(load_model_config(model_config), config.specs())  # type: ignore[attr-defined]
    for spec in set(config.specs().values()):  # type: ignore[attr-defined]
        if parse_model_spec(spec)[0] != "openai":
            continue
        s = openai_settings(spec, settings)
        if s.api_key_env and "api.openai.com" in s.base_url and not os.environ.get(s.api_key_env, "").strip():
            raise ConfigError(f"{spec}: the environment variable {s.api_key_env} (its API key) is not set")


_SWEEPABLE = {"turns": "turns", "scenario-turns": "scenario_turns", "max-scenarios": "max_scenarios",
              "min-scenario-size": "min_scenario_size", "representatives": "representatives",
              "hint-budget": "hint_budget", "feedback": "feedback", "after-deferral": "after_deferral",
              "evidence-reading": "evidence_reading", "validator-reading": "validator_reading"}
#: sweep keys whose values are words (model specs, readings), not integers
_SPEC_KEYS = frozenset({"feedback", "after-deferral", "evidence-reading", "validator-reading"})
#: the words a reading's axis may take
_READINGS = {"after-deferral": ("stay", "escalate", "reset"), "evidence-reading": ("table-ii", "section-iv"),
             "validator-reading": ("learned", "rules")}


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


#: RunConfig field (or run option) <- the argument that gives it, as the command spells it
_GIVEN = {"candidates": ("candidate", "--candidate"), "feedback": ("feedback", "--feedback"),
          "validator": ("validator_model", "--validator-model"), "protocols": ("protocol", "--protocol"),
          "runs": ("runs", "--runs"), "seed": ("seed", "--seed"), "turns": ("turns", "--turns"),
          "scenario_turns": ("scenario_turns", "--scenario-turns"),
          "temperature": ("temperature", "--temperature"), "max_tokens": ("max_tokens", "--max-tokens"),
          "model_config": ("config", "--config"), "prompt_styles": ("prompt_style", "--prompt-style"),
          "minimal_edit": ("minimal_edit", "--minimal-edit"), "obfuscate": ("obfuscate", "--obfuscate"),
          "after_deferral": ("after_deferral", "--after-deferral"),
          "evidence_reading": ("evidence_reading", "--evidence-reading"),
          "baselines": ("baselines", "--baselines"),
          "validator_reading": ("validator_reading", "--validator-reading"),
          "limit": ("limit", "--limit"), "skip_invalid": ("skip_invalid", "--skip-invalid"),
          "loop_factor": ("loop_factor", "--loop-factor"), "loop_floor": ("loop_floor", "--loop-floor"),
          "loop_probe": ("loop_probe", "--loop-probe"), "resident": ("resident", "--child-per-test"),
          "loop_floor_shared": ("loop_floor_shared", "--loop-floor-shared")}
#: options that are not RunConfig fields
_OPTIONS = ("limit", "skip_invalid", *LOOP_RULE)


def _settings(
    args: argparse.Namespace, root: Path | None,
) -> tuple[Any, dict[str, list[Any]], list[str], dict[str, Any]]:
    """The run's configuration, grid, dataset files and options (``limit``, ``skip_invalid``):
    what the arguments give, and, with ``--resume``, the rest from the run's manifest(s)
    (a given value that differs from the recorded one is refused, naming both)."""
    from ..runner.config import RunConfig
    from ..runner.resume import merge_recorded, recorded_run

    given = {field: getattr(args, attr) for field, (attr, _) in _GIVEN.items() if getattr(args, attr) is not None}
    grid = parse_grid(args.sweep)
    if args.resume and root is not None:
        recorded = recorded_run(root)
        if args.sweep is not None:
            given["grid"] = grid
        merged = merge_recorded(recorded, given, where=root,
                                spelled={**{f: flag for f, (_, flag) in _GIVEN.items()}, "grid": "--sweep"})
        config, grid, options = merged["config"], merged["grid"], merged["options"]
        dataset = args.dataset if args.dataset is not None else recorded.dataset
    else:
        config = {k: v for k, v in given.items() if k not in _OPTIONS}
        options = {k: v for k, v in given.items() if k in _OPTIONS}
        dataset = args.dataset or []
    # the loop rule decides verdicts past its bounds, so a run records it (a folder from
    # before it was recorded ran the rule's earlier defaults: LEGACY_LOOP_RULE)
    from ..runner.resume import LEGACY_LOOP_RULE
    from ..sandbox.config import SandboxConfig

    now = SandboxConfig()
    for key, value in (LEGACY_LOOP_RULE if args.resume else {k: getattr(now, k) for k in LOOP_RULE}).items():
        options.setdefault(key, value)
    # a folder from before the shared floor was recorded ran every test under loop_floor
    options.setdefault("loop_floor_shared", options["loop_floor"])
    return RunConfig(**config, concurrency=args.concurrency), grid, list(dataset), options


def _instances(dataset: list[str], options: dict[str, Any], config: Any) -> list[Any]:
    from ..datasets.files import load_dataset

    read = load_dataset(dataset or None, skip_invalid=bool(options.get("skip_invalid")))
    for skipped in read.skipped:
        print(f"skipped: {skipped}", file=sys.stderr)
    limit = options.get("limit")
    instances = read.instances[: limit] if limit is not None else read.instances
    if not instances:
        raise ConfigError("no instances to run")
    if "nocontext" in config.prompt_styles and not any(i.context.strip() for i in instances):
        print("warning: --prompt-style nocontext drops the project context (FeedbackEval's sense), "
              "but no instance of this dataset has one, so it changes nothing; nohistory drops "
              "the earlier turns (what nocontext meant before)", file=sys.stderr)
    return instances


class _Printer:
    """What a run prints of each setting (``run_sweep``'s observer): a banner and a
    status line while it runs; its leaderboard, statistics and errors when it ends
    (``-q``: the leaderboard, without its legend, and the errors)."""

    def __init__(self, args: argparse.Namespace, instances: list[Any]) -> None:
        self.args, self.instances = args, instances
        self.out: Path | None = None
        self.errored = 0

    async def __call__(self, point: Any, records: Any, ev: Any) -> None:
        from ..report.leaderboard import leaderboard, render_text
        from ..runlog.records import latest_attempts
        from ..runlog.store import read_records

        args, config, sweep, out = self.args, point.config, point.setting, point.out_dir
        self.out = out
        if not args.quiet:
            print(f"pairbench: {len(self.instances)} instances x {len(config.candidates)} candidates x "
                  f"{len(config.protocols)} protocols x {config.runs} runs"
                  + (f" (setting {sweep.name})" if sweep else "") + f" -> {out}", file=sys.stderr)
        await _consume(records, ev, args.no_progress or args.quiet)
        written = latest_attempts(read_records(out)[0])[0]  # each episode's latest attempt
        if sweep is not None:
            print(f"\n== {', '.join(f'{k}={v}' for k, v in sweep.values.items())} ==")
        print(render_text(leaderboard(written), legend=not args.quiet))
        stats = ev.statistics()
        if not args.quiet:
            retried = f", {stats.retried} errored episodes run again" if stats.retried else ""
            print(f"{stats.episodes_done} episodes ({stats.episodes_skipped} already done{retried}, "
                  f"{stats.errors} errors), {stats.turns} turns, {stats.tests_run} tests, {stats.calls} model "
                  f"calls ({stats.call_retries} retries) in {stats.elapsed_s:.1f}s; "
                  f"records: {out / 'records.jsonl'}")
        if stats.errors_kept:
            print(f"{stats.errors_kept} episode(s) had ended in error before and were kept as they are; "
                  f"--resume --retry-errors --out {out} runs them again", file=sys.stderr)
        if stats.sandbox_nodes_lost or stats.sandbox_retries:
            print(f"sandbox: {stats.sandbox_nodes_lost} node(s) lost, {stats.sandbox_retries} "
                  "batch(es) of tests run again on another node (one result per test)")
        errors = error_summary(written)
        self.errored += sum(count for _, count, _ in errors)
        if errors:
            print(render_errors(errors, stats.stopped_models, out), file=sys.stderr)


async def run_command(args: argparse.Namespace) -> int:
    from ..core.errors import FolderWriteError
    from ..runlog.lock import FolderLock
    from ..runlog.sweep import holds_run

    if (args.retry_errors or args.allow_endpoint_change) and not args.resume:
        raise ConfigError("--retry-errors and --allow-endpoint-change continue a run: give --resume --out DIR")
    root = _out_dir(args)
    early = None
    try:
        # a folder being written is refused at once, before its manifest is read (it may
        # not be written yet); held until the run ends
        early = FolderLock(root) if args.resume else None
        return await _run(args, root)
    except FolderWriteError as exc:
        then = (f"every record written before it is kept; make room (or make it writable), then continue "
                f"with: pairbench run --resume --out {root}" if holds_run(root) else
                "nothing was recorded; choose a writable --out")
        print(f"error: {exc}; {then}", file=sys.stderr)
        return EXIT_WRITE
    finally:
        if early is not None:
            early.release()


async def _checked(instances: list[Any], sandbox: Any, options: dict[str, Any], root: Path,
                   resume: bool) -> tuple[list[Any], dict[str, list[float]]]:
    """The instances whose reference passes its hidden tests (the others named on stderr)
    and their references' times per test (for the sandbox's loop rule); :class:`ConfigError`
    when none does. Recorded in the options, so that a resume checks too (a run from
    before the check resumes with every instance, as it ran), and in the run folder
    (``references.json``), so that a resume uses the times the run started with."""
    from ..runner.references import check_references, record_check, recorded_check

    checked = recorded_check(instances, root) if resume else None
    if checked is None:
        checked = await check_references(instances, sandbox)
        try:
            record_check(checked, instances, root)
        except OSError as exc:
            from ..core.errors import FolderWriteError

            raise FolderWriteError(f"cannot write {root}: {exc}", root, exc.errno) from exc
    for line in checked.lines():
        print(f"skipped: {line}", file=sys.stderr)
    if not checked.kept:
        raise ConfigError("no instance to run: every reference fails some of its own hidden tests "
                          "(`pairbench validate` lists them)")
    options["references_checked"] = True
    return checked.kept, checked.ref_ms


async def _run(args: argparse.Namespace, root: Path) -> int:
    from ..runlog.lock import lock_folder
    from ..runlog.sweep import holds_run
    from ..runner.sweep import plan_sweep, run_sweep
    from ..sandbox.config import SandboxConfig

    if args.resume and not holds_run(root):
        raise ConfigError(f"--resume: no run to continue in {root} (no manifest.json there)")
    base, grid, dataset, options = _settings(args, root)
    try:
        instances = _instances(dataset, options, base)
    except DatasetError as exc:  # a dataset file moved or broke since the run began
        if not args.resume:
            raise
        raise ConfigError(f"cannot resume {root}: its dataset cannot be read: {exc}") from exc
    configs = [point.config for point in plan_sweep(base, grid, ".")]  # every setting checked first
    if args.dry_run:
        print(dry_run_text(instances, configs, len(configs), base.model_config))
        return 0
    for config in configs:
        config.validate()  # every spec one this package can make, before the folder is locked (made)
        _check_keys(config, base.model_config)
    sandbox = make_command_sandbox(args, SandboxConfig(workers=args.workers, **loop_rule(options)))  # Ray present?
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
            # one writer per folder: refused here, at once, before the sandbox starts
            stack.enter_context(lock_folder(root))
            stack.push_async_callback(sandbox.aclose)
            await sandbox.start()
            times: dict[str, list[float]] = {}
            if not args.resume or options.get("references_checked"):
                instances, times = await _checked(instances, sandbox, options, root, args.resume)
                printer.instances = instances
            await run_sweep(base, grid, instances, root, resume=args.resume, sandbox=sandbox,
                            dataset_paths=[str(Path(p).resolve()) for p in dataset], observe=printer,
                            retry_errors=args.retry_errors, allow_endpoint_change=args.allow_endpoint_change,
                            dataset_options=options, reference_times=times)
    except asyncio.CancelledError:
        if not interrupted:
            raise
        print(f"\ninterrupted: records so far are in {printer.out or root}; continue with: pairbench run "
              f"--resume --out {root}", file=sys.stderr)
        return 130
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    return 1 if printer.errored and not args.allow_errors else 0


#: seconds between two status lines when stderr is not a terminal (a log file, CI)
_LOG_EVERY = 10.0


def status_text(s: Any) -> str:
    """The status line of a run: episodes, model calls in flight, retries, errors, turns, tests."""
    done = s.episodes_done + s.episodes_skipped
    return (f"episodes {done}/{s.episodes_total}  calls in flight {s.calls_in_flight}  "
            f"retries {s.call_retries}  errors {s.errors}  turns {s.turns}  tests {s.tests_run:,}  "
            f"{s.elapsed_s:.0f}s")


async def _consume(records: Any, ev: Any, quiet: bool) -> None:
    """Read a setting's records to the end, with a status from the first second unless
    ``quiet``: a live bar on a terminal, else a line at once and every ``_LOG_EVERY`` s."""
    if quiet:
        async for _ in records:
            pass
        return
    console = _stderr_console()
    ticker = asyncio.create_task(_tick(ev, console))
    try:
        async for _ in records:
            pass
    finally:
        ticker.cancel()
        await asyncio.gather(ticker, return_exceptions=True)
        if not console.is_terminal:  # type: ignore[attr-defined]
            print(f"status: {status_text(ev.statistics())}", file=sys.stderr, flush=True)


async def _tick(ev: Any, console: Any) -> None:
    """Show the run's status until cancelled: from the moment the episodes are planned,
    however long the first model call takes."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    while ev.statistics().episodes_total == 0:  # the records are being read back (resume)
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)  # the first calls are on their way
    if not console.is_terminal:
        while True:
            print(f"status: {status_text(ev.statistics())}", file=sys.stderr, flush=True)
            await asyncio.sleep(_LOG_EVERY)
    s = ev.statistics()
    with Progress(TextColumn("episodes"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[info]}"),
                  console=console, transient=False) as progress:
        task = progress.add_task("run", total=s.episodes_total, completed=0, info="")
        while True:
            s = ev.statistics()
            info = status_text(s).split("  ", 1)[1]
            progress.update(task, completed=s.episodes_done + s.episodes_skipped, info=info)
            await asyncio.sleep(0.2)


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
    from ..models.specs import load_prices
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
        offline = s.local
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
