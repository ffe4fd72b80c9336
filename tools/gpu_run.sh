#!/usr/bin/env bash
# Runs on the GPU host (see docs/gpu-runs.md): installs the offline triton 3.9.0 staged in .gpu,
# then runs each GPU job given as "name|seconds|command", collecting every log and result file
# under $RESULTS and packing them into $OUT/gpu-results.tgz (one file comes back).
set -uo pipefail
if [ "${1:-}" = --pack-wheels ]; then  # here, not on the GPU host: .whl/*.whl -> .gpu/site-extra.tar.xz
  tmp=$(mktemp -d)
  for w in .whl/*.whl; do python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$w" "$tmp"; done
  tar cJf .gpu/site-extra.tar.xz -C "$tmp" . && rm -rf "$tmp" && ls -l .gpu/site-extra.tar.xz
  exit
fi
unpack_wheels() { mkdir -p /tmp/site-extra && tar xJf .gpu/site-extra.tar.xz -C /tmp/site-extra; }
if [ "${1:-}" = --unpack-wheels ]; then  # on the GPU host, in a call before the one that runs the jobs
  unpack_wheels && echo "unpacked into /tmp/site-extra"
  exit
fi
eval "$(bash .gpu/install-offline-triton.sh install .gpu)" || { echo "offline triton install failed"; exit 1; }
# Third-party packages the host lacks travel as wheels: in .whl/ of this checkout, or staged in
# $WHEEL_STAGE by an earlier call when they do not fit beside triton's parts in one transfer.
# Or already unpacked: .gpu/site-extra.tar.xz (the wheels' contents, xz-compressed to half their
# size; make it with `bash tools/gpu_run.sh --pack-wheels`), which may travel in an earlier call
# than triton's last part and be unpacked there (`gpu_run.sh --unpack-wheels`).
if [ -s .gpu/site-extra.tar.xz ]; then
  unpack_wheels || { echo "site-extra unpack failed"; exit 1; }
fi
[ -d /tmp/site-extra ] && export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}/tmp/site-extra
wheels=$(ls .whl/*.whl "${WHEEL_STAGE:-/root/wheels}"/*.whl 2>/dev/null)
if [ -n "$wheels" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site-extra $wheels \
    || { echo "wheel install failed"; exit 1; }
  export PYTHONPATH=${PYTHONPATH:+$PYTHONPATH:}/tmp/site-extra
fi
# The wheel's cuobjdump (registers and spills of a cubin) loses its mode bit in transit.
chmod +x /tmp/site/triton/backends/nvidia/bin/* 2>/dev/null
# The copy's git metadata can be stale (seen: it named an older commit), so result files take the
# commit from TRITON_EXT_COMMIT: set it to `git rev-parse --short HEAD` of what you built.
[ -n "${TRITON_EXT_COMMIT:-}" ] || echo "warning: TRITON_EXT_COMMIT is not set; results will name the copy's (possibly stale) git HEAD"
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1 TRITON_EXT_BUILD_DIR=$PWD/build
# triton_ext (and the tests/extension folders, run as `python -m ...`) from this checkout.
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
export RESULTS=${RESULTS:-/tmp/gpu-results}
mkdir -p "$RESULTS"
python3 -c 'import triton, torch, yaml; print("triton", triton.__version__, "torch", torch.__version__, torch.cuda.get_device_name())'
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
rc=0
for job in "$@"; do
  name=${job%%|*}; rest=${job#*|}; limit=${rest%%|*}; cmd=${rest#*|}
  echo "=== $name (limit ${limit}s): $cmd"
  start=$(date +%s)
  timeout "$limit" bash -c "$cmd" > "$RESULTS/$name.log" 2>&1; r=$?
  tail -25 "$RESULTS/$name.log"
  echo "=== $name: exit $r in $(( $(date +%s) - start ))s"
  [ $r -ne 0 ] && rc=1
done
tar czf "${OUT:-/tmp}/gpu-results.tgz" -C "$RESULTS" .
exit $rc
