"""The fourth-round hostile battery: the programs (run by ``test_hostile_round4.py``).

Each program is a :class:`Hostile`: its source, and a docstring saying the attack
and the containment a sound sandbox must show. Programs take their parameters
on stdin (a word, or JSON), never from the test's text, so one source serves
every case of its class; what the test checks is stated there.

Safety: the battery runs on CI as root and on developers' machines. Every
program that could outlive its test if the sandbox failed is bounded in time
(``END``: it gives up after a few seconds whatever happens), signals that could
hit host processes are harmless ones (SIGCONT, 0) or are only sent when the
test says so (``kill_all`` as root, where the sandbox uid owns nothing else),
and the "zygote hunter" only aims at processes of its own uid, and only when
that uid is a sandbox uid (>= 1,900,000,000).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Hostile:
    name: str
    doc: str
    source: str


# ----------------------------------------------------------------------------- shared

#: Syscall numbers the programs use through libc.syscall (x86_64, aarch64).
PRELUDE = r'''
import ctypes, errno, fcntl, json, os, signal, socket, struct, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
ARCH = os.uname().machine
NR = {
    "x86_64": dict(io_setup=206, io_destroy=207, io_uring_setup=425, userfaultfd=323,
                   process_vm_readv=310, add_key=248, keyctl=250, perf_event_open=298, bpf=321,
                   unshare=272, setns=308, mount=165, ptrace=101, personality=135,
                   memfd_create=319, memfd_secret=447, inotify_init1=294, fanotify_init=300,
                   kcmp=312, pidfd_getfd=438, pidfd_open=434, pidfd_send_signal=424,
                   tgkill=234, rt_sigqueueinfo=129, timer_create=222, timer_settime=223,
                   sched_setaffinity=203, clone=56, clone3=435, exit=60, seccomp=317,
                   prlimit64=302, fork=57, name_to_handle_at=303),
    "aarch64": dict(io_setup=0, io_destroy=1, io_uring_setup=425, userfaultfd=282,
                    process_vm_readv=270, add_key=217, keyctl=219, perf_event_open=241, bpf=280,
                    unshare=97, setns=268, mount=40, ptrace=117, personality=92,
                    memfd_create=279, memfd_secret=447, inotify_init1=26, fanotify_init=262,
                    kcmp=272, pidfd_getfd=438, pidfd_open=434, pidfd_send_signal=424,
                    tgkill=131, rt_sigqueueinfo=138, timer_create=107, timer_settime=110,
                    sched_setaffinity=122, clone=220, clone3=435, exit=93, seccomp=277,
                    prlimit64=261, fork=-1, name_to_handle_at=264),
}[ARCH]


def syscall(name, *args):
    """libc.syscall, raising OSError on failure (like os.* functions)."""
    ctypes.set_errno(0)
    rc = libc.syscall(NR[name], *args)
    if rc < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return rc


def outcome(fn):
    """'sent'/'ok' when fn() succeeded, else the errno's name."""
    try:
        fn()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
'''

F_CONSTANTS = r'''
F_SETSIG, F_SETOWN_EX, F_SETLEASE, F_NOTIFY, F_SETPIPE_SZ = 10, 15, 1024, 1026, 1031
F_OWNER_TID, F_OWNER_PID, F_OWNER_PGRP = 0, 1, 2
FIOSETOWN, SIOCSPGRP, FIOASYNC = 0x8901, 0x8902, 0x5452
'''


def _program(body: str, *, constants: bool = False) -> str:
    return PRELUDE + (F_CONSTANTS if constants else "") + body


# ----------------------------------------------------------------------------- class 1

SIGNAL_PARENT = Hostile(
    "signal_parent",
    """A test child signals its zygote (or worker, or everything it may): F_SETOWN to the
    zygote + F_SETSIG SIGKILL/SIGSTOP/SIGXCPU (or plain SIGIO) + O_ASYNC on a pipe, then a
    write; F_SETOWN_EX (pid, tid, process group); ioctl(FIOSETOWN/SIOCSPGRP) + FIOASYNC on a
    socketpair; kill/tgkill/rt_sigqueueinfo/pidfd_send_signal to the zygote, to 1 (SIGKILL,
    and SIGTERM by kill and by SIGIO: under a PID namespace per worker pid 1 is the
    worker, which stops on SIGTERM), to -1, to its process group. Input: "clean" or the attack's name. Prints the zygote's pid (the
    parent) first, then what each call returned, then "ok". Containment: the zygote keeps
    serving (every test of the program reports the same parent), no test is SF, the clean
    tests before and after are AC, and at most the attacking test is RE.""",
    _program(r'''
what = sys.stdin.read().split()[0]
zygote = os.getppid()
print(zygote, flush=True)
done = []


def owner(fd):
    fcntl.fcntl(fd, fcntl.F_SETOWN, zygote)


def owner_ex(kind, who):
    return lambda fd: fcntl.fcntl(fd, F_SETOWN_EX, struct.pack("ii", kind, who))


def async_pipe(set_owner, sig):
    def attack():
        r, w = os.pipe()
        set_owner(r)
        if sig is not None:
            fcntl.fcntl(r, F_SETSIG, sig)
        fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_ASYNC)
        os.write(w, b"x")
    return attack


def async_socket(request, sig):
    def attack():
        a, b = socket.socketpair()
        fcntl.ioctl(a, request, struct.pack("i", zygote if request == FIOSETOWN else -os.getpgrp()))
        if sig is not None:
            fcntl.fcntl(a, F_SETSIG, sig)
        fcntl.ioctl(a, FIOASYNC, struct.pack("i", 1))
        b.send(b"x")
        time.sleep(0.2)
    return attack


def pidfd_kill():
    fd = syscall("pidfd_open", zygote, 0)
    syscall("pidfd_send_signal", fd, signal.SIGKILL, None, 0)


def sigqueue():
    info = (ctypes.c_int * 32)(signal.SIGKILL, 0, -1)  # si_code SI_QUEUE
    syscall("rt_sigqueueinfo", zygote, signal.SIGKILL, info)


ATTACKS = {
    "setown_sigkill": [async_pipe(owner, signal.SIGKILL)],
    "setown_sigstop": [async_pipe(owner, signal.SIGSTOP)],
    "setown_sigxcpu": [async_pipe(owner, signal.SIGXCPU)],
    "setown_sigio": [async_pipe(owner, None)],
    "setown_ex": [async_pipe(owner_ex(F_OWNER_PID, zygote), signal.SIGKILL),
                  async_pipe(owner_ex(F_OWNER_TID, zygote), signal.SIGKILL)],
    "setown_pgrp": [async_pipe(lambda fd: fcntl.fcntl(fd, fcntl.F_SETOWN, -os.getpgrp()), signal.SIGKILL),
                    async_pipe(owner_ex(F_OWNER_PGRP, os.getpgrp()), signal.SIGKILL)],
    "fiosetown": [async_socket(FIOSETOWN, None), async_socket(FIOSETOWN, signal.SIGKILL)],
    "siocspgrp": [async_socket(SIOCSPGRP, signal.SIGKILL)],
    "kill": [lambda: os.kill(zygote, signal.SIGKILL), lambda: os.kill(zygote, signal.SIGSTOP),
             lambda: os.kill(1, signal.SIGKILL), lambda: os.kill(-1, 0),
             lambda: os.kill(-1, signal.SIGCONT), lambda: os.kill(0, signal.SIGCONT),
             lambda: os.killpg(os.getpgrp(), signal.SIGCONT)],
    # only sent when the test runs as root: there the sandbox uid owns nothing but the sandbox
    "kill_all": [lambda: os.kill(-1, signal.SIGKILL)],
    # pid 1: the host's init today; the PID namespace's init under a namespace per worker
    # (the worker, which handles SIGTERM as "stop": a SIGTERM reaching it ends the slot)
    "init_sigterm": [lambda: os.kill(1, signal.SIGTERM),
                     async_pipe(lambda fd: fcntl.fcntl(fd, fcntl.F_SETOWN, 1), signal.SIGTERM)],
    "pidfd": [pidfd_kill],
    "tgkill": [lambda: syscall("tgkill", zygote, zygote, signal.SIGKILL), sigqueue],
}
if what != "clean":
    for i, attack in enumerate(ATTACKS[what]):
        done.append(f"{i}:{outcome(attack)}")
    time.sleep(0.3)  # let a signal land before reporting
