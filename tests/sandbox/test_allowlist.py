"""The seccomp allowlist of the zygote and the test child (``sandbox/allowlist.h``).

(a) Refused families: for each, a hostile program makes several calls of the family
(through Python's wrappers where there are some, through raw ``syscall(2)`` with ctypes
otherwise) and prints what each got; every call must get the errno the filter gives
(EPERM; ENOTTY for ioctl; EAFNOSUPPORT for a socket family; ENOSYS for clone3), most
with arguments the kernel would have accepted. The same program's next test, on the
same zygote, must still get the right answer (a signal sent to the zygote through
F_SETOWN/O_ASYNC, a ptrace stop or a killed process group would show there), and the
pool must never have restarted a worker or reported a sandbox fault.

(b) Workloads that must keep working: ``allowlist_workloads.py`` (the programs
``bench/trace_syscalls.py`` traced to derive the list: threads, numpy, deep recursion,
big allocations up to the limit, zoneinfo, scratch files, select/poll/epoll, asyncio,
sqlite3, signals to itself, ctypes...) each with its exact expected output.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import platform
import secrets
import sys
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from pairbench_async.core.types import Limits, Program, Test, TestResult, Verdict
from pairbench_async.sandbox.pool import SandboxConfig, SandboxPool

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from allowlist_workloads import CALL_SOURCE, CALL_TESTS, WORKLOADS  # noqa: E402

HAVE_NUMPY = importlib.util.find_spec("numpy") is not None
ARCH = platform.machine()
UID_BASE = 1_920_000_000 + 64 * secrets.randbelow(100_000)

# Raw system calls through ctypes. Each helper records `label=outcome`: "ok" when the
# call succeeded, else the errno's name (or the exception class).
PRELUDE = r'''
import ctypes, errno, fcntl, json, os, platform, resource, signal, socket, struct, sys
line = sys.stdin.readline().strip()
if line != "ATTACK":  # the job's next test, on the same zygote: is it still sane?
    print(int(line) * 2)
    raise SystemExit
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR = {
    "x86_64": dict(fcntl=72, ioctl=16, prctl=157, setsid=112, setpgid=109, io_setup=206,
                   io_submit=209, io_destroy=207, io_uring_setup=425, io_uring_enter=426,
                   io_uring_register=427, userfaultfd=323, process_vm_readv=310,
                   process_vm_writev=311, add_key=248, request_key=249, keyctl=250, ptrace=101,
                   personality=135, unshare=272, setns=308, mount=165, umount2=166,
                   pivot_root=155, chroot=161, fsopen=430, open_tree=428, bpf=321,
                   perf_event_open=298, memfd_create=319, memfd_secret=447, execve=59,
                   execveat=322, fork=57, clone=56, clone3=435, socket=41, socketpair=53,
                   kill=62, tgkill=234, tkill=200, rt_sigqueueinfo=129, pidfd_open=434,
                   pidfd_send_signal=424, prlimit64=302, fchmod=91, fchmodat=268,
                   fchmodat2=452, inotify_init1=294, fanotify_init=300, seccomp=317,
                   mmap=9, munmap=11, mseal=462),
    "aarch64": dict(fcntl=25, ioctl=29, prctl=167, setsid=157, setpgid=154, io_setup=0,
                    io_submit=2, io_destroy=1, io_uring_setup=425, io_uring_enter=426,
                    io_uring_register=427, userfaultfd=282, process_vm_readv=270,
                    process_vm_writev=271, add_key=217, request_key=218, keyctl=219,
                    ptrace=117, personality=92, unshare=97, setns=268, mount=40, umount2=39,
                    pivot_root=41, chroot=51, fsopen=430, open_tree=428, bpf=280,
                    perf_event_open=241, memfd_create=279, memfd_secret=447, execve=221,
                    execveat=281, clone=220, clone3=435, socket=198, socketpair=199, kill=129,
                    tgkill=131, tkill=130, rt_sigqueueinfo=138, pidfd_open=434,
                    pidfd_send_signal=424, prlimit64=261, fchmod=52, fchmodat=53,
                    fchmodat2=452, inotify_init1=26, fanotify_init=262, seccomp=277, mmap=222,
                    munmap=215, mseal=462),
}[platform.machine()]
out = {}


def name(e):
    return errno.errorcode.get(e, str(e))


def _arg(a):
    if a is None:
        return ctypes.c_void_p(None)
    if isinstance(a, int):
        return ctypes.c_long(a)
    if isinstance(a, bytes):
        return ctypes.c_char_p(a)
    return a


def sc(label, nr, *args):
    """A raw system call; nr is a name of NR or a number."""
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(NR[nr] if isinstance(nr, str) else nr),
                     *[_arg(a) for a in args])
    out[label] = "ok" if r >= 0 else name(ctypes.get_errno())
    return r


def py(label, fn, *args):
    try:
        r = fn(*args)
    except OSError as exc:
        out[label] = name(exc.errno) if exc.errno else type(exc).__name__
        return None
    except Exception as exc:
        out[label] = type(exc).__name__
        return None
    out[label] = "ok"
    return r


def done():
    print(json.dumps(out, sort_keys=True))
'''


@dataclass(frozen=True)
class Hostile:
    name: str
    body: str
    expect: dict[str, str]
    why: str = ""


def refused(errno_name: str, *labels: str) -> dict[str, str]:
    return dict.fromkeys(labels, errno_name)


HOSTILE = [
    Hostile(
        "fcntl_owner_signal_lease_notify_async",
        r"""
