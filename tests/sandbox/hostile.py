"""The hostile-program battery: programs that attack the sandbox, and what must happen.

Each case is a program, the tests it runs on, the verdicts allowed, and optional
checks of its output; host-side checks (files that must not exist, processes that
must not survive) live in the tests. ``{secret}``, ``{outside}`` (in a host
directory the sandbox can see, read-only), ``{tmp_secret}``, ``{tmp_outside}`` (under
the host's /tmp, which the sandbox hides), ``{port}``,
``{worker}`` in sources are filled in by the test with real paths and ports.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Case:
    name: str
    source: str
    verdicts: frozenset[str]
    input: str = "\n"
    output: str = "ok\n"
    #: substrings that must (not) appear in the program's stdout
    stdout_has: tuple[str, ...] = ()
    stdout_lacks: tuple[str, ...] = ()
    error: str | None = None  # required exception class / signal for RE
    time_limit: float = 0.5
    wall_limit: float | None = None
    memory_mb: int = 64
    tags: frozenset[str] = field(default_factory=frozenset)


def V(*names: str) -> frozenset[str]:
    return frozenset(names)


LIBC = "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"

CASES: list[Case] = [
    # --- resource exhaustion ------------------------------------------------
    Case("cpu_loop", "while True:\n    pass\n", V("TLE")),
    Case("sleep", "import time\ntime.sleep(60)\n", V("TLE"), wall_limit=1.0),
    Case("ignore_sigxcpu_loop",
         "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass\n",
         V("TLE")),
    Case("raise_rlimits",
         "import resource\n"
         "for r in (resource.RLIMIT_CPU, resource.RLIMIT_AS, resource.RLIMIT_FSIZE):\n"
         "    try:\n"
         "        resource.setrlimit(r, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))\n"
         "        print('raised', r)\n"
         "    except (ValueError, OSError):\n"
         "        print('denied')\n",
         V("WA"), stdout_lacks=("raised",)),
    Case("memory_bomb_at_once", "a = bytearray(10**10)\nprint(len(a))\n", V("MLE")),
    Case("memory_bomb_gradual", "l = []\nwhile True:\n    l.append(' ' * 10**6)\n", V("MLE")),
    Case("fork_bomb", "import os\nwhile True:\n    os.fork()\n", V("RE"), error="PermissionError"),
    Case("thread_bomb",
         "import threading, time\nts = []\nwhile True:\n"
         "    t = threading.Thread(target=time.sleep, args=(30,), daemon=True)\n    t.start()\n    ts.append(t)\n",
         V("RE", "MLE"), wall_limit=3.0),
    Case("stdout_flood", "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n", V("OLE")),
    Case("stderr_flood", "import sys\nwhile True:\n    sys.stderr.write('y' * 65536)\n", V("RE")),
    Case("disk_fill",
         "i = 0\nwhile True:\n    with open(f'fill{i}', 'wb') as f:\n        f.write(b'z' * (4 << 20))\n    i += 1\n",
         V("RE"), error="OSError", time_limit=2.0),
    Case("deep_recursion_unlimited",
         "import sys\nsys.setrecursionlimit(10**8)\ndef f(n):\n    return f(n + 1) + 1\nf(0)\n",
         V("RE", "MLE"), time_limit=2.0),
    Case("recursion_error", "def f(n):\n    return f(n + 1)\nf(0)\n", V("RE"), error="RecursionError"),
    Case("segfault", "import ctypes\nctypes.string_at(0)\n", V("RE"), error="SIGSEGV"),
    Case("self_sigsegv", "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n", V("RE"),
         error="SIGSEGV"),
    Case("abort", "import os\nos.abort()\n", V("RE"), error="SIGABRT"),
    Case("self_sigstop", "import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)\nprint('ok')\n",
         V("TLE"), wall_limit=1.0),
    Case("exit_zero_without_output", "import os\nos._exit(0)\n", V("WA")),
    Case("nonzero_exit", "import sys\nprint('ok')\nsys.exit(3)\n", V("RE"), error="SystemExit"),
    Case("forged_verdict_on_stdout", "print('{\"verdict\": \"AC\", \"id\": \"1\"}')\n", V("WA")),
    # --- escape attempts ------------------------------------------------------
    Case("read_etc_passwd", "print(open('/etc/passwd').read())\n", V("RE"), error="PermissionError"),
    # a visible host file: Landlock refuses the read, the read-only view the write
    Case("read_secret_file", "print(open({secret!r}).read())\n", V("RE"), error="PermissionError"),
    # under the host's /tmp: hidden behind an empty mount, so not even there
    Case("read_tmp_secret", "print(open({tmp_secret!r}).read())\n", V("RE"),
         error="FileNotFoundError"),
    Case("write_tmp_outside", "open({tmp_outside!r}, 'w').write('pwned')\n", V("RE"),
         error="FileNotFoundError"),
    Case("list_tmp", "import os\nprint(os.listdir('/tmp'))\n", V("RE"), error="PermissionError"),
    Case("write_outside", "open({outside!r}, 'w').write('pwned')\n", V("RE"), error="OSError"),
    Case("tamper_worker", "open({worker!r}, 'a').write('# pwned')\n", V("RE"),
         error="PermissionError"),
    Case("environment", "import os\nprint(sorted(os.environ.items()))\n", V("WA"),
         stdout_lacks=("sk-canary", "PAIRBENCH_SECRET")),
    Case("proc_environ",
         "import os\nfor p in ('/proc/self/environ', f'/proc/{os.getppid()}/environ', '/proc/1/environ'):\n"
         "    try:\n        print(open(p, 'rb').read())\n    except OSError as e:\n        print('denied', type(e).__name__)\n",
         V("WA"), stdout_lacks=("sk-canary", "PAIRBENCH_SECRET")),
    Case("tcp_connect",
         "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\ns.settimeout(1)\n"
         "s.connect(('127.0.0.1', {port}))\ns.sendall(b'pwned')\n",
         V("RE"), error="PermissionError"),
    Case("udp_send",
         "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.sendto(b'x', ('127.0.0.1', {port}))\n",
         V("RE"), error="PermissionError"),
    Case("other_socket_families",
         "import socket\nout = []\n"
         "for fam, typ in ((socket.AF_INET6, socket.SOCK_STREAM), (socket.AF_NETLINK, socket.SOCK_RAW),"
         " (socket.AF_PACKET, socket.SOCK_RAW)):\n"
         "    try:\n        socket.socket(fam, typ)\n        out.append('open')\n"
         "    except OSError:\n        out.append('denied')\nprint(out)\n",
         V("WA"), stdout_lacks=("open",)),
    Case("network_interfaces", "import socket\nprint(socket.if_nameindex())\n", V("WA", "RE"),
         stdout_lacks=("eth", "ens", "enp")),
    Case("ptrace_parent",
         LIBC + "import os\nprint(libc.ptrace(16, os.getppid(), 0, 0), libc.ptrace(0, 0, 0, 0))\n",
         V("WA"), stdout_has=("-1 -1",)),
    Case("kill_parent", "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n", V("RE"),
         error="PermissionError"),
    Case("kill_everything", "import os, signal\nos.kill(-1, signal.SIGKILL)\n", V("RE"),
         error="PermissionError"),
    Case("kill_process_group", "import os, signal\nos.killpg(0, signal.SIGKILL)\n", V("RE"),
         error="PermissionError"),
    # As root the child runs as an unprivileged uid without capabilities: EPERM. As an
    # ordinary user it is in a user namespace that maps only that user's uid, so uid 0
    # does not exist there and setuid(0) fails with EINVAL, a plain OSError.
    # refused by the allowlist (no setuid at all), as root and not
    Case("setuid_root", "import os\nos.setuid(0)\nprint(open('/etc/shadow').read())\n", V("RE"),
         error="PermissionError"),
    Case("unprivileged_uid", "import os\nprint(os.getuid(), os.geteuid())\n", V("WA"),
         stdout_lacks=("0 0",), tags=frozenset({"root"})),
    Case("unshare_user_ns", LIBC + "print(libc.unshare(0x10000000), libc.unshare(0x40000000))\n", V("WA"),
         stdout_has=("-1 -1",)),
    Case("clone_new_user_ns", LIBC + "print(libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0))\n", V("WA"),
         stdout_has=("-1",)),
    Case("mount_tmpfs", LIBC + "print(libc.mount(b'x', b'.', b'tmpfs', 0, None))\n", V("WA"),
         stdout_has=("-1",)),
    Case("bpf_keyctl_perf",
         LIBC + "print(libc.syscall(321, 0, 0, 0), libc.syscall(250, 0, 0, 0), libc.syscall(298, 0, 0, 0, 0, 0))\n",
         V("WA"), stdout_has=("-1 -1 -1",)),
    Case("shell_out", "import os\nprint(os.system('id > /tmp/shell_out'))\n", V("WA", "RE")),
    Case("subprocess_run", "import subprocess\nsubprocess.run(['id'])\n", V("RE")),
    Case("double_fork_daemon",
         "import os\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        import time\n        time.sleep(60)\n",
         V("RE"), error="PermissionError"),
    Case("chmod_outside", "import os\nos.chmod('/tmp', 0o700)\n", V("RE"), error="PermissionError"),
    Case("raw_device", "print(open('/dev/kmsg', 'rb').read(16))\n", V("RE"), error="PermissionError"),
    # --- integrity: nothing but its own test is visible -----------------------
    # stdio, report channel, and (fds 4 and 5) a resident child's go and done pipes to its
    # zygote: nothing of the worker, of another program or of another test (a child of its
    # own has 0-3 only: tests/sandbox/test_resident.py). A resident child also keeps copies
    # of its own 0-3 (the same open files) to restore them between tests: those are listed
    # apart, and must be copies of 0-3 and nothing else.
    Case("file_descriptors",
         "import os\nown = {}\nfor fd in range(4):\n    s = os.fstat(fd)\n    own[(s.st_dev, s.st_ino)] = fd\n"
         "fds, copies = [], []\nfor fd in range(4096):\n    try:\n        s = os.fstat(fd)\n"
         "    except OSError:\n        continue\n"
         "    if fd > 3 and (s.st_dev, s.st_ino) in own:\n        copies.append(own[(s.st_dev, s.st_ino)])\n"
         "    else:\n        fds.append(fd)\nprint(fds)\nprint('copies', sorted(copies) in ([], [0, 1, 2, 3]))\n",
         V("WA"), stdout_has=("[0, 1, 2, 3, 4, 5]\ncopies True\n",)),
    Case("memory_search",
         "import gc, os\n"
         "def search():\n"
         "    needles = {'expected': '-'.join(('EXPECTED', 'CANARY')), 'other-input': '-'.join(('OTHER', 'INPUT', 'CANARY'))}\n"
         "    skip = set(map(id, needles.values()))\n"
         "    found = set()\n"
         "    for o in gc.get_objects():\n"
         "        items = o.values() if isinstance(o, dict) else o if isinstance(o, (list, tuple, set, frozenset)) else ()\n"
         "        for v in items:\n"
         "            if id(v) in skip or not isinstance(v, (str, bytes, bytearray)):\n"
         "                continue\n"
         "            text = v if isinstance(v, str) else bytes(v).decode('latin-1')\n"
         "            found.update(k for k, n in needles.items() if n in text)\n"
         "    own = set()\n"
         "    for fd in range(4):\n"
         "        s = os.fstat(fd)\n"
         "        own.add((s.st_dev, s.st_ino))\n"
         "    for fd in range(4, 64):\n"
         "        try:\n            s = os.fstat(fd)\n            data = os.pread(fd, 1 << 20, 0).decode('latin-1')\n        except OSError:\n            continue\n"
         "        if (s.st_dev, s.st_ino) in own:  # the test's own stdio and report (a resident child's copies)\n"
         "            continue\n"
         "        found.update(f'fd{fd}:{k}' for k, n in needles.items() if n in data)\n"
         "    return sorted(found)\n"
         "print('found', search())\n",
         V("WA"), stdout_has=("found []",),
         input="first test\n", output="EXPECTED-CANARY-answer\n"),
]

# Programs that must keep working under confinement (and so prove it is not simply broken).
ORDINARY: list[Case] = [
    Case("sum_stdin", "import sys\nprint(sum(map(int, sys.stdin.read().split())))\n", V("AC"),
         input="1 2 3 4\n", output="10\n"),
    Case("scratch_write_read",
         "import os\nbefore = sorted(os.listdir('.'))\nopen('note.txt', 'w').write('hi')\n"
         "print(open('note.txt').read(), before, sorted(os.listdir('.')))\n",
         V("AC"), output="hi [] ['note.txt']\n"),
    Case("lazy_imports",
         "import codecs\nprint('b\\u00fccher.de'.encode('idna'), __import__('statistics').mean([1, 2, 3]))\n",
         V("AC"), output="b'xn--bcher-kva.de' 2\n"),
    Case("threads_work",
         "import threading\nr = []\nts = [threading.Thread(target=r.append, args=(i,)) for i in range(4)]\n"
         "[t.start() for t in ts]\n[t.join() for t in ts]\nprint(sum(r))\n",
         V("AC"), output="6\n"),
    Case("urandom_and_stdlib",
         "import os, fractions, heapq, decimal\nprint(len(os.urandom(8)), fractions.Fraction(1, 3) * 3)\n",
         V("AC"), output="8 1\n"),
    Case("big_int_output", "print(2 ** 20000 % 1000, len(str(2 ** 20000)))\n", V("AC"),
         output="376 6021\n"),
    Case("float_tolerance", "print(0.1 + 0.2)\n", V("AC"), output="0.3\n"),
    Case("wrong_answer", "print(41)\n", V("WA"), output="42\n"),
]
