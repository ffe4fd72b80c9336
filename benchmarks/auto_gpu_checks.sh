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
#   bash benchmarks/auto_gpu_checks.sh holdout0   # the same on the hold-out kernels (tests/realworld/holdout_kernels.py),
#   bash benchmarks/auto_gpu_checks.sh holdout1   #       which no pass or rule was tuned on, in two shards (not in `all`)
#   bash benchmarks/auto_gpu_checks.sh torch_compile  # 27.5: torch.compile'd decoder block, stock vs auto (5 minutes)
#   bash benchmarks/auto_gpu_checks.sh dots       # nvidia_pipeline_dots beside the auto passes on the three corpus
#                                                 #       kernels launched with num_stages=1 (not part of `all`)
#   bash benchmarks/auto_gpu_checks.sh deeper0    # nvidia_pipeline_deeper beside the auto passes on the corpus kernels
#   bash benchmarks/auto_gpu_checks.sh deeper1    #       it changes (dot loops, num_stages >= 2), in two halves (not in `all`)
#   bash benchmarks/auto_gpu_checks.sh unroll0    # unroll_dot_loops beside the auto passes on the corpus's dot-loop
#   bash benchmarks/auto_gpu_checks.sh unroll1    #       kernels, in two halves, and on the hold-out set's
#   bash benchmarks/auto_gpu_checks.sh unroll_holdout  #  (not part of `all`; the pass is opt-in until these run)
#   bash benchmarks/auto_gpu_checks.sh unroll_key # the same on the 11 dot-loop kernels where the loop-unroll probe saw
#                                                 #       it win, lose or not fit (one call, when GPU time is short)
#   bash benchmarks/auto_gpu_checks.sh sizes      # one function launched at prefill and then decode sizes in one
#                                                 #       process (vLLM's unified attention, SageAttention's attention
#                                                 #       and quantization): a choice timed at one size must not reach
#                                                 #       the other (triton_ext/_launch_size.py; not part of `all`)
#   bash benchmarks/auto_gpu_checks.sh all
#
# CANDIDATES=pass,pass,... replaces the registry's auto passes in the all* shards (default: the registry's).
# TRITON_EXT_AUTO_WARPS=0 leaves out the mode's warp-count variants (num_warps/2, num_warps*2; on by default).
# TRITON_EXT_AUTO_STAGES=0 leaves out its pipeline-depth variants (num_stages_minus_1, num_stages_plus_1; on by default).
# Run from the repository root (triton 3.9.0 importable, plugins in build/plugins). Each check
# gets a fresh Triton cache (cold first launches) and writes its JSON under $OUT (default: .), named
# after the GPU (GPU_TAG: h200, h100, ... from nvidia-smi).
set -u
OUT=${OUT:-.}
export OUT
export TRITON_EXT_BUILD_DIR=${TRITON_EXT_BUILD_DIR:-$PWD/build}
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
PY=${PYTHON:-python}
# Result files are named after the GPU they ran on (auto-mode-all0-h200.json, ...-h100.json).
GPU_TAG=${GPU_TAG:-$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 \
  | grep -oiE 'h100|h200|b200|a100' | head -n 1 | tr '[:upper:]' '[:lower:]')}
