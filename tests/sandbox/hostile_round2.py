"""The second-round hostile battery: programs that attack what round one left open.

Classes (the letters follow the specification the tests were written to):

* **A** host Unix sockets: no ``socket()`` at all, no connect/bind/listen/accept,
  no sendmsg/sendmmsg, no sendto with a destination; ``socketpair`` and plain
  send/recv (and so asyncio) keep working.
* **B** the worker's mount namespace: /tmp, /run, /home, /root, /dev/shm,
  /var/tmp hidden, the rest read-only; no write, no ``utime`` outside the scratch.
* **C** SysV and POSIX IPC: nothing is created, nothing planted is found later.
* **E** files across tests and programs: every test starts in an empty scratch
  directory, whatever the last one left there and however it hid it.
* **F** memory: no memfd; huge allocations are MLE, never RE.
* **G** buffers: nothing of another test is in a child's memory; no inotify.
* **H** pre-import: dead-branch imports never run anything.
* **X** attacks beyond that specification (found while writing this battery).

Class D (processes outliving the evaluator) is in ``test_survival.py``.

Each case is a program and the tests of one job (``steps``), each step with the
verdicts it may get and checks of its output. Survey programs try many routes to
one goal and print ``label=OUTCOME`` tokens: ``PWNED(...)`` when a route worked,
otherwise the errno name (``EPERM``) or exception class. ``@NAME@`` tokens in
sources and inputs are filled in by the test with real paths, names and canaries.
"""

from __future__ import annotations

from dataclasses import dataclass, field


def V(*names: str) -> frozenset[str]:
    return frozenset(names)


#: every verdict a program can earn by itself (SF never is the program's own)
ANY = V("AC", "WA", "RE", "TLE", "MLE", "OLE")
#: anything but success
NOT_AC = V("WA", "RE", "TLE", "MLE", "OLE")


@dataclass(frozen=True)
class Step:
    """One test of a job and what must come of it."""

    input: str = "\n"
    output: str = "ok\n"
    verdicts: frozenset[str] = V("AC")
    error: str | None = None  # required exception class / signal when the verdict is RE
    stdout_has: tuple[str, ...] = ()
    stdout_lacks: tuple[str, ...] = ("PWNED",)
    stdout_exact: str | None = None
    #: every ``label=value`` token of the first stdout line must have this value
    expect_each: str | None = None


@dataclass(frozen=True)
class Case:
    name: str
    cls: str
    source: str
    steps: tuple[Step, ...]
    why: str = ""
    time_limit: float = 1.0
    wall_limit: float | None = None
    memory_mb: int = 64
    output_limit: int = 1 << 20
    tags: frozenset[str] = field(default_factory=frozenset)
    #: name of an extra host-side check in the test module
    check: str | None = None
    #: cases of one group share a pool (of one worker), in order; "main" is the big one.
    #: Scratch-directory cases get their own, so that what one leaves behind on a broken
    #: sandbox does not decide the next one's verdict.
    group: str = "main"


def case(
    name: str,
    cls: str,
    source: str,
    why: str = "",
    *,
    steps: tuple[Step, ...] | None = None,
    time_limit: float = 1.0,
    wall_limit: float | None = None,
    memory_mb: int = 64,
    output_limit: int = 1 << 20,
    tags: tuple[str, ...] = (),
    check: str | None = None,
    group: str = "main",
    **step: object,
) -> Case:
    return Case(
        name,
        cls,
        source,
        steps if steps is not None else (Step(**step),),
        why,
        time_limit,
        wall_limit,
        memory_mb,
        output_limit,
        frozenset(tags),
        check,
        group,
    )


def survey(expect_each: str | None = "EPERM", **kw: object) -> Step:
    """A survey program's step: it prints outcomes and so gets WA; no route may work."""
    return Step(verdicts=V("WA"), expect_each=expect_each, **kw)


# Raw system calls through ctypes, for the calls Python has no wrapper for (or whose
# wrapper an implementation might patch). Numbers for x86_64 and aarch64.
PRELUDE = r'''
import ctypes, errno, os, platform, socket, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {
    "x86_64": dict(socket=41, connect=42, accept=43, sendto=44, sendmsg=46, bind=49, listen=50,
                   socketpair=53, accept4=288, sendmmsg=307, shmget=29, shmat=30, shmctl=31,
                   semget=64, semctl=66, msgget=68, msgsnd=69, msgrcv=70, msgctl=71, mq_open=240,
                   mq_unlink=241, memfd_create=319, inotify_init=253, inotify_init1=294,
                   fanotify_init=300, utimensat=280),
    "aarch64": dict(socket=198, socketpair=199, bind=200, listen=201, accept=202, connect=203,
                    sendto=206, sendmsg=211, accept4=242, sendmmsg=269, shmget=194, shmctl=195,
                    shmat=196, semget=190, semctl=191, msgget=186, msgctl=187, msgrcv=188,
                    msgsnd=189, mq_open=180, mq_unlink=181, memfd_create=279, inotify_init1=26,
                    fanotify_init=262, utimensat=88),
}[platform.machine()]
out = []


def _arg(a):
    if a is None:
        return ctypes.c_void_p(None)
    if isinstance(a, int):
        return ctypes.c_long(a)
    if isinstance(a, bytes):
        return ctypes.c_char_p(a)
    return a


def sc(name, *args):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(NR[name]), *[_arg(a) for a in args])
    return r, ctypes.get_errno()


def ename(e):
    return errno.errorcode.get(e, str(e))


def note(label, r, e=0):
    out.append(f"{label}=" + (f"PWNED({r})" if r >= 0 else ename(e)))


def attempt(label, fn, *args):
    try:
        r = fn(*args)
    except OSError as exc:
        out.append(f"{label}=" + (ename(exc.errno) if exc.errno else type(exc).__name__))
    except Exception as exc:
        out.append(f"{label}={type(exc).__name__}")
    else:
        out.append(f"{label}=PWNED({str(r)[:40]})".replace(" ", "_"))


def sun(path):
    """A sockaddr_un for a path (or an abstract name starting with NUL)."""
    raw = path.encode() if isinstance(path, str) else path
    data = struct.pack("H", socket.AF_UNIX) + raw + (b"" if raw.startswith(b"\0") else b"\0")
    return ctypes.create_string_buffer(data, len(data)), len(data)


class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class msghdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32),
                ("iov", ctypes.POINTER(iovec)), ("iovlen", ctypes.c_size_t),
                ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int)]


class mmsghdr(ctypes.Structure):
    _fields_ = [("hdr", msghdr), ("len", ctypes.c_uint)]


def done():
    print(" ".join(out))
'''


