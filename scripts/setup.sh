#!/usr/bin/env bash
# Set up everything on a fresh machine (idempotent, and quick when nothing changed):
#   - with --system: Debian packages the tests need (Chromium for the browser tests, Graphviz);
#   - a virtual environment .venv with gradwalk and its pinned extras, PyTorch 2.13.0 (CPU) for
#     the side-by-side tests and the lab's "Check against PyTorch" panel;
#   - the lab's frontend bundle (web/ -> src/gradwalk/lab/static/).
# Each step is skipped when its inputs are unchanged since it last ran: stamps in .venv/ hold a
# hash of pyproject.toml (pip), web/package.json + web/package-lock.json (npm ci), and those
# plus web/build.mjs and web/src/ (the build). Delete .venv/.stamp-* to force a step.
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
if [ "${1:-}" = "--system" ] && { ! command -v chromium >/dev/null || ! command -v dot >/dev/null; }; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq chromium graphviz >/dev/null
fi

hash_of() {  # a hash of the named files and of every file under the named folders
  find "$@" -type f 2>/dev/null | LC_ALL=C sort | xargs -r sha256sum | sha256sum | cut -c1-64
}
unchanged() {  # unchanged NAME HASH: the step NAME last ran with these inputs
  [ -f ".venv/.stamp-$1" ] && [ "$(cat ".venv/.stamp-$1")" = "$2" ]
}

if [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi
python_inputs=$(hash_of pyproject.toml)
if ! unchanged python "$python_inputs"; then
  .venv/bin/pip install -q --upgrade pip 2>&1 | grep -v "is ignored" || true
  # torch==2.13.0 exactly: a bare "torch" would pull a multi-GB CUDA build
  .venv/bin/pip install -q -e ".[lab,train,viz,test,fast,mkl]" "torch==2.13.0" 2>&1 | grep -v "is ignored" || true
  .venv/bin/python -c "import gradwalk, torch, starlette, markdown_it, mdit_py_plugins, yaml" # fail here, clearly, if the install did not
  echo "$python_inputs" > .venv/.stamp-python
fi

if [ -f web/package.json ]; then
  npm_inputs=$(hash_of web/package.json web/package-lock.json)
  build_inputs=$(hash_of web/package.json web/package-lock.json web/build.mjs web/src)
  built=src/gradwalk/lab/static/index.html
  if unchanged build "$build_inputs" && [ -f "$built" ]; then
    :  # the page is built from these very sources
  elif ! command -v npm >/dev/null; then
    if [ -f "$built" ]; then
      echo "setup: Node/npm not found; serving the page already built in src/gradwalk/lab/static/" >&2
    else
      echo "setup: the lab's page is not built and Node 20 + npm are missing: install them, then rerun" >&2
      exit 1
    fi
  else
    if ! unchanged npm "$npm_inputs" || [ ! -d web/node_modules ]; then
      (cd web && npm ci --no-audit --no-fund --silent)
      echo "$npm_inputs" > .venv/.stamp-npm
    fi
    (cd web && npm run build --silent)
    echo "$build_inputs" > .venv/.stamp-build
  fi
fi