GPU_TAG=${GPU_TAG:-gpu}
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
  safety|all) run auto-safety $PY -m benchmarks.auto_safety_gpu --out "$OUT/auto-safety-$GPU_TAG.json" ;;&
  overhead|all) LIMIT=300 run auto-overhead $PY -m benchmarks.auto_overhead --corpus --rounds 5 --out "$OUT/auto-overhead-$GPU_TAG.json" ;;&
  all0|all1|all2|all3|all)
    for shard in $( [ "${1:-all}" = all ] && echo 0 1 2 3 || echo "${1#all}" ); do
      LIMIT=420 run "auto-all$shard" $PY -m benchmarks.auto_mode_gpu --set all --candidates "${CANDIDATES:-}" --shard "$shard/4" \
        --out "$OUT/auto-mode-all$shard-$GPU_TAG.json"
    done ;;&
  holdout0|holdout1) LIMIT=420 run "auto-$1" $PY -m benchmarks.auto_mode_gpu --set holdout --candidates "${CANDIDATES:-}" \
      --shard "${1#holdout}/2" --out "$OUT/auto-mode-$1-$GPU_TAG.json" ;;&
  dots) LIMIT=400 run auto-pipeline-dots $PY -m benchmarks.auto_mode_gpu --set all \
      --candidates loop_split,grid_swizzle,nvidia_auto_pdl,nvidia_stream_eviction,nvidia_pipeline_dots \
      --kernels sglang_extend_attention sglang_prefill_attention vllm_prefix_prefill \
      --out "$OUT/auto-mode-pipeline-dots-$GPU_TAG.json" ;;&
  deeper0|deeper1)
    half0="fla_matmul_fp16_128x256x64 fla_matmul_fp32_64x64x32 torchao_scaled_int8_mm torchao_qt_int8_mm
      torchao_fp8_blockwise_gemm torchao_hqq_mixed_mm liger_mm_int8int2 liger_moe_up_proj_swiglu
      grid_swizzle_naive_gemm_4096 grid_swizzle_naive_gemm_8192 matmul"
    half1="vllm_unified_prefill vllm_unified_decode vllm_unified_decode_3d vllm_paged_decode sage_attn_prefill
      sage_attn_causal_prefill sage_attn_decode sage_attn_h96_prefill fla_parallel_attn_fwd fla_parallel_attn_bwd_dq
      fla_parallel_attn_bwd_dkv"
    [ "$1" = deeper0 ] && kernels=$half0 || kernels=$half1
    # shellcheck disable=SC2086  # one word per kernel
    LIMIT=500 run "auto-pipeline-$1" $PY -m benchmarks.auto_mode_gpu --set all \
      --candidates loop_split,grid_swizzle,nvidia_auto_pdl,nvidia_stream_eviction,nvidia_pipeline_dots,nvidia_pipeline_deeper \
      --kernels $kernels --out "$OUT/auto-mode-pipeline-$1-$GPU_TAG.json" ;;&
  unroll0|unroll1|unroll_holdout|unroll_key)
    # unroll_dot_loops (opt-in until this runs) beside the registry's auto passes, on the kernels it
    # changes (innermost dot loops): the corpus's in two halves, the hold-out set's in one.
    half0="fla_matmul_fp16_128x256x64 fla_matmul_fp32_64x64x32 torchao_scaled_int8_mm torchao_qt_int8_mm
      torchao_fp8_blockwise_gemm torchao_hqq_mixed_mm liger_mm_int8int2 liger_moe_up_proj_swiglu
      grid_swizzle_naive_gemm_4096 matmul attention_fwd attention_bwd"
    half1="vllm_unified_prefill vllm_unified_decode vllm_unified_decode_3d vllm_paged_decode sage_attn_prefill
      sage_attn_causal_prefill sage_attn_decode sage_attn_h96_prefill fla_parallel_attn_fwd fla_parallel_attn_bwd_dq
      fla_parallel_attn_bwd_dkv sglang_prefill_attention sglang_extend_attention"
    holdout="ho_fla_gdn_kkt_solve ho_fla_gdn_recompute_w_u ho_fla_gdn_fwd_h ho_fla_chunk_fwd_o ho_fla_gdn_bwd_dhu
      ho_sglang_decode_stage1 ho_fg_mm_prefill"
    # unroll_key: the probe's (benchmarks/results/loop-unroll-probe-h100.json) winners, its worst losers and
    # a kernel whose unrolled variant no longer fits in shared memory, from the corpus and the hold-out set.
    key="fla_matmul_fp16_128x256x64 fla_matmul_fp32_64x64x32 vllm_unified_decode_3d vllm_paged_decode
      sglang_prefill_attention vllm_unified_prefill torchao_hqq_mixed_mm fla_parallel_attn_bwd_dq
      ho_sglang_decode_stage1 ho_fla_gdn_bwd_dhu ho_fla_gdn_fwd_h"
    case $1 in unroll0) kernels=$half0 which=all ;; unroll1) kernels=$half1 which=all ;;
      unroll_key) kernels=$key which=all+holdout ;; *) kernels=$holdout which=holdout ;; esac
    # shellcheck disable=SC2086  # one word per kernel
    LIMIT=500 run "auto-$1" $PY -m benchmarks.auto_mode_gpu --set $which \
      --candidates loop_split,grid_swizzle,nvidia_auto_pdl,nvidia_stream_eviction,nvidia_pipeline_dots,nvidia_pipeline_deeper,unroll_dot_loops \
      --kernels $kernels --out "$OUT/auto-mode-$1-$GPU_TAG.json" ;;&
  sizes)
    # In this order, in one process: each prefill launch decides first, its decode launch (the same
    # specialization for vLLM's unified attention) comes after.
    sizes="vllm_unified_prefill vllm_unified_decode sage_attn_prefill sage_attn_decode sage_quant_q_prefill
      sage_quant_k_decode"
    # shellcheck disable=SC2086  # one word per kernel
    LIMIT=300 run auto-sizes $PY -m benchmarks.auto_mode_gpu --set all --candidates "${CANDIDATES:-}" \
      --kernels $sizes --out "$OUT/auto-mode-sizes-$GPU_TAG.json" ;;
  torch_compile|all) LIMIT=295 run auto-torch-compile $PY -m benchmarks.auto_torch_compile --repeats 3 --timeout 80 --out "$OUT/auto-torch-compile-$GPU_TAG.json" ;;&
  safety|overhead|all0|all1|all2|all3|holdout0|holdout1|dots|deeper0|deeper1|unroll0|unroll1|unroll_holdout|unroll_key|torch_compile|all) ;;
  *) echo "usage: $0 [safety|overhead|all0|all1|all2|all3|holdout0|holdout1|dots|deeper0|deeper1|unroll0|unroll1|unroll_holdout|unroll_key|sizes|torch_compile|all]" >&2; exit 2 ;;
esac
exit $status
