#!/usr/bin/env bash
# The shaped-link benchmark (issue 13, point 5): senders side by side, one after the other, on
# the same real link: a veth pair into a network namespace made here, shaped with tc tbf on the
# sending side, an srt-live-transmit listener inside the namespace (latency 200 ms unless the link
# says otherwise).
#
#   Scripts/bench-support/shaped-link.sh INGEST_BINARY WORK_DIR DOCS_DIR
#
# Links: 100 %, 70 %, 50 % and 25 % of the nominal rate, a step (nominal, 30 % from 20 s to 40 s,
# nominal again) and a 10 s outage (from 20 s). Impaired paths, run by name (SHAPED_LINKS): this
# kernel has no sch_netem, so udp_relay.py runs inside the namespace between the senders and the
# listener (then on 127.0.0.1:PORT+1 there), with tbf at 2 x nominal on the veth:
#   rtt60, rtt100, rtt300l1   round trip 60, 100, 300 ms (300: plus 1 % loss each way); rtt100
#                             and rtt300l1 at SRT latency 1000 ms, and rtt100auto, rtt300l1auto
#                             with ingest at latency=auto (receiver 120 ms: the sender decides)
#   loss2, loss10             2 %, 10 % random loss each way, round trip 40 ms
#   rtt100l2                  round trip 100 ms and 2 % loss each way, SRT latency 1000 ms
#   burst                     Gilbert-Elliott loss each way (mean 3 %, bursts of 4), 40 ms
#   jitter                    round trip 80 +/- 40 ms (40 +/- 20 ms each way; reorders)
#   blackout                  2 s dark both ways every 15 s, round trip 40 ms
#   handover                  a phone changing networks: round trip 40 ms and tbf at 5 x nominal,
#                             1.5 s dark from 20 s, then round trip 180 ms and tbf at 1.5 x
#                             (the relay's delay changed through its input); latency 200
#   rtt600auto                round trip 600 ms, ingest at latency=auto (receiver 120 ms),
#                             ffmpeg at 2400 ms (what auto picks)
# and, without the relay: osc (capacity 100 % <-> 40 % every 10 s), osc5m (the same for 300 s
# whatever SHAPED_SECONDS says) and rtmp50 (RTMP to nginx with the rtmp module in the
# namespace, recording FLV, at 50 %; senders live and ffmpeg). No row holds RTMP behind a
# round trip: the relay is UDP, and this kernel has no netem to delay TCP.
# Senders, each on each link:
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
#   SHAPED_LINKS     which links (default "p100 p70 p50 p25 step outage"; the impaired paths
#                    above by name)
#   SHAPED_RUNS      runs of each (link, sender), the senders alternating (default 1); the
#                    report's table shows the median run and lists every run
#   SHAPED_SSIM      0 leaves SSIM out of the report (it takes about a minute of a core a run)
#   SHAPED_BITRATE   nominal video bit rate (default 2000000), SHAPED_SIZE (default 1280x720)
#   SHAPED_PORT      SRT port inside the namespace (default 9020; PORT+1 behind the relay;
#                    RTMP on 1935)
#   SHAPED_SUBNET    first three octets of the link's /30 (default 198.19.77)
#   SHAPED_WHIP      WHIP paths, run after the SRT ones (whip_link.py, `ingest live --to
#                    whip+http://...`, the receiver in the namespace with the relay on the
#                    session's path): any of "clean rtt100 loss2 rtt100l2 p50 blackout" (the
#                    relay options of the SRT links of those names; p50: tbf at half WHIP's
#                    nominal, clean: tbf at twice it); default none. Written to
#                    DOCS_DIR/shaped-whip.md and WORK_DIR/shaped/whip-table.md.
#   SHAPED_WHIP_RECEIVERS  aiortc, chromium or both (default aiortc)
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
RUNS="${SHAPED_RUNS:-1}"
BITRATE="${SHAPED_BITRATE:-2000000}"
SIZE="${SHAPED_SIZE:-1280x720}"
PORT="${SHAPED_PORT:-9020}"
SUBNET="${SHAPED_SUBNET:-198.19.77}"
WHIP_PATHS="${SHAPED_WHIP:-}"
WHIP_RECEIVERS="${SHAPED_WHIP_RECEIVERS:-aiortc}"

RTMP_MODULE=/usr/lib/nginx/modules/ngx_rtmp_module.so
RTMP_PORT=1935
tools=(ip tc ss srt-live-transmit ffmpeg ffprobe python3 /usr/bin/time)
[[ " $LINKS " == *" rtmp50 "* ]] && tools+=(nginx)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "shaped-link: skipped: $tool is missing" >&2
    exit 0
  }
