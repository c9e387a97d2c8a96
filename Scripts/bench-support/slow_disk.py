#!/usr/bin/env python3
"""A slow disk: a FUSE file system that passes everything through to a backing directory and
takes its time over writes, as a worn SD card or a network share behind a slow link does.

    slow_disk.py --backing DIR --mount DIR --rate BYTES_PER_SECOND

Every write waits until the bytes written so far could have gone at RATE bytes a second (one
writer at a time, as one disk); reads, renames, deletes and directory listings are not slowed.
Prints "slow-disk mounted" once the mount is up, and unmounts on SIGTERM or SIGINT (libfuse's
own handlers). Needs fusepy (PyPI) and libfuse2; mounting needs root or fusermount.
"""

import argparse
import os
import sys
import time

from fuse import FUSE, Operations


class SlowDisk(Operations):
    """Passthrough to `backing`, with writes paced to `rate` bytes a second."""

    def __init__(self, backing, rate):
        self.backing = backing
        self.rate = float(rate)
        self.free_at = time.monotonic()

    def path(self, name):
        return os.path.join(self.backing, name.lstrip("/"))

    def init(self, _path):
        print("slow-disk mounted", flush=True)

    def access(self, name, mode):
        if not os.access(self.path(name), mode):
            raise OSError(13, "permission denied")

    def getattr(self, name, fh=None):
        st = os.lstat(self.path(name))
        keys = ("st_mode", "st_nlink", "st_size", "st_uid", "st_gid", "st_atime", "st_mtime",
                "st_ctime")
        return {key: getattr(st, key) for key in keys}

    def statfs(self, name):
        st = os.statvfs(self.path(name))
        keys = ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail", "f_ffree", "f_files",
                "f_flag", "f_frsize", "f_namemax")
        return {key: getattr(st, key) for key in keys}

    def readdir(self, name, fh):
        return [".", ".."] + os.listdir(self.path(name))

    def mkdir(self, name, mode):
        os.mkdir(self.path(name), mode)

    def rmdir(self, name):
        os.rmdir(self.path(name))

    def chmod(self, name, mode):
        os.chmod(self.path(name), mode)

    def chown(self, name, uid, gid):
        os.chown(self.path(name), uid, gid)

    def utimens(self, name, times=None):
        os.utime(self.path(name), times)

    def create(self, name, mode, fi=None):
        return os.open(self.path(name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)

    def open(self, name, flags):
        return os.open(self.path(name), flags)

    def read(self, name, size, offset, fh):
        return os.pread(fh, size, offset)

    def write(self, name, data, offset, fh):
        # One disk: the write ends when the bytes before it and its own have gone at the rate.
        now = time.monotonic()
        self.free_at = max(self.free_at, now) + len(data) / self.rate
        time.sleep(max(0.0, self.free_at - now))
        return os.pwrite(fh, data, offset)

    def truncate(self, name, length, fh=None):
        os.truncate(self.path(name), length)

    def flush(self, name, fh):
        return 0

    def fsync(self, name, datasync, fh):
        os.fsync(fh)

    def release(self, name, fh):
        os.close(fh)

    def rename(self, old, new):
        os.rename(self.path(old), self.path(new))

    def unlink(self, name):
        os.unlink(self.path(name))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backing", required=True)
    parser.add_argument("--mount", required=True)
    parser.add_argument("--rate", type=float, required=True)
    args = parser.parse_args()
    if args.rate <= 0:
        sys.exit("slow_disk: --rate must be above 0")
    # One thread: writes queue behind each other as on one disk.
    FUSE(SlowDisk(os.path.realpath(args.backing), args.rate), args.mount, foreground=True,
         nothreads=True)


if __name__ == "__main__":
    main()
