"""A loopback-only network namespace for a Ray cluster on a shared machine.

Ray binds to every interface unless told otherwise; the benchmark and the cluster
tests start their clusters with every address on 127.0.0.1 and, as root, inside a
fresh network namespace (``unshare -n``) where only loopback exists. Loopback starts
down there: :func:`loopback_up` raises it without needing the ``ip`` tool.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import struct

__all__ = ["in_private_netns", "loopback_up", "netns_command"]

_ENV = "PAIRBENCH_NETNS"


def netns_command(cmd: list[str]) -> tuple[list[str], dict[str, str]]:
    """``cmd`` wrapped in ``unshare -n`` when root (and the tool is there), and the env
    marking it, so the process knows to raise loopback."""
    if os.geteuid() == 0 and shutil.which("unshare"):
        return ["unshare", "-n", "--", *cmd], {_ENV: "1"}
    return cmd, {}


def in_private_netns() -> bool:
    return os.environ.get(_ENV) == "1"


def loopback_up() -> None:
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s, siocgifflags, req))[1]
        if not flags & iff_up:
            fcntl.ioctl(s, siocsifflags, struct.pack("16sH14x", b"lo", flags | iff_up))