done
if [[ " $LINKS " == *" rtmp50 "* && ! -f $RTMP_MODULE ]]; then
  echo "shaped-link: skipped: $RTMP_MODULE is missing (libnginx-mod-rtmp)" >&2
  exit 0
fi
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "shaped-link: SHAPED_RUNS must be 1 or more" >&2; exit 2; }
[[ -x $ENCODER ]] || { echo "shaped-link: $ENCODER is not built" >&2; exit 1; }
if ip -br addr | grep " $SUBNET\." >/dev/null; then
  echo "shaped-link: $SUBNET.0/30 is already in use here; set SHAPED_SUBNET" >&2
  exit 1
fi
has_live=0
"$BIN" live --help >/dev/null 2>&1 && has_live=1

# Capacity 100 % <-> 40 %, switching every 10 s for the whole content (SECONDS, default
# SECONDS_FIXED).
osc_schedule() {
  local schedule="0:1.0" t seconds="${1:-$SECONDS_FIXED}"
  for ((t = 10; t < seconds; t += 10)); do
    if ((t / 10 % 2)); then schedule+=",$t:0.4"; else schedule+=",$t:1.0"; fi
  done
  echo "$schedule"
}
# Blackouts from 15 s every 15 s, as many as end 5 s before the content does (at least one).
BLACKOUTS=$(((SECONDS_FIXED - 20) / 15 + 1))
((BLACKOUTS >= 1)) || BLACKOUTS=1

# NAME -> "seconds schedule latency label": the tbf schedule (time:fraction of nominal), the SRT
# latency as RECEIVER/INGEST/FFMPEG (ms; ingest may say auto), the label with _ for spaces.
# Behind the relay, tbf runs at 2 x nominal: the relay's impairment is what the path measures.
link_schedule() {
  case "$1" in
  p100) echo "$SECONDS_FIXED 0:1.0 200/200/200 100%" ;;
  p70) echo "$SECONDS_FIXED 0:0.7 200/200/200 70%" ;;
  p50) echo "$SECONDS_FIXED 0:0.5 200/200/200 50%" ;;
  p25) echo "$SECONDS_FIXED 0:0.25 200/200/200 25%" ;;
  step) echo "$SECONDS_STEP 0:1.0,20:0.3,40:1.0 200/200/200 step_100%→30%_(20–40_s)→100%" ;;
  outage) echo "$SECONDS_FIXED 0:1.0,20:0.0005,30:1.0 200/200/200 outage_10_s_(20–30_s)" ;;
  osc) echo "$SECONDS_FIXED $(osc_schedule) 200/200/200 capacity_100%_↔_40%_every_10_s" ;;
  osc5m) echo "300 $(osc_schedule 300) 200/200/200 capacity_100%_↔_40%_every_10_s,_5_min" ;;
  rtmp50) echo "$SECONDS_FIXED 0:0.5 200/200/200 RTMP_at_50%" ;;
  rtt60) echo "$SECONDS_FIXED 0:2.0 200/200/200 round_trip_60_ms" ;;
  rtt100) echo "$SECONDS_FIXED 0:2.0 1000/1000/1000 round_trip_100_ms" ;;
  rtt100auto) echo "$SECONDS_FIXED 0:2.0 120/auto/1000 round_trip_100_ms,_latency_auto" ;;
  rtt300l1) echo "$SECONDS_FIXED 0:2.0 1000/1000/1000 round_trip_300_ms,_1%_loss_each_way" ;;
  rtt300l1auto)
    echo "$SECONDS_FIXED 0:2.0 120/auto/1000 round_trip_300_ms,_1%_loss_each_way,_latency_auto" ;;
  loss2) echo "$SECONDS_FIXED 0:2.0 200/200/200 2%_loss_each_way,_round_trip_40_ms" ;;
  loss10) echo "$SECONDS_FIXED 0:2.0 200/200/200 10%_loss_each_way,_round_trip_40_ms" ;;
  rtt100l2)
    echo "$SECONDS_FIXED 0:2.0 1000/1000/1000 round_trip_100_ms,_2%_loss_each_way" ;;
  burst) echo "$SECONDS_FIXED 0:2.0 200/200/200 bursty_loss_3%,_bursts_of_4,_round_trip_40_ms" ;;
  jitter) echo "$SECONDS_FIXED 0:2.0 200/200/200 round_trip_80_±_40_ms_(reordering)" ;;
  blackout) echo "$SECONDS_FIXED 0:2.0 200/200/200 2_s_blackouts_every_15_s,_round_trip_40_ms" ;;
  handover)
    echo "$SECONDS_FIXED 0:5.0,21.5:1.5 200/200/200 handover:_1.5_s_dark_at_20_s,_round_trip_40→180_ms,_capacity_5→1.5x" ;;
  rtt600auto) echo "$SECONDS_FIXED 0:2.0 120/auto/2400 round_trip_600_ms,_latency_auto" ;;
  *) echo "shaped-link: unknown link $1" >&2; exit 2 ;;
  esac
}

