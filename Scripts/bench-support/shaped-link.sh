#!/usr/bin/env bash
# The shaped-link benchmark (issue 13, point 5): senders side by side, one after the other, on
# the same real link: a veth pair into a network namespace made here, shaped with tc tbf on the
# sending side, an srt-live-transmit listener inside the namespace (latency 200 ms).
#
#   Scripts/bench-support/shaped-link.sh INGEST_BINARY WORK_DIR DOCS_DIR
#
# Links: 100 %, 70 %, 50 % and 25 % of the nominal rate, a step (nominal, 30 % from 20 s to 40 s,
# nominal again) and a 10 s outage (from 20 s). Senders, each on each link:
#   live    ingest live testsrc --to srt://... (the rate controller driving ingest-encode)
#   replay  ingest replay of a fixed-rate dump made once by ingest-encode (drop-only)
#   ffmpeg  ffmpeg -re -i fixed.mp4 -c copy -f mpegts srt://... (the same encoded stream)
#
# Writes DOCS_DIR/shaped-link.md and DOCS_DIR/shaped-*.svg; the runs stay in WORK_DIR/shaped.
# Needs root (namespaces, tc); without it, says so and exits 0 having done nothing.
#
# Settings (environment):
#   SHAPED_SECONDS   content per run on the fixed links and the outage (default 60)
#   SHAPED_STEP_SECONDS  content of the step run (default 90)
#   SHAPED_SENDERS   which senders (default "live replay ffmpeg"; live is skipped, with a note,
#                    while `ingest live` does not exist)
#   SHAPED_LINKS     which links (default "p100 p70 p50 p25 step outage")
#   SHAPED_BITRATE   nominal video bit rate (default 2000000), SHAPED_SIZE (default 1280x720)
#   SHAPED_PORT      SRT port inside the namespace (default 9020)
#   SHAPED_SUBNET    first three octets of the link's /30 (default 198.19.77)
set -euo pipefail
if [[ $(id -u) -ne 0 ]]; then
  echo "shaped-link: skipped: needs root for the network namespace and tc (run as root," \
    "or set BENCH_SHAPED=0 to silence this)" >&2
  exit 0
fi
BIN="$(realpath "$1")"
mkdir -p "$2/shaped" "$3"
WORK="$(realpath "$2")/shaped"
DOCS="$(realpath "$3")"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ENCODER="$(dirname "$BIN")/ingest-encode"
SECONDS_FIXED="${SHAPED_SECONDS:-60}"
SECONDS_STEP="${SHAPED_STEP_SECONDS:-90}"
SENDERS="${SHAPED_SENDERS:-live replay ffmpeg}"
LINKS="${SHAPED_LINKS:-p100 p70 p50 p25 step outage}"
BITRATE="${SHAPED_BITRATE:-2000000}"
SIZE="${SHAPED_SIZE:-1280x720}"
PORT="${SHAPED_PORT:-9020}"
SUBNET="${SHAPED_SUBNET:-198.19.77}"

for tool in ip tc srt-live-transmit ffmpeg ffprobe python3 /usr/bin/time; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "shaped-link: skipped: $tool is missing" >&2
    exit 0
  }
done
[[ -x $ENCODER ]] || { echo "shaped-link: $ENCODER is not built" >&2; exit 1; }
if ip -br addr | grep -q " $SUBNET\."; then
  echo "shaped-link: $SUBNET.0/30 is already in use here; set SHAPED_SUBNET" >&2
  exit 1
fi
has_live=0
"$BIN" live --help >/dev/null 2>&1 && has_live=1

mkdir -p "$WORK/runs" "$DOCS"
cd "$WORK"

