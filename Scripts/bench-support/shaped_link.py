#!/usr/bin/env python3
"""The shaped-link benchmark: one run of a sender through a tbf-shaped veth link into a network
namespace (`run`), optionally through udp_relay.py (delay, jitter, loss, blackouts) or to an RTMP
server there, and the analysis of every run into a markdown report with SVG charts (`report`).

Driven by Scripts/bench-support/shaped-link.sh, which creates and removes the namespace.

    shaped_link.py run --ns NS --dev VETH --peer ADDR --port P --nominal-bps L2_BPS \
        --link NAME --schedule "0:1.0,20:0.3,40:1.0" --duration D --out RUN_DIR \
        --sender KIND [--run K] [--receiver srt|rtmp] [--latency MS] \
        [--relay "RELAY OPTIONS" --seed N [--relay-at T:JSON ...]] -- SENDER COMMAND...
    shaped_link.py report --work WORK_DIR --docs DOCS_DIR --config CONFIG.json

Every process started here is stopped by its pid (its children first, read from /proc), with
SIGTERM then SIGKILL; every wait is bounded.

Clocks: every time stamp is CLOCK_MONOTONIC (time.monotonic_ns). The namespace shares the host's
clocks, so the receiver's arrival times and the sender's status lines are on one clock.
"""

import argparse
import bisect
import json
import math
import os
import shlex
import signal
import subprocess
import sys
import threading
import time

# A full SRT data packet on the veth: 1316 payload + 16 SRT + 8 UDP + 20 IPv4 + 14 Ethernet.
# tbf counts the whole frame; capacities are reported as payload (TS) bit rates.
WIRE_PER_PAYLOAD = (1316 + 16 + 8 + 20 + 14) / 1316
FPS = 30


def now_ns():
    return time.monotonic_ns()


# ---------------------------------------------------------------------------------------------
# Processes, stopped by pid


def children_of(pid):
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(value) for value in handle.read().split()]
    except OSError:
        pass
    return found


