#!/usr/bin/env bash
# Set up (idempotent) and run the whole test suite: lint, the page's type check and unit tests,
# then pytest (engine, toolbox, nn, the lab's API, security and browser tests, all beside PyTorch).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --system
.venv/bin/ruff check src tests benchmarks
(cd web && npm run --silent typecheck && npm test --silent)
exec .venv/bin/python -m pytest "$@"
