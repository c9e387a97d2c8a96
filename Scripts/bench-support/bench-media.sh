# Sourced by the benchmark scripts: media they generate (never committed), each made once.

# make_tone_dumps ENCODER WORK_DIR: WORK_DIR/tones-10.dump and tones-30.dump, 10 s and 30 s of
# 320x240 H.264 at 300 kb/s with a 440 Hz app tone and a 660 Hz mic tone, from ingest-encode
# (real time).
make_tone_dumps() {
  local encoder=$1 work=$2 graph seconds dump
  graph='lavfi:testsrc2=size=320x240:rate=30[out0];sine=frequency=440:sample_rate=48000[out1];'
  graph+='sine=frequency=660:sample_rate=48000[out2]'
  for seconds in 10 30; do
    dump="$work/tones-$seconds.dump"
    [[ -s $dump ]] && continue
    "$encoder" "$graph" --size 320x240 --bitrate 300000 --duration "$seconds" >"$dump" \
      2>"$work/encoder-$seconds.log"
  done
}

# make_long_content SECONDS OUTPUT: 720x1280 H.264 at ~3 Mb/s (libx264 ultrafast, testsrc2)
# with two AAC tracks (440 Hz and 660 Hz), the long-content media.
make_long_content() {
  local seconds=$1 output=$2
  ffmpeg -nostdin -v error -y \
    -f lavfi -i "testsrc2=size=720x1280:rate=30:duration=$seconds" \
    -f lavfi -i "sine=frequency=440:sample_rate=48000:duration=$seconds" \
    -f lavfi -i "sine=frequency=660:sample_rate=48000:duration=$seconds" \
    -map 0 -map 1 -map 2 -c:v libx264 -preset ultrafast -tune zerolatency \
    -b:v 3M -maxrate 3M -bufsize 6M -g 60 -pix_fmt yuv420p -c:a aac -b:a 128k \
    "$output.tmp.mp4"
  mv "$output.tmp.mp4" "$output"
}
