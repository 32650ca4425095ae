"""Sandbox worker: a tiny, single-threaded process that runs untrusted programs.

Started by :mod:`pairbench_async.sandbox.pool` as ``python -S -s -P -B worker.py CONFIG``
with a scrubbed environment, it never imports the package (only the stdlib and
the native ``_confine`` module, loaded by path), never imports ``threading``
and keeps its memory small: forking costs ~50 us per MB of the forking
process. Process roles (see ``sandbox/confine.c``, "Theory of operation"):

* **W** (this process, long-lived) sets up namespaces (network, IPC, mount),
  a read-only view of the host with the writable and socket-bearing trees
  hidden, the scratch tmpfs, the Landlock ruleset and its seccomp filter once,
  then reads 5-byte frame headers from the pool. It never reads a payload: on
  LOAD it forks a zygote **Z**, which reads the program itself, so W never holds
  any program or test. W is the subreaper of everything below it, and on SIGTERM
  kills its zygote and reaps every descendant before it exits. It also watches the
  process that owns the pool through a pidfd: PDEATHSIG follows the parent
  *thread* and is easy to lose (a host such as a Ray actor may be SIGKILLed while
  W sits in a wait), so when the owner dies W kills its zygote, reaps, and exits
  on its own, wherever it is blocked.
* **Z** confines itself first (sandbox uid, no capabilities, Landlock,
  PDEATHSIG), then compiles the program once, pre-imports the allowlisted
  modules it names (``PREIMPORT`` and the allowed packages' top level) and forks
  one confined child **C** per TEST frame. Z wipes every buffer that held a
  test's input, output or report before the next fork, and empties the scratch
  directory after every test. Expected outputs never reach the worker at all:
  the pool compares.
* **C** calls ``_confine.confine`` (through ``serve``) and runs the program; its
  exit status and rusage come from ``wait4`` in Z, and its own report (exception
  class, return value, traced lines) travels on fd 3, which the program could
  write too: it can only misreport its own result, never another test's.

Frames (little endian): pool -> worker ``<BI`` (op, payload length) + payload;
worker -> pool ``<BI`` + payload. Payloads from the pool are trusted and use
marshal; the child's report is untrusted and stays opaque bytes here (the pool
decodes it as JSON).
"""

import array  # noqa: F401

# Modules programs commonly use, imported while the interpreter can still read
# its own library (a program importing 9 modules costs 6.5 ms/test otherwise).
import bisect  # noqa: F401
import builtins
import collections  # noqa: F401
import copy  # noqa: F401
import errno
import fcntl
import functools  # noqa: F401
import heapq  # noqa: F401
import itertools  # noqa: F401
import json
import marshal
import math  # noqa: F401
import operator  # noqa: F401
import os
import re  # noqa: F401
import resource
import select
import signal
import string  # noqa: F401
import struct
import sys
from opcode import EXTENDED_ARG, opmap

IMPORT_NAME = opmap["IMPORT_NAME"]

OP_LOAD, OP_TEST, OP_END, OP_QUIT = 1, 2, 3, 4
OP_READY, OP_LOADED, OP_RESULT, OP_ZDIED, OP_FATAL = 10, 11, 12, 13, 14

HEADER = struct.Struct("<BI")


STDERR_TAIL = 4096
COMPILE_CPU_SECONDS = 10  # compiling a program, in the zygote (see serve_program)
BIG_INT_BITS = 13_000  # < 4,000 decimal digits
CHANNEL_CAP = 16 * 1024 * 1024

