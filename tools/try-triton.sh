#!/usr/bin/env bash
# Try a Triton release that triton-ext does not support yet: one command that installs it into
# its own venv, builds every plugin against it and runs the ABI probe (tests/cpp/abi-probe: a
# plugin that checks, inside that libtriton, that the headers plugins are built with agree with
# it) and the loop_split tests. Usage:
#
#   bash tools/try-triton.sh 3.10.0        # venv .venv-triton-3.10.0, build dir build-triton-3.10.0
#
# Exit 0: the release works; add it to packaging/triton-releases.txt and docs/compatibility.md.
# It stops early, in one line, when the release's wheel ships no C++ headers (triton/include),
# as 3.7.1 and 3.8.0 do: plugins cannot be built against such a release from PyPI.
# The toolchain for it is cached apart (~/.cache/triton-ext/try-<release>), so the supported
# release's toolchain and build/ are left as they are.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
release=${1:?usage: tools/try-triton.sh TRITON_VERSION (e.g. 3.10.0)}
say() { printf '[try-triton %s] %s\n' "$release" "$*" >&2; }
PY=${PYTHON:-python3}
venv=.venv-triton-$release
build=build-triton-$release
[ -x "$venv/bin/python" ] || "$PY" -m venv "$venv"
say "installing triton==$release into $venv"
"$venv/bin/python" -m pip install -q "triton==$release" pyyaml cmake ninja pytest lit filecheck numpy
# triton-ext itself without its dependencies: its pin (triton==3.9.0) is what is being tried.
"$venv/bin/python" -m pip install -q --no-deps -e .
if ! "$venv/bin/python" -c 'import os, sys, triton; sys.exit(not os.path.isfile(os.path.join(os.path.dirname(triton.__file__), "include", "triton", "Version.h")))'; then
  say "triton $release ships no C++ headers in its wheel (triton/include): plugins cannot be built against it from PyPI"
  exit 3
fi
export TRITON_EXT_TOOLCHAIN_CACHE=${TRITON_EXT_TOOLCHAIN_CACHE:-$HOME/.cache/triton-ext/try-$release}
export TRITON_EXT_BUILD_DIR=$PWD/$build TRITON_EXT_CACHE_DIR=$PWD/$build/preflight
say "toolchain (cache $TRITON_EXT_TOOLCHAIN_CACHE)"
"$venv/bin/triton-ext" toolchain
say "building every plugin and the ABI probe into $build"
"$venv/bin/triton-ext" build
say "ABI probe and loop_split tests"
export TRITON_CACHE_DIR=$(mktemp -d) TRITON_DEFAULT_FP_FUSION=1
"$venv/bin/python" -m pytest -q -p no:cacheprovider tests/cpp/test_abi_probe.py passes/LoopSplit
say "triton $release works: add it to packaging/triton-releases.txt and docs/compatibility.md"