# ------------------------------------------------------------------- A: host Unix sockets

A_CASES = [
    case(
        "a_connect_host_stream",
        "A",
        "import socket\ns = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\ns.settimeout(1)\n"
        "s.connect(@STREAM_OUT@)\ns.sendall(b'PWNED')\nprint('PWNED')\n",
        "the plain route: socket(AF_UNIX) and connect to a host listener",
        verdicts=V("RE"),
        error="PermissionError",
        tags=("exec",),
    ),
    case(
        "a_sendto_host_dgram_from_socketpair",
        "A",
        "import socket\na, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
        "a.sendto(b'PWNED', @DGRAM_OUT@)\nprint('PWNED')\n",
        "socketpair is allowed, and a datagram socketpair can still sendto any address",
        verdicts=V("RE"),
        error="PermissionError",
        tags=("exec",),
    ),
    case(
        "a_socket_families_and_types",
        "A",
        PRELUDE
        + r"""
for label, typ in (("stream", socket.SOCK_STREAM), ("dgram", socket.SOCK_DGRAM),
                   ("seqpacket", socket.SOCK_SEQPACKET),
                   ("stream_nb", socket.SOCK_STREAM | socket.SOCK_NONBLOCK | socket.SOCK_CLOEXEC)):
    try:
        s = socket.socket(socket.AF_UNIX, typ)
    except OSError as exc:
        out.append(f"socket_{label}={ename(exc.errno)}")
        continue
    out.append(f"socket_{label}=PWNED")
    s.settimeout(1)
    for p in (@STREAM_PATHS@ if label != "dgram" else @DGRAM_PATHS@):
        def go(p=p, typ=typ):
            t = socket.socket(socket.AF_UNIX, typ)
            t.settimeout(1)
            t.connect(p)
            t.send(b"PWNED")
            return p
        attempt(f"connect_{label}", go)
note("sys_socket_stream", *sc("socket", socket.AF_UNIX, socket.SOCK_STREAM, 0))
note("sys_socket_dgram", *sc("socket", socket.AF_UNIX, socket.SOCK_DGRAM, 0))
note("sys_socket_seqpacket", *sc("socket", socket.AF_UNIX, socket.SOCK_SEQPACKET, 0))
done()
""",
        "every kind of Unix socket, by Python and by raw syscall",
        steps=(survey(),),
    ),
    case(
        "a_socketpair_sendto_every_address",
        "A",
        PRELUDE
        + r"""
for p in @DGRAM_PATHS@ + [@ABSTRACT_DGRAM@]:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    attempt(f"sendto:{p[-10:]!r}", a.sendto, b"PWNED", p)
done()
""",
        "sendto with a destination on a socketpair: host path sockets and an abstract one",
        steps=(survey(),),
    ),
    case(
        "a_socketpair_connect_elsewhere",
        "A",
        PRELUDE
        + r"""
for p in @DGRAM_PATHS@ + [@ABSTRACT_DGRAM@]:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    def go(a=a, p=p):
        a.connect(p)
        return a.send(b"PWNED")
    attempt(f"reconnect:{p[-10:]!r}", go)
for p in @STREAM_PATHS@ + [@ABSTRACT_STREAM@]:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    attempt(f"connect_stream_pair:{p[-10:]!r}", a.connect, p)
done()
""",
        "a datagram socketpair end re-connected to a host socket, then plain send",
        steps=(survey(),),
    ),
    case(
        "a_sendmsg_routes",
        "A",
        PRELUDE
        + r"""
for p in @DGRAM_PATHS@ + [@ABSTRACT_DGRAM@]:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    attempt(f"sendmsg_to:{p[-10:]!r}", a.sendmsg, [b"PWNED"], [], 0, p)
a, b = socket.socketpair()
attempt("sendmsg_plain", a.sendmsg, [b"x"])
attempt("sendmsg_scm_rights", a.sendmsg, [b"x"],
        [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("i", 0))])
done()
""",
        "sendmsg with a destination address, and sendmsg at all (SCM_RIGHTS)",
        steps=(survey(),),
    ),
    case(
        "a_raw_syscall_routes",
        "A",
        PRELUDE
        + r"""
msg = b"PWNED"
for p in @DGRAM_PATHS@ + [@ABSTRACT_DGRAM@]:
    addr, alen = sun(p)
    tag = repr(p[-8:])
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    note(f"sys_sendto:{tag}", *sc("sendto", a.fileno(), msg, len(msg), 0, addr, alen))
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    note(f"sys_connect:{tag}", *sc("connect", a.fileno(), addr, alen))
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    data = ctypes.create_string_buffer(msg, len(msg))
    iov = iovec(ctypes.cast(data, ctypes.c_void_p), len(msg))
    hdr = msghdr(ctypes.cast(addr, ctypes.c_void_p), alen, ctypes.pointer(iov), 1, None, 0, 0)
    note(f"sys_sendmsg:{tag}", *sc("sendmsg", a.fileno(), ctypes.byref(hdr), 0))
    mm = (mmsghdr * 2)(mmsghdr(hdr, 0), mmsghdr(hdr, 0))
    note(f"sys_sendmmsg:{tag}", *sc("sendmmsg", a.fileno(), mm, 2, 0))
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
a.setblocking(False)
addr, alen = sun("bound.sock")
note("sys_bind_scratch", *sc("bind", a.fileno(), addr, alen))
note("sys_listen", *sc("listen", a.fileno(), 4))
note("sys_accept", *sc("accept", a.fileno(), None, None))
note("sys_accept4", *sc("accept4", a.fileno(), None, None, 0))
done()
""",
        "libc.syscall: sendto/connect/sendmsg/sendmmsg with msg_name, bind, listen, accept",
        steps=(survey(),),
    ),
    case(
        "a_bind_listen_accept_python",
        "A",
        PRELUDE
        + r"""
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
attempt("bind_scratch", a.bind, "pb.sock")
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
attempt("bind_abstract", a.bind, "\0pb-r2-bind")
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
attempt("bind_outside", a.bind, @OUTSIDE_DIR@ + "/pb.sock")
c, d = socket.socketpair()
c.setblocking(False)
attempt("listen", c.listen, 1)
attempt("accept", c.accept)
done()
""",
        "bind a socketpair end to a name (a server for a later program), listen, accept",
        steps=(survey(),),
    ),
]

