#!/usr/bin/env python3
"""A UDP impairment relay: delay, jitter, random and bursty loss, and blackouts, per direction.

This kernel has no sch_netem, so the shaped-link benchmark and the impaired-path tests put this
relay between an SRT caller and its listener (tc tbf still does rate).

    udp_relay.py --listen HOST:PORT --forward HOST:PORT [impairments] [--seed N] [--realtime]
    udp_relay.py --self-test [--realtime]

Packets from a client arriving at --listen leave one upstream socket towards --forward ("up");
packets coming back on that socket go to the most recent client address ("down"). A new client
address replaces the old one (one SRT connection is one UDP flow). Port 0 in --listen takes a
port from the kernel; the ready line says which.

Impairments, each for both directions, or for one with the --up- / --down- form
(--up-delay, --down-loss, ...), the direction's own form winning:

    --delay MS            one-way delay
    --jitter MS           uniform +/- MS per packet, drawn independently (so packets reorder);
                          a delay below 0 is sent at once
    --loss P              random loss, probability P per packet
    --burst-loss P_GB:P_BG[:LOSS_BAD[:LOSS_GOOD]]
                          Gilbert-Elliott loss: a two-state chain stepped once per packet,
                          good -> bad with P_GB, bad -> good with P_BG, then the packet is lost
                          with LOSS_BAD (default 1) or LOSS_GOOD (default 0). Mean loss
                          P_GB / (P_GB + P_BG) x LOSS_BAD (with LOSS_GOOD 0), mean burst 1 / P_BG.
    --blackout PERIOD:DURATION[:START[:COUNT]]
                          both directions dark for DURATION s every PERIOD s, the first from
                          START s (default PERIOD) after the first client packet, so the schedule
                          lines up with the sender's start; COUNT blackouts (default: no end).
                          Dark drops what arrives and what is due to leave.

Standard input takes JSON lines while running, each applied whole or not at all:

    {"up": {"delay_ms": 50, "loss": 0.02}, "down": {...}, "both": {...}}
        keys delay_ms, jitter_ms, loss, burst ({"p_gb", "p_bg", "loss_bad", "loss_good"} or
        null for none); "both" first, then "up" / "down" over it. Packets already queued keep
        their departure time.
    {"blackout": true} / {"blackout": false}
        starts / ends a blackout by hand (the schedule, if any, goes on beside it).

Standard output, one JSON object a line, compact (`{"ready":true,"listen":"127.0.0.1:9000"}`):

    {"ready": true, "listen": "HOST:PORT"}        once bound (wait for it, never sleep)
    {"ack": REQUEST, "up": SETTINGS, "down": SETTINGS, "blackout": DARK}   per applied line
    {"error": TEXT, "line": LINE}                 per refused line
    {"event": "client", "address": "HOST:PORT", "t_ns": T}
    {"event": "blackout_start" | "blackout_end", "cause": "schedule" | "stdin", "t_ns": T}
    {"final": true, "up": COUNTERS, "down": COUNTERS, "blackouts": N}   on SIGTERM / SIGINT,
        then exit 0. COUNTERS: received, forwarded, dropped_loss, dropped_blackout,
        dropped_send (the socket refused it), pending (still queued), reordered (forwarded
        after a packet that arrived later in the same direction), late_over_1ms (forwarded
        more than 1 ms after its due time) and late_max_ms: the relay's own precision.

Times (t_ns) are CLOCK_MONOTONIC, which a network namespace shares with the host. --seed makes
every random draw repeatable: each direction has its own generators for loss, bursts and jitter,
so one direction's decisions depend only on its own packet sequence.

--realtime runs the relay under SCHED_FIFO (needs root), so that a busy machine's scheduling does
not add to the path's delays. --self-test runs relays of this script on loopback as child
processes and sends numbered packets through them: random loss and its repeatability with one
seed, delay, jitter and reordering, Gilbert-Elliott bursts, blackouts by hand and by schedule,
25 Mb/s both ways, and the final counters. It prints one line per check and exits 1 if any
failed.
"""

import argparse
import errno
import heapq
import json
import os
import queue
import random
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

