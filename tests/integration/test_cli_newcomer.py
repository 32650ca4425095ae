"""The command line as a newcomer meets it: strict arguments, errors on screen, the
field's conventions (``--version``, ``list``, a metric legend). Every case runs the
real CLI in a subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pairbench_async.core.errors import ClientError
from pairbench_async.core.types import Completion, Message
from pairbench_async.runner.breaker import CircuitBreaker, CircuitOpen
from tests.integration.fault_server import FaultServer


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pairbench_async", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


async def acli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "pairbench_async", *args, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env={**os.environ, **(env or {})})
    out, err = await asyncio.wait_for(proc.communicate(), 300)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


# ------------------------------------------------------------------ arguments, checked before any write


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--limit", "0"], "--limit: must be >= 1"),
        (["--limit", "-1"], "--limit: must be >= 1"),
        (["--turns", "-1"], "--turns: must be >= 1"),
        (["--scenario-turns", "0"], "--scenario-turns: must be >= 1"),
        (["--runs", "0"], "--runs: must be >= 1"),
        (["--concurrency", "0"], "--concurrency: must be >= 1"),
        (["--temperature", "-0.5"], "--temperature: must be >= 0"),
        (["--candidate", "openai:gpt@notaurl"], "must start with http:// or https://"),
        (["--candidate", "openai:gpt@localhost:8000/v1"], "must start with http:// or https://"),
        (["--feedback", "nonsense"], "nonsense"),
        (["--protocol", "pair", "bogus"], "unknown protocol 'bogus'"),
        (["--sweep", "turns=0,3"], "turns must be >= 1"),
        (["--resume"], "--resume"),
        (["--protocol", "pair", "pair"], "--protocol names pair more than once"),
        (["--candidate", "sim:0.3", "sim:0.3"], "--candidate names sim:0.3 more than once"),
        (["--candidate", "rules"], "'rules' is a feedback model"),
        (["--feedback", "sim:0.5"], "sim:SKILL is an offline candidate"),
        (["--sweep", "feedback=rules,sim:0.5"], "sim:SKILL is an offline candidate"),
        (["--temperature", "nan"], "--temperature: must be a finite number"),
    ],
)
def test_a_bad_argument_exits_2_and_writes_nothing(tmp_path: Path, args: list[str], message: str) -> None:
    out = tmp_path / "run"
    proc = cli("run", "--no-progress", "--out", str(out), *args)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert not out.exists(), "the run folder was created for a refused run"


def test_resume_of_a_mistyped_folder_is_refused(tmp_path: Path) -> None:
    proc = cli("run", "--no-progress", "--resume", "--out", str(tmp_path / "no-such-run"), "--limit", "1")
    assert proc.returncode == 2
    assert "no run to continue" in proc.stderr
    assert not (tmp_path / "no-such-run").exists()


def test_a_folder_that_cannot_be_resumed_is_named_in_the_error(tmp_path: Path) -> None:
    """Wrong record schema, another dataset, a dataset file gone, a corrupt manifest or
    records: every refusal names the run folder (or a file in it)."""
    import shutil

    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "stdio.jsonl"
    data = tmp_path / "d.jsonl"
    data.write_text("\n".join(fixture.read_text().splitlines()[:2]) + "\n")
    made = tmp_path / "made"
    proc = cli("run", "--no-progress", "-q", "--dataset", str(data), "--limit", "1", "--turns", "1",
               "--candidate", "sim:0.8", "--out", str(made))
    assert proc.returncode == 0, proc.stderr

    def refused(name: str, damage: Callable[[Path], None], expect: str) -> None:
        folder = tmp_path / name
        shutil.copytree(made, folder)
        damage(folder)
        proc = cli("run", "--no-progress", "--resume", "--out", str(folder))
        assert proc.returncode == 2, (name, proc.stderr)
        error = next(line for line in proc.stderr.splitlines() if line.startswith("error: "))
        assert str(folder) in error and expect in error, (name, proc.stderr)

    def old_schema(folder: Path) -> None:
        manifest = json.loads((folder / "manifest.json").read_text())
        (folder / "manifest.json").write_text(json.dumps({**manifest, "schema": 2}))

    def corrupt_records(folder: Path) -> None:
        lines = (folder / "records.jsonl").read_text().splitlines()
        (folder / "records.jsonl").write_text("\n".join(["{torn", *lines]) + "\n")

    refused("schema", old_schema, "schema: records have 2")
    refused("manifest", lambda f: (f / "manifest.json").write_text('{"run_id": '), "unreadable manifest")
    refused("records", corrupt_records, "corrupt record")
    original = data.read_text()
    data.write_text(original.splitlines()[1] + "\n")  # another first instance
    refused("dataset", lambda f: None, "dataset_hash")
    data.unlink()
    refused("gone", lambda f: None, f"{data}: cannot read")


def test_run_skip_invalid_counts_and_runs_the_rest(tmp_path: Path) -> None:
    fixture = Path(__file__).resolve().parents[2] / "fixtures" / "stdio.jsonl"
    lines = fixture.read_text().splitlines()[:2]
    data = tmp_path / "d.jsonl"
    data.write_text(lines[0] + "\n" + '{"id": "broken"}\n' + lines[1] + "\n")
    strict = cli("run", "--no-progress", "--dataset", str(data), "--out", str(tmp_path / "a"))
    assert strict.returncode == 2 and f"{data}:2" in strict.stderr
    proc = cli("run", "--no-progress", "--dataset", str(data), "--skip-invalid", "--candidate", "sim:0.8",
               "--out", str(tmp_path / "b"))
    assert proc.returncode == 0, proc.stderr
    assert "skipped:" in proc.stderr and f"{data}:2" in proc.stderr
    assert "2 episodes" in proc.stdout


# ------------------------------------------------------------------ errors on screen


@pytest.mark.timeout(300)
async def test_errors_are_grouped_on_screen_with_a_failing_exit_and_no_key(tmp_path: Path) -> None:
    server = FaultServer()
    await server.start()
    try:
        config = tmp_path / "models.toml"
        config.write_text("[defaults]\nmax_retries = 1\nbackoff_base = 0.01\n")
        key = "sk-canary-0123456789abcdef"
        spec = f"openai:x@{server.base_url('401')}"
        code, out, err = await acli("run", "--no-progress", "--candidate", spec, "--limit", "4",
                                    "--config", str(config), "--out", str(tmp_path / "r"),
                                    env={"OPENAI_API_KEY": key})
        assert code == 1, err
        assert "4 episode(s) ended in error, by cause:" in err
        assert "401" in err
        assert str(tmp_path / "r" / "records.jsonl") in err
        assert key not in err and key not in out  # the server echoes the key; the screen never does
        records = [json.loads(x) for x in (tmp_path / "r" / "records.jsonl").read_text().splitlines()]
        assert [r["status"] for r in records if r["kind"] == "episode"] == ["error"] * 4
        code, _, err = await acli("run", "--no-progress", "--candidate", spec, "--limit", "2", "--allow-errors",
                                  "--config", str(config), "--out", str(tmp_path / "r2"))
        assert code == 0 and "ended in error" in err
    finally:
        await server.stop()


class _Dead:
    """A model whose every call fails, counting them."""

    def __init__(self) -> None:
        self.calls = 0

    async def complete(self, messages: list[Message], **kw: object) -> Completion:
        self.calls += 1
        await asyncio.sleep(0.01)
        raise ClientError("cannot connect")

    async def aclose(self) -> None:
        return None


async def test_the_breaker_stops_a_dead_model_after_a_few_calls() -> None:
    dead = _Dead()
    breaker = CircuitBreaker(dead, "openai:dead", threshold=3, probes=2)
    outcomes = await asyncio.gather(*(breaker.complete([]) for _ in range(100)), return_exceptions=True)
    assert all(isinstance(o, ClientError) for o in outcomes)
    assert sum(isinstance(o, CircuitOpen) for o in outcomes) >= 95
    assert dead.calls <= 4, "a dead endpoint was called once per episode"
    assert breaker.open and "cannot connect" in str(outcomes[-1]) and "calls failed and none answered" in str(outcomes[-1])


class _Flaky(_Dead):
    """Fails its first ``bad`` calls, then answers (a content filter, a short outage)."""

    def __init__(self, bad: int, every: int = 0) -> None:
        super().__init__()
        self.bad, self.every = bad, every

    async def complete(self, messages: list[Message], **kw: object) -> Completion:
        self.calls += 1
        await asyncio.sleep(0.001)
        if self.calls <= self.bad or (self.every and self.calls % self.every == 0):
            raise ClientError(f"refused call {self.calls}")
        return Completion(text="ok", model="m")


async def test_the_breaker_never_stops_a_model_that_answered() -> None:
    breaker = CircuitBreaker(_Flaky(bad=0, every=3), "openai:flaky", threshold=2)
    outcomes = await asyncio.gather(*(breaker.complete([]) for _ in range(60)), return_exceptions=True)
    assert not breaker.open
    assert sum(isinstance(o, Completion) for o in outcomes) == 40
    assert not any(isinstance(o, CircuitOpen) for o in outcomes)


async def test_an_answer_closes_an_open_breaker_and_a_probe_follows_an_outage() -> None:
    now = [0.0]
    flaky = _Flaky(bad=3)
    breaker = CircuitBreaker(flaky, "openai:m", threshold=3, probes=1, reprobe=30, clock=lambda: now[0])
    for _ in range(3):
        with pytest.raises(ClientError):
            await breaker.complete([])
    assert breaker.open
    with pytest.raises(CircuitOpen):
        await breaker.complete([])
    assert flaky.calls == 3  # refused without a call
    now[0] = 31.0  # the endpoint recovered: the next call is a probe, and it answers
    assert (await breaker.complete([])).text == "ok"
    assert not breaker.open
    results = await asyncio.gather(*(breaker.complete([]) for _ in range(10)))
    assert all(r.text == "ok" for r in results)


# ------------------------------------------------------------------ conventions


def test_version_and_help_name_the_exit_codes() -> None:
    version = cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("pairbench_async ")
    helptext = cli("--help").stdout
    assert "Exit status" in helptext and "1 a finding" in helptext


def test_the_leaderboard_has_a_legend_of_every_column(tmp_path: Path) -> None:
    proc = cli("run", "--no-progress", "--limit", "1", "--candidate", "sim:0.8", "--out", str(tmp_path / "r"))
    assert proc.returncode == 0, proc.stderr
    for column in ("InitialFix", "TRS", "BRG", "BP", "PMR", "HE", "GC", "FinalFix", "TurnsToFix", "HCC"):
        assert any(line.strip().startswith(column + " ") and ("↑" in line or "↓" in line)
                   for line in proc.stdout.splitlines()), column
    report = cli("report", str(tmp_path / "r"))
    assert "legend" in report.stdout and "Broader Repair Gain" in report.stdout


@pytest.mark.parametrize(("what", "expect"), [
    ("protocols", ["pair", "selfcritique", "NOT hidden-test protected", "FeedbackEval"]),
    ("metrics", ["TurnsToFix (lower is better", "|G_t ∩ P_t| / |G_t|", "Repair@k"]),
    ("datasets", ["stdio.jsonl", "feedbackeval", "codeforces"]),
])
def test_list(what: str, expect: list[str]) -> None:
    proc = cli("list", what)
    assert proc.returncode == 0, proc.stderr
    for text in expect:
        assert text in proc.stdout


def test_openai_base_url_is_honoured_like_openai_python() -> None:
    from pairbench_async.models.endpoint import EndpointSettings
    from pairbench_async.models.specs import make_model

    env = {"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1/"}
    assert make_model("openai:gpt-4o", None, env).settings.base_url == "http://127.0.0.1:8000/v1"
    # the spec's own URL and a configured one win over the environment
    assert make_model("openai:gpt-4o@http://h:1/v1", None, env).settings.base_url == "http://h:1/v1"
    configured = {"": EndpointSettings(base_url="http://cfg:2/v1")}
    assert make_model("openai:gpt-4o", configured, env).settings.base_url == "http://cfg:2/v1"
    assert make_model("openai:gpt-4o", None, {}).settings.base_url == "https://api.openai.com/v1"
    with pytest.raises(Exception, match="http:// or https://"):
        make_model("openai:gpt-4o", None, {"OPENAI_BASE_URL": "ftp://x"})


# ------------------------------------------------------------------ results others can load


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sweep") / "s"
    proc = cli("run", "--no-progress", "--limit", "2", "--candidate", "sim:0.3", "sim:0.8", "--protocol", "pair",
               "nohint", "--sweep", "turns=2,4", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_export_writes_tidy_tables_of_every_setting(sweep_dir: Path, fmt: str, tmp_path: Path) -> None:
    import pyarrow.csv as pacsv
    import pyarrow.json as pajson
    import pyarrow.parquet as pq

    proc = cli("export", str(sweep_dir), "--format", fmt, "--out", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    read = {"parquet": pq.read_table, "csv": pacsv.read_csv, "jsonl": pajson.read_json}[fmt]
    turns = read(tmp_path / f"turns.{fmt}").to_pylist()
    episodes = read(tmp_path / f"episodes.{fmt}").to_pylist()
    metrics = read(tmp_path / f"metrics.{fmt}").to_pylist()
    # 2 settings x 2 instances x 2 candidates x 2 protocols
    assert len(episodes) == 16
    assert {e["setting"] for e in episodes} == {"turns=2", "turns=4"}
    # one row per turn: each episode's turns are 0..turns
    by_episode: dict[tuple[str, str], list[int]] = {}
    for t in turns:
        by_episode.setdefault((t["setting"], t["episode_id"]), []).append(t["turn"])
    for e in episodes:
        assert sorted(by_episode[(e["setting"], e["episode_id"])]) == list(range(e["turns"] + 1))
    assert all(t["hint_level"] is None for t in turns if t["protocol"] == "nohint")
    assert any(t["hint_level"] in range(1, 7) for t in turns if t["protocol"] == "pair" and t["turn"] > 0)
    # the metric rows are the leaderboard's numbers
    from pairbench_async.report.leaderboard import leaderboard
    from pairbench_async.runlog.store import read_records

    records, _ = read_records(sweep_dir / "turns=4")
    board = leaderboard(records)
    row = next(m for m in metrics if m["setting"] == "turns=4" and m["model"] == "sim:0.8"
               and m["protocol"] == "pair" and m["metric"] == "FinalFix")
    assert row["value"] == pytest.approx(board.models["sim:0.8|pair"].FinalFix)


def test_export_parquet_without_pyarrow_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pairbench_async.cli.export import _write_parquet
    from pairbench_async.core.errors import ConfigError

    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ConfigError, match=r"pip install -e '\.\[parquet\]'"):
        _write_parquet(tmp_path / "x.parquet", [], (("a", "string"),))


def test_export_of_a_folder_without_records_is_a_clear_error(tmp_path: Path) -> None:
    proc = cli("export", str(tmp_path))
    assert proc.returncode == 2 and "no records.jsonl" in proc.stderr


def test_report_of_a_sweep_folder_is_one_combined_table(sweep_dir: Path) -> None:
    text = cli("report", str(sweep_dir))
    assert text.returncode == 0, text.stderr
    for setting in ("turns=2", "turns=4"):
        for model in ("sim:0.3", "sim:0.8"):
            assert f"{setting} {model}|pair" in text.stdout
    data = json.loads(cli("report", str(sweep_dir), "--json").stdout)
    assert data["settings"] == ["turns=2", "turns=4"]
    assert len(data["models"]) == 8


# ------------------------------------------------------------------ unfinished runs


@pytest.fixture(scope="module")
def interrupted_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished run with part of one model's episodes cut away, as ^C leaves it."""
    out = tmp_path_factory.mktemp("cut") / "r"
    proc = cli("run", "--no-progress", "--limit", "4", "--candidate", "sim:0.3", "sim:0.8", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    lines = (out / "records.jsonl").read_text().splitlines()
    instances = sorted({json.loads(x)["instance_id"] for x in lines})
    cut = set(instances[:2])  # sim:0.3 never finished two of the four instances
    kept = [x for x in lines if not (json.loads(x)["model"] == "sim:0.3" and json.loads(x)["instance_id"] in cut)]
    (out / "records.jsonl").write_text("\n".join(kept) + "\n")
    return out


def test_report_of_an_unfinished_run_says_so_and_ranks_on_common_instances(interrupted_run: Path) -> None:
    text = cli("report", str(interrupted_run))
    assert text.returncode == 0, text.stderr
    first = text.stdout.splitlines()[0]
    assert first.startswith("incomplete: 6 of 8 episodes finished")
    assert "ranked on the 2 of 4 instances" in first
    data = json.loads(cli("report", str(interrupted_run), "--json").stdout)
    assert data["completeness"] == {"planned": 8, "finished": 6, "errored": 0, "complete": False,
                                    "common_instances": 2, "instances": 4, "notice": first.rstrip(".")}
    assert data["episodes"] == 4  # both models on the 2 common instances only
    md = cli("report", str(interrupted_run), "--markdown")
    assert md.returncode == 0, md.stderr
    assert "incomplete: 6 of 8 episodes finished" in md.stdout.split("## ", 2)[1]  # in the first section
    refused = cli("report", str(interrupted_run), "--complete-only")
    assert refused.returncode == 1 and "incomplete" in refused.stderr and "--resume" in refused.stderr


def test_report_of_a_finished_run_has_no_notice(sweep_dir: Path) -> None:
    text = cli("report", str(sweep_dir / "turns=2"))
    assert not text.stdout.startswith("incomplete")
    assert json.loads(cli("report", str(sweep_dir / "turns=2"), "--json").stdout)["completeness"]["complete"]
    assert cli("report", str(sweep_dir / "turns=2"), "--complete-only").returncode == 0


def test_dry_run_counts_episodes_calls_and_cost_and_writes_nothing(tmp_path: Path) -> None:
    config = tmp_path / "m.toml"
    config.write_text('[models."openai:gpt-4o"]\nprompt_price_per_million = 1.0\n'
                      'completion_price_per_million = 2.0\n')
    out = tmp_path / "never"
    proc = cli("run", "--dry-run", "--limit", "3", "--candidate", "openai:gpt-4o", "sim:0.5",
               "--protocol", "pair", "nohint", "--turns", "4", "--runs", "2", "--config", str(config),
               "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert not out.exists()
    # 3 instances x 2 candidates x 2 protocols x 2 runs
    assert "dry run: 24 episodes" in proc.stdout
    # per candidate: 3 instances x 2 runs x 1 turn-0 call, shared by both protocols (issue 24:
    # one unhinted repair per candidate, instance and run), + 3 x 2 protocols x 2 runs x 4 turns
    assert "openai:gpt-4o: <= 54 calls" in proc.stdout
    # feedback (rules): pair only, 3 x 2 candidates x 2 runs x 4 turns x hint budget 3
    assert "rules: <= 144 calls" in proc.stdout
    assert "total cost <= " in proc.stdout


def test_quiet_and_verbose(tmp_path: Path) -> None:
    quiet = cli("run", "-q", "--limit", "1", "--candidate", "sim:0.8", "--out", str(tmp_path / "q"))
    assert quiet.returncode == 0 and "instances x" not in quiet.stderr and "InitialFix" in quiet.stdout
    config = tmp_path / "m.toml"
    config.write_text("[defaults]\nmax_retries = 1\nbackoff_base = 0.01\n")
    loud = cli("run", "-v", "--no-progress", "--limit", "1", "--candidate", "openai:x@http://127.0.0.1:9/v1",
               "--config", str(config), "--out", str(tmp_path / "v"))
    assert loud.returncode == 1
    assert "retry 1 of 1" in loud.stderr and "ended in error" in loud.stderr



def test_a_missing_key_for_the_public_endpoint_is_refused_before_writing(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    proc = subprocess.run([sys.executable, "-m", "pairbench_async", "run", "--candidate", "openai:gpt-4o",
                           "--limit", "1", "--out", str(tmp_path / "r")], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 2 and "OPENAI_API_KEY" in proc.stderr
    assert not (tmp_path / "r").exists()


def test_a_folder_holds_a_run_or_a_sweep_never_both(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert cli("run", "-q", "--limit", "1", "--candidate", "sim:0.8", "--out", str(run)).returncode == 0
    into_run = cli("run", "-q", "--limit", "1", "--candidate", "sim:0.8", "--sweep", "turns=2", "--resume",
                   "--out", str(run))
    assert into_run.returncode == 2 and "holds a single run" in into_run.stderr
    sweep = tmp_path / "sweep"
    assert cli("run", "-q", "--limit", "1", "--candidate", "sim:0.8", "--sweep", "turns=2,3",
               "--out", str(sweep)).returncode == 0
    into_sweep = cli("run", "-q", "--limit", "1", "--candidate", "sim:0.8", "--out", str(sweep))
    assert into_sweep.returncode == 2 and "holds a --sweep (turns=2, turns=3)" in into_sweep.stderr
    # --resume without --sweep continues the sweep as its manifests record it (issue 25: it
    # used to be refused like a new run into a sweep's folder)
    resumed = cli("run", "-q", "--resume", "--out", str(sweep))
    assert resumed.returncode == 0, resumed.stderr
    assert not (sweep / "manifest.json").exists()
    again = cli("run", "-q", "--limit", "1", "--candidate", "sim:0.8", "--sweep", "turns=2,3", "--resume",
                "--out", str(sweep))
    assert again.returncode == 0, again.stderr


@pytest.mark.parametrize("echo", [
    "invalid key SECRETabcdef123456",            # verbatim
    'invalid key "SECRETabcdef123456\r"',        # with the CR of a CRLF .env file
    "invalid key SECRETab************",          # masked but for a prefix
    "invalid key SECRET%61bcdef123456",          # URL-encoded
    '{"api_key": "SECRETabcdef123456"}',         # quoted in JSON
])
def test_a_key_echoed_by_a_server_is_scrubbed_in_every_shape(echo: str) -> None:
    from pairbench_async.models.redact import redact

    out = redact(echo, "SECRETabcdef123456\r")
    assert "SECRETab" not in out and "[redacted]" in out
    assert redact("KeyError: 'disk-usage-report'", "SECRETabcdef123456") == "KeyError: 'disk-usage-report'"


def test_exec_refuses_non_finite_limits_and_huge_ones_still_run(tmp_path: Path) -> None:
    prog = tmp_path / "p.py"
    prog.write_text("print(int(input()) + 1)\n")
    tests = tmp_path / "t.jsonl"
    tests.write_text('{"id": "1", "input": "1\\n", "output": "2\\n"}\n')
    for bad in (["--time-limit", "inf"], ["--wall-limit", "nan"], ["--float-tol", "-1"]):
        proc = cli("exec", str(prog), "--tests", str(tests), *bad)
        assert proc.returncode == 2, (bad, proc.stderr)
    big = cli("exec", str(prog), "--tests", str(tests), "--time-limit", "999999")
    assert big.returncode == 0 and json.loads(big.stdout)["verdict"] == "AC", big.stdout


def test_validate_pass_rate_is_checked() -> None:
    for bad in ("abc", "0.9:0.1", "0.2"):
        proc = cli("validate", "--pass-rate", bad)
        assert proc.returncode == 2 and "--pass-rate" in proc.stderr



def test_metrics_command_is_list_metrics() -> None:
    assert cli("metrics").stdout == cli("list", "metrics").stdout != ""



def test_export_to_a_file_path_is_a_clear_error(sweep_dir: Path, tmp_path: Path) -> None:
    target = tmp_path / "a-file"
    target.write_text("x")
    proc = cli("export", str(sweep_dir), "--format", "csv", "--out", str(target))
    assert proc.returncode == 2 and "--out" in proc.stderr and "Traceback" not in proc.stderr
