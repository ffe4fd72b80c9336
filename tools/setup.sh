#!/usr/bin/env bash
# Set up everything the demo and the tests need, on a fresh Debian 12 machine as root or on a
# developer machine: a .venv in the repository root with triton==3.9.0 and the test tools, the
# plugin toolchain (cached in ~/.cache/triton-ext), and a build of every extension (build/).
# Safe to re-run: each step is cached and takes seconds when nothing changed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf '[setup] %s\n' "$*" >&2; }

PY=${PYTHON:-python3}
if ! command -v "$PY" >/dev/null; then
  say "installing python3 (Debian)"; apt-get update -q && apt-get install -y -q python3 python3-venv python3-dev
fi
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  say "error: triton-ext needs CPython >= 3.11 ($PY is $("$PY" --version))"; exit 1
fi
if [ ! -x .venv/bin/python ]; then
  if ! "$PY" -m venv .venv 2>/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      say "installing python3-venv and python3-dev (Debian)"
      apt-get update -q && apt-get install -y -q python3-venv python3-dev
      rm -rf .venv && "$PY" -m venv .venv
    else
      say "error: '$PY -m venv' failed; install python3-venv"; exit 1
    fi
  fi
fi
# Python headers are needed for the nanobind bindings of the pass database (optional part).
if ! .venv/bin/python -c 'import sysconfig,os,sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"],"Python.h")))'; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing python3-dev for Python.h"; apt-get install -y -q python3-dev || true
  fi
fi
stamp=.venv/.triton-ext-deps
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  say "installing triton-ext and its dependencies into .venv (pip caches downloads)"
  .venv/bin/python -m pip install -q --upgrade pip
  if ! .venv/bin/python -c 'import torch' 2>/dev/null; then
    # The real-world corpus (tests/realworld) imports torch. A CPU build: PyPI's Linux torch
    # wheels pull about 3 GB of nvidia-* libraries that compiling on a CPU never uses.
    say "installing a CPU torch for the real-world kernel corpus"
    .venv/bin/python -m pip install -q 'torch==2.13.0+cpu' \
      || { say "no CPU torch wheel found; installing torch from the index (large)"; .venv/bin/python -m pip install -q torch; }
  fi
  .venv/bin/python -m pip install -q -e '.[test,build,realworld]'
  touch "$stamp"
fi
# The .pth that makes TRITON_EXT_ENABLE work without `import triton_ext` (an editable install
# cannot place it; the core wheel ships it).
.venv/bin/triton-ext startup-hook install >/dev/null
say "toolchain"
.venv/bin/triton-ext toolchain
say "building plugins"
.venv/bin/triton-ext build