DIRECTIONS = ("up", "down")
# Large socket buffers, so that bursts (a jitter of tens of ms releases hundreds of packets at
# once at 25 Mb/s) wait in the kernel instead of being dropped there.
SOCKET_BUFFER = 8 << 20
# Linux's SO_RCVBUFFORCE and SO_SNDBUFFORCE (asm-generic/socket.h; the socket module has no
# names for them): as root they pass net.core.rmem_max / wmem_max.
SO_RCVBUFFORCE, SO_SNDBUFFORCE = 33, 32
# Datagrams read per socket per wakeup before the scheduler looks at its queue again: bounds
# how late a due packet can leave while a socket is flooded.
READ_BATCH = 64


def now_ns():
    return time.monotonic_ns()


def parse_address(text):
    """HOST:PORT or [V6HOST]:PORT -> (family, sockaddr)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError(f"not HOST:PORT: {text}")
    host = host.strip("[]")
    try:
        info = socket.getaddrinfo(host, int(port), type=socket.SOCK_DGRAM)[0]
    except socket.gaierror as error:
        raise argparse.ArgumentTypeError(f"{text}: {error}") from error
    return info[0], info[4]


def format_address(sockaddr):
    host, port = sockaddr[0], sockaddr[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


# ---------------------------------------------------------------------------------------------
# Settings and decisions per direction


def check_probability(value, name):
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 1:
        raise ValueError(f"{name} must be a probability in [0, 1], not {value!r}")
    return float(value)


def check_milliseconds(value, name):
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value < 1e6:
        raise ValueError(f"{name} must be milliseconds >= 0, not {value!r}")
    return float(value)


def check_burst(value):
    """None, or the Gilbert-Elliott parameters with their defaults filled in."""
    if value is None:
        return None
    if not isinstance(value, dict) or not {"p_gb", "p_bg"} <= set(value) or \
            set(value) - {"p_gb", "p_bg", "loss_bad", "loss_good"}:
        raise ValueError("burst needs p_gb and p_bg (loss_bad, loss_good optional) or null")
    burst = {"p_gb": value["p_gb"], "p_bg": value["p_bg"],
             "loss_bad": value.get("loss_bad", 1.0), "loss_good": value.get("loss_good", 0.0)}
    return {key: check_probability(number, f"burst.{key}") for key, number in burst.items()}


def checked_settings(current, changes):
    """`current` with `changes` (a dict of setting keys) applied; ValueError for a bad one."""
    if not isinstance(changes, dict):
        raise ValueError(f"a direction's settings must be an object, not {changes!r}")
    result = dict(current)
    for key, value in changes.items():
        if key in ("delay_ms", "jitter_ms"):
            result[key] = check_milliseconds(value, key)
        elif key == "loss":
            result[key] = check_probability(value, key)
        elif key == "burst":
            result[key] = check_burst(value)
        else:
            raise ValueError(f"unknown setting {key!r}")
    return result


class Direction:
    """One direction's settings, random generators, Gilbert-Elliott state and counters."""

    def __init__(self, name, settings, seed):
        self.settings = settings
        # String seeds are hashed the same way on every run (unlike hash() of a str).
        self.loss_random = random.Random(f"{seed}/{name}/loss")
        self.burst_random = random.Random(f"{seed}/{name}/burst")
        self.jitter_random = random.Random(f"{seed}/{name}/jitter")
        self.bad = False
        self.arrivals = 0  # sequence number of the next arriving packet
        self.latest_sent = -1  # highest arrival sequence number forwarded so far
        self.counters = {"received": 0, "forwarded": 0, "dropped_loss": 0,
                         "dropped_blackout": 0, "dropped_send": 0, "pending": 0,
                         "reordered": 0, "late_over_1ms": 0, "late_max_ms": 0.0}

    def lost(self):
        """Whether the next packet is lost. Both generators draw for every packet, so the
        random loss and the burst chain each follow their own fixed sequence."""
        burst = self.settings["burst"]
        chain = self.burst_random.random()
        outcome = self.burst_random.random()
        random_loss = self.loss_random.random() < self.settings["loss"]
        if burst is None:
            return random_loss
        # Step the chain, then lose with the new state's loss probability.
        if self.bad:
            self.bad = chain >= burst["p_bg"]
        else:
            self.bad = chain < burst["p_gb"]
        loss = burst["loss_bad"] if self.bad else burst["loss_good"]
        return random_loss or outcome < loss

    def delay_ns(self):
        delay = self.settings["delay_ms"]
        jitter = self.settings["jitter_ms"]
        if jitter > 0:
            delay += self.jitter_random.uniform(-jitter, jitter)
        return max(0, int(delay * 1e6))


