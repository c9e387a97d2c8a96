"""An impaired path for a WHIP session: the impairment relay (Scripts/bench-support/udp_relay.py)
between the sender and a WebRTC receiver, by rewriting the candidates each side learns.

ICE finds a path from the candidates in the offer and the answer. Here the receiver is given
one candidate for the sender that leads nowhere (TEST-NET-2, RFC 5737) and the sender is given
one for the receiver: the relay's. The sender's checks reach the receiver through the relay,
the receiver answers (and sends its own checks and RTCP) to the address they came from, the
relay's, and nothing can go around it. The impairments are udp_relay.py's own arguments
(`--delay 50 --loss 0.02`, each way).

Used by whip_peer.py (aiortc) and chromium_peer.py (Chromium) with `--relay "ARGS"`; the
relay listens on the peer's own address, a port of its own per session.
"""

import ctypes
import json
import os
import re
import shlex
import signal
import subprocess
import sys

RELAY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench-support", "udp_relay.py")
NOWHERE = "198.51.100.1"


def sdp_lines(sdp: str) -> list:
    return [line for line in sdp.replace("\r\n", "\n").split("\n")]


def offer_for_receiver(offer: str) -> str:
    """The offer with its candidates replaced by one the receiver cannot reach."""
    out = []
    placed = False
    for line in sdp_lines(offer):
        if line.startswith("a=candidate:"):
            if not placed:
                out.append(f"a=candidate:1 1 UDP 2015363327 {NOWHERE} 9 typ host")
                placed = True
            continue
        out.append(line)
    return "\r\n".join(out)


def receiver_address(answer: str):
    """The receiver's first IPv4 UDP candidate (host, port), or None."""
    for line in sdp_lines(answer):
        match = re.match(r"a=candidate:\S+ 1 udp \d+ (\d+\.\d+\.\d+\.\d+) (\d+) typ (\S+)", line, re.I)
        if match:
            return match.group(1), int(match.group(2))
    return None


def answer_for_sender(answer: str, host: str, port: int) -> str:
    """The answer with its candidates replaced by the relay's address."""
    out = []
    placed = set()
    section = -1
    for line in sdp_lines(answer):
        if line.startswith("m="):
            section += 1
        if line.startswith("a=candidate:"):
            if section not in placed:
                out.append(f"a=candidate:1 1 udp 2130706431 {host} {port} typ host")
                placed.add(section)
            continue
        if line.startswith("c=IN IP4 "):
            line = f"c=IN IP4 {host}"
        if line.startswith("m=") and not line.split(" ")[1] == "0":
            fields = line.split(" ")
            fields[1] = str(port)
            line = " ".join(fields)
        out.append(line)
    return "\r\n".join(out)


def die_with_parent() -> None:
    """In a child, before exec: SIGTERM when the thread that started it ends (a test's kill of
    the peer: its main thread). Only for children started from a thread that lives as long as
    the peer."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


class Relay:
    """One udp_relay.py process for one session."""

    def __init__(self, listen_host: str, forward: tuple, arguments: str,
                 tied: bool = False) -> None:
        """`tied`: started from the peer's main thread, and ended with it (die_with_parent)."""
        command = [sys.executable, RELAY, "--listen", f"{listen_host}:0", "--forward",
                   f"{forward[0]}:{forward[1]}"] + shlex.split(arguments)
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True,
                                        preexec_fn=die_with_parent if tied else None)
        ready = json.loads(self.process.stdout.readline() or "{}")
        if not ready.get("ready"):
            self.process.kill()
            raise RuntimeError("udp_relay.py did not start: " + self.process.stderr.read()[-500:])
        self.port = int(ready["listen"].rsplit(":", 1)[1])

    def stop(self) -> dict:
        """Stops the relay; its final counters."""
        if self.process.poll() is None:
            self.process.terminate()
        try:
            out, _ = self.process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, _ = self.process.communicate()
        for line in reversed((out or "").splitlines()):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if value.get("final"):
                return value
        return {}
