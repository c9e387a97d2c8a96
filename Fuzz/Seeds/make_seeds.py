#!/usr/bin/env python3
"""Cuts the fixtures into the small seed inputs of Fuzz/corpus/<target>/.

Run by `Scripts/fuzz --seeds`; the output is committed, so this only runs when the fixtures or
the input layouts of the targets change. Layouts are described at the top of each target's
main.swift.
"""
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "Fixtures")
CORPUS = os.path.join(ROOT, "Fuzz", "corpus")
HEADER = 12


def records(dump):
    """(offset, type, payload, raw record bytes) of every complete record."""
    offset = HEADER
    while offset + 9 <= len(dump):
        kind = dump[offset]
        (length,) = struct.unpack_from("<I", dump, offset + 1)
        end = offset + 5 + length + 4
        if end > len(dump):
            return
        yield offset, kind, dump[offset + 5 : offset + 5 + length], dump[offset:end]
        offset = end


def write(target, name, data):
    directory = os.path.join(CORPUS, target)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as handle:
        handle.write(data)


def dump_seeds(name, dump):
    """Header, the format records, then small records up to a few kilobytes."""
    header = dump[:HEADER]
    picked = []
    size = 0
    events = 0
    for _, kind, payload, raw in records(dump):
        if kind == 1 or (kind == 3 and events < 2):
            events += kind == 3
            picked.append(raw)
        elif kind == 2 and len(raw) <= 1500 and size < 5000:
            picked.append(raw)
            size += len(raw)
    body = header + b"".join(picked)
    stem = name.replace(".dump", "")
    # Mode 1 repairs CRCs after mutation; mode 0 keeps them, so the CRC check itself is fuzzed.
    write("DumpReader", stem + "-repair", b"\x01" + body)
    write("DumpReader", stem + "-strict-chunked", b"\x06" + body)


def codec_seeds(name, dump):
    stem = name.replace(".dump", "")
    configs = {}
    samples = {}
    for _, kind, payload, _ in records(dump):
        if kind == 1:
            configs.setdefault(payload[0], (payload[1], payload[2:]))
        elif kind == 2:
            samples.setdefault(payload[0], []).append((payload[1] & 1, payload[26:]))
    for track, (codec, config) in configs.items():
        chosen = [s for s in samples.get(track, []) if len(s[1]) <= 6000][:3]
        for index, (key, sample) in enumerate(chosen):
            if codec in (1, 3):
                data = bytes([key]) + struct.pack(">H", len(config)) + config + sample
                write("AVCC" if codec == 1 else "HEVC", f"{stem}-{index}", data)
            else:
                data = bytes([len(config)]) + config + sample
                write("AAC", f"{stem}-track{track}-{index}", data)


URLS = [
    "out.ts",
    "file:captures/out.ts?rate=800k",
    "congested.ts?rate=500k&stall=10s@5s",
    "null:",
    "null:?stall=10s@5s",
    "null:?rate=1.5M",
    "hls:out/live",
    "out/live/index.m3u8",
    "srt://127.0.0.1:9000",
    "srt://127.0.0.1:9001?latency=200&passphrase=correct-horse-battery&pbkeylen=32",
    "srt://[::1]:9000?streamid=%23!::r=live/feed,m=publish&maxbw=-1&mode=caller",
    "srt://host.example:9000/?passphrase=p%41ssphrase0&streamid=user1",
    "rtmp://127.0.0.1/live/stream-key",
    "rtmps://user:password@host.example:443/app/sub/key?token=x",
    "rtmp://[::1]:1935/live/key",
]


def hls_seeds():
    """A real recording cut as a kill would leave it: journal without its last lines, a segment
    and a partial one. Needs the debug `ingest` (swift build)."""
    import subprocess
    import tempfile

    ingest = os.path.join(ROOT, ".build", "debug", "ingest")
    if not os.path.exists(ingest):
        print("make_seeds: no .build/debug/ingest, HLSRecovery seeds left as they are")
        return
    with tempfile.TemporaryDirectory() as directory:
        out = os.path.join(directory, "hls")
        subprocess.run(
            [ingest, "replay", os.path.join(FIXTURES, "video-only.dump"), "--to", "hls:" + out,
             "--speed", "max", "--quiet"], check=True)
        with open(os.path.join(out, "journal"), "rb") as handle:
            lines = handle.read().splitlines(keepends=True)
        segments = sorted(n for n in os.listdir(out) if n.endswith(".ts"))
        with open(os.path.join(out, segments[0]), "rb") as handle:
            first = handle.read()[: 188 * 20]
        # Killed while writing the second segment: journal up to its open line.
        unfinished = b"".join(l for l in lines if not l.startswith(b"end"))
        opened = [i for i, l in enumerate(lines) if l.startswith(b"open")]
        cut = b"".join(lines[: opened[1] + 1]) if len(opened) > 1 else unfinished
        write("HLSRecovery", "killed-mid-segment", cut + b"\x00\x01" + first + first[: 188 * 7 + 50])
        write("HLSRecovery", "finished", b"".join(lines) + b"\x00\x00")
        write("HLSRecovery", "torn-line", cut[:-7] + b"\x00\x00" + first[:1000])


def main():
    for name in sorted(os.listdir(FIXTURES)):
        if not name.endswith(".dump"):
            continue
        with open(os.path.join(FIXTURES, name), "rb") as handle:
            dump = handle.read()
        dump_seeds(name, dump)
        codec_seeds(name, dump)
    hls_seeds()
    for index, url in enumerate(URLS):
        write("OutputURL", f"url-{index:02}", url.encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