A_CASES += [
    case(
        "a_x32_abi_routes",
        "A",
        PRELUDE
        + r"""
X32 = 0x40000000
for name in ("socket", "connect", "sendto", "msgget", "memfd_create", "inotify_init1"):
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(X32 | NR[name]), ctypes.c_long(1), ctypes.c_long(1), ctypes.c_long(0))
    note(f"x32_{name}", r, ctypes.get_errno())
done()
""",
        "the same calls through the x32 ABI (syscall number | 0x40000000)",
        steps=(survey(),),
        tags=("x86_64",),
    ),
    case(
        "a_int80_socketcall",
        "A",
        r"""
import ctypes, mmap
# push rbx; mov eax, 359 (i386 socket); mov ebx, 1; mov ecx, 1; xor edx, edx; int 0x80; pop rbx; ret
code = bytes.fromhex("53b867010000bb01000000b90100000031d2cd805bc3")
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(code)
fn = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(m)))
fd = fn()
print("PWNED" if fd >= 0 else f"denied {fd}")
""",
        "socket() through the i386 ABI (int 0x80): a filter on x86_64 numbers alone misses it",
        verdicts=V("RE"),
        error="SIGSYS",
        tags=("x86_64",),
    ),
]

A_ORDINARY = [
    case(
        "a_ok_socketpair_send_recv",
        "A",
        "import socket\na, b = socket.socketpair()\na.sendall(b'hello')\nx = b.recv(5)\n"
        "c, d = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)\nc.send(b'hi')\n"
        "f = a.makefile('w')\nf.write('line\\n')\nf.flush()\ng = b.makefile('r')\n"
        "print(x.decode(), d.recv(2).decode(), g.readline().strip())\n",
        "ordinary: socketpair with send/recv and makefile",
        output="hello hi line\n",
        stdout_exact="hello hi line\n",
    ),
    case(
        "a_ok_asyncio_threadsafe",
        "A",
        r"""
import asyncio, threading

async def main():
    loop = asyncio.get_running_loop()
    fut = loop.create_future()
    threading.Thread(target=lambda: loop.call_soon_threadsafe(fut.set_result, 42)).start()
    q = asyncio.Queue()
    for i in range(3):
        await q.put(i)
        await asyncio.sleep(0)
    r = await asyncio.wait_for(fut, 5)
    s = await loop.run_in_executor(None, sum, [1, 2, 3])
    return r, s, [q.get_nowait() for _ in range(3)]

print(*asyncio.run(main()))
""",
        "ordinary: asyncio.run with call_soon_threadsafe (its self-pipe is a socketpair)",
        output="42 6 [0, 1, 2]\n",
        stdout_exact="42 6 [0, 1, 2]\n",
        time_limit=2.0,
    ),
    case(
        "a_ok_asyncio_streams_over_socketpair",
        "A",
        r"""
import asyncio, socket

async def main():
    a, b = socket.socketpair()
    ra, wa = await asyncio.open_connection(sock=a)
    rb, wb = await asyncio.open_connection(sock=b)
    wa.write(b"ping\n")
    await wa.drain()
    line = await rb.readline()
    wb.write(line.upper())
    await wb.drain()
    back = await ra.readline()
    wa.close()
    wb.close()
    return back.decode().strip()

print(asyncio.run(main()))
""",
        "ordinary: asyncio streams on a socketpair",
        output="PING\n",
        stdout_exact="PING\n",
        time_limit=2.0,
    ),
]

# ------------------------------------------------------------------- B: mount namespace

