#!/usr/bin/env bash
# The main job: set up triton 3.9.0 and the plugin toolchain, build the one plugin the demo needs
# (loop_split), then compile a real causal-attention kernel with and without it and show what the
# plugin did to its TTIR. No torch, no third-party corpus (tools/test.sh sets those up).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$(mktemp -d)} TRITON_DEFAULT_FP_FUSION=${TRITON_DEFAULT_FP_FUSION:-1}
if [ -n "${TRITON_EXT_INDEX:-}" ]; then
  # Prebuilt: TRITON_EXT_INDEX=<index>/triton-3.9.0/simple installs the wheels (no toolchain, no
  # build) into their own venv, so the checkout's editable .venv is left as it is.
  [ -x .venv-demo/bin/python ] || python3 -m venv .venv-demo
  printf '[demo] installing triton-ext-loop-split from %s\n' "$TRITON_EXT_INDEX" >&2
  .venv-demo/bin/python -m pip install -q --extra-index-url "$TRITON_EXT_INDEX" triton-ext-loop-split
  exec .venv-demo/bin/python examples/demo.py "$@"
fi
bash tools/setup.sh --demo
exec .venv/bin/python examples/demo.py "$@"