def stop_pid(pid, grace=5.0):
    """SIGTERM to the pid's descendants (deepest first) and the pid, SIGKILL after `grace`."""
    tree = []

    def walk(p):
        for child in children_of(p):
            walk(child)
        tree.append(p)

    walk(pid)
    for p in tree:
        try:
            os.kill(p, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if all(not os.path.exists(f"/proc/{p}") or zombie(p) for p in tree):
            return
        time.sleep(0.05)
    for p in tree:
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def tc_rate(dev, bps):
    """Sets the token bucket of `dev` (egress, towards the namespace) to `bps` (wire bits/s)."""
    rate = max(int(bps), 1000)
    # The queue holds at most 400 ms at the new rate (plus the burst); beyond, tbf drops.
    subprocess.run(
        ["tc", "qdisc", "change", "dev", dev, "root", "tbf", "rate", f"{rate}bit", "burst",
         "16kbit", "latency", "400ms"], check=True, timeout=10)


# ---------------------------------------------------------------------------------------------
# run

RTMP_MODULE = "/usr/lib/nginx/modules/ngx_rtmp_module.so"


def wait_for(condition, seconds):
    """Polls `condition` (for a state with nothing to wait on, such as a listening socket in
    another namespace) every 20 ms for at most `seconds`; whether it held."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def start_srt_receiver(args, out, arrivals, log, threads):
    """srt-live-transmit listening inside the namespace, its output read here so that every
    chunk gets an arrival time. Behind a relay it listens on 127.0.0.1:PORT+1 inside the
    namespace and the relay takes PEER:PORT."""
    host, port = ("127.0.0.1", args.port + 1) if args.relay else (args.peer, args.port)
    # Behind the relay, libsrt's own statistics (round trip, losses) every 1000 packets show
    # what the path did to the connection.
    stats = ["-s:1000", "-pf:json", f"-statsout:{os.path.join(out, 'receiver-stats.jsonl')}"] \
        if args.relay else []
    receiver = subprocess.Popen(
        ["ip", "netns", "exec", args.ns, "srt-live-transmit", "-a:yes", "-v", *stats,
         f"srt://{host}:{port}?mode=listener&latency={args.latency}", "file://con"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    listening = threading.Event()

    def read_output():
        total = 0
        fd = receiver.stdout.fileno()
        with open(os.path.join(out, "recv.ts"), "wb") as sink:
            while True:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                stamp = now_ns()
                sink.write(chunk)
                total += len(chunk)
                arrivals.append((stamp, total))

    def read_log():
        for line in receiver.stderr:
            text = line.decode(errors="replace").rstrip()
            log.append(f"{now_ns()} {text}")
            if "listen" in text:
                listening.set()
        listening.set()

    threads += [threading.Thread(target=read_output), threading.Thread(target=read_log)]
    for thread in threads[-2:]:
        thread.start()
    if not listening.wait(10) or receiver.poll() is not None:
        raise RuntimeError("receiver did not start: " + " | ".join(log[-5:]))
    return receiver


def start_rtmp_receiver(args, out, arrivals, log, threads, stop):
    """nginx with the rtmp module inside the namespace, recording the publish of
    rtmp://PEER:RTMP_PORT/live/recv to OUT/recv.flv. nginx writes each tag as it comes, so the
    file's size, sampled every 20 ms, stands for the arrival times."""
    config = os.path.join(out, "nginx.conf")
    with open(config, "w") as handle:
        handle.write(f"""daemon off;
master_process off;
pid {out}/nginx.pid;
error_log stderr notice;
load_module {RTMP_MODULE};
events {{ worker_connections 64; }}
rtmp {{
  access_log {out}/access.log;
  server {{
    listen {args.peer}:{args.rtmp_port};
    chunk_size 4096;
    application live {{ live on; record all; record_path {out}; }}
  }}
}}
""")
    log_file = open(os.path.join(out, "nginx.stderr"), "wb")
    receiver = subprocess.Popen(
        ["ip", "netns", "exec", args.ns, "nginx", "-p", out + "/", "-c", config, "-e", "stderr"],
        stdin=subprocess.DEVNULL, stdout=log_file, stderr=log_file)
    log_file.close()
    recording = os.path.join(out, "recv.flv")

    def watch_recording():
        last = -1
        while not stop.is_set():
            try:
                size = os.path.getsize(recording)
            except OSError:
                size = 0
            if size != last:
                arrivals.append((now_ns(), size))
                last = size
            stop.wait(0.02)

    def listening():
        if receiver.poll() is not None:
            raise RuntimeError("nginx exited: " + open(os.path.join(out, "nginx.stderr")).read())
        probe = subprocess.run(
            ["ip", "netns", "exec", args.ns, "ss", "-Hltn", f"sport = :{args.rtmp_port}"],
            capture_output=True, text=True, timeout=10)
        return bool(probe.stdout.strip())

    if not wait_for(listening, 10):
        raise RuntimeError("nginx is not listening after 10 s")
    log.append(f"{now_ns()} nginx listening on {args.peer}:{args.rtmp_port}")
    threads.append(threading.Thread(target=watch_recording))
    threads[-1].start()
    return receiver


def start_relay(args, lines, threads):
    """udp_relay.py inside the namespace, PEER:PORT -> 127.0.0.1:PORT+1, its output lines kept
    with the time each was read; returns once it says it is bound."""
    relay = subprocess.Popen(
        ["ip", "netns", "exec", args.ns, sys.executable, args.relay_script, "--listen",
         f"{args.peer}:{args.port}", "--forward", f"127.0.0.1:{args.port + 1}", "--seed",
         str(args.seed), "--realtime"] + shlex.split(args.relay),
        stdin=subprocess.PIPE if args.relay_at else subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT)
    ready = threading.Event()

    def read():
        for line in relay.stdout:
            text = line.decode(errors="replace").rstrip()
            lines.append(text)
            if text.startswith('{"ready"'):
                ready.set()
        ready.set()

    threads.append(threading.Thread(target=read))
    threads[-1].start()
    if not ready.wait(10) or relay.poll() is not None:
        raise RuntimeError("relay did not start: " + " | ".join(lines[-5:]))
    return relay


def relay_changes(items):
    """--relay-at T:JSON items -> [(seconds, JSON line)], each line checked to be JSON."""
    changes = []
    for item in items or []:
        at, _, line = item.partition(":")
        json.loads(line)
        changes.append((float(at), line))
    return changes


def blackout_windows(relay_lines):
    """[start_ns, end_ns or None] of each blackout the relay reported."""
    windows = []
    for text in relay_lines:
        try:
            event = json.loads(text)
        except ValueError:
            continue
        if event.get("event") == "blackout_start":
            windows.append([event["t_ns"], None])
        elif event.get("event") == "blackout_end" and windows and windows[-1][1] is None:
            windows[-1][1] = event["t_ns"]
    return windows


def run(args):
    out = args.out
    os.makedirs(out, exist_ok=True)
    schedule = [(float(t), float(f)) for t, f in
                (item.split(":") for item in args.schedule.split(","))]
    command = args.command[1:] if args.command and args.command[0] == "--" else args.command
    if not command:
        sys.exit("shaped_link.py run: no sender command")

    tc_rate(args.dev, args.nominal_bps * schedule[0][1])
    arrivals = []  # (ns, total bytes so far)
    receiver_log = []
    relay_lines = []
    threads = []
    stop_watching = threading.Event()
    receiver = relay = sender = None
    link_log = []
    relay_log = []  # (ns, JSON line sent to the relay)
    status = []
    result = {"link": args.link, "sender": args.sender, "duration": args.duration,
              "run": args.run, "receiver": args.receiver, "latency": args.latency,
              "relay": args.relay or None}
    try:
        if args.receiver == "rtmp":
            receiver = start_rtmp_receiver(args, out, arrivals, receiver_log, threads,
                                           stop_watching)
        else:
            receiver = start_srt_receiver(args, out, arrivals, receiver_log, threads)
        if args.relay:
            relay = start_relay(args, relay_lines, threads)

        # The sender, under /usr/bin/time -v (peak RSS of the process it runs).
        stderr_file = open(os.path.join(out, "sender.stderr"), "wb")
        start = now_ns()
        sender = subprocess.Popen(
            ["/usr/bin/time", "-v", "-o", os.path.join(out, "time.txt")] + command,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr_file)

        def read_status():
            for line in sender.stdout:
                status.append((now_ns(), line.decode(errors="replace").rstrip()))

        status_thread = threading.Thread(target=read_status)
        status_thread.start()

        # The link's schedule, on the same clock: tbf rates, and the relay's changes (a JSON
        # line on its standard input: a new delay after a handover, say).
        link_log.append((start, args.nominal_bps * schedule[0][1]))
        events = [(at, "tbf", fraction) for at, fraction in schedule[1:]]
        events += [(at, "relay", line) for at, line in relay_changes(args.relay_at)]
        for at, kind, value in sorted(events, key=lambda event: event[0]):
            due = start + int(at * 1e9)
            while now_ns() < due and sender.poll() is None:
                time.sleep(min(0.01, max(0, (due - now_ns()) / 1e9)))
            if sender.poll() is not None:
                break
            if kind == "tbf":
                tc_rate(args.dev, args.nominal_bps * value)
                link_log.append((now_ns(), args.nominal_bps * value))
            elif relay is not None and relay.poll() is None:
                relay.stdin.write((value + "\n").encode())
                relay.stdin.flush()
                relay_log.append((now_ns(), value))

        deadline = start + int((args.duration + args.grace) * 1e9)
        while sender.poll() is None and now_ns() < deadline:
            time.sleep(0.05)
        if sender.poll() is None:
            result["timed_out"] = True
            stop_pid(sender.pid)
        sender.wait(timeout=10)
        end = now_ns()
        result["exit_status"] = sender.returncode
        status_thread.join(timeout=10)
        stderr_file.close()
        # What is still in flight (the SRT latency, the tbf queue, a relay's delay) reaches the
        # receiver; nginx closes the recording when the publisher's session ends.
        if args.receiver == "rtmp":
            # A sender that never published leaves no line: the wait ends at its bound.
            result["session_closed"] = wait_for(
                lambda: "PUBLISH" in read_text(os.path.join(out, "access.log")), 20)
        time.sleep(max(1.5, args.latency / 1000 + 1.3))
        result.update(start_ns=start, end_ns=end)
    finally:
        if sender is not None and sender.poll() is None:
            stop_pid(sender.pid)
        for process in (receiver, relay):
            if process is not None:
                stop_pid(process.pid)
                process.wait(timeout=10)
        stop_watching.set()
        for thread in threads:
            thread.join(timeout=10)
        tc_rate(args.dev, args.nominal_bps)

    with open(os.path.join(out, "arrivals.txt"), "w") as handle:
        handle.writelines(f"{t} {n}\n" for t, n in arrivals)
    with open(os.path.join(out, "status.txt"), "w") as handle:
        handle.writelines(f"{t} {line}\n" for t, line in status)
    with open(os.path.join(out, "receiver.log"), "w") as handle:
        handle.writelines(line + "\n" for line in receiver_log)
    if relay is not None:
        with open(os.path.join(out, "relay.jsonl"), "w") as handle:
            handle.writelines(line + "\n" for line in relay_lines)
        final = next((line for line in reversed(relay_lines) if line.startswith('{"final"')),
                     None)
        with open(os.path.join(out, "relay-final.json"), "w") as handle:
            handle.write((final or "null") + "\n")
        result["blackouts"] = blackout_windows(relay_lines)
        result["relay_changes"] = [[t, line] for t, line in relay_log]
    result["link_log"] = link_log
    result["nominal_bps"] = args.nominal_bps
    result["command"] = command
    with open(os.path.join(out, "run.json"), "w") as handle:
        json.dump(result, handle, indent=1)
    print(f"shaped-link: {args.link} / {args.sender}: exit {result.get('exit_status')}, "
          f"{arrivals[-1][1] if arrivals else 0} bytes received", file=sys.stderr)


def read_text(path):
    try:
        with open(path, errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


# ---------------------------------------------------------------------------------------------
# Transport stream reading


def ts_video_pes(path):
    """The video PES of a transport stream: a list of (pts, offset of its last TS packet).

    Finds the video PID from the PAT and PMT (stream type 0x1b, H.264); resynchronises on 0x47.
    """
    with open(path, "rb") as handle:
        data = handle.read()
    pmt_pids = set()
    video_pid = None
    result = []
    current = None  # [pts, last offset]
    offset = 0
    size = len(data)
    while offset + 188 <= size:
        if data[offset] != 0x47:
            offset += 1
            continue
        packet = data[offset:offset + 188]
        pid = ((packet[1] & 0x1F) << 8) | packet[2]
        pusi = packet[1] & 0x40
        control = (packet[3] >> 4) & 3
        payload = 4
        if control & 2:
            payload += 1 + packet[4]
        if control & 1 and payload < 188:
            body = packet[payload:]
            if pid == 0 and pusi:
                pointer = body[0]
                table = body[1 + pointer:]
                length = ((table[1] & 0x0F) << 8) | table[2]
                entries = table[8:3 + length - 4]
                for i in range(0, len(entries) - 3, 4):
                    number = (entries[i] << 8) | entries[i + 1]
                    if number != 0:
                        pmt_pids.add(((entries[i + 2] & 0x1F) << 8) | entries[i + 3])
            elif pid in pmt_pids and pusi and video_pid is None:
                pointer = body[0]
                table = body[1 + pointer:]
                length = ((table[1] & 0x0F) << 8) | table[2]
                info = ((table[10] & 0x0F) << 8) | table[11]
                i = 12 + info
                while i + 5 <= 3 + length - 4:
                    kind = table[i]
                    epid = ((table[i + 1] & 0x1F) << 8) | table[i + 2]
                    elen = ((table[i + 3] & 0x0F) << 8) | table[i + 4]
                    if kind in (0x1B, 0x24) and video_pid is None:
                        video_pid = epid
                    i += 5 + elen
            elif pid == video_pid:
                if pusi and len(body) >= 14 and body[0:3] == b"\x00\x00\x01" and body[7] & 0x80:
                    p = body[9:14]
                    pts = (((p[0] >> 1) & 7) << 30) | (p[1] << 22) | ((p[2] >> 1) << 15) | \
                        (p[3] << 7) | (p[4] >> 1)
                    if current:
                        result.append(tuple(current))
                    current = [pts, offset]
                elif current:
                    current[1] = offset
        offset += 188
    if current:
        result.append(tuple(current))
    return result


def first_video_pts(path):
    pes = ts_video_pes(path)
    return pes[0][0] if pes else None


def first_pts_any(path, packets=20000):
    """The smallest PTS among the first PES of every PID (audio starts one AAC frame before
    video: the encoder's priming), i.e. media time 0 of the sender's clock."""
    with open(path, "rb") as handle:
        data = handle.read(188 * packets)
    seen = {}
    for offset in range(0, len(data) - 187, 188):
        packet = data[offset:offset + 188]
        if packet[0] != 0x47 or not packet[1] & 0x40:
            continue
        pid = ((packet[1] & 0x1F) << 8) | packet[2]
        control = (packet[3] >> 4) & 3
        start = 4 + (1 + packet[4] if control & 2 else 0)
        body = packet[start:]
        if pid in seen or len(body) < 14 or body[0:3] != b"\x00\x00\x01" or not body[7] & 0x80:
            continue
        p = body[9:14]
        seen[pid] = (((p[0] >> 1) & 7) << 30) | (p[1] << 22) | ((p[2] >> 1) << 15) | \
            (p[3] << 7) | (p[4] >> 1)
    return min(seen.values()) if seen else None


def unwrap(pts, reference):
    """PTS are 33 bits; brings `pts` to the period nearest `reference`."""
    period = 1 << 33
    while pts - reference > period // 2:
        pts -= period
    while reference - pts > period // 2:
        pts += period
    return pts


# ---------------------------------------------------------------------------------------------
# report


def percentile(values, fraction):
    if not values:
        return None
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))
    return ordered[index]