# The content, made once (ingest-encode runs in real time) and kept for later runs.
make_content() {
  local seconds="$1"
  if [[ ! -s fixed-$seconds.dump ]]; then
    echo "shaped-link: encoding $seconds s of test pattern at $BITRATE b/s into fixed-$seconds.dump" >&2
    "$ENCODER" testsrc --size "$SIZE" --bitrate "$BITRATE" --fps 30 --duration "$seconds" \
      >fixed-$seconds.tmp 2>encode-$seconds.log
    mv fixed-$seconds.tmp fixed-$seconds.dump
  fi
  # The same encoded stream for ffmpeg: the dump written to a file by ingest, remuxed to mp4.
  if [[ ! -s fixed-$seconds.mp4 || fixed-$seconds.mp4 -ot fixed-$seconds.dump ]]; then
    "$BIN" replay fixed-$seconds.dump --to ref-replay-$seconds.ts --speed max --quiet >/dev/null 2>&1
    ffmpeg -nostdin -v error -y -i ref-replay-$seconds.ts -map 0 -c copy fixed-$seconds.mp4
    ffmpeg -nostdin -v error -y -i fixed-$seconds.mp4 -map 0 -c copy -f mpegts ref-ffmpeg-$seconds.ts
  fi
}
make_content "$SECONDS_FIXED"
[[ $SECONDS_STEP == "$SECONDS_FIXED" ]] || make_content "$SECONDS_STEP"

# The nominal link rate: what the fixed stream needs on the wire (the larger of our TS and
# ffmpeg's, payload scaled to whole Ethernet frames of 1316-byte SRT payloads), overridable.
read -r STREAM_BPS NOMINAL_BPS < <(python3 - "$SECONDS_FIXED" <<'EOF'
import os, sys
seconds = float(sys.argv[1])
payload = max(os.path.getsize(f"ref-replay-{int(seconds)}.ts"), os.path.getsize(f"ref-ffmpeg-{int(seconds)}.ts")) * 8 / seconds
print(int(payload), int(payload * 1374 / 1316 / 1000 + 1) * 1000)
EOF
)
NOMINAL_BPS="${SHAPED_NOMINAL_BPS:-$NOMINAL_BPS}"
echo "shaped-link: stream $STREAM_BPS b/s of TS; nominal link $NOMINAL_BPS b/s on the wire" >&2

# The link: a veth pair into a namespace of our own, removed by name on exit.
NS="ingest-shaped-$$"
DEV="vsh$$"
PEER_DEV="vshp$$"
cleanup() {
  ip link del "$DEV" 2>/dev/null || true
  ip netns del "$NS" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
ip netns add "$NS"
ip link add "$DEV" type veth peer name "$PEER_DEV"
ip link set "$PEER_DEV" netns "$NS"
ip addr add "$SUBNET.1/30" dev "$DEV"
ip link set "$DEV" up
ip netns exec "$NS" ip addr add "$SUBNET.2/30" dev "$PEER_DEV"
ip netns exec "$NS" ip link set "$PEER_DEV" up
ip netns exec "$NS" ip link set lo up
tc qdisc add dev "$DEV" root tbf rate "${NOMINAL_BPS}bit" burst 16kbit latency 400ms
PEER="$SUBNET.2"
URL="srt://$PEER:$PORT"

link_schedule() { # NAME -> "seconds schedule label"
  case "$1" in
  p100) echo "$SECONDS_FIXED 0:1.0 100%" ;;
  p70) echo "$SECONDS_FIXED 0:0.7 70%" ;;
  p50) echo "$SECONDS_FIXED 0:0.5 50%" ;;
  p25) echo "$SECONDS_FIXED 0:0.25 25%" ;;
  step) echo "$SECONDS_STEP 0:1.0,20:0.3,40:1.0 step_100%→30%_(20–40_s)→100%" ;;
  outage) echo "$SECONDS_FIXED 0:1.0,20:0.0005,30:1.0 outage_10_s_(20–30_s)" ;;
  *) echo "shaped-link: unknown link $1" >&2; exit 2 ;;
  esac
}

