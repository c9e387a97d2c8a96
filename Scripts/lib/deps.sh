# Sourced by Scripts/run and Scripts/test: installs the Debian packages the build, the tests and
# the test servers need, when any is missing. Needs root (apt-get) only when something is missing.

# pkg-config names, commands, files and GStreamer elements (the tests' second decoder) that must
# exist, with the package providing each.
ingest_packages=(
  "pkgconf:pkg-config:pkg-config"
  "pc:libavformat:libavformat-dev"
  "pc:libavcodec:libavcodec-dev"
  "pc:libavutil:libavutil-dev"
  "pc:libavfilter:libavfilter-dev"
  "pc:libavdevice:libavdevice-dev"
  "pc:libswscale:libswscale-dev"
  "pc:libswresample:libswresample-dev"
  "pc:srt:libsrt-openssl-dev"
  "pc:libcurl:libcurl4-openssl-dev"
  "cmd:openssl:openssl"
  "cmd:ffmpeg:ffmpeg"
  "cmd:ffprobe:ffmpeg"
  "cmd:srt-live-transmit:srt-tools"
  "cmd:nginx:nginx"
  "file:/usr/lib/nginx/modules/ngx_rtmp_module.so:libnginx-mod-rtmp"
  "cmd:tsinfo:tstools"
  "file:/usr/bin/time:time"
  "cmd:ip:iproute2"
  "file:/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1:faketime"
  "cmd:gst-launch-1.0:gstreamer1.0-tools"
  "cmd:gst-inspect-1.0:gstreamer1.0-tools"
  "gst:tsdemux:gstreamer1.0-plugins-bad"
  "gst:h264parse:gstreamer1.0-plugins-bad"
  "gst:aacparse:gstreamer1.0-plugins-good"
  "gst:avdec_h264:gstreamer1.0-libav"
  "gst:avdec_aac:gstreamer1.0-libav"
  "cmd:Xvfb:xvfb"
  "cmd:gst-launch-1.0:gstreamer1.0-tools"
  "gst:tsdemux:gstreamer1.0-plugins-bad"
  "gst:h265parse:gstreamer1.0-plugins-bad"
  "gst:avdec_h265:gstreamer1.0-libav"
  "gst:qtdemux:gstreamer1.0-plugins-good"
  "cmd:mediainfo:mediainfo"
  "pc:gstreamer-webrtc-1.0:libgstreamer-plugins-bad1.0-dev"
  "pc:gstreamer-app-1.0:libgstreamer-plugins-base1.0-dev"
  "pc:openssl:libssl-dev"
  "gst:webrtcbin:gstreamer1.0-plugins-bad"
  "gst:nicesrc:gstreamer1.0-nice"
  "gst:rtph264pay:gstreamer1.0-plugins-good"
  "gst:rtpopuspay:gstreamer1.0-plugins-good"
  "gst:dtlssrtpenc:gstreamer1.0-plugins-bad"
  "gst:opusenc:gstreamer1.0-plugins-base"
  "gst:appsrc:gstreamer1.0-plugins-base"
  # The players of HLSPlayerTests, at their defaults: GStreamer's playbin3 (hlsdemux2 reads
  # HLS over HTTP through libsoup) and playbin, VLC, and Chromium (its <video>, and hls.js).
  "gst:playbin3:gstreamer1.0-plugins-base"
  "gst:hlsdemux2:gstreamer1.0-plugins-good"
  "gst:souphttpsrc:gstreamer1.0-plugins-good"
  "file:/usr/lib/x86_64-linux-gnu/libsoup-3.0.so.0:libsoup-3.0-0"
  "cmd:cvlc:vlc-bin"
  "file:/usr/lib/x86_64-linux-gnu/vlc/plugins/demux/libadaptive_plugin.so:vlc-plugin-base"
  "cmd:chromium:chromium"
  # The slow disk of MultiOutputTests (Scripts/bench-support/slow_disk.py, a FUSE file system
  # whose writes are paced): libfuse2, which fusepy loads, and fusermount, which unmounts it.
  "file:/usr/lib/x86_64-linux-gnu/libfuse.so.2:libfuse2"
  "cmd:fusermount:fuse"
)
# Python modules of the WHIP test peer (Scripts/whip-peer), from PyPI, and imageio-ffmpeg, whose
# wheel carries a static FFmpeg 9 (imageio_ffmpeg/binaries/ffmpeg-linux-x86_64-*): the Enhanced
# RTMP peer of EnhancedRTMPTests (Debian's FFmpeg 5.1 and nginx-rtmp read no E-RTMP), and
# fusepy (the slow disk's FUSE binding). Test tooling only.
ingest_python_modules=("aiortc:aiortc==1.16.0" "aiohttp:aiohttp==3.14.5"
  "imageio_ffmpeg:imageio-ffmpeg==0.8.1" "fuse:fusepy==3.0.1")