B_CASES = [
    case(
        "b_list_hidden_dirs",
        "B",
        r"""
import json, os
res = {}
for d in ("/tmp", "/run", "/var/run", "/home", "/root", "/dev/shm", "/var/tmp"):
    try:
        res[d] = sorted(os.listdir(d))
    except OSError as exc:
        res[d] = "!" + type(exc).__name__
print(json.dumps({"cwd": os.getcwd(), "listing": res}))
""",
        "what the child sees of the directories that hold other people's files",
        steps=(Step(verdicts=V("WA")),),
        check="hidden_listing",
    ),
    case(
        "b_create_outside",
        "B",
        PRELUDE
        + r"""
open("src.txt", "w").write("x")
dirs = [@OUTSIDE_DIR@, @TMP_DIR@, "/tmp", "/var/tmp", "/dev/shm", "/run", "/", "/root", "/home",
        os.path.dirname(os.getcwd()), os.path.dirname(os.__file__)]
for d in dirs:
    j = lambda n, d=d: os.path.join(d, n)
    attempt(f"create:{d}", lambda: open(j("pb_r2_created"), "x").write("PWNED"))
    attempt(f"mkdir:{d}", os.mkdir, j("pb_r2_dir"))
    attempt(f"symlink:{d}", os.symlink, "/etc/passwd", j("pb_r2_link"))
    attempt(f"mkfifo:{d}", os.mkfifo, j("pb_r2_fifo"))
    attempt(f"hardlink:{d}", os.link, "src.txt", j("pb_r2_hard"))
    attempt(f"rename_in:{d}", os.rename, "src.txt", j("pb_r2_renamed"))
    attempt(f"tmpfile:{d}", os.open, d, os.O_TMPFILE | os.O_RDWR, 0o600)
for f in @PLANTED_FILES@:
    attempt(f"append:{f}", lambda f=f: open(f, "a").write("PWNED"))
    attempt(f"rw:{f}", lambda f=f: os.write(os.open(f, os.O_RDWR), b"PWNED"))
    attempt(f"truncate:{f}", os.truncate, f, 0)
    attempt(f"unlink:{f}", os.unlink, f)
    attempt(f"rename_away:{f}", os.rename, f, f + ".moved")
done()
""",
        "create, link, rename, truncate, unlink outside the scratch (world-writable dirs too)",
        steps=(survey(expect_each=None),),
        check="planted_intact",
    ),
    case(
        "b_utime_planted",
        "B",
        PRELUDE
        + r"""
for p in @PLANTED_FILES@ + @PLANTED_DIRS@:
    attempt(f"utime_now:{p}", os.utime, p)
    attempt(f"utime_set:{p}", os.utime, p, (0, 0))
    attempt(f"utime_nofollow:{p}", lambda p=p: os.utime(p, follow_symlinks=False))
    note(f"sys_utimensat:{p}", *sc("utimensat", -100, p.encode(), None, 0))
done()
""",
        "utime is not a Landlock right: touch a world-writable host file and directory",
        steps=(survey(expect_each=None),),
        check="planted_intact",
        tags=("exec",),
    ),
    case(
        "b_utime_system_dirs",
        "B",
        PRELUDE
        + r"""
for p in ("/tmp", "/var/tmp", "/dev/shm"):
    attempt(f"utime_now:{p}", os.utime, p)
    note(f"sys_utimensat:{p}", *sc("utimensat", -100, p.encode(), None, 0))
done()
""",
        "utime on the host's sticky world-writable directories",
        steps=(survey(expect_each=None),),
    ),
]

# ------------------------------------------------------------------- C: SysV and POSIX IPC

_IPC = (
    PRELUDE
    + r"""
IPC_CREAT, IPC_PRIVATE, IPC_NOWAIT = 0o1000, 0, 0o4000
KEY = @IPC_KEY@
"""
)