r, w = os.pipe()
a, b = socket.socketpair()
ppid = os.getppid()
py("setown_parent", fcntl.fcntl, w, fcntl.F_SETOWN, ppid)
py("setown_self", fcntl.fcntl, a.fileno(), fcntl.F_SETOWN, os.getpid())
sc("setown_raw", "fcntl", w, 8, ppid)
py("setsig", fcntl.fcntl, w, 10, signal.SIGKILL)  # F_SETSIG
owner = ctypes.create_string_buffer(struct.pack("ii", 1, ppid))  # F_OWNER_PID
sc("setown_ex", "fcntl", w, 15, owner)  # F_SETOWN_EX
pgrp = ctypes.create_string_buffer(struct.pack("ii", 2, os.getpgrp()))  # F_OWNER_PGRP
sc("setown_ex_pgrp", "fcntl", a.fileno(), 15, pgrp)
open("leased", "w").close()
fd = os.open("leased", os.O_RDONLY)
py("setlease", fcntl.fcntl, fd, 1024, fcntl.F_RDLCK)  # F_SETLEASE
dirfd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
py("notify", fcntl.fcntl, dirfd, 1026, -0x7FFFFFFE)  # F_NOTIFY: DN_MODIFY | DN_MULTISHOT
py("notify_raw", fcntl.fcntl, dirfd, 1026, 0x3f)
py("setfl_async", fcntl.fcntl, w, fcntl.F_SETFL, os.O_ASYNC)
py("setfl_async_nonblock", fcntl.fcntl, a.fileno(), fcntl.F_SETFL, os.O_ASYNC | os.O_NONBLOCK)
sc("setfl_async_raw", "fcntl", r, 4, 0o20000)
py("setpipe_sz", fcntl.fcntl, w, 1031, 1 << 20)  # F_SETPIPE_SZ
# what must keep working
py("setfl_nonblock", fcntl.fcntl, w, fcntl.F_SETFL, os.O_NONBLOCK)
py("getfd", fcntl.fcntl, w, fcntl.F_GETFD)
flags = [fcntl.fcntl(x, fcntl.F_GETFL) for x in (r, w, a.fileno(), b.fileno())]
out["async_bit"] = "SET" if any(f & os.O_ASYNC for f in flags) else "clear"
# the trigger: were the owner and O_ASYNC set, the kernel would now signal the zygote
os.write(w, b"x")
b.send(b"x")
done()
""",
        {**refused("EPERM", "setown_parent", "setown_self", "setown_raw", "setsig", "setown_ex",
                   "setown_ex_pgrp", "setlease", "notify", "notify_raw", "setfl_async",
                   "setfl_async_nonblock", "setfl_async_raw", "setpipe_sz"),
         "setfl_nonblock": "ok", "getfd": "ok", "async_bit": "clear"},
        "F_SETOWN(getppid())+F_SETSIG+O_ASYNC made the kernel signal the zygote",
    ),
    Hostile(
        "ioctl_owner_async_sti",
        r"""