sender_command() { # KIND SECONDS STATUS_FILE -> the command, one word a line
  local seconds="$2"
  case "$1" in
  live)
    printf '%s\n' "$BIN" live testsrc --to "$URL?latency=200" --duration "$seconds" \
      --bitrate "$BITRATE" --size "$SIZE" --fps 30 --status - --json --quiet ;;
  replay)
    printf '%s\n' "$BIN" replay "$WORK/fixed-$seconds.dump" --to "$URL?latency=200" \
      --status - --json --quiet ;;
  ffmpeg)
    printf '%s\n' ffmpeg -nostdin -v error -re -i "$WORK/fixed-$seconds.mp4" -map 0 -c copy \
      -progress pipe:1 -stats_period 0.1 -f mpegts "$URL?latency=200000&pkt_size=1316" ;;
  esac
}

config_links=""
ran_senders=""
for sender in $SENDERS; do
  if [[ $sender == live && $has_live -eq 0 ]]; then
    echo "shaped-link: (a) skipped: this ingest has no 'live' command yet" >&2
    continue
  fi
  ran_senders+="\"$sender\","
done
for link in $LINKS; do
  read -r seconds schedule label < <(link_schedule "$link")
  config_links+="{\"name\":\"$link\",\"label\":\"${label//_/ }\",\"duration\":$seconds,\"schedule\":[$(
    echo "$schedule" | sed 's/\([0-9.]*\):\([0-9.]*\)/[\1,\2]/g')]},"
  for sender in $SENDERS; do
    [[ $ran_senders == *"\"$sender\""* ]] || continue
    out="$WORK/runs/$link-$sender"
    rm -rf "$out"
    mapfile -t command < <(sender_command "$sender" "$seconds")
    echo "shaped-link: $link ($label) / $sender, $seconds s" >&2
    python3 "$HERE/shaped_link.py" run --ns "$NS" --dev "$DEV" --peer "$PEER" --port "$PORT" \
      --nominal-bps "$NOMINAL_BPS" --link "$link" --schedule "$schedule" --duration "$seconds" \
      --out "$out" --sender "$sender" -- "${command[@]}"
  done
done

# The first video PTS of each sender's stream written to a file: the source frame index of a
# received frame is its PTS against this one.
pts0() { python3 -c "import sys; sys.path.insert(0, '$HERE'); import shaped_link as s; print(s.$1('$2'))"; }
machine="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores, Linux $(uname -r); $(ffmpeg -version | head -1 | cut -d' ' -f1-3); libsrt $(srt-live-transmit -version 2>&1 | grep -m1 -o 'version: [0-9.]*' | cut -d' ' -f2)"
cat >config.json <<EOF
{"date":"$(date -u '+%Y-%m-%d %H:%M UTC')","machine":"$machine","peer":"$PEER","port":$PORT,
 "seconds_fixed":$SECONDS_FIXED,"seconds_step":$SECONDS_STEP,
 "links":[${config_links%,}],"senders":[${ran_senders%,}],"nominal_bps":$NOMINAL_BPS,
 "stream_bps":$STREAM_BPS,"bitrate":$BITRATE,"size":"$SIZE",
 "step":{"down":20,"up":40,"low":0.3},
 "pts0":{$(for s in $(printf '%s\n' "$SECONDS_FIXED" "$SECONDS_STEP" | sort -u); do
    # ingest live puts its first video frame where replay does (the same timeline rule).
    printf '"replay-%s":%s,"live-%s":%s,"ffmpeg-%s":%s,' "$s" "$(pts0 first_video_pts "ref-replay-$s.ts")" \
      "$s" "$(pts0 first_video_pts "ref-replay-$s.ts")" "$s" "$(pts0 first_video_pts "ref-ffmpeg-$s.ts")"
  done | sed 's/,$//')},
 "media0":{$(for s in $(printf '%s\n' "$SECONDS_FIXED" "$SECONDS_STEP" | sort -u); do
    printf '"replay-%s":%s,"ffmpeg-%s":%s,' "$s" "$(pts0 first_pts_any "ref-replay-$s.ts")" \
      "$s" "$(pts0 first_pts_any "ref-ffmpeg-$s.ts")"
  done | sed 's/,$//')}}
EOF
python3 "$HERE/shaped_link.py" report --work "$WORK" --docs "$DOCS" --config config.json >/dev/null
echo "shaped-link: wrote $WORK/shaped-table.md and $DOCS/shaped-*.svg" >&2