C_CASES = [
    case(
        "c_sysv_msg",
        "C",
        _IPC
        + r"""
note("msgget_private", *sc("msgget", IPC_PRIVATE, IPC_CREAT | 0o600))
q, e = sc("msgget", KEY, IPC_CREAT | 0o666)
note("msgget_key", q, e)
if q >= 0:
    msg = ctypes.create_string_buffer(struct.pack("l", 1) + b"PLANTED-BY-SANDBOX")
    note("msgsnd", *sc("msgsnd", q, msg, 18, IPC_NOWAIT))
done()
""",
        "a SysV message queue outlives the test (and carries data to a later program)",
        steps=(survey(expect_each=None),),
        tags=("exec",),
    ),
    case(
        "c_sysv_shm",
        "C",
        _IPC
        + r"""
seg, e = sc("shmget", IPC_PRIVATE, 4 << 20, IPC_CREAT | 0o600)
note("shmget_private", seg, e)
if seg >= 0:
    addr, e = sc("shmat", seg, None, 0)
    note("shmat", addr, e)
    if addr not in (-1, 0):
        ctypes.memset(addr, 0x41, 4 << 20)
note("shmget_key", *sc("shmget", KEY, 1 << 20, IPC_CREAT | 0o666))
done()
""",
        "SysV shared memory: memory outside every limit that outlives the test",
        steps=(survey(expect_each=None),),
    ),
    case(
        "c_sysv_sem",
        "C",
        _IPC
        + r"""
note("semget_private", *sc("semget", IPC_PRIVATE, 4, IPC_CREAT | 0o600))
note("semget_key", *sc("semget", KEY, 1, IPC_CREAT | 0o666))
done()
""",
        "SysV semaphores",
        steps=(survey(expect_each=None),),
    ),
    case(
        "c_posix_mq",
        "C",
        PRELUDE
        + r"""
try:
    mq_open = libc.mq_open
except AttributeError:
    mq_open = ctypes.CDLL("librt.so.1", use_errno=True).mq_open
mq_open.restype = ctypes.c_int
mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
ctypes.set_errno(0)
note("mq_open_libc", mq_open(@MQ_NAME@.encode(), os.O_CREAT | os.O_RDWR, 0o666, None), ctypes.get_errno())
note("mq_open_raw", *sc("mq_open", @MQ_NAME@[1:].encode() + b"-raw", os.O_CREAT | os.O_RDWR, 0o666, None))
done()
""",
        "POSIX message queues (mq_open through libc and the raw syscall)",
        steps=(survey(expect_each=None),),
        check="no_posix_ipc",
    ),
    case(
        "c_shared_memory",
        "C",
        r"""
from multiprocessing import shared_memory
for name in (@SHM_NAME@, None):
    try:
        s = shared_memory.SharedMemory(name=name, create=True, size=1 << 20)
        s.buf[:5] = b"PWNED"
        print("PWNED", s.name)
    except Exception as exc:
        print("denied", type(exc).__name__)
""",
        "multiprocessing.shared_memory (shm_open in /dev/shm)",
        steps=(Step(verdicts=V("WA", "RE")),),
        check="no_shm_file",
    ),
    case(
        "c_ipc_lookup_later",
        "C",
        _IPC
        + r"""
q, e = sc("msgget", KEY, 0)
note("msgget_existing", q, e)
if q >= 0:
    buf = ctypes.create_string_buffer(64)
    n, e = sc("msgrcv", q, buf, 56, 0, IPC_NOWAIT)
    note("msgrcv", n, e)
note("shmget_existing", *sc("shmget", KEY, 0, 0))
note("semget_existing", *sc("semget", KEY, 0, 0))
try:
    mq_open = libc.mq_open
except AttributeError:
    mq_open = ctypes.CDLL("librt.so.1", use_errno=True).mq_open
mq_open.restype = ctypes.c_int
mq_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint, ctypes.c_void_p]
ctypes.set_errno(0)
note("mq_open_existing", mq_open(@MQ_NAME@.encode(), os.O_RDONLY, 0, None), ctypes.get_errno())
done()
""",
        "a later, separate program looks for what the earlier ones planted",
        steps=(survey(expect_each=None),),
    ),
]

# ------------------------------------------------------------------- E: files across tests

_HIDE = r"""
import os, sys, tempfile
line = sys.stdin.readline().split()


def look(needle):
    found = []
    # (not tempfile.gettempdir(): it creates and removes a file to test the directory)
    roots = [".", os.environ.get("HOME", "."), os.environ.get("TMPDIR", "."), "/tmp", "/dev/shm",
             "/var/tmp", os.path.dirname(os.getcwd())]
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for n in filenames:
                p = os.path.join(dirpath, n)
                try:
                    with open(p, "rb") as f:
                        if needle in f.read(1 << 20):
                            found.append(p)
                except OSError:
                    pass
    return found


if line[0] == "WRITE":
    secret = line[1]
    top = os.stat(".")
    for name in ("plain.txt", ".hidden", "..dots", "-"):
        with open(name, "w") as f:
            f.write(secret)
    os.makedirs("a/.b/c")
    with open("a/.b/c/nested.txt", "w") as f:
        f.write(secret)
    with open(os.path.join(tempfile.gettempdir(), "tmpfile"), "w") as f:
        f.write(secret)
    os.utime(".", ns=(top.st_atime_ns, top.st_mtime_ns))
    print("written")
else:
    print(sorted(os.listdir(".")), look(line[1][::-1].encode()))
"""

_TREE = r"""
import os, sys
mode = sys.stdin.readline().strip()
if mode == "TREE":
    top = os.stat(".")
    base = os.open(".", os.O_RDONLY)
    name = "d" * 200
    made = 0
    try:
        for i in range(300):
            os.mkdir(name)
            os.chdir(name)
            made += 1
            if i % 50 == 0:
                for make in (lambda: os.mkdir("locked", 0),
                             lambda: os.close(os.open("nomode", os.O_CREAT | os.O_WRONLY, 0)),
                             lambda: os.mkfifo("fifo"),
                             lambda: os.symlink("/", "root_link"),
                             lambda: os.symlink("/etc/passwd", "passwd_link"),
                             lambda: os.symlink("../../..", "up_link"),
                             lambda: os.symlink(@OUTSIDE_DIR@, "outside_link"),
                             lambda: os.mkdir("noread", 0o300),
                             lambda: open("noread/f", "w").close(),
                             lambda: os.mkdir("noread/inner", 0o700)):
                    try:
                        make()
                    except OSError:
                        pass
    except OSError as exc:
        print("stopped", made, type(exc).__name__)
    os.fchdir(base)
    if @RESET@:
        os.utime(".", ns=(top.st_atime_ns, top.st_mtime_ns))
    print("tree", made)
else:
    print(sorted(os.listdir(".")))
"""

_FILL = r"""
import os, sys
mode = sys.stdin.readline().strip()
if mode == "FILL":
    top = os.stat(".")
    chunk = b"f" * (1 << 20)
    big = small = 0
    try:
        while True:
            with open(f"big{big}", "wb") as f:
                f.write(chunk)
            big += 1
    except OSError:
        pass
    try:
        while True:
            os.close(os.open(f"i{small}", os.O_CREAT | os.O_WRONLY, 0o600))
            small += 1
    except OSError:
        pass
    os.utime(".", ns=(top.st_atime_ns, top.st_mtime_ns))
    print("filled", big, small)
else:
    with open("after.bin", "wb") as f:
        f.write(b"y" * (1 << 20))
    for i in range(100):
        with open(f"n{i}", "w") as f:
            f.write("z")
    print(len(os.listdir(".")), os.path.getsize("after.bin"))
"""