r, w = os.pipe()
a, b = socket.socketpair()
ppid = ctypes.c_int(os.getppid())
one = ctypes.c_int(1)
sc("fiosetown", "ioctl", a.fileno(), 0x8901, ctypes.byref(ppid))
sc("siocspgrp", "ioctl", a.fileno(), 0x8902, ctypes.byref(ppid))
sc("fioasync_pipe", "ioctl", w, 0x5452, ctypes.byref(one))
sc("fioasync_sock", "ioctl", a.fileno(), 0x5452, ctypes.byref(one))
py("fioasync_py", fcntl.ioctl, w, 0x5452, struct.pack("i", 1))
sc("tiocsti_stdin", "ioctl", 0, 0x5412, b"x")
sc("tiocsti_stderr", "ioctl", 2, 0x5412, b"x")
py("tiocgwinsz", fcntl.ioctl, 1, 0x5413, b"\0" * 8)
sc("high_bits_fioasync", "ioctl", w, (1 << 32) | 0x5452, ctypes.byref(one))
out["isatty"] = str(os.isatty(0))
# what must keep working
sc("fionbio", "ioctl", w, 0x5421, ctypes.byref(one))
sc("fioclex", "ioctl", w, 0x5451, None)
flags = [fcntl.fcntl(x, fcntl.F_GETFL) for x in (r, w, a.fileno())]
out["async_bit"] = "SET" if any(f & os.O_ASYNC for f in flags) else "clear"
os.write(w, b"x")
b.send(b"x")
done()
""",
        {**refused("ENOTTY", "fiosetown", "siocspgrp", "fioasync_pipe", "fioasync_sock",
                   "fioasync_py", "tiocsti_stdin", "tiocsti_stderr", "tiocgwinsz",
                   "high_bits_fioasync"),
         "isatty": "False", "fionbio": "ok", "fioclex": "ok", "async_bit": "clear"},
        "ioctl(FIOSETOWN)/FIOASYNC made the kernel signal the zygote; TIOCSTI types into a tty",
    ),
    Hostile(
        "prctl_outside_the_short_list",
        r"""
sc("pdeathsig_clear", "prctl", 1, 0)
sc("pdeathsig_term", "prctl", 1, signal.SIGTERM)
sc("pdeathsig_high_bits", "prctl", 1, (1 << 32) | signal.SIGKILL)
sc("dumpable_on", "prctl", 4, 1)
sc("get_dumpable", "prctl", 3)
sc("set_name", "prctl", 15, b"pwned")
sc("subreaper", "prctl", 36, 1)
sc("ptracer_any", "prctl", 0x59616d61, -1)
sc("keepcaps", "prctl", 8, 1)
sc("ambient_raise", "prctl", 47, 2, 0)
sc("seccomp_strict", "prctl", 22, 1)
sc("set_mm", "prctl", 35, 8, 0)
sc("thp_disable", "prctl", 41, 1)
# what do_confine does, again: allowed, and harmless
sc("pdeathsig_kill", "prctl", 1, signal.SIGKILL)
sc("dumpable_off", "prctl", 4, 0)
sc("no_new_privs", "prctl", 38, 1, 0, 0, 0)
done()
""",
        {**refused("EPERM", "pdeathsig_clear", "pdeathsig_term", "dumpable_on", "set_name", "subreaper", "ptracer_any",
                   "keepcaps", "ambient_raise", "seccomp_strict", "set_mm", "thp_disable"),
         # the filter reads the low 32 bits (SIGKILL); the kernel reads all 64 and refuses
         "pdeathsig_high_bits": "EINVAL",
         "pdeathsig_kill": "ok", "dumpable_off": "ok", "no_new_privs": "ok",
         # a read, allowed so that a child can see it stays non-dumpable
         "get_dumpable": "ok"},
        "the short list is what do_confine does; PDEATHSIG can be set again, never cleared",
    ),
    Hostile(
        "sessions_and_process_groups",
        r"""
py("setsid", os.setsid)
py("setpgid", os.setpgid, 0, 0)
py("setpgrp", os.setpgrp)
sc("setsid_raw", "setsid")
sc("setpgid_raw", "setpgid", 0, os.getppid())
done()
""",
        refused("EPERM", "setsid", "setpgid", "setpgrp", "setsid_raw", "setpgid_raw"),
        "a new session or group leaves the worker's, which the pool kills as one",
    ),
    Hostile(
        "aio_and_io_uring",
        r"""
