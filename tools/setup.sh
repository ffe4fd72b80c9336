#!/usr/bin/env bash
# Set up what the tests need (default) or only what the demo needs (--demo), on a fresh Debian 12
# machine as root or on a developer machine. Safe to re-run: each step is cached and takes
# seconds when nothing changed.
#   default: a .venv in the repository root with triton==3.9.0, the test and build tools, a CPU
#            torch and the third-party kernel corpus; the plugin toolchain (~/.cache/triton-ext);
#            a build of every extension and of the test fixtures (build/).
#   --demo:  the .venv with triton==3.9.0, cmake and ninja only; the toolchain; loop_split only.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf '[setup] %s\n' "$*" >&2; }
MODE=full
case "${1:-}" in
  --demo) MODE=demo ;;
  "") ;;
  *) say "usage: tools/setup.sh [--demo]"; exit 2 ;;
esac

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
if [ "$MODE" = full ] && ! .venv/bin/python -c 'import sysconfig,os,sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"],"Python.h")))'; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    say "installing python3-dev for Python.h"; apt-get install -y -q python3-dev || true
  fi
fi
stamp=.venv/.triton-ext-deps
if [ "$MODE" = demo ]; then
  # The demo needs triton and the build tools only (no torch, no corpus, no test tools).
  demo_stamp=.venv/.triton-ext-demo-deps
  if [ -f "$stamp" ] && [ ! pyproject.toml -nt "$stamp" ]; then
    :  # the full setup has installed all of it
  elif [ ! -f "$demo_stamp" ] || [ pyproject.toml -nt "$demo_stamp" ]; then
    say "installing triton-ext, triton==3.9.0, cmake and ninja into .venv (pip caches downloads)"
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q -e . cmake ninja
    touch "$demo_stamp"
  fi
  say "toolchain"
  .venv/bin/triton-ext toolchain
  say "building loop_split"
  exec .venv/bin/triton-ext build loop_split
fi
# torch for the real-world corpus: a CPU build (see below); override both to use another.
TORCH_CPU=${TORCH_CPU:-2.13.0+cpu}
TORCH_CPU_INDEX=${TORCH_CPU_INDEX:-https://download.pytorch.org/whl/cpu}
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] \
   || [ tests/realworld/nodeps-requirements.txt -nt "$stamp" ] || [ tests/realworld/nodeps-imports.txt -nt "$stamp" ]; then
  say "installing triton-ext and its dependencies into .venv (pip caches downloads)"
  .venv/bin/python -m pip install -q --upgrade pip
  if ! .venv/bin/python -c 'import torch' 2>/dev/null; then
    # The real-world corpus (tests/realworld) imports torch; it needs a CPU build. PyPI has no
    # CPU torch for Linux: its wheel (500 MiB) links cuDNN, cuBLAS, NCCL... (import fails
    # without the ~3 GB of nvidia-*/cuda-* packages) and pins an older triton (torch 2.13.0:
    # triton==3.7.1), which cannot be installed next to triton==3.9.0. The +cpu build (190 MiB)
    # needs neither: from a local wheel folder (pip's find-links) when there is one, else from
    # PyTorch's CPU index.
    say "installing a CPU torch (torch==$TORCH_CPU) for the real-world kernel corpus"
    .venv/bin/python -m pip install -q "torch==$TORCH_CPU" 2>/dev/null \
      || .venv/bin/python -m pip install -q "torch==$TORCH_CPU" --extra-index-url "$TORCH_CPU_INDEX" \
      || { say "error: could not install torch==$TORCH_CPU from the package index or $TORCH_CPU_INDEX;"
           say "put the wheel in a find-links folder (PIP_FIND_LINKS) or set TORCH_CPU_INDEX to a mirror"; exit 1; }
  fi
  .venv/bin/python -m pip install -q -e '.[test,build,realworld]'
  # Corpus packages whose declared dependencies cannot live next to triton==3.9.0 and a CPU
  # torch (sglang pins a CUDA torch, flashinfer, sgl-kernel...): pinned in
  # tests/realworld/nodeps-requirements.txt and installed without them; the kernel modules the
  # corpus imports need only what nodeps-imports.txt lists.
  .venv/bin/python -m pip install -q -r tests/realworld/nodeps-imports.txt
  .venv/bin/python -m pip install -q --no-deps -r tests/realworld/nodeps-requirements.txt
  touch "$stamp"
fi
# vLLM's attention kernels for the corpus: a few files of the wheel pinned in
# tests/realworld/vllm-requirements.txt (not installed: its __init__ needs vLLM's CUDA build);
# `pip download --no-deps` (337 MB, pip's cache) and unpack ~240 KB into
# ~/.cache/triton-ext/vllm-<version>, once: fetch returns at once when the copy has every file it
# lists, and replaces a copy made before the list grew.
say "vLLM's Triton kernel files (tests/realworld/vllm_modules.py)"
.venv/bin/python -m tests.realworld.vllm_modules fetch >/dev/null
# The .pth that makes TRITON_EXT_ENABLE work without `import triton_ext`: `pip install -e .`
# installs it (packaging/backend); this keeps a .venv made before that in step.
.venv/bin/triton-ext startup-hook install >/dev/null
say "toolchain"
.venv/bin/triton-ext toolchain
say "building plugins"
# With ccache installed, a build of sources it has compiled before (a re-run after `rm -rf build`,
# another clone of the same commit) takes seconds instead of minutes; paths below the checkout
# are hashed relative to it, so clones in other folders share the cache. A launcher set by the
# caller wins; without ccache nothing changes.
# (Only a ccache that can write its cache: one that cannot fails every compile.)
if [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] && command -v ccache >/dev/null \
   && ccache_dir=$(ccache -k cache_dir 2>/dev/null) && [ -n "$ccache_dir" ] \
   && mkdir -p "$ccache_dir" 2>/dev/null && [ -w "$ccache_dir" ]; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
fi
.venv/bin/triton-ext build
