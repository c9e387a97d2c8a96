#!/usr/bin/env bash
# What `--audio mix` leaves on the capture thread: a 10 s and a 30 s tone dump (320x240 H.264,
# app audio a 440 Hz tone in stereo, mic audio 660 Hz in mono, from ingest-encode) replayed to a
# .ts file as fast as possible (`--speed max`) with `--audio app` and `--audio mix`, alternating, RUNS times
# each. For each run: wall time and user+sys of the whole process (/usr/bin/time), and the CPU
# time and heap allocations of the main thread, which runs the replay loop (mainthread.c,
# preloaded). Prints the medians, then per mixed frame the mix's added cost (mix less app) of the
# 30 s runs less that of the 10 s runs, over the difference in `mix_frames`, so that start-up
# and the codecs' opening cancel out.
#
#   Scripts/bench-support/audio-mix-capture.sh INGEST INGEST_ENCODE WORK_DIR [RUNS]
#
# SPEED=10 (any `--speed`) replays paced instead: there the capture thread never waits for the
# mix, where at `max` it waits while four records are queued (AudioMixWorker).
# The dumps are made once into WORK_DIR (40 s, real time).
set -euo pipefail
INGEST=$1 ENCODER=$2 WORK=$3 RUNS=${4:-5} SPEED=${SPEED:-max}
mkdir -p "$WORK"
source "$(dirname "${BASH_SOURCE[0]}")/bench-media.sh"
make_tone_dumps "$ENCODER" "$WORK"
cc -O2 -shared -fPIC -o "$WORK/mainthread.so" "$(dirname "${BASH_SOURCE[0]}")/mainthread.c"

# One line per run: seconds audio wall_s cpu_s main_cpu_ms main_allocs mix_frames
results="$WORK/capture-runs.txt"
: >"$results"
for _ in $(seq "$RUNS"); do
  for seconds in 10 30; do
    for audio in app mix; do
      # The library is preloaded into ingest alone: time(1) would write its own report last.
      /usr/bin/time -f '%e %U %S' -o "$WORK/time.txt" \
        env INGEST_MAIN_THREAD_REPORT="$WORK/main.txt" LD_PRELOAD="$WORK/mainthread.so" \
        "$INGEST" replay "$WORK/tones-$seconds.dump" --to "$WORK/out.ts" -y --speed "$SPEED" \
        --audio "$audio" --json --quiet >"$WORK/summary.json"
      read -r wall user system <"$WORK/time.txt"
      read -r main_ns main_allocs <"$WORK/main.txt"
      frames=$(python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).readlines()[-1]).get("mix_frames", 0))' "$WORK/summary.json")
      echo "$seconds $audio $wall $(echo "$user + $system" | bc) $(echo "scale=1; $main_ns / 1000000" | bc) $main_allocs $frames" >>"$results"
    done
  done
done
python3 - "$results" <<'PY'
import statistics, sys

runs = {}
for line in open(sys.argv[1]):
    seconds, audio, *figures = line.split()
    runs.setdefault((int(seconds), audio), []).append([float(f) for f in figures])

def median(key, column):
    return statistics.median(run[column] for run in runs[key])

names = ["wall (s)", "user+sys (s)", "main thread CPU (ms)", "main thread allocations", "mix_frames"]
print("| dump | audio | " + " | ".join(names) + " |")
print("|---|---|" + "---|" * len(names))
for key in sorted(runs):
    cells = [f"{median(key, c):g}" for c in range(len(names))]
    print(f"| {key[0]} s | {key[1]} | " + " | ".join(cells) + " |")
frames = median((30, "mix"), 4) - median((10, "mix"), 4)
def added(column):
    return (median((30, "mix"), column) - median((30, "app"), column)) - (
        median((10, "mix"), column) - median((10, "app"), column))
print(f"\nper mixed frame ({frames:g} frames): "
      f"whole process {added(1) / frames * 1e6:.0f} us CPU, "
      f"main thread {added(2) / frames * 1e3:.1f} us CPU and {added(3) / frames:.2f} allocations")
PY
