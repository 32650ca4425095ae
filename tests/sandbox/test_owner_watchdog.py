"""The worker's watchdog on the pool's process (a pidfd), the layer beside PDEATHSIG.

PDEATHSIG follows the parent *thread*, so a host that forks workers from one thread
and dies another way (a Ray actor SIGKILLed) must not depend on it alone: the
worker polls a pidfd of the pool's process with every blocking wait. These tests
drive that wait directly (``worker.py`` is stdlib-only and importable); the whole
chain, an actor SIGKILLed mid-test with no worker, zygote or child left, is in
``tests/cluster``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

from pairbench_async.sandbox import worker


def _owner() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def test_a_live_owner_lets_the_wait_end_on_data() -> None:
    owner = _owner()
    r, w = os.pipe()
    fd = worker.watch_owner(owner.pid)
    try:
        assert fd >= 10  # moved above the fds a child overwrites
        os.write(w, b"x")
        assert worker.wait_for(r, fd) is True
    finally:
        owner.kill()
        owner.wait()
        for f in (r, w, fd):
            os.close(f)


def test_a_dead_owner_ends_the_wait_at_once() -> None:
    owner = _owner()
    r, w = os.pipe()
    fd = worker.watch_owner(owner.pid)
    owner.kill()
    owner.wait()
    t0 = time.monotonic()
    try:
        assert worker.wait_for(r, fd) is False  # no data ever came: the owner's death ended it
        assert time.monotonic() - t0 < 1
    finally:
        for f in (r, w, fd):
            os.close(f)


def test_waiting_for_a_zygote_ends_when_the_owner_dies() -> None:
    owner = _owner()
    zygote = _owner()  # a stand-in child that would run for a minute
    fd = worker.watch_owner(owner.pid)
    try:
        owner.kill()
        owner.wait()
        assert worker.wait_for_zygote(zygote.pid, fd) is False
        assert zygote.poll() is None  # still running: the worker kills it next (main)
    finally:
        zygote.kill()
        zygote.wait()
        os.close(fd)


def test_waiting_for_a_zygote_ends_when_it_exits() -> None:
    owner = _owner()
    zygote = subprocess.Popen([sys.executable, "-c", "pass"])
    fd = worker.watch_owner(owner.pid)
    try:
        assert worker.wait_for_zygote(zygote.pid, fd) is True
    finally:
        zygote.wait()
        owner.kill()
        owner.wait()
        os.close(fd)
