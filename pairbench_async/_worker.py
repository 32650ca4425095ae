"""Sandbox worker: a tiny, single-threaded process that runs untrusted programs.

Started by :mod:`pairbench_async._pool` as ``python -S -s -P -B _worker.py CONFIG``
with a scrubbed environment, it never imports the package (only the stdlib and
the native ``_confine`` module, loaded by path), never imports ``threading``
and keeps its memory small: forking costs ~50 us per MB of the forking
process. Process roles (see ``sandbox/confine.c``, "Theory of operation"):

* **W** (this process, long-lived) sets up namespaces, the scratch tmpfs, the
  Landlock ruleset and its seccomp filter once, then reads 5-byte frame headers
  from the pool. It never reads a payload: on LOAD it forks a zygote **Z**,
  which reads the program itself, so W never holds any program or test.
* **Z** compiles the program once, imports the stdlib modules it names (after
  confinement imports may be impossible: the interpreter can live under a 0700
  home), and forks one confined child **C** per TEST frame. A test's input is
  read into a reused buffer, copied into the child's stdin memfd and zeroed, so
  no child holds another test's input. Expected outputs never reach the worker
  at all: the pool compares.
* **C** calls ``_confine.confine`` and runs the program; its exit status and
  rusage come from ``wait4`` in Z, and its own report (exception class, return
  value, traced lines) travels on fd 3, which the program could write too: it
  can only misreport its own result, never another test's.

Frames (little endian): pool -> worker ``<BI`` (op, payload length) + payload;
worker -> pool ``<BI`` + payload. Payloads from the pool are trusted and use
marshal; the child's report is untrusted and stays opaque bytes here (the pool
decodes it as JSON).
"""

import builtins
import fcntl
import json
import marshal
import os
import signal
import struct
import sys

# Modules programs commonly use, imported while the interpreter can still read
# its own library (a program importing 9 modules costs 6.5 ms/test otherwise).
import bisect  # noqa: F401
import collections  # noqa: F401
import functools  # noqa: F401
import heapq  # noqa: F401
import itertools  # noqa: F401
import math  # noqa: F401
import operator  # noqa: F401
import re  # noqa: F401
import string  # noqa: F401
import copy  # noqa: F401
import array  # noqa: F401
from opcode import EXTENDED_ARG, opmap

IMPORT_NAME = opmap["IMPORT_NAME"]

OP_LOAD, OP_TEST, OP_END, OP_QUIT = 1, 2, 3, 4
OP_READY, OP_LOADED, OP_RESULT, OP_ZDIED, OP_FATAL = 10, 11, 12, 13, 14

HEADER = struct.Struct("<BI")


STDERR_TAIL = 4096
CHANNEL_CAP = 16 * 1024 * 1024

# Stdlib modules that must never be imported on a program's behalf: they open
# browsers or GUIs, print on import, or run installers.
NEVER_IMPORT = frozenset(
    {
        "antigravity", "this", "idlelib", "tkinter", "turtle", "turtledemo", "pydoc",
        "webbrowser", "ensurepip", "venv", "__hello__", "__phello__", "test", "lib2to3",
        "pydoc_data", "msilib", "winreg", "winsound", "_winapi", "nt",
    }
)


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
        self.allowed_packages = frozenset(raw["allowed_packages"])
        self.nproc = raw["nproc"]
        self.nofile = raw["nofile"]
        self.stack_mb = raw["stack_mb"]
        self.pool_pid = raw["pool_pid"]
        self.expose_paths = raw["expose_paths"]