print(" ".join(done))
print("ok")
''', constants=True),
)


# ----------------------------------------------------------------------------- class 2, 3

OUTLIVE = Hostile(
    "outlive",
    """A child that tries to outlive its zygote, worker and evaluator: clears its
    parent-death signal, leaves the worker's session and process group (setsid, then
    setpgid), starts threads, optionally kills its zygote with a SIGIO (F_SETOWN +
    F_SETSIG SIGKILL, from a thread) so that nobody above waits on it, optionally ends its
    main thread alone (SYS_exit, not exit_group) so that only threads remain, then lingers.
    Input: words among "sigio", "main_exit", then the seconds to linger (bounded: the
    program gives up after that, whatever happens). Containment: once the pool is closed, or
    the evaluator SIGKILLed, no process of the sandbox uid range remains (within seconds).""",
    _program(r'''
words = sys.stdin.read().split()
END = time.monotonic() + min(float(words[-1]), 30.0)
zygote = os.getppid()


def linger():
    while time.monotonic() < END:
        time.sleep(0.05)


def kill_zygote():
    r, w = os.pipe()
    fcntl.fcntl(r, fcntl.F_SETOWN, zygote)
    fcntl.fcntl(r, F_SETSIG, signal.SIGKILL)
    fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_ASYNC)
    os.write(w, b"x")


libc.prctl(1, 0, 0, 0, 0)  # PR_SET_PDEATHSIG 0
for call in (os.setsid, lambda: os.setpgid(0, 0)):
    outcome(call)
threading.stack_size(1 << 17)
for i in range(4):
    threading.Thread(target=(lambda: (outcome(kill_zygote), linger())) if i == 0 and "sigio" in words
                     else linger, daemon=True).start()
if "main_exit" in words:
    time.sleep(0.1)
    libc.syscall(NR["exit"], 0)  # this thread only; the others go on
linger()
print("ok")
''', constants=True),
)

HOG_AND_HUNT = Hostile(
    "hog_and_hunt",
    """An orphan that hurts the programs after it on the same worker slot: clears its
    parent-death signal, leaves the session, kills its zygote with a SIGIO (so nobody above
    it waits on it or kills it), then holds most of its uid's thread budget (RLIMIT_NPROC
    is per uid) with sleeping threads and, for a bounded time, "hunts": every process of
    its own uid that appears after it (the next zygote and test child of this slot, if the
    slot reuses the uid) gets a SIGKILL through F_SETOWN + F_SETSIG (aimed at every pid
    above its own: the kernel delivers such a signal only to processes of the sender's uid,
    and the program hunts only when that uid is a sandbox uid). Input: threads to hold, seconds to
    live. Containment: an innocent threaded program run next on the same slot is AC, a
    traced reference run after it has full traces, and no process of the hostile's uid is
    alive while a new program runs under that uid.""",
    _program(r'''
words = sys.stdin.read().split()
hold, END = int(words[0]), time.monotonic() + min(float(words[1]), 20.0)
me, uid, zygote = os.getpid(), os.getuid(), os.getppid()
libc.prctl(1, 0, 0, 0, 0)
outcome(os.setsid)
r, w = os.pipe()
fcntl.fcntl(r, F_SETSIG, signal.SIGKILL)
fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_ASYNC | os.O_NONBLOCK)


def hit(pid):
    try:
        fcntl.fcntl(r, fcntl.F_SETOWN, pid)
        os.write(w, b"x")
        os.read(r, 16)
    except OSError:
        pass


def linger():
    while time.monotonic() < END:
        time.sleep(0.05)


mine = {me}
threading.stack_size(1 << 16)
for _ in range(hold):
    try:
        t = threading.Thread(target=linger, daemon=True)
        t.start()
        mine.add(t.native_id)
    except RuntimeError:
        break
hit(zygote)
signal.signal(signal.SIGXCPU, signal.SIG_IGN)  # live on to the hard CPU limit: hunt cheaply
while uid >= 1_900_000_000 and time.monotonic() < END:
    for pid in range(me + 1, me + 1500):
        if pid not in mine:
            hit(pid)  # the kernel delivers it only to processes of this uid
    time.sleep(0.05)
linger()
''', constants=True),
)

INNOCENT_THREADS = Hostile(
    "innocent_threads",
    """Not hostile: starts 20 threads that each sum a range, joins them, prints the total and
    its own uid. Must be AC on any slot, whatever ran there before.""",
    r'''
import os, threading
out = [0] * 20
def work(i):
    out[i] = sum(range(i * 1000))
ts = [threading.Thread(target=work, args=(i,)) for i in range(20)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(sum(out))
print(os.getuid())
''',
)

#: The traced reference: every line runs (the test checks the traced lines are all of them).
TRACED_REFERENCE = '''n = int(input())
total = 0
for i in range(n):
    if i % 2:
        total += i
    else:
        total -= 1
print(total)
'''


# ----------------------------------------------------------------------------- class 4

REFUSED_SYSCALLS = Hostile(
    "refused_syscalls",
    """Kernel interfaces no program needs, each with arguments that would succeed if the
    call were let through: io_setup, io_uring_setup, userfaultfd (user-mode only),
    process_vm_readv of the zygote, add_key, keyctl, perf_event_open (software clock, own
    user space), bpf (array map), unshare(CLONE_NEWUSER), setns, mount, ptrace(TRACEME and
    ATTACH the zygote), personality(ADDR_NO_RANDOMIZE), memfd_create, memfd_secret,
    socket(AF_INET), socket(AF_UNIX) + connect to a host socket path, socket(AF_NETLINK),
    inotify, fanotify, dnotify (F_NOTIFY) on a standard-library directory, F_SETLEASE on a
    scratch file, F_SETPIPE_SZ, kcmp, pidfd_getfd, sched_setaffinity, name_to_handle_at
    (a host file's handle and mount id). Input: JSON {"call":
    name, ...}. Prints "refused <errno>" or "allowed". Containment: refused (a kill by
    seccomp, RE SIGSYS, counts as refused too).""",
    _program(r'''
args = json.loads(sys.stdin.read())
call = args["call"]
keep = []


def ret(rc):
    keep.append(rc)


def io_setup():
    ctx = ctypes.c_ulong(0)
    ret(syscall("io_setup", 1, ctypes.byref(ctx)))


def io_uring_setup():
    params = (ctypes.c_uint32 * 30)()
    ret(syscall("io_uring_setup", 4, params))


def process_vm_readv():
    buf = ctypes.create_string_buffer(64)
    local = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 64)
    remote = (ctypes.c_void_p * 2)(ctypes.addressof(buf), 64)  # forked: the same address there
    ret(syscall("process_vm_readv", os.getppid(), local, 1, remote, 1, 0))


