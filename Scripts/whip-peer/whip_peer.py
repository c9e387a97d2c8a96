#!/usr/bin/env python3
"""A WHIP endpoint (RFC 9725) on an independent WebRTC stack (aiortc), for the tests.

    whip_peer.py --port PORT --dir DIR [--token-file FILE] [--host ADDRESS]
                 [--relay "IMPAIRMENTS"] [--tls-cert PEM --tls-key PEM]

Listens on ADDRESS:PORT (default 127.0.0.1) and prints "whip-peer listening on ADDRESS:PORT"
when ready. A test that runs the peer in a network namespace behind a shaped link gives the
namespace's own address, which is also where aiortc's ICE candidates are.

    POST   /whip/<name>            SDP offer in, 201 + Location + SDP answer out (non-trickle:
                                   the answer holds every candidate); 401 when a token is set
                                   and the request's bearer token differs
    PATCH  /whip/<name>/<session>  405: this endpoint does not take trickled candidates
    DELETE /whip/<name>/<session>  200; the recording is closed

Per session, in DIR:
    <name>.mkv           the received H.264 access units and Opus packets as they arrived,
                         remuxed without decoding (what ffmpeg and GStreamer then decode)
    <name>.frames.jsonl  one line per received frame: kind, NAL unit types, RTP timestamp
                         (from 0), arrival time (unix ns), size, keyframe, and whether aiortc's decoder took it
    <name>.events.jsonl  the request, ICE and connection states, the DELETE, the totals

aiortc runs as installed: its jitter buffers too. A lost video packet holds every later frame
until it arrives or 512 packets came after it (seconds on a slow link), so the picture keeps
moving only where the sender retransmits what aiortc's NACKs ask for.

--tls-cert and --tls-key serve https instead of http.

--relay puts the impairment relay (Scripts/bench-support/udp_relay.py, with these arguments:
"--delay 50 --loss 0.02") on the session's path, on aiortc's address (relay_path.py): the sender reaches
aiortc only through it, both ways. Its final counters are the events file's "relay-final" line.

aiortc answers with receiver reports, NACKs, PLIs and REMB, as a browser would. Its codec
lists are aiortc's defaults, untouched: for H.264 that is Baseline and Constrained Baseline
(42001f, 42e01f) only, so an offer of Main or High alone is refused (HTTP 400, "Failed to set
remote video description send parameters") and a sender that offers several profiles is
answered with Constrained Baseline. The recording hook below only reads the frames aiortc
depayloads; it changes nothing in what aiortc negotiates or decodes.
"""

import argparse
import asyncio
from fractions import Fraction
import json
import os
import queue
import secrets
import signal
import ssl
import sys
import threading
import time

import av
from aiohttp import web
from aiortc import RTCPeerConnection, RTCSessionDescription
from aiortc import rtcrtpreceiver
from aiortc.codecs import get_decoder

import relay_path

OPUS_HEAD = b"OpusHead" + bytes([1, 2]) + (312).to_bytes(2, "little") + (48000).to_bytes(4, "little") + bytes(3)
RTP_TIME_BASE = {"video": Fraction(1, 90000), "audio": Fraction(1, 48000)}
# Frames held before the first keyframe: the file's header needs the SPS and PPS.
PENDING_LIMIT = 2000


def nal_units(data: bytes):
    """The NAL units of an Annex B access unit."""
    starts = []
    i = 0
    while True:
        i = data.find(b"\x00\x00\x01", i)
        if i < 0:
            break
        starts.append(i + 3)
        i += 3
    for n, start in enumerate(starts):
        end = starts[n + 1] - 3 if n + 1 < len(starts) else len(data)
        while end > start and data[end - 1] == 0:
            end -= 1
        yield data[start:end]


