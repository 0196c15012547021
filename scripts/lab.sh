#!/usr/bin/env bash
# Set up (idempotent) and start the lab on http://127.0.0.1:8000
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/gradwalk lab "$@"