def capacity_at(link_log, start, t):
    """The wire capacity (bits/s) at `t` seconds after `start`."""
    rate = link_log[0][1]
    for stamp, value in link_log:
        if (stamp - start) / 1e9 <= t:
            rate = value
    return rate


def capacity_integral(link_log, start, duration):
    """Wire bits the link could carry in [0, duration] s."""
    total = 0.0
    steps = [((stamp - start) / 1e9, value) for stamp, value in link_log]
    for index, (at, value) in enumerate(steps):
        until = steps[index + 1][0] if index + 1 < len(steps) else duration
        at, until = max(0.0, at), min(duration, until)
        if until > at:
            total += value * (until - at)
    return total


def tool(arguments, timeout=600):
    return subprocess.run(arguments, capture_output=True, text=True, timeout=timeout)


FLV_AUDIO, FLV_VIDEO = 8, 9


def flv_frames(path):
    """The audio and video frames of an FLV file, (tag type, timestamp ms, offset just past the
    tag), without the codec configuration tags; a truncated last tag is left out."""
    with open(path, "rb") as handle:
        data = handle.read()
    if len(data) < 13 or data[:3] != b"FLV":
        return []
    offset = int.from_bytes(data[5:9], "big") + 4
    frames = []
    while offset + 13 <= len(data):
        kind = data[offset] & 0x1F
        size = int.from_bytes(data[offset + 1:offset + 4], "big")
        stamp = int.from_bytes(data[offset + 4:offset + 7], "big") | data[offset + 7] << 24
        end = offset + 11 + size
        if end > len(data):
            break
        # Byte 1 of an AVC or AAC tag's data is its packet type: 0 is the configuration.
        if kind in (FLV_AUDIO, FLV_VIDEO) and size >= 2 and data[offset + 12] != 0:
            frames.append((kind, stamp, end))
        offset = end + 4
    return frames


def back_at_rate(arrivals, since, until, bps):
    """Seconds from `since` (ns) to the start of the first 1 s window, tried every 0.1 s, in
    which the receiver got 90 % of `bps`; None when no such window ends by `until`."""
    times = [t for t, _ in arrivals]

    def bytes_by(t):
        index = bisect.bisect_right(times, t)
        return arrivals[index - 1][1] if index else 0

    at = since
    while at + 1_000_000_000 <= until:
        if (bytes_by(at + 1_000_000_000) - bytes_by(at)) * 8 >= 0.9 * bps:
            return (at - since) / 1e9
        at += 100_000_000
    return None