# The only modules a zygote imports on a program's behalf (when its bytecode
# names them): standard-library modules whose import has no effect outside the
# interpreter, plus the top level of the packages the pool allows. Anything else
# the program imports, it imports itself, in its confined child. Not here on
# purpose: threading and what imports it (queue, logging, asyncio, subprocess,
# concurrent): its after-fork hook costs every later test ~2 ms.
PREIMPORT = frozenset(
    {
        "abc", "array", "ast", "base64", "binascii", "bisect", "calendar", "cmath",
        "collections", "collections.abc", "colorsys", "contextlib", "copy", "copyreg", "csv",
        "dataclasses", "datetime", "decimal", "difflib", "enum", "fnmatch", "fractions",
        "functools", "graphlib", "hashlib", "heapq", "hmac", "io", "itertools", "json",
        "keyword", "math", "numbers", "operator", "os", "os.path", "pathlib", "pprint",
        "random", "re", "reprlib", "secrets", "shlex", "statistics", "string", "struct", "sys",
        "textwrap", "time", "types", "typing", "unicodedata", "weakref", "zlib",
    }
)

# Host trees a program has no business seeing: writable by everyone, or holding
# other users' files and sockets (ssh-agent, D-Bus, X). Each is covered by an
# empty read-only tmpfs in the worker's mount namespace; only what the program
# needs (the interpreter's prefix, allowed packages, the scratch directory) is
# bound back.
HIDDEN = ("/tmp", "/var/tmp", "/dev/shm", "/run", "/var/run", "/home", "/root")


def read_exact(fd, view):
    """Fill ``view`` from ``fd``; False on end of file."""
    got, n = 0, len(view)
    while got < n:
        k = os.readv(fd, [view[got:]])
        if k == 0:
            return False
        got += k
    return True


def read_header(fd, hbuf):
    if not read_exact(fd, memoryview(hbuf)):
        return None
    return HEADER.unpack(hbuf)


def send(fd, op, *parts):
    payload_len = sum(len(p) for p in parts)
    data = [HEADER.pack(op, payload_len), *parts]
    total = HEADER.size + payload_len
    written = os.writev(fd, data)
    if written != total:  # short write on a full pipe: finish it plainly
        rest = b"".join(data)[written:]
        while rest:
            rest = rest[os.write(fd, rest):]


class Config:
    """Everything the pool told this worker at start (from argv[1], JSON)."""

    def __init__(self, raw):
        self.confine_path = raw["confine_path"]
        self.scratch = raw["scratch"]
        self.scratch_mb = raw["scratch_mb"]
        self.uid = raw["uid"]
        self.gid = raw["gid"]
        self.full = raw["confine"]
        self.read_paths = raw["read_paths"]
        self.extra_paths = raw["extra_paths"]
        self.allowed_packages = dict(raw["allowed_packages"])  # name -> origin file
        self.nproc = raw["nproc"]
        self.nofile = raw["nofile"]
        self.stack_mb = raw["stack_mb"]
        self.pool_pid = raw["pool_pid"]
        self.expose_paths = raw["expose_paths"]


class AllowedPackages:
    """A meta-path finder for the allowed packages, by their known files.

    Landlock lets a confined process read an allowed package's own directory but
    not list site-packages, where the default path finder would look for it.
    """

    def __init__(self, origins):
        self.origins = origins

    def find_spec(self, name, path=None, target=None):
        origin = self.origins.get(name)
        if origin is None:
            return None
        import importlib.util

        package = os.path.basename(origin).startswith("__init__.")
        locations = [os.path.dirname(origin)] if package else None
        return importlib.util.spec_from_file_location(
            name, origin, submodule_search_locations=locations)

    def invalidate_caches(self):
        pass


