#!/usr/bin/env python3
"""A WHIP endpoint whose receiver is Chromium's own WebRTC stack, for the tests.

    chromium_peer.py --port PORT --dir DIR [--host ADDRESS] [--relay "IMPAIRMENTS"]
                     [--timeout S]

A second, independent receiver beside whip_peer.py (aiortc). Listens on ADDRESS:PORT (default
127.0.0.1) and prints "chromium-peer listening on ADDRESS:PORT" once Debian's Chromium,
headless, has loaded this server's page. The page's RTCPeerConnection takes each offer and
answers it, at Chromium's defaults: `new RTCPeerConnection()`, no codec preferences, no
transceiver or jitter-buffer setting, the remote video on a muted <video> element. As in
Scripts/players/play.py, the page talks to this server over HTTP (it asks for work, posts its
answers and its statistics); Chromium is started with a remote debugging port, as there.

    POST   /whip/<name>            SDP offer in, 201 + Location + Chromium's SDP answer out
                                   (non-trickle: ICE gathering completes first)
    PATCH  /whip/<name>/<session>  405
    DELETE /whip/<name>/<session>  200; the page's last statistics are written, the peer
                                   connection closed

Per session, DIR/<name>.events.jsonl: the request (with the offer as it came), the answer, Chromium's connection states,
its getStats() every half second (and, at the DELETE, once decoding stood still for a
second: what the jitter buffer still held for retransmissions is decoded first) ("stats": the video inbound-rtp's framesReceived,
framesDecoded, framesDropped, keyFramesDecoded, packetsReceived, packetsLost, nackCount,
pliCount, firCount, freezeCount, totalFreezesDuration, retransmittedPacketsReceived,
bytesReceived, and longest_gap_ms, the longest time between two frames the <video> presented
(requestVideoFrameCallback)), and a "closed" line with the last of them. The Chromium version
is the "browser" line.

--relay puts the impairment relay (Scripts/bench-support/udp_relay.py with these arguments) on
each session's path, as whip_peer.py does (relay_path.py). Chromium names its host candidates
by mDNS (.local) by default, which gives the relay no address to forward to: with --relay only,
it is started with WebRtcHideLocalIpsWithMdns off, so that its answer holds its address. That
changes which candidates it writes, nothing in what it accepts, receives or decodes.
"""

import argparse
import http.server
import json
import os
import queue
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import relay_path  # noqa: E402

