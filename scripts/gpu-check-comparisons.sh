# shellcheck shell=bash
# Sourced by scripts/gpu-check.sh after its training-step benches: comparisons a check alone could
# not read. It uses the check's note, bench, skipped, status, MINRNN, LOGS, PREBUILT and peak.
# - Nsight Compute on our slowest kernels, where ncu runs (SKIP=ncu);
# - an earlier commit's training step beside this build's (gpu-carry.sh's BASELINE=REV);
# - the minGRU step's profile with each tiled scan kernel (MINRNN_SCAN_KERNEL);
# - cuBLAS's own logs of a few steps' products (their sizes and leading dimensions);
# - LibTorch's cuBLASLt GEMM path beside its default cuBLAS one (the step, and a pack of 32).
# Why our slowest kernels take what they take (the time table's and token parameters' gradients,
# a join's backward: ~26, 29 and 9 µs on 2026-11-27 where their bytes need a few): Nsight Compute's
# occupancy, throughput and warp stalls over one training step's launches of them (48), where ncu
# is installed and the GPU's counters are open to it (SKIP=ncu to leave it out; ~30 s).
ncu_bin=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2> /dev/null |
          head -1)
if ! skipped ncu && ! skipped train && [ -z "$ncu_bin" ]; then
  note "ncu: not installed here"
elif ! skipped ncu && ! skipped train; then
  kernels_regex='regex:TimeTableGrad|TokenParameterGrads|ResidualNorm|ColumnSums|NormParamGrads'
  if timeout 120 "$ncu_bin" --kernel-name "$kernels_regex" --launch-count 48 --section SpeedOfLight \
       --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis \
       "$MINRNN" bench train --devices cuda --backbones mingru --seconds 1 --no-append \
       > "$LOGS/ncu.log" 2>&1; then
    note "ncu: $(grep -c '^  [a-z].*grid_kernel' "$LOGS/ncu.log") kernel launches profiled (log: $LOGS/ncu.log)"
  else
    note "ncu: did not run to the end (log: $LOGS/ncu.log; the counters may be closed here)"
  fi
