"""Ordinary programs that must keep working under the sandbox's seccomp allowlist.

Shared by ``bench/trace_syscalls.py`` (which traces them, with the fixtures, HumanEval
and FeedbackEval programs, to derive the allowlist in ``sandbox/allowlist.h``) and by
``tests/sandbox/test_allowlist.py`` (which runs them under the allowlist and requires
their expected verdicts). Each workload is what a submitted program plausibly does with
the standard library (or numpy): threads, deep recursion, big allocations, time zones,
files in the scratch directory, select/poll, signals to itself, sqlite...

Every expected output is written out here, not computed by running the program: a
program whose system calls are refused prints something else (or raises).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Workload:
    name: str
    source: str
    #: (stdin, expected stdout) per test; stdio programs only
    tests: tuple[tuple[str, str], ...] = (("\n", "ok\n"),)
    verdict: str = "AC"
    memory_mb: int = 256
    time_limit: float = 5.0
    tags: frozenset[str] = field(default_factory=frozenset)


def W(name: str, source: str, *tests: tuple[str, str], **kw: object) -> Workload:
    return Workload(name, source, tests or (("\n", "ok\n"),), **kw)  # type: ignore[arg-type]


WORKLOADS: list[Workload] = [
    W(
        "threads",
        r"""
import threading, queue
from concurrent.futures import ThreadPoolExecutor, as_completed
lock = threading.Lock()
cond = threading.Condition()
total = [0]
def add(k):
    with lock:
        total[0] += k
ts = [threading.Thread(target=add, args=(i,)) for i in range(20)]
for t in ts:
    t.start()
for t in ts:
    t.join()
q = queue.Queue()
ev = threading.Event()
def producer():
    for i in range(100):
        q.put(i)
    ev.set()
threading.Thread(target=producer, daemon=True).start()
ev.wait(10)
got = sum(q.get() for _ in range(100))
with ThreadPoolExecutor(max_workers=4) as ex:
    squares = sorted(f.result() for f in as_completed([ex.submit(pow, i, 2) for i in range(50)]))
    mapped = list(ex.map(lambda x: x * 3, range(10)))
timer_hit = threading.Event()
threading.Timer(0.01, timer_hit.set).start()
sem = threading.Semaphore(2)
with sem:
    pass
b = threading.Barrier(3)
bs = [threading.Thread(target=b.wait) for _ in range(2)]
for t in bs:
    t.start()
b.wait(10)
for t in bs:
    t.join()
local = threading.local()
local.x = 5
print(total[0], got, sum(squares), sum(mapped), timer_hit.wait(10), local.x,
      threading.active_count() >= 1, threading.get_ident() > 0)
""",
        ("\n", "190 4950 40425 135 True 5 True True\n"),
    ),
    W(
        "thread_big_stack_recursion",
        r"""
import sys, threading
sys.setrecursionlimit(1 << 20)
threading.stack_size(1 << 26)
out = []
def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)
def main():
    out.append(depth(int(input())))
t = threading.Thread(target=main)
t.start()
t.join()
print(out[0])
""",
        ("200000\n", "200000\n"),
    ),
    W(
        "deep_recursion",
        r"""
import sys
from functools import lru_cache
sys.setrecursionlimit(10 ** 6)
def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)
@lru_cache(maxsize=None)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
n = int(input())
print(depth(n), fib(3000) % 1000000007)
""",
        ("100000\n", "100000 885303321\n"),
    ),
    W(
        "big_allocations",
        r"""
import array, gc
a = list(range(5 * 10 ** 6))
b = bytearray(100 * 1024 * 1024)
b[-1] = 7
c = array.array("q", range(10 ** 6))
d = {i: i for i in range(10 ** 6)}
s = sum(a) + b[-1] + c[-1] + len(d)
del a, b, c, d
gc.collect()
e = [bytes(1 << 20) for _ in range(50)]
print(s, len(e))
""",
        ("\n", "12499999500006 50\n"),
        memory_mb=512,
    ),
    W(
        "allocation_over_the_limit",
        "x = [0] * (10 ** 9)\nprint(len(x))\n",
        ("\n", "x\n"),
        verdict="MLE",
        memory_mb=128,
    ),
    W(
        "time_and_zones",
        r"""
