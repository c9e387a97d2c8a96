#!/usr/bin/env python3
"""Plays a recording in a real player at the player's defaults and prints one JSON line.

    play.py hlsjs  DIR [--playlist index.m3u8] [--seconds 3] [--switch-audio] [--timeout 60]
    play.py hlsjs  DIR --follow 20 [--max-stall 2]   follow a live playlist for 20 s of playing
    play.py video  FILE [--seconds 3] [--timeout 60]        Chromium's own <video> (.mp4, .m3u8)
    play.py gst    DIR/FILE [--element playbin3|playbin] [--timeout 120]
    play.py vlc    DIR/FILE [--timeout 120]

The recording is served over HTTP from a loopback port of this process's own, as a web server
would serve it (players fetch HLS over HTTP: hlsdemux2 does not read file:// playlists). Chromium
is Debian's, headless; hls.js is the build PyPI's gradio wheel bundles (Debian has none), taken
from PLAYERS_DIR (Scripts/lib/deps.sh fetches it) and used as shipped: `new Hls()` with no
configuration. The page reports its state to this server; nothing in a player is configured to
forgive what it plays.

The JSON line: `player`, `version`, `ok` (played as asked), and what was seen: for the browser
`position`, `width`, `height`, `errors` (hls.js error events: type, details, fatal),
`audio_tracks`, `switched_position` (after switching audio), `longest_stall` (following a
live playlist: the longest time the position stood still while playing); for GStreamer and VLC `eos`,
`errors` (their ERROR/error lines).
"""

import argparse
import http.server
import json
import mimetypes
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

PLAYERS_DIR = os.environ.get(
    "PLAYERS_DIR",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".build", "players"),
)

PAGE = """<!doctype html>
<html><body>
<video id="v" muted playsinline></video>
<script type="module">
const options = %(options)s;
const video = document.getElementById("v");
const state = { position: 0, width: 0, height: 0, errors: [], audio_tracks: 0,
                switched_position: null, media_error: null, version: "", done: false };
let hls = null;
async function report(final) {
  state.position = video.currentTime;
  state.width = video.videoWidth;
  state.height = video.videoHeight;
  state.done = final;
  if (hls) state.audio_tracks = hls.audioTracks.length;
  try {
    await fetch("/report", { method: "POST", body: JSON.stringify(state) });
  } catch (e) {}
}
video.addEventListener("error", () => {
  state.media_error = video.error ? video.error.code + " " + video.error.message : "error";
  report(true);
});
if (options.hlsjs) {
  const module = await import("/hls.js");
  const Hls = module.Hls;
  state.version = Hls.version;
  hls = new Hls();
  hls.on(Hls.Events.ERROR, (event, data) => {
    state.errors.push({ type: data.type, details: data.details, fatal: data.fatal });
    if (data.fatal) report(true);
  });
  hls.loadSource(options.src);
  hls.attachMedia(video);
} else {
  state.version = navigator.userAgent;
  video.src = options.src;
}
video.play().catch((e) => { state.errors.push({ type: "play", details: String(e), fatal: false }); });
let switchedAt = null;
// Following a live playlist: how long the position stood still while playing, at most.
let followStart = null, lastAdvance = null, lastPosition = 0;
state.longest_stall = 0;
const timer = setInterval(() => {
  if (options.follow > 0) {
    const now = performance.now() / 1000;
    if (video.currentTime > lastPosition) {
      if (followStart === null) followStart = now;
      lastPosition = video.currentTime;
      lastAdvance = now;
    } else if (lastAdvance !== null && !video.ended) {
      state.longest_stall = Math.max(state.longest_stall, now - lastAdvance);
    }
    if (followStart !== null && now - followStart >= options.follow) {
      state.followed = now - followStart;
      clearInterval(timer); report(true); return;
    }
    report(false);
    return;
  }
  if (video.currentTime >= options.seconds && video.videoWidth > 0) {
    if (!options.switchAudio) { clearInterval(timer); report(true); return; }
    if (switchedAt === null && hls && hls.audioTracks.length >= 2) {
      switchedAt = video.currentTime;
      hls.audioTrack = hls.audioTrack === 0 ? 1 : 0;
    } else if (switchedAt !== null && video.currentTime >= switchedAt + 2) {
      state.switched_position = video.currentTime;
      clearInterval(timer); report(true); return;
    }
  }
  report(false);
}, 250);
</script>
</body></html>
"""


