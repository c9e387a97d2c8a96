#!/usr/bin/env python3
"""WHIP on the shaped-link benchmark's paths: `ingest live testsrc --to whip+http://…` to a
WebRTC receiver inside the benchmark's network namespace, one run per path (`run`), and the
table of every run (`report`).

    whip_link.py run --ns NS --dev VETH --peer ADDR --nominal-bps BPS --tbf FRACTION \
        --path NAME --label TEXT [--relay "IMPAIRMENTS"] --duration S --out RUN_DIR \
        --ingest BIN [--receiver aiortc|chromium] [--size WxH] [--bitrate BPS] [--seed N]
    whip_link.py report --work WORK_DIR --docs DOCS_DIR

Driven by Scripts/bench-support/shaped-link.sh (SHAPED_WHIP), which makes the namespace and the
veth pair. The receiver is Scripts/whip-peer/whip_peer.py (aiortc, at its defaults) or
chromium_peer.py (Chromium, headless, at its defaults) in the namespace, with the impairment
relay on the session's path when the path has one (--relay, the peer's own option: ICE can
take no other path); tbf on the veth shapes the rate (2 x nominal behind the relay, as for SRT).

Per run, RUN_DIR/result.json: frames encoded, encoded from the connection on, decodable at the
receiver (aiortc: frames its decoder took; Chromium: framesDecoded), the longest gap between
two frames at the receiver and the gaps over 500 ms (freezes), the received video bit rate,
the summary's sent.video (what the receiver's reports say arrived) and its figures
(retransmissions, NACKs, keyframe requests), and the relay's counters.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PEERS = os.path.join(HERE, "..", "whip-peer")
sys.path.insert(0, HERE)
import shaped_link  # noqa: E402  (tc_rate, stop_pid)


def free_port(ns):
    """A TCP port free inside the namespace (for the peer's HTTP)."""
    out = subprocess.run(["ip", "netns", "exec", ns, "python3", "-c",
                          "import socket; s=socket.socket(); s.bind(('',0)); print(s.getsockname()[1])"],
                         capture_output=True, text=True, check=True).stdout
    return int(out.strip())


def read_lines(path):
    try:
        with open(path) as handle:
            return [json.loads(line) for line in handle if line.strip()]
    except (OSError, ValueError):
        return []


def start_peer(args, out):
    port = free_port(args.ns)
    script = "chromium_peer.py" if args.receiver == "chromium" else "whip_peer.py"
    command = ["ip", "netns", "exec", args.ns, "python3", os.path.join(PEERS, script), "--port",
               str(port), "--dir", os.path.join(out, "peer"), "--host", args.peer]
    if args.relay:
        command += ["--relay", args.relay + f" --seed {args.seed}"]
    log = open(os.path.join(out, "peer.log"), "w")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, text=True)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        if "listening on" in line:
            return process, port
    shaped_link.stop_pid(process.pid)
    raise SystemExit(f"whip_link: the {args.receiver} peer did not start (see {out}/peer.log)")


def analyse_aiortc(peer_dir, name):
    frames = [f for f in read_lines(os.path.join(peer_dir, name + ".frames.jsonl"))
              if f.get("kind") == "video"]
    decoded = [f for f in frames if f.get("decoded")]
    times = [f["recv_ns"] for f in frames]
    gaps = [(b - a) / 1e6 for a, b in zip(times, times[1:])]
    seconds = (times[-1] - times[0]) / 1e9 if len(times) > 1 else 0
    return {
        "received": len(frames), "decodable": len(decoded),
        "longest_gap_ms": round(max(gaps), 1) if gaps else None,
        "freezes_over_500ms": sum(1 for g in gaps if g > 500),
        "video_bps": int(sum(f["bytes"] for f in frames) * 8 / seconds) if seconds else None,
    }