# NAME -> the relay's impairment options (nothing: no relay). Delays are one way.
link_relay() {
  case "$1" in
  rtt60) echo "--delay 30" ;;
  rtt100 | rtt100auto) echo "--delay 50" ;;
  rtt300l1 | rtt300l1auto) echo "--delay 150 --loss 0.01" ;;
  loss2) echo "--delay 20 --loss 0.02" ;;
  rtt100l2) echo "--delay 50 --loss 0.02" ;;
  loss10) echo "--delay 20 --loss 0.1" ;;
  # Mean loss p_gb / (p_gb + p_bg) = 3 %, mean burst 1 / p_bg = 4 packets.
  burst) echo "--delay 20 --burst-loss 0.0077:0.25" ;;
  jitter) echo "--delay 40 --jitter 20" ;;
  blackout) echo "--delay 20 --blackout 15:2:15:$BLACKOUTS" ;;
  # One blackout 20 s after the first packet (the period is longer than any run).
  handover) echo "--delay 20 --blackout 1000:1.5:20:1" ;;
  rtt600auto) echo "--delay 300" ;;
  esac
}

# NAME -> the relay's changes during the run, "SECONDS:JSON" a line (its input; udp_relay.py).
link_relay_at() {
  case "$1" in
  # The new path's delay from the end of the blackout.
  handover) echo '21.5:{"both":{"delay_ms":90}}' ;;
  esac
}

link_receiver() { [[ $1 == rtmp50 ]] && echo rtmp || echo srt; }

for link in $LINKS; do link_schedule "$link" >/dev/null; done
# Every content length the links need (the step's, the fixed one, a link's own).
DURATIONS="$(for link in $LINKS; do link_schedule "$link" | cut -d' ' -f1; done | sort -nu)"

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
    "$BIN" replay fixed-$seconds.dump --to ref-replay-$seconds.ts -y --speed max --quiet >/dev/null 2>&1
    ffmpeg -nostdin -v error -y -i ref-replay-$seconds.ts -map 0 -c copy fixed-$seconds.mp4
    ffmpeg -nostdin -v error -y -i fixed-$seconds.mp4 -map 0 -c copy -f mpegts ref-ffmpeg-$seconds.ts
  fi
}
for seconds in $(printf '%s\n' "$SECONDS_FIXED" $DURATIONS | sort -nu); do
  make_content "$seconds"
done
# Over RTMP, the nominal is the same content as FLV (one audio track, FLV's own overhead).
if [[ " $LINKS " == *" rtmp50 "* && ( ! -s ref-ffmpeg-$SECONDS_FIXED.flv ||
  ref-ffmpeg-$SECONDS_FIXED.flv -ot fixed-$SECONDS_FIXED.mp4 ) ]]; then
  ffmpeg -nostdin -v error -y -i fixed-$SECONDS_FIXED.mp4 -map 0:v:0 -map 0:a:0 -c copy \
    -f flv ref-ffmpeg-$SECONDS_FIXED.flv
fi
FLV_STREAM_BPS=null
[[ -s ref-ffmpeg-$SECONDS_FIXED.flv && " $LINKS " == *" rtmp50 "* ]] &&
  FLV_STREAM_BPS=$(($(stat -c %s ref-ffmpeg-$SECONDS_FIXED.flv) * 8 / SECONDS_FIXED))

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
# A default route out of the namespace, as on any host: Chromium gathers its candidates on the
# interface of the default route, and writes none without one.
ip netns exec "$NS" ip route add default via "$SUBNET.1"
tc qdisc add dev "$DEV" root tbf rate "${NOMINAL_BPS}bit" burst 16kbit latency 400ms
PEER="$SUBNET.2"
URL="srt://$PEER:$PORT"
RTMP_URL="rtmp://$PEER:$RTMP_PORT/live/recv"

