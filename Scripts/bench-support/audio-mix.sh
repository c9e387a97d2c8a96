#!/usr/bin/env bash
# What `--audio mix` costs: the same dump (20 s of 1280x720 H.264, app audio a 440 Hz tone, mic
# audio 660 Hz, from ingest-encode) published to a private nginx-rtmp and written to a .ts file
# at real time, each with the app track alone and with the mix, and replayed as fast as possible
# into null, with the app track alone and mixed. Prints a Markdown table: peak footprint (dirty
# pages and swap, what an iOS extension is charged, sampled from /proc/PID/smaps_rollup every
# 20 ms; too coarse for the null runs, which end in milliseconds), VmHWM, the peak ledger and the
# wall time, medians of RUNS runs; then the time per mixed frame (the null runs' wall time
# difference over the mixed frames).
#
#   Scripts/bench-support/audio-mix.sh INGEST INGEST_ENCODE WORK_DIR [RUNS]
#
# Needs nginx with libnginx-mod-rtmp; the dump is made once into WORK_DIR (20 s, real time).
set -euo pipefail
INGEST=$1 ENCODER=$2 WORK=$3 RUNS=${4:-3}
mkdir -p "$WORK"
DUMP="$WORK/tones.dump"
if [[ ! -s $DUMP ]]; then
  "$ENCODER" 'lavfi:testsrc2=size=1280x720:rate=30[out0];sine=frequency=440:sample_rate=48000[out1];sine=frequency=660:sample_rate=48000[out2]' \
    --duration 20 >"$DUMP" 2>"$WORK/encoder.log"
fi

source "$(dirname "${BASH_SOURCE[0]}")/private-rtmp.sh"
start_private_rtmp "$WORK/nginx"
port=$rtmp_port
trap 'kill $rtmp_pid 2>/dev/null || true' EXIT

# Runs ingest with the arguments given, sampling its footprint; prints "footprint_kB json".
measure() {
  "$INGEST" replay "$DUMP" "$@" --json --quiet >"$WORK/summary.json" 2>"$WORK/stderr" &
  local pid=$! peak=0 now
  while kill -0 "$pid" 2>/dev/null; do
    now=$(awk '/^(Private_Dirty|Shared_Dirty|Swap):/ { sum += $2 } END { print sum + 0 }' \
      "/proc/$pid/smaps_rollup" 2>/dev/null || echo 0)
    ((now > peak)) && peak=$now
    sleep 0.02
  done
  wait "$pid"
  echo "$peak $(tail -1 "$WORK/summary.json")"
}

field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$2" "$1"; }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

echo "| run | audio | peak footprint (MB) | VmHWM (MB) | peak ledger (MB) | wall (s) |"
echo "|---|---|---|---|---|---|"
declare -A elapsed
for target in rtmp ts null; do
  for audio in app mix; do
    footprints=() hwms=() ledgers=() walls=()
    for _ in $(seq "$RUNS"); do
      if [[ $target == rtmp ]]; then
        out=$(measure --to "rtmp://127.0.0.1:$port/live/bench" --audio "$audio")
      elif [[ $target == ts ]]; then
        out=$(measure --to "$WORK/out.ts" -y --audio "$audio")
      else
        out=$(measure --to null: --speed max --audio "$audio")
      fi
      json=${out#* }
      footprints+=("${out%% *}")
      hwms+=("$(field peak_resident "$json")")
      ledgers+=("$(field peak_ledger "$json")")
      walls+=("$(field elapsed_s "$json")")
    done
    fp=$(printf '%s\n' "${footprints[@]}" | median)
    hwm=$(printf '%s\n' "${hwms[@]}" | median)
    ledger=$(printf '%s\n' "${ledgers[@]}" | median)
    wall=$(printf '%s\n' "${walls[@]}" | median)
    elapsed[$target-$audio]=$wall
    printf '| %s | %s | %.1f | %.1f | %.1f | %s |\n' "$target" "$audio" \
      "$(echo "$fp * 1024 / 1000000" | bc -l)" "$(echo "$hwm / 1000000" | bc -l)" \
      "$(echo "$ledger / 1000000" | bc -l)" "$wall"
  done
done
frames=$(field sent "$(tail -1 "$WORK/summary.json")" | python3 -c 'import ast,sys; print(ast.literal_eval(sys.stdin.read())["audioApp"])')
echo
printf 'Mixing costs %.0f us of CPU per mixed AAC frame (%s frames; null runs, wall time difference).\n' \
  "$(echo "(${elapsed[null-mix]} - ${elapsed[null-app]}) * 1000000 / $frames" | bc -l)" "$frames"