def analyse_chromium(peer_dir, name):
    events = read_lines(os.path.join(peer_dir, name + ".events.jsonl"))
    stats = [e for e in events if e.get("event") in ("stats", "closed") and "framesDecoded" in e]
    last = stats[-1] if stats else {}
    # The video bit rate over the stats lines that carried frames.
    moving = [e for e in stats if e.get("framesDecoded", 0) > 0]
    rate = None
    if len(moving) > 1:
        span = (moving[-1]["time_ns"] - moving[0]["time_ns"]) / 1e9
        if span > 0:
            rate = int((moving[-1]["bytesReceived"] - moving[0]["bytesReceived"]) * 8 / span)
    return {
        "received": last.get("framesReceived"), "decodable": last.get("framesDecoded", 0),
        "longest_gap_ms": last.get("longest_gap_ms"),
        "freezes": last.get("freezeCount"), "freezes_s": last.get("totalFreezesDuration"),
        "video_bps": rate, "packets_lost": last.get("packetsLost"),
        "retransmitted_received": last.get("retransmittedPacketsReceived"),
    }


def run(args):
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    shaped_link.tc_rate(args.dev, args.nominal_bps * args.tbf)
    peer, port = start_peer(args, out)
    name = "run"
    status = os.path.join(out, "status.jsonl")
    command = [args.ingest, "live", "testsrc", "--duration", str(args.duration), "--size",
               args.size, "--bitrate", str(args.bitrate), "--fps", "30", "--to",
               f"whip+http://{args.peer}:{port}/whip/{name}", "--json", "--quiet", "--status",
               status]
    started = time.monotonic()
    with open(os.path.join(out, "ingest.json"), "w") as stdout, \
            open(os.path.join(out, "ingest.err"), "w") as stderr:
        code = subprocess.run(command, stdout=stdout, stderr=stderr,
                              timeout=args.duration + 120).returncode
    elapsed = time.monotonic() - started
    peer_dir = os.path.join(out, "peer")
    # The session is closed on the DELETE; the peer is stopped once its events say so.
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if any(e.get("event") == "closed" for e in read_lines(os.path.join(peer_dir, name + ".events.jsonl"))):
            break
        time.sleep(0.2)
    peer.send_signal(signal.SIGTERM)
    try:
        peer.wait(20)
    except subprocess.TimeoutExpired:
        shaped_link.stop_pid(peer.pid)
    try:
        with open(os.path.join(out, "ingest.json")) as handle:
            summary = json.load(handle)
    except (OSError, ValueError):
        summary = {}
    events = read_lines(status)
    connection_frame = next((e["report"]["frame"] for e in events
                             if isinstance(e.get("report"), dict)
                             and e["report"].get("event") == "applied"
                             and e["report"].get("request") == "keyframe"), None)
    encoded = (summary.get("appended") or {}).get("video", 0)
    receiver = (analyse_chromium if args.receiver == "chromium" else analyse_aiortc)(peer_dir, name)
    relay = next((e for e in read_lines(os.path.join(peer_dir, name + ".events.jsonl"))
                  if e.get("event") == "relay-final"), None)
    link = summary.get("link") or {}
    result = {
        "path": args.path, "label": args.label, "receiver": args.receiver, "exit": code,
        "elapsed_s": round(elapsed, 1), "nominal_video_bps": args.bitrate,
        "encoded": encoded, "before_connection": connection_frame,
        "sendable": encoded - connection_frame if connection_frame is not None else None,
        "summary_sent_video": (summary.get("sent") or {}).get("video"), "ok": summary.get("ok"),
        "rtx_packets": link.get("rtx_packets"), "nack_requests": link.get("nack_requests"),
        "nack_unserved": link.get("nack_unserved"),
        "possibly_lost": link.get("video_frames_possibly_lost"),
        "keyframe_requests": link.get("keyframe_requests"),
        "keyframes_for_unserved": link.get("keyframes_for_unserved"),
        "sessions": link.get("sessions"), "relay": relay, **receiver,
    }
    with open(os.path.join(out, "result.json"), "w") as handle:
        json.dump(result, handle, indent=1)
    print(json.dumps(result))


def percent(part, whole):
    return f"{part / whole * 100:.1f} %" if part is not None and whole else "–"