import time, datetime, calendar
from zoneinfo import ZoneInfo
t0, m0, p0, c0 = time.time(), time.monotonic(), time.perf_counter(), time.process_time()
time.sleep(0.01)
dt = datetime.datetime(2024, 3, 31, 1, 30, tzinfo=datetime.timezone.utc)
paris = dt.astimezone(ZoneInfo("Europe/Paris"))
ny = dt.astimezone(ZoneInfo("America/New_York"))
now = datetime.datetime.now(ZoneInfo("Asia/Tokyo"))
print(paris.isoformat(), ny.utcoffset(), calendar.isleap(2024), time.strftime("%Y", time.gmtime(0)),
      time.monotonic() - m0 >= 0.009, time.perf_counter() > p0, time.time() >= t0,
      time.process_time() >= c0, now.year >= 2024, time.localtime().tm_year >= 2024)
""",
        ("\n", "2024-03-31T03:30:00+02:00 -1 day, 20:00:00 True 1970 True True True True True True\n"),
    ),
    W(
        "stdlib_compute",
        r"""
import random, re, json, math, heapq, bisect, itertools, collections, statistics, string
import hashlib, base64, struct, zlib, pickle, copy, textwrap, dataclasses, enum, typing
from decimal import Decimal, getcontext
from fractions import Fraction
rng = random.Random(12345)
xs = [rng.randint(1, 1000) for _ in range(1000)]
getcontext().prec = 50
h = list(xs)
heapq.heapify(h)
@dataclasses.dataclass
class P:
    x: int
class Color(enum.Enum):
    RED = 1
print(sum(xs), re.sub(r"(\d+)", r"<\1>", "a1b22"), json.dumps({"a": [1, 2.5, None]}, sort_keys=True),
      Decimal(1) / Decimal(7), Fraction(3, 4) + Fraction(1, 6), math.comb(50, 25),
      heapq.nsmallest(3, h), bisect.bisect_left(sorted(xs), 500),
      len(list(itertools.permutations(range(6)))), collections.Counter("abracadabra").most_common(1),
      statistics.median([3, 1, 2]), hashlib.sha256(b"x").hexdigest()[:8],
      base64.b64encode(b"hi").decode(), struct.pack("<I", 1).hex(), zlib.crc32(b"abc"),
      pickle.loads(pickle.dumps({"x": P(3).x}))["x"], copy.deepcopy([[1]]), Color.RED.name,
      textwrap.shorten("hello world again", 12), string.ascii_lowercase[:3], 2 ** 10000 % 997,
      len(str(7 ** 20000)))
""",
        ("\n", "475282 a<1>b<22> {\"a\": [1, 2.5, null]} 0.14285714285714285714285714285714285714285714285714 "
         "11/12 126410606437752 [2, 3, 3] 530 720 [('a', 5)] 2 2d711642 aGk= 01000000 891568578 3 [[1]] RED "
         "hello [...] abc 40 16902\n"),
    ),
    W(
        "randomness",
        r"""
import os, random, secrets, uuid
r = random.SystemRandom()
vals = [os.urandom(16), secrets.token_bytes(8), random.getrandbits(64).to_bytes(8, "big"),
        uuid.uuid4().bytes, r.getrandbits(32).to_bytes(4, "big")]
random.seed()
print(len(set(vals)), [len(v) for v in vals], 0 <= random.random() < 1)
""",
        ("\n", "5 [16, 8, 8, 16, 4] True\n"),
    ),
    W(
        "stdin_routes",
        r"""