_LOOK = Step(input="LOOK @CANARY_REV@\n", output="[] []\n")
_CHECK = Step(input="CHECK\n", output="[]\n")

E_CASES = [
    case(
        "e_hidden_files_with_mtime_reset",
        "E",
        _HIDE,
        "test 1 writes its input to plain, dot and nested files, then resets the directory's mtime",
        steps=(Step(input="WRITE @CANARY@\n", output="written\n"), _LOOK, _LOOK),
        tags=("exec",),
        group="e_hide",
    ),
    case(
        "e_hidden_files_seen_by_next_program",
        "E",
        "# another program\n" + _HIDE,
        "a different program on the same pool looks for what the last one hid",
        steps=(_LOOK,),
        group="e_hide",
    ),
    case(
        "e_deep_tree",
        "E",
        "# plain\n" + _TREE.replace("@RESET@", "False"),
        "300 nested 200-char dirs (paths over PATH_MAX), mode-0 and -wx dirs, mode-0 files, "
        "fifos, symlinks out, left for the cleaner",
        steps=(
            Step(input="TREE\n", output="tree 300\n", verdicts=ANY, stdout_lacks=()),
            _CHECK,
            _CHECK,
        ),
        time_limit=3.0,
        group="e_tree",
    ),
    case(
        "e_deep_tree_mtime_reset",
        "E",
        _TREE.replace("@RESET@", "True"),
        "the same tree, hidden by resetting the directory's mtime",
        steps=(
            Step(input="TREE\n", output="tree 300\n", verdicts=ANY, stdout_lacks=()),
            _CHECK,
            _CHECK,
        ),
        time_limit=3.0,
        group="e_tree_reset",
    ),
    case(
        "e_fill_scratch",
        "E",
        _FILL,
        "test 1 fills the 64 MB / 4096-inode scratch and hides it; test 2 needs room",
        steps=(
            Step(input="FILL\n", verdicts=ANY, stdout_lacks=()),
            Step(input="USE\n", output="101 1048576\n"),
        ),
        time_limit=3.0,
        group="e_fill",
    ),
]

# ------------------------------------------------------------------- F: memory

F_CASES = [
    case(
        "f_memfd_create",
        "F",
        "import os\nos.memfd_create('hoard')\nprint('ok')\n",
        "memfd memory is outside RLIMIT_AS",
        verdicts=V("RE"),
        error="PermissionError",
    ),
    case(
        "f_memfd_raw_syscall",
        "F",
        PRELUDE
        + r"""
note("memfd_create", *sc("memfd_create", b"x", 0))
note("memfd_create_cloexec", *sc("memfd_create", b"y", 1))
done()
""",
        "memfd_create through libc.syscall",
        steps=(survey(),),
    ),
    case(
        "f_memfd_hoard",
        "F",
        r"""
import ctypes, os, platform
libc = ctypes.CDLL(None, use_errno=True)
chunk = b"\1" * (8 << 20)
fds = []
for i in range(56):
    try:
        fd = os.memfd_create(f"hoard{i}")
    except OSError:
        fd = libc.syscall(319 if platform.machine() == "x86_64" else 279, f"hoard{i}".encode(), 0)
        if fd < 0:
            raise
    os.write(fd, chunk)
    fds.append(fd)
print("ok")
""",
        "56 memfds of 8 MiB (448 MiB) under a 32 MiB limit",
        verdicts=NOT_AC,
        memory_mb=32,
        output_limit=8 << 20,
        time_limit=3.0,
        tags=("exec",),
    ),
    case(
        "f_mmap_huge",
        "F",
        "import mmap\nm = mmap.mmap(-1, 10**10)\nm[0] = 1\nprint(len(m))\n",
        "one huge anonymous mmap: ENOMEM is an OSError, but it is memory",
        verdicts=V("MLE"),
    ),
    case(
        "f_mmap_noreserve",
        "F",
        "import mmap\nm = mmap.mmap(-1, 10**10, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x4000)\n"
        "print(len(m))\n",
        "MAP_NORESERVE",
        verdicts=V("MLE"),
    ),
    case(
        "f_mmap_gradual",
        "F",
        "import mmap\nmaps = []\nwhile True:\n    m = mmap.mmap(-1, 8 << 20)\n"
        "    for i in range(0, len(m), 4096):\n        m[i] = 1\n    maps.append(m)\n",
        "mmaps of 8 MiB touched page by page until the limit",
        verdicts=V("MLE"),
        memory_mb=32,
        time_limit=2.0,
    ),
    case(
        "f_bytearray_huge",
        "F",
        "a = bytearray(10**10)\nprint(len(a))\n",
        "huge bytearray",
        verdicts=V("MLE"),
    ),
    case(
        "f_numpy_zeros_huge",
        "F",
        "import numpy\na = numpy.zeros(10**10)\nprint(a.sum())\n",
        "numpy raises _ArrayMemoryError, a MemoryError subclass",
        verdicts=V("MLE"),
        tags=("numpy",),
        time_limit=2.0,
    ),
    case(
        "f_numpy_ones_huge",
        "F",
        "import numpy\na = numpy.ones((10**5, 10**5), dtype=numpy.uint8)\nprint(a.sum())\n",
        "numpy.ones of 10 GB",
        verdicts=V("MLE"),
        tags=("numpy",),
        time_limit=2.0,
    ),
]

# ------------------------------------------------------------------- G: buffers

