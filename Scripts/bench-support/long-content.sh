#!/usr/bin/env bash
# The long-content row of the benchmarks: 10 minutes of 720x1280 H.264 at ~3 Mb/s plus two AAC
# tracks, generated here (never committed), captured into a dump, then, side by side in one run:
#
#   ingest replay BIG.dump --to a.ts --speed max
#   ingest replay BIG.dump --to a.mp4 --speed max         (the fragmented-MP4 recording)
#   ffmpeg -i BIG.mp4 -map 0 -c copy -f mpegts b.ts
#   cp BIG.dump copy.bin                                  (the I/O floor)
#
# each timed with /usr/bin/time -v (wall, user + system CPU, VmHWM), RUNS alternating runs after
# one warm-up run, each after `sync`, medians; plus the read(2) count of one run of each under
# strace -c.
#
#   Scripts/bench-support/long-content.sh INGEST_BINARY WORK_DIR [RUNS]
#
# Prints a markdown section on stdout. The generated media stays in WORK_DIR/long for later runs.
set -euo pipefail
BIN="$1"
WORK="$2/long"
RUNS="${3:-5}"
SECONDS_OF_CONTENT="${LONG_CONTENT_SECONDS:-600}"
source "$(dirname "${BASH_SOURCE[0]}")/bench-media.sh"
mkdir -p "$WORK"
cd "$WORK"

if [[ ! -s BIG.mp4 ]]; then
  echo "long-content: encoding ${SECONDS_OF_CONTENT} s of 720x1280 H.264 + 2 AAC tracks" >&2
  make_long_content "$SECONDS_OF_CONTENT" BIG.mp4
fi
if [[ ! -s BIG.dump || BIG.dump -ot BIG.mp4 ]]; then
  echo "long-content: capturing BIG.mp4 into BIG.dump" >&2
  "$BIN" capture BIG.mp4 -o BIG.tmp.dump >/dev/null
  mv BIG.tmp.dump BIG.dump
fi

ingest_cmd=("$BIN" replay BIG.dump --to a.ts -y --speed max --quiet)
mp4_cmd=("$BIN" replay BIG.dump --to a.mp4 -y --speed max --quiet)
ffmpeg_cmd=(ffmpeg -nostdin -v error -y -i BIG.mp4 -map 0 -c copy -f mpegts b.ts)
cp_cmd=(cp BIG.dump copy.bin)

# One timed run: appends "wall cpu rss_kb" to the file named by $1.
timed() {
  local out="$1"
  shift
  rm -f a.ts a.mp4 b.ts copy.bin
  # The previous command's output is still being written back to the disk: wait for that, so
  # each command is timed without the kernel's flusher threads competing for the two cores.
  sync
  /usr/bin/time -v -o time.txt "$@" >/dev/null 2>stderr.txt || {
    echo "long-content: $* failed:" >&2
    cat stderr.txt >&2
    exit 1
  }
  awk -F': ' '
    /Elapsed \(wall clock\)/ { n = split($2, p, ":"); wall = 0; for (i = 1; i <= n; i++) wall = wall * 60 + p[i] }
    /User time/ { user = $2 }
    /System time/ { sys = $2 }
    /Maximum resident set size/ { rss = $2 }
    END { printf "%.3f %.3f %d\n", wall, user + sys, rss }
  ' time.txt >>"$out"
}

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

reads() {
  command -v strace >/dev/null 2>&1 || { echo "-"; return; }
  rm -f a.ts a.mp4 b.ts copy.bin
  strace -f -c -e trace=read -o strace.txt "$@" >/dev/null 2>&1
  awk '$NF == "read" { print $4 }' strace.txt
}

rm -f ingest.runs mp4.runs ffmpeg.runs cp.runs
timed /dev/null "${ingest_cmd[@]}"
timed /dev/null "${mp4_cmd[@]}"
timed /dev/null "${ffmpeg_cmd[@]}"
timed /dev/null "${cp_cmd[@]}"
for _ in $(seq "$RUNS"); do
  timed ingest.runs "${ingest_cmd[@]}"
  timed mp4.runs "${mp4_cmd[@]}"
  timed ffmpeg.runs "${ffmpeg_cmd[@]}"
  timed cp.runs "${cp_cmd[@]}"
done
ingest_reads="$(reads "${ingest_cmd[@]}")"
mp4_reads="$(reads "${mp4_cmd[@]}")"
ffmpeg_reads="$(reads "${ffmpeg_cmd[@]}")"
cp_reads="$(reads "${cp_cmd[@]}")"

col() { cut -d' ' -f"$2" "$1" | median; }
row() {
  local label="$1" file="$2" count="$3"
  printf '| %s | %s | %s | %.1f | %s |\n' "$label" "$(col "$file" 1)" "$(col "$file" 2)" \
    "$(awk '{ print $1 / 1024 }' <<<"$(col "$file" 3)")" "$count"
}
dump_mb="$(awk '{ printf "%.0f", $1 / 1e6 }' <<<"$(stat -c %s BIG.dump)")"
mp4_mb="$(awk '{ printf "%.0f", $1 / 1e6 }' <<<"$(stat -c %s BIG.mp4)")"
iw="$(col ingest.runs 1)"
fw="$(col ffmpeg.runs 1)"
cw="$(col cp.runs 1)"
irss="$(col ingest.runs 3)"
mrss="$(col mp4.runs 3)"

echo "### Long content (whole process, medians)"
echo
echo "${SECONDS_OF_CONTENT} s of 720x1280 H.264 at ~3 Mb/s (libx264 ultrafast, testsrc2) with two"
echo "AAC tracks: a ${dump_mb} MB dump and a ${mp4_mb} MB mp4 of the same samples; $RUNS alternating"
echo "runs of each after a warm-up run, files in the page cache, each run started after \`sync\`"
echo "(no write-back of the previous output pending). Wall, CPU (user + system, all threads) and"
echo "peak RSS from \`/usr/bin/time -v\`; read(2) calls from one run under \`strace -f -c -e trace=read\`."
echo
echo "| command | wall (s) | CPU (s) | peak RSS (MB) | read calls |"
echo "|---|---|---|---|---|"
row '`ingest replay BIG.dump --to a.ts --speed max`' ingest.runs "$ingest_reads"
row '`ingest replay BIG.dump --to a.mp4 --speed max`' mp4.runs "$mp4_reads"
row '`ffmpeg -i BIG.mp4 -map 0 -c copy -f mpegts b.ts`' ffmpeg.runs "$ffmpeg_reads"
row '`cp BIG.dump copy.bin` (the I/O floor)' cp.runs "$cp_reads"
echo
awk -v i="$iw" -v f="$fw" -v c="$cw" -v r="$irss" -v m="$mrss" 'BEGIN {
  printf "| target | figure | met |\n|---|---|---|\n"
  printf "| ingest wall <= 0.5x ffmpeg | %.2fx | %s |\n", i / f, (i <= 0.5 * f) ? "yes" : "no"
  printf "| ingest wall <= 2x cp | %.2fx | %s |\n", i / c, (i <= 2 * c) ? "yes" : "no"
  printf "| ingest peak RSS <= 20 MB | %.1f MB | %s |\n", r / 1024, (r <= 20 * 1024) ? "yes" : "no"
  printf "| .mp4 peak RSS within 2 MB of .ts | %+.1f MB | %s |\n", (m - r) / 1024, (m - r <= 2 * 1024) ? "yes" : "no"
}'
rm -f a.ts a.mp4 b.ts copy.bin time.txt stderr.txt strace.txt