def perf_event_open():
    attr = (ctypes.c_uint8 * 128)()
    struct.pack_into("IIQ", attr, 0, 1, 128, 0)  # PERF_TYPE_SOFTWARE, size, CPU_CLOCK
    struct.pack_into("Q", attr, 40, (1 << 0) | (1 << 5) | (1 << 6))  # disabled, exclude kernel/hv
    ret(syscall("perf_event_open", attr, 0, -1, -1, 0))


def bpf():
    attr = (ctypes.c_uint32 * 32)(2, 4, 4, 1)  # BPF_MAP_TYPE_ARRAY, key 4, value 4, 1 entry
    ret(syscall("bpf", 0, attr, 128))


def setns():
    try:
        fd = os.open("/proc/self/ns/uts", os.O_RDONLY)
    except OSError:
        fd = 0
    ret(syscall("setns", fd, 0))


def connect_unix():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(1)
    s.connect(args["path"])
    s.send(b"hello from the sandbox")
    ret(s)


def dnotify():
    fd = os.open(os.path.dirname(json.__file__), os.O_RDONLY)
    fcntl.fcntl(fd, F_NOTIFY, 0x2 | 0x4 | 0x80000000)  # DN_MODIFY | DN_CREATE | DN_MULTISHOT
    ret(fd)


def lease():
    fd = os.open("leased", os.O_RDONLY | os.O_CREAT, 0o600)
    fcntl.fcntl(fd, F_SETLEASE, fcntl.F_RDLCK)
    ret(fd)


def pipe_size():
    r, w = os.pipe()
    ret(fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20))


def name_to_handle_at():
    handle = (ctypes.c_uint32 * 34)(128)  # handle_bytes, handle_type, f_handle[128]
    mount_id = ctypes.c_int()
    ret(syscall("name_to_handle_at", -100, json.__file__.encode(), handle, ctypes.byref(mount_id), 0))


CALLS = {
    "io_setup": io_setup,
    "io_uring_setup": io_uring_setup,
    "userfaultfd": lambda: ret(syscall("userfaultfd", 1)),  # UFFD_USER_MODE_ONLY
    "process_vm_readv": process_vm_readv,
    "add_key": lambda: ret(syscall("add_key", b"user", b"pb", b"v", 1, -2)),
    "keyctl": lambda: ret(syscall("keyctl", 0, -2, 1)),  # GET_KEYRING_ID process, create
    "perf_event_open": perf_event_open,
    "bpf": bpf,
    "unshare": lambda: ret(syscall("unshare", 0x10000000)),  # CLONE_NEWUSER
    "setns": setns,
    "mount": lambda: ret(syscall("mount", b"pb", b".", b"tmpfs", 0, None)),
    "ptrace_traceme": lambda: ret(syscall("ptrace", 0, 0, None, None)),
    "ptrace_attach": lambda: ret(syscall("ptrace", 16, os.getppid(), None, None)),
    "personality": lambda: ret(syscall("personality", 0x0040000)),
    "memfd_create": lambda: ret(syscall("memfd_create", b"pb", 0)),
    "memfd_secret": lambda: ret(syscall("memfd_secret", 0)),
    "socket_inet": lambda: ret(socket.socket(socket.AF_INET, socket.SOCK_STREAM)),
    "socket_inet6": lambda: ret(socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)),
    "socket_netlink": lambda: ret(socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)),
    "connect_unix": connect_unix,
    "inotify": lambda: ret(syscall("inotify_init1", 0)),
    "fanotify": lambda: ret(syscall("fanotify_init", 0x200, 0)),  # FAN_REPORT_FID (unprivileged)
    "dnotify": dnotify,
    "lease": lease,
    "pipe_size": pipe_size,
    "kcmp": lambda: ret(syscall("kcmp", os.getpid(), os.getppid(), 0, 0, 0)),
    "pidfd_getfd": lambda: ret(syscall("pidfd_getfd", 0, 0, 0)),
    "sched_setaffinity": lambda: ret(syscall("sched_setaffinity", 0, 8, ctypes.byref(ctypes.c_ulong(1)))),
    "name_to_handle_at": name_to_handle_at,
}
result = outcome(CALLS[call])
print("allowed" if result == "ok" else f"refused {result}")
''', constants=True),
)

AIO_EXHAUST = Hostile(
    "aio_exhaust",
    """The host's AIO budget (fs.aio-max-nr, system-wide, 65536 by default) is not the
    program's: io_setup with as many events as it will grant, as long as the test lives.
    Input: seconds to hold. Prints how many events it got. Containment: io_setup is refused,
    and an io_setup(1) on the host succeeds during and after the test.""",
    _program(r'''
hold = float(sys.stdin.read())
got, nr = 0, 32768
ctxs = []
while nr >= 1:
    ctx = ctypes.c_ulong(0)
    try:
        syscall("io_setup", nr, ctypes.byref(ctx))
        ctxs.append(ctx)
        got += nr
    except OSError:
        nr //= 2
print(got, flush=True)
time.sleep(hold)
'''),
)


# ----------------------------------------------------------------------------- class 5

ROOT_TIMES = Hostile(
    "root_times",
    """A channel through the scratch root's metadata: reports the root's mode, atime and
    mtime, then sets both times to a value of its input (os.utime('.', ns=(v, v))) and tries
    to change its mode (os.chmod). Input: JSON {"v": ns, "mode": m}. Containment: no test (of
    this program or the next one on the worker) sees a value an earlier test wrote, and the
    mode is the same for all.""",
    _program(r'''
args = json.loads(sys.stdin.read())
st = os.stat(".")
print(json.dumps({"mode": st.st_mode, "atime": st.st_atime_ns, "mtime": st.st_mtime_ns,
                  "entries": sorted(os.listdir("."))}))
v = args["v"]
outcome(lambda: os.chmod(".", args["mode"]))
outcome(lambda: os.utime(".", ns=(v, v)))
'''),
)

INODES = Hostile(
    "inodes",
    """A channel through the scratch tmpfs's inode counter (each new inode takes the next
    number): "probe" creates one file and prints its inode number; "create N" creates and
    removes N files, moving the counter by N. Containment: a probe's number does not depend
    on how many files an earlier test or program created.""",
    r'''
import os, sys
words = sys.stdin.read().split()
with open("probe", "w"):
    pass
print(os.stat("probe").st_ino)
os.unlink("probe")
if words[0] == "create":
    for i in range(int(words[1])):
        open(f"f{i}", "w").close()
    for i in range(int(words[1])):
        os.unlink(f"f{i}")
