# shellcheck shell=bash disable=SC2054  # commas separate the values of minrnn's list options
# Sourced by scripts/gpu-check.sh after its comparisons: the packs of issue 41 (streams, stacked,
# in fp32 and TF32, their profile and copies, what bounds them, Table 3's other shapes) and Table 3
# projected from their rates. It uses the check's note, bench, skipped, status, MINRNN, LOGS,
# QUICK and peak.
# Packs (issue 41): P runs side by side in one process, each on its own stream, run-steps/s and the
# share of the fp32 peak (67 TFLOP/s: H100 and H200 SXM). P 32 in the quick set: whether packs
# beyond the sweeps' automatic 16 (sweep::kAutoGpuPack) would pay.
pack=(--device cuda --packs 1,2,4,8,16 --seconds 2)
[ "${QUICK:-0}" = 1 ] && pack=(--device cuda --backbones mingru,transformer --packs 1,4,16,32 --seconds 2)
pack+=("${peak[@]}")
if ! skipped pack; then
  bench pack bench pack "${pack[@]}" --csv "$LOGS/rates-pack.csv"
  grep -E '^\| (mingru|minlstm|transformer) ' "$LOGS/bench-pack.log" | sed 's/^/    /'
  # The same packs with the matmuls on tensor cores (a config's matmul_precision: tf32), whose
  # speed-up the issue weighs against whether the scores move.
  bench pack-tf32 bench pack "${pack[@]}" --matmul-precision tf32 --csv "$LOGS/rates-pack-tf32.csv"
  grep -E '^\| (mingru|minlstm|transformer) ' "$LOGS/bench-pack-tf32.log" | sed 's/^/    /'
  # The pack as one stacked model (rl/stacked_pack.h; MINRNN_STACKED_PACK=1 in a sweep), beside
  # the packs of streams above and pack-limits' one-model probe below: fp32 and TF32. P 30, 15,
  # 10 and 5 are the stacked packs a sweep makes of Table 3 (group_packs: one stack shape a pack,
  # up to 32, split evenly), 32 the sweeps' own limit (sweep::kAutoStackedPack); 64 says whether
  # a larger limit would pay (2026-11-30: +5 %, but 16.5 GiB in a sweep of 64 runs). ~20 s more.
  stacked=(--device cuda --backbones mingru,transformer --seconds 2 --stacked)
  bench pack-stacked bench pack "${stacked[@]}" --packs 5,15,30,32,64 "${peak[@]}" \
    --csv "$LOGS/rates-pack-stacked.csv"
  grep -E '^\| (mingru|transformer) ' "$LOGS/bench-pack-stacked.log" | sed 's/^/    /'
  bench pack-stacked-tf32 bench pack "${stacked[@]}" --packs 5,15,30,32,64 "${peak[@]}" \
    --matmul-precision tf32 --csv "$LOGS/rates-pack-stacked-tf32.csv"
  # Where a stacked pack's GPU time goes: its kernels over 5 rounds at P 32, both backbones, and
  # each product shape's tuned choice (2026-11-28 06:58: the minGRU round's products 63 %, its
  # joins, column sums and GELU most of the rest). ~10 s.
  bench pack-stacked-profile bench pack --device cuda --backbones mingru,transformer --packs 32 \
    --seconds 1 --stacked --profile "${peak[@]}"
  grep -E '^\| \*\*all|no kernel trace|^- [0-9]+ (×|calls)' "$LOGS/bench-pack-stacked-profile.log" |
    sed 's/^/    /'
  # Which copies a stacked step makes, and why: one eager round's `aten::copy_` calls, by the ops
  # that made them, with their tensors' sizes and strides (a bias expanded shows a 0 stride). The
  # products' bias copies (0.33 ms a minGRU round) went with the tuned products' epilogue
  # (2026-11-28 06:58): what is left is the batch's staging and the head's two small ones. ~5 s.
  bench pack-stacked-copies bench pack --device cuda --backbones mingru,transformer --packs 32 \
    --seconds 1 --stacked --eager --profile "${peak[@]}"
  grep -E '^\| aten::copy_' "$LOGS/bench-pack-stacked-copies.log" | cut -c1-220 | sed 's/^/    /'
  grep -E '^\| (mingru|transformer) ' "$LOGS/bench-pack-stacked-tf32.log" | sed 's/^/    /'
  # What bounds the packs: a step's launches alone, its matmuls alone a stream a run, and batched
  # over the runs, and the whole step as one model over the runs' rows (the weights-stacked
  # design's ceiling), beside the packs above (tools/bench/pack_limits.cpp).
  # SKIP=pack-limits: ~80 s; they bound the design, not a change to a kernel.
  limits='^\| (launches|matmuls|one model)'
  if ! skipped pack-limits; then
    bench pack-limits bench pack-limits --backbone mingru --packs 1,16,32 --seconds 1 "${peak[@]}"
    grep -E "$limits" "$LOGS/bench-pack-limits.log" | sed 's/^/    /'
    bench pack-limits-tf32 bench pack-limits --backbone mingru --packs 1,16,32 --seconds 1 \
      --matmul-precision tf32 "${peak[@]}"
    grep -E "$limits" "$LOGS/bench-pack-limits-tf32.log" | sed 's/^/    /'
    bench pack-limits-transformer bench pack-limits --backbone transformer --packs 16 \
      --seconds 1 "${peak[@]}"
    grep -E "$limits" "$LOGS/bench-pack-limits-transformer.log" | sed 's/^/    /'
  fi
  # Answered questions, measured again only in the full check (QUICK=1 spends its seconds on
  # the estimate's rates): minrnn raises CUDA's hardware queues to 32 (tools/runtime_env.cpp), so
  # the big packs again through CUDA's default 8 (2026-11-27: 1 898 against 1 978 run-steps/s at
  # P 16); and two processes of 8 runs at once beside the one process of 16 (1 734 against
  # 1 898): CUDA takes turns between processes, which is why a sweep fills a pack with several
  # configs' runs (docs/sweeps.md).
  if [ "${QUICK:-0}" != 1 ]; then
    CUDA_DEVICE_MAX_CONNECTIONS=8 bench pack-8-queues bench pack --device cuda --backbones mingru \
      --packs 8,16 --seconds 2 "${peak[@]}"
    grep -E '^\| mingru ' "$LOGS/bench-pack-8-queues.log" | sed 's/^/    /'
    for k in 1 2; do
      "$MINRNN" bench pack --device cuda --backbones mingru --packs 8 --seconds 3 "${peak[@]}" \
        --no-append > "$LOGS/bench-pack-process$k.log" 2>&1 &
    done
    wait
    note "two processes of 8 mingru runs at once (add their run-steps/s; one process of 16 above):"
    grep -hE '^\| mingru ' "$LOGS"/bench-pack-process*.log | sed 's/^/    /'
  fi
  # Table 3's other shapes (configs/sweeps/paper-table3.yaml), so its projection in
  # docs/benchmarks.md ("Table 3 on one GPU") rests on measured rates: minLSTM at embed 128, and
  # minGRU and minLSTM at embed 256 (hopper-medium and -medium-replay, App. C: 10 runs), in fp32
  # and on tensor cores.
  table3_packs() {  # the logs' suffix, minLSTM's packs at embed 128, then bench pack's options
    local suffix=$1 packs=$2
    shift 2
    bench "pack-table3$suffix" bench pack --device cuda --backbones minlstm --packs "$packs" --seconds 2 \
      "${peak[@]}" "$@" --csv "$LOGS/rates-pack-table3$suffix.csv"
    bench "pack-table3-256$suffix" bench pack --device cuda --backbones mingru,minlstm --embed 256 \
      --packs 10 --seconds 2 "${peak[@]}" "$@" --csv "$LOGS/rates-pack-table3-256$suffix.csv"
    grep -hE '^\| (mingru|minlstm) ' "$LOGS/bench-pack-table3$suffix.log" \
      "$LOGS/bench-pack-table3-256$suffix.log" | sed 's/^/    /'
  }
  table3_packs "" 16
  table3_packs -tf32 16 --matmul-precision tf32
  # The same shapes as stacked packs (a sweep's packs on CUDA since 2026-11-28), at the sizes a
  # sweep stacks them (hopper-medium-expert's 5 at embed 128, halfcheetah's and walker2d's 30),
  # fp32 and TF32.
  table3_packs -stacked 5,30 --stacked
  table3_packs -stacked-tf32 5,30 --matmul-precision tf32 --stacked
  # The evaluations' rate on this host's CPU (where a sweep's rollouts run), at both widths.
  for e in 128 256; do
    "$MINRNN" bench eval --episodes 10 --steps 100 --embed $e --no-append \
      --csv "$LOGS/rates-eval-$e.csv" > "$LOGS/bench-eval-$e.log" 2>&1 ||
      note "bench eval --embed $e FAILED (log: $LOGS/bench-eval-$e.log)"
  done
  # Table 3 (issue 41: ≤ 3 h in fp32, ≤ 1 h on tensor cores) projected from those rates by
  # `minrnn sweep --estimate` (sweep/estimate.h), each precision from its own packs.
  evals="$LOGS/rates-eval-128.csv,$LOGS/rates-eval-256.csv"
  estimate() {  # name, then the sweep's arguments
    local name=$1
    shift
    if "$MINRNN" sweep configs/sweeps/paper-table3.yaml --set device=cuda --estimate "$@" \
      > "$LOGS/estimate-$name.log" 2>&1; then
      note "Table 3 projected ($name): $(grep -E '^Wall time' "$LOGS/estimate-$name.log")"
      grep -E '^\| [0-9]|^Training|^Evaluation' "$LOGS/estimate-$name.log" | sed 's/^/    /'
    else
      status=1
      note "Table 3 projection ($name) FAILED (log: $LOGS/estimate-$name.log)"
    fi
  }
  # A stream a run (MINRNN_STACKED_PACK=0), then as a sweep trains on CUDA by default: its packs
  # stacked (bench pack --stacked's rows), a pack of one as a lone run (the streams' rows).
  export MINRNN_STACKED_PACK=0
  estimate table3-fp32 --rates "$LOGS/rates-pack.csv,$LOGS/rates-pack-table3.csv,$LOGS/rates-pack-table3-256.csv,$evals"
  estimate table3-tf32 --set matmul_precision=tf32 --rates "$LOGS/rates-pack-tf32.csv,$LOGS/rates-pack-table3-tf32.csv,$LOGS/rates-pack-table3-256-tf32.csv,$evals"
  export MINRNN_STACKED_PACK=1
  estimate table3-stacked-fp32 --rates "$LOGS/rates-pack-stacked.csv,$LOGS/rates-pack-table3-stacked.csv,$LOGS/rates-pack-table3-256-stacked.csv,$LOGS/rates-pack.csv,$LOGS/rates-pack-table3.csv,$LOGS/rates-pack-table3-256.csv,$evals"
  estimate table3-stacked-tf32 --set matmul_precision=tf32 --rates "$LOGS/rates-pack-stacked-tf32.csv,$LOGS/rates-pack-table3-stacked-tf32.csv,$LOGS/rates-pack-table3-256-stacked-tf32.csv,$LOGS/rates-pack-tf32.csv,$LOGS/rates-pack-table3-tf32.csv,$LOGS/rates-pack-table3-256-tf32.csv,$evals"
  unset MINRNN_STACKED_PACK
fi
