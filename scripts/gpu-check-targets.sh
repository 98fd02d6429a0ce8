# Sourced by scripts/gpu-check.sh at its end: issue 41's targets against this call's numbers, one
# summary line each — so that the reader of a check sees at once what it met and what it did not,
# each from the file that measured it. Reads $LOGS' CSVs and logs (a step that did not run leaves
# its target "not measured"); `peak_tflops` is the GPU's fp32 peak the packs were rated against.
# Uses note() and $LOGS from gpu-check.sh.

# The CSV row (header names as columns) whose `column` is smallest or largest among those awk's
# `where` keeps (fields by name: f["backbone"]): "value|step|pack|tflops" of it, or nothing.
csv_extreme() {  # min|max column where file...
  local way=$1 column=$2 where=$3
  shift 3
  local files=()
  for f in "$@"; do [ -s "$f" ] && files+=("$f"); done
  [ ${#files[@]} -gt 0 ] || return 0
  awk -F, -v way="$way" -v column="$column" "
    FNR == 1 { for (i = 1; i <= NF; i++) col[\$i] = i; next }
    { for (name in col) f[name] = \$col[name] }
    $where {
      v = f[column] + 0
      if (f[column] != \"\" && (!found || (way == \"min\" ? v < best : v > best))) {
        found = 1; best = v; step = f[\"step\"]; pack = f[\"pack\"]; tflops = f[\"tflops\"]
      }
    }
    END { if (found) printf \"%g|%s|%s|%s\n\", best, step, pack, tflops }" "${files[@]}"
}

# Steps/s a peer log's last line reports ("… = 96.19 steps/s …"), summed over the logs given.
peer_steps_per_s() {
  cat "$@" 2> /dev/null | grep -o '= [0-9.]* steps/s' | awk '{s += $2} END {if (s > 0) print s}'
}

# The first "N h" of a `sweep --estimate` log's wall time (the evaluations beside the training).
estimate_hours() {
  grep -E '^Wall time' "$1" 2> /dev/null | grep -oE '[0-9.]+ h' | head -1 | cut -d' ' -f1
}

verdict() {  # measured, then the awk condition on x that meets the target
  awk -v x="$1" "BEGIN { print (x != \"\" && ($2)) ? \"met\" : \"not met\" }"
}

table3_line() {  # what, the hours it must be within, the precision (fp32, tf32)
  local streams stacked least
  streams=$(estimate_hours "$LOGS/estimate-table3-$3.log")
  stacked=$(estimate_hours "$LOGS/estimate-table3-stacked-$3.log")
  least=$(printf '%s\n' "$streams" "$stacked" | grep . | sort -g | head -1)
  note "  $1: packs of streams ${streams:-not projected}${streams:+ h}, stacked ${stacked:-not projected}${stacked:+ h}${least:+ ($(verdict "$least" "x <= $2"))}"
}

issue41_targets() {
  local peak_tflops=$1
  local train=("$LOGS/rates-train.csv" "$LOGS/rates-train-side-work.csv")
  local one_peer="" best_peer=""  # (set -u: a bare `local` leaves them unset)
  one_peer=$(peer_steps_per_s "$LOGS/peer-train.log")
  for log in "$LOGS"/peer-train-x*-1.log; do
    [ -e "$log" ] || continue
    local n=${log#"$LOGS"/peer-train-x}
    n=${n%-1.log}
    local sum
    sum=$(peer_steps_per_s "$LOGS"/peer-train-x"$n"-*.log)
    if [ -n "$sum" ] && awk -v a="$sum" -v b="${best_peer:-0}" 'BEGIN { exit !(a > b) }'; then
      best_peer=$sum
    fi
  done
  note "issue 41's targets, from this call (fp32 unless named; peer: one dt.py ${one_peer:-?} steps/s, best aggregate ${best_peer:-?}):"
  for backbone in mingru transformer; do
    local row ms
    row=$(csv_extreme min ms_per_step "f[\"backbone\"] == \"$backbone\" && f[\"device\"] ~ /cuda/ && f[\"step\"] ~ /^cuda graph/ && f[\"matmul_precision\"] == \"fp32\"" "${train[@]}")
    ms=${row%%|*}
    local step=${row#*|}
    if [ -z "$ms" ]; then
      note "  one $backbone run ≤ 1 ms a step: not measured"
    else
      note "  one $backbone run ≤ 1 ms a step: $ms ms (${step%%|*}; $(verdict "$ms" 'x <= 1'))"
    fi
    if [ "$backbone" = mingru ] && [ -n "$ms" ] && [ -n "$one_peer" ]; then
      local ratio
      ratio=$(awk -v ms="$ms" -v p="$one_peer" 'BEGIN { printf "%.1f", 1000 / ms / p }')
      note "  one run ≥ 5× one dt.py: ${ratio}× ($(verdict "$ratio" 'x >= 5'))"
    fi
  done
  local packs=("$LOGS/rates-pack.csv" "$LOGS/rates-pack-stacked.csv")
  local best rate share
  best=$(csv_extreme max run_steps_per_s 'f["backbone"] == "mingru" && f["embed"] + 0 == 128 && f["matmul_precision"] == "fp32"' "${packs[@]}")
  rate=${best%%|*}
  if [ -n "$rate" ]; then
    share=$(awk -v t="${best##*|}" -v p="$peak_tflops" 'BEGIN { if (p > 0 && t != "") printf "%.1f", 100 * t / p }')
    local where=${best#*|}
    where=${where%|*}
    note "  a minGRU pack ≥ 50 % of the fp32 peak (embed 128): ${share:-?} % at ${rate} run-steps/s (${where/|/, P }; $(verdict "$share" 'x >= 50'))"
    if [ -n "$best_peer" ]; then
      local times
      times=$(awk -v r="$rate" -v p="$best_peer" 'BEGIN { printf "%.1f", r / p }')
      note "  a pack ≥ 5× the peer's best aggregate: ${times}× ($(verdict "$times" 'x >= 5'))"
    else
      note "  a pack ≥ 5× the peer's best aggregate: not measured (the peer did not run)"
    fi
  else
    note "  the packs' targets: not measured (no pack CSV)"
  fi
  table3_line "Table 3 ≤ 3 h in fp32" 3 fp32
  table3_line "Table 3 ≤ 1 h in TF32" 1 tf32
}