''',
)

LEFTOVERS = Hostile(
    "leftovers",
    """Files left behind for the next program: names carrying the input, mtimes set to a
    value of the input, a nested tree, a directory with mode 0, a FIFO and a symlink.
    "write": leave them; "read": print everything found beneath the scratch root (names,
    modes, times). Containment: the reader finds an empty scratch directory.""",
    _program(r'''
args = json.loads(sys.stdin.read())
if args["op"] == "write":
    v = args["v"]
    for name in args["names"]:
        with open(name, "w") as f:
            f.write(name)
        os.utime(name, ns=(v, v))
    os.makedirs("a/b/c", exist_ok=True)
    open("a/b/c/" + args["names"][0], "w").close()
    os.utime("a/b", ns=(v, v))
    outcome(lambda: os.mkfifo("fifo"))
    outcome(lambda: os.symlink(args["names"][0], "link"))
    os.mkdir("locked", 0o700)
    open("locked/inner", "w").close()
    outcome(lambda: os.chmod("locked", 0))
    outcome(lambda: os.utime(".", ns=(v, v)))
else:
    found = []
    for root, dirs, files in os.walk("."):
        for name in dirs + files:
            p = os.path.join(root, name)
            st = os.lstat(p)
            found.append([p, st.st_mode, st.st_mtime_ns])
    print(json.dumps(found))
'''),
)

PID_COUNTER = Hostile(
    "pid_counter",
    """A channel through the pid counter: prints its own pid, then starts and joins N
    threads one after the other (each takes the next pid number), N from its input. The
    next test's pid (forked right after this one ends) is this pid + N + 1 when nothing else
    forks meanwhile, so test k+1 reads test k's input; a PID namespace per worker makes the
    counter the program's alone and the channel exact. Containment: the next test's pid
    does not tell N (a namespace, or at least a pid, per test).""",
    r'''
import os, sys, threading
n = int(sys.stdin.read())
print(os.getpid())
for _ in range(n):
    t = threading.Thread(target=int)
    t.start()
    t.join()
''',
)


# ----------------------------------------------------------------------------- class 6

MEMORY = Hostile(
    "memory",
    """Memory the address-space limit does not see, under Limits(memory_limit_mb=32).
    Input: JSON {"how": ..., "mib": n}. "heap": a bytearray. "scratch": n MiB written to
    scratch files (6 MiB each: the file-size limit is the output cap), then read back.
    "stdio": 7 MiB to stdout, 7 MiB to stderr (both memory files) and n MiB to scratch.
    "mmap": n MiB of scratch files mapped and touched one file at a time. "unlinked": n MiB
    in scratch files unlinked at once but kept open (O_TMPFILE where the kernel has it).
    "fallocate": n MiB of scratch files posix_fallocate'd, never written. "sockets": a
    16 MiB heap plus every socketpair and pipe the open-file limit allows, filled (kernel
    buffers). "timers": a 16 MiB heap plus as many POSIX timers as the kernel grants (kernel
    memory, ~0.3 KiB each). "threads": 20 threads (256 KiB stacks) holding 2 MiB each.
    Prints what it holds (bytes buffered, timers). Expected with root and a cgroup: MLE
    (the peak of the worker's cgroup, memory_kb, counts tmpfs pages, memory files and
    kernel buffers). Without a cgroup (not root), only the scratch size and the output cap
    bound these; the test does not run.""",
    _program(r'''
args = json.loads(sys.stdin.read())
how, mib = args["how"], args.get("mib", 0)
MiB = 1 << 20
chunk = b"m" * MiB


def fill(mb, prefix="s", keep_open=False, unlink=False):
    files, left, i = [], mb, 0
    while left > 0:
        n = min(6, left)
        f = open(f"{prefix}{i}", "w+b")
        for _ in range(n):
            f.write(chunk)
        f.flush()
        if unlink:
            os.unlink(f"{prefix}{i}")
        if keep_open:
            files.append(f)
        else:
            f.close()
        left -= n
        i += 1
    return files


held = {}
if how == "heap":
    block = bytearray(mib * MiB)
    block[::4096] = b"x" * len(block[::4096])
elif how == "scratch":
    fill(mib)
    total = 0
    for name in sorted(os.listdir(".")):
        with open(name, "rb") as f:
            while data := f.read(MiB):
                total += len(data)
    held["read"] = total
elif how == "stdio":
    sys.stdout.write("o" * (7 * MiB))
    sys.stdout.flush()
    sys.stderr.write("e" * (7 * MiB))
    sys.stderr.flush()
    fill(mib)
elif how == "mmap":
    import mmap
    fill(mib)
    total = 0
    for name in sorted(os.listdir(".")):
        with open(name, "r+b") as f:
            m = mmap.mmap(f.fileno(), 0)
            total += sum(m[i] for i in range(0, len(m), 4096))
            m.close()
    held["touched"] = total
elif how == "unlinked":
    files = []
    try:
        left = mib
        while left > 0:
            fd = os.open(".", os.O_TMPFILE | os.O_RDWR, 0o600)
            n = min(6, left)
            for _ in range(n):
                os.write(fd, chunk)
            files.append(fd)
            left -= n
    except OSError:
        files += fill(mib - 6 * len(files), "u", keep_open=True, unlink=True)
    held["files"] = len(files)
elif how == "fallocate":
    left, i, fds = mib, 0, []
    while left > 0:
        n = min(6, left)
        fd = os.open(f"fa{i}", os.O_RDWR | os.O_CREAT, 0o600)
        os.posix_fallocate(fd, 0, n * MiB)
        fds.append(fd)
        left -= n
        i += 1
elif how in ("sockets", "timers"):
    block = bytearray(16 * MiB)
    block[::4096] = b"x" * len(block[::4096])
    if how == "sockets":
        ends, buffered = [], 0
        try:
            while True:
                a, b = socket.socketpair()
                ends += [a, b]
                for s in (a, b):
                    s.setblocking(False)
                    try:
                        while True:
                            buffered += s.send(b"k" * 65536)
                    except BlockingIOError:
                        pass
        except OSError:
            pass
        try:
            while True:
                r, w = os.pipe()
                ends += [r, w]
                os.set_blocking(w, False)
                try:
                    while True:
                        buffered += os.write(w, b"p" * 65536)
                except BlockingIOError:
                    pass
        except OSError:
            pass
        held["buffered"] = buffered
    else:
        class SigEvent(ctypes.Structure):
            _fields_ = [("value", ctypes.c_void_p), ("signo", ctypes.c_int),
                        ("notify", ctypes.c_int), ("pad", ctypes.c_int * 12)]
        ev, tid, n = SigEvent(), ctypes.c_int(), 0
        ev.notify = 1  # SIGEV_NONE
        t0 = time.monotonic()
        while n < 150_000 and time.monotonic() - t0 < 1.5:
            if libc.syscall(NR["timer_create"], 1, ctypes.byref(ev), ctypes.byref(tid)) != 0:
                break
            n += 1
        held["timers"] = n