ctx = ctypes.c_ulong(0)
sc("io_setup", "io_setup", 1, ctypes.byref(ctx))
sc("io_setup_many", "io_setup", 65536, ctypes.byref(ctx))
sc("io_submit", "io_submit", ctx.value, 0, None)
sc("io_destroy", "io_destroy", ctx.value)
params = ctypes.create_string_buffer(120)
sc("io_uring_setup", "io_uring_setup", 1, params)
sc("io_uring_enter", "io_uring_enter", 0, 0, 0, 0, None, 0)
sc("io_uring_register", "io_uring_register", 0, 0, None, 0)
done()
""",
        refused("EPERM", "io_setup", "io_setup_many", "io_submit", "io_destroy",
                "io_uring_setup", "io_uring_enter", "io_uring_register"),
        "io_setup's contexts count against the host's fs.aio-max-nr",
    ),
    Hostile(
        "userfaultfd_and_other_memory",
        r"""
sc("userfaultfd", "userfaultfd", os.O_CLOEXEC)
sc("userfaultfd_user_only", "userfaultfd", os.O_CLOEXEC | 1)  # UFFD_USER_MODE_ONLY
buf = ctypes.create_string_buffer(64)
iov = (ctypes.c_void_p * 2)(ctypes.cast(buf, ctypes.c_void_p), 64)
sc("vm_readv_self", "process_vm_readv", os.getpid(), iov, 1, iov, 1, 0)
sc("vm_readv_parent", "process_vm_readv", os.getppid(), iov, 1, iov, 1, 0)
sc("vm_writev_self", "process_vm_writev", os.getpid(), iov, 1, iov, 1, 0)
sc("vm_writev_parent", "process_vm_writev", os.getppid(), iov, 1, iov, 1, 0)
sc("memfd_secret", "memfd_secret", 0)
py("memfd_create", os.memfd_create, "hoard")
sc("memfd_create_raw", "memfd_create", b"hoard", 0)
done()
""",
        refused("EPERM", "userfaultfd", "userfaultfd_user_only", "vm_readv_self",
                "vm_readv_parent", "vm_writev_self", "vm_writev_parent", "memfd_secret",
                "memfd_create", "memfd_create_raw"),
    ),
    Hostile(
        "keyrings",
        r"""
sc("add_key", "add_key", b"user", b"pb", b"secret", 6, -2)  # KEY_SPEC_PROCESS_KEYRING
sc("add_key_session", "add_key", b"user", b"pb", b"secret", 6, -3)
sc("keyctl_get_id", "keyctl", 0, -3, 1)  # KEYCTL_GET_KEYRING_ID, create
sc("keyctl_join", "keyctl", 1, b"pb-ring")  # KEYCTL_JOIN_SESSION_KEYRING
sc("request_key", "request_key", b"user", b"pb", None, -3)
done()
""",
        refused("EPERM", "add_key", "add_key_session", "keyctl_get_id", "keyctl_join",
                "request_key"),
        "keys live in the kernel, outside every limit, and can outlive the test",
    ),
    Hostile(
        "ptrace_and_personality",
        r"""
sc("traceme", "ptrace", 0, 0, 0, 0)
sc("attach_parent", "ptrace", 16, os.getppid(), 0, 0)
sc("seize_parent", "ptrace", 0x4206, os.getppid(), 0, 0)
sc("personality_query", "personality", 0xFFFFFFFF)
sc("personality_norandom", "personality", 0x0040000)
sc("personality_read_implies_exec", "personality", 0x0400000)
done()
""",
        refused("EPERM", "traceme", "attach_parent", "seize_parent", "personality_query",
                "personality_norandom", "personality_read_implies_exec"),
    ),
    Hostile(
        "namespaces_and_mounts",
        r"""
