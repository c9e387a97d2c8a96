#!/usr/bin/env bash
# How the cost of a run grows with its length: one hour of 720x1280 H.264 at ~3 Mb/s with two
# AAC tracks (the long-content media, looped six times without re-encoding), captured into a
# dump, then:
#
#   ingest replay HOUR.dump --to a.ts --speed max      beside the 10-minute dump, RUNS
#                                                      alternating runs each: wall and CPU
#                                                      should grow 6x, peak RSS not at all
#   ingest replay HOUR.dump --to srt://… --speed realtime
#                                                      one hour to a local srt-live-transmit
#                                                      listener (to /dev/null)
#
# Every run of the hour is sampled once a second from /proc (resident set, user + system CPU),
# so the table gives RSS first -> max -> last and the CPU of the first and the last ten minutes
# (the base length).
#
#   Scripts/bench-support/growth.sh INGEST_BINARY WORK_DIR [RUNS]
#
# Prints a markdown section on stdout; the per-second samples stay in WORK_DIR/growth/*.csv,
# the realtime run's status lines in WORK_DIR/growth/realtime-HOUR.status.jsonl.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BIN="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
WORK="$2/growth"
RUNS="${3:-3}"
# The base length, looped six times; shorter only to try the script out.
BASE="${GROWTH_BASE_SECONDS:-600}"
WORK="$WORK/$BASE"
source "$ROOT/Scripts/bench-support/bench-media.sh"
mkdir -p "$WORK"
cd "$WORK"
TICKS="$(getconf CLK_TCK)"

if [[ ! -s TEN.mp4 ]]; then
  echo "growth: encoding $BASE s of 720x1280 H.264 + 2 AAC tracks" >&2
  make_long_content "$BASE" TEN.mp4
fi
if [[ ! -s HOUR.mp4 ]]; then
  echo "growth: looping it to one hour" >&2
  ffmpeg -nostdin -v error -y -stream_loop 5 -i TEN.mp4 -map 0 -c copy HOUR.tmp.mp4
  mv HOUR.tmp.mp4 HOUR.mp4
fi
for name in TEN HOUR; do
  if [[ ! -s $name.dump || $name.dump -ot $name.mp4 ]]; then
    echo "growth: capturing $name.mp4" >&2
    "$BIN" capture "$name.mp4" -o "$name.tmp.dump" >/dev/null
    mv "$name.tmp.dump" "$name.dump"
  fi
done

listener_pid=""
run_pid=""
cleanup() {
  [[ -n $run_pid ]] && kill "$run_pid" 2>/dev/null || true
  [[ -n $listener_pid ]] && kill "$listener_pid" 2>/dev/null || true
}
trap cleanup EXIT INT TERM

# sampled CSV COMMAND...: runs COMMAND under /usr/bin/time (CSV.time: "wall cpu peak_rss_kB"),
# writing "seconds,rss_kB,cpu_s" once a second to CSV until it exits; fails when it fails.
sampled() {
  local csv=$1 start now stat rss pid=""
  shift
  rm -f a.ts
  sync
  /usr/bin/time -f "%e %U %S %M" -o "$csv.time.raw" "$@" >/dev/null 2>run.err &
  run_pid=$!
  start=$(date +%s.%N)
  : >"$csv"
  while [[ -z $pid && -r /proc/$run_pid/stat ]]; do
    pid=$(pgrep -P "$run_pid" | head -1) || true
  done
  while [[ -n $pid && -r /proc/$pid/stat ]]; do
    # The interval is what is measured here, not a wait for an event.
    sleep 1
    stat=$(cat "/proc/$pid/stat" 2>/dev/null) || break
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null) || break
    [[ -n $rss ]] || break
    now=$(date +%s.%N)
    # Fields after the command name (which may hold spaces): utime and stime are 14 and 15.
    awk -v t="$(awk -v a="$start" -v b="$now" 'BEGIN { print b - a }')" -v r="$rss" \
      -v hz="$TICKS" '{ sub(/^.*\) /, ""); printf "%.1f,%d,%.2f\n", t, r, ($12 + $13) / hz }' \
      <<<"$stat" >>"$csv"
  done
  if ! wait "$run_pid"; then
    run_pid=""
    echo "growth: $* failed:" >&2
    cat run.err >&2
    exit 1
  fi
  run_pid=""
  awk '{ printf "%.2f %.2f %d\n", $1, $2 + $3, $4 }' "$csv.time.raw" >"$csv.time"
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# Wall, CPU (s) and peak RSS (kB) of a run, from /usr/bin/time.
wall_of() { cut -d' ' -f1 "$1.time"; }
cpu_of() { cut -d' ' -f2 "$1.time"; }
# rss_path CSV: first -> max (the kernel's VmHWM) -> last resident set, MB.
rss_path() {
  awk -F, -v hwm="$(cut -d' ' -f3 "$1.time")" 'NR == 1 { f = $2 } { l = $2 }
    END { printf "%.1f -> %.1f -> %.1f", f / 1024, hwm / 1024, l / 1024 }' "$1"
}
# last_first CSV: the last sampled resident set over the first.
last_first() { awk -F, 'NR == 1 { f = $2 } { l = $2 } END { if (NR) printf "%.2f", l / f; else print "-" }' "$1"; }