# KIND SECONDS LATENCY RECEIVER -> the command, one word a line. LATENCY is the sender's SRT
# latency (ms, or auto for ingest); RECEIVER srt or rtmp.
sender_command() {
  local seconds="$2" latency="$3"
  case "$1-$4" in
  live-srt | live-rtmp)
    local to="$URL?latency=$latency"
    [[ $4 == rtmp ]] && to="$RTMP_URL"
    printf '%s\n' "$BIN" live testsrc --to "$to" --duration "$seconds" \
      --bitrate "$BITRATE" --size "$SIZE" --fps 30 --status - --json --quiet ;;
  replay-srt)
    printf '%s\n' "$BIN" replay "$WORK/fixed-$seconds.dump" --to "$URL?latency=$latency" \
      --status - --json --quiet ;;
  ffmpeg-srt)
    printf '%s\n' ffmpeg -nostdin -v error -re -i "$WORK/fixed-$seconds.mp4" -map 0 -c copy \
      -progress pipe:1 -stats_period 0.1 -f mpegts "$URL?latency=${latency}000&pkt_size=1316" ;;
  ffmpeg-rtmp)
    # FLV carries one video and one audio track.
    printf '%s\n' ffmpeg -nostdin -v error -re -i "$WORK/fixed-$seconds.mp4" -map 0:v:0 \
      -map 0:a:0 -c copy -progress pipe:1 -stats_period 0.1 -f flv "$RTMP_URL" ;;
  esac
}