sc("unshare_user", "unshare", 0x10000000)
sc("unshare_net", "unshare", 0x40000000)
sc("unshare_files", "unshare", 0x400)  # CLONE_FILES: no namespace at all
sc("setns", "setns", 0, 0)
sc("mount_tmpfs", "mount", b"none", b".", b"tmpfs", 0, None)
sc("umount", "umount2", b"/", 2)
sc("pivot_root", "pivot_root", b".", b".")
sc("chroot", "chroot", b".")
sc("fsopen", "fsopen", b"tmpfs", 0)
sc("open_tree", "open_tree", -100, b"/", 1)
sc("clone_newuser", "clone", 0x10000000 | signal.SIGCHLD, 0, 0, 0, 0)
done()
""",
        refused("EPERM", "unshare_user", "unshare_net", "unshare_files", "setns", "mount_tmpfs",
                "umount", "pivot_root", "chroot", "fsopen", "open_tree", "clone_newuser"),
    ),
    Hostile(
        "bpf_and_perf",
        r"""
attr = ctypes.create_string_buffer(struct.pack("IIII", 2, 4, 4, 1) + b"\0" * 56)
sc("bpf_map_create", "bpf", 0, attr, 72)
sc("bpf_prog_load", "bpf", 5, ctypes.create_string_buffer(128), 128)
pattr = ctypes.create_string_buffer(struct.pack("IIQ", 1, 128, 0) + b"\0" * 112)
sc("perf_self_cpu_clock", "perf_event_open", pattr, 0, -1, -1, 0)
sc("perf_parent", "perf_event_open", pattr, os.getppid(), -1, -1, 0)
done()
""",
        refused("EPERM", "bpf_map_create", "bpf_prog_load", "perf_self_cpu_clock", "perf_parent"),
    ),
    Hostile(
        "new_processes_and_programs",
        r"""
import subprocess
pid = py("os_fork", os.fork)
if pid == 0:
    os._exit(0)
r = sc("clone_fork", "clone", signal.SIGCHLD, 0, 0, 0, 0)
if r == 0:
    os._exit(0)
r = sc("clone_parent", "clone", 0x8000 | signal.SIGCHLD, 0, 0, 0, 0)  # CLONE_PARENT
if r == 0:
    os._exit(0)
if "fork" in NR:
    r = sc("fork_raw", "fork")
    if r == 0:
        os._exit(0)
else:
    out["fork_raw"] = "EPERM"
sc("clone3", "clone3", ctypes.create_string_buffer(88), 88)
py("execv", os.execv, sys.executable, [sys.executable, "-c", "print('PWNED')"])
argv = (ctypes.c_char_p * 2)(sys.executable.encode(), None)
sc("execve_raw", "execve", sys.executable.encode(), argv, None)
sc("execveat_raw", "execveat", -100, sys.executable.encode(), argv, None, 0)
py("posix_spawn", os.posix_spawn, sys.executable, [sys.executable, "-c", "0"], {})
py("subprocess", subprocess.run, [sys.executable, "-c", "0"])
done()
""",
        {**refused("EPERM", "os_fork", "clone_fork", "clone_parent", "fork_raw", "execv",
                   "execve_raw", "execveat_raw", "posix_spawn", "subprocess"),
         "clone3": "ENOSYS"},
    ),
    Hostile(
        "sockets",
        r"""
py("inet", socket.socket, socket.AF_INET, socket.SOCK_STREAM)
py("inet6", socket.socket, socket.AF_INET6, socket.SOCK_DGRAM)
py("unix", socket.socket, socket.AF_UNIX, socket.SOCK_STREAM)
sc("netlink_raw", "socket", 16, 3, 0)  # AF_NETLINK, SOCK_RAW
sc("packet_raw", "socket", 17, 3, 0)
py("socketpair_inet", socket.socketpair, socket.AF_INET)
sv = (ctypes.c_int * 2)()
sc("socketpair_netlink", "socketpair", 16, 2, 0, sv)
sc("socketpair_vsock", "socketpair", 40, 1, 0, sv)
py("socketpair_unix", socket.socketpair)  # asyncio's self-pipe: must keep working
done()
""",
        {**refused("EPERM", "inet", "inet6", "unix", "netlink_raw", "packet_raw"),
         **refused("EAFNOSUPPORT", "socketpair_inet", "socketpair_netlink", "socketpair_vsock"),
         "socketpair_unix": "ok"},
    ),
    Hostile(
        "signals_to_others",
        r"""
