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
import itertools
import re
import signal
import sys
import time
from pathlib import Path
from typing import Any

import msgspec

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
    p.add_argument("--minimal-edit", action="store_true",
                   help="ask the candidate for the smallest change (PDB's minimal-edit mode)")
    p.add_argument("--workers", type=positive_int, default=None, help="sandbox workers (default: cores)")
    add_sandbox_choice(p)
    p.add_argument("--sweep", nargs="+", metavar="KEY=V1,V2",
                   help="run the grid of these parameters (turns, scenario-turns, max-scenarios, "
                   "min-scenario-size, representatives, hint-budget, feedback=SPEC1,SPEC2), one "
                   "subdirectory each; the first setting is the report's main setting")


def _out_dir(args: argparse.Namespace) -> Path:
    if args.out:
        out = Path(args.out)
        if args.resume and not (out / "manifest.json").is_file() and not any(out.glob("*/manifest.json")):
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


def _check_layout(root: Path, *, sweep: bool) -> None:
    """A folder holds one run or one sweep (a run per setting), never both: a mix would
    make ``report`` and ``export`` show the one and silently hide the other."""
    single = (root / "manifest.json").is_file()
    settings = sorted(p.parent.name for p in root.glob("*/manifest.json"))
    if sweep and single:
        raise ConfigError(f"{root} holds a single run; a --sweep needs a folder of its own")
    if not sweep and settings and not single:
        raise ConfigError(f"{root} holds a --sweep ({', '.join(settings)}); continue it with the same "
                          "--sweep, or choose another --out")


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
              "hint-budget": "hint_budget", "feedback": "feedback"}
#: sweep keys whose values are model specs (strings), not integers
_SPEC_KEYS = frozenset({"feedback"})
#: the longest readable part of a setting's folder name taken from one value
_NAME_LIMIT = 48


def parse_sweep(items: list[str] | None) -> list[dict[str, int | str]]:
    """``turns=10,15 scenario-turns=2,3`` -> every combination, in a stable order (the first
    is the report's main setting); ``feedback=SPEC1,SPEC2`` sweeps the feedback model."""
    if not items:
        return [{}]
    axes: list[tuple[str, list[int | str]]] = []
    for item in items:
        key, _, values = item.partition("=")
        if key not in _SWEEPABLE or not values:
            raise ConfigError(f"--sweep {item!r}: expected KEY=V1,V2 with KEY in {', '.join(_SWEEPABLE)}")
        if any(key == k for k, _ in axes):
            raise ConfigError(f"--sweep names {key} twice; give its values once, comma-separated")
        raw = values.split(",")
        if key in _SPEC_KEYS:
            parsed: list[int | str] = [v.strip() for v in raw]
            if not all(parsed):
                raise ConfigError(f"--sweep {item!r}: an empty model spec")
        else:
            try:
                parsed = [int(v) for v in raw]
            except ValueError:
                raise ConfigError(f"--sweep {item!r}: values must be integers") from None
        twice = sorted({str(v) for v in parsed if parsed.count(v) > 1})
        if twice:  # two settings would share a folder
            raise ConfigError(f"--sweep {key}: {', '.join(twice)} given more than once")
        axes.append((key, parsed))
    return [dict(zip([k for k, _ in axes], combo, strict=True))
            for combo in itertools.product(*(v for _, v in axes))]


def _safe(value: int | str, siblings: list[int | str]) -> str:
    """A value as part of a folder name: kept when already safe, else its unsafe runs
    (``:``, ``/``, ``@``, ``?``...) as ``-``; a 6-hex digest of the exact value is added when
    that loses information another value of the axis needs, or the name had to be cut."""
    text = str(value)

    def slug(v: str) -> str:
        return re.sub(r"[^A-Za-z0-9._+-]+", "-", v).strip("-.")

    readable = slug(text)
    cut = len(readable) > _NAME_LIMIT
    clash = sum(1 for s in siblings if slug(str(s)) == readable) > 1
    if readable == text and not cut:
        return text
    if cut or clash or not readable:
        import hashlib

        digest = hashlib.sha256(text.encode()).hexdigest()[:6]
        return f"{readable[:_NAME_LIMIT]}-{digest}" if readable else digest
    return readable


def setting_name(point: dict[str, int | str], grid: list[dict[str, int | str]]) -> str:
    """The folder of a sweep point: ``turns=6``, ``turns=6_feedback=openai-deepseek-chat``;
    filesystem-safe, readable, and distinct for distinct points of ``grid``."""
    return "_".join(f"{k}={_safe(v, sorted({p[k] for p in grid}, key=str))}" for k, v in point.items())


def _point_config(base: Any, point: dict[str, int | str]) -> Any:
    config = msgspec.structs.replace(base, **{_SWEEPABLE[k]: v for k, v in point.items()})
    config.validate()  # every spec must be one we can make: the CLI brings no clients
    return config