def analyse(run_dir, config):
    with open(os.path.join(run_dir, "run.json")) as handle:
        run_info = json.load(handle)
    flv = run_info.get("receiver") == "rtmp"
    recv = os.path.join(run_dir, "recv.flv" if flv else "recv.ts")
    duration = run_info["duration"]
    start = run_info["start_ns"]
    link_log = run_info["link_log"]
    sender = run_info["sender"]
    frames_expected = int(duration * FPS)
    row = {"link": run_info["link"], "sender": sender, "exit_status": run_info.get("exit_status"),
           "timed_out": run_info.get("timed_out", False), "frames_expected": frames_expected,
           "run": run_info.get("run", 1), "receiver": run_info.get("receiver", "srt"),
           "receiver_latency": run_info.get("latency", 200)}
    size = os.path.getsize(recv) if os.path.exists(recv) else 0
    row["received_bytes"] = size

    arrivals = []
    with open(os.path.join(run_dir, "arrivals.txt")) as handle:
        for line in handle:
            t, n = line.split()
            arrivals.append((int(t), int(n)))

    # Delivered bit rate, 1 s bins of arrival time (payload bits).
    bins = [0] * (int(duration) + 15)
    previous = 0
    for t, n in arrivals:
        second = int((t - start) / 1e9)
        if 0 <= second < len(bins):
            bins[second] += (n - previous) * 8
        previous = n
    row["delivered_series"] = bins

    # Link utilisation: payload bits received / payload bits the link could carry in [0, D].
    capacity_bits = capacity_integral(link_log, start, duration) / WIRE_PER_PAYLOAD
    row["utilisation"] = size * 8 / capacity_bits if capacity_bits > 0 else None
    # Bit rate: the mean delivered over the content against the same stream written to a file
    # (TS for SRT, FLV for RTMP: FLV carries one audio track and less overhead).
    nominal_stream = config["flv_stream_bps"] if flv else config["stream_bps"]
    row["bitrate_pct"] = 100 * size * 8 / duration / nominal_stream

    # Frames decodable at the receiver, decode errors, and audio frames against the content's.
    row["audio_frames"] = row["audio_frames_expected"] = None
    if size > 0:
        probe = tool(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
                      "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", recv])
        try:
            row["frames_decoded"] = int(probe.stdout.split()[0].strip(","))
        except (ValueError, IndexError):
            row["frames_decoded"] = 0
        errors = tool(["ffmpeg", "-nostdin", "-v", "error", "-i", recv, "-f", "null", "-"])
        row["decode_errors"] = len([line for line in errors.stderr.splitlines() if line.strip()])
        frames = tool(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                       "frame=pts", "-of", "csv=p=0", recv])
        decoded_pts = []
        for line in frames.stdout.splitlines():
            value = line.strip().strip(",")
            if value and value != "N/A":
                decoded_pts.append(int(value))
        audio = tool(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "a:0",
                      "-show_entries", "stream=nb_read_frames,sample_rate", "-of", "json", recv])
        try:
            stream = json.loads(audio.stdout)["streams"][0]
            row["audio_frames"] = int(stream["nb_read_frames"])
            # AAC: 1024 samples a frame.
            row["audio_frames_expected"] = int(duration * int(stream["sample_rate"]) / 1024)
        except (ValueError, KeyError, IndexError):
            pass
    else:
        row["frames_decoded"] = 0
        row["decode_errors"] = 0
        decoded_pts = []

    # Which source frame each decoded frame is. TS: its PTS against the first video PTS of the
    # same sender's stream written to a file (the same timeline, no network). FLV: nginx
    # records timestamps from the start of the publish, so against the first video tag (TCP
    # loses nothing, so that tag is the first frame the sender sent).
    pts0 = config["pts0"].get(f"{sender}-{int(duration)}")
    # (a)'s media time 0 is its first video frame (the encoder's epoch_ns); see sender_anchor.
    media0 = config["media0"].get(f"{sender}-{int(duration)}", pts0)
    if flv:
        video = [(stamp, end) for kind, stamp, end in flv_frames(recv) if kind == FLV_VIDEO] \
            if size else []
        first_video_s = (pts0 - media0) / 90000 if pts0 is not None else 0
        pts0 = video[0][0] if video else 0
        # (media seconds of the frame, offset just past it) for the latency below.
        received = [(first_video_s + (stamp - pts0) / 1000, end) for stamp, end in video]
        indices = {round((p - pts0) * FPS / 1000) for p in decoded_pts}
    else:
        pes = ts_video_pes(recv) if size else []
        if pts0 is None:
            pts0 = pes[0][0] if pes else 0
            media0 = pts0
            row["pts0_from_receiver"] = True
        received = [((unwrap(pts, media0) - media0) / 90000, offset + 188)
                    for pts, offset in pes]
        indices = {round((unwrap(p, pts0) - pts0) * FPS / 90000) for p in decoded_pts}
    indices = sorted(i for i in indices if 0 <= i < frames_expected)
    row["frames_delivered"] = len(indices)
    # Longest freeze: the largest gap between consecutive decoded frames, counting from the
    # first frame of the content and to its last (a missing head or tail is a freeze too).
    edges = [-1] + indices + [frames_expected]
    row["longest_freeze_s"] = max(b - a for a, b in zip(edges, edges[1:])) / FPS if indices \
        else duration

    # End-to-end latency: arrival of each video frame's last byte minus its capture time, where
    # capture = the sender's clock anchor + the frame's media time. How far behind live the
    # recording ends: the latency of the last frame that arrived.
    anchor = sender_anchor(run_dir, sender)
    row["anchor_method"] = anchor[1]
    if anchor[0] is not None:
        row["anchor_after_start_ms"] = (anchor[0] - start) / 1e6
    latencies = []
    if anchor[0] is not None and received:
        ends = [n for _, n in arrivals]
        for media, end in received:
            index = bisect.bisect_left(ends, end)
            if index >= len(arrivals):
                continue
            latencies.append((arrivals[index][0] - (anchor[0] + media * 1e9)) / 1e6)
    row["latency_p50_ms"] = percentile(latencies, 0.5)
    row["latency_p95_ms"] = percentile(latencies, 0.95)
    row["behind_live_s"] = latencies[-1] / 1000 if latencies else None

    # Blackouts (relay): from each one's end, until 1 s of arrivals carries 90 % of the
    # stream's rate again, before the next blackout starts (or the receiver's last byte).
    windows = [(begin, end) for begin, end in run_info.get("blackouts", [])
               if end is not None and end < run_info["end_ns"]]
    if windows:
        last = arrivals[-1][0] if arrivals else start
        limits = [windows[index + 1][0] if index + 1 < len(windows) else last
                  for index in range(len(windows))]
        row["blackout_recovery_s"] = [back_at_rate(arrivals, end, limit, nominal_stream)
                                      for (_, end), limit in zip(windows, limits)]
        # How long each search could last: to the next blackout, or the last byte received.
        row["blackout_search_s"] = [(limit - end) / 1e9 for (_, end), limit in zip(windows, limits)]
        row["blackouts_s"] = [[(begin - start) / 1e9, (end - start) / 1e9]
                              for begin, end in windows]
    relay_final = os.path.join(run_dir, "relay-final.json")
    if os.path.exists(relay_final):
        with open(relay_final) as handle:
            row["relay_counters"] = json.load(handle)
        row["srt_rtt_ms"] = srt_round_trip(os.path.join(run_dir, "receiver-stats.jsonl"))

    # Rate events (ingest live): the target over time, settling and recovery around the step.
    targets = []
    with open(os.path.join(run_dir, "status.txt")) as handle:
        for line in handle:
            stamp, _, text = line.partition(" ")
            try:
                event = json.loads(text)
            except ValueError:
                continue
            if isinstance(event, dict) and event.get("event") == "rate":
                targets.append((float(event["t"]), int(event["target_bps"])))
    row["target_series"] = targets
    if run_info["link"] == "step":
        row.update(step_times(config, targets, bins))

    # Peak RSS of the process under /usr/bin/time, and the pipeline's own figure when it has one.
    row["peak_rss_mb"] = None
    try:
        with open(os.path.join(run_dir, "time.txt")) as handle:
            for line in handle:
                if "Maximum resident set size" in line:
                    row["peak_rss_mb"] = int(line.split(":")[1]) * 1024 / 1e6
    except OSError:
        pass
    # ingest's --json summary: its verdict, and what it says it delivered, beside the receiver.
    summary = last_summary(run_dir)
    if summary:
        if summary.get("peak_resident"):
            row["peak_resident_mb"] = summary["peak_resident"] / 1e6
        row["ok"] = summary.get("ok")
        row["summary_video_sent"] = summary.get("sent", {}).get("video")
        row["summary_video_appended"] = summary.get("appended", {}).get("video")
        row["summary_undelivered"] = summary.get("undelivered")
        # Frames the summary counts as sent but names as possibly lost (SRT: acknowledged only
        # at their play-out deadline, or after a lost frame before the next keyframe).
        possibly = (summary.get("link") or {}).get("possibly_lost") or {}
        row["summary_possibly_lost"] = possibly.get("video")
        if isinstance(summary.get("encoder"), dict) and summary["encoder"].get("peak_resident"):
            row["encoder_peak_resident_mb"] = summary["encoder"]["peak_resident"] / 1e6
    # SHAPED_SSIM=0 leaves SSIM out: it decodes every run against the pattern again, about a
    # minute of a core per run.
    wanted = os.environ.get("SHAPED_SSIM", "1") != "0"
    row["ssim"] = ssim(recv, pts0, frames_expected, config) if indices and wanted else None
    return row


def srt_round_trip(path):
    """The median of the round trips (ms) libsrt reported at the receiver while data came."""
    values = []
    for text in read_text(path).splitlines():
        try:
            report = json.loads(text)
            if report["recv"]["packets"] > 0:
                values.append(float(report["link"]["rtt"]))
        except (ValueError, KeyError, TypeError):
            continue
    return percentile(values, 0.5)


def step_times(config, targets, bins):
    """Settling after the step down and recovery after the step up.

    For the rate controller (rate events): settled = the first target at or below the low
    capacity (payload) from which the target stays below it until the step up; back to nominal =
    the first target at 95 % of the nominal bitrate after the step up. From the receiver for
    every sender: delivered back to nominal = the first 1 s bin after the step up that carries
    90 % of the stream's nominal payload rate.
    """
    down, up, low = config["step"]["down"], config["step"]["up"], config["step"]["low"]
    low_capacity = config["nominal_bps"] * low / WIRE_PER_PAYLOAD
    result = {}
    if targets:
        during = [(t, v) for t, v in targets if down <= t < up]
        settled = None
        for index, (t, v) in enumerate(during):
            if all(value <= low_capacity for _, value in during[index:]):
                settled = t - down
                break
        result["settle_s"] = settled
        back = next((t - up for t, v in targets if t >= up and v >= 0.95 * config["bitrate"]), None)
        result["back_to_nominal_s"] = back
    stream = config["stream_bps"]
    back = next((second - up for second in range(int(up), len(bins))
                 if bins[second] >= 0.9 * stream), None)
    result["delivered_back_s"] = back
    return result


def sender_anchor(run_dir, sender):
    """The monotonic time (ns) at which the sender's media clock read 0.

    ingest: `t` of each status line is seconds of the run, and with realtime pacing the sample at
    media offset m is appended at t = m; the line is stamped when it is read here, so
    stamp - t >= anchor, and the smallest is the anchor (plus the pipe's delay).
    ffmpeg: the same with `out_time_us` of its -progress blocks (the media time written so far).
    """
    best = None
    method = None
    with open(os.path.join(run_dir, "status.txt")) as handle:
        for line in handle:
            _, _, text = line.partition(" ")
            if '"encoderReport"' in text and '"started"' in text:
                try:
                    report = json.loads(text)["report"]
                    return int(report["epoch_ns"]), "encoder epoch_ns"
                except (ValueError, KeyError, TypeError):
                    pass
    with open(os.path.join(run_dir, "status.txt")) as handle:
        for line in handle:
            stamp, _, text = line.partition(" ")
            stamp = int(stamp)
            if text.startswith("{"):
                try:
                    event = json.loads(text)
                except ValueError:
                    continue
                if isinstance(event, dict) and "t" in event and event.get("event") != "summary":
                    value = stamp - float(event["t"]) * 1e9
                    method = "status t"
                else:
                    continue
            elif text.startswith("out_time_us="):
                try:
                    value = stamp - int(text.split("=")[1]) * 1000
                except ValueError:
                    continue
                method = "progress out_time"
            else:
                continue
            best = value if best is None else min(best, value)
    return best, method