import threading
ppid = os.getppid()
py("kill_parent", os.kill, ppid, 0)
py("kill_group", os.kill, 0, 0)
py("kill_everyone", os.kill, -1, 0)
py("killpg", os.killpg, os.getpgrp(), 0)
sc("kill_init", "kill", 1, 0)
sc("tgkill_parent", "tgkill", ppid, ppid, 0)
sc("tkill_parent", "tkill", ppid, 0)
sc("tkill_self", "tkill", os.getpid(), 0)
info = ctypes.create_string_buffer(128)
sc("sigqueueinfo_parent", "rt_sigqueueinfo", ppid, signal.SIGUSR1, info)
sc("pidfd_open_parent", "pidfd_open", ppid, 0)
sc("pidfd_send_signal", "pidfd_send_signal", 0, signal.SIGKILL, None, 0)
# itself: allowed
py("kill_self", os.kill, os.getpid(), 0)
py("pthread_kill_self", signal.pthread_kill, threading.get_ident(), 0)
done()
""",
        {**refused("EPERM", "kill_parent", "kill_group", "kill_everyone", "killpg", "kill_init",
                   "tgkill_parent", "tkill_parent", "tkill_self", "sigqueueinfo_parent",
                   "pidfd_open_parent", "pidfd_send_signal"),
         "kill_self": "ok", "pthread_kill_self": "ok"},
    ),
    Hostile(
        "limits_and_modes",
        r"""
py("prlimit_parent", resource.prlimit, os.getppid(), resource.RLIMIT_NOFILE)
py("prlimit_parent_set", resource.prlimit, os.getppid(), resource.RLIMIT_CPU, (1, 1))
py("prlimit_self_by_pid", resource.prlimit, os.getpid(), resource.RLIMIT_NOFILE)
py("prlimit_self", resource.prlimit, 0, resource.RLIMIT_NOFILE)
py("setrlimit", resource.setrlimit, resource.RLIMIT_CORE, (0, 0))
py("chmod", os.chmod, ".", 0o777)
py("fchmod", os.fchmod, 1, 0o777)
sc("fchmodat", "fchmodat", -100, b".", 0o777)
sc("fchmodat2", "fchmodat2", -100, b".", 0o777, 0)
done()
""",
        {**refused("EPERM", "prlimit_parent", "prlimit_parent_set", "prlimit_self_by_pid",
                   "chmod", "fchmod", "fchmodat", "fchmodat2"),
         "prlimit_self": "ok", "setrlimit": "ok"},
    ),
    Hostile(
        "watches_filters_and_unknown_numbers",
        r"""
sc("inotify_init1", "inotify_init1", 0)
sc("fanotify_init", "fanotify_init", 0, 0)
prog = ctypes.create_string_buffer(16)
sc("seccomp_tsync", "seccomp", 1, 1, prog)
sc("seccomp_listener", "seccomp", 1, 8, prog)
sc("seccomp_strict", "seccomp", 0, 0, None)
sc("seccomp_action_avail", "seccomp", 2, 0, ctypes.byref(ctypes.c_uint(0x7fff0000)))
sc("nr_1000", 1000)
if platform.machine() == "x86_64":
    sc("nr_x32_getpid", 0x40000000 | 39)
else:
    out["nr_x32_getpid"] = "EPERM"  # no x32 there
for nr in range(463, 472):
    sc(f"nr_{nr}", nr, 0, 0, 0, 0, 0)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
