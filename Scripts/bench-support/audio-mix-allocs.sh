#!/usr/bin/env bash
# Heap allocations per mixed AAC frame of `--audio mix`: two tone dumps of different length
# (10 s and 30 s of 320x240 H.264, app audio a 440 Hz tone in stereo, mic audio 660 Hz in mono,
# from ingest-encode) replayed as fast as possible into null under heaptrack; the difference in
# allocations between the two runs over the difference in mixed frames (the summary's
# `mix_frames`), so start-up and the codecs' opening cancel out. Prints the whole process's
# figure and the share made inside each libavcodec call the mix makes.
#
#   Scripts/bench-support/audio-mix-allocs.sh INGEST INGEST_ENCODE WORK_DIR
#
# Needs heaptrack (heaptrack and heaptrack_print); the dumps are made once into WORK_DIR.
set -euo pipefail
INGEST=$1 ENCODER=$2 WORK=$3
mkdir -p "$WORK"
source "$(dirname "${BASH_SOURCE[0]}")/bench-media.sh"
make_tone_dumps "$ENCODER" "$WORK"
for seconds in 10 30; do
  heaptrack -o "$WORK/heaptrack-$seconds" "$INGEST" replay "$WORK/tones-$seconds.dump" \
    --to null: --speed max --audio mix --json --quiet >"$WORK/summary-$seconds.json" 2>/dev/null
  # Allocations as cost: one line per distinct stack, its count last.
  heaptrack_print "$WORK/heaptrack-$seconds.zst" -F "$WORK/stacks-$seconds" \
    --flamegraph-cost-type allocations >/dev/null
done
python3 - "$WORK" <<'PY'
import json, sys

work = sys.argv[1]
calls = ["avcodec_send_packet", "avcodec_receive_frame", "swr_convert", "avcodec_send_frame",
         "avcodec_receive_packet"]

def mixed_frames(seconds):
    for line in open(f"{work}/summary-{seconds}.json"):
        if line.startswith("{") and '"mix_frames"' in line:
            return json.loads(line)["mix_frames"]
    sys.exit(f"no mix_frames in {work}/summary-{seconds}.json")

def counts(seconds):
    result = dict.fromkeys(["whole process"] + calls, 0)
    for line in open(f"{work}/stacks-{seconds}"):
        stack, _, count = line.rstrip().rpartition(" ")
        result["whole process"] += int(count)
        for call in calls:
            if call in stack:
                result[call] += int(count)
    return result

short, long = mixed_frames(10), mixed_frames(30)
before, after = counts(10), counts(30)
print(f"mixed frames: {short} and {long}")
for key in before:
    print(f"{key}: {(after[key] - before[key]) / (long - short):.2f} allocations per mixed frame")
PY