def last_summary(run_dir):
    summary = None
    with open(os.path.join(run_dir, "status.txt")) as handle:
        for line in handle:
            _, _, text = line.partition(" ")
            if text.startswith("{"):
                try:
                    event = json.loads(text)
                except ValueError:
                    continue
                if isinstance(event, dict) and "appended" in event and "sent" in event:
                    summary = event
    return summary


def ssim(recv, pts0, frames, config):
    """SSIM (all planes) of what a viewer of the received stream sees against the test pattern.

    The received frames are put on the source's timeline (PTS - first PTS of the same sender's
    file output), then `fps` repeats the previous frame wherever one is missing (a freeze is what
    a viewer sees), the head is padded with the first frame and the tail with the last, and
    `ssim` compares frame by frame with lavfi testsrc2 (what ingest-encode encodes) for the
    whole content.
    """
    size = config["size"]
    graph = (f"[0:v]setpts=PTS-{pts0},fps={FPS}:start_time=0:round=near,"
             f"tpad=stop_mode=clone:stop=-1,trim=end_frame={frames}[rx];"
             f"testsrc2=size={size}:rate={FPS},trim=end_frame={frames},format=yuv420p[ref];"
             f"[rx][ref]ssim")
    result = tool(["ffmpeg", "-nostdin", "-v", "info", "-copyts", "-i", recv, "-filter_complex",
                   graph, "-f", "null", "-"], timeout=900)
    for line in result.stderr.splitlines():
        if "SSIM " in line and "All:" in line:
            return float(line.split("All:")[1].split()[0])
    return None


def svg_chart(path, title, subtitle, duration, capacity_steps, series, y_max, shaded=()):
    """A line chart: capacity as a step line, per sender delivered (solid) and target (dashed),
    and `shaded` (start, end) seconds (blackouts) as grey bands."""
    width, height, left, right, top, bottom = 1000, 420, 70, 230, 60, 50
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(t):
        return left + plot_w * min(max(t, 0), duration) / duration

    def y(v):
        return top + plot_h * (1 - min(v, y_max) / y_max)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{left}" y="22" font-size="16" font-weight="bold">{escape(title)}</text>',
             f'<text x="{left}" y="42" fill="#555">{escape(subtitle)}</text>']
    step = nice_step(y_max, 5)
    value = 0.0
    while value <= y_max + 1e-9:
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(value):.1f}" '
                     f'y2="{y(value):.1f}" stroke="#ddd"/>')
        parts.append(f'<text x="{left - 8}" y="{y(value) + 4:.1f}" text-anchor="end">'
                     f'{value / 1e6:g}</text>')
        value += step
    tstep = nice_step(duration, 8)
    t = 0.0
    while t <= duration + 1e-9:
        parts.append(f'<text x="{x(t):.1f}" y="{top + plot_h + 18}" text-anchor="middle">'
                     f'{t:g}</text>')
        t += tstep
    parts.append(f'<text x="{left + plot_w / 2}" y="{height - 10}" text-anchor="middle">'
                 f'seconds since the sender started</text>')
    parts.append(f'<text x="18" y="{top + plot_h / 2}" text-anchor="middle" '
                 f'transform="rotate(-90 18 {top + plot_h / 2})">Mb/s (TS payload)</text>')
    parts.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" '
                 f'stroke="#888"/>')
    legend = []
    for begin, end in shaded:
        width_px = max(0.0, x(end) - x(begin))
        parts.append(f'<rect x="{x(begin):.1f}" y="{top}" width="{width_px:.1f}" '
                     f'height="{plot_h}" fill="#000" opacity="0.08"/>')
    if shaded:
        legend.append(("blackout", "#bbb", "", 1))
    points = []
    for index, (at, value) in enumerate(capacity_steps):
        if index:
            points.append(f"{x(at):.1f},{y(capacity_steps[index - 1][1]):.1f}")
        points.append(f"{x(at):.1f},{y(value):.1f}")
    points.append(f"{x(duration):.1f},{y(capacity_steps[-1][1]):.1f}")
    parts.append(f'<polyline points="{" ".join(points)}" fill="none" stroke="#000" '
                 f'stroke-width="2.5" opacity="0.35"/>')
    legend.append(("link capacity", "#000", "", 0.35))
    for name, color, dashed, values in series:
        if not values:
            continue
        coords = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in values if t <= duration)
        dash = ' stroke-dasharray="6,4"' if dashed else ""
        parts.append(f'<polyline points="{coords}" fill="none" stroke="{color}" '
                     f'stroke-width="1.6"{dash}/>')
        legend.append((name, color, dash, 1))
    for index, (name, color, dash, opacity) in enumerate(legend):
        ly = top + 10 + index * 20
        lx = left + plot_w + 14
        parts.append(f'<line x1="{lx}" x2="{lx + 26}" y1="{ly}" y2="{ly}" stroke="{color}" '
                     f'stroke-width="2"{dash} opacity="{opacity}"/>')
        parts.append(f'<text x="{lx + 32}" y="{ly + 4}">{escape(name)}</text>')
    parts.append("</svg>")
    with open(path, "w") as handle:
        handle.write("\n".join(parts) + "\n")


def nice_step(span, count):
    raw = span / count if span > 0 else 1
    magnitude = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if magnitude * factor >= raw:
            return magnitude * factor
    return magnitude * 10


def escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


SENDER_NAMES = {"live": "(a) ingest live", "replay": "(b) ingest replay", "ffmpeg": "(c) ffmpeg"}
SHORT_NAMES = {"live": "(a) live", "replay": "(b) replay", "ffmpeg": "(c) ffmpeg"}
SENDER_COLORS = {"live": "#1f77b4", "replay": "#2ca02c", "ffmpeg": "#d62728"}


def fmt(value, digits=0, suffix=""):
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}{suffix}"
    return f"{value}{suffix}"


def run_dirs(work, link, sender, runs):
    """The run directories of one (link, sender): LINK-SENDER, or LINK-SENDER-K for K of N runs."""
    if runs == 1:
        return [os.path.join(work, "runs", f"{link}-{sender}")]
    return [os.path.join(work, "runs", f"{link}-{sender}-{k}") for k in range(1, runs + 1)]