fi
# One bench of both backbones (the command that is minrnn, `env VAR=value minrnn` allowed, then its
# bench arguments), not filed, noted in the summary as "WHAT, LABEL: …" — each backbone's row
# printed by `fields`, an awk printf of the row's columns ($2 the backbone) — or FAILED.
noted_bench() {  # what, label, log, fields, then the command
  local what=$1 label=$2 log=$3 fields=$4
  shift 4
  if "$@" --no-append > "$log" 2>&1; then
    note "$what, $label: $(awk -F'|' "/^\\| (mingru|transformer) /{
      for (i = 2; i <= NF; i++) gsub(/ /, \"\", \$i); $fields}" "$log")"
  else
    status=1
    note "$what, $label FAILED (log: $log)"
  fi
}
# The graph step of both backbones, 2 s each: ms a step and launches.
time_step() {  # label, log, then the command that is minrnn
  local label=$1 log=$2
  shift 2
  noted_bench "train step" "$label" "$log" 'printf "%s %s ms (%s launches); ", $2, $9, $5' \
    "$@" bench train --devices cuda --backbones mingru,transformer --seconds 2
}
# A change's effect read side by side in this call, not against another call's numbers: the step
# of an earlier commit's build (gpu-carry.sh's BASELINE=REV, carried as bin/minrnn-baseline) and
# this build's, alternating, one round each (two until 2026-11-28: their rounds agreed to 0.01 ms).
baseline="${PREBUILT:+$PREBUILT/bin/minrnn-baseline}"
rev=$(cat "${PREBUILT:-.}/bin/baseline-rev" 2> /dev/null || echo "an earlier commit")
if [ -n "$baseline" ] && [ -x "$baseline" ] && ! skipped train; then
  for round in 1; do
    time_step "baseline $rev, round $round" "$LOGS/bench-train-baseline-$round.log" "$baseline"
    time_step "this build, round $round" "$LOGS/bench-train-this-$round.log" "$MINRNN"
  done
fi
# The same for a stacked pack of 32 (both backbones), whose element-wise kernels a change may
# have made cheaper: run-steps/s and the share of the fp32 peak. ~12 s a build.
time_stacked_pack() {  # label, log, matmul precision (fp32 or tf32), then the command that is minrnn
  local label=$1 log=$2 precision=$3
  shift 3
  noted_bench "stacked pack of 32" "$label" "$log" \
    'printf "%s %s run-steps/s (%s %% of the peak); ", $2, $5, $10' \
    "$@" bench pack --device cuda --backbones mingru,transformer --packs 32 --seconds 1 --stacked \
    --matmul-precision "$precision" "${peak[@]}"
}
if [ -n "$baseline" ] && [ -x "$baseline" ] && ! skipped pack; then
  time_stacked_pack "baseline $rev" "$LOGS/bench-pack-stacked-baseline.log" fp32 "$baseline"
  time_stacked_pack "this build" "$LOGS/bench-pack-stacked-this.log" fp32 "$MINRNN"
fi
# The stacked products by cuBLASLt, each shape's algorithm the fastest of its candidates timed on
# its first call (MINRNN_STACKED_GEMM=tuned, ops/tuned_gemm_cuda.h), beside LibTorch's bmm
# (cublas), whatever the check exports, in fp32 and TF32: on 2026-11-28 the stacked minGRU
# round's products ran at ~40 TFLOP/s where cuBLAS's 128×128 tiles reached ~55. ~50 s.
if ! skipped pack; then
  for products in cublas tuned; do
    for precision in fp32 tf32; do
      time_stacked_pack "this build, $precision, MINRNN_STACKED_GEMM=$products" \
        "$LOGS/bench-pack-stacked-$products-$precision.log" "$precision" \
        env MINRNN_STACKED_GEMM=$products "$MINRNN"
    done
  done
  # The stacked step's weight gradients in line with its backward (MINRNN_SIDE_WORK=0), against
  # the default's side stream (rl/trainer.h; 2026-11-30: +1.5 % at P 32, +0.5 % at 64). ~12 s.
  time_stacked_pack "this build, fp32, MINRNN_SIDE_WORK=0" "$LOGS/bench-pack-stacked-in-line.log" \
    fp32 env MINRNN_SIDE_WORK=0 "$MINRNN"
  # The bias gradients always apart (MINRNN_STACKED_BIAS_GRAD=apart: the column sums), against
  # the default's, where a weight gradient's product may sum them in cuBLASLt's epilogue
  # (tuned_bmm_and_sums, 2026-11-28's twenty-third session: ~0.16 ms of a minGRU round's column
  # sums over rows the product reads anyway). ~12 s.
  time_stacked_pack "this build, fp32, MINRNN_STACKED_BIAS_GRAD=apart" \
    "$LOGS/bench-pack-stacked-bias-grad-apart.log" fp32 env MINRNN_STACKED_BIAS_GRAD=apart "$MINRNN"
  # The tuned products' search as the 06:56 call measured it (MINRNN_STACKED_GEMM_SEARCH=heuristic:
  # cuBLASLt's heuristic's 16 candidates alone), against the default's: their split-K variants
  # and every (algorithm, tile) cuBLASLt accepts (2026-11-28's twenty-fourth session). ~15 s.
  time_stacked_pack "this build, fp32, MINRNN_STACKED_GEMM_SEARCH=heuristic" \
    "$LOGS/bench-pack-stacked-search-heuristic.log" fp32 env MINRNN_STACKED_GEMM_SEARCH=heuristic \
    "$MINRNN"
fi
if ! skipped train && ! skipped kernel-choices; then
  # The minGRU step with each tiled scan kernel named (MINRNN_SCAN_KERNEL): at its T of 59 the
  # automatic choice is the simple kernel (a thread a channel: 64 blocks of 128 at B·D 8 192), set
  # from eager timings that launch overhead dominated at T 64; in the graph SimpleForward took
  # 11.9 µs a launch and SimpleBackward 16.5 (2026-11-27 20:33), for ~6 MB each. ~10 s.
  for k in tiled8 tiled32; do
    MINRNN_SCAN_KERNEL=$k bench "train-scan-$k" bench train --devices cuda --backbones mingru \
      --seconds 1 --profile --top-ops 40
    grep -E '^\| mingru \| cuda|^\| \*\*all|Tiled|Simple' "$LOGS/bench-train-scan-$k.log" |
      cut -c1-160 | sed 's/^/    /'
  done
  # cuBLAS's own API logs over a few steps of each (5 warm-up with the capture, 5 replays, 5
  # eager): every product with its transposes, sizes and leading dimensions (cuBLASLt's also the
  # kernel it chose) — which of the profile's GEMMs run on unaligned operands (a leading dimension
  # not a multiple of 4 leaves cuBLAS only its align1 kernels). Not filed: logging slows the eager
  # steps. ~5 s.
  CUBLAS_LOGINFO_DBG=1 CUBLAS_LOGDEST_DBG="$LOGS/cublas.log" CUBLASLT_LOG_LEVEL=2 \
    CUBLASLT_LOG_FILE="$LOGS/cublaslt.log" "$MINRNN" bench train --devices cuda \
    --backbones mingru,transformer --seconds 0.01 > "$LOGS/bench-train-cublas-logged.log" 2>&1
  for log in "$LOGS/cublas.log" "$LOGS/cublaslt.log"; do
    [ -s "$log" ] || continue
    note "cuBLAS log: $(wc -l < "$log") lines in $log ($(grep -c -e 'ld=' -e 'lda' "$log") naming a leading dimension)"
    truncate -s '<4M' "$log"
  done
fi
# LibTorch's other GEMM path, cuBLASLt (TORCH_BLAS_PREFER_CUBLASLT=1): about half a step is GEMMs,
# and 11 of a minGRU step's 121 launches were cuBLAS's split-K reductions. Whether cuBLASLt's
# choices do better, one process each way, and a pack of 32 minGRU runs with it.
if ! skipped train && ! skipped cublaslt; then
  time_step "cuBLASLt" "$LOGS/bench-train-cublaslt.log" env TORCH_BLAS_PREFER_CUBLASLT=1 "$MINRNN"
  time_step "cuBLAS (the default), beside it" "$LOGS/bench-train-cublas.log" "$MINRNN"
fi
if ! skipped pack && ! skipped cublaslt; then
  log="$LOGS/bench-pack-cublaslt.log"
  if env TORCH_BLAS_PREFER_CUBLASLT=1 "$MINRNN" bench pack --device cuda --backbones mingru \
       --packs 32 --seconds 2 "${peak[@]}" --no-append > "$log" 2>&1; then
    note "pack of 32 minGRU runs with cuBLASLt: $(grep -E '^\| mingru ' "$log" | tr -s ' ')"
  else
    note "pack with cuBLASLt FAILED (log: $log)"
  fi
fi