def hlsjs_module():
    """The hls.js ES module of the gradio wheel, with its player class exported as `Hls`.

    The bundle exports only gradio's helpers under minified names; one export line naming the
    class (the one with `static get version()`) is added, nothing else is changed."""
    assets = os.path.join(PLAYERS_DIR, "hlsjs")
    names = sorted(n for n in os.listdir(assets) if n.startswith("hls-") and n.endswith(".js")) \
        if os.path.isdir(assets) else []
    if not names:
        raise SystemExit(f"hls.js is missing in {assets} (Scripts/lib/deps.sh fetches it)")
    with open(os.path.join(assets, names[0]), encoding="utf-8") as handle:
        source = handle.read()
    match = re.search(r"([A-Za-z_$][\w$]*)=class(?: [\w$]+)?\{static get version\(\)", source)
    if not match:
        raise SystemExit("hls.js: no class with a version in the bundle")
    return (source + f"\nexport {{ {match.group(1)} as Hls }};\n").encode()


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root, page, module):
        self.root = root
        self.page = page
        self.module = module
        self.reports = []
        self.final = threading.Event()
        super().__init__(("127.0.0.1", 0), Handler)


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, body, kind):
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path == "/":
            return self.send(self.server.page, "text/html")
        if path == "/hls.js" and self.server.module:
            return self.send(self.server.module, "text/javascript")
        if path.startswith("/media/"):
            name = os.path.normpath(path[len("/media/"):])
            full = os.path.join(self.server.root, name)
            if not name.startswith("..") and os.path.isfile(full):
                with open(full, "rb") as handle:
                    body = handle.read()
                kind = {
                    ".m3u8": "application/vnd.apple.mpegurl",
                    ".ts": "video/mp2t",
                    ".m4s": "video/iso.segment",
                    ".mp4": "video/mp4",
                }.get(os.path.splitext(full)[1], mimetypes.guess_type(full)[0] or "")
                return self.send(body, kind or "application/octet-stream")
        self.send_error(404)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        report = json.loads(self.rfile.read(length) or b"{}")
        self.server.reports.append(report)
        if report.get("done"):
            self.server.final.set()
        self.send(b"{}", "application/json")


def serve(root, page, module):
    server = Server(root, page, module)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def chromium_version():
    out = subprocess.run(["chromium", "--version"], capture_output=True, text=True).stdout
    return out.strip()


def browser(args, hlsjs):
    target = os.path.abspath(args.path)
    root, name = (target, args.playlist) if os.path.isdir(target) else os.path.split(target)
    options = {"src": "/media/" + name, "seconds": args.seconds, "hlsjs": hlsjs,
               "switchAudio": args.switch_audio, "follow": args.follow}
    page = (PAGE % {"options": json.dumps(options)}).encode()
    server = serve(root, page, hlsjs_module() if hlsjs else None)
    profile = tempfile.mkdtemp(prefix="ingest-chromium-")
    command = [
        "chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--mute-audio",
        "--no-first-run", "--autoplay-policy=no-user-gesture-required",
        "--user-data-dir=" + profile, "--remote-debugging-port=0",
        f"http://127.0.0.1:{server.server_address[1]}/",
    ]
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    finished = server.final.wait(args.timeout)
    child.kill()
    _, stderr = child.communicate()
    server.shutdown()
    shutil.rmtree(profile, ignore_errors=True)
    last = server.reports[-1] if server.reports else {}
    fatal = [e for e in last.get("errors", []) if e.get("fatal")]
    ok = (finished and not fatal and not last.get("media_error")
          and last.get("position", 0) >= args.seconds and last.get("width", 0) > 0)
    if args.switch_audio:
        ok = ok and last.get("audio_tracks", 0) >= 2 and last.get("switched_position") is not None
    if args.follow > 0:
        ok = (finished and not fatal and not last.get("media_error") and last.get("width", 0) > 0
              and last.get("longest_stall", 0) <= args.max_stall)
    result = {"player": "hls.js" if hlsjs else "chromium <video>",
              "version": (last.get("version") if hlsjs else "") or "",
              "browser": chromium_version(), "ok": bool(ok), "timed_out": not finished,
              **{k: last.get(k) for k in ("position", "width", "height", "errors",
                                           "audio_tracks", "switched_position", "media_error",
                                           "longest_stall", "followed")}}
    if not last:
        result["stderr"] = stderr.decode(errors="replace")[-2000:]
    return result