def report(args):
    rows = []
    runs = os.path.join(args.work, "whip-runs")
    for entry in sorted(os.listdir(runs)) if os.path.isdir(runs) else []:
        path = os.path.join(runs, entry, "result.json")
        if os.path.exists(path):
            with open(path) as handle:
                rows.append(json.load(handle))
    lines = [
        "| path | receiver | frames decodable (of those from the connection on) | of all encoded "
        "| longest gap | gaps > 500 ms | video bit rate (of nominal) | summary sent.video "
        "(vs receiver) | retransmitted / NACKed / too old | keyframe requests (receiver + too old) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        decodable = row.get("decodable") or 0
        sent = row.get("summary_sent_video")
        difference = (f"{(sent - decodable) / decodable * 100:+.1f} %"
                      if sent is not None and decodable else "–")
        freezes = row.get("freezes_over_500ms")
        if freezes is None and row.get("freezes") is not None:
            freezes = f"{row['freezes']} freezes, {row.get('freezes_s', 0):.2f} s (Chromium's)"
        rate = row.get("video_bps")
        # Chromium's gaps are differences of page timestamps: float milliseconds.
        gap = "-" if row.get("longest_gap_ms") is None else f"{row['longest_gap_ms']:.1f} ms"
        possibly = f", {row['possibly_lost']} possibly lost" if row.get("possibly_lost") else ""
        lines.append(
            f"| {row['label']} | {row['receiver']} "
            f"| {decodable} of {row.get('sendable')} ({percent(decodable, row.get('sendable'))}) "
            f"| {percent(decodable, row.get('encoded'))} "
            f"| {gap} | {freezes} "
            f"| {rate / 1e6 if rate else 0:.2f} Mb/s ({percent(rate, row.get('nominal_video_bps'))}) "
            f"| {sent} ({difference}{possibly}) "
            f"| {row.get('rtx_packets')} / {row.get('nack_requests')} / {row.get('nack_unserved')} "
            f"| {row.get('keyframe_requests')} + {row.get('keyframes_for_unserved')} |")
    table = "\n".join(lines) + "\n"
    with open(os.path.join(args.work, "whip-table.md"), "w") as handle:
        handle.write(table)
    with open(os.path.join(args.docs, "shaped-whip.md"), "w") as handle:
        handle.write(
            "# WHIP on the shaped-link paths\n\n"
            "Written by `Scripts/bench-support/whip_link.py report` (`shaped-link.sh`, "
            "SHAPED_WHIP): `ingest live testsrc --to whip+http://…` to a WebRTC receiver at its "
            "defaults in the benchmark's namespace, the impairment relay on the session's path "
            "(the same relay options as the SRT rows of the same name), tbf on the veth. "
            "Frames decodable: aiortc's decoder took them, or Chromium's framesDecoded. "
            "Gaps: between two frames at the receiver (aiortc: arrival; Chromium: presentation). "
            "The summary's sent.video is what the receiver's reports say arrived.\n\n"
            + table)
    print(table)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("run")
    one.add_argument("--ns", required=True)
    one.add_argument("--dev", required=True)
    one.add_argument("--peer", required=True)
    one.add_argument("--nominal-bps", type=int, required=True)
    one.add_argument("--tbf", type=float, default=1.0, help="tbf rate as a share of nominal")
    one.add_argument("--path", required=True)
    one.add_argument("--label", required=True)
    one.add_argument("--relay", default="")
    one.add_argument("--duration", type=int, default=45)
    one.add_argument("--out", required=True)
    one.add_argument("--ingest", required=True)
    one.add_argument("--receiver", choices=["aiortc", "chromium"], default="aiortc")
    one.add_argument("--size", default="1280x720")
    one.add_argument("--bitrate", type=int, default=2000000)
    one.add_argument("--seed", type=int, default=1)
    table = sub.add_parser("report")
    table.add_argument("--work", required=True)
    table.add_argument("--docs", required=True)
    args = parser.parse_args()
    run(args) if args.command == "run" else report(args)


if __name__ == "__main__":
    main()