def median_row(rows):
    """The run in the middle by frames delivered (then bytes received); the lower of two."""
    ordered = sorted(rows, key=lambda row: (row["frames_delivered"], row["received_bytes"]))
    return ordered[(len(ordered) - 1) // 2]


def report(args):
    with open(args.config) as handle:
        config = json.load(handle)
    runs = config.get("runs", 1)
    rows = []  # the median run of each (link, sender)
    every_run = []
    for link in config["links"]:
        for sender in config["senders"]:
            group = []
            for run_dir in run_dirs(args.work, link["name"], sender, runs):
                if not os.path.exists(os.path.join(run_dir, "run.json")):
                    continue
                cached = os.path.join(run_dir, "analysis.json")
                if args.reuse and os.path.exists(cached):
                    with open(cached) as handle:
                        row = json.load(handle)
                else:
                    print(f"shaped-link: analysing {os.path.basename(run_dir)}", file=sys.stderr)
                    row = analyse(run_dir, config)
                row["link_label"] = link["label"]
                group.append(row)
                with open(os.path.join(run_dir, "analysis.json"), "w") as handle:
                    json.dump(row, handle, indent=1)
            if group:
                median = dict(median_row(group), runs_of=len(group))
                rows.append(median)
                every_run += group
    os.makedirs(args.docs, exist_ok=True)
    reference = os.path.join(args.work, f"ref-replay-{config['seconds_fixed']}.ts")
    if os.path.exists(reference) and "ssim_ceiling" not in config:
        value = ssim(reference, config["pts0"][f"replay-{config['seconds_fixed']}"],
                     int(config["seconds_fixed"] * FPS), config)
        config["ssim_ceiling"] = f"{value:.3f}" if value is not None else "-"
    charts = []
    nominal_payload = config["nominal_bps"] / WIRE_PER_PAYLOAD
    for link in config["links"]:
        link_rows = [row for row in rows if row["link"] == link["name"]]
        if not link_rows:
            continue
        duration = link["duration"]
        steps = [(at, nominal_payload * fraction) for at, fraction in link["schedule"]]
        series = []
        for row in link_rows:
            delivered = [(second + 0.5, bits) for second, bits in
                         enumerate(row["delivered_series"][:int(duration)])]
            name = SHORT_NAMES.get(row["sender"], row["sender"])
            color = SENDER_COLORS.get(row["sender"], "#444")
            series.append((name + " delivered", color, False, delivered))
            if row["target_series"]:
                target = []
                for index, (t, v) in enumerate(row["target_series"]):
                    if index:
                        target.append((t, row["target_series"][index - 1][1]))
                    target.append((t, v))
                target.append((duration, row["target_series"][-1][1]))
                series.append((name + " target", color, True, target))
        rtmp = link.get("receiver") == "rtmp"
        if any(not row["target_series"] for row in link_rows):
            stream = config["flv_stream_bps"] if rtmp else config["stream_bps"]
            series.append(("fixed stream rate (b, c)", "#777", True,
                           [(0, stream), (duration, stream)]))
        peak = max([nominal_payload] + [v for _, v in steps]
                   + [v for _, _, _, values in series for _, v in values])
        name = f"shaped-{link['name']}.svg"
        svg_chart(os.path.join(args.docs, name), f"Shaped link: {link['label']}",
                  f"{path_text(link)}, nominal {nominal_payload / 1e6:.2f} Mb/s of TS; "
                  f"delivered = bytes at the receiver per second",
                  duration, steps, series, peak * 1.1,
                  shaded=link_rows[0].get("blackouts_s", []))
        charts.append((link["label"], name))
    write_markdown(args, config, rows, every_run, charts)


def link_latency(link):
    """The link's SRT latency setting: receiver, ingest and ffmpeg (ms, or "auto" for ingest)."""
    return link.get("latency") or {"receiver": 200, "ingest": 200, "ffmpeg": 200}


def path_text(link):
    """How a link is made, for a chart's subtitle."""
    latency = link_latency(link)
    if link.get("receiver") == "rtmp":
        return "RTMP over tbf on a veth pair"
    where = f"UDP relay ({link['relay']}) behind tbf" if link.get("relay") else \
        "tbf on a veth pair"
    if latency["receiver"] == latency["ingest"] == latency["ffmpeg"]:
        return f"{where}, SRT latency {latency['receiver']} ms"
    return (f"{where}, SRT latency {latency['receiver']} ms at the receiver, ingest "
            f"{latency['ingest']}, ffmpeg {latency['ffmpeg']}")


TABLE_HEADER = (
    "| link | sender | SRT latency (ms, receiver / sender) | exit | ok | frames delivered / "
    "decoded of source | ingest summary: video sent of appended / undelivered | longest freeze "
    "(s) | decode errors | audio frames delivered of expected | link utilisation | bitrate "
    "(% of nominal) | latency p50 / p95 (ms) | behind live at the end (s) | settle / back to "
    "nominal (target, s) | delivered back to nominal (s) | SSIM | peak RSS (MB) |")


def table_row(row, config, link):
    """The cells of a results row after its link and sender (and run)."""
    frames = f"{row['frames_delivered']} / {row['frames_decoded']} of " \
             f"{row['frames_expected']} ({100 * row['frames_delivered'] / row['frames_expected']:.0f} %)"
    step = "-"
    back = "-"
    if row["link"] == "step":
        left = config["seconds_step"] - config["step"]["up"]
        never = f"not within {left:g}"
        if row["target_series"]:
            settle = fmt(row.get("settle_s"), 1) if row.get("settle_s") is not None \
                else f"not within {config['step']['up'] - config['step']['down']:g}"
            again = fmt(row.get("back_to_nominal_s"), 1) \
                if row.get("back_to_nominal_s") is not None else never
            step = f"{settle} / {again}"
        else:
            step = "n/a (fixed rate)"
        back = fmt(row.get("delivered_back_s")) if row.get("delivered_back_s") is not None \
            else never
    elif row.get("blackout_recovery_s"):
        # One figure per blackout, from its end.
        back = ", ".join(fmt(value, 1) if value is not None else f"not within {limit:.0f}"
                         for value, limit in zip(row["blackout_recovery_s"],
                                                 row["blackout_search_s"])) + " (per blackout)"
    rss = fmt(row["peak_rss_mb"], 1)
    if row.get("peak_resident_mb") is not None and row["sender"] == "live":
        rss = f"{row['peak_resident_mb']:.1f} (VmHWM)"
        if row.get("encoder_peak_resident_mb") is not None:
            rss += f"; encoder {row['encoder_peak_resident_mb']:.0f}"
    exit_text = str(row["exit_status"]) + (" (killed)" if row["timed_out"] else "")
    latency = link_latency(link)
    if row.get("receiver") == "rtmp":
        latency_cell = "n/a (RTMP)"
    else:
        own = latency["ffmpeg" if row["sender"] == "ffmpeg" else "ingest"]
        latency_cell = f"{latency['receiver']} / {own}"
    ok = {True: "true", False: "false"}.get(row.get("ok"), "-")
    summary = "-"
    if row.get("summary_video_sent") is not None:
        summary = f"{row['summary_video_sent']} of {row['summary_video_appended']} / " \
                  f"{row['summary_undelivered']}"
        if row.get("summary_possibly_lost"):
            summary += f" ({row['summary_possibly_lost']} possibly lost)"
    audio = "-"
    if row.get("audio_frames_expected"):
        audio = f"{row['audio_frames']} of {row['audio_frames_expected']} " \
                f"({100 * row['audio_frames'] / row['audio_frames_expected']:.0f} %)"
    utilisation = 100 * row["utilisation"] if row["utilisation"] is not None else None
    return (f"{latency_cell} | {exit_text} | {ok} | {frames} | {summary} | "
            f"{fmt(row['longest_freeze_s'], 2)} | {row['decode_errors']} | {audio} | "
            f"{fmt(utilisation, 0, ' %')} | {fmt(row.get('bitrate_pct'), 0, ' %')} | "
            f"{fmt(row['latency_p50_ms'])} / {fmt(row['latency_p95_ms'])} | "
            f"{fmt(row.get('behind_live_s'), 2)} | {step} | {back} | {fmt(row['ssim'], 3)} | "
            f"{rss} |")


def write_markdown(args, config, rows, every_run, charts):
    links = {link["name"]: link for link in config["links"]}
    lines = []
    add = lines.append
    add(TABLE_HEADER)
    add("|" + "---|" * TABLE_HEADER.count(" | ") + "---|")
    for row in rows:
        sender = SENDER_NAMES.get(row["sender"], row["sender"])
        if row.get("runs_of", 1) > 1:
            sender += f" (median of {row['runs_of']}: run {row['run']})"
        add(f"| {row['link_label']} | {sender} | " + table_row(row, config, links[row["link"]]))
    runs = []
    if config.get("runs", 1) > 1:
        runs.append(TABLE_HEADER.replace("| sender |", "| sender | run |"))
        runs.append("|" + "---|" * runs[0].count(" | ") + "---|")
        for row in every_run:
            runs.append(f"| {row['link_label']} | {SENDER_NAMES.get(row['sender'], row['sender'])}"
                        f" | {row['run']} | " + table_row(row, config, links[row["link"]]))
    relay = relay_table(every_run)
    with open(os.path.join(args.work, "shaped-table.md"), "w") as handle:
        handle.write("\n".join(lines) + "\n")
    chart_lines = [f"![{label}]({name})" for label, name in charts]
    with open(os.path.join(args.work, "shaped-charts.md"), "w") as handle:
        handle.write("\n\n".join(f"![{label}](benchmarks/{name})" for label, name in charts)
                     + "\n")
    notes = os.path.join(args.docs, "shaped-link-notes.md")
    with open(os.path.join(args.docs, "shaped-link.md"), "w") as handle:
        handle.write(document(config, lines, runs, relay, chart_lines,
                              open(notes).read() if os.path.exists(notes) else ""))
    print("\n".join(lines))


def relay_table(rows):
    """The relay's own counters per run: what it did to each direction."""
    lines = []
    for row in rows:
        counters = row.get("relay_counters")
        if not counters:
            continue
        cells = []
        for name in ("up", "down"):
            c = counters[name]
            cells.append(f"{c['received']} / {c['dropped_loss']} / {c['dropped_blackout']} / "
                         f"{c['reordered']}")
        late = sum(counters[name]["late_over_1ms"] for name in ("up", "down"))
        forwarded = sum(counters[name]["forwarded"] for name in ("up", "down"))
        lines.append(f"| {row['link_label']} | {SENDER_NAMES.get(row['sender'], row['sender'])} | "
                     f"{row['run']} | {cells[0]} | {cells[1]} | {late} of {forwarded} | "
                     f"{fmt(row.get('srt_rtt_ms'), 1)} |")
    if not lines:
        return []
    return ["| link | sender | run | sender → receiver: received / lost / blacked out / "
            "reordered | receiver → sender: received / lost / blacked out / reordered | "
            "forwarded > 1 ms late | SRT round trip (ms) |", "|---|---|---|---|---|---|---|"] \
        + lines


def impaired_paths(config):
    """The setup text of the links that are more than a tbf rate: relay, RTMP, own latency."""
    lines = []
    for link in config["links"]:
        latency = link_latency(link)
        if link.get("receiver") == "rtmp":
            how = "RTMP to nginx (below), no relay"
        elif link.get("relay"):
            how = f"relay `{link['relay']}`"
            for at, line in link.get("relay_at", []):
                how += f", at {at:g} s `{line}` on its input"
        elif latency == link_latency({}):
            continue
        else:
            how = "tbf only"
        rate = ", ".join(f"{fraction:g} x nominal from {at:g} s" for at, fraction in
                         link["schedule"])
        srt = "" if link.get("receiver") == "rtmp" else (
            f"; SRT latency {latency['receiver']} ms at the receiver, `latency={latency['ingest']}`"
            f" for ingest, {latency['ffmpeg']} ms for ffmpeg")
        lines.append(f"  - **{link['label']}** (`{link['name']}`): {how}; tbf {rate}{srt}.")
    return "\n".join(lines)


def document(config, table, runs, relay, charts, notes):
    c = config
    nominal_payload = c["nominal_bps"] / WIRE_PER_PAYLOAD
    url = f"srt://{c['peer']}:{c['port']}"
    fixed, step = c["seconds_fixed"], c["seconds_step"]
    links = ", ".join(f"{link['label']} ({link['duration']} s)" for link in c["links"])
    paths = impaired_paths(c)
    # Only when a path beyond a tbf rate ran: what the relay and the RTMP receiver are.
    relay_text = "" if not any(link.get("relay") for link in c["links"]) else f"""\
  This kernel has no `sch_netem`, so delay, jitter, loss and blackouts come from a UDP relay
  of our own (`Scripts/bench-support/udp_relay.py`, one process, `--realtime`) started
  inside the namespace for the run: it takes `{url}` and forwards to the receiver, then
  listening on 127.0.0.1:{c['port'] + 1} inside the namespace; what comes back goes to the
  sender. Each direction is impaired on its own (`--delay` and `--loss` apply to both),
  jitter is drawn per packet (so packets reorder), bursty loss is a Gilbert-Elliott chain, a
  blackout drops everything both ways. The relay's seed is the run number, so the senders of
  one run meet the same draws at the same packet index. tbf stays on the veth at
  **2 x nominal** on these paths, so that capacity is not what they measure (their
  utilisation is of that doubled rate).
"""
    rtmp_text = "" if not any(link.get("receiver") == "rtmp" for link in c["links"]) else f"""\
  RTMP goes to nginx with the rtmp module inside the namespace
  (`rtmp://{c['peer']}:1935/live/recv`, `record all` to `recv.flv`), whose file size, sampled
  every 20 ms, gives the arrival times.
"""
    impaired = "" if not paths else \
        f"- **Impaired paths**:\n{relay_text}{rtmp_text}  The paths:\n{paths}\n"
    every_run = "" if not runs else (
        f"\n### Every run\n\nEach (link, sender) ran {c['runs']} times, the senders "
        f"alternating; the table above shows the median run by frames delivered.\n\n"
        + "\n".join(runs) + "\n")
    relay_counts = "" if not relay else (
        "\n### The relay's counters\n\nPackets per direction as `udp_relay.py` counted them "
        "(its final line, `relay-final.json` in each run directory), how many it forwarded "
        "more than 1 ms after their due time, and the median round trip libsrt measured at "
        "the receiver (`srt-live-transmit -s:1000 -pf:json`, `receiver-stats.jsonl`).\n\n"
        + "\n".join(relay) + "\n")
    skipped = "" if "live" in c["senders"] else (
        "\n**Sender (a) did not run**: this build of `ingest` has no `live` command yet. The "
        "harness runs it as soon as `ingest live --help` succeeds; its command line is below.\n")
    return f"""# Shaped-link benchmark

Written by `Scripts/bench-support/shaped-link.sh` (run by `Scripts/bench`; `BENCH_SHAPED=0`
skips it) on {c['date']}: every sender on every link, one after the other, in one run, through
the same real link. Release build.

Machine: {c['machine']}. **The machine was shared**: other engineers' builds and tests ran
on the same cores during the run, so figures that depend on CPU time (latency, the live encoder)
carry that noise.
{skipped}
## Setup

- **Link**: a veth pair from the root namespace into a network namespace that the script creates
  and removes (by name, in an exit trap); addresses in 198.18.0.0/15. The sending side's egress is
  shaped by `tc qdisc ... tbf rate R burst 16kbit latency 400ms` (a 400 ms queue, then tail
  drop); the rate is changed with `tc qdisc change` during a run. The return path (SRT's ACKs and
  NAKs) is not shaped.
- **Nominal rate**: what the fixed stream needs on the wire: {c['stream_bps'] / 1e6:.3f} Mb/s of
  TS (the larger of our TS and ffmpeg's for the same content, 2 Mb/s video + two 128 kb/s AAC
  tracks), scaled to whole Ethernet frames of 1316-byte SRT payloads (x 1374/1316):
  **{c['nominal_bps'] / 1e6:.3f} Mb/s** of tbf rate, i.e. {nominal_payload / 1e6:.3f} Mb/s of TS.
  100 % leaves no headroom for SRT's retransmissions and control packets.
- **Links**: {links}. The step is nominal, 30 % from {c['step']['down']} s to {c['step']['up']} s,
  nominal again; the outage sets the rate to 0.05 % of nominal (about 1.3 kb/s: a packet now and
  then; everything else dropped) from 20 s to 30 s.
- **Content**: `ingest-encode testsrc --size {c['size']} --bitrate {c['bitrate']} --fps 30
  --duration D > fixed-D.dump`, made once per duration (D = {fixed}, {step}): testsrc2 with its
  moving clock, libx264 zerolatency, a 2 s GOP, no B-frames. ffmpeg sends **the same encoded
  stream**: the dump written to a `.ts` by `ingest replay --speed max`, remuxed without re-encoding
  (`ffmpeg -i ref.ts -map 0 -c copy fixed-D.mp4`), so (b) and (c) carry identical video bits.
- **Receiver** (inside the namespace), one per run, started and stopped by pid:
  `srt-live-transmit -a:yes -v 'srt://:{c['port']}?mode=listener&latency=L' file://con`
  (L = 200 unless the link says otherwise, below), its standard output read by the harness,
  which writes `recv.ts` and stamps every read with CLOCK_MONOTONIC. SRT uses the larger of
  the receiver's latency and the sender's, so a receiver at 120 ms lets the sender's choice
  decide (the `auto` rows).
{impaired}
## Senders (exact commands, D = content seconds)

```
(a) ingest live testsrc --to '{url}?latency=L' --duration D --bitrate {c['bitrate']} \\
      --size {c['size']} --fps 30 --status - --json --quiet
(b) ingest replay fixed-D.dump --to '{url}?latency=L' --status - --json --quiet
(c) ffmpeg -nostdin -v error -re -i fixed-D.mp4 -map 0 -c copy -progress pipe:1 \\
      -stats_period 0.1 -f mpegts '{url}?latency=L000&pkt_size=1316'
```

L is the link's sender latency (200 unless listed above). Over RTMP, (a) sends
`--to rtmp://{c['peer']}:1935/live/recv` and (c) `-map 0:v:0 -map 0:a:0 -c copy -f flv
rtmp://{c['peer']}:1935/live/recv` (FLV carries one audio track); (b) does not run there.

Each runs under `/usr/bin/time -v`, bounded to D + 30 s (then SIGTERM, SIGKILL, by pid). The
whole benchmark:

```
sudo Scripts/bench-support/shaped-link.sh .build/release/ingest .build/bench docs/benchmarks
# settings: SHAPED_SECONDS (default 60), SHAPED_STEP_SECONDS (90), SHAPED_SENDERS,
# SHAPED_LINKS, SHAPED_RUNS (1), SHAPED_BITRATE, SHAPED_SIZE, SHAPED_PORT, SHAPED_SUBNET,
# SHAPED_NOMINAL_BPS
```

## Results

{chr(10).join(table)}
{every_run}{relay_counts}
{notes}
## How each figure is measured

- **Frames delivered / decoded**: decoded = `ffprobe -count_frames` (`nb_read_frames`) of the
  video stream of `recv.ts`. Delivered = distinct source frames among the decoded ones: each
  decoded frame's PTS (`ffprobe -show_entries frame=pts`) minus the first video PTS of the same
  sender's stream written to a file without a network (`ref-replay-D.ts`, `ref-ffmpeg-D.ts`; the
  timeline is the same), times 30/90000. Out of D x 30 source frames.
  Over RTMP: nginx writes FLV timestamps from the start of the publish, so a decoded frame's
  source index is its timestamp minus the first video tag's (TCP loses nothing on the way).
- **Longest freeze**: the largest gap between consecutive delivered source frames, counting from
  the first source frame and to the last (a missing head or tail is a freeze as well), in seconds
  of media time.
- **ok, ingest summary**: `ok` of `ingest`'s `--json` summary (the last line of its standard
  output), and its `sent.video` of `appended.video` / `undelivered` (samples of every track
  still in the ring at the end): what ingest says it delivered, beside what the receiver
  decoded. ffmpeg has none ("-").
- **Decode errors**: lines printed by `ffmpeg -v error -i recv.ts -f null -`.
- **Audio frames delivered of expected**: `ffprobe -count_frames` of the first audio stream
  received, against D x its sample rate / 1024 (AAC frames).
- **Link utilisation**: TS bytes received x 8 / what the link could carry in the D seconds of
  content (the tbf rate over time, integrated, converted to TS payload by x 1316/1374). It can
  pass 100 % a little when the receiver still gets data after D (the queue drains); over RTMP
  by far, as TCP queues what the link cannot take and the sender goes on long after D (how far
  behind live it ends is the column for that). On the oscillating link this is the mean
  delivered bit rate as a share of the mean capacity.
- **Bitrate (% of nominal)**: TS bytes received x 8 / D against the fixed stream's TS rate
  ({c['stream_bps'] / 1e6:.3f} Mb/s); over RTMP, FLV bytes against the same content written
  to an FLV file by ffmpeg ({(c.get('flv_stream_bps') or 0) / 1e6:.3f} Mb/s).
- **Latency p50 / p95**: for every video PES received, the arrival time of its last TS packet
  at the receiver minus its capture time. Capture time = the sender's media clock anchor +
  (PTS - media time 0), where media time 0 is the smallest first PTS of any track in the
  sender's reference file (audio starts one AAC frame before video). The anchor is the
  CLOCK_MONOTONIC time at which the sender's media clock read 0, taken from its own reports,
  stamped as the harness reads them: ingest's status lines (`t`, seconds of the run; with realtime
  pacing the sample at media offset m is appended at t = m) and ffmpeg's `-progress` blocks
  (`out_time_us`, the media time muxed so far; `-re` paces by it). Each report is read after it
  is written, so stamp - media time >= anchor; the smallest over the run is taken (the
  error is the pipe's delay, a few milliseconds, towards lower latency). For (a) the anchor is
  exact: the encoder's `started` report (forwarded as an `encoderReport` status event) gives
  `epoch_ns`, the CLOCK_MONOTONIC time of source frame 0, and media time 0 is the first video
  PTS received, so (a)'s latency includes encoding. Receiver and senders share
  the machine's clock (a network namespace has no clock of its own). Frames that never arrive
  have no latency; late frames that libsrt dropped never arrive either. Over RTMP the
  arrival of a frame is the first 20 ms sample of the recording's size that includes it.
- **Behind live at the end**: the latency of the last video frame that arrived: how far
  behind live the recording ends (a sender that queues instead of dropping ends far behind).
- **Settle / back to nominal (target)**: from the `rate` status events of `ingest live`
  (`target_bps` at `t`): settle = from the step down to the first target at or below the low
  link's TS capacity after which the target stays at or below it until the step up; back to
  nominal = from the step up to the first target at 95 % of the nominal bitrate. The fixed-rate
  senders have no target ("n/a").
- **Delivered back to nominal**: for every sender, from the receiver: seconds from the step up
  to the first one-second bin of received bytes carrying 90 % of the stream's TS rate. On the
  blackout link, per blackout: from its end (the relay's own time stamp) to the start of the
  first 1 s window, tried every 0.1 s, carrying 90 % of the stream's TS rate, before the next
  blackout starts.
- **SSIM**: `ffmpeg -copyts -i recv.ts` with `setpts=PTS-FIRST_VIDEO_PTS, fps=30:start_time=0,
  tpad=stop_mode=clone:stop=-1, trim=end_frame=N` against `testsrc2=size={c['size']}:rate=30,
  trim=end_frame=N` (the pattern ingest-encode encodes), through the `ssim` filter; the "All"
  average over all N = D x 30 source frames. `fps` repeats the previous frame wherever frames are
  missing (a freeze is what a viewer sees), the head is padded with the first frame received and
  the tail with the last. The fixed stream itself, complete, scores {c.get('ssim_ceiling', '-')}
  (the encoder's loss: the ceiling for (b) and (c)). An alignment check: the same file shifted by
  one frame scores about 0.94.
- **Peak RSS**: "Maximum resident set size" from `/usr/bin/time -v` of the sender process (for
  ffmpeg, ffmpeg; for (b), `ingest`). For (a) `/usr/bin/time` would report the larger of `ingest`
  and its encoder child, so the table shows `ingest`'s own VmHWM from its `--json` summary
  (`peak_resident`) instead, and the encoder's apart (`encoder.peak_resident`, outside the
  budget like VideoToolbox).

## Charts

Per link: the tbf capacity (grey, as TS payload), the bytes each sender got through per second at
the receiver (solid), and the target bitrate (dashed: the rate controller's `rate` events for (a); the fixed stream's
mean TS rate for (b) and (c)). The controller's target is the video bitrate; what is delivered also
carries the two audio tracks and the TS overhead.

{(chr(10) * 2).join(charts)}
"""


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="mode", required=True)
    one = sub.add_parser("run")
    one.add_argument("--ns", required=True)
    one.add_argument("--dev", required=True)
    one.add_argument("--peer", required=True)
    one.add_argument("--port", type=int, required=True)
    one.add_argument("--nominal-bps", type=float, required=True)
    one.add_argument("--link", required=True)
    one.add_argument("--schedule", required=True)
    one.add_argument("--duration", type=float, required=True)
    one.add_argument("--grace", type=float, default=30)
    one.add_argument("--out", required=True)
    one.add_argument("--sender", required=True)
    one.add_argument("--run", type=int, default=1, help="the run's number (of SHAPED_RUNS)")
    one.add_argument("--receiver", choices=("srt", "rtmp"), default="srt")
    one.add_argument("--latency", type=int, default=200, help="the SRT receiver's latency (ms)")
    one.add_argument("--relay", default="",
                     help="udp_relay.py impairment options; empty: no relay")
    one.add_argument("--relay-script", default=os.path.join(os.path.dirname(
        os.path.abspath(__file__)), "udp_relay.py"))
    one.add_argument("--seed", type=int, default=1, help="the relay's seed")
    one.add_argument("--relay-at", action="append", default=[], metavar="T:JSON",
                     help="at T s after the sender's start, write JSON (one line) to the "
                          "relay's standard input (udp_relay.py's runtime changes)")
    one.add_argument("--rtmp-port", type=int, default=1935)
    one.add_argument("command", nargs=argparse.REMAINDER)
    rep = sub.add_parser("report")
    rep.add_argument("--work", required=True)
    rep.add_argument("--docs", required=True)
    rep.add_argument("--config", required=True)
    rep.add_argument("--reuse", action="store_true",
                     help="take each run's analysis.json when present (only the text is redone)")
    args = parser.parse_args()
    if args.mode == "run":
        run(args)
    else:
        report(args)


if __name__ == "__main__":
    main()