def load_confine(path):
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.ExtensionFileLoader("_confine", path)
    spec = importlib.util.spec_from_file_location("_confine", path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def setup(cfg, confine):
    """Enter namespaces, hide the host, mount the scratch tmpfs, build Landlock, attach seccomp.

    Returns a report of what is on; a missing layer is reported, not fatal: the
    pool decides whether to refuse.
    """
    report = {"pid": os.getpid(), "root": os.getuid() == 0}
    report.update(confine.probe())
    report.update(netns=False, ipcns=False, readonly=False, hidden=[], tmpfs=False,
                  landlock=False, seccomp=False, setuid=False)
    report["errors"] = errors = []
    ruleset = -1
    if not cfg.full:
        return report, ruleset
    try:
        confine.enter_namespaces(os.getuid() != 0)
        report["netns"] = report["ipcns"] = True
        try:  # first, so that every mount made below starts read-only too
            confine.make_readonly("/", True)
            report["readonly"] = True
        except OSError as exc:
            errors.append(f"read-only host view: {exc}")
        try:
            report["hidden"] = hide_host(confine, cfg)
        except OSError as exc:
            errors.append(f"hiding host directories: {exc}")
        try:
            confine.mount_tmpfs(cfg.scratch, cfg.scratch_mb, cfg.uid, cfg.gid, 0o700)
            report["tmpfs"] = True
        except OSError as exc:
            errors.append(f"scratch tmpfs: {exc}")
    except OSError as exc:
        errors.append(f"namespaces: {exc}")
    if cfg.uid >= 0:
        if not report["tmpfs"]:
            os.chown(cfg.scratch, cfg.uid, cfg.gid)  # the tmpfs is already owned so
        report["setuid"] = True
    try:
        ruleset, abi = confine.landlock_ruleset(
            cfg.read_paths, [cfg.scratch], ["/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"]
        )
        report["landlock"] = ruleset >= 0
        report["landlock_abi"] = abi
        if ruleset >= 0:
            ruleset = _high_fd(ruleset)
    except OSError as exc:
        errors.append(f"landlock: {exc}")
    try:
        report["seccomp_worker_instructions"] = confine.worker_filter()
        report["seccomp"] = True
    except OSError as exc:
        errors.append(f"seccomp: {exc}")
    return report, ruleset


def _outermost(paths):
    """``paths`` without those that lie beneath another one of them."""
    out = []
    for path in sorted(set(paths)):
        if not any(path == p or path.startswith(p + "/") for p in out):
            out.append(path)
    return out


def hide_host(confine, cfg):
    """Cover the HIDDEN trees with empty read-only tmpfs mounts; bind back what is needed.

    Needed: the interpreter's prefixes and the allowed packages' directories
    (lazy imports in the child), and the path down to the scratch directory.
    As root, also cover the topmost directory on the way to the interpreter
    that the sandbox uid cannot traverse (root's 0700 home on CI), so that the
    prefix bound back is reachable. Landlock still decides what may be read.
    """
    keep = _outermost(os.path.realpath(p) for p in cfg.expose_paths if os.path.isdir(p))
    covers = {os.path.realpath(d) for d in HIDDEN if os.path.isdir(d)}
    if cfg.uid >= 0:
        for path in keep:
            parts = path.rstrip("/").split("/")
            for i in range(2, len(parts)):
                ancestor = "/".join(parts[:i])
                if not os.stat(ancestor).st_mode & 0o001:
                    covers.add(ancestor)
                    break
    scratch = os.path.realpath(cfg.scratch)
    done = []
    for top in _outermost(covers):
        inner = [p for p in keep if p == top or p.startswith(top + "/")]
        holders = [(p, os.open(p, os.O_PATH | os.O_CLOEXEC)) for p in inner]
        try:
            confine.mount_tmpfs(top, 1, -1, -1, 0o755)
            for path, fd in holders:
                os.makedirs(path, mode=0o755, exist_ok=True)
                confine.bind_mount(f"/proc/self/fd/{fd}", path)
            if scratch.startswith(top + "/"):
                os.makedirs(scratch, mode=0o700, exist_ok=True)
            confine.make_readonly(top, True)
        finally:
            for _, fd in holders:
                os.close(fd)
        done.append(top)
    return done


def _high_fd(fd):
    """Move ``fd`` to >= 10, so that fds 0-3 of a child are always ours to set."""
    if fd >= 10:
        return fd
    new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return new


def module_names(code):
    """Names of the modules a compiled program imports, read from its bytecode.

    ``dis`` would do it too, but importing it grows every zygote (and so every
    fork) for a loop this small.
    """
    names = set()
    stack = [code]
    while stack:
        code = stack.pop()
        stack.extend(c for c in code.co_consts if hasattr(c, "co_code"))
        raw = code.co_code
        ext = 0
        for i in range(0, len(raw) - 1, 2):
            op, arg = raw[i], raw[i + 1] | ext
            if op == EXTENDED_ARG:
                ext = arg << 8
                continue
            ext = 0
            if op == IMPORT_NAME and arg < len(code.co_names):
                name = code.co_names[arg]
                if name:
                    names.add(name)
                    names.add(name.split(".")[0])
    return names


def preimport(names, allowed_packages):
    """Import what the program names, from PREIMPORT or an allowed package's top level.

    Runs in the zygote after it is confined (unprivileged uid, Landlock, seccomp),
    so even an allowed package's import-time code reaches nothing outside. Text
    an import printed is flushed to /dev/null, never into a test's output.
    """
    wanted = {n for n in names if n in PREIMPORT}
    wanted.update(n for n in names if n in allowed_packages)
    for name in sorted(wanted):
        if name in sys.modules:
            continue
        try:
            __import__(name)
        except BaseException:  # the child will raise the same error itself
            pass
    for name in ("stdin", "stdout", "stderr"):  # an import may have replaced them
        setattr(sys, name, getattr(sys, f"__{name}__"))
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass


def statm(fd=None):
    """(VmSize bytes, RSS kB) of this process; ``fd`` is /proc/self/statm opened
    before Landlock (a confined zygote can no longer open it)."""
    if fd is None:
        with open("/proc/self/statm", "rb") as f:
            raw = f.read()
    else:
        raw = os.pread(fd, 256, 0)
    size, rss = raw.split()[:2]
    page = os.sysconf("SC_PAGE_SIZE")
    return int(size) * page, int(rss) * (page // 1024)


# ----------------------------------------------------------------------------- child


def normalise(value, depth=0):
    """The JSON value of a returned object, the same way for program and reference.

    Tuples become lists, so a tuple equals its JSON list; values JSON cannot hold
    become tagged objects (``{"$float": "nan"}``, ``{"$set": [...]}``, ...).
    """
    if depth > 200:
        return {"$error": "nesting too deep"}
    if value is None or value is True or value is False:
        return value
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        value = int(value)
        # The evaluator's decoder (and its str/repr) stop at Python's 4,300-digit
        # limit: an integer beyond ~3,900 digits travels as its digits, compared
        # exactly there.
        return value if value.bit_length() <= BIG_INT_BITS else {"$int": str(value)}
    if isinstance(value, float):
        if value != value:
            return {"$float": "nan"}
        if value in (float("inf"), float("-inf")):
            return {"$float": "inf" if value > 0 else "-inf"}
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [normalise(v, depth + 1) for v in value]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if isinstance(k, str):
                key = str(k)
            elif k is None or isinstance(k, (bool, int, float)):
                key = json.dumps(k)
            else:
                key = repr(k)
            out[key] = normalise(v, depth + 1)
        return out
    if isinstance(value, (set, frozenset)):
        items = [normalise(v, depth + 1) for v in value]
        items.sort(key=lambda x: json.dumps(x, sort_keys=True))
        return {"$set": items}
    if isinstance(value, (bytes, bytearray)):
        return {"$bytes": bytes(value).hex()}
    if isinstance(value, complex):
        return {"$complex": [normalise(value.real), normalise(value.imag)]}
    kind = type(value).__name__
    if kind in ("generator", "map", "filter", "zip", "range", "list_iterator", "dict_keys",
                "dict_values", "dict_items", "reversed", "enumerate"):
        return {"$type": kind}
    return {"$type": kind, "$repr": repr(value)[:200]}


def format_exception(exc, filename, lines):
    """A short traceback of the program's own frames (no traceback module)."""
    out = ["Traceback (most recent call last):"]
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_filename == filename:
            ln = tb.tb_lineno
            out.append(f'  File "{filename}", line {ln}, in {code.co_name}')
            if 0 < ln <= len(lines):
                out.append("    " + lines[ln - 1].strip())
        tb = tb.tb_next
    try:
        msg = str(exc)
    except BaseException:
        msg = "<unprintable>"
    out.append(f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__)
    return "\n".join(out) + "\n"


def execute(prog):
    report = {}
    status = 0
    filename = prog.filename
    lines_hit = set()
    trace = None
    if prog.trace:
        add = lines_hit.add

        def local(frame, event, arg):
            if event == "line":
                add(frame.f_lineno)
            return local

        def trace(frame, event, arg):  # only the program's own code objects
            return local if frame.f_code.co_filename == filename else None

    try:
        g = {"__name__": "__main__" if prog.kind == "stdio" else "solution",
             "__builtins__": builtins}
        if prog.kind == "call":
            chunks = []
            while True:
                chunk = os.read(0, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
            args, kwargs = json.loads(b"".join(chunks))
        if trace is not None:
            sys.settrace(trace)
        try:
            exec(prog.code, g)
            if prog.kind == "call":
                fn = g.get(prog.entry)
                if not callable(fn):
                    raise NameError(f"entry point {prog.entry!r} is not defined")
                report["value"] = normalise(fn(*args, **kwargs))
        finally:
            if trace is not None:
                sys.settrace(None)
    except SystemExit as exc:
        code = exc.code
        if code is None:
            status = 0
        elif isinstance(code, int):
            status = code & 0xFF
        else:
            try:
                sys.stderr.write(f"{code}\n")
            except BaseException:
                pass
            status = 1
        if status:
            report["exc"] = "SystemExit"
    except BaseException as exc:
        report["exc"] = type(exc).__name__ if getattr(builtins, type(exc).__name__, None) is type(exc) else "ProgramDefinedException"
        # numpy's _ArrayMemoryError is a MemoryError; a refused mmap is an ENOMEM OSError
        if isinstance(exc, MemoryError) or (isinstance(exc, OSError) and exc.errno == errno.ENOMEM):
            report["mem"] = True
        status = 1
        try:
            sys.stderr.write(format_exception(exc, filename, prog.lines))
        except BaseException:
            pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException as exc:
            if "exc" not in report:
                report["exc"] = type(exc).__name__ if getattr(builtins, type(exc).__name__, None) is type(exc) else "ProgramDefinedException"
                status = status or 1
    if prog.trace:
        report["lines"] = sorted(lines_hit)
    try:
        data = json.dumps(report).encode()
    except BaseException:
        data = json.dumps({"exc": report.get("exc"), "unserialisable": True}).encode()
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(3, view):]
        except BaseException:
            break
    return status


# ----------------------------------------------------------------------------- zygote


class Program:
    def __init__(self, payload, zygote_pid):
        (source, kind, entry, trace, limits, filename) = marshal.loads(payload)
        self.source = source
        self.kind = kind
        self.entry = entry
        self.trace = trace
        self.time_limit, self.wall_limit, self.memory, self.output_limit = limits
        self.filename = filename
        self.lines = source.splitlines()
        self.zygote_pid = zygote_pid
        self.code = None


def serve_program(cfg, confine, ruleset, fin, fout, payload_len, worker_pid):
    """The zygote: confine itself, then read, compile and serve one program."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the worker's handler is not ours
    statm_fd = _high_fd(os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC))
    if cfg.full:
        # Before a byte of the program is read: from here on this process runs as
        # the sandbox uid, with no capability, under Landlock and the worker filter.
        confine.confine_zygote(cfg.uid, cfg.gid, ruleset, worker_pid)
    else:
        confine.set_pdeathsig(signal.SIGKILL)
    buf = bytearray(max(payload_len, 1 << 16))
    if not read_exact(fin, memoryview(buf)[:payload_len]):
        os._exit(0)
    prog = Program(bytes(buf[:payload_len]), os.getpid())
    buf[:payload_len] = bytes(payload_len)
    # Until the first test, nothing this zygote runs may start a process or a
    # thread (an allowed package's import-time code could leave a daemon behind):
    # a soft RLIMIT_NPROC of 0 refuses every fork and clone of an unprivileged uid.
    nproc = resource.getrlimit(resource.RLIMIT_NPROC)
    if cfg.full:
        resource.setrlimit(resource.RLIMIT_NPROC, (0, nproc[1]))
    try:
        # Compiling is the program's work too, so it runs under the program's
        # memory budget (a source of literals can take gigabytes); the soft limit
        # is lifted again before the allowed packages are imported.
        # Its CPU time is bounded too (Python 3.11 parses some f-strings in
        # quadratic time): past the budget the zygote dies of SIGXCPU, which the
        # pool reports as the program's TLE.
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        cpu = resource.getrlimit(resource.RLIMIT_CPU)
        if cfg.full:
            resource.setrlimit(resource.RLIMIT_AS, (statm(statm_fd)[0] + prog.memory, hard))
            budget = int(resource.getrusage(resource.RUSAGE_SELF).ru_utime) + COMPILE_CPU_SECONDS
            resource.setrlimit(resource.RLIMIT_CPU, (budget, cpu[1]))
        try:
            prog.code = compile(prog.source, prog.filename, "exec", dont_inherit=True)
        finally:
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
            resource.setrlimit(resource.RLIMIT_CPU, cpu)
    except BaseException as exc:  # SyntaxError, ValueError (NUL bytes), RecursionError...
        text = f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")[:4000]
        send(fout, OP_LOADED, b"\x01", text)
        prog.code = None
    else:
        preimport(module_names(prog.code), cfg.allowed_packages)
        resource.setrlimit(resource.RLIMIT_NPROC, nproc)
        send(fout, OP_LOADED, b"\x00")

    if prog.code is None:  # compile error: the pool sends no tests, only END
        hbuf = bytearray(HEADER.size)
        while True:
            header = read_header(fin, hbuf)
            if header is None or header[0] in (OP_END, OP_QUIT):
                os._exit(0)
            if header[1]:
                read_exact(fin, memoryview(bytearray(header[1])))

    hs_r, hs_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
    hs_r, hs_w = _high_fd(hs_r), _high_fd(hs_w)
    os.set_blocking(hs_w, True)

    cpu_soft = max(1, int(-(-prog.time_limit // 1)))
    full = cfg.full
    vm_bytes, base_kb = statm(statm_fd)
    limits = (
        cpu_soft if full else 0,
        cpu_soft + 1 if full else 0,
        vm_bytes + prog.memory if full else 0,
        prog.output_limit + 1 if full else 0,
        cfg.nofile if full else 0,
        cfg.nproc if full and cfg.uid >= 0 else 0,
        cfg.stack_mb * 1024 * 1024 if full else 0,
    )
    wall_ms = min(max(1, int(prog.wall_limit * 1000)), 2**31 - 1)  # a C int; ~24 days
    # uid and ruleset -1: the zygote already runs as the sandbox uid inside the
    # Landlock domain, which the child inherits; nesting the same ruleset again
    # would copy its ~200 rules on every fork (~12 % of a trivial test's cost)
    what = confine.serve(fin, fout, cfg.scratch, limits, -1, -1, -1,
                         hs_w, hs_r, full, wall_ms, prog.output_limit + 1, STDERR_TAIL,
                         CHANNEL_CAP, base_kb, cfg.scratch)
    if what == 1:  # the confined child
        status = 70
        try:
            status = execute(prog)
        finally:
            os._exit(status)
    os._exit(0)


# ----------------------------------------------------------------------------- worker


class _Stop(BaseException):
    """SIGTERM from the pool: stop the zygote, reap everything, exit."""


def _on_sigterm(signum, frame):
    raise _Stop


def reap_all():
    """Wait for every child, and for the orphans reparented to us (we are their
    subreaper), until none is left."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def watch_owner(pid):
    """A pidfd of the pool's process, readable once it has died; -1 where the
    kernel has none (PDEATHSIG alone then)."""
    try:
        return _high_fd(os.pidfd_open(pid))
    except (AttributeError, OSError):
        return -1


def wait_for(fd, owner):
    """Block until ``fd`` (a pipe, or a pidfd) is readable; False if the owner died first."""
    if owner < 0:
        return True
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    poller.register(owner, select.POLLIN)
    while True:
        ready = poller.poll()
        if ready:
            return all(f != owner for f, _ in ready)


def wait_for_zygote(zygote, owner):
    """Block until the zygote ends; False if the pool's process died first."""
    if owner < 0:
        return True
    try:
        zfd = os.pidfd_open(zygote)
    except OSError:
        return True  # no fd to spare: a plain wait, as without a pidfd
    try:
        return wait_for(zfd, owner)
    finally:
        os.close(zfd)


def main():
    cfg = Config(json.loads(sys.argv[1]))
    sys.set_int_max_str_digits(0)
    sys.path.extend(cfg.extra_paths)
    sys.meta_path.insert(0, AllowedPackages(cfg.allowed_packages))
    # Protocol pipes move to high fds; 0-3 become /dev/null so that no pipe,
    # memfd or ruleset ever lands on a number a child overwrites.
    fin = _high_fd(os.dup(0))
    fout = _high_fd(os.dup(1))
    null = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 3):
        if fd != null:
            os.dup2(null, fd)
    if null > 3:
        os.close(null)
    os.set_inheritable(fin, False)
    os.set_inheritable(fout, False)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the pool shuts us down, not ^C
    signal.signal(signal.SIGTERM, _on_sigterm)

    confine = load_confine(cfg.confine_path)
    confine.set_pdeathsig(signal.SIGKILL)
    if os.getppid() != cfg.pool_pid:
        os._exit(0)
    owner = watch_owner(cfg.pool_pid)  # opened while the pid is surely our parent's
    try:
        # a test child whose zygote dies is reparented here, not to init
        confine.set_subreaper()
        report, ruleset = setup(cfg, confine)
        # again after the set-up: a credential change (entering a user namespace)
        # would have cleared it
        confine.set_pdeathsig(signal.SIGKILL)
        if os.getppid() != cfg.pool_pid:
            os._exit(0)
    except BaseException as exc:
        send(fout, OP_FATAL, f"worker set-up failed: {type(exc).__name__}: {exc}".encode())
        os._exit(2)
    report["rss_kb"] = statm()[1]
    report["modules"] = len(sys.modules)
    report["threading"] = "threading" in sys.modules
    send(fout, OP_READY, json.dumps(report).encode())
    me = os.getpid()

    zygote = 0
    try:
        hbuf = bytearray(HEADER.size)
        while True:
            if not wait_for(fin, owner):
                break  # the pool's process died: nobody will read what we run
            header = read_header(fin, hbuf)
            if header is None or header[0] == OP_QUIT:
                break
            op, n = header
            if op != OP_LOAD:
                send(fout, OP_FATAL, f"worker: unexpected op {op}".encode())
                os._exit(3)
            zygote = os.fork()
            if zygote == 0:
                status = 4
                try:
                    if owner >= 0:
                        os.close(owner)  # W watches; the zygote has no use for it
                    serve_program(cfg, confine, ruleset, fin, fout, n, me)
                    status = 0
                except BaseException as exc:
                    try:
                        send(fout, OP_FATAL, f"zygote: {type(exc).__name__}: {exc}".encode())
                    except BaseException:
                        pass
                finally:
                    os._exit(status)
            if not wait_for_zygote(zygote, owner):
                break  # the pool's process died mid-program: kill the zygote, reap, exit
            _, status = os.waitpid(zygote, 0)
            zygote = 0
            reap_all()  # the test child of a zygote that died mid-test
            if status != 0:
                send(fout, OP_ZDIED, struct.pack("<i", status))
    except _Stop:
        pass
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if zygote:
        try:
            os.kill(zygote, signal.SIGKILL)
        except ProcessLookupError:
            pass
    reap_all()
    os._exit(0)


if __name__ == "__main__":
    main()