import io, os, sys
first = input()
second = sys.stdin.readline()
rest = sys.stdin.read()
print(first, second.strip(), rest.split(), flush=True)
sys.stdout.write("w\n")
sys.stdout.flush()
sys.stdout.buffer.write(b"b\n")
sys.stdout.flush()
os.write(1, b"raw\n")
print("err", file=sys.stderr, flush=True)
print(sys.stdin.isatty(), sys.stdout.isatty(), os.isatty(0))
""",
        ("1 2\n3\n4 5\n6\n", "1 2 3 ['4', '5', '6']\nw\nb\nraw\nFalse False False\n"),
    ),
    W(
        "stdin_fast_idioms",
        r"""
import io, os, sys
data = io.BytesIO(os.read(0, os.fstat(0).st_size)).read().split()
with open(0, closefd=False) as f:
    again = f.read()
buf = sys.stdin.buffer.read()
print(sum(map(int, data)), repr(again), repr(buf))
""",
        ("1 2 3\n4\n", "10 '' b''\n"),
    ),
    W(
        "stdin_buffer",
        r"""
import sys
lines = sys.stdin.buffer.readlines()
n = int(lines[0])
print(sum(int(x) for x in lines[1].split()[:n]), flush=True)
sys.stdout.buffer.write(b"%d\n" % n)
""",
        ("3\n10 20 30\n", "60\n3\n"),
    ),
    W(
        "big_output",
        "import sys\nsys.stdout.write('\\n'.join(map(str, range(200000))) + '\\n')\n",
        ("\n", "".join(f"{i}\n" for i in range(200000))),
    ),
    W(
        "scratch_files",
        r"""
import os, glob, pathlib, shutil, tempfile, gzip, mmap
cwd = os.getcwd()
with open("data.txt", "w") as f:
    f.write("hello\n")
with open("data.txt", "a") as f:
    f.write("more\n")
with open("data.txt") as f:
    text = f.read()
os.mkdir("sub")
pathlib.Path("sub/x.bin").write_bytes(b"\0" * 10)
os.rename("sub/x.bin", "sub/y.bin")
shutil.copyfile("data.txt", "sub/copy.txt")
with gzip.open("z.gz", "wt") as g:
    g.write("zip")
with gzip.open("z.gz", "rt") as g:
    z = g.read()
with tempfile.TemporaryFile(dir=".") as t:
    t.write(b"tmp")
    t.seek(0)
    tmp = t.read()
with tempfile.NamedTemporaryFile("w", dir=".", delete=False, suffix=".txt") as nt:
    nt.write("named")
fd, path = tempfile.mkstemp(dir=".")
os.write(fd, b"abc")
os.fsync(fd)
os.close(fd)
with open(path, "r+b") as f:
    m = mmap.mmap(f.fileno(), 0)
    m[0:1] = b"X"
    m.flush()
    m.close()
d = tempfile.mkdtemp(dir=".")
os.rmdir(d)
st = os.stat("data.txt")
listing = sorted(os.listdir("."))
walked = sorted(n for _, _, fs in os.walk(".") for n in fs)
with open("trunc.txt", "w+") as f:
    f.write("0123456789")
    f.truncate(4)
    fd2 = os.dup(f.fileno())
    os.dup2(fd2, 20)
    os.close(fd2)
    os.close(20)
os.replace("trunc.txt", "trunc2.txt")
here = os.open(".", os.O_RDONLY)
os.chdir("/")
os.fchdir(here)
os.close(here)
scanned = sorted(e.name for e in os.scandir(".") if e.is_file())
links = (os.lstat("trunc2.txt").st_size, os.path.realpath("trunc2.txt") == os.path.join(cwd, "trunc2.txt"))
os.unlink("trunc2.txt")
os.remove(path)
shutil.rmtree("sub")
os.truncate("data.txt", 3)
os.utime("data.txt", (1, 3))
print(os.path.isabs(cwd), text.split(), z, tmp, st.st_size, os.stat("data.txt").st_mtime,
      len(listing), len(walked), sorted(glob.glob("*.gz")), os.path.getsize("data.txt"),
      os.access("data.txt", os.R_OK | os.W_OK), os.path.exists("sub"), len(scanned), links,
      os.getcwd() == cwd)