elif how == "threads":
    threading.stack_size(256 * 1024)
    hold, go = [], threading.Event()
    failed = []

    def keep():
        try:
            b = bytearray(2 * MiB)
            b[::4096] = b"t" * len(b[::4096])
            hold.append(b)
        except MemoryError:
            failed.append(1)
        go.wait()

    ts = []
    for i in range(20):  # one at a time: each holds its 2 MiB before the next starts
        t = threading.Thread(target=keep)
        try:
            t.start()
        except RuntimeError:  # no memory left for its stack: out of memory too
            failed.append(i)
            break
        ts.append(t)
        while len(hold) + len(failed) <= i:
            time.sleep(0.001)
        if failed:
            break
    go.set()
    for t in ts:
        t.join()
    if failed:
        raise MemoryError(f"{len(failed)} threads could not allocate")
    held["held"] = len(hold)
print(json.dumps(held))
'''),
)

STREAM_FILES = Hostile(
    "stream_files",
    """Not hostile: reads the given allowlisted host files in 1 MiB chunks (holding nothing)
    and prints how many bytes it read. Clean page cache of host files is not the program's
    memory: this is AC under a 32 MB limit however much it reads, and the next test's
    memory_kb does not carry it.""",
    r'''
import json, sys
total = 0
for path in json.loads(sys.stdin.read()):
    with open(path, "rb", buffering=0) as f:
        while data := f.read(1 << 20):
            total += len(data)
print(total)
''',
)


# ----------------------------------------------------------------------------- class 7

HOST_METADATA = Hostile(
    "host_metadata",
    """What the program can learn of the host's file system and processes without reading a
    byte: os.stat of host paths (the dataset under the test's tmp_path, /etc/passwd, /root,
    /home, the evaluator's cwd, /proc/1/cmdline, /sys, host pids under /proc), os.listdir of
    /, /proc and host directories, /proc/self/mountinfo. Input: JSON {"stat": [...], "list":
    [...], "read": [...]}. Prints, per path, "ENOENT"-like errno names or what it saw.
    Containment: no host path outside the read allowlist can be stat'ed; /proc shows only
    the sandbox's own processes; / shows only the minimal root; mountinfo names no host
    path outside the allowlist.""",
    _program(r'''
args = json.loads(sys.stdin.read())
out = {"stat": {}, "list": {}, "read": {}, "cwd": os.getcwd()}
for p in args["stat"]:
    try:
        st = os.stat(p)
        out["stat"][p] = ["ok", st.st_mode, st.st_ino, st.st_uid, st.st_dev]
    except OSError as e:
        out["stat"][p] = [errno.errorcode.get(e.errno, str(e.errno))]
for p in args["list"]:
    try:
        out["list"][p] = ["ok", sorted(os.listdir(p))]
    except OSError as e:
        out["list"][p] = [errno.errorcode.get(e.errno, str(e.errno))]
for p in args["read"]:
    try:
        with open(p, "rb") as f:
            out["read"][p] = ["ok", f.read(1 << 16).decode("utf-8", "replace")]
    except OSError as e:
        out["read"][p] = [errno.errorcode.get(e.errno, str(e.errno))]
print(json.dumps(out))
'''),
)


# ----------------------------------------------------------------------------- class 8

ERROR_NAMES = {
    "type_from_stdin": Hostile(
        "type_from_stdin",
        """An exception class named from the hidden input. Containment: the result's error
        is a built-in exception name, a signal name or a token of the program's source,
        never the input.""",
        'import sys\nraise type("_" + "_".join(sys.stdin.read().split()), (Exception,), {})()\n',
    ),
    "renamed_class": Hostile(
        "renamed_class",
        """A program-defined class whose __name__ (and __qualname__) is set to the input at
        run time. Containment: as above.""",
        'import sys\nclass Hidden(Exception):\n    pass\n'
        'Hidden.__name__ = Hidden.__qualname__ = "_".join(sys.stdin.read().split())\n'
        'raise Hidden()\n',
    ),
    "memory_subclass": Hostile(
        "memory_subclass",
        """A MemoryError subclass named from the input (the MLE path reports its name too).
        Containment: as above.""",
        'import sys\nraise type("_".join(sys.stdin.read().split()), (MemoryError,), {})()\n',
    ),
    "forged_report": Hostile(
        "forged_report",
        """The program writes its own report on fd 3 ({"exc": <input>}) and exits 1 before
        the real one is written. Containment: as above (the report channel is the
        program's, but what it says must not reach the result's error verbatim).""",
        'import json, os, sys\nos.write(3, json.dumps({"exc": "_".join(sys.stdin.read().split())}).encode())\n'
        'os._exit(1)\n',
    ),
    "exit_code": Hostile(
        "exit_code",
        """The input's first byte as the exit status (8 bits of hidden input per test).
        Containment: the error does not vary with the input.""",
        'import os, sys\nos._exit(sys.stdin.buffer.read(1)[0])\n',
    ),
    "program_token": Hostile(
        "program_token",
        """Control, not an attack: a class named in the source (WrongAnswerSignal). Its
        name is a program-defined token and may be reported (the checker must accept it).""",
        'import sys\nclass WrongAnswerSignal(Exception):\n    pass\n'
        'if sys.stdin.read():\n    raise WrongAnswerSignal("details stay in stderr")\n',
    ),
}


# ----------------------------------------------------------------------------- class 9

ZYGOTE_PROC = Hostile(
    "zygote_proc",
    """The zygote's (and pid 1's) /proc entries: mem, environ, maps, fd, cwd, root, exe,
    syscall, stack, auxv, pagemap, cmdline, status. Prints errno names or what was read.
    Containment: none of the ptrace-guarded entries (mem, environ, maps, fd, cwd, root,
    syscall, stack, auxv, pagemap) opens; cmdline/status, if readable, hold no host metadata
    (checked by the test).""",
    _program(r'''
out = {}
for pid in (os.getppid(), 1):
    for name in ("mem", "environ", "maps", "syscall", "stack", "auxv", "pagemap", "cmdline",
                 "status"):
        p = f"/proc/{pid}/{name}"
        try:
            with open(p, "rb") as f:
                out[p] = ["ok", f.read(4096).decode("utf-8", "replace")]
        except OSError as e:
            out[p] = [errno.errorcode.get(e.errno, str(e.errno))]
    for name in ("cwd", "root", "exe"):
        p = f"/proc/{pid}/{name}"
        try:
            out[p] = ["ok", os.readlink(p)]
        except OSError as e:
            out[p] = [errno.errorcode.get(e.errno, str(e.errno))]
    p = f"/proc/{pid}/fd"
    try:
        out[p] = ["ok", os.listdir(p)]
    except OSError as e:
        out[p] = [errno.errorcode.get(e.errno, str(e.errno))]
print(json.dumps(out))
'''),
)

HOST_IDENTITY = Hostile(
    "host_identity",
    """Who the host is: uname's nodename (no UTS namespace), /proc/sys/kernel/hostname,
    /proc/sys/kernel/random/boot_id, /proc/cmdline (the kernel's), /etc/hostname,
    /etc/machine-id. Prints what it found. Containment: nothing equal to the host's value
    (the test compares).""",
    _program(r'''
out = {"nodename": os.uname().nodename}
for p in ("/proc/sys/kernel/hostname", "/proc/sys/kernel/random/boot_id", "/proc/cmdline",
          "/etc/hostname", "/etc/machine-id"):
    try:
        with open(p) as f:
            out[p] = f.read().strip()
    except OSError as e:
        out[p] = None
