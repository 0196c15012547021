#!/usr/bin/env bash
# Set up (idempotent) and run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --system
.venv/bin/ruff check src tests benchmarks
exec .venv/bin/python -m pytest "$@"