""",
        ("\n", "True ['hello', 'more'] zip b'tmp' 11 3.0 5 6 ['z.gz'] 3 True False 5 (4, True) True\n"),
    ),
    W(
        "default_tempdir",
        r"""
import os, tempfile
with tempfile.TemporaryFile() as t:
    t.write(b"x")
with tempfile.TemporaryDirectory() as d:
    open(os.path.join(d, "f"), "w").close()
    n = len(os.listdir(d))
print(os.path.samefile(tempfile.gettempdir(), os.getcwd()), n)
""",
        ("\n", "True 1\n"),
    ),
    W(
        "select_poll_pipes",
        r"""
import os, select, selectors, socket
r, w = os.pipe()
os.write(w, b"x")
a = select.select([r], [w], [], 1.0)
p = select.poll()
p.register(r, select.POLLIN)
b = p.poll(1000)
ep = select.epoll()
ep.register(r, select.EPOLLIN)
c = ep.poll(1.0)
ep.close()
sel = selectors.DefaultSelector()
sel.register(r, selectors.EVENT_READ)
d = sel.select(1.0)
sel.close()
os.set_blocking(r, False)
data = os.read(r, 10)
try:
    os.read(r, 10)
    empty = "data"
except BlockingIOError:
    empty = "EAGAIN"
s1, s2 = socket.socketpair()
s1.sendall(b"ping")
got = s2.recv(4)
s2.shutdown(socket.SHUT_RDWR)
print(len(a[0]), len(a[1]), len(b), len(c), len(d), data, empty, got, select.select([], [], [], 0.01))
""",
        ("\n", "1 1 1 1 1 b'x' EAGAIN b'ping' ([], [], [])\n"),
    ),
    W(
        "asyncio",
        r"""
import asyncio
async def work(i):
    await asyncio.sleep(0.001 * i)
    return i * i
async def main():
    r = await asyncio.gather(*(work(i) for i in range(10)))
    q = asyncio.Queue()
    await q.put(5)
    loop = asyncio.get_running_loop()
    t = await loop.run_in_executor(None, sum, [1, 2, 3])
    return sum(r), await q.get(), t
print(asyncio.run(main()))
""",
        ("\n", "(285, 5, 6)\n"),
    ),
    W(
        "sqlite",
        r"""
import sqlite3
# in memory only: a database file needs POSIX locks, which the allowlist refuses (a lock
# on one of the root's host inodes would be seen by every other sandbox)
for where in (":memory:", ":memory:"):
    con = sqlite3.connect(where)
    con.execute("create table t (x integer)")
    con.executemany("insert into t values (?)", [(i,) for i in range(100)])
    con.commit()
    print(con.execute("select sum(x) from t").fetchone()[0])
    con.close()
""",
        ("\n", "4950\n4950\n"),
    ),
    W(
        "signals_to_itself",
        r"""
import faulthandler, os, signal, time
hits = []
signal.signal(signal.SIGUSR1, lambda s, f: hits.append("usr1"))
signal.signal(signal.SIGALRM, lambda s, f: hits.append("alrm"))
os.kill(os.getpid(), signal.SIGUSR1)
signal.raise_signal(signal.SIGUSR1)
signal.setitimer(signal.ITIMER_REAL, 0.01)
deadline = time.monotonic() + 5
while "alrm" not in hits and time.monotonic() < deadline:
    time.sleep(0.001)
signal.alarm(10)
signal.alarm(0)
old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2})
signal.pthread_sigmask(signal.SIG_SETMASK, old)
faulthandler.enable()
faulthandler.disable()
print(hits, signal.getitimer(signal.ITIMER_REAL))
""",
        ("\n", "['usr1', 'usr1', 'alrm'] (0.0, 0.0)\n"),
    ),
    W(
        "process_info",
        r"""