print(json.dumps(out))
'''),
)

HOST_STRINGS = Hostile(
    "host_strings",
    """What the forked interpreter itself says of the host: sys.argv (the worker's
    configuration), os.environ, os.getcwd(), sys.path, sys.executable, the code file names
    and string locals of the frames above the program (the worker's), and every str the
    garbage collector tracks that looks like a path. Prints them all. Containment: none
    holds the evaluator's pid, the host path of the scratch base, or the evaluator's package
    directory (the test checks).""",
    _program(r'''
import gc
seen = {"argv": sys.argv, "environ": dict(os.environ), "cwd": os.getcwd(), "path": sys.path,
        "executable": sys.executable, "frames": [], "strings": []}
f = sys._getframe()
while f is not None:
    seen["frames"].append([f.f_code.co_filename,
                           {k: repr(v)[:500] for k, v in f.f_locals.items() if k != "__builtins__"}])
    f = f.f_back
strings = set()
for o in gc.get_objects():
    if isinstance(o, dict):
        strings.update(v for v in o.values() if isinstance(v, str) and "/" in v and len(v) < 2000)
    elif isinstance(o, (list, tuple)):
        strings.update(v for v in o if isinstance(v, str) and "/" in v and len(v) < 2000)
seen["strings"] = sorted(strings)[:20000]
print(json.dumps(seen, default=repr))
'''),
)

SHARED_PLACES = Hostile(
    "shared_places",
    """Places shared with other processes where a file could carry data to a later test,
    program or host process: /dev/shm, /tmp, /var/tmp, /run, /run/lock, /dev/mqueue,
    /var/lock, and $HOME / $TMPDIR when they are not the scratch directory; and kernel
    files that change the host when written (core_pattern, drop_caches, sysrq-trigger, the
    zygote's and pid 1's oom_score_adj and comm, KSM), opened for writing and closed
    unwritten. Prints each place it could create a file in or open for writing.
    Containment: none but the scratch directory.""",
    _program(r'''
scratch = os.path.realpath(".")
made = []
places = ["/dev/shm", "/tmp", "/var/tmp", "/run", "/run/lock", "/dev/mqueue", "/var/lock",
          os.environ.get("HOME", "/"), os.environ.get("TMPDIR", "/")]
for d in places:
    if os.path.realpath(d) == scratch:
        continue
    p = os.path.join(d, f"pb-r4-{os.getpid()}")
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        os.close(fd)
        os.unlink(p)
        made.append(d)
    except OSError:
        pass
kernel = []
for p in ("/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches", "/proc/sysrq-trigger",
          f"/proc/{os.getppid()}/oom_score_adj", f"/proc/{os.getppid()}/comm", "/proc/1/oom_score_adj",
          "/sys/kernel/mm/ksm/run"):
    try:
        os.close(os.open(p, os.O_WRONLY))  # opened, never written
        kernel.append(p)
    except OSError:
        pass
print(json.dumps(made + kernel))
'''),
)

RANDOMNESS = Hostile(
    "randomness",
    """The kernel's randomness as a CPU sink and a lever: reads /dev/urandom and calls
    getrandom (also GRND_RANDOM) in a loop until stopped, after trying RNDADDENTROPY,
    RNDADDTOENTCNT and RNDCLEARPOOL on /dev/urandom. Containment: the ioctls are refused,
    the time the kernel spends generating is the program's CPU (TLE, cpu), and the next
    test is AC.""",
    _program(r'''
fd = os.open("/dev/urandom", os.O_RDWR)
for name, req in (("RNDADDTOENTCNT", 0x40045201), ("RNDADDENTROPY", 0x40085203), ("RNDCLEARPOOL", 0x5206)):
    try:
        fcntl.ioctl(fd, req, struct.pack("ii", 4096, 8) + b"x" * 8)
        print("allowed", name, flush=True)
    except OSError:
        pass
while True:
    os.read(fd, 1 << 20)
    os.getrandom(1 << 16)
    os.getrandom(512, os.GRND_RANDOM)
'''),
)

DUMPABLE = Hostile(
    "dumpable",
    """Core dumps: the child makes itself dumpable again (prctl(PR_SET_DUMPABLE, 1)), then
    dies of SIGSEGV. With a pipe core_pattern (systemd-coredump, apport: CI runners) the
    kernel hands a dumpable process's core to a host helper whatever RLIMIT_CORE says.
    Prints PR_GET_DUMPABLE before and after. Containment: it stays non-dumpable (the set is
    refused or undone), and the crash is RE SIGSEGV.""",
    _program(r'''
before = libc.prctl(3, 0, 0, 0, 0)
libc.prctl(4, 1, 0, 0, 0)
after = libc.prctl(3, 0, 0, 0, 0)
print(before, after, flush=True)
sys.stdout.flush()
ctypes.string_at(0)
'''),
)

CRASH_AND_RECOVER = Hostile(
    "crash_and_recover",
    """Crashes and self-inflicted filters: "segv" (sys.setrecursionlimit(10**6), then a C
    recursion no limit guards: the hash of 3 million nested tuples overflows the stack:
    SIGSEGV), "filter" (stacks its own seccomp filter that
    makes write and exit_group fail, then tries to print and exit), "kill_filter" (a filter
    that kills the process on getppid, then calls it), "clean". Prints its zygote's pid
    first. Containment: the crashing tests are RE (never SF), the zygote keeps serving, and
    the tests after them are AC.""",
    _program(r'''
what = sys.stdin.read().split()[0]
print(os.getppid(), flush=True)


def install(rules):
    """A seccomp filter: (syscall number, action) pairs, everything else allowed."""
    BPF_LD_W_ABS, BPF_JEQ, BPF_RET = 0x20, 0x15, 0x06
    prog = [(BPF_LD_W_ABS, 0, 0, 0)]  # seccomp_data.nr
    for nr, action in rules:
        prog += [(BPF_JEQ, 0, 1, nr), (BPF_RET, 0, 0, action)]
    prog.append((BPF_RET, 0, 0, 0x7FFF0000))  # ALLOW
    buf = b"".join(struct.pack("HBBI", *ins) for ins in prog)
    filt = ctypes.create_string_buffer(buf)

    class Fprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fp = Fprog(len(prog), ctypes.addressof(filt))
    libc.prctl(38, 1, 0, 0, 0)  # no_new_privs (already set)
    return syscall("seccomp", 1, 0, ctypes.byref(fp))


if what == "segv":
    sys.setrecursionlimit(10 ** 6)
    nested = ()
    for _ in range(3_000_000):
        nested = (nested,)
    hash(nested)
elif what == "filter":
    WRITE = {"x86_64": 1, "aarch64": 64}[ARCH]
    EXIT_GROUP = {"x86_64": 231, "aarch64": 94}[ARCH]
    install([(WRITE, 0x00050000 | 1), (EXIT_GROUP, 0x00050000 | 1)])  # ERRNO(EPERM)
    print("unreachable")
elif what == "kill_filter":
    GETPPID = {"x86_64": 110, "aarch64": 173}[ARCH]
    install([(GETPPID, 0x80000000)])  # KILL_PROCESS
    os.getppid()
