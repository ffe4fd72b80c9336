#!/usr/bin/env bash
# Run the whole test suite (sets up first; see tools/setup.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash tools/setup.sh
export TRITON_CACHE_DIR=${TRITON_CACHE_DIR:-$(mktemp -d)} TRITON_DEFAULT_FP_FUSION=${TRITON_DEFAULT_FP_FUSION:-1}
# Two or more pytest workers (pytest-xdist; TRITON_EXT_TEST_WORKERS overrides, 0 runs in this
# process): most tests are single-threaded CPU compiles, and the suite is order-independent (each
# worker isolates its caches). A file's tests stay on one worker (--dist loadfile), so a module's
# fixture (the real-world sweep's, which runs two compile processes of its own) is set up once.
# On the 2-core CI machine: about 17 minutes instead of 24.
workers=${TRITON_EXT_TEST_WORKERS:-$(( $(nproc) < 4 ? 2 : 4 ))}
exec .venv/bin/python -m pytest -q -n "$workers" --dist loadfile "$@"
