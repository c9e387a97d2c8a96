#!/usr/bin/env bash
# What a live push costs (issue 26): the same content pushed at real time to a local SRT
# listener by `ingest replay --speed realtime` and by `ffmpeg -re -map 0 -c copy -f mpegts`,
# alternating, RUNS times each, then by ingest with more outputs (SRT + HLS; SRT + HLS + .ts +
# RTMP to a private nginx-rtmp, or a second SRT listener for HEVC, which RTMP does not carry
# here). Each run under GNU time (user and sys CPU, voluntary and
# involuntary context switches, peak RSS), and one more run of each under `strace -c -f` for
# the futex and send calls. Prints a Markdown table of medians per second of media. On the
# rows named by LIVE_COST_LIVE_ROWS (default 720p30) `ingest live testsrc` at the row's size,
# rate and bitrate is a sender too: the pipeline process's CPU apart from its encoder's (the
# encoder runs under its own GNU time, through INGEST_ENCODE_BIN) and its own peak RSS (the
# summary's `peak_resident`); its strace run counts the pipeline process's calls alone.
#
#   Scripts/bench-support/live-cost.sh INGEST WORK_DIR [RUNS] [ROW...]
#
# Rows: 720p30 (H.264, 2 Mb/s), 1080p60 (H.264, 20 Mb/s), 2160p60 (HEVC, 50 Mb/s; its encode
# takes many minutes on two cores). Default: 720p30 1080p60. Each is LIVE_COST_SECONDS (30) of
# testsrc2 with noise (so the encoder spends its rate) and two AAC tracks, encoded once with
# ffmpeg into WORK_DIR as .mp4, then `ingest capture` to a dump and `ffmpeg -c copy` to .ts:
# the same access units for both senders. Needs srt-live-transmit, ffmpeg, strace, nginx with
# libnginx-mod-rtmp.
set -euo pipefail
INGEST=$1 WORK=$2 RUNS=${3:-3}
shift $(($# < 3 ? $# : 3))
ROWS=("$@")
((${#ROWS[@]})) || ROWS=(720p30 1080p60)
SECONDS_OF_MEDIA=${LIVE_COST_SECONDS:-30}
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mkdir -p "$WORK"
for tool in ffmpeg srt-live-transmit strace nginx /usr/bin/time; do
  command -v "$tool" >/dev/null || { echo "live-cost: $tool is missing" >&2; exit 2; }
done

LIVE_ROWS=" ${LIVE_COST_LIVE_ROWS-720p30} "
# The encoder `ingest live` starts, timed on its own: its CPU is taken from the run's.
ENCODER="$(dirname "$INGEST")/ingest-encode"
cat >"$WORK/ingest-encode-timed" <<WRAPPER
#!/bin/sh
exec /usr/bin/time -f "%U %S %w %c" -o "$WORK/encoder-time.txt" "$ENCODER" "\$@"
WRAPPER
chmod +x "$WORK/ingest-encode-timed"

# row_format ROW: sets size, rate and bitrate (b/s) of ROW.
row_format() {
  case "$1" in
  720p30) size=1280x720 rate=30 bitrate=2000000 ;;
  1080p60) size=1920x1080 rate=60 bitrate=20000000 ;;
  2160p60) size=3840x2160 rate=60 bitrate=50000000 ;;
  *) echo "live-cost: unknown row $1 (720p30, 1080p60, 2160p60)" >&2; exit 2 ;;
  esac
}

# make_media ROW: WORK/ROW.mp4, .ts and .dump, once.
make_media() {
  local row=$1 size rate bitrate codec=()
  row_format "$row"
  case "$row" in
  720p30) codec=(-c:v libx264 -preset veryfast) ;;
  1080p60) codec=(-c:v libx264 -preset ultrafast) ;;
  2160p60) codec=(-c:v libx265 -preset ultrafast -tag:v hvc1) ;;
  esac
  [[ -s $WORK/$row.dump ]] && return
  echo "live-cost: making $row ($SECONDS_OF_MEDIA s)" >&2
  ffmpeg -nostdin -v error -y -f lavfi -i "testsrc2=size=$size:rate=$rate,noise=alls=12:allf=t" \
    -f lavfi -i "sine=frequency=440:sample_rate=48000" \
    -f lavfi -i "sine=frequency=660:sample_rate=48000" -t "$SECONDS_OF_MEDIA" \
    -map 0 -map 1 -map 2 "${codec[@]}" -b:v "$bitrate" -maxrate "$bitrate" \
    -bufsize "$bitrate" -g $((2 * rate)) -bf 0 -c:a aac -b:a 128k "$WORK/$row.mp4"
  ffmpeg -nostdin -v error -y -i "$WORK/$row.mp4" -map 0 -c copy -f mpegts "$WORK/$row.ts"
  "$INGEST" capture "$WORK/$row.mp4" -o "$WORK/$row.dump" >/dev/null
}