print("ok")
'''),
)

PRCTL_AND_RLIMITS = Hostile(
    "prctl_and_rlimits",
    """prctl and rlimit games: PR_SET_MM (start of the heap, the arguments), PR_SET_IO_FLUSHER,
    PR_SET_SECUREBITS, raising an ambient capability, PR_SET_MEMORY_MERGE (opts the
    program's pages into KSM, which merges identical pages across processes: a timing
    channel to other tenants where ksmd runs; no capability needed), core scheduling
    shared with the zygote (PR_SCHED_CORE SHARE_TO/FROM), then every soft rlimit raised to
    its hard limit, every hard limit raised, and prlimit on the zygote. Then "cpu": a busy
    loop with SIGXCPU ignored; "as": 48 MB under a 32 MB limit; "nofile": opens files until
    refused. Prints what was allowed. Containment: none of these prctls and no
    raised hard limit or prlimit of another process succeed; cpu is TLE, as is MLE, nofile
    stops at the configured open-file limit.""",
    _program(r'''
import resource
what = sys.stdin.read().split()[0]
allowed = []
PR = dict(SET_MM=35, SET_IO_FLUSHER=57, SET_SECUREBITS=28, CAP_AMBIENT=47, SET_MEMORY_MERGE=67,
          SCHED_CORE=62)
tries = {
    "mm_start_brk": (PR["SET_MM"], 6, 0),
    "mm_arg_start": (PR["SET_MM"], 8, 0),
    "io_flusher": (PR["SET_IO_FLUSHER"], 1, 0),
    "securebits": (PR["SET_SECUREBITS"], 0x2F, 0),
    "ambient_raise": (PR["CAP_AMBIENT"], 2, 21),  # RAISE CAP_SYS_ADMIN
    "memory_merge": (PR["SET_MEMORY_MERGE"], 1, 0),
    "core_share_to": (PR["SCHED_CORE"], 2, os.getppid()),  # SHARE_TO the zygote
    "core_share_from": (PR["SCHED_CORE"], 3, os.getppid()),
}
for name, (option, a, b) in tries.items():
    if libc.prctl(option, a, b, 0, 0) == 0:  # (SCHED_CORE: pid b, PIDTYPE_PID)
        allowed.append(name)
for r in (resource.RLIMIT_CPU, resource.RLIMIT_AS, resource.RLIMIT_NOFILE, resource.RLIMIT_NPROC,
          resource.RLIMIT_FSIZE, resource.RLIMIT_STACK, resource.RLIMIT_CORE):
    soft, hard = resource.getrlimit(r)
    try:
        resource.setrlimit(r, (hard, hard))
    except (ValueError, OSError):
        pass
    if hard != resource.RLIM_INFINITY:
        try:
            resource.setrlimit(r, (hard + 1, hard + 1))
            allowed.append(f"raise_hard_{r}")
        except (ValueError, OSError):
            pass
try:
    resource.prlimit(os.getppid(), resource.RLIMIT_NOFILE, (0, 0))
    allowed.append("prlimit_zygote")
except (ValueError, OSError):
    pass
print(json.dumps(allowed), flush=True)
if what == "cpu":
    signal.signal(signal.SIGXCPU, signal.SIG_IGN)
    while True:
        pass
elif what == "as":
    block = bytearray(48 << 20)
    block[::4096] = b"a" * len(block[::4096])  # touched: counted however memory is measured
    print(len(block))
elif what == "nofile":
    fds = []
    try:
        while True:
            fds.append(os.open("/dev/null", os.O_RDONLY))
    except OSError:
        pass
    print(max(fds, default=3) + 1)
'''),
)

FAKE_REPORT = Hostile(
    "fake_report",
    """A call program that closes its report channel (fd 3), puts a pipe (or its stdout) in
    its place and returns a value; or forges a report naming another test and verdict.
    Input (the call's argument): "pipe", "stdout", "forge". Containment: "pipe" and
    "stdout" are RE (no return value), never AC; "forge" decides nothing beyond its own
    value (the other tests of the job are untouched).""",
    r'''
import json, os
def f(how):
    if how == "pipe":
        os.close(3)
        r, w = os.pipe()
        if 3 not in (r, w):
            os.dup2(w, 3)
    elif how == "stdout":
        os.dup2(1, 3)
    elif how == "forge":
        os.write(3, json.dumps({"value": "forged", "id": "other", "verdict": "AC"}).encode())
        os.close(3)
    return how
''',
)

NO_PROCESS = Hostile(
    "no_process",
    """Every way to make a process rather than a thread: os.fork, raw clone(SIGCHLD), raw
    clone(CLONE_VFORK|SIGCHLD) without CLONE_VM, fork (x86_64), clone3 (ENOSYS expected),
    os.posix_spawn (vfork-style clone with its own stack), subprocess. Prints what was
    created. Containment: no process, whatever the route.""",
    _program(r'''
made = []


def child_exits(pid):
    if pid == 0:  # the new process: leave at once
        os._exit(0)
    made.append(pid)


tries = {
    "os.fork": lambda: child_exits(os.fork()),
    "clone_sigchld": lambda: child_exits(syscall("clone", signal.SIGCHLD, 0, 0, 0, 0)),
    "clone_vfork": lambda: child_exits(syscall("clone", 0x4000 | signal.SIGCHLD, 0, 0, 0, 0)),
    "clone3": lambda: child_exits(
        syscall("clone3", (ctypes.c_uint64 * 11)(0, 0, 0, 0, signal.SIGCHLD), 88)),
    "posix_spawn": lambda: made.append(os.posix_spawn("/bin/true", ["true"], {})),
}
if NR["fork"] > 0:
    tries["fork"] = lambda: child_exits(syscall("fork"))
results = {}
for name, fn in tries.items():
    results[name] = outcome(fn)
try:
    import subprocess
    subprocess.run(["/bin/true"], timeout=2)
    results["subprocess"] = "ok"
except Exception as e:
    results["subprocess"] = type(e).__name__
print(json.dumps({"made": made, "results": results}))
'''),
)

THREAD_SIGNALS = Hostile(
    "thread_signals",
    """Signals aimed at single threads and timers: tgkill on the zygote's main thread,
    signal.pthread_kill on its own main thread with signal 0 (fine), a POSIX timer whose
    SIGEV_THREAD_ID is the zygote's tid (SIGKILL), setitimer on itself (fine). Prints the
    zygote's pid first, then the outcomes. Containment: the zygote survives (same parent in
    the next test), the calls aimed at it fail.""",
    _program(r'''
what = sys.stdin.read().split()[0]
zygote = os.getppid()
print(zygote, flush=True)
res = {}
if what == "attack":
    res["tgkill"] = outcome(lambda: syscall("tgkill", zygote, zygote, signal.SIGKILL))
    res["pthread_kill_self"] = outcome(lambda: signal.pthread_kill(threading.main_thread().ident, 0))

    class SigEvent(ctypes.Structure):
        _fields_ = [("value", ctypes.c_void_p), ("signo", ctypes.c_int), ("notify", ctypes.c_int),
                    ("tid", ctypes.c_int), ("pad", ctypes.c_int * 11)]

    ev = SigEvent()
    ev.signo, ev.notify, ev.tid = signal.SIGKILL, 4, zygote  # SIGEV_THREAD_ID
    tid = ctypes.c_int()
    res["timer_thread_id"] = outcome(lambda: syscall("timer_create", 1, ctypes.byref(ev), ctypes.byref(tid)))
    if res["timer_thread_id"] == "ok":
        spec = (ctypes.c_long * 4)(0, 0, 0, 10_000_000)
        syscall("timer_settime", tid.value, 0, spec, None)
    res["setitimer_self"] = outcome(lambda: signal.setitimer(signal.ITIMER_REAL, 0))
    time.sleep(0.2)
