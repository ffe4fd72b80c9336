#!/usr/bin/env bash
# The transparent mode's H200 checks (issues 26.3 and 27), each bounded to a few minutes:
#
#   bash benchmarks/auto_gpu_checks.sh safety     # 26.3: addmm with an expanded bias, parameters, memory pressure
#   bash benchmarks/auto_gpu_checks.sh overhead   # 27.1: per-launch cost, stock / hook / mode (no pass, chosen pass),
#                                                 #       two small kernels and the 17 corpus kernels
#   bash benchmarks/auto_gpu_checks.sh all0       # 27.3/27.4: the whole corpus (tests/corpus, tests/realworld with
#   bash benchmarks/auto_gpu_checks.sh all1       #       its more_kernels.py: 84 kernels), mode on/off, GPU time and
#   bash benchmarks/auto_gpu_checks.sh all2       #       back to back, the registry's auto passes, in four shards of
#   bash benchmarks/auto_gpu_checks.sh all3       #       about 5 minutes each
#   bash benchmarks/auto_gpu_checks.sh torch_compile  # 27.5: torch.compile'd decoder block, stock vs auto (5 minutes)
#   bash benchmarks/auto_gpu_checks.sh dots       # nvidia_pipeline_dots beside the auto passes on the three corpus
#                                                 #       kernels launched with num_stages=1 (not part of `all`)
#   bash benchmarks/auto_gpu_checks.sh all
#
# CANDIDATES=pass,pass,... replaces the registry's auto passes in the all* shards (default: the registry's).
# Run from the repository root (triton 3.9.0 importable, plugins in build/plugins). Each check
# gets a fresh Triton cache (cold first launches) and writes its JSON under $OUT (default: .).
set -u
OUT=${OUT:-.}
export OUT
export TRITON_EXT_BUILD_DIR=${TRITON_EXT_BUILD_DIR:-$PWD/build}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
PY=${PYTHON:-python}
status=0

run() {  # name, then the command (LIMIT: seconds, default 175)
  local name=$1; shift
  TRITON_CACHE_DIR=$(mktemp -d) timeout "${LIMIT:-175}" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc (log $OUT/$name.log)"
  tail -n 5 "$OUT/$name.log"
  [ $rc -eq 0 ] || status=1
}

case ${1:-all} in
  safety|all) run auto-safety $PY -m benchmarks.auto_safety_gpu --out "$OUT/auto-safety-h200.json" ;;&
  overhead|all) LIMIT=300 run auto-overhead $PY -m benchmarks.auto_overhead --corpus --rounds 5 --out "$OUT/auto-overhead-h200.json" ;;&
  all0|all1|all2|all3|all)
    for shard in $( [ "${1:-all}" = all ] && echo 0 1 2 3 || echo "${1#all}" ); do
      LIMIT=420 run "auto-all$shard" $PY -m benchmarks.auto_mode_gpu --set all --candidates "${CANDIDATES:-}" --shard "$shard/4" \
        --out "$OUT/auto-mode-all$shard-h200.json"
    done ;;&
  dots) LIMIT=400 run auto-pipeline-dots $PY -m benchmarks.auto_mode_gpu --set all \
      --candidates loop_split,grid_swizzle,nvidia_auto_pdl,nvidia_stream_eviction,nvidia_pipeline_dots \
      --kernels sglang_extend_attention sglang_prefill_attention vllm_prefix_prefill \
      --out "$OUT/auto-mode-pipeline-dots-h200.json" ;;&
  torch_compile|all) LIMIT=295 run auto-torch-compile $PY -m benchmarks.auto_torch_compile --repeats 2 --timeout 140 --out "$OUT/auto-torch-compile-h200.json" ;;&
  safety|overhead|all0|all1|all2|all3|dots|torch_compile|all) ;;
  *) echo "usage: $0 [safety|overhead|all0|all1|all2|all3|dots|torch_compile|all]" >&2; exit 2 ;;
esac
exit $status