class Blackouts:
    """The dark periods: a schedule from the first client packet, and one started by hand."""

    def __init__(self, schedule):
        self.schedule = schedule  # (period, duration, start seconds, count or None), or None
        self.origin = None  # ns of the first client packet
        self.manual = False
        self.scheduled = False
        self.count = 0

    def scheduled_at(self, t):
        """The schedule at `t` (ns): (dark, its last transition, its next transition), the
        transitions in ns or None."""
        if self.schedule is None or self.origin is None:
            return False, None, None
        period, duration, start = (int(value * 1e9) for value in self.schedule[:3])
        count = self.schedule[3]
        first = self.origin + start
        if t < first:
            return False, None, first
        cycle = (t - first) // period
        if count is not None and cycle >= count:
            return False, first + (count - 1) * period + duration, None
        cycle_start = first + cycle * period
        if t < cycle_start + duration:
            return True, cycle_start, cycle_start + duration
        return False, cycle_start + duration, cycle_start + period

    def dark(self, t):
        return self.manual or self.scheduled_at(t)[0]


# ---------------------------------------------------------------------------------------------
# The relay


class Relay:
    def __init__(self, args, out):
        self.out = out
        listen_family, listen_address = args.listen
        forward_family, self.forward_address = args.forward
        self.listen = socket.socket(listen_family, socket.SOCK_DGRAM)
        self.listen.bind(listen_address)
        self.upstream = socket.socket(forward_family, socket.SOCK_DGRAM)
        self.upstream.bind(("::", 0) if forward_family == socket.AF_INET6 else ("0.0.0.0", 0))
        for sock in (self.listen, self.upstream):
            sock.setblocking(False)
            enlarge_buffers(sock)
        self.directions = {name: Direction(name, initial_settings(args, name), args.seed)
                           for name in DIRECTIONS}
        self.blackouts = Blackouts(args.blackout)
        self.client = None
        # Heap of (due ns, order of arrival over both directions, arrival sequence number in the
        # direction, direction, payload); the order keeps equal due times first in, first out.
        self.queue = []
        self.order = 0
        self.stdin_open = stdin_usable()
        self.stdin_buffer = b""
        self.stopping = False
        # Signals wake select through this pair; the handler only sets a flag.
        self.wake_read, self.wake_write = socket.socketpair()  # kept: closing it ends the wakeups
        self.wake_read.setblocking(False)
        self.wake_write.setblocking(False)
        signal.set_wakeup_fd(self.wake_write.fileno(), warn_on_full_buffer=False)
        for number in (signal.SIGTERM, signal.SIGINT):
            signal.signal(number, self.on_signal)
        # A parent may start us with these blocked (a mask is inherited across exec): the stop
        # by pid must still reach the handler, or the final counters are never printed.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})

    def on_signal(self, number, frame):
        self.stopping = True

    def emit(self, message):
        try:
            self.out.write(json.dumps(message, separators=(",", ":")) + "\n")
            self.out.flush()
        except BrokenPipeError:
            # Nobody reads any more; the relay still relays until it is stopped.
            pass

    def run(self):
        self.emit({"ready": True, "listen": format_address(self.listen.getsockname())})
        while not self.stopping:
            t = now_ns()
            self.update_blackout(t)
            wakeups = [self.queue[0][0]] if self.queue else []
            transition = self.blackouts.scheduled_at(t)[2]
            if transition is not None:
                wakeups.append(transition)
            timeout = max(0.0, (min(wakeups) - t) / 1e9) if wakeups else None
            readers = [self.listen, self.upstream, self.wake_read]
            if self.stdin_open:
                readers.append(sys.stdin.fileno())
            ready, _, _ = select.select(readers, [], [], timeout)
            if self.listen in ready:
                self.receive(self.listen, "up")
            if self.upstream in ready:
                self.receive(self.upstream, "down")
            if self.stdin_open and sys.stdin.fileno() in ready:
                self.read_control()
            if self.wake_read in ready:
                self.drain_wakeups()
            self.send_due(now_ns())
        self.finish()

    def update_blackout(self, t):
        """Emits the schedule's transitions, stamped with their exact times, and counts them."""
        dark, last, _ = self.blackouts.scheduled_at(t)
        if dark == self.blackouts.scheduled:
            return
        self.blackouts.scheduled = dark
        if dark and not self.blackouts.manual:
            self.blackouts.count += 1
        self.emit({"event": "blackout_start" if dark else "blackout_end", "cause": "schedule",
                   "t_ns": last})

    def receive(self, sock, name):
        direction = self.directions[name]
        for _ in range(READ_BATCH):
            try:
                payload, address = sock.recvfrom(65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                # An error queued by an earlier send (an ICMP port unreachable while the server
                # is not up yet), not a datagram: go on reading.
                continue
            t = now_ns()
            if name == "up":
                if address != self.client:
                    self.client = address
                    self.emit({"event": "client", "address": format_address(address), "t_ns": t})
                if self.blackouts.origin is None:
                    self.blackouts.origin = t
                    self.update_blackout(t)
            elif address[:2] != self.forward_address[:2]:
                continue  # not from the server: not part of the relayed flow
            sequence = direction.arrivals
            direction.arrivals += 1
            direction.counters["received"] += 1
            if self.blackouts.dark(t):
                direction.counters["dropped_blackout"] += 1
                continue
            if direction.lost():
                direction.counters["dropped_loss"] += 1
                continue
            self.order += 1
            heapq.heappush(self.queue, (t + direction.delay_ns(), self.order, sequence, name,
                                        payload))

    def send_due(self, t):
        while self.queue and self.queue[0][0] <= t:
            due, _, sequence, name, payload = heapq.heappop(self.queue)
            direction = self.directions[name]
            if self.blackouts.dark(t):
                direction.counters["dropped_blackout"] += 1
                continue
            if name == "up":
                sock, address = self.upstream, self.forward_address
            else:
                sock, address = self.listen, self.client
            if address is None:
                # Nothing came from a client yet: nobody to return the packet to.
                direction.counters["dropped_send"] += 1
                continue
            try:
                sock.sendto(payload, address)
            except OSError as error:
                if error.errno not in (errno.EAGAIN, errno.ENOBUFS, errno.ECONNREFUSED,
                                       errno.EHOSTUNREACH, errno.ENETUNREACH):
                    raise
                direction.counters["dropped_send"] += 1
                continue
            counters = direction.counters
            counters["forwarded"] += 1
            late = (now_ns() - due) / 1e6
            if late > 1:
                counters["late_over_1ms"] += 1
            counters["late_max_ms"] = max(counters["late_max_ms"], round(late, 3))
            if sequence < direction.latest_sent:
                counters["reordered"] += 1
            else:
                direction.latest_sent = sequence

    def read_control(self):
        data = os.read(sys.stdin.fileno(), 65536)
        if not data:
            self.stdin_open = False
            return
        self.stdin_buffer += data
        *lines, self.stdin_buffer = self.stdin_buffer.split(b"\n")
        for line in lines:
            text = line.decode(errors="replace").strip()
            if text:
                self.apply_control(text)

    def apply_control(self, text):
        try:
            request = json.loads(text)
            if not isinstance(request, dict) or not request or \
                    set(request) - {"up", "down", "both", "blackout"}:
                raise ValueError("expected an object with up, down, both and/or blackout")
            updated = {}
            for name in DIRECTIONS:
                settings = self.directions[name].settings
                settings = checked_settings(settings, request.get("both", {}))
                updated[name] = checked_settings(settings, request.get(name, {}))
            manual = request.get("blackout", self.blackouts.manual)
            if not isinstance(manual, bool):
                raise ValueError("blackout must be true or false")
        except ValueError as error:
            self.emit({"error": str(error), "line": text})
            return
        for name in DIRECTIONS:
            self.directions[name].settings = updated[name]
        t = now_ns()
        if manual != self.blackouts.manual:
            # A blackout started by hand inside a scheduled one is not counted twice.
            if manual and not self.blackouts.scheduled:
                self.blackouts.count += 1
            self.blackouts.manual = manual
            self.emit({"event": "blackout_start" if manual else "blackout_end",
                       "cause": "stdin", "t_ns": t})
        self.emit({"ack": request, "up": updated["up"], "down": updated["down"],
                   "blackout": self.blackouts.dark(t)})

    def drain_wakeups(self):
        try:
            while self.wake_read.recv(4096):
                pass
        except BlockingIOError:
            pass

    def finish(self):
        for _, _, _, name, _ in self.queue:
            self.directions[name].counters["pending"] += 1
        self.emit({"final": True, **{name: self.directions[name].counters for name in DIRECTIONS},
                   "blackouts": self.blackouts.count})


def stdin_usable():
    """Whether fd 0 is open (a relay started with it closed takes no control lines)."""
    try:
        os.fstat(sys.stdin.fileno())
        return True
    except (OSError, ValueError, AttributeError):
        return False


def enlarge_buffers(sock):
    """Kernel socket buffers of SOCKET_BUFFER: forced past rmem_max / wmem_max as root, else as
    large as those allow."""
    for force, plain in ((SO_RCVBUFFORCE, socket.SO_RCVBUF), (SO_SNDBUFFORCE, socket.SO_SNDBUF)):
        try:
            sock.setsockopt(socket.SOL_SOCKET, force, SOCKET_BUFFER)
        except PermissionError:
            sock.setsockopt(socket.SOL_SOCKET, plain, SOCKET_BUFFER)


def initial_settings(args, name):
    """A direction's settings from the command line: its own option, else the shared one."""

    def pick(option):
        own = getattr(args, f"{name}_{option}")
        return own if own is not None else getattr(args, option)

    return {"delay_ms": pick("delay") or 0.0, "jitter_ms": pick("jitter") or 0.0,
            "loss": pick("loss") or 0.0, "burst": pick("burst_loss")}


# ---------------------------------------------------------------------------------------------
# Command line


def milliseconds(text):
    try:
        return check_milliseconds(float(text), "the value")
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error


def probability(text):
    try:
        return check_probability(float(text), "the value")
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error


def burst_parameters(text):
    names = ("p_gb", "p_bg", "loss_bad", "loss_good")
    try:
        values = [float(part) for part in text.split(":")]
        if not 2 <= len(values) <= 4:
            raise ValueError("P_GB:P_BG[:LOSS_BAD[:LOSS_GOOD]]")
        return check_burst(dict(zip(names, values)))
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{text}: {error}") from error


def blackout_schedule(text):
    try:
        values = [float(part) for part in text.split(":")]
        if not 2 <= len(values) <= 4 or not 0 < values[1] < values[0] or \
                (len(values) >= 3 and values[2] < 0) or \
                (len(values) == 4 and (values[3] < 1 or values[3] != int(values[3]))):
            raise ValueError
    except ValueError as error:
        raise argparse.ArgumentTypeError(
            f"{text}: PERIOD:DURATION[:START[:COUNT]] seconds, 0 < DURATION < PERIOD, "
            "COUNT a whole number from 1") from error
    return (values[0], values[1], values[2] if len(values) >= 3 else values[0],
            int(values[3]) if len(values) == 4 else None)


def parse_arguments(argv):
    parser = argparse.ArgumentParser(
        description="UDP relay with delay, jitter, loss and blackouts (see the module text).")
    parser.add_argument("--listen", type=parse_address, metavar="HOST:PORT",
                        help="where clients send (port 0: the kernel picks one)")
    parser.add_argument("--forward", type=parse_address, metavar="HOST:PORT",
                        help="the server the packets go to")
    options = (("delay", milliseconds, "MS", "one-way delay"),
               ("jitter", milliseconds, "MS", "uniform +/- jitter per packet"),
               ("loss", probability, "P", "random loss probability"),
               ("burst-loss", burst_parameters, "P_GB:P_BG[:LOSS_BAD[:LOSS_GOOD]]",
                "Gilbert-Elliott loss"))
    for option, kind, metavar, text in options:
        parser.add_argument(f"--{option}", type=kind, metavar=metavar, help=f"{text}, both ways")
        for name in DIRECTIONS:
            way = "client to server" if name == "up" else "server to client"
            parser.add_argument(f"--{name}-{option}", type=kind, metavar=metavar,
                                help=f"{text}, {way} only")
    parser.add_argument("--blackout", type=blackout_schedule,
                        metavar="PERIOD:DURATION[:START[:COUNT]]",
                        help="dark both ways DURATION s every PERIOD s from START s, COUNT times")
    parser.add_argument("--seed", type=int, default=1, help="seed of every random draw")
    parser.add_argument("--realtime", action="store_true",
                        help="run under SCHED_FIFO (root), so busy cores do not delay packets")
    parser.add_argument("--self-test", action="store_true",
                        help="check the relay on loopback and print the results")
    args = parser.parse_args(argv)
    if not args.self_test and (args.listen is None or args.forward is None):
        parser.error("--listen and --forward are required")
    return args


# ---------------------------------------------------------------------------------------------
# Self-test: numbered packets through relays started as child processes, on loopback


class RelayProcess:
    """This script run as a relay in a child process, its output lines read on a thread."""

    def __init__(self, forward_port, options):
        self.process = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--listen", "127.0.0.1:0", "--forward",
             f"127.0.0.1:{forward_port}", *options],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.lines = queue.Queue()
        self.events = []
        threading.Thread(target=self.read, daemon=True).start()
        ready = self.next_line(lambda line: "ready" in line)
        self.port = int(ready["listen"].rsplit(":", 1)[1])

    def read(self):
        for line in self.process.stdout:
            message = json.loads(line)
            if "event" in message:
                self.events.append(message)
            self.lines.put(message)
        self.lines.put(None)

    def next_line(self, wanted, timeout=10):
        deadline = time.monotonic() + timeout
        while True:
            message = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            if message is None:
                raise RuntimeError("the relay exited")
            if wanted(message):
                return message

    def control(self, request):
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        return self.next_line(lambda line: "ack" in line or "error" in line)

    def cpu_seconds(self):
        with open(f"/proc/{self.process.pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        """SIGTERM by pid; the final counters."""
        self.process.send_signal(signal.SIGTERM)
        final = self.next_line(lambda line: line.get("final"))
        self.process.wait(timeout=10)
        final["exit_status"] = self.process.returncode
        return final


def exchange(relay, echo, count, rate, size=64, actions=()):
    """Sends `count` numbered packets at `rate`/s through the relay; `echo` (the relay's
    forward address) returns each one at once. `actions` are (seconds, request) controls sent
    on the way. Returns the send, echo and return times (ns) by sequence number, and the order
    in which the echo got them."""
    client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    client.bind(("127.0.0.1", 0))
    for sock in (client, echo):
        sock.setblocking(False)
        enlarge_buffers(sock)
    target = ("127.0.0.1", relay.port)
    sent, echoed, returned = {}, {}, {}
    up_order = []
    pending_actions = sorted(actions, key=lambda action: action[0])
    start = now_ns()
    interval = 1e9 / rate
    index = 0
    quiet_until = None
    while True:
        t = now_ns()
        while pending_actions and t >= start + pending_actions[0][0] * 1e9:
            relay.control(pending_actions.pop(0)[1])
        while index < count and t >= start + index * interval:
            client.sendto(struct.pack("!IQ", index, now_ns()).ljust(size, b"\0"), target)
            sent[index] = now_ns()
            index += 1
        if index == count and quiet_until is None:
            quiet_until = t + 300_000_000  # every delay used here is below 50 ms
        if quiet_until is not None and t >= quiet_until:
            break
        due = start + index * interval if index < count else quiet_until
        ready, _, _ = select.select([client, echo], [], [], max(0.0, (due - t) / 1e9))
        for sock in ready:
            while True:
                try:
                    payload, address = sock.recvfrom(65536)
                except BlockingIOError:
                    break
                stamp = now_ns()
                sequence = struct.unpack_from("!I", payload)[0]
                if sock is echo:
                    echoed[sequence] = stamp
                    up_order.append(sequence)
                    echo.sendto(payload, address)
                else:
                    returned[sequence] = stamp
    client.close()
    return sent, echoed, returned, up_order


def inversions(order):
    """Packets that arrived after one with a higher sequence number (the relay's definition)."""
    highest, count = -1, 0
    for sequence in order:
        if sequence < highest:
            count += 1
        highest = max(highest, sequence)
    return count


def milliseconds_of(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] / 1e6 if ordered else None


def self_test():
    checks = []

    def check(name, passed, detail):
        checks.append(passed)
        print(f"{'ok  ' if passed else 'FAIL'} {name}: {detail}", flush=True)

    echo = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    echo.bind(("127.0.0.1", 0))
    echo_port = echo.getsockname()[1]

    # Random loss set on the command line, and the same run through a second relay with the
    # same seed: the same packets must be lost.
    relay = RelayProcess(echo_port, ["--up-loss", "0.1", "--seed", "7"])
    sent, echoed, returned, _ = exchange(relay, echo, 2000, 2000)
    lost = set(sent) - set(echoed)
    check("random loss 10 % up", 0.08 <= len(lost) / 2000 <= 0.12 and set(returned) == set(echoed),
          f"{len(lost) / 2000:.1%} lost up, {len(set(echoed) - set(returned))} lost down")
    twin = RelayProcess(echo_port, ["--up-loss", "0.1", "--seed", "7"])
    twin_sent, twin_echoed, _, _ = exchange(twin, echo, 2000, 2000)
    twin.stop()
    differ = lost ^ (set(twin_sent) - set(twin_echoed))
    check("same seed, same losses", not differ, f"{len(differ)} packets differ")

    # Delay, both directions, set through standard input.
    relay.control({"both": {"delay_ms": 25, "loss": 0}})
    sent, echoed, returned, up_order = exchange(relay, echo, 500, 500)
    up = [echoed[s] - sent[s] for s in echoed]
    rtt = [returned[s] - sent[s] for s in returned]
    check("delay 25 ms each way",
          len(returned) == 500 and 24.5 <= milliseconds_of(up, 0.5) <= 26
          and 49.5 <= milliseconds_of(rtt, 0.5) <= 52 and inversions(up_order) == 0,
          f"one-way p50 {milliseconds_of(up, 0.5):.2f} ms, p99 {milliseconds_of(up, 0.99):.2f} "
          f"ms; round trip p50 {milliseconds_of(rtt, 0.5):.2f} ms; {500 - len(returned)} lost; "
          f"{inversions(up_order)} reordered")

    # Jitter: 20 +/- 10 ms up, independent per packet, so packets 0.5 ms apart reorder.
    relay.control({"up": {"delay_ms": 20, "jitter_ms": 10}, "down": {"delay_ms": 0}})
    sent, echoed, returned, up_order = exchange(relay, echo, 2000, 2000)
    up = [echoed[s] - sent[s] for s in echoed]
    low, high = milliseconds_of(up, 0), milliseconds_of(up, 1)
    # The upper bound leaves room for this process's own scheduling delays on a busy machine;
    # the relay's precision is its late_over_1ms counter, checked at the end.
    check("jitter 20 +/- 10 ms up", len(echoed) == 2000 and 9.5 <= low and high <= 35
          and inversions(up_order) > 500,
          f"one-way {low:.2f} to {high:.2f} ms, p50 {milliseconds_of(up, 0.5):.2f} ms; "
          f"{inversions(up_order)} of 2000 reordered")

    # Bursty loss: mean loss 3 %, mean burst 4 packets.
    relay.control({"up": {"delay_ms": 0, "jitter_ms": 0,
                          "burst": {"p_gb": 0.0077, "p_bg": 0.25}}})
    sent, echoed, _, _ = exchange(relay, echo, 8000, 4000)
    lost = [s not in echoed for s in range(8000)]
    bursts = [length for length in run_lengths(lost)]
    mean_burst = sum(bursts) / len(bursts) if bursts else 0
    check("Gilbert-Elliott loss (3 %, bursts of 4)",
          0.015 <= sum(lost) / 8000 <= 0.05 and 2.5 <= mean_burst <= 6,
          f"{sum(lost) / 8000:.1%} lost in {len(bursts)} bursts, mean burst {mean_burst:.1f}")

    # A blackout by hand, from 0.3 s to 0.7 s of a 1 s exchange.
    relay.control({"up": {"burst": None}})
    sent, echoed, returned, _ = exchange(
        relay, echo, 1000, 1000, actions=[(0.3, {"blackout": True}), (0.7, {"blackout": False})])
    lost = [s not in returned for s in range(1000)]
    gaps = run_lengths(lost)
    check("blackout by hand (0.4 s)", len(gaps) == 1 and 360 <= gaps[0] <= 440,
          f"lost runs {gaps}")

    # Throughput: 1316-byte packets at 2400/s both ways (25 Mb/s), 10 ms each way.
    relay.control({"both": {"delay_ms": 10, "jitter_ms": 0, "loss": 0}})
    cpu, wall = relay.cpu_seconds(), now_ns()
    sent, echoed, returned, _ = exchange(relay, echo, 4800, 2400, size=1316)
    cpu, wall = relay.cpu_seconds() - cpu, (now_ns() - wall) / 1e9
    late = [abs(echoed[s] - sent[s] - 10_000_000) for s in echoed]
    check("25 Mb/s both ways, 10 ms each way",
          len(returned) == 4800 and milliseconds_of(late, 0.5) <= 1
          and milliseconds_of(late, 0.99) <= 5,
          f"{4800 - len(returned)} lost; one-way error p50 {milliseconds_of(late, 0.5):.2f} ms, "
          f"p99 {milliseconds_of(late, 0.99):.2f} ms, max {milliseconds_of(late, 1):.2f} ms; "
          f"relay CPU {cpu / wall:.0%} of a core over {wall:.1f} s")

    final = relay.stop()
    up_counts = final["up"]
    closes = all(c["received"] == c["forwarded"] + c["dropped_loss"] + c["dropped_blackout"]
                 + c["dropped_send"] + c["pending"] for c in (final["up"], final["down"]))
    # Of the packets forwarded, at most 5 % leave more than 1 ms after their due time (on an
    # idle machine, well under 1 %; other real-time processes on a busy one take their turns).
    precise = all(c["late_over_1ms"] <= c["forwarded"] / 20 for c in (final["up"], final["down"]))
    check("final counters", final["exit_status"] == 0 and closes and precise
          and up_counts["reordered"] > 0,
          json.dumps({key: final[key] for key in ("up", "down", "blackouts")}))

    # A blackout schedule: 0.1 s dark every 0.5 s from 0.25 s after the first packet, three
    # times (the exchange lasts 1.8 s with its quiet tail: a fourth would start at 1.75 s).
    relay = RelayProcess(echo_port, ["--blackout", "0.5:0.1:0.25:3"])
    sent, echoed, returned, _ = exchange(relay, echo, 1500, 1000)
    final = relay.stop()
    starts = [e["t_ns"] for e in relay.events if e["event"] == "blackout_start"]
    ends = [e["t_ns"] for e in relay.events if e["event"] == "blackout_end"]
    gaps = run_lengths([s not in returned for s in range(1500)])
    exact = len(starts) == len(ends) == 3 and all(
        starts[i] - starts[0] == i * 500_000_000 and ends[i] - starts[i] == 100_000_000
        for i in range(3))
    check("blackout schedule 0.5:0.1:0.25:3", exact and len(gaps) == 3
          and all(95 <= gap <= 105 for gap in gaps) and final["blackouts"] == 3,
          f"lost runs {gaps}; {len(starts)} starts, {len(ends)} ends, stamped "
          f"{'exactly' if exact else 'wrongly'}")

    echo.close()
    passed = all(checks)
    print(f"self-test: {'passed' if passed else 'FAILED'} ({sum(checks)} of {len(checks)})")
    return 0 if passed else 1


def run_lengths(flags):
    """Lengths of the runs of True in a list of booleans."""
    lengths, current = [], 0
    for flag in flags + [False]:
        if flag:
            current += 1
        elif current:
            lengths.append(current)
            current = 0
    return lengths


def use_realtime_scheduling():
    """SCHED_FIFO at a low real-time priority: the relay stands for the network, and a loaded
    machine (the sender under test, a build) must not add its scheduling delays to the path.
    Its work per packet is bounded, and the kernel's real-time throttling caps it anyway."""
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
    except PermissionError:
        print("udp_relay: --realtime needs root (CAP_SYS_NICE); running normally",
              file=sys.stderr)


def main():
    args = parse_arguments(sys.argv[1:])
    if args.realtime:
        # The self-test's relays are its children and inherit the policy.
        use_realtime_scheduling()
    if args.self_test:
        sys.exit(self_test())
    # Line-buffered output: every line reaches a reader as soon as it is written.
    out = open(sys.stdout.fileno(), "w", buffering=1, closefd=False)
    try:
        Relay(args, out).run()
    except OSError as error:
        print(f"udp_relay: {error}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