def local_url(path, playlist):
    """An HTTP URL for a recording (a directory's playlist, or a file) on a server of our own."""
    target = os.path.abspath(path)
    root, name = (target, playlist) if os.path.isdir(target) else os.path.split(target)
    server = serve(root, b"", None)
    return server, f"http://127.0.0.1:{server.server_address[1]}/media/{name}"


def gstreamer(args):
    server, url = local_url(args.path, args.playlist)
    version = subprocess.run(["gst-launch-1.0", "--version"], capture_output=True,
                             text=True).stdout.splitlines()
    # Warnings are logged (the player's behaviour is unchanged) so that a verdict that fails
    # says where the player stood: buffering, waiting for a playlist, or a download that failed.
    log = tempfile.NamedTemporaryFile(prefix="ingest-gst-", suffix=".log", delete=False)
    log.close()
    environment = dict(os.environ, GST_DEBUG=os.environ.get("GST_DEBUG", "2"),
                       GST_DEBUG_FILE=log.name, GST_DEBUG_NO_COLOR="1")
    try:
        run = subprocess.run(
            ["gst-launch-1.0", args.element, "uri=" + url, "video-sink=fakesink",
             "audio-sink=fakesink"], capture_output=True, text=True, timeout=args.timeout,
            env=environment)
        output, status, timed_out = run.stdout + run.stderr, run.returncode, False
    except subprocess.TimeoutExpired as expired:
        output = (expired.stdout or b"").decode(errors="replace") + \
            (expired.stderr or b"").decode(errors="replace")
        status, timed_out = None, True
    server.shutdown()
    errors = [line for line in output.splitlines() if "ERROR" in line]
    eos = "Got EOS" in output
    ok = status == 0 and eos and not errors
    result = {"player": args.element, "version": version[0] if version else "",
              "ok": ok, "eos": eos, "exit": status, "timed_out": timed_out,
              "errors": errors[:10]}
    if not ok:
        result["tail"] = output.splitlines()[-12:]
        with open(log.name, errors="replace") as handle:
            result["warnings"] = handle.read().splitlines()[-20:]
    os.unlink(log.name)
    return result


def vlc(args):
    server, url = local_url(args.path, args.playlist)
    # VLC refuses to run as root: as root, it runs as nobody (it reads over HTTP, no file).
    home = tempfile.mkdtemp(prefix="ingest-vlc-")
    prefix = []
    if os.geteuid() == 0:
        os.chown(home, 65534, 65534)
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    environment = dict(os.environ, HOME=home)
    version = subprocess.run(prefix + ["cvlc", "--version"], capture_output=True, text=True,
                             env=environment).stdout.splitlines()
    try:
        run = subprocess.run(
            prefix + ["cvlc", "--play-and-exit", "--vout", "dummy", "--aout", "dummy", url],
            capture_output=True, text=True, timeout=args.timeout, env=environment)
        output, status, timed_out = run.stdout + run.stderr, run.returncode, False
    except subprocess.TimeoutExpired as expired:
        output = (expired.stderr or b"").decode(errors="replace")
        status, timed_out = None, True
    server.shutdown()
    shutil.rmtree(home, ignore_errors=True)
    # Demuxer and decoder errors; VLC's complaints about the missing display and D-Bus session
    # of a headless machine are not about the recording.
    errors = [line for line in output.splitlines()
              if " error:" in line and "interface" not in line]
    return {"player": "vlc", "version": version[0] if version else "",
            "ok": status == 0 and not errors, "exit": status, "timed_out": timed_out,
            "errors": errors[:10]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("player", choices=["hlsjs", "video", "gst", "vlc"])
    parser.add_argument("path")
    parser.add_argument("--playlist", default="index.m3u8")
    parser.add_argument("--seconds", type=float, default=3)
    parser.add_argument("--switch-audio", action="store_true")
    parser.add_argument("--element", default="playbin3", choices=["playbin3", "playbin"])
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--follow", type=float, default=0,
                        help="hlsjs: follow a live playlist for this many seconds of playing")
    parser.add_argument("--max-stall", type=float, default=2,
                        help="with --follow: the longest stall, in seconds, that still passes")
    args = parser.parse_args()
    if args.player in ("hlsjs", "video"):
        result = browser(args, hlsjs=args.player == "hlsjs")
    elif args.player == "gst":
        result = gstreamer(args)
    else:
        result = vlc(args)
    print(json.dumps(result), flush=True)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