# gpac (MP4Box), the MP4 tests' fifth reader, is not packaged for Debian 12: the tests run it
# where it is installed.

ensure_packages() {
  local missing=() entry kind name package
  for entry in "${ingest_packages[@]}"; do
    IFS=: read -r kind name package <<<"$entry"
    case $kind in
      pkgconf | cmd) command -v "$name" >/dev/null 2>&1 || missing+=("$package") ;;
      pc) pkg-config --exists "$name" 2>/dev/null || missing+=("$package") ;;
      file) [[ -e $name ]] || missing+=("$package") ;;
      # Not --exists: it also asks for the core's version, which libnice's plugin does not have.
      gst) gst-inspect-1.0 "$name" >/dev/null 2>&1 || missing+=("$package") ;;
    esac
  done
  ((${#missing[@]} == 0)) && return 0
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
  if [[ $(id -u) -ne 0 ]]; then
    echo "missing packages: ${missing[*]}; install them with: sudo apt-get install ${missing[*]}" >&2
    return 1
  fi
  echo "installing: ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# hls.js, for HLSPlayerTests: Debian has no package of it, and PyPI's gradio wheel ships a build
# (its frontend's hls-*.js module). Only that file is taken from the wheel, which is not
# installed. Kept in PLAYERS_DIR (default .build/players) across runs.
hlsjs_wheel="gradio==6.31.0"
ensure_hlsjs() {
  local players=${PLAYERS_DIR:-$ROOT/.build/players} download
  compgen -G "$players/hlsjs/hls-*.js" >/dev/null && return 0
  download=$(mktemp -d)
  echo "fetching hls.js from PyPI ($hlsjs_wheel)" >&2
  if python3 -m pip download -q --disable-pip-version-check --no-deps -d "$download" \
    "$hlsjs_wheel" >&2; then
    mkdir -p "$players/hlsjs"
    python3 - "$download" "$players/hlsjs" <<'PY'
import glob, os, sys, zipfile
wheel = glob.glob(os.path.join(sys.argv[1], "*.whl"))[0]
with zipfile.ZipFile(wheel) as archive:
    for name in archive.namelist():
        if name.startswith("gradio/templates/frontend/assets/hls-") and name.endswith(".js"):
            with open(os.path.join(sys.argv[2], os.path.basename(name)), "wb") as out:
                out.write(archive.read(name))
PY
  fi
  rm -rf "$download"
  compgen -G "$players/hlsjs/hls-*.js" >/dev/null
}

ensure_python_modules() {
  local missing=() entry module requirement
  for entry in "${ingest_python_modules[@]}"; do
    IFS=: read -r module requirement <<<"$entry"
    python3 -c "import $module" 2>/dev/null || missing+=("$requirement")
  done
  ((${#missing[@]} == 0)) && return 0
  echo "installing from PyPI: ${missing[*]}" >&2
  python3 -m pip install -q --disable-pip-version-check "${missing[@]}" >&2
}