async def run_command(args: argparse.Namespace) -> int:
    from ..datasets.files import load_dataset
    from ..report.leaderboard import leaderboard, render_text
    from ..runlog.records import SweepSetting
    from ..runlog.store import read_records
    from ..runner.evaluator import Evaluator, RunConfig
    from ..sandbox.config import SandboxConfig

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
    base = RunConfig(
        candidates=args.candidate or ["sim:0.3", "sim:0.8"], feedback=args.feedback,
        validator=args.validator_model,
        protocols=args.protocol, runs=args.runs, seed=args.seed, turns=args.turns,
        scenario_turns=args.scenario_turns, concurrency=args.concurrency,
        temperature=args.temperature, max_tokens=args.max_tokens, model_config=args.config,
        prompt_styles=args.prompt_style, minimal_edit=args.minimal_edit, obfuscate=args.obfuscate,
    )
    grid = parse_sweep(args.sweep)
    configs = [_point_config(base, point) for point in grid]
    if args.dry_run:
        print(dry_run_text(instances, base, grid, args.config))
        return 0
    for config in configs:
        _check_keys(config, args.config)
    sandbox = make_command_sandbox(args, SandboxConfig(workers=args.workers))  # Ray present?
    root = _out_dir(args)
    _check_layout(root, sweep=bool(args.sweep))
    plan = []
    for index, (point, config) in enumerate(zip(grid, configs, strict=True)):
        name = setting_name(point, grid) if point else ""
        sweep = SweepSetting(name=name, index=index, values=dict(point)) if point else None
        plan.append((point, config, root / name if point else root, sweep))
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
    out = root
    errored = 0
    try:
        async with contextlib.AsyncExitStack() as stack:
            stack.push_async_callback(sandbox.aclose)
            await sandbox.start()
            for point, config, out, sweep in plan:
                if not args.quiet:
                    print(f"pairbench: {len(instances)} instances x {len(config.candidates)} candidates x "
                          f"{len(config.protocols)} protocols x {config.runs} runs"
                          + (f" (setting {sweep.name})" if sweep else "") + f" -> {out}", file=sys.stderr)
                ev = Evaluator(config, out_dir=out, resume=args.resume, sandbox=sandbox,
                               dataset_paths=[str(p) for p in (args.dataset or [])], sweep=sweep)
                async with ev:
                    await _consume(ev, instances, args.no_progress or args.quiet)
                records, _ = read_records(out)
                if point:
                    print(f"\n== {', '.join(f'{k}={v}' for k, v in point.items())} ==")
                board = leaderboard(records)
                print(render_text(board))
                stats = ev.statistics()
                print(f"{stats.episodes_done} episodes ({stats.episodes_skipped} already done, "
                      f"{stats.errors} errors), {stats.turns} turns, {stats.tests_run} tests in "
                      f"{stats.elapsed_s:.1f}s; records: {out / 'records.jsonl'}")
                if stats.sandbox_nodes_lost or stats.sandbox_retries:
                    print(f"sandbox: {stats.sandbox_nodes_lost} node(s) lost, {stats.sandbox_retries} "
                          "batch(es) of tests run again on another node (one result per test)")
                errors = error_summary(records)
                errored += sum(count for _, count, _ in errors)
                if errors:
                    print(render_errors(errors, stats.stopped_models, out), file=sys.stderr)
    except asyncio.CancelledError:
        if not interrupted:
            raise
        print(f"\ninterrupted: records so far are in {out}; continue with: pairbench run --resume --out {root} "
              "(and the same arguments)", file=sys.stderr)
        return 130
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    return 1 if errored and not args.allow_errors else 0


_SECRET_RE = re.compile(r"(\b(?:sk|gsk|sk-proj|sk-ant)[-_][A-Za-z0-9_-]{6,}|Bearer\s+\S+|(?i:api[_-]?key)[=:]\s*\S+)")


def _scrub(text: str) -> str:
    """A message with anything that looks like a key replaced (keys never reach a screen)."""
    return _SECRET_RE.sub("[redacted]", text)


def error_summary(records: list[object]) -> list[tuple[str, int, str]]:
    """Errored episodes grouped by cause: (cause, count, first message), most frequent first.

    The cause is the error's class and its message with numbers, quoted values and
    instance ids blanked, so that the same failure on 140 instances is one line.
    """
    from ..runlog.records import EpisodeRecord

    groups: dict[str, list[str]] = {}
    for rec in records:
        if isinstance(rec, EpisodeRecord) and rec.status == "error":
            message = _scrub(rec.error or "unknown error")
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