# Test 2 scans its own address space (inherited from the zygote) for test 1's canary.
# No /proc: Landlock forbids it. libc.write(pipe, addr, n) copies from any address and
# returns -1/EFAULT for an unmapped page instead of crashing. The needle is built at
# run time from the reversed input and the scanner skips its own copy and buffer. Three
# planted probes (brk heap, pymalloc, mmap) must be found, or the scanner is blind.
_SCAN = r"""
import ctypes, mmap, os, sys
line = sys.stdin.buffer.readline().split()
if line[0] == b"ECHO":
    canary = line[1].decode()
    print(canary)
    sys.stdout.flush()
    sys.stderr.write(canary + "\n")
    sys.stderr.flush()
    os.write(3, ('{"canary": "%s"}' % canary).encode())
    keep = [canary * 16 for _ in range(64)]
    raise SystemExit(0)

needle = line[1][::-1]            # the only full copy of the canary in this process
probe = line[2][::-1]             # what the self-test plants
# Freed heap chunks lose their first 16 bytes to malloc's free lists: look for pieces of
# the random part too (24 hex digits each: no false hits).
pieces = [needle, needle[13:37], needle[-24:]]
libc = ctypes.CDLL(None, use_errno=True)
wr = libc.write
wr.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t]
wr.restype = ctypes.c_ssize_t
libc.sbrk.argtypes = [ctypes.c_ssize_t]
libc.sbrk.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.malloc.restype = ctypes.c_void_p
PAGE = 4096
CH = 1 << 16
r, w = os.pipe()
buf = bytearray(CH)
view = memoryview(buf)
bufaddr = ctypes.addressof(ctypes.c_char.from_buffer(buf))
HDR = sys.getsizeof(b"") - 1
skip = [(id(b) + HDR, id(b) + HDR + len(b)) for b in pieces + [probe]] + [(bufaddr, bufaddr + CH)]

heap_probe = libc.malloc(64)
ctypes.memmove(heap_probe, probe, len(probe))
py_probe = ctypes.create_string_buffer(probe, 200)
far = mmap.mmap(-1, 1 << 20)
far[4096:4096 + len(probe)] = probe
plants = {"heap": heap_probe, "pymalloc": ctypes.addressof(py_probe),
          "mmap": ctypes.addressof(ctypes.c_char.from_buffer(far)) + 4096}
found, seen_plants, scanned = [], set(), [0]


def read(addr, n):
    k = wr(w, addr, n)
    if k <= 0:
        return 0
    got = 0
    while got < k:
        got += os.readv(r, [view[got:k]])
    return k


def skipped(a):
    return any(lo <= a < hi for lo, hi in skip)


def scan(lo, hi):
    a = lo - lo % PAGE
    while a < hi:
        k = read(a, CH)
        if k == 0:
            a += PAGE
            continue
        scanned[0] += k
        for n, hits in [(p, found) for p in pieces] + [(probe, None)]:
            i = buf.find(n, 0, k)
            while i >= 0:
                if not skipped(a + i):
                    if hits is not None:
                        hits.append(a + i)
                    else:
                        seen_plants.update(name for name, p in plants.items() if p == a + i)
                i = buf.find(n, i + 1, k)
        a += k - 64 if k > 64 else k


top = libc.sbrk(0)
low = top - PAGE
while low > top - (512 << 20) and read(low - PAGE, 1):
    low -= PAGE
scan(low, top)                                         # the brk heap, whole
anchor = ctypes.addressof(ctypes.c_char.from_buffer(mmap.mmap(-1, PAGE)))
scan(anchor - (64 << 20), anchor + (1 << 30))          # mmaps, libraries, pymalloc arenas
env = ctypes.c_void_p.in_dll(libc, "environ").value
scan(env - (8 << 20), env + (1 << 20))                 # the stack
where = sorted({hex(a) for a in found})[:8]
print(f"found {len(found)} selftest {len(seen_plants)}/3 scanned {scanned[0] >> 20}MB {where}")
"""

G_CASES = [
    case(
        "g_canary_in_next_child",
        "G",
        _SCAN,
        "test 1 echoes its input on stdout, stderr and fd 3; test 2 (same zygote) scans its memory",
        steps=(
            Step(input="ECHO @CANARY@\n", output="@CANARY@\n", verdicts=ANY),
            Step(
                input="SCAN @CANARY_REV@ @PROBE_REV@\n",
                verdicts=V("WA"),
                stdout_has=("found 0 ", "selftest 3/3"),
            ),
        ),
        time_limit=5.0,
        wall_limit=10.0,
        tags=("exec",),
    ),
    case(
        "g_canary_in_next_program",
        "G",
        "# a second program\n" + _SCAN,
        "a different program (a fresh zygote) scans for the canary",
        steps=(
            Step(
                input="SCAN @CANARY_REV@ @PROBE_REV@\n",
                verdicts=V("WA"),
                stdout_has=("found 0 ", "selftest 3/3"),
            ),
        ),
        time_limit=5.0,
        wall_limit=10.0,
    ),
    case(
        "g_inotify_fanotify",
        "G",
        PRELUDE
        + r"""
fds = []
r, e = sc("inotify_init1", 0)
note("sys_inotify_init1", r, e)
fds.append(r)
if "inotify_init" in NR:
    r, e = sc("inotify_init")
    note("sys_inotify_init", r, e)
    fds.append(r)
ctypes.set_errno(0)
r = libc.inotify_init1(os.O_CLOEXEC)
note("libc_inotify_init1", r, ctypes.get_errno())
fds.append(r)
note("sys_fanotify_init", *sc("fanotify_init", 0, 0))
for fd in fds:
    if fd >= 0:
        ctypes.set_errno(0)
        note("watch_tmp", libc.inotify_add_watch(fd, b"/tmp", 0xFFF), ctypes.get_errno())
        break
done()
""",
        "inotify (watch host directories the child cannot read) and fanotify",
        steps=(survey(expect_each=None),),
    ),
]