PAGE = """<!doctype html>
<html><body>
<script>
const sessions = new Map();
async function post(path, body) {
  try {
    await fetch(path, { method: "POST", body: JSON.stringify(body) });
  } catch (e) {}
}
function video(stats) {
  for (const report of stats.values()) {
    if (report.type === "inbound-rtp" && report.kind === "video") return report;
  }
  return null;
}
const fields = ["framesReceived", "framesDecoded", "framesDropped", "keyFramesDecoded",
  "packetsReceived", "packetsLost", "nackCount", "pliCount", "firCount", "freezeCount",
  "totalFreezesDuration", "retransmittedPacketsReceived", "bytesReceived", "frameWidth",
  "frameHeight", "decoderImplementation", "jitterBufferDelay", "jitterBufferEmittedCount"];
async function report(id, final) {
  const session = sessions.get(id);
  if (!session) return;
  const out = { session: id, final, connection: session.pc.connectionState,
                longest_gap_ms: session.longestGap, presented: session.presented };
  try {
    const inbound = video(await session.pc.getStats());
    if (inbound) for (const name of fields) if (name in inbound) out[name] = inbound[name];
  } catch (e) { out.error = String(e); }
  await post("/stats", out);
}
async function take(work) {
  if (work.type === "offer") {
    const pc = new RTCPeerConnection();
    const element = document.createElement("video");
    element.muted = true;
    element.autoplay = true;
    element.playsInline = true;
    document.body.appendChild(element);
    const session = { pc, element, longestGap: 0, last: null, presented: 0, timer: null };
    sessions.set(work.session, session);
    pc.ontrack = (event) => {
      if (event.track.kind !== "video") return;
      element.srcObject = new MediaStream([event.track]);
      element.play().catch(() => {});
      const frame = (now) => {
        if (session.last !== null) session.longestGap = Math.max(session.longestGap, now - session.last);
        session.last = now;
        session.presented += 1;
        if (sessions.has(work.session)) element.requestVideoFrameCallback(frame);
      };
      element.requestVideoFrameCallback(frame);
    };
    // The ICE state too, and the candidate pairs when ICE fails or is still checking after 10 s:
    // what a session that never connects tried.
    const pairs = async () => {
      const out = [];
      for (const r of (await pc.getStats()).values()) {
        if (r.type === "candidate-pair") {
          out.push({ state: r.state, nominated: r.nominated, sent: r.requestsSent,
                     received: r.responsesReceived, requests: r.requestsReceived });
        }
      }
      return out;
    };
    pc.onconnectionstatechange = () =>
      post("/state", { session: work.session, connection: pc.connectionState });
    pc.oniceconnectionstatechange = async () => {
      const state = { session: work.session, ice: pc.iceConnectionState };
      if (pc.iceConnectionState === "failed") state.pairs = await pairs();
      post("/state", state);
    };
    setTimeout(async () => {
      if (pc.iceConnectionState === "new" || pc.iceConnectionState === "checking") {
        post("/state", { session: work.session, ice: pc.iceConnectionState, pairs: await pairs() });
      }
    }, 10000);
    try {
      await pc.setRemoteDescription({ type: "offer", sdp: work.sdp });
      await pc.setLocalDescription(await pc.createAnswer());
      if (pc.iceGatheringState !== "complete") {
        await new Promise((resolve) => {
          pc.onicegatheringstatechange = () => {
            if (pc.iceGatheringState === "complete") resolve();
          };
          setTimeout(resolve, 5000);
        });
      }
      await post("/answer", { session: work.session, sdp: pc.localDescription.sdp });
    } catch (e) {
      await post("/answer", { session: work.session, error: String(e) });
      return;
    }
    session.timer = setInterval(() => report(work.session, false), 500);
  } else if (work.type === "close") {
    const session = sessions.get(work.session);
    if (!session) return;
    clearInterval(session.timer);
    // What is still in the jitter buffer (held for retransmissions) is decoded first: the
    // publisher's DELETE comes once its last packets were reported received.
    let decoded = -1, still = 0;
    for (let i = 0; i < 30 && still < 3; i++) {
      const inbound = video(await session.pc.getStats());
      const now = inbound ? inbound.framesDecoded : 0;
      still = now === decoded ? still + 1 : 0;
      decoded = now;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    await report(work.session, true);
    session.pc.close();
    session.element.remove();
    sessions.delete(work.session);
  }
}
async function loop() {
  await post("/ready", { userAgent: navigator.userAgent });
  while (true) {
    try {
      const response = await fetch("/next");
      if (response.status === 200) take(await response.json());
    } catch (e) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
loop();
</script>
</body></html>
"""