async def _consume(ev: object, instances: list[object], quiet: bool) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..runlog.records import EpisodeRecord

    progress = Progress(TextColumn("episodes"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("{task.fields[info]}"), disable=quiet, transient=False,
                        console=_stderr_console())
    with progress:
        task = None
        t0 = time.monotonic()
        async for record in ev.run(instances):  # type: ignore[attr-defined]
            s = ev.statistics()  # type: ignore[attr-defined]
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


def dry_run_text(instances: list[Any], base: Any, grid: list[dict[str, int | str]],
                 config: str | None) -> str:
    """What a run would spend: episodes, an upper bound on model calls, estimated tokens and cost.

    Calls are bounded by the protocol: one candidate call for turn 0 (none for the
    FeedbackEval protocols, which start from the erroneous program) and one per revision
    turn (α of them; ``selfcritique`` doubles them), and per revision turn up to
    ``hint_budget`` feedback generations for validated model-written feedback (``pair``,
    ``vanilla``, ``human``, ...), one for ``code``, and as many validator verdicts with
    ``--validator-model``. Tokens are estimated from each
    instance's first prompt (chars/4; later turns counted at 1.5x, feedback prompts at
    2x) plus the answer budget (``--max-tokens``, else 512): an estimate, not a bill.
    """
    from ..models.endpoint import ASSUMED_COMPLETION_TOKENS, estimate_prompt_tokens
    from ..models.specs import load_prices
    from ..protocol.prompts import initial_prompt
    from ..protocol.protocols import PROTOCOLS

    answer = base.max_tokens or ASSUMED_COMPLETION_TOKENS
    first = [estimate_prompt_tokens(initial_prompt(inst)) for inst in instances]
    calls: dict[str, list[int]] = {}  # spec -> [calls, prompt tokens, completion tokens]
    episodes = 0
    for point in grid:
        turns = int(point.get("turns", base.turns))
        budget = int(point.get("hint-budget", base.hint_budget))
        feedback = str(point.get("feedback", base.feedback))
        for name in base.protocols:
            proto = PROTOCOLS[name]
            per_turn_fb = (budget if proto.validated else 1) if proto.model_written else 0
            per_turn_cand = 2 if name == "selfcritique" else 1
            for cand in base.candidates:
                for tokens in first:
                    episodes += base.runs
                    c = calls.setdefault(cand, [0, 0, 0])
                    first_call = 0 if proto.starts_from_erroneous else 1  # FeedbackEval: no turn-0 call
                    n = base.runs * (first_call + per_turn_cand * turns)
                    c[0] += n
                    c[1] += base.runs * (first_call * tokens + int(1.5 * tokens) * per_turn_cand * turns)
                    c[2] += n * answer
                    if per_turn_fb:
                        f = calls.setdefault(feedback, [0, 0, 0])
                        m = base.runs * per_turn_fb * turns
                        f[0] += m
                        f[1] += m * 2 * tokens
                        f[2] += m * answer
                    if per_turn_fb and proto.validated and base.validator:
                        j = calls.setdefault(base.validator, [0, 0, 0])
                        m = base.runs * per_turn_fb * turns  # at most one verdict per generation
                        j[0] += m
                        j[1] += m * 2 * tokens
                        j[2] += m * answer
        if base.obfuscate:  # each setting's evaluator summarises every problem once
            f = calls.setdefault(feedback, [0, 0, 0])
            f[0] += len(instances)
            f[1] += sum(first)
            f[2] += len(instances) * answer
    prices = load_prices(config) if config else None
    lines = [f"dry run: {episodes} episodes = {len(instances)} instances x {len(base.candidates)} candidates x "
             f"{len(base.protocols)} protocols x {base.runs} runs x {len(grid)} settings; nothing run or written",
             "model calls (upper bound) and tokens (estimate) per model:"]
    total_cost = 0.0
    unpriced = []
    for spec, (n, prompt, completion) in sorted(calls.items()):
        offline = spec.split(":", 1)[0] in ("sim", "rules", "replay")
        price = prices.of(spec) if prices is not None else None
        cost = ""
        if price is not None:
            p_cost, c_cost = price.cost(prompt, completion)
            total_cost += p_cost + c_cost
            cost = f", cost <= {p_cost + c_cost:,.2f}"
        elif not offline:
            unpriced.append(spec)
        lines.append(f"  {spec}: <= {n:,} calls, ~{prompt:,} prompt + <= {completion:,} completion tokens{cost}"
                     + (" (offline: free)" if offline else ""))
    if prices is not None:
        lines.append(f"total cost <= {total_cost:,.2f} (prices from {config})"
                     + (f"; unpriced: {', '.join(unpriced)}" if unpriced else ""))
    elif unpriced:
        lines.append("no prices given: --config FILE with prompt_price_per_million and "
                     "completion_price_per_million prices the calls")
    return "\n".join(lines)
