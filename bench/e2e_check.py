"""Check and summarise the records of an end-to-end run against a real model server.

    python bench/e2e_check.py OUT_DIR
    python bench/e2e_check.py --build BUILD_DIR

Used by ``bench/e2e_local_llm.sh``; stdlib only, reads ``OUT_DIR/manifest.json`` and
``OUT_DIR/records.jsonl`` as plain JSON so that it checks the files, not the package's
own reader. Checks (exit 1 when one fails):

* every episode the manifest promises (instances x candidates x protocols x runs) has
  exactly one ``episode`` record, with status ``done`` or ``error``, and every episode
  that has turn records ends with an episode record;
* at least one candidate call and one feedback call came back with non-empty text and
  token usage > 0 (the real server answered through the real client);
* every turn record has the fields the report needs, with a pass rate in [0, 1].

The model is expected to be bad: failed tests, missing code blocks and episode errors
are data here, not failures. The summary says what happened.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path


def _short(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def check_build(out: Path) -> int:
    """``--build OUT``: a ``build-dataset`` run against the server (step 7 of the script).

    Every candidate submission must end with one ``submission`` record, and at least one
    repair call must have come back with completion tokens; repaired or not is data.
    """
    problems: list[str] = []
    report = json.loads((out / "report.json").read_text() or "{}")
    log_path = out / "built.jsonl.work" / "records.jsonl"
    log = [json.loads(line) for line in log_path.read_text().splitlines() if line.strip()]
    ends = [r for r in log if r.get("kind") == "submission"]
    repairs = [r for r in log if r.get("kind") == "turn" and r["turn"] > 0]
    calls = [r["call"] for r in repairs if r.get("call")]
    candidates = report.get("counts", {}).get("candidates (after the static filters)", 0)
    if len(ends) != candidates or len({r["id"] for r in ends}) != len(ends):
        problems.append(f"{candidates} candidate submissions but {len(ends)} end records")
    if not any((c.get("usage") or {}).get("completion_tokens", 0) > 0 for c in calls):
        problems.append("no repair call came back with completion tokens")
    statuses = Counter(r["status"] for r in ends)
    print(f"[check] build-dataset: {report.get('rows')} rows, {report.get('imported')} instances "
          f"built, submissions ended: {dict(statuses)}")
    for r in ends:
        print(f"[check]   {r['id']}: {r['status']}"
              + (f" ({r['reason']})" if r.get("reason") else "")
              + (f", best pass rate {r['best_pass_rate']:.2f}" if r.get("best_pass_rate") is not None
                 else ""))
    found = sum(1 for r in repairs if r.get("code_found", True))
    tokens = sum((c.get("usage") or {}).get("completion_tokens", 0) for c in calls)
    print(f"[check] build-dataset: {len(repairs)} repair turns, a program found in {found}, "
          f"{tokens} completion tokens")
    sample = next((c["text"] for c in calls if len(c.get("text", "").strip()) >= 40), None)
    if sample is not None:
        print(f"[check] sample repair answer: {_short(sample)}")
    for p in problems:
        print(f"[check] FAIL: {p}")
    if not problems:
        print("[check] OK: every submission ended recorded; the real server answered the repairs")
    return 1 if problems else 0


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--build":
        return check_build(Path(argv[1]))
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    out = Path(argv[0])
    problems: list[str] = []

    manifest_path = out / "manifest.json"
    records_path = out / "records.jsonl"
    if not records_path.is_file():
        print(f"[check] FAIL: {records_path} does not exist")
        return 1
    manifest = json.loads(manifest_path.read_text()) if manifest_path.is_file() else None
    if manifest is None:
        problems.append(f"{manifest_path} is missing")

    turns: list[dict] = []
    episodes: list[dict] = []
    for number, line in enumerate(records_path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"records.jsonl line {number} is not JSON: {exc}")
            continue
        kind = record.get("kind")
        if kind == "turn":
            turns.append(record)
        elif kind == "episode":
            episodes.append(record)
        else:
            problems.append(f"records.jsonl line {number}: unknown kind {kind!r}")

    # -- every episode ended with exactly one episode record ----------------------------
    ended = Counter(e["episode_id"] for e in episodes)
    for episode_id, count in ended.items():
        if count != 1:
            problems.append(f"episode {episode_id} has {count} episode records")
    started = {t["episode_id"] for t in turns}
    problems.extend(f"episode {episode_id} has turn records but no episode record"
                    for episode_id in sorted(started - set(ended)))
    if manifest is not None:
        expected = (manifest["instances"] * len(manifest["candidates"])
                    * len(manifest["protocols"]) * manifest["runs"])
        if len(ended) != expected:
            problems.append(f"{len(ended)} episode records, the manifest promises {expected}")
    statuses = Counter(e.get("status") for e in episodes)
    problems.extend(f"unexpected episode status {status!r}"
                    for status in statuses if status not in ("done", "error"))

    # -- turn records are well formed -----------------------------------------------------
    for t in turns:
        missing = [k for k in ("episode_id", "turn", "program", "passed", "failed", "pass_rate")
                   if k not in t]
        if missing:
            problems.append(f"turn {t.get('episode_id')}#{t.get('turn')} lacks {missing}")
        elif not 0.0 <= t["pass_rate"] <= 1.0:
            problems.append(f"turn {t['episode_id']}#{t['turn']}: pass_rate {t['pass_rate']}")

    # -- real answers came back through the client ---------------------------------------
    calls = [c for t in turns for c in t.get("calls", [])]
    by_role = Counter(c.get("role") for c in calls)

    def real(call: dict) -> bool:
        usage = call.get("usage") or {}
        tokens = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
        return bool(call.get("text", "").strip()) and tokens > 0

    problems.extend(f"no {role} call with non-empty text and token usage > 0"
                    for role in ("candidate", "feedback")
                    if not any(real(c) for c in calls if c.get("role") == role))

    # -- summary ---------------------------------------------------------------------------
    candidate_turns = [t for t in turns if any(c.get("role") == "candidate"
                                                 for c in t.get("calls", []))]
    code_found = sum(1 for t in candidate_turns if t.get("code_found", True))
    # (episode, turn) -> the program before that turn, i.e. the previous turn's program.
    previous = {(t["episode_id"], t["turn"] + 1): t["program"] for t in turns if "program" in t}
    hints = [t["hint"] for t in turns if t.get("hint")]
    rejected = sum(1 for h in hints for a in h.get("attempts", []) if a.get("reasons"))
    fallbacks = sum(1 for h in hints if h.get("fallback"))
    latencies = sorted(c.get("latency_ms", 0.0) for c in calls)
    prompt_tokens = sum((c.get("usage") or {}).get("prompt_tokens", 0) for c in calls)
    completion_tokens = sum((c.get("usage") or {}).get("completion_tokens", 0) for c in calls)
    retried = sum(1 for c in calls if c.get("attempts", 1) > 1)

    print(f"[check] records: {records_path}")
    by_status = ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items()))
    print(f"[check] episodes: {len(ended)} ({by_status})")
    for e in sorted(episodes, key=lambda e: e["episode_id"]):
        rates = "/".join("-" if e.get(k) is None else f"{e[k]:.2f}"
                         for k in ("initial_pass_rate", "best_pass_rate", "final_pass_rate"))
        line = (f"[check]   {e['episode_id']}: {e['status']}, {e.get('turns')} turns, "
                f"stop {e.get('stop_reason')}, pass rate initial/best/final {rates}")
        if e.get("error"):
            line += f"\n[check]     error: {_short(e['error'], 240)}"
        print(line)
    print(f"[check] turns: {len(turns)} records, {len(candidate_turns)} with a candidate answer")
    print(f"[check] calls: {dict(by_role)}; {sum(real(c) for c in calls)} with text and usage; "
          f"{retried} needed retries; tokens {prompt_tokens} prompt + "
          f"{completion_tokens} completion")
    if latencies:
        print(f"[check] call latency: median {latencies[len(latencies) // 2] / 1000:.1f} s, "
              f"max {latencies[-1] / 1000:.1f} s")
    changed = sum(1 for t in candidate_turns if t.get("code_found", True)
                  and t["program"] != previous.get((t["episode_id"], t["turn"]), t["program"]))
    print(f"[check] code block extracted: {'yes' if code_found else 'no'} ({code_found} of "
          f"{len(candidate_turns)} candidate answers; {changed} hinted turns changed the program)")
    print(f"[check] hints: {len(hints)} given, {fallbacks} of them the level's fallback text; "
          f"{rejected} model generations rejected by the leakage check")
    # Prefer a hint the model wrote (not a fallback) for the sample.
    sample_hint = next((h for h in hints if not h.get("fallback")), hints[0] if hints else None)
    if sample_hint is not None:
        origin = "fallback" if sample_hint.get("fallback") else "model-written"
        print(f"[check] sample hint (level {sample_hint.get('level')}, {origin}): "
              f"{_short(sample_hint['text'])}")
    sample_rejection = next((a for h in hints for a in h.get("attempts", []) if a.get("reasons")),
                            None)
    if sample_rejection is not None:
        print(f"[check] sample rejected generation: {_short(sample_rejection['text'], 100)}")
        print(f"[check]   reasons: {_short('; '.join(sample_rejection['reasons']), 240)}")
    for role in ("candidate", "feedback"):
        # Prefer an answer of some length: a lone fence says little.
        texts = [c["text"] for c in calls if c.get("role") == role and real(c)]
        sample = next((t for t in texts if len(t.strip()) >= 40), texts[0] if texts else None)
        if sample is not None:
            print(f"[check] sample {role} answer: {_short(sample)}")

    if problems:
        for p in problems:
            print(f"[check] FAIL: {p}")
        return 1
    print("[check] OK: every episode ended with a record; the real server answered both roles")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
