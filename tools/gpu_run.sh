#!/usr/bin/env bash
# Runs on the GPU host (see README "GPU runs"): installs the offline triton 3.9.0 staged in .gpu,
# then runs each GPU script given as arguments ("name|command"), collecting JSON and logs in $OUT.
set -uo pipefail
eval "$(bash .gpu/install-offline-triton.sh install .gpu)" || { echo "offline triton install failed"; exit 1; }
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1 TRITON_EXT_BUILD_DIR=$PWD/build
python3 -c 'import triton, torch, yaml; print("triton", triton.__version__, "torch", torch.__version__, torch.cuda.get_device_name())'
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
rc=0
for job in "$@"; do
  name=${job%%|*}; cmd=${job#*|}
  echo "=== $name: $cmd"
  start=$(date +%s)
  bash -c "$cmd" > "${OUT:-/tmp}/$name.log" 2>&1; r=$?
  tail -40 "${OUT:-/tmp}/$name.log"
  echo "=== $name: exit $r in $(( $(date +%s) - start ))s"
  [ $r -ne 0 ] && rc=1
done
exit $rc