for run in $(seq "$RUNS"); do
  for name in TEN HOUR; do
    sampled "max-$name-$run.csv" "$BIN" replay "$name.dump" --to a.ts -y --speed max --quiet
  done
done
rm -f a.ts

free_port() {
  python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
port=$(free_port)
"$ROOT/Scripts/servers" srt-listener "$port" /dev/null 2>listener.log &
listener_pid=$!
for _ in $(seq 100); do
  grep -q listen listener.log 2>/dev/null && break
  sleep 0.05
done
# The status lines say what the ring, the ladder and the link did when the resident set moves.
sampled realtime-HOUR.csv "$BIN" replay HOUR.dump --to "srt://127.0.0.1:$port" --speed realtime \
  --quiet --status realtime-HOUR.status.jsonl
wait "$listener_pid" 2>/dev/null || true
listener_pid=""

echo "### How cost grows with the length of a run"
echo
echo "One hour of 720x1280 H.264 at ~3 Mb/s with two AAC tracks ($(du -m HOUR.dump | cut -f1) MB"
echo "dump; the 10-minute long-content media looped six times, \`-c copy\`). \`--speed max\` to a"
echo "\`.ts\` file: $RUNS alternating runs of the 10-minute and the 1-hour dump, medians. Realtime:"
echo "one run of the hour to a local \`srt-live-transmit\` listener. Every run sampled once a"
echo "second from \`/proc/PID/stat\` and \`status\` (VmRSS)."
echo
echo "| run | wall (s) | CPU (s) | RSS first -> peak -> last (MB) | last / first |"
echo "|---|---|---|---|---|"
for name in TEN HOUR; do
  wall=$(for f in max-"$name"-*.csv; do wall_of "$f"; done | median)
  cpu=$(for f in max-"$name"-*.csv; do cpu_of "$f"; done | median)
  label='10 min'
  [[ $name == HOUR ]] && label='1 hour'
  printf '| `--speed max`, %s | %s | %s | %s | %s |\n' "$label" "$wall" "$cpu" \
    "$(rss_path "max-$name-1.csv")" "$(last_first "max-$name-1.csv")"
done
printf '| realtime to SRT, 1 hour | %s | %s | %s | %s |\n' "$(wall_of realtime-HOUR.csv)" \
  "$(cpu_of realtime-HOUR.csv)" "$(rss_path realtime-HOUR.csv)" "$(last_first realtime-HOUR.csv)"
echo
ten_wall=$(for f in max-TEN-*.csv; do wall_of "$f"; done | median)
hour_wall=$(for f in max-HOUR-*.csv; do wall_of "$f"; done | median)
ten_cpu=$(for f in max-TEN-*.csv; do cpu_of "$f"; done | median)
hour_cpu=$(for f in max-HOUR-*.csv; do cpu_of "$f"; done | median)
awk -v tw="$ten_wall" -v hw="$hour_wall" -v tc="$ten_cpu" -v hc="$hour_cpu" 'BEGIN {
  printf "`--speed max`, 1 hour against 10 minutes: wall %.2fx, CPU %.2fx (6x is linear).\n", hw / tw, hc / tc
}'
# Realtime: CPU spent in the first and in the last BASE seconds (linear: the same).
awk -F, -v w="$BASE" '
  $1 <= w { first = $3 }
  { all[NR] = $0; last_t = $1; last_c = $3 }
  END {
    for (i = NR; i >= 1; i--) { split(all[i], f, ","); if (f[1] <= last_t - w) { before = f[3]; break } }
    printf "Realtime: %.1f s of CPU in the first %d s, %.1f s in the last %d s.\n", first, w, last_c - before, w
  }' realtime-HOUR.csv