import os, platform, resource, sys
# in its zygote's PID namespace the child's parent is PID 1 and its session and
# process group lie outside (0)
info = [os.getpid() > 1, os.getppid() >= 1, os.getuid() >= 0, os.geteuid() >= 0, os.getgid() >= 0,
        (os.cpu_count() or 1) >= 1, len(os.sched_getaffinity(0)) >= 1, platform.machine() != "",
        os.uname().sysname, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 0,
        resource.getrlimit(resource.RLIMIT_AS)[0] > 0, os.times().user >= 0,
        sys.getrecursionlimit() > 0, os.umask(0o22) >= 0, os.getpgrp() >= 0, os.getsid(0) >= 0]
resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
print(info)
""",
        ("\n", "[True, True, True, True, True, True, True, True, 'Linux', True, True, True, True, True, True, True]\n"),
    ),
    W(
        "ctypes_and_mmap",
        r"""
import ctypes, mmap
libc = ctypes.CDLL(None)
libc.strlen.restype = ctypes.c_size_t
m = mmap.mmap(-1, 1 << 20)
m[:5] = b"hello"
cb = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(lambda x: x + 1)
print(libc.strlen(b"abcdef"), m[:5], cb(41))
""",
        ("\n", "6 b'hello' 42\n"),
    ),
    W(
        "numpy",
        r"""
import numpy as np
rng = np.random.default_rng(7)
a = rng.random((200, 200))
b = a @ a.T
w = np.linalg.eigvalsh(b)
x = np.linalg.solve(b + np.eye(200) * 200, np.ones(200))
s = np.sort(rng.integers(0, 1000, 10 ** 6))
print(bool(w.min() > -1e-9), x.shape, int(s[0]) >= 0, int(np.arange(10 ** 6).sum()),
      np.fft.fft(np.ones(8)).real.tolist()[0])
""",
        ("\n", "True (200,) True 499999500000 8.0\n"),
        memory_mb=512,
        tags=frozenset({"numpy"}),
    ),
    W(
        "numpy_imported_by_the_child",
        r"""
import importlib
np = importlib.import_module("numpy")  # not named in the bytecode: no pre-import
a = np.arange(1, 301, dtype=float).reshape(100, 3)
print(int((a.T @ a).trace()), int(np.linalg.matrix_rank(a)))
""",
        ("\n", "9045050 2\n"),
        memory_mb=512,
        tags=frozenset({"numpy"}),
    ),
    W(
        "numpy_over_the_limit",
        "import numpy\na = numpy.ones(10 ** 10, dtype=numpy.uint8)\nprint(a.sum())\n",
        ("\n", "x\n"),
        verdict="MLE",
        tags=frozenset({"numpy"}),
    ),
    W(
        "exits_and_errors",
        "import sys\nn = int(input())\nif n == 1:\n    sys.exit(3)\nif n == 2:\n    raise ValueError('x')\n"
        "if n == 3:\n    exit(0)\nprint('ok')\n",
        ("0\n", "ok\n"),
    ),
]

#: A call-kind program (imported module, entry point called with JSON arguments).
CALL_SOURCE = r"""
import math, functools, itertools
def solve(xs, k=1):
    @functools.lru_cache(maxsize=None)
    def f(i):
        return 0 if i < 0 else max(f(i - 1), xs[i] * k + (f(i - 2) if i >= 2 else 0))
    return [f(len(xs) - 1), math.gcd(*xs), list(itertools.accumulate(xs))]
"""
CALL_TESTS = (
    ({"args": [[3, 6, 9, 12]], "kwargs": {"k": 2}}, [36, 3, [3, 9, 18, 30]]),
    ({"args": [[5]], "kwargs": {}}, [5, 5, [5]]),
)