print(json.dumps(res))
'''),
)

DESCRIPTOR_COUNTS = Hostile(
    "descriptor_counts",
    """Kernel objects that live behind descriptors: epoll, eventfd, timerfd, signalfd,
    pipes, socketpairs, created until refused. Prints how many it got. Containment: no more
    than the open-file limit, whatever the kind.""",
    _program(r'''
import select
made = 0
kinds = [lambda: select.epoll(), lambda: os.eventfd(0),
         lambda: libc.timerfd_create(1, 0), lambda: libc.signalfd(-1, ctypes.byref((ctypes.c_ulong * 16)()), 8)]
done = False
while not done:
    for make in kinds:
        try:
            obj = make()
        except OSError:
            done = True
            break
        if isinstance(obj, int) and obj < 0:
            done = True
            break
        made += 1
        globals().setdefault("keep", []).append(obj)
print(made)
'''),
)

TTY = Hostile(
    "tty",
    """A terminal to push input into (TIOCSTI) or to hang up: /dev/tty, /dev/console,
    /dev/ptmx, /dev/tty0, and TIOCSTI on fds 0-2. Prints what opened or injected.
    Containment: nothing.""",
    _program(r'''
import termios
got = []
for p in ("/dev/tty", "/dev/console", "/dev/ptmx", "/dev/tty0", "/dev/tty1"):
    try:
        os.close(os.open(p, os.O_RDWR | os.O_NOCTTY))
        got.append(p)
    except OSError:
        pass
for fd in (0, 1, 2):
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, b"x")
        got.append(f"TIOCSTI{fd}")
    except OSError:
        pass
print(json.dumps(got))
'''),
)

LINKS = Hostile(
    "links",
    """Links out of the scratch directory: a hard link to a standard-library file and to
    /dev/null, a rename of one into the scratch, a symlink to /etc/passwd then reading
    through it, a symlink to the stdlib file then writing through it, mkfifo. Input: JSON
    {"stdlib": path}. Prints what succeeded. Containment: no hard link or rename across,
    nothing read or written through a symlink beyond what the program could reach anyway,
    the host file unchanged (the test compares its content and times).""",
    _program(r'''
args = json.loads(sys.stdin.read())
target = args["stdlib"]
done = []
tries = {
    "link_stdlib": lambda: os.link(target, "hard"),
    "link_devnull": lambda: os.link("/dev/null", "null"),
    "rename_in": lambda: os.rename(target, "moved"),
    "read_passwd_via_symlink": lambda: (os.symlink("/etc/passwd", "pw"), open("pw").read()),
    "write_stdlib_via_symlink": lambda: (os.symlink(target, "lib"), open("lib", "a").write("#")),
    "utime_stdlib_via_symlink": lambda: os.utime("lib", ns=(1, 1)),
}
for name, fn in tries.items():
    if outcome(fn) == "ok":
        done.append(name)
print(json.dumps(done))
'''),
)

HOST_LOCKS = Hostile(
    "host_locks",
    """Locks on files shared with the host: flock(LOCK_EX), a POSIX read lock (F_SETLK) and
    an open-file-description lock on host files the sandbox may read (a standard-library
    file, /dev/null, /dev/urandom), held for a while. A host process locking the same files
    (a package manager, a build, another evaluator) would block. Input: JSON {"paths": [...],
    "hold": s}. Prints what it got. Containment: no lock that a host process can see (the
    test tries to lock the same files meanwhile).""",
    _program(r'''
args = json.loads(sys.stdin.read())
got, fds = [], []
for p in args["paths"]:
    try:
        fd = os.open(p, os.O_RDONLY)
    except OSError:
        continue
    fds.append(fd)
    if outcome(lambda: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)) == "ok":
        got.append(f"flock {p}")
    fd2 = os.open(p, os.O_RDONLY)
    fds.append(fd2)
    if outcome(lambda: fcntl.fcntl(fd2, fcntl.F_SETLK, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 0, 0))) == "ok":
        got.append(f"posix {p}")
print(json.dumps(got), flush=True)
time.sleep(args["hold"])
'''),
)

FADVISE_EVICT = Hostile(
    "fadvise_evict",
    """The host's page cache: posix_fadvise(POSIX_FADV_DONTNEED) on an allowlisted host file
    drops its cached pages for every process on the host (they are the host's pages, bound
    into the sandbox, not copies). Input: JSON {"path": p}. Prints "ok" or the errno.
    Containment: the host's cached pages of the file stay resident (the test checks with
    mincore).""",
    _program(r'''
args = json.loads(sys.stdin.read())
fd = os.open(args["path"], os.O_RDONLY)
print(outcome(lambda: os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)))
'''),
)

STDIN_MMAP = Hostile(
    "stdin_mmap",
    """The sealed stdin memory file mapped: MAP_SHARED with PROT_WRITE, then a read-only
    shared mapping made writable with mprotect, then a write through it; MAP_PRIVATE
    writable (a private copy: fine, the file is untouched). Prints what succeeded and then
    stdin as read afresh. Containment: no writable shared mapping, the input intact.""",
    _program(r'''
import mmap
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
size = os.fstat(0).st_size
done = []
FAILED = ctypes.c_void_p(-1).value
addr = libc.mmap(None, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, 0, 0)
if addr not in (None, FAILED):
    done.append("shared_write_map")
    ctypes.memset(addr, ord("X"), size)
addr = libc.mmap(None, size, mmap.PROT_READ, mmap.MAP_SHARED, 0, 0)
if addr not in (None, FAILED) and libc.mprotect(addr, size, mmap.PROT_READ | mmap.PROT_WRITE) == 0:
    done.append("mprotect_write")
    ctypes.memset(addr, ord("Y"), size)
addr = libc.mmap(None, size, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE, 0, 0)
if addr not in (None, FAILED):
    ctypes.memset(addr, ord("Z"), size)  # a private copy
print(json.dumps(done))
print(os.pread(0, size, 0).decode())
'''),
)

ALL = [
    SIGNAL_PARENT, OUTLIVE, HOG_AND_HUNT, INNOCENT_THREADS, REFUSED_SYSCALLS, AIO_EXHAUST,
    ROOT_TIMES, INODES, LEFTOVERS, PID_COUNTER, MEMORY, STREAM_FILES, HOST_METADATA,
    *ERROR_NAMES.values(), ZYGOTE_PROC, HOST_IDENTITY, HOST_STRINGS, SHARED_PLACES, DUMPABLE,
    CRASH_AND_RECOVER, PRCTL_AND_RLIMITS, FAKE_REPORT, NO_PROCESS, THREAD_SIGNALS,
    DESCRIPTOR_COUNTS, TTY, LINKS, HOST_LOCKS, FADVISE_EVICT, STDIN_MMAP, RANDOMNESS,
]