free_port() {
  python3 -c 'import socket,sys; s=socket.socket(socket.AF_INET, getattr(socket, sys.argv[1])); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' "$1"
}

# A private nginx-rtmp for the four-output runs.
source "$ROOT/Scripts/bench-support/private-rtmp.sh"
listener_pid="" second_listener_pid=""
failures=()
start_private_rtmp "$WORK/nginx"
cleanup() {
  kill "$rtmp_pid" 2>/dev/null || true
  [[ -n $listener_pid ]] && kill "$listener_pid" 2>/dev/null || true
  [[ -n $second_listener_pid ]] && kill "$second_listener_pid" 2>/dev/null || true
}
trap cleanup EXIT INT TERM

# start_listener PORT LOG: an SRT listener on PORT, as the test servers start one (-a:no: it
# exits when its caller leaves; -v prints " listen..." once bound), here so that no shared
# server is touched. Returns once it listens; its pid is in $started_pid.
start_listener() {
  srt-live-transmit -a:no -v "srt://127.0.0.1:$1?mode=listener" file://con \
    >/dev/null </dev/null 2>"$2" &
  started_pid=$!
  for _ in $(seq 100); do
    grep -q listen "$2" 2>/dev/null && break
    sleep 0.05
  done
}

# run SENDER ROW TRACE: one push to a fresh SRT listener (it exits when the sender leaves).
# Writes WORK/time.txt ("user sys maxrss_kB voluntary involuntary wall") or, with TRACE=1,
# WORK/strace.txt.
run() {
  local sender=$1 row=$2 trace=$3 port command=()
  port=$(free_port SOCK_DGRAM)
  start_listener "$port" "$WORK/listener.log"
  listener_pid=$started_pid
  local srt="srt://127.0.0.1:$port"
  rm -rf "$WORK/out-hls" "$WORK/out.ts"
  case "$sender" in
  ffmpeg)
    command=(ffmpeg -nostdin -v error -re -i "$WORK/$row.ts" -map 0 -c copy -f mpegts
      "$srt?pkt_size=1316")
    ;;
  srt) command=("$INGEST" replay "$WORK/$row.dump" --to "$srt" --speed realtime --quiet) ;;
  srt+hls)
    command=("$INGEST" replay "$WORK/$row.dump" --to "$srt" --to "hls:$WORK/out-hls"
      --speed realtime --quiet)
    ;;
  four)
    # RTMP carries no HEVC with this libavformat (no Enhanced RTMP): an HEVC row's fourth
    # output is a second SRT listener.
    local fourth="rtmp://127.0.0.1:$rtmp_port/live/bench"
    if [[ $row == 2160p60 ]]; then
      port=$(free_port SOCK_DGRAM)
      start_listener "$port" "$WORK/listener2.log"
      second_listener_pid=$started_pid
      fourth="srt://127.0.0.1:$port"
    fi
    command=("$INGEST" replay "$WORK/$row.dump" --to "$srt" --to "hls:$WORK/out-hls"
      --to "$WORK/out.ts" --to "$fourth" -y --audio app --speed realtime --quiet)
    ;;
  live)
    local size rate bitrate
    row_format "$row"
    rm -f "$WORK/encoder-time.txt"
    command=(env INGEST_ENCODE_BIN="$WORK/ingest-encode-timed" "$INGEST" live testsrc --size "$size"
      --fps "$rate" --bitrate "$bitrate" --duration "$SECONDS_OF_MEDIA" --to "$srt" --json
      --quiet)
    ;;
  esac
  if [[ $trace == 1 && $sender == live ]]; then
    # The pipeline's threads, not the encoder's: strace attaches once the encoder is started
    # (env runs ingest in its own pid), so -f follows threads started later but no encoder.
    "${command[@]}" >"$WORK/sender.log" 2>&1 &
    local pid=$! tracer=""
    until pgrep -P "$pid" >/dev/null || ! kill -0 "$pid" 2>/dev/null; do sleep 0.01; done
    if kill -0 "$pid" 2>/dev/null; then
      strace -c -f -p "$pid" -o "$WORK/strace.txt" 2>/dev/null &
      tracer=$!
    fi
    wait "$pid" || true
    [[ -n $tracer ]] && { wait "$tracer" 2>/dev/null || true; }
  elif [[ $trace == 1 ]]; then
    strace -c -f -o "$WORK/strace.txt" "${command[@]}" >"$WORK/sender.log" 2>&1 || true
  else
    # A run that ends with an error still cost what it cost: it is counted, and said under
    # the table with the sender's last line.
    local status=0
    /usr/bin/time -f "%U %S %M %w %c %e" -o "$WORK/time.txt" "${command[@]}" \
      >"$WORK/sender.log" 2>&1 || status=$?
    if ((status != 0)); then
      failures+=("$row, $sender: exit status $status: $(tail -1 "$WORK/sender.log")")
    fi
    # GNU time writes a line of its own before the figures when the command failed.
    tail -1 "$WORK/time.txt" >"$WORK/time.last" && mv "$WORK/time.last" "$WORK/time.txt"
  fi
  wait "$listener_pid" 2>/dev/null || true
  listener_pid=""
  if [[ -n $second_listener_pid ]]; then
    wait "$second_listener_pid" 2>/dev/null || true
    second_listener_pid=""
  fi
}

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# calls NAME...: the calls of those syscalls in WORK/strace.txt (strace -c: % time, seconds,
# usecs/call, calls, [errors,] syscall), summed.
calls() {
  awk -v names=" $* " 'index(names, " " $NF " ") { n += $4 } END { print n + 0 }' \
    "$WORK/strace.txt"
}