class Session:
    def __init__(self, name: str, directory: str) -> None:
        self.name = name
        self.lock = threading.Lock()
        # Appended: a publisher that retries under the same name keeps the failed attempt's.
        self.events = open(os.path.join(directory, name + ".events.jsonl"), "a", buffering=1)
        self.answer = queue.Queue()
        self.closed = threading.Event()
        self.last = {}
        self.relay = None

    def event(self, what: str, **fields) -> None:
        fields.update(event=what, time_ns=time.time_ns())
        with self.lock:
            if not self.events.closed:
                self.events.write(json.dumps(fields) + "\n")

    def close(self) -> None:
        if self.relay is not None:
            self.event("relay-final", **self.relay.stop())
            self.relay = None
        self.event("closed", **self.last)
        with self.lock:
            self.events.close()


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, host: str, port: int, directory: str, relay, timeout: float) -> None:
        self.directory = directory
        self.relay = relay
        self.timeout = timeout
        self.work = queue.Queue()
        self.sessions: dict = {}
        self.ready = threading.Event()
        self.user_agent = ""
        super().__init__((host, port), Handler)


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, status: int, body: bytes = b"", kind: str = "text/plain", headers=None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def do_GET(self):
        server = self.server
        if self.path == "/":
            return self.send(200, PAGE.encode(), "text/html")
        if self.path == "/next":
            try:
                work = server.work.get(timeout=10)
            except queue.Empty:
                return self.send(204)
            return self.send(200, json.dumps(work).encode(), "application/json")
        self.send(404)

    def do_POST(self):
        server = self.server
        parts = self.path.strip("/").split("/")
        if parts[0] == "whip" and len(parts) == 2:
            return self.offer(parts[1])
        data = json.loads(self.body() or b"{}")
        session = server.sessions.get(data.get("session", ""))
        if self.path == "/ready":
            server.user_agent = data.get("userAgent", "")
            server.ready.set()
        elif self.path == "/answer" and session is not None:
            session.answer.put(data)
        elif self.path == "/state" and session is not None:
            if "connection" in data:
                session.event("connection", state=data.get("connection"))
            else:
                session.event("ice", state=data.get("ice"), pairs=data.get("pairs"))
        elif self.path == "/stats" and session is not None:
            data.pop("session", None)
            final = data.pop("final", False)
            session.last = data
            session.event("stats", **data)
            if final:
                session.closed.set()
        self.send(200, b"{}", "application/json")

    def offer(self, name: str):
        server = self.server
        if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/sdp":
            return self.send(415, b"the offer must be application/sdp\n")
        offer = self.body().decode()
        key = secrets.token_hex(8)
        session = Session(name, server.directory)
        server.sessions[key] = session
        session.event("post", bytes=len(offer), sdp=offer)
        if server.relay is not None:
            offer = relay_path.offer_for_receiver(offer)
        server.work.put({"type": "offer", "session": key, "sdp": offer})
        try:
            reply = session.answer.get(timeout=server.timeout)
        except queue.Empty:
            reply = {"error": "Chromium did not answer in time"}
        if "error" in reply:
            session.event("refused", error=reply["error"])
            server.sessions.pop(key, None)
            session.close()
            return self.send(400, f"offer refused: {reply['error']}\n".encode())
        answer = reply["sdp"]
        if server.relay is not None:
            address = relay_path.receiver_address(answer)
            if address is None:
                session.event("refused", error="no IPv4 candidate in Chromium's answer to relay to")
                server.work.put({"type": "close", "session": key})
                server.sessions.pop(key, None)
                session.close()
                return self.send(500, b"no IPv4 candidate to relay to\n")
            session.relay = relay_path.Relay(address[0], address, server.relay)
            answer = relay_path.answer_for_sender(answer, address[0], session.relay.port)
            session.event("relay", listen=f"{address[0]}:{session.relay.port}",
                          forward=f"{address[0]}:{address[1]}", arguments=server.relay)
        session.event("answered", sdp=answer)
        self.send(201, answer.encode(), "application/sdp",
                  {"Location": f"/whip/{name}/{key}"})

    def do_PATCH(self):
        self.send(405, headers={"Allow": "DELETE"})

    def do_DELETE(self):
        server = self.server
        parts = self.path.strip("/").split("/")
        session = server.sessions.get(parts[-1]) if len(parts) == 3 else None
        if session is None:
            return self.send(404)
        session.event("delete")
        server.work.put({"type": "close", "session": parts[-1]})
        # The page's last statistics, then the session is gone.
        session.closed.wait(10)
        server.sessions.pop(parts[-1], None)
        session.close()
        self.send(200)


def chromium_version() -> str:
    out = subprocess.run(["chromium", "--version"], capture_output=True, text=True).stdout
    return out.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dir", required=True, help="where the sessions' events are written")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on")
    parser.add_argument("--relay", help="udp_relay.py impairments for each session's path")
    parser.add_argument("--timeout", type=float, default=20, help="seconds to wait for an answer")
    arguments = parser.parse_args()
    if shutil.which("chromium") is None:
        print("chromium-peer: chromium is missing", file=sys.stderr)
        return 2
    os.makedirs(arguments.dir, exist_ok=True)
    server = Server(arguments.host, arguments.port, arguments.dir, arguments.relay,
                    arguments.timeout)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    profile = tempfile.mkdtemp(prefix="ingest-chromium-peer-")
    command = [
        "chromium", "--headless=new", "--disable-gpu", "--mute-audio", "--no-first-run",
        "--autoplay-policy=no-user-gesture-required", "--user-data-dir=" + profile,
        "--remote-debugging-port=0",
    ]
    if os.geteuid() == 0:
        # Chromium refuses to run as root with its sandbox.
        command.append("--no-sandbox")
    if arguments.relay is not None:
        command.append("--disable-features=WebRtcHideLocalIpsWithMdns")
    command.append(f"http://{arguments.host}:{arguments.port}/")
    browser = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               preexec_fn=relay_path.die_with_parent)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    try:
        if not server.ready.wait(60):
            print("chromium-peer: the page did not load", file=sys.stderr)
            return 1
        with open(os.path.join(arguments.dir, "browser.json"), "w") as handle:
            json.dump({"version": chromium_version(), "user_agent": server.user_agent}, handle)
        print(f"chromium-peer listening on {arguments.host}:{arguments.port}", flush=True)
        while not stop.wait(0.5):
            if browser.poll() is not None:
                print("chromium-peer: chromium exited", file=sys.stderr)
                return 1
    finally:
        for key, session in list(server.sessions.items()):
            server.sessions.pop(key, None)
            session.close()
        browser.terminate()
        try:
            browser.wait(10)
        except subprocess.TimeoutExpired:
            browser.kill()
        server.shutdown()
        shutil.rmtree(profile, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