class Recording:
    """One session's files. Written from aiortc's decoder threads, so behind a lock."""

    def __init__(self, directory: str, name: str) -> None:
        self.lock = threading.Lock()
        self.base = os.path.join(directory, name)
        self.frames = open(self.base + ".frames.jsonl", "w", buffering=1)
        self.events = open(self.base + ".events.jsonl", "w", buffering=1)
        self.container = None
        self.video = None
        self.audio = None
        self.pending = []
        self.counts = {"video": 0, "audio": 0, "decode_errors": 0, "keyframes": 0}
        self.closed = False

    def event(self, what: str, **fields) -> None:
        fields.update(event=what, time_ns=time.time_ns())
        with self.lock:
            if not self.events.closed:
                self.events.write(json.dumps(fields) + "\n")

    def take(self, kind: str, data: bytes, timestamp: int, decoded: bool) -> None:
        types = [n[0] & 0x1F for n in nal_units(data) if n] if kind == "video" else []
        keyframe = 5 in types
        line = {
            "kind": kind,
            "nal_types": types,
            "rtp": timestamp,
            "recv_ns": time.time_ns(),
            "bytes": len(data),
            "keyframe": keyframe,
            "decoded": decoded,
        }
        with self.lock:
            if self.closed:
                return
            self.frames.write(json.dumps(line) + "\n")
            self.counts[kind] += 1
            self.counts["keyframes"] += keyframe
            self.counts["decode_errors"] += not decoded
            if self.container is None:
                if keyframe:
                    self.open_container(data)
                elif len(self.pending) < PENDING_LIMIT:
                    self.pending.append((kind, data, timestamp, keyframe))
                    return
                else:
                    return
                for held in self.pending:
                    self.mux(*held)
                self.pending = []
            self.mux(kind, data, timestamp, keyframe)

    def open_container(self, keyframe: bytes) -> None:
        parameter_sets = [n for n in nal_units(keyframe) if n and n[0] & 0x1F in (7, 8)]
        self.container = av.open(self.base + ".mkv", "w", format="matroska")
        self.video = self.container.add_stream("h264", rate=90000)
        self.video.codec_context.extradata = b"".join(b"\x00\x00\x00\x01" + n for n in parameter_sets)
        self.video.time_base = RTP_TIME_BASE["video"]
        self.audio = self.container.add_stream("opus", rate=48000)
        self.audio.codec_context.extradata = OPUS_HEAD
        self.audio.time_base = RTP_TIME_BASE["audio"]

    def mux(self, kind: str, data: bytes, timestamp: int, keyframe: bool) -> None:
        # Audio before the first keyframe starts the file with nothing to show: dropped, as a
        # player joining the stream would.
        stream = self.video if kind == "video" else self.audio
        packet = av.Packet(data)
        packet.stream = stream
        # The RTP clock's, not the stream's: the muxer changes the stream's when it starts.
        packet.time_base = RTP_TIME_BASE[kind]
        packet.pts = timestamp
        packet.dts = timestamp
        packet.is_keyframe = keyframe
        try:
            self.container.mux(packet)
        except av.FFmpegError as error:
            self.counts["mux_errors"] = self.counts.get("mux_errors", 0) + 1
            self.events.write(json.dumps({"event": "mux-error", "error": str(error)}) + "\n")

    def close(self) -> None:
        with self.lock:
            if self.closed:
                return
            self.closed = True
            if self.container is not None:
                self.container.close()
            self.events.write(json.dumps({"event": "closed", "time_ns": time.time_ns(), **self.counts}) + "\n")
            self.frames.close()
            self.events.close()


# aiortc's receiver hands each depayloaded frame to a decoder thread it starts with this
# function; ours records the frame first, then decodes as aiortc would. Which recording a
# thread serves is known from its output queue, the track's.
recordings_by_queue: dict = {}


def recording_decoder_worker(loop, input_q: queue.Queue, output_q: asyncio.Queue, decode_error) -> None:
    codec_name = None
    decoder = None
    while True:
        task = input_q.get()
        if task is None:
            asyncio.run_coroutine_threadsafe(output_q.put(None), loop)
            break
        codec, encoded_frame = task
        if codec.name != codec_name:
            decoder = get_decoder(codec)
            codec_name = codec.name
        try:
            frames = decoder.decode(encoded_frame)
            decoded = True
        except av.FFmpegError:
            frames = []
            decoded = False
            decode_error.set()
        recording = recordings_by_queue.get(id(output_q))
        if recording is not None:
            kind = "video" if codec.mimeType.lower().startswith("video/") else "audio"
            try:
                recording.take(kind, encoded_frame.data, encoded_frame.timestamp, decoded)
            except Exception as error:  # a recording fault must not end aiortc's decoding
                recording.event("record-error", error=repr(error))
        for frame in frames:
            asyncio.run_coroutine_threadsafe(output_q.put(frame), loop)


rtcrtpreceiver.decoder_worker = recording_decoder_worker


