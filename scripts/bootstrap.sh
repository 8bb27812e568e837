#!/usr/bin/env bash
# Create .venv and install the package with its pinned dependencies, the dev extra, and the mlflow
# and gepa extras (their tests must run, not skip).
set -euo pipefail
cd "$(dirname "$0")/.."
python="${1:-python3}"
if ! "$python" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
  echo "skillharness needs Python 3.11; '$python' is $("$python" --version 2>&1)." >&2
  echo "Run: make PYTHON=/path/to/python3.11 demo" >&2
  exit 1
fi
[ -x .venv/bin/python ] || "$python" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e '.[dev,mlflow,gepa]'
touch .venv/.installed
echo "installed skillharness into .venv"