addr = libc.mmap(None, 4096, 3, 0x22, -1, 0)
sc("mseal", "mseal", addr, 4096, 0)
sc("munmap_after_mseal", "munmap", addr, 4096)
done()
""",
        {**refused("EPERM", "inotify_init1", "fanotify_init", "seccomp_tsync", "seccomp_listener",
                   "seccomp_strict", "seccomp_action_avail", "nr_1000", "nr_x32_getpid", "mseal",
                   *[f"nr_{nr}" for nr in range(463, 472)]),
         "munmap_after_mseal": "ok"},
        "mseal (462) is the newest call x86_64 and aarch64 share; 463-471 and 1000 are newer",
    ),
]


@dataclass
class Outcome:
    results: list[TestResult]
    restarts: int
    faults: int


@pytest.fixture(scope="module")
def battery() -> dict[str, object]:
    """Every hostile program, then every workload, through one pool of one worker (a
    later job lands where the last ran), each job followed by nothing in between."""

    async def run() -> dict[str, object]:
        out: dict[str, object] = {}
        async with SandboxPool(SandboxConfig(workers=1, uid_base=UID_BASE)) as pool:
            out["__report__"] = pool.confinement()
            for case in HOSTILE:
                before = pool.statistics()
                tests = [Test(id="attack", input="ATTACK\n", output="x\n"),
                         Test(id="sane", input="21\n", output="42\n")]
                results = await asyncio.wait_for(
                    pool.run(Program(source=PRELUDE + case.body), tests, Limits(time_limit=5)),
                    timeout=60)
                after = pool.statistics()
                out[case.name] = Outcome(results, after.worker_restarts - before.worker_restarts,
                                         after.sandbox_faults - before.sandbox_faults)
            for w in WORKLOADS:
                if "numpy" in w.tags and not HAVE_NUMPY:
                    continue
                before = pool.statistics()
                tests = [Test(id=str(i), input=i_, output=o) for i, (i_, o) in enumerate(w.tests)]
                results = await asyncio.wait_for(
                    pool.run(Program(source=w.source), tests,
                             Limits(time_limit=w.time_limit, memory_limit_mb=w.memory_mb)),
                    timeout=120)
                after = pool.statistics()
                out["workload:" + w.name] = Outcome(
                    results, after.worker_restarts - before.worker_restarts,
                    after.sandbox_faults - before.sandbox_faults)
            tests = [Test(id=str(i), args=t["args"], kwargs=t["kwargs"], expected=e)
                     for i, (t, e) in enumerate(CALL_TESTS)]
            out["call"] = await pool.run(
                Program(source=CALL_SOURCE, kind="call", entry_point="solve"), tests)
            out["__tree__"] = {c.pid for c in psutil.Process().children(recursive=True)}
        return out

    return asyncio.run(run())


def test_full_confinement_is_on(battery: dict[str, object]) -> None:
    report = battery["__report__"]
    assert isinstance(report, dict)
    assert report["seccomp"] and report["landlock"], report


@pytest.mark.parametrize("case", HOSTILE, ids=lambda c: c.name)
def test_refused_family(battery: dict[str, object], case: Hostile) -> None:
    outcome = battery[case.name]
    assert isinstance(outcome, Outcome)
    attack, sane = outcome.results
    assert attack.verdict is Verdict.WA, (attack.verdict, attack.error, attack.stderr)
    got = json.loads(attack.stdout)
    wrong = {k: (got.get(k), v) for k, v in case.expect.items() if got.get(k) != v}
    assert got == case.expect, wrong
    # the zygote that ran the attack still serves the next test, with the right answer
    assert sane.verdict is Verdict.AC and sane.stdout == "42\n", sane
    assert outcome.restarts == 0 and outcome.faults == 0, outcome


def _workload_ids() -> list[str]:
    return [w.name for w in WORKLOADS]


@pytest.mark.parametrize("name", _workload_ids())
def test_workload_keeps_working(battery: dict[str, object], name: str) -> None:
    (w,) = [w for w in WORKLOADS if w.name == name]
    if "numpy" in w.tags and not HAVE_NUMPY:
        pytest.skip("numpy is not installed")
    outcome = battery["workload:" + name]
    assert isinstance(outcome, Outcome)
    for r, (_, expected) in zip(outcome.results, w.tests, strict=True):
        assert r.verdict.value == w.verdict, (r.verdict, r.error, r.stderr[-2000:])
        if w.verdict == "AC":
            assert r.stdout == expected, (r.stdout[:2000], r.stderr[-2000:])
    assert outcome.restarts == 0 and outcome.faults == 0, outcome


def test_call_kind_keeps_working(battery: dict[str, object]) -> None:
    results = battery["call"]
    assert isinstance(results, list)
    assert [r.verdict for r in results] == [Verdict.AC] * len(CALL_TESTS), results
    assert [r.value for r in results] == [e for _, e in CALL_TESTS]


def test_nothing_outlives_the_battery(battery: dict[str, object]) -> None:
    tree = battery["__tree__"]
    assert isinstance(tree, set)
    alive = []
    for pid in tree:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
        except psutil.NoSuchProcess:
            pass
    assert not alive, alive
