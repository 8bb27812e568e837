#!/usr/bin/env bash
# The project's one test command (README, `make test`, `.ci/run`).
set -uo pipefail
cd "$(dirname "$0")/.."
[ -f .venv/.installed ] || scripts/bootstrap.sh || exit 1
scripts/ensure-services.sh
if [ -x scripts/ensure-llama-server.sh ]; then
  scripts/ensure-llama-server.sh || echo "llama.cpp: server not available; the contract tests will skip"
fi
.venv/bin/python -m pytest "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests (exit 5)"
  exit 0
fi
exit "$rc"
