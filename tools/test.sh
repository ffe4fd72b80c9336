#!/usr/bin/env bash
# Run the whole test suite (sets up first; see tools/setup.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash tools/setup.sh
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$(mktemp -d)} TRITON_DEFAULT_FP_FUSION=${TRITON_DEFAULT_FP_FUSION:-1}
exec .venv/bin/python -m pytest -q "$@"