# ------------------------------------------------------------------- H: pre-import

H_CASES = [
    case(
        "h_ok_numpy_import",
        "H",
        "import numpy\nprint(int(numpy.arange(5).sum()))\n",
        "ordinary: numpy, allowed by default, imports and works",
        output="10\n",
        stdout_exact="10\n",
        time_limit=2.0,
        tags=("numpy",),
    ),
    case(
        "h_dead_branch_imports",
        "H",
        r"""
import sys
if False:
    import antigravity, this, __hello__, idlelib.idle, turtle, numpy.f2py.__main__
if __name__ == "__never__":
    import antigravity, this, __hello__, __phello__.spam, idlelib.idle, turtle, turtledemo.__main__
    import numpy.f2py.__main__, unittest.__main__, ctypes.test.__main__, unittest.test.__main__
    import tkinter.__main__, venv.__main__, ensurepip.__main__, lib2to3.__main__, pydoc
    import pb_marker_pkg
print("ok")
""",
        "modules that print, open browsers or run a main() on import, named only in dead branches",
        output="ok\n",
        stdout_exact="ok\n",
        time_limit=2.0,
        check="no_marker",
    ),
]

# ------------------------------------------------------------------- X: beyond the specification

X_CASES = [
    case(
        "x_scratch_coarse_mtime_race",
        "X",
        "import os\nl = os.listdir('.')\nopen('x%d' % len(l), 'w').close()\nprint(l)\n",
        "each test creates a file at once: a cleaner keyed on the directory's mtime misses "
        "a change made within the same timestamp tick as its own last change",
        steps=tuple(Step(output="[]\n") for _ in range(40)),
        group="x_race",
    ),
    case(
        "x_pipe_buffers_outside_limit",
        "X",
        r"""
import fcntl, os
F_SETPIPE_SZ = 1031
pipes, held, grown = [], 0, 0
try:
    while True:
        r, w = os.pipe()
        pipes.append((r, w))
        try:
            fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20)
            grown += 1
        except OSError:
            pass
        os.set_blocking(w, False)
        try:
            while True:
                held += os.write(w, b"p" * 65536)
        except BlockingIOError:
            pass
except OSError:  # out of descriptors
    pass
print("PWNED grown" if grown else "ok", "PWNED held" if held > (8 << 20) else "")
""",
        "pipes grown to 1 MiB (F_SETPIPE_SZ) and filled: kernel memory outside RLIMIT_AS; "
        "the pipe size may not grow, and all the pipes the open-file limit allows hold < 8 MiB",
        verdicts=V("AC", "WA"),
        stdout_lacks=("PWNED",),
        memory_mb=16,
        time_limit=2.0,
    ),
    case(
        "x_socket_buffers_outside_limit",
        "X",
        r"""
import socket
held, grown, pairs = 0, 0, []
try:
    while True:
        a, b = socket.socketpair()
        pairs.append((a, b))
        for s in (a, b):
            s.setblocking(False)
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 24)
                grown += 1
            except OSError:
                pass
            try:
                while True:
                    held += s.send(b"q" * 65536)
            except BlockingIOError:
                pass
except OSError:  # out of descriptors
    pass
print("PWNED grown" if grown else "ok", "PWNED held" if held > (8 << 20) else "")
""",
        "socketpairs with 16 MiB send buffers (SO_SNDBUF) and filled: 470 MiB held under a "
        "16 MiB limit before setsockopt was refused; the default buffers of all the pairs "
        "the open-file limit allows hold < 8 MiB",
        verdicts=V("AC", "WA"),
        stdout_lacks=("PWNED",),
        memory_mb=16,
        time_limit=2.0,
    ),
]

CASES: list[Case] = (
    A_CASES + A_ORDINARY + B_CASES + C_CASES + E_CASES + F_CASES + G_CASES + H_CASES + X_CASES
)


# ------------------------------------------------------------------- H: the marker package

MARKER_PACKAGE = "pb_marker_pkg"

#: __init__.py of a package whose import leaves traces on the host: files at
#: @MARKERS@, a line on stdout, a process that sleeps carrying @TAG@ in its command
#: line, and a forked one (which carries the worker's command line).
MARKER_INIT = r"""
import os, subprocess, sys
for _path in @MARKERS@:
    try:
        with open(_path, "w") as _f:
            _f.write(f"imported by pid {os.getpid()} uid {os.getuid()}\n")
    except OSError:
        pass
print("MARKER-PKG-PRINT")
try:
    sys.stdout.flush()
    os.write(1, b"MARKER-PKG-FD1\n")
except OSError:
    pass
try:
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", @TAG@],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True)
except Exception:
    pass
try:
    if os.fork() == 0:
        try:
            os.setsid()
            import time
            time.sleep(30)
        finally:
            os._exit(0)
except Exception:
    pass
print("MARKER-PKG-UNFLUSHED")  # left in sys.stdout's buffer: every forked child inherits it
"""

MARKER_PROGRAMS = {
    "dead_if_false": "if False:\n    import pb_marker_pkg\nprint('ok')\n",
    "dead_runtime_branch": "import sys\nif len(sys.argv) > 99:\n    import pb_marker_pkg\nprint('ok')\n",
    "dead_function": "def never():\n    import pb_marker_pkg.sub\n    from pb_marker_pkg import x\nprint('ok')\n",
}
