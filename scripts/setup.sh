#!/usr/bin/env bash
# Set up everything on a fresh machine (idempotent):
#   - with --system: Debian packages the tests need (Chromium for the browser tests, Graphviz);
#   - a virtual environment .venv with gradwalk and its pinned extras, PyTorch 2.13.0 (CPU) for
#     the side-by-side tests and the lab's "Check against PyTorch" panel;
#   - the lab's frontend bundle (web/ -> src/gradwalk/lab/static/).
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
if [ "${1:-}" = "--system" ] && { ! command -v chromium >/dev/null || ! command -v dot >/dev/null; }; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq chromium graphviz >/dev/null
fi
if [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi
.venv/bin/pip install -q --upgrade pip 2>&1 | grep -v "is ignored" || true
# torch==2.13.0 exactly: a bare "torch" would pull a multi-GB CUDA build
.venv/bin/pip install -q -e ".[lab,train,viz,test]" "torch==2.13.0" 2>&1 | grep -v "is ignored" || true
.venv/bin/python -c "import gradwalk, torch, starlette" # fail here, clearly, if the install did not
if [ -f web/package.json ]; then
  (cd web && npm ci --no-audit --no-fund --silent && npm run build --silent)
fi
