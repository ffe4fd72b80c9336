#!/usr/bin/env bash
# The main job: set up triton 3.9.0 and the plugin toolchain, build the one plugin the demo needs
# (loop_split), then compile a real causal-attention kernel with and without it and show what the
# plugin did to its TTIR. No torch, no third-party corpus (tools/test.sh sets those up).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash tools/setup.sh --demo
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$(mktemp -d)} TRITON_DEFAULT_FP_FUSION=${TRITON_DEFAULT_FP_FUSION:-1}
exec .venv/bin/python examples/demo.py "$@"