class Endpoint:
    def __init__(self, directory: str, token: str | None, host: str = "127.0.0.1",
                 relay: str | None = None) -> None:
        self.directory = directory
        self.token = token
        self.host = host
        self.relay = relay
        self.sessions: dict = {}
        self.relays: dict = {}

    def authorized(self, request: web.Request) -> bool:
        if self.token is None:
            return True
        given = request.headers.get("Authorization", "")
        return secrets.compare_digest(given, "Bearer " + self.token)

    async def post(self, request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if not self.authorized(request):
            return web.Response(status=401, text="bearer token refused\n")
        if request.content_type != "application/sdp":
            return web.Response(status=415, text="the offer must be application/sdp\n")
        offer = await request.text()
        recording = Recording(self.directory, name)
        recording.event("post", bytes=len(offer))
        connection = RTCPeerConnection()
        session = secrets.token_hex(8)
        self.sessions[session] = (connection, recording)

        @connection.on("track")
        def on_track(track) -> None:
            recordings_by_queue[id(track._queue)] = recording
            recording.event("track", kind=track.kind)

            async def drain() -> None:
                # Decoded frames are only counted: aiortc queues them without bound otherwise.
                while True:
                    try:
                        await track.recv()
                    except Exception:
                        return

            asyncio.ensure_future(drain())

        @connection.on("iceconnectionstatechange")
        def on_ice() -> None:
            recording.event("ice", state=connection.iceConnectionState)

        @connection.on("connectionstatechange")
        def on_connection() -> None:
            recording.event("connection", state=connection.connectionState)

        if self.relay is not None:
            offer = relay_path.offer_for_receiver(offer)
        try:
            await connection.setRemoteDescription(RTCSessionDescription(sdp=offer, type="offer"))
            if not connection.getTransceivers():
                raise ValueError("the offer has no media section")
            answer = await connection.createAnswer()
            await connection.setLocalDescription(answer)
        except Exception as error:  # aiortc raises plain exceptions for offers it cannot take
            recording.event("refused", error=str(error))
            await self.end(session)
            return web.Response(status=400, text=f"offer refused: {error}\n")
        recording.event("answered", media=[t.kind for t in connection.getTransceivers()])
        answer = connection.localDescription.sdp
        if self.relay is not None:
            address = relay_path.receiver_address(answer)
            if address is None:
                await self.end(session)
                return web.Response(status=500, text="no IPv4 candidate to relay to\n")
            # On the receiver's own address: the one the sender's candidates reach.
            relay = relay_path.Relay(address[0], address, self.relay, tied=True)
            self.relays[session] = relay
            answer = relay_path.answer_for_sender(answer, address[0], relay.port)
            recording.event("relay", listen=f"{address[0]}:{relay.port}",
                            forward=f"{address[0]}:{address[1]}", arguments=self.relay)
        return web.Response(
            status=201,
            body=answer,
            content_type="application/sdp",
            headers={"Location": f"/whip/{name}/{session}"},
        )

    async def patch(self, request: web.Request) -> web.Response:
        if request.match_info["session"] not in self.sessions:
            return web.Response(status=404)
        return web.Response(status=405, headers={"Allow": "DELETE"})

    async def delete(self, request: web.Request) -> web.Response:
        session = request.match_info["session"]
        if session not in self.sessions:
            return web.Response(status=404)
        if not self.authorized(request):
            return web.Response(status=401)
        self.sessions[session][1].event("delete")
        await self.end(session)
        return web.Response(status=200)

    async def end(self, session: str) -> None:
        connection, recording = self.sessions.pop(session)
        await connection.close()
        relay = self.relays.pop(session, None)
        if relay is not None:
            recording.event("relay-final", **relay.stop())
        recording.close()

    async def end_all(self) -> None:
        for session in list(self.sessions):
            await self.end(session)


async def serve(host: str, port: int, directory: str, token: str | None, relay: str | None,
                tls: ssl.SSLContext | None = None) -> None:
    endpoint = Endpoint(directory, token, host, relay)
    app = web.Application()
    app.router.add_post("/whip/{name}", endpoint.post)
    app.router.add_patch("/whip/{name}/{session}", endpoint.patch)
    app.router.add_delete("/whip/{name}/{session}", endpoint.delete)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, host, port, ssl_context=tls).start()
    print(f"whip-peer listening on {host}:{port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await stop.wait()
    # Sessions still open are closed so their recordings end with whole files.
    await endpoint.end_all()
    await runner.cleanup()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dir", required=True, help="where recordings are written")
    parser.add_argument("--token-file", help="a file holding the bearer token to require")
    parser.add_argument("--host", default="127.0.0.1", help="the address to listen on")
    parser.add_argument("--relay", help="udp_relay.py impairments for each session's path")
    parser.add_argument("--tls-cert", help="serve https with this PEM certificate (and --tls-key)")
    parser.add_argument("--tls-key", help="the PEM private key of --tls-cert")
    arguments = parser.parse_args()
    tls = None
    if arguments.tls_cert:
        tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        tls.load_cert_chain(arguments.tls_cert, arguments.tls_key)
    token = None
    if arguments.token_file:
        with open(arguments.token_file) as file:
            token = file.read().strip()
    os.makedirs(arguments.dir, exist_ok=True)
    asyncio.run(serve(arguments.host, arguments.port, arguments.dir, token, arguments.relay, tls))
    return 0


if __name__ == "__main__":
    sys.exit(main())
