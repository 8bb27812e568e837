#!/usr/bin/env bash
# The project's one test command (README, `make test`, `.ci/run`).
set -uo pipefail
cd "$(dirname "$0")/.."
# Re-install when pyproject.toml or the install script changed since the last install (a new
# pinned dependency or extra).
{ [ .venv/.installed -nt pyproject.toml ] && [ .venv/.installed -nt scripts/bootstrap.sh ]; } \
  || scripts/bootstrap.sh || exit 1
scripts/ensure-services.sh
scripts/ensure-chromium.sh
# Builds llama.cpp's server once (about 5 minutes) and caches it; prints LLAMA_SERVER=/LLAMA_MODEL=.
if llama_env=$(scripts/ensure-llama-server.sh); then
  export $llama_env
else
  echo "llama.cpp: server not available; the contract tests will skip"
fi
.venv/bin/python -m pytest "$@"
rc=$?
# A selection (`scripts/test.sh -k name`) that matches nothing is not a failure; the whole suite
# collecting nothing is.
if [ "$rc" -eq 5 ] && [ "$#" -gt 0 ]; then
  echo "pytest collected no tests (exit 5)"
  exit 0
fi
exit "$rc"
