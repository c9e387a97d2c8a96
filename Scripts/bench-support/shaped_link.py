#!/usr/bin/env python3
"""The shaped-link benchmark: one run of a sender through a tbf-shaped veth link into a network
namespace (`run`), and the analysis of every run into a markdown report with SVG charts (`report`).

Driven by Scripts/bench-support/shaped-link.sh, which creates and removes the namespace.

    shaped_link.py run --ns NS --dev VETH --peer ADDR --port P --nominal-bps L2_BPS \
        --link NAME --schedule "0:1.0,20:0.3,40:1.0" --duration D --out RUN_DIR \
        --sender KIND -- SENDER COMMAND...
    shaped_link.py report --work WORK_DIR --docs DOCS_DIR --config CONFIG.json

Every process started here is stopped by its pid (its children first, read from /proc), with
SIGTERM then SIGKILL; every wait is bounded.

Clocks: every time stamp is CLOCK_MONOTONIC (time.monotonic_ns). The namespace shares the host's
clocks, so the receiver's arrival times and the sender's status lines are on one clock.
"""

import argparse
import json
import math
import os
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


def run(args):
    out = args.out
    os.makedirs(out, exist_ok=True)
    schedule = [(float(t), float(f)) for t, f in
                (item.split(":") for item in args.schedule.split(","))]
    command = args.command[1:] if args.command and args.command[0] == "--" else args.command
    if not command:
        sys.exit("shaped_link.py run: no sender command")

    # The receiver: srt-live-transmit listening inside the namespace, its output read here so
    # that every chunk gets an arrival time.
    tc_rate(args.dev, args.nominal_bps * schedule[0][1])
    receiver = subprocess.Popen(
        ["ip", "netns", "exec", args.ns, "srt-live-transmit", "-a:yes", "-v",
         f"srt://{args.peer}:{args.port}?mode=listener&latency=200", "file://con"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    arrivals = []  # (ns, total bytes so far)
    receiver_log = []
    listening = threading.Event()

    def read_receiver():
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

    def read_receiver_log():
        for line in receiver.stderr:
            text = line.decode(errors="replace").rstrip()
            receiver_log.append(f"{now_ns()} {text}")
            if "listen" in text:
                listening.set()
        listening.set()

    threads = [threading.Thread(target=read_receiver), threading.Thread(target=read_receiver_log)]
    for thread in threads:
        thread.start()
    sender = None
    link_log = []
    status = []
    result = {"link": args.link, "sender": args.sender, "duration": args.duration}
    try:
        if not listening.wait(10) or receiver.poll() is not None:
            raise RuntimeError("receiver did not start: " + " | ".join(receiver_log[-5:]))

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

        # The link's schedule, on the same clock.
        link_log.append((start, args.nominal_bps * schedule[0][1]))
        for at, fraction in schedule[1:]:
            due = start + int(at * 1e9)
            while now_ns() < due and sender.poll() is None:
                time.sleep(min(0.01, max(0, (due - now_ns()) / 1e9)))
            if sender.poll() is not None:
                break
            tc_rate(args.dev, args.nominal_bps * fraction)
            link_log.append((now_ns(), args.nominal_bps * fraction))

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
        # What is still in flight (SRT latency 200 ms, the tbf queue) reaches the receiver.
        time.sleep(1.5)
        result.update(start_ns=start, end_ns=end)
    finally:
        if sender is not None and sender.poll() is None:
            stop_pid(sender.pid)
        stop_pid(receiver.pid)
        receiver.wait(timeout=10)
        for thread in threads:
            thread.join(timeout=10)
        tc_rate(args.dev, args.nominal_bps)

    with open(os.path.join(out, "arrivals.txt"), "w") as handle:
        handle.writelines(f"{t} {n}\n" for t, n in arrivals)
    with open(os.path.join(out, "status.txt"), "w") as handle:
        handle.writelines(f"{t} {line}\n" for t, line in status)
    with open(os.path.join(out, "receiver.log"), "w") as handle:
        handle.writelines(line + "\n" for line in receiver_log)
    result["link_log"] = link_log
    result["nominal_bps"] = args.nominal_bps
    result["command"] = command
    with open(os.path.join(out, "run.json"), "w") as handle:
        json.dump(result, handle, indent=1)
    print(f"shaped-link: {args.link} / {args.sender}: exit {result.get('exit_status')}, "
          f"{arrivals[-1][1] if arrivals else 0} bytes received", file=sys.stderr)


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


def analyse(run_dir, config):
    with open(os.path.join(run_dir, "run.json")) as handle:
        run_info = json.load(handle)
    recv = os.path.join(run_dir, "recv.ts")
    duration = run_info["duration"]
    start = run_info["start_ns"]
    link_log = run_info["link_log"]
    sender = run_info["sender"]
    frames_expected = int(duration * FPS)
    row = {"link": run_info["link"], "sender": sender, "exit_status": run_info.get("exit_status"),
           "timed_out": run_info.get("timed_out", False), "frames_expected": frames_expected}
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

    # Frames decodable at the receiver and decode errors.
    if size > 0:
        probe = tool(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0",
                      "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", recv])
        try:
            row["frames_decoded"] = int(probe.stdout.split()[0].strip(","))
        except ValueError:
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
    else:
        row["frames_decoded"] = 0
        row["decode_errors"] = 0
        decoded_pts = []

    # Which source frame each decoded frame is: its PTS against the first video PTS of the same
    # sender's stream written to a file (the same timeline, no network).
    pes = ts_video_pes(recv) if size else []
    pts0 = config["pts0"].get(f"{sender}-{int(duration)}")
    # (a)'s media time 0 is its first video frame (the encoder's epoch_ns); see sender_anchor.
    media0 = config["media0"].get(f"{sender}-{int(duration)}", pts0)
    if pts0 is None:
        pts0 = pes[0][0] if pes else 0
        media0 = pts0
        row["pts0_from_receiver"] = True
    indices = sorted({round((unwrap(p, pts0) - pts0) * FPS / 90000) for p in decoded_pts})
    indices = [i for i in indices if 0 <= i < frames_expected]
    row["frames_delivered"] = len(indices)
    # Longest freeze: the largest gap between consecutive decoded frames, counting from the
    # first frame of the content and to its last (a missing head or tail is a freeze too).
    edges = [-1] + indices + [frames_expected]
    row["longest_freeze_s"] = max(b - a for a, b in zip(edges, edges[1:])) / FPS if indices \
        else duration

    # End-to-end latency: arrival of each video PES's last TS packet minus its capture time,
    # where capture = the sender's clock anchor + (PTS - first PTS).
    anchor = sender_anchor(run_dir, sender)
    row["anchor_method"] = anchor[1]
    if anchor[0] is not None:
        row["anchor_after_start_ms"] = (anchor[0] - start) / 1e6
    latencies = []
    if anchor[0] is not None and pes:
        import bisect
        ends = [n for _, n in arrivals]
        for pts, offset in pes:
            index = bisect.bisect_left(ends, offset + 188)
            if index >= len(arrivals):
                continue
            capture = anchor[0] + (unwrap(pts, media0) - media0) / 90000 * 1e9
            latencies.append((arrivals[index][0] - capture) / 1e6)
    row["latency_p50_ms"] = percentile(latencies, 0.5)
    row["latency_p95_ms"] = percentile(latencies, 0.95)

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
    summary = last_summary(run_dir)
    if summary:
        if summary.get("peak_resident"):
            row["peak_resident_mb"] = summary["peak_resident"] / 1e6
        row["ok"] = summary.get("ok")
        if isinstance(summary.get("encoder"), dict) and summary["encoder"].get("peak_resident"):
            row["encoder_peak_resident_mb"] = summary["encoder"]["peak_resident"] / 1e6
    row["ssim"] = ssim(recv, pts0, frames_expected, config) if indices else None
    return row


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


def svg_chart(path, title, subtitle, duration, capacity_steps, series, y_max):
    """A line chart: capacity as a step line, per sender delivered (solid) and target (dashed)."""
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


def report(args):
    with open(args.config) as handle:
        config = json.load(handle)
    rows = []
    for link in config["links"]:
        for sender in config["senders"]:
            run_dir = os.path.join(args.work, "runs", f"{link['name']}-{sender}")
            if not os.path.exists(os.path.join(run_dir, "run.json")):
                continue
            cached = os.path.join(run_dir, "analysis.json")
            if args.reuse and os.path.exists(cached):
                with open(cached) as handle:
                    row = json.load(handle)
            else:
                print(f"shaped-link: analysing {link['name']} / {sender}", file=sys.stderr)
                row = analyse(run_dir, config)
            row["link_label"] = link["label"]
            rows.append(row)
            with open(os.path.join(run_dir, "analysis.json"), "w") as handle:
                json.dump(row, handle, indent=1)
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
        if any(not row["target_series"] for row in link_rows):
            series.append(("fixed stream rate (b, c)", "#777", True,
                           [(0, config["stream_bps"]), (duration, config["stream_bps"])]))
        peak = max([nominal_payload] + [v for _, _, _, values in series for _, v in values])
        name = f"shaped-{link['name']}.svg"
        svg_chart(os.path.join(args.docs, name), f"Shaped link: {link['label']}",
                  f"tbf on a veth pair, SRT latency 200 ms, nominal {nominal_payload / 1e6:.2f} "
                  f"Mb/s of TS; delivered = bytes at the receiver per second",
                  duration, steps, series, peak * 1.1)
        charts.append((link["label"], name))
    write_markdown(args, config, rows, charts)


def write_markdown(args, config, rows, charts):
    lines = []
    add = lines.append
    add("| link | sender | exit | frames delivered / decoded of source | longest freeze (s) | "
        "decode errors | link utilisation | latency p50 / p95 (ms) | settle / back to nominal "
        "(target, s) | delivered back to nominal (s) | SSIM | peak RSS (MB) |")
    add("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
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
        rss = fmt(row["peak_rss_mb"], 1)
        if row.get("peak_resident_mb") is not None and row["sender"] == "live":
            rss = f"{row['peak_resident_mb']:.1f} (VmHWM)"
            if row.get("encoder_peak_resident_mb") is not None:
                rss += f"; encoder {row['encoder_peak_resident_mb']:.0f}"
        exit_text = str(row["exit_status"]) + (" (killed)" if row["timed_out"] else "")
        add(f"| {row['link_label']} | {SENDER_NAMES.get(row['sender'], row['sender'])} | "
            f"{exit_text} | {frames} | {fmt(row['longest_freeze_s'], 2)} | "
            f"{row['decode_errors']} | {fmt(100 * row['utilisation'] if row['utilisation'] is not None else None, 0, ' %')} | "
            f"{fmt(row['latency_p50_ms'])} / {fmt(row['latency_p95_ms'])} | {step} | {back} | "
            f"{fmt(row['ssim'], 3)} | {rss} |")
    with open(os.path.join(args.work, "shaped-table.md"), "w") as handle:
        handle.write("\n".join(lines) + "\n")
    chart_lines = [f"![{label}]({name})" for label, name in charts]
    with open(os.path.join(args.work, "shaped-charts.md"), "w") as handle:
        handle.write("\n\n".join(f"![{label}](benchmarks/{name})" for label, name in charts)
                     + "\n")
    notes = os.path.join(args.docs, "shaped-link-notes.md")
    with open(os.path.join(args.docs, "shaped-link.md"), "w") as handle:
        handle.write(document(config, lines, chart_lines,
                              open(notes).read() if os.path.exists(notes) else ""))
    print("\n".join(lines))


def document(config, table, charts, notes):
    c = config
    nominal_payload = c["nominal_bps"] / WIRE_PER_PAYLOAD
    url = f"srt://{c['peer']}:{c['port']}"
    fixed, step = c["seconds_fixed"], c["seconds_step"]
    links = ", ".join(f"{link['label']} ({link['duration']} s)" for link in c["links"])
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
  `srt-live-transmit -a:yes -v 'srt://:{c['port']}?mode=listener&latency=200' file://con`,
  its standard output read by the harness, which writes `recv.ts` and stamps every read with
  CLOCK_MONOTONIC.

## Senders (exact commands, D = content seconds)

```
(a) ingest live testsrc --to '{url}?latency=200' --duration D --bitrate {c['bitrate']} \\
      --size {c['size']} --fps 30 --status - --json --quiet
(b) ingest replay fixed-D.dump --to '{url}?latency=200' --status - --json --quiet
(c) ffmpeg -nostdin -v error -re -i fixed-D.mp4 -map 0 -c copy -progress pipe:1 \\
      -stats_period 0.1 -f mpegts '{url}?latency=200000&pkt_size=1316'
```

Each runs under `/usr/bin/time -v`, bounded to D + 30 s (then SIGTERM, SIGKILL, by pid). The
whole benchmark:

```
sudo Scripts/bench-support/shaped-link.sh .build/release/ingest .build/bench docs/benchmarks
# settings: SHAPED_SECONDS (default 60), SHAPED_STEP_SECONDS (90), SHAPED_SENDERS,
# SHAPED_LINKS, SHAPED_BITRATE, SHAPED_SIZE, SHAPED_PORT, SHAPED_SUBNET, SHAPED_NOMINAL_BPS
```

## Results

{chr(10).join(table)}

{notes}
## How each figure is measured

- **Frames delivered / decoded**: decoded = `ffprobe -count_frames` (`nb_read_frames`) of the
  video stream of `recv.ts`. Delivered = distinct source frames among the decoded ones: each
  decoded frame's PTS (`ffprobe -show_entries frame=pts`) minus the first video PTS of the same
  sender's stream written to a file without a network (`ref-replay-D.ts`, `ref-ffmpeg-D.ts`; the
  timeline is the same), times 30/90000. Out of D x 30 source frames.
- **Longest freeze**: the largest gap between consecutive delivered source frames, counting from
  the first source frame and to the last (a missing head or tail is a freeze as well), in seconds
  of media time.
- **Decode errors**: lines printed by `ffmpeg -v error -i recv.ts -f null -`.
- **Link utilisation**: TS bytes received x 8 / what the link could carry in the D seconds of
  content (the tbf rate over time, integrated, converted to TS payload by x 1316/1374). It can
  pass 100 % a little when the receiver still gets data after D (the queue drains).
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
  have no latency; late frames that libsrt dropped never arrive either.
- **Settle / back to nominal (target)**: from the `rate` status events of `ingest live`
  (`target_bps` at `t`): settle = from the step down to the first target at or below the low
  link's TS capacity after which the target stays at or below it until the step up; back to
  nominal = from the step up to the first target at 95 % of the nominal bitrate. The fixed-rate
  senders have no target ("n/a").
- **Delivered back to nominal**: for every sender, from the receiver: seconds from the step up
  to the first one-second bin of received bytes carrying 90 % of the stream's TS rate.
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