echo "| row | sender | CPU ms/s (user + sys) | sys ms/s | context switches/s | futex/s | send calls/s | peak RSS (MB) |"
echo "|---|---|---|---|---|---|---|---|"
for row in "${ROWS[@]}"; do
  make_media "$row"
  senders=(srt ffmpeg srt+hls four)
  [[ $LIVE_ROWS == *" $row "* ]] && senders+=(live)
  declare -A user=() sys=() rss=() switches=()
  for _ in $(seq "$RUNS"); do
    # Alternating: each sender's runs are spread over the same minutes as the others'.
    for sender in "${senders[@]}"; do
      run "$sender" "$row" 0
      read -r u s m v c _ <"$WORK/time.txt"
      if [[ $sender == live ]]; then
        # The pipeline process alone: less the encoder's CPU, its own peak from the summary.
        read -r eu es ew ec <"$WORK/encoder-time.txt"
        u=$(awk -v a="$u" -v b="$eu" 'BEGIN { print a - b }')
        s=$(awk -v a="$s" -v b="$es" 'BEGIN { print a - b }')
        v=$((v - ew))
        c=$((c - ec))
        m=$(tail -1 "$WORK/sender.log" | python3 -c \
          'import json, sys; print(json.loads(sys.stdin.read())["peak_resident"] // 1024)')
      fi
      user[$sender]+="$u "
      sys[$sender]+="$s "
      rss[$sender]+="$m "
      switches[$sender]+="$((v + c)) "
    done
  done
  for sender in "${senders[@]}"; do
    run "$sender" "$row" 1
    futex=$(calls futex)
    sends=$(calls sendmsg sendto sendmmsg)
    u=$(tr ' ' '\n' <<<"${user[$sender]}" | grep . | median)
    s=$(tr ' ' '\n' <<<"${sys[$sender]}" | grep . | median)
    m=$(tr ' ' '\n' <<<"${rss[$sender]}" | grep . | median)
    w=$(tr ' ' '\n' <<<"${switches[$sender]}" | grep . | median)
    name=$sender
    case "$sender" in
    srt) name='`ingest replay --to srt://`' ;;
    ffmpeg) name='`ffmpeg -re -c copy` to SRT' ;;
    srt+hls) name='ingest: SRT + HLS' ;;
    four)
      name='ingest: SRT + HLS + .ts + RTMP'
      [[ $row != 2160p60 ]] || name='ingest: SRT + HLS + .ts + SRT'
      ;;
    live) name='`ingest live testsrc --to srt://`, pipeline process (no encoder)' ;;
    esac
    awk -v row="$row" -v name="$name" -v u="$u" -v s="$s" -v m="$m" -v w="$w" -v f="$futex" \
      -v n="$sends" -v t="$SECONDS_OF_MEDIA" 'BEGIN {
        printf "| %s | %s | %.1f | %.1f | %.0f | %.0f | %.0f | %.1f |\n", row, name,
          (u + s) * 1000 / t, s * 1000 / t, w / t, f / t, n / t, m / 1000 }'
  done
done
if ((${#failures[@]})); then
  echo
  echo "Runs that ended with an error (their figures are in the medians):"
  for failure in "${failures[@]}"; do echo "- $failure"; done
fi