def load_confine(path):
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.ExtensionFileLoader("_confine", path)
    spec = importlib.util.spec_from_file_location("_confine", path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def setup(cfg, confine):
    """Enter namespaces, mount the scratch tmpfs, build Landlock, attach seccomp.

    Returns a report of what is on; a missing layer is reported, not fatal: the
    pool decides whether to refuse.
    """
    report = {"pid": os.getpid(), "root": os.getuid() == 0}
    report.update(confine.probe())
    report.update(netns=False, tmpfs=False, landlock=False, seccomp=False, setuid=False)
    report["errors"] = errors = []
    ruleset = -1
    if not cfg.full:
        return report, ruleset
    try:
        confine.enter_namespaces(os.getuid() != 0)
        report["netns"] = True
        try:
            confine.mount_tmpfs(cfg.scratch, cfg.scratch_mb, cfg.uid, cfg.gid, 0o700)
            report["tmpfs"] = True
        except OSError as exc:
            errors.append(f"scratch tmpfs: {exc}")
        if cfg.uid >= 0:
            try:
                report["exposed"] = expose(confine, cfg.expose_paths)
            except OSError as exc:
                errors.append(f"exposing the interpreter: {exc}")
    except OSError as exc:
        errors.append(f"namespaces: {exc}")
    if cfg.uid >= 0:
        os.chown(cfg.scratch, cfg.uid, cfg.gid)  # already so on the tmpfs; needed without it
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


def expose(confine, paths):
    """Make the interpreter's files reachable by an unprivileged child.

    When Python lives under a directory others cannot traverse (root's 0700
    home on CI), an import the zygote did not do beforehand fails in the child.
    In this worker's mount namespace only, cover the topmost such directory
    with an empty tmpfs (mode 0755) and bind the needed trees back, read-only,
    at their own paths. Landlock still decides what the child may read.
    """
    groups = {}
    for path in sorted(set(paths)):
        if not os.path.isdir(path):
            continue
        parts = path.rstrip("/").split("/")
        top = None
        for i in range(2, len(parts)):
            ancestor = "/".join(parts[:i])
            if not os.stat(ancestor).st_mode & 0o001:
                top = ancestor
                break
        if top is not None and not any(path.startswith(p + "/") for p in groups.get(top, [])):
            groups.setdefault(top, []).append(path)
    done = []
    for top, inner in groups.items():
        holders = [os.open(p, os.O_PATH | os.O_CLOEXEC) for p in inner]
        confine.mount_tmpfs(top, 1, -1, -1, 0o755)
        for path, fd in zip(inner, holders):
            os.makedirs(path, mode=0o755, exist_ok=True)
            confine.bind_mount(f"/proc/self/fd/{fd}", path)
            os.close(fd)
            done.append(path)
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
    stdlib = sys.stdlib_module_names
    for name in sorted(names):
        top = name.split(".")[0]
        if not top or top in NEVER_IMPORT:
            continue
        if top not in stdlib and top not in allowed_packages:
            continue
        if name in sys.modules:
            continue
        try:
            __import__(name)
        except BaseException:  # the child will raise the same error itself
            pass


def rss_kb():
    with open("/proc/self/statm", "rb") as f:
        return int(f.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)


def vm_size():
    with open("/proc/self/statm", "rb") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


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
        return int(value)
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
        report["exc"] = type(exc).__name__
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
                report["exc"] = type(exc).__name__
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


def serve_program(cfg, confine, ruleset, fin, fout, payload_len):
    buf = bytearray(max(payload_len, 1 << 16))
    if not read_exact(fin, memoryview(buf)[:payload_len]):
        os._exit(0)
    prog = Program(bytes(buf[:payload_len]), os.getpid())
    buf[:payload_len] = bytes(payload_len)
    try:
        prog.code = compile(prog.source, prog.filename, "exec", dont_inherit=True)
    except BaseException as exc:  # SyntaxError, ValueError (NUL bytes), RecursionError...
        text = f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")[:4000]
        send(fout, OP_LOADED, b"\x01", text)
        prog.code = None
    else:
        preimport(module_names(prog.code), cfg.allowed_packages)
        send(fout, OP_LOADED, b"\x00")

    if prog.code is None:  # compile error: the pool sends no tests, only END
        hbuf = bytearray(HEADER.size)
        while True:
            header = read_header(fin, hbuf)
            if header is None or header[0] == OP_END:
                os._exit(0)
            if header[1]:
                read_exact(fin, memoryview(bytearray(header[1])))

    memfd = os.memfd_create
    fds = tuple(_high_fd(memfd(name, os.MFD_CLOEXEC))
                for name in ("pb-stdin", "pb-stdout", "pb-stderr", "pb-channel"))
    hs_r, hs_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
    hs_r, hs_w = _high_fd(hs_r), _high_fd(hs_w)
    os.set_blocking(hs_w, True)

    cpu_soft = max(1, int(-(-prog.time_limit // 1)))
    full = cfg.full
    limits = (
        cpu_soft if full else 0,
        cpu_soft + 1 if full else 0,
        vm_size() + prog.memory if full else 0,
        prog.output_limit + 1 if full else 0,
        cfg.nofile if full else 0,
        cfg.nproc if full and cfg.uid >= 0 else 0,
        cfg.stack_mb * 1024 * 1024 if full else 0,
    )
    wall_ms = max(1, int(prog.wall_limit * 1000))
    base_kb = rss_kb()
    while True:
        what = confine.serve(fin, fout, fds, cfg.scratch, limits, cfg.uid, cfg.gid, ruleset,
                             hs_w, hs_r, full, wall_ms, prog.output_limit + 1, STDERR_TAIL,
                             CHANNEL_CAP, base_kb, cfg.scratch)
        if what == 1:  # the confined child
            status = 70
            try:
                status = execute(prog)
            finally:
                os._exit(status)
        if what == 0:
            os._exit(0)
        clean(cfg.scratch)


def clean(path):
    """Empty the scratch directory (files left by the last test)."""
    for entry in os.scandir(path):
        try:
            if entry.is_dir(follow_symlinks=False):
                clean(entry.path)
                os.rmdir(entry.path)
            else:
                os.unlink(entry.path)
        except FileNotFoundError:
            pass


# ----------------------------------------------------------------------------- worker


def main():
    cfg = Config(json.loads(sys.argv[1]))
    sys.set_int_max_str_digits(0)
    sys.path.extend(cfg.extra_paths)
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

    confine = load_confine(cfg.confine_path)
    confine.set_pdeathsig(signal.SIGKILL)
    if os.getppid() != cfg.pool_pid:
        os._exit(0)
    try:
        report, ruleset = setup(cfg, confine)
    except BaseException as exc:
        send(fout, OP_FATAL, f"worker set-up failed: {type(exc).__name__}: {exc}".encode())
        os._exit(2)
    report["rss_kb"] = rss_kb()
    report["modules"] = len(sys.modules)
    report["threading"] = "threading" in sys.modules
    send(fout, OP_READY, json.dumps(report).encode())

    hbuf = bytearray(HEADER.size)
    while True:
        header = read_header(fin, hbuf)
        if header is None or header[0] == OP_QUIT:
            os._exit(0)
        op, n = header
        if op != OP_LOAD:
            send(fout, OP_FATAL, f"worker: unexpected op {op}".encode())
            os._exit(3)
        pid = os.fork()
        if pid == 0:
            status = 4
            try:
                confine.set_pdeathsig(signal.SIGKILL)
                serve_program(cfg, confine, ruleset, fin, fout, n)
                status = 0
            except BaseException as exc:
                try:
                    send(fout, OP_FATAL, f"zygote: {type(exc).__name__}: {exc}".encode())
                except BaseException:
                    pass
            finally:
                os._exit(status)
        _, status = os.waitpid(pid, 0)
        if status != 0:
            send(fout, OP_ZDIED, struct.pack("<i", status))


if __name__ == "__main__":
    main()