json_value() { [[ $1 =~ ^[0-9.]+$ ]] && echo "$1" || echo "\"$1\""; }

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
  read -r seconds schedule latency label < <(link_schedule "$link")
  IFS=/ read -r receiver_latency ingest_latency ffmpeg_latency <<<"$latency"
  relay="$(link_relay "$link")"
  receiver="$(link_receiver "$link")"
  relay_json=null
  [[ -n $relay ]] && relay_json="\"$relay\""
  mapfile -t relay_at < <(link_relay_at "$link")
  relay_at_args=()
  relay_at_json=""
  for change in "${relay_at[@]}"; do
    relay_at_args+=(--relay-at "$change")
    relay_at_json+="[${change%%:*},$(python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "${change#*:}")],"
  done
  config_links+="{\"name\":\"$link\",\"label\":\"${label//_/ }\",\"duration\":$seconds,"
  config_links+="\"schedule\":[$(echo "$schedule" | sed 's/\([0-9.]*\):\([0-9.]*\)/[\1,\2]/g')],"
  config_links+="\"receiver\":\"$receiver\",\"relay\":$relay_json,\"relay_at\":[${relay_at_json%,}],"
  config_links+="\"latency\":{\"receiver\":$receiver_latency,"
  config_links+="\"ingest\":$(json_value "$ingest_latency"),\"ffmpeg\":$ffmpeg_latency}},"
  # Runs alternate the senders: run 1 of each, then run 2 of each, and so on.
  for ((run = 1; run <= RUNS; run++)); do
    for sender in $SENDERS; do
      [[ $ran_senders == *"\"$sender\""* ]] || continue
      if [[ $receiver == rtmp && $sender == replay ]]; then
        ((run > 1)) || echo "shaped-link: $link: the RTMP path runs live and ffmpeg only" >&2
        continue
      fi
      out="$WORK/runs/$link-$sender"
      ((RUNS == 1)) || out+="-$run"
      rm -rf "$out"
      sender_latency="$ingest_latency"
      [[ $sender == ffmpeg ]] && sender_latency="$ffmpeg_latency"
      mapfile -t command < <(sender_command "$sender" "$seconds" "$sender_latency" "$receiver")
      echo "shaped-link: $link (${label//_/ }) / $sender, run $run of $RUNS, $seconds s" >&2
      # The relay's seed is the run number: the senders of one run meet the same draws.
      python3 "$HERE/shaped_link.py" run --ns "$NS" --dev "$DEV" --peer "$PEER" --port "$PORT" \
        --nominal-bps "$NOMINAL_BPS" --link "$link" --schedule "$schedule" --duration "$seconds" \
        --out "$out" --sender "$sender" --run "$run" --receiver "$receiver" \
        --latency "$receiver_latency" --relay "$relay" --relay-script "$HERE/udp_relay.py" \
        --seed "$run" --rtmp-port "$RTMP_PORT" "${relay_at_args[@]}" -- "${command[@]}"
    done
  done
done

# The first video PTS of each sender's stream written to a file: the source frame index of a
# received frame is its PTS against this one.
pts0() { python3 -c "import sys; sys.path.insert(0, '$HERE'); import shaped_link as s; print(s.$1('$2'))"; }
# Readers that take their whole input (sed -n, awk): with pipefail, a reader that stops early
# (head, grep -m1) can end the writer with SIGPIPE, and the script with status 141.
machine="$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores, Linux $(uname -r); $(ffmpeg -version | sed -n '1s/^\(\([^ ]* \)\{2\}[^ ]*\).*/\1/p'); libsrt $(srt-live-transmit -version 2>&1 | awk '/version: [0-9.]+/ && !done { sub(/.*version: /, ""); sub(/[^0-9.].*/, ""); print; done = 1 }')"
cat >config.json <<EOF
{"date":"$(date -u '+%Y-%m-%d %H:%M UTC')","machine":"$machine","peer":"$PEER","port":$PORT,
 "seconds_fixed":$SECONDS_FIXED,"seconds_step":$SECONDS_STEP,
 "links":[${config_links%,}],"senders":[${ran_senders%,}],"nominal_bps":$NOMINAL_BPS,
 "stream_bps":$STREAM_BPS,"flv_stream_bps":$FLV_STREAM_BPS,"runs":$RUNS,
 "bitrate":$BITRATE,"size":"$SIZE",
 "step":{"down":20,"up":40,"low":0.3},
 "pts0":{$(for s in $(printf '%s\n' "$SECONDS_FIXED" $DURATIONS | sort -nu); do
    # ingest live puts its first video frame where replay does (the same timeline rule).
    printf '"replay-%s":%s,"live-%s":%s,"ffmpeg-%s":%s,' "$s" "$(pts0 first_video_pts "ref-replay-$s.ts")" \
      "$s" "$(pts0 first_video_pts "ref-replay-$s.ts")" "$s" "$(pts0 first_video_pts "ref-ffmpeg-$s.ts")"
  done | sed 's/,$//')},
 "media0":{$(for s in $(printf '%s\n' "$SECONDS_FIXED" $DURATIONS | sort -nu); do
    printf '"replay-%s":%s,"ffmpeg-%s":%s,' "$s" "$(pts0 first_pts_any "ref-replay-$s.ts")" \
      "$s" "$(pts0 first_pts_any "ref-ffmpeg-$s.ts")"
  done | sed 's/,$//')}}
EOF
[[ -z ${LINKS// /} ]] || {
  python3 "$HERE/shaped_link.py" report --work "$WORK" --docs "$DOCS" --config config.json >/dev/null
  echo "shaped-link: wrote $WORK/shaped-table.md and $DOCS/shaped-*.svg" >&2
}

# WHIP on the same paths: its own nominal is the video bit rate and Opus (64 kb/s) in RTP
# packets of 1200 bytes, with SRTP, UDP, IPv4 and Ethernet (some 5.5 %).
if [[ -n $WHIP_PATHS ]]; then
  WHIP_NOMINAL_BPS=$(((BITRATE + 64000) * 1055 / 1000))
  rm -rf "$WORK/whip-runs"
  for path in $WHIP_PATHS; do
    case "$path" in
    clean) tbf=2.0 relay="" label="clean" ;;
    p50) tbf=0.5 relay="" label="50% tbf" ;;
    rtt100 | loss2 | rtt100l2 | blackout)
      tbf=2.0 relay="$(link_relay "$path")"
      read -r _ _ _ label < <(link_schedule "$path")
      label="${label//_/ }" ;;
    *) echo "shaped-link: unknown WHIP path $path" >&2; exit 2 ;;
    esac
    for receiver in $WHIP_RECEIVERS; do
      for ((run = 1; run <= RUNS; run++)); do
        out="$WORK/whip-runs/$path-$receiver"
        ((RUNS == 1)) || out+="-$run"
        echo "shaped-link: WHIP $label / $receiver, run $run of $RUNS, $SECONDS_FIXED s" >&2
        python3 "$HERE/whip_link.py" run --ns "$NS" --dev "$DEV" --peer "$PEER" \
          --nominal-bps "$WHIP_NOMINAL_BPS" --tbf "$tbf" --path "$path" --label "$label" \
          --relay "$relay" --duration "$SECONDS_FIXED" --out "$out" --ingest "$BIN" \
          --receiver "$receiver" --size "$SIZE" --bitrate "$BITRATE" --seed "$run" >/dev/null
      done
    done
  done
  python3 "$HERE/whip_link.py" report --work "$WORK" --docs "$DOCS" >/dev/null
  echo "shaped-link: wrote $WORK/whip-table.md and $DOCS/shaped-whip.md" >&2
fi
