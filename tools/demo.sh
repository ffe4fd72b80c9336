#!/usr/bin/env bash
# The main job: build every plugin, then compile a real causal-attention kernel with and without
# the loop_split extension and show what the plugin did to its TTIR (sets up first).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash tools/setup.sh
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$(mktemp -d)} TRITON_DEFAULT_FP_FUSION=${TRITON_DEFAULT_FP_FUSION:-1}
exec .venv/bin/python examples/demo.py "$@"
