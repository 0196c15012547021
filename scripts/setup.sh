#!/usr/bin/env bash
# Set up everything on a fresh machine: system packages (Chromium for browser tests, Graphviz),
# a virtual environment with gradwalk and its pinned test dependencies (PyTorch 2.13.0 CPU for the
# side-by-side tests), and the lab's frontend bundle.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
if [ "${SKIP_APT:-0}" != 1 ] && { ! command -v chromium >/dev/null || ! command -v dot >/dev/null; }; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq chromium graphviz >/dev/null
fi
if [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi
.venv/bin/pip install -q --upgrade pip >/dev/null
.venv/bin/pip install -q -e ".[lab,train,viz,test]" "torch==2.13.0"
if [ -f web/package.json ]; then
  (cd web && npm ci --no-audit --no-fund --silent && npm run build --silent)
fi
