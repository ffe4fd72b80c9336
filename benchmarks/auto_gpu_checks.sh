#!/usr/bin/env bash
# The transparent mode's H200 checks (issues 26.3 and 27), each bounded to 3 minutes:
#
#   bash benchmarks/auto_gpu_checks.sh safety     # 26.3: addmm with an expanded bias, parameters, memory pressure
#   bash benchmarks/auto_gpu_checks.sh overhead   # 27.1: per-launch cost, stock / hook / mode (no pass, chosen pass)
#   bash benchmarks/auto_gpu_checks.sh corpus0    # 27.3: half the corpus, mode on/off, GPU time and back to back
#   bash benchmarks/auto_gpu_checks.sh corpus1    #       the other half
#   bash benchmarks/auto_gpu_checks.sh more0      # 27.4: half of tests/realworld/more_kernels.py (flag-gems,
#   bash benchmarks/auto_gpu_checks.sh more1      #       sageattention; decode and prefill sizes), the registry's auto passes
#   bash benchmarks/auto_gpu_checks.sh all0       # 27.3/27.4: the whole corpus (tests/corpus, tests/realworld with
#   bash benchmarks/auto_gpu_checks.sh all1       #       its more_kernels.py: 84 kernels) in four shards (all0-all3),
#                                                 #       the registry's auto passes, about 3 minutes each
#   bash benchmarks/auto_gpu_checks.sh torch_compile  # 27.5: torch.compile'd decoder block, stock vs auto (5 minutes)
#   bash benchmarks/auto_gpu_checks.sh all
#
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
  overhead|all) run auto-overhead $PY -m benchmarks.auto_overhead --out "$OUT/auto-overhead-h200.json" ;;&
  corpus0|all) run auto-corpus0 $PY -m benchmarks.auto_mode_gpu --half 0 --out "$OUT/auto-mode-half0-h200.json" ;;&
  corpus1|all) run auto-corpus1 $PY -m benchmarks.auto_mode_gpu --half 1 --out "$OUT/auto-mode-half1-h200.json" ;;&
  more0|all) run auto-more0 $PY -m benchmarks.auto_mode_gpu --set more --candidates '' --half 0 --out "$OUT/auto-mode-more0-h200.json" ;;&
  more1|all) run auto-more1 $PY -m benchmarks.auto_mode_gpu --set more --candidates '' --half 1 --out "$OUT/auto-mode-more1-h200.json" ;;&
  all0|all1|all2|all3) LIMIT=290 run auto-$1 $PY -m benchmarks.auto_mode_gpu --set all --candidates '' --shard "${1#all}/4" --out "$OUT/auto-mode-$1-h200.json" ;;&
  torch_compile|all) LIMIT=295 run auto-torch-compile $PY -m benchmarks.auto_torch_compile --repeats 2 --timeout 140 --out "$OUT/auto-torch-compile-h200.json" ;;&
  safety|overhead|corpus0|corpus1|more0|more1|all0|all1|all2|all3|torch_compile|all) ;;
  *) echo "usage: $0 [safety|overhead|corpus0|corpus1|more0|more1|all0|all1|all2|all3|torch_compile|all]" >&2; exit 2 ;;
esac
exit $status
