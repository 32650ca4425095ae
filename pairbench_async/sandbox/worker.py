"""Sandbox worker: a tiny, single-threaded process that runs untrusted programs.

Started by :mod:`pairbench_async.sandbox.process` as ``python -S -s -P -B -X utf8 -c
<this file's text> CONFIG`` (so no code object names the package's path)
with a scrubbed environment, it never imports the package (only the stdlib and
the native module ``native``, loaded by path), never imports ``threading``
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
  one confined child **C** per TEST frame (or one resident child that runs the program's
  tests in turn: ``serve_resident``). Z wipes every buffer that held a
  test's input, output or report before the next fork, and empties the scratch
  directory after every test. Expected outputs never reach the worker at all:
  the pool compares.
* **C** is confined by ``native.serve`` (do_confine in the C file) and runs the program; its
  exit status and rusage come from ``wait4`` in Z, and its own report (exception
  class, return value, traced lines) travels on fd 3, which the program could
  write too: it can only misreport its own result, never another test's.

Frames (little endian): pool -> worker ``<BI`` (op, payload length) + payload;
worker -> pool ``<BI`` + payload. Payloads from the pool are trusted and use
marshal; the child's report is untrusted and stays opaque bytes here (the pool
decodes it as JSON).
"""

import _io
import _json
import _signal
import _thread
import array  # noqa: F401
import atexit

# Modules programs commonly use, imported while the interpreter can still read
# its own library (a program importing 9 modules costs 6.5 ms/test otherwise).
import bisect  # noqa: F401
import builtins
import collections  # noqa: F401
import copy  # noqa: F401
import errno
import fcntl
import functools
import gc
import heapq  # noqa: F401
import io
import itertools
import json
import marshal
import math  # noqa: F401
import operator
import os
import re  # noqa: F401
import resource
import select
import signal
import string  # noqa: F401
import struct
import sys
import types
from opcode import EXTENDED_ARG, opmap
from time import CLOCK_PROCESS_CPUTIME_ID as _PROCESS_CLOCK
from time import CLOCK_THREAD_CPUTIME_ID as _CPU_CLOCK
from time import clock_gettime as _clock_gettime

IMPORT_NAME = opmap["IMPORT_NAME"]

# What the harness reads of a program's objects without running any code of the program's: a
# class's MRO and dict (no metaclass's property), a module's dict (no module subclass's
# __getattribute__), whether one class derives from another (type.__subclasscheck__ is
# PyType_IsSubtype: no metaclass's __subclasscheck__ nor __bases__), a bound method's object,
# and an identity key (``id`` raises the ``builtins.id`` audit event, which a program's audit
# hook sees; object.__hash__ is the same pointer, unaudited)
_MRO = type.__dict__["__mro__"].__get__
_CLASS_DICT = type.__dict__["__dict__"].__get__
_MODULE_DICT = types.ModuleType.__dict__["__dict__"].__get__
_SUBTYPE = type.__subclasscheck__
_METHOD_SELF = types.MethodType.__dict__["__self__"].__get__
_BUILTIN_SELF = types.BuiltinMethodType.__dict__["__self__"].__get__
_IDENTITY = object.__hash__
_PARTIAL = functools.partial
#: python takes an integer exit code through PyLong_AsLong: outside its range, status 255
_C_LONG = (-(1 << 63), 1 << 63)

# The calls a resident child's harness makes between tests (Interpreter.restore, serve_resident),
# taken at the worker's start, before any program runs: a test may rebind a module's attribute
# (``os.chdir = f``, ``signal.setitimer = f``), and a call read from the module at the restore
# then ran the program's code on the next test's streams.
_MODULE = types.ModuleType
_FILE_IO, _BUFFERED_READER, _BUFFERED_WRITER = _io.FileIO, _io.BufferedReader, _io.BufferedWriter
_TEXT_IO = _io.TextIOWrapper
_settrace, _setprofile = sys.settrace, sys.setprofile
_gettrace, _getprofile = sys.gettrace, sys.getprofile
_setrecursionlimit, _set_int_max_str_digits = sys.setrecursionlimit, sys.set_int_max_str_digits
_setswitchinterval = sys.setswitchinterval
_set_origin_depth = sys.set_coroutine_origin_tracking_depth
_get_asyncgen_hooks, _set_asyncgen_hooks = sys.get_asyncgen_hooks, sys.set_asyncgen_hooks
_gc_enable, _gc_set_threshold = gc.enable, gc.set_threshold
_gc_get_debug, _gc_set_debug = gc.get_debug, gc.set_debug
_gc_collect, _gc_freeze = gc.collect, gc.freeze
#: (``_signal``'s own functions: ``signal.getsignal`` is a Python wrapper that makes an enum,
#: ~0.4 us a call)
_getsignal, _setsignal, _setitimer = _signal.getsignal, _signal.signal, _signal.setitimer
_set_wakeup_fd, _sigmask = _signal.set_wakeup_fd, _signal.pthread_sigmask
_ITIMERS = (_signal.ITIMER_REAL, _signal.ITIMER_VIRTUAL, _signal.ITIMER_PROF)
_SIG_SETMASK, _SIG_UNBLOCK = _signal.SIG_SETMASK, _signal.SIG_UNBLOCK
_dup, _dup2, _close, _chdir, _umask = os.dup, os.dup2, os.close, os.chdir, os.umask
_os_read, _os_write = os.read, os.write
_getrusage, _RUSAGE_SELF = resource.getrusage, resource.RUSAGE_SELF
_thread_count, _get_ident, _LOCK = _thread._count, _thread.get_ident, _thread.LockType
_islice, _chain = itertools.islice, itertools.chain
_is_not, _urandom, _from_bytes = operator.is_not, os.urandom, int.from_bytes
# ... and the calls that read each test's arguments and write its report: a test that rebound
# ``json.dumps`` or ``os.write`` wrote every later test's returned value in a resident child (AC
# where a child per test is WA). JSON through the C encoder and scanner themselves (``json.dumps``
# reads its module's globals, ``_default_encoder`` among them, at each call).
_fstat, _ftruncate, _lseek, _SEEK_SET = os.fstat, os.ftruncate, os.lseek, os.SEEK_SET
_atexit_count, _atexit_run, _atexit_clear = atexit._ncallbacks, atexit._run_exitfuncs, atexit._clear


def _no_default(value):
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


#: json.dumps's output (separators, ensure_ascii, allow_nan), without and with sort_keys
_ENCODE = _json.make_encoder(None, _no_default, _json.encode_basestring_ascii, None,
                             ": ", ", ", False, False, True)
_ENCODE_SORTED = _json.make_encoder(None, _no_default, _json.encode_basestring_ascii, None,
                                    ": ", ", ", True, False, True)
_SCAN = json.decoder.JSONDecoder().scan_once  # (the C scanner, its hooks taken at its making)
_join = "".join


def _dumps(value, encode=_ENCODE):
    return _join(encode(value, 0))


def _loads(data):
    """json.loads of UTF-8 bytes the pool wrote (no leading whitespace)."""
    text = data.decode("utf-8")
    value, end = _SCAN(text, 0)
    if text[end:].strip():
        raise ValueError(f"extra data at {end}")
    return value

#: The wire protocol (frames, their ops and formats) is declared once, in sandbox/confine.c,
#: and taken from the native module as soon as main() has loaded it (adopt_wire).
OP_LOAD = OP_TEST = OP_END = OP_QUIT = OP_READY = OP_LOADED = OP_RESULT = OP_ZDIED = OP_FATAL = -1
HEADER = ZDIED = None
SIG_INTERRUPT = 0


def adopt_wire(native):
    """The ops and frame formats of the loaded native module, as this script's names."""
    global OP_LOAD, OP_TEST, OP_END, OP_QUIT, OP_READY, OP_LOADED, OP_RESULT, OP_ZDIED, OP_FATAL, HEADER, ZDIED
    global SIG_INTERRUPT
    OP_LOAD, OP_TEST, OP_END, OP_QUIT = native.OP_LOAD, native.OP_TEST, native.OP_END, native.OP_QUIT
    OP_READY, OP_LOADED, OP_RESULT = native.OP_READY, native.OP_LOADED, native.OP_RESULT
    OP_ZDIED, OP_FATAL = native.OP_ZDIED, native.OP_FATAL
    HEADER = struct.Struct(native.FRAME_HEADER_FORMAT)
    ZDIED = struct.Struct(native.ZDIED_FORMAT)
    SIG_INTERRUPT = native.SIG_INTERRUPT


STDERR_TAIL = 4096
#: Compiled once by the worker before its first zygote (main): common syntax.
WARM_UP = (
    "import sys\nfrom typing import List\n"
    "class A:\n    x: int = 1\n    def f(self, a, *b, c=2, **d):\n        return self.x\n"
    "def g(n: List[int]) -> int:\n    s = [i * 2 for i in n if i]\n    t = {i: j for i, j in zip(s, s)}\n"
    "    try:\n        with open('x') as f:\n            pass\n    except (OSError, ValueError) as e:\n"
    "        raise RuntimeError(f'{e!r} {n[0]:>3}') from e\n    finally:\n        pass\n"
    "    while n and not t:\n        n = n[1:]\n    return sum(x for x in s) + (lambda y: y)(1) if s else -1\n"
)
COMPILE_CPU_SECONDS = 10  # compiling a program, in the zygote (see serve_program)
BIG_INT_BITS = 13_000  # < 4,000 decimal digits
#: What a returned iterator or view is called in its ``{"$type": ...}`` (no JSON value);
#: any other ``$type`` carries a class name, which the program chooses (results.py)
OPAQUE_KINDS = frozenset({"generator", "map", "filter", "zip", "range", "list_iterator",
                          "dict_keys", "dict_values", "dict_items", "reversed", "enumerate"})
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
        self.resident = raw["resident"]
        self.pool_pid = raw["pool_pid"]
        self.expose_paths = raw["expose_paths"]
        #: {"procs": [paths], and a path for each role of CGROUP_FILES} or None
        self.cgroup = raw.get("cgroup")


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
    """The native module, loaded through a descriptor: the interpreter's records of it
    (its spec, the extension cache, the dynamic loader's list) name /proc/self/fd/N,
    never the package's path, which a program could otherwise find in memory."""
    import importlib.machinery
    import importlib.util

    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        alias = f"/proc/self/fd/{fd}"
        loader = importlib.machinery.ExtensionFileLoader("native", alias)
        spec = importlib.util.spec_from_file_location("native", alias, loader=loader)
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    finally:
        os.close(fd)
    return module


DEVICES = ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random")
#: Inside the minimal root: Landlock's write rule is on BOX (a plain directory of the
#: read-only root), each program's fresh scratch tmpfs is mounted at SCRATCH beneath
#: it (a rule on a mount's own root would not survive the remount).
BOX = "/sandbox"
SCRATCH = BOX + "/scratch"


def enter_namespaces(cfg, confine, report):
    """W, before it forks its init: fresh network, IPC, mount and PID namespaces (and a
    user namespace when not root). Returns False when they could not be made."""
    report.update(netns=False, ipcns=False, pidns=False)
    if not cfg.full:
        return False
    try:
        confine.enter_namespaces(os.getuid() != 0, True)
    except OSError as exc:
        report["errors"].append(f"namespaces: {exc}")
        return False
    report["netns"] = report["ipcns"] = report["pidns"] = True
    return True


def setup(cfg, confine, report, namespaces):
    """I (PID 1 of the worker's namespace): the minimal root and its fresh /proc, the
    scratch tmpfs, the Landlock ruleset and the worker's seccomp filter.

    Returns the Landlock ruleset fd (-1 without one). A missing layer is reported,
    not fatal: the pool decides whether to refuse. Without a minimal root (no mount
    namespace, or pivoting failed) the older view is kept: the host read-only with
    its writable trees hidden.
    """
    report.update(readonly=False, minimal_root=False, hidden=[], tmpfs=False,
                  landlock=False, seccomp=False, setuid=False)
    errors = report["errors"]
    ruleset = -1
    if not cfg.full:
        return ruleset
    if namespaces:
        try:
            build_root(confine, cfg)
            cfg.scratch = SCRATCH
            report["minimal_root"] = report["readonly"] = True
        except OSError as exc:
            errors.append(f"minimal root: {exc}")
        if report["minimal_root"]:
            try:
                mount_scratch(confine, cfg)
                report["tmpfs"] = True
            except OSError as exc:
                errors.append(f"scratch tmpfs: {exc}")
        else:
            fallback_view(confine, cfg, report)
    for name in ("HOME", "TMPDIR"):
        os.environ[name] = cfg.scratch
    if cfg.uid >= 0:
        if not report["tmpfs"]:
            os.chown(cfg.scratch, cfg.uid, cfg.gid)  # the tmpfs is already owned so
        report["setuid"] = True
    try:
        writable = BOX if report["minimal_root"] else cfg.scratch
        ruleset, abi = confine.landlock_ruleset(cfg.read_paths, [writable], list(DEVICES))
        report["landlock"] = ruleset >= 0
        report["landlock_abi"] = abi
        if ruleset >= 0:
            ruleset = _high_fd(ruleset)
    except OSError as exc:
        errors.append(f"landlock: {exc}")
    try:
        report["seccomp_worker_instructions"] = confine.worker_filter(bool(namespaces))
        report["seccomp"] = True
    except OSError as exc:
        errors.append(f"seccomp: {exc}")
    return ruleset


def fallback_view(confine, cfg, report):
    """The host, read-only, with its writable trees hidden: where no root could be built."""
    errors = report["errors"]
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


def _place(root, path, made):
    """Recreate ``path`` inside ``root`` as the host has it: directories as
    directories, symbolic links as the same links (then followed), the last
    component as an empty directory or file to mount on. Returns the host's real
    path, which is then bound at the same place in ``root``. Each directory made is
    added to ``made`` with the host's times, which it gets back once filled: the
    import system trusts its cached listing of a directory whose mtime is unchanged
    (Landlock lets no process list the standard library's directory itself)."""
    parts = [p for p in path.split("/") if p]
    real, hops = "", 0
    while parts:
        name = parts.pop(0)
        if name == ".":
            continue
        if name == "..":
            real = real.rsplit("/", 1)[0]
            continue
        here = real + "/" + name
        st = os.lstat(here)
        inside = root + here
        if (st.st_mode & 0o170000) == 0o120000:  # a symbolic link
            hops += 1
            if hops > 40:
                raise OSError(errno.ELOOP, "too many links", path)
            target = os.readlink(here)
            if not os.path.lexists(inside):
                os.symlink(target, inside)
            if target.startswith("/"):
                real = ""
            parts = [p for p in target.split("/") if p] + parts
            continue
        if parts or (st.st_mode & 0o170000) == 0o040000:
            if not os.path.lexists(inside):
                os.mkdir(inside, 0o755)
                made[inside] = (st.st_atime_ns, st.st_mtime_ns)
        elif not os.path.lexists(inside):
            os.close(os.open(inside, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644))
        real = here
    return real or "/"


def build_root(confine, cfg):
    """Pivot into a root that holds only the read allowlist, the device files, a
    fresh /proc of this PID namespace and the scratch directory (isolate and nsjail
    build theirs so): a host path outside it can be neither opened nor stat'ed.

    The root is a small read-only tmpfs mounted on the worker's own host directory;
    each allowed path is bound read-only at its own path (symbolic links on the way
    recreated), so the interpreter, its libraries and Landlock's rules see the same
    paths as on the host. /proc is mounted before the pivot: in a user namespace the
    kernel allows a new proc only while a full one is visible.
    """
    root = cfg.scratch
    confine.mount_tmpfs(root, 8, -1, -1, 0o755)
    binds, made = {}, {}
    for path in cfg.read_paths:
        if os.path.lexists(path):
            binds[_place(root, path, made)] = False
    for path in DEVICES:
        if os.path.exists(path):
            binds[_place(root, path, made)] = True
    for path in ("/proc", BOX, SCRATCH):
        os.mkdir(root + path, 0o755 if path != SCRATCH else 0o700)
    for inside in sorted(made, key=len, reverse=True):  # deepest first: filling changes mtime
        os.utime(inside, ns=made[inside], follow_symlinks=False)
    done = []
    for path in sorted(binds):  # a path beneath one already bound is bound with it
        if any(path.startswith(d + "/") for d in done):
            continue
        confine.bind_mount(path, root + path, binds[path])
        done.append(path)
    confine.mount_proc(root + "/proc")
    confine.make_readonly(root, False)
    confine.pivot(root)


def mount_scratch(confine, cfg, fresh=False):
    """The scratch tmpfs, owned by the sandbox uid; ``fresh`` replaces the previous
    program's, so that nothing of it (inode numbers, times) reaches the next."""
    if fresh:
        confine.unmount(SCRATCH)
    confine.mount_tmpfs(SCRATCH, cfg.scratch_mb, cfg.uid, cfg.gid, 0o700)


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


def _site_builtins():
    """``exit`` and ``quit``, which ``site`` adds to the builtins and ``-S`` (the worker's
    flags) leaves out: ``print(ans); exit()`` is a common ending of a program, and must
    behave as under ``python``, not raise NameError."""
    if not hasattr(builtins, "exit"):
        import _sitebuiltins
        builtins.exit = _sitebuiltins.Quitter("exit", "Ctrl-D (i.e. EOF)")
        builtins.quit = _sitebuiltins.Quitter("quit", "Ctrl-D (i.e. EOF)")


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
                key = _dumps(k)
            else:
                key = repr(k)
            out[key] = normalise(v, depth + 1)
        return out
    if isinstance(value, (set, frozenset)):
        items = [normalise(v, depth + 1) for v in value]
        items.sort(key=lambda x: _dumps(x, _ENCODE_SORTED))
        return {"$set": items}
    if isinstance(value, (bytes, bytearray)):
        return {"$bytes": bytes(value).hex()}
    if isinstance(value, complex):
        return {"$complex": [normalise(value.real), normalise(value.imag)]}
    kind = type(value).__name__
    if kind in OPAQUE_KINDS:
        return {"$type": kind}
    return {"$type": kind, "$repr": repr(value)[:200]}


def exception_name(exc):
    """The class name of ``exc`` when the class is that builtins object, else one fixed
    word: a program names its own classes (core/failures.py maps the report again)."""
    name = type(exc).__name__
    return name if getattr(builtins, name, None) is type(exc) else "ProgramDefinedException"


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


def _work(report, start, start_all):
    work = _clock_gettime(_CPU_CLOCK) - start
    work_all = _clock_gettime(_PROCESS_CLOCK) - start_all
    report["work_us"] = int((work_all if work_all > work + 0.01 else work) * 1e6)


class CpuLimit(BaseException):
    """The zygote's SIG_INTERRUPT at a resident child's test's CPU limit (confine.c,
    "Interrupt"), raised in the program's code: the test is a CPU timeout already, and
    the child unwinds it and takes the next test instead of being killed."""


class Gate:
    """SIG_INTERRUPT's handler in a resident child: raises :class:`CpuLimit` while the
    program's own code runs (``armed``), and only then; in the harness's code (reading
    the input, encoding the value, writing the report) the signal is let pass, and the
    test, a timeout either way, ends as it would have. ``fired``: it raised in this test;
    ``late``: it came while the harness ran (the report says so, and the pool runs such a
    test again alone: its limit was spent on the harness's work, e.g. encoding a large
    wrong value that the loop rule's allowance, sized by the expected one, did not cover)."""

    __slots__ = ("armed", "fired", "late")

    def __init__(self) -> None:
        self.armed = self.fired = self.late = False

    def __call__(self, signum: int, frame: object) -> None:
        if self.armed:
            self.armed = False
            self.fired = True
            raise CpuLimit
        self.late = True

    def install(self) -> None:
        """This handler for SIG_INTERRUPT, unblocked (a test may have changed either)."""
        if _getsignal(SIG_INTERRUPT) is not self:
            _setsignal(SIG_INTERRUPT, self)
        _sigmask(_SIG_UNBLOCK, (SIG_INTERRUPT,))


def execute(prog, gate=None, state=None):
    # The program's own CPU time (``work_us``, what a reference's ``ref_ms`` is): its
    # module and its call, not the harness around them (the test's fixed cost, and the
    # decoding of a call's arguments and encoding of its value, which the loop rule
    # allows for by their size: jobs.py). The thread's CPU clock is exact (with
    # RLIMIT_CPU set, the process's moves only at scheduler ticks); the process's is
    # taken instead when other threads add more than 10 ms.
    start = start_all = 0.0
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
        # the program's module, as python runs a file: a module object registered in
        # sys.modules under its name, with ``__file__`` (``pickle`` finds ``__main__.P`` there;
        # the resident restore puts the start's ``__main__`` back)
        module = _MODULE("__main__" if prog.kind == "stdio" else "solution")
        g = _MODULE_DICT(module)
        g["__file__"] = filename
        g["__builtins__"] = builtins
        sys.modules[module.__name__] = module
        if state is not None:
            # a resident child's: the namespace outlives the test, as in a child of its own
            # that ends by os._exit (no finalizer of a stdin program's runs after its report;
            # a namespace with a function in it is a cycle, frozen anyway). Not the decoded
            # arguments nor the returned value: held, their memory (a 16 MB argument) was
            # room the kernel could take back under a later test's limit (an MLE alone passed)
            state.held.append(module)
        if prog.kind == "call":
            # fd 0 is the test's sealed memory file: one read of its size (a read of
            # 1 MiB at a time would map and unmap a 1 MiB buffer twice per test)
            size = _fstat(0).st_size
            data = _os_read(0, size) if size else b""
            if not size or len(data) != size:  # not a memory file after all: read to EOF
                chunks = [data]
                while chunk := _os_read(0, 1 << 16):
                    chunks.append(chunk)
                data = b"".join(chunks)
            args, kwargs = _loads(data)
        if trace is not None:
            _settrace(trace)
        start_all = _clock_gettime(_PROCESS_CLOCK)
        start = _clock_gettime(_CPU_CLOCK)
        try:
            if gate is not None:
                gate.armed = True
            try:
                exec(prog.code, g)
            finally:
                if prog.kind == "stdio":
                    _program_exit(g, state)
            if prog.kind == "call":
                fn = g.get(prog.entry)
                if not callable(fn):
                    raise NameError(f"entry point {prog.entry!r} is not defined")
                value = fn(*args, **kwargs)
                if gate is not None:
                    gate.armed = False
                _work(report, start, start_all)
                report["value"] = normalise(value)
        finally:
            if gate is not None:
                gate.armed = False
            if "work_us" not in report:
                _work(report, start, start_all)
            if trace is not None:
                _settrace(None)
    except SystemExit as exc:
        code = exc.code
        if code is None:
            status = 0
        elif _SUBTYPE(int, type(code)):
            code = int.__index__(code)  # (an exact int: no operator of a subclass's runs)
            status = code & 0xFF if _C_LONG[0] <= code < _C_LONG[1] else 255
        else:
            try:
                sys.stderr.write(f"{code}\n")
            except BaseException:
                pass
            status = 1
        if status:
            report["exc"] = "SystemExit"
    except CpuLimit:
        # the zygote's interrupt at the CPU limit: a timeout, which the zygote reports
        # (FLAG_CPU_TIMEOUT); the child is whole and takes the next test
        report["exc"] = "CpuLimit"
    except BaseException as exc:
        report["exc"] = exception_name(exc)
        # numpy's _ArrayMemoryError is a MemoryError; a refused mmap is an ENOMEM OSError
        if isinstance(exc, MemoryError) or (isinstance(exc, OSError) and exc.errno == errno.ENOMEM):
            report["mem"] = True
        status = 1
        try:
            sys.stderr.write(format_exception(exc, filename, prog.lines))
        except BaseException:
            pass
    for stream in _open_streams():
        try:
            stream.flush()
        except BaseException as exc:
            # (a stdin program's end flushed sys.stdout and sys.stderr and failed on their
            # errors, as the interpreter's does; what its sys.__std*__ are is not its failure)
            if "exc" not in report and prog.kind != "stdio":
                report["exc"] = exception_name(exc)
                status = status or 1
    if prog.trace:
        report["lines"] = sorted(lines_hit)
    _write_report(report, gate)
    return status


def _program_exit(namespace, state=None):
    """What the interpreter does when a program ends, which a child's ``os._exit`` skips,
    in its order: ``threading._shutdown``'s (its exit hooks; the main thread's tstate lock
    released and the thread stopped, so a thread blocked in ``main_thread().join()`` returns;
    the join of every thread that is not a daemon, again until none is left, as a thread
    joined may start another: the deep-recursion opening ``threading.Thread(target=main)
    .start()`` without a join); its ``atexit`` handlers (a fast-output idiom writes its buffer
    there); ``sys.stdout`` and ``sys.stderr`` flushed; the standard streams put back from
    ``sys.__std*__`` (a replacement dropped there finalizes); then the files it opened that
    its namespace holds are flushed, in the namespace's order, as its teardown would (``out =
    open(1, 'w')``: a namespace with a function in it is a cycle, never torn down). What a
    resident child's next test must not find (the exit hooks the test registered, and its
    handlers) is cleared, and held in ``state``: a hook is kept only if it is one the standard
    library registers at its import (concurrent.futures', which a later test does not repeat),
    by identity, whatever the function the program registered. The main thread is put back
    alive for the next test (where its lock cannot be taken back, the child retires). On the
    program's time, the gate armed, as the interpreter's exit is. An exception a hook raises
    is printed and the end goes on, as the interpreter's; a standard stream whose flush raises
    fails the program (its exit status is 120)."""
    # (the modules' names read through their dicts, and written there: a function or class an
    # earlier test of a resident child put in threading's place is not called here)
    threading = _module_names(sys.modules.get("threading"))
    futures = _module_names(sys.modules.get("concurrent.futures.thread"))
    if threading is not None:
        # the interpreter's threading._shutdown: its exit hooks first (concurrent.futures'
        # wakes a ThreadPoolExecutor's idle workers, which would wait forever), then the join
        registered = threading.get("_threading_atexits")
        hooks = list(registered) if type(registered) is list else []
        if hooks:
            threading["_SHUTTING_DOWN"] = True
            if state is not None:
                registered[:] = _library_hooks(hooks, state.thread_hooks)
                state.held.append(hooks)
            for hook in reversed(hooks):
                try:
                    hook()
                except BaseException as exc:
                    _ignored(exc)
        _join_threads(threading, state)
    if _atexit_count():
        _atexit_run()
        _atexit_clear()
        weakref = _module_names(sys.modules.get("weakref"))
        finalize = weakref.get("finalize") if weakref is not None else None
        if type(finalize) is type:
            # weakref.finalize's exit hook ends every finalizer of the process for good
            # (its _shutdown): a resident child's next test must have working ones
            type.__setattr__(finalize, "_shutdown", False)
            type.__setattr__(finalize, "_registered_with_atexit", False)
    # (put back only now: the atexit handlers ran in the interpreter's shutdown state)
    if threading is not None:
        threading["_SHUTTING_DOWN"] = False
        if futures is not None:
            futures["_shutdown"] = False
    failed = None
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name, None)
        try:
            if stream is not None and not getattr(stream, "closed", False):
                stream.flush()
        except BaseException as exc:
            failed = failed or exc
    for name in ("stdin", "stdout", "stderr"):
        original = getattr(sys, f"__{name}__", None)
        if original is not None and getattr(sys, name, None) is not original:
            setattr(sys, name, original)
    for value in _held_files(namespace):
        try:
            if not value.closed:
                value.flush()
        except BaseException:
            pass
    if failed is not None:
        raise failed


#: the standard library's threading exit hooks (module, function name): in python 3.11 only
#: concurrent.futures registers one, once, at its import
_LIBRARY_EXIT_HOOKS = (("concurrent.futures.thread", "_python_exit"),
                       ("concurrent.futures.process", "_python_exit"))


def _library_hooks(hooks, start):
    """Of a test's ``threading`` exit hooks, those a resident child keeps for its later tests:
    the ones the child started with (``start``), and the first ``partial`` of each library
    function of :data:`_LIBRARY_EXIT_HOOKS` (what ``_register_atexit(f)`` makes), by identity.
    What the test's code registered, whatever its function (``pprint.pprint``, a lambda
    compiled under another file name), is not kept: it printed a later test's answer."""
    library = []
    for name, attribute in _LIBRARY_EXIT_HOOKS:
        module = sys.modules.get(name)
        if type(module) is types.ModuleType:
            function = _MODULE_DICT(module).get(attribute)
            if type(function) is types.FunctionType and function.__globals__ is _MODULE_DICT(module):
                library.append(function)
    kept = []
    for hook in hooks:
        if any(hook is s for s in start):
            kept.append(hook)
        elif type(hook) is _PARTIAL and not hook.args and not hook.keywords:
            for i, function in enumerate(library):
                if hook.func is function:
                    kept.append(hook)
                    del library[i]
                    break
    return kept


def _join_threads(threading, state):
    """``threading._shutdown``'s join (python 3.11), on ``threading``'s names (its module dict):
    the main thread's tstate lock released and the thread stopped, as ``Thread._stop`` does (a
    thread in ``main_thread().join()`` returns), then every lock of ``_shutdown_locks`` waited
    for, again until none is left (a thread joined may start another). For a resident child's
    next test the main thread is made alive again: its lock taken back (where that fails,
    ``state.retire``). The thread's attributes are read and written in its own ``__dict__``,
    and only the interpreter's locks are taken: no method a test could have replaced runs."""
    main = _instance_dict(threading.get("_main_thread"))
    guard, pending = threading.get("_shutdown_locks_lock"), threading.get("_shutdown_locks")
    if main is None or type(guard) is not _LOCK or type(pending) is not set:
        return  # (not python 3.11's threading)
    lock = None
    if main.get("_ident") == _get_ident() and main.get("_is_stopped") is False:
        lock = main.get("_tstate_lock")
        if type(lock) is _LOCK and lock.locked():
            lock.release()
            main["_is_stopped"] = True
            main["_tstate_lock"] = None
        else:
            lock = None
    try:
        while True:
            with guard:
                locks = list(pending)
                pending.clear()
            held = main.get("_tstate_lock")  # (still held when not released above: not waited for)
            locks = [each for each in locks if type(each) is _LOCK and each is not held]
            if not locks:
                break
            for each in locks:
                each.acquire()
                each.release()
    finally:
        if lock is not None:
            # (retired unless the lock is taken back: an interrupt may end the wait)
            retire = state is not None and state.retire
            if state is not None:
                state.retire = True
            if lock.acquire(timeout=0.1):
                main["_tstate_lock"] = lock
                main["_is_stopped"] = False
                if state is not None:
                    state.retire = retire


def _module_names(module):
    """A module's dict (read without a module subclass's ``__getattribute__``), or None."""
    return _MODULE_DICT(module) if module is not None and _SUBTYPE(_MODULE, type(module)) else None


def _instance_dict(value):
    """``value``'s own ``__dict__``, through the interpreter's descriptor found along its type's
    MRO (no code of the program's), or None."""
    kind = type(value)
    for klass in _MRO(kind):
        descriptor = _CLASS_DICT(klass).get("__dict__")
        if descriptor is None:
            continue
        if type(descriptor) is not types.GetSetDescriptorType:
            return None
        try:
            attributes = descriptor.__get__(value, kind)
        except Exception:
            return None
        return attributes if type(attributes) is dict else None
    return None


def _ignored(exc):
    """What the interpreter prints for an exception it ignores at exit."""
    try:
        sys.stderr.write(f"Exception ignored in atexit callback: {exception_name(exc)}\n")
    except BaseException:
        pass


#: the most objects :func:`_held_files` visits: a namespace's teardown reaches more, but the
#: harness's walk must not cost a program with a wide object its time (1.3 us a value)
_HELD_FILES_WALK = 10_000


def _held_files(namespace):
    """The files a program's namespace holds, directly or up to two steps away (a bound
    method's object, an instance's or a class's attributes), in the namespace's order (its
    teardown's: of two files on fd 1 the first defined is flushed first): what the
    interpreter's teardown frees, and so flushes, at exit (``write = open(1, 'w').write``,
    ``self.out = open(1, 'w')``, a file in an instance's ``__slots__``, in a list, a dict, a
    closure or a ``functools.partial``). Modules are not entered (the standard streams are
    flushed apart). No code of the program's runs: every test is of a value's type, read
    without a metaclass's attributes (an ``isinstance`` reads ``__class__`` through the
    object's own ``__getattribute__``, and a dead ``weakref.proxy`` raises there), attributes
    are read through the interpreter's own descriptors only, a container is entered only of a
    builtin type (whose iteration runs no code of the program's), and at most
    :data:`_HELD_FILES_WALK` objects are visited or queued. Nothing of the walk fails the
    program: what it found before an error is flushed."""
    found = []
    try:
        _walk_for_files(namespace, found)
    except Exception:  # (an interrupt at the CPU limit, a BaseException, goes on)
        pass
    return found


def _walk_for_files(namespace, found):
    seen = set()
    first = list(_islice(namespace.values(), _HELD_FILES_WALK))
    stack = [(value, 0) for value in reversed(first)]
    while stack and len(seen) < _HELD_FILES_WALK:
        value, depth = stack.pop()
        kind = type(value)
        if _IDENTITY(kind) in _ATOMS:  # (most values: nothing to flush, nothing held)
            continue
        key = _IDENTITY(value)
        if key in seen:
            continue
        seen.add(key)
        if _SUBTYPE(_IOBASE, kind):
            found.append(value)
            continue
        if depth >= 2 or _SUBTYPE(_MODULE, kind):
            continue
        if kind is _METHOD:
            stack.append((_METHOD_SELF(value), depth + 1))
            continue
        if kind is _BUILTIN_METHOD:
            stack.append((_BUILTIN_SELF(value), depth + 1))
            continue
        held = _held_by(value, kind)
        if held is None:
            held = _slot_values(value, kind)
            held.extend(_attribute_values(value, kind))
        else:
            room = max(0, _HELD_FILES_WALK - len(seen) - len(stack))
            held = list(_islice(held, room))
        stack.extend((v, depth + 1) for v in reversed(held))


#: containers whose iteration is the interpreter's own (a subclass may run the program's code),
#: and the types whose values hold nothing, both by identity (a type's own ``__eq__`` and
#: ``__hash__`` may be a metaclass's, the program's)
_CONTAINERS = frozenset(map(_IDENTITY, (list, tuple, set, frozenset, collections.deque)))
_ATOMS = frozenset(map(_IDENTITY, (str, int, float, complex, bool, bytes, type(None), range,
                                   type(Ellipsis), type(NotImplemented))))
_IOBASE, _METHOD, _FUNCTION = _io._IOBase, types.MethodType, types.FunctionType
_BUILTIN_METHOD = types.BuiltinMethodType


def _held_by(value, kind):
    """What a builtin container, a function's closure and defaults, or a ``functools.partial``
    holds (an iterator that runs no code of the program's), else ``None``."""
    if _IDENTITY(kind) in _CONTAINERS:
        return iter(value)
    if kind is dict:
        return _chain(value.keys(), value.values())
    if kind is _FUNCTION:
        cells = value.__closure__ or ()
        return _chain(_cell_contents(cells), value.__defaults__ or (),
                               (value.__kwdefaults__ or {}).values())
    if kind is _PARTIAL:
        return _chain((value.func,), value.args, value.keywords.values())
    return None


def _attribute_values(value, kind):
    """The values of ``value``'s ``__dict__`` (an instance's, or a class's own), read through
    the interpreter's ``__dict__`` descriptor found along its type's MRO; none where that is a
    descriptor of the program's (a ``__dict__`` property)."""
    for klass in _MRO(kind):
        descriptor = _CLASS_DICT(klass).get("__dict__")
        if descriptor is None:
            continue
        kind_of = type(descriptor)
        if kind_of is not types.GetSetDescriptorType and kind_of is not types.MemberDescriptorType:
            return []
        try:
            attributes = descriptor.__get__(value, kind)
        except Exception:
            return []
        if type(attributes) is dict or type(attributes) is types.MappingProxyType:
            return list(attributes.values())
        return []
    return []


def _cell_contents(cells):
    for cell in cells:
        try:
            yield cell.cell_contents
        except ValueError:  # an empty cell
            pass


def _slot_values(value, kind):
    """What ``value`` holds in ``__slots__`` along its class's MRO, read through the slots'
    member descriptors (no code of the program's runs; an unset slot is skipped)."""
    out = []
    for klass in _MRO(kind):
        names = _CLASS_DICT(klass)  # (no metaclass's __getattr__)
        if "__slots__" not in names:
            continue
        for descriptor in names.values():
            if type(descriptor) is types.MemberDescriptorType:
                try:
                    out.append(descriptor.__get__(value, klass))
                except Exception:
                    pass
    return out


def _open_streams():
    """The standard streams to flush when a program ends: ``sys.stdout`` and ``sys.stderr``
    and, where the program replaced those, ``sys.__stdout__`` and ``sys.__stderr__``; a stream
    the program closed is done (``sys.stdout.close()`` at the end is an ordinary ending)."""
    seen = []
    for stream in (getattr(sys, "stdout", None), getattr(sys, "stderr", None),
                   getattr(sys, "__stdout__", None), getattr(sys, "__stderr__", None)):
        if stream is None or any(stream is s for s in seen):
            continue
        seen.append(stream)
        try:
            closed = getattr(stream, "closed", False)
        except BaseException:  # (a detached stream raises ValueError: nothing of it is left)
            continue
        if not closed:
            yield stream


def _write_report(report, gate):
    """The report, as JSON, on fd 3, with ``late`` if the interrupt came while the harness
    ran. Its handler runs right after the C call it arrived in (encoding a large value, or
    the write itself), so the report is written again until it says what the gate says (at
    most twice: ``late`` only turns on; the zygote interrupts only while fd 3 is empty, so
    what is there is the harness's)."""
    written = False
    while True:
        late = gate is not None and gate.late
        if late:
            report["late"] = True
        try:
            data = _dumps(report).encode()
        except BaseException:
            data = _dumps({"exc": report.get("exc"), "unserialisable": True, "late": late}).encode()
        if written:
            try:
                _ftruncate(3, 0)
                _lseek(3, 0, _SEEK_SET)
            except BaseException:
                pass
        view = memoryview(data)
        while view:
            try:
                view = view[_os_write(3, view):]
            except BaseException:
                break
        written = True
        if gate is None or gate.late == late:
            return


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


def serve_program(cfg, confine, ruleset, fin, fout, payload_len, worker_pid, cgroup):
    """The zygote: join the worker's cgroups, confine itself, then read, compile and
    serve one program."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the worker's handler is not ours
    # a short time slice: its wake-ups at a test's CPU limit preempt the test (the
    # zygote's children get the default slice back at their fork)
    confine.timekeeper()
    statm_fd = _high_fd(os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC))
    if cgroup is not None:
        # The program's processes (this zygote, its children, their threads) in
        # cgroups of their own, joined while still privileged: memory and pids
        # limits, and a kill-all for the pool. The worker stays outside, so the
        # OOM killer of the memory cgroup can never pick it.
        for fd in cgroup["procs"]:
            os.write(fd, b"0")
            os.close(fd)
        # compile under RLIMIT_AS alone
        os.pwrite(cgroup["limit"], str(confine.LIMIT_LIFTED).encode(), 0)
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
    start = None
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
            confine.compile_cpu_guard(True)
        try:
            prog.code = compile(prog.source, prog.filename, "exec", dont_inherit=True)
        finally:
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
            resource.setrlimit(resource.RLIMIT_CPU, cpu)
            confine.compile_cpu_guard(False)
    except BaseException as exc:  # SyntaxError, ValueError (NUL bytes), RecursionError...
        text = f"{type(exc).__name__}: {exc}".encode("utf-8", "replace")[:4000]
        send(fout, OP_LOADED, b"\x01", text)
        prog.code = None
    else:
        preimport(module_names(prog.code), cfg.allowed_packages)
        _site_builtins()
        resource.setrlimit(resource.RLIMIT_NPROC, nproc)
        # what a resident child's tests restore (frozen below with the rest)
        start = Interpreter(confine.kept) if cfg.resident else None
        # Everything the zygote holds now (the harness, the pre-imported modules, the
        # compiled program) lives as long as it: frozen, the collector of a child never
        # walks it. A full collection over it costs ~3 ms, which a test would be charged
        # for when its allocations happen to trigger one (in a resident child, every few
        # interrupted tests: their tracebacks are cycles).
        gc.freeze()
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
    # (each test's CPU and wall limits come with it, in its TEST frame's head: the
    # RLIMIT_CPU above is replaced per test)
    # uid and ruleset -1: the zygote already runs as the sandbox uid inside the
    # Landlock domain, which the child inherits; nesting the same ruleset again
    # would copy its ~200 rules on every fork (~12 % of a trivial test's cost)
    accounting = (-1, -1, -1, -1, -1, 0)
    if cgroup is not None and full:
        accounting = (cgroup["usage"], cgroup["limit"], cgroup["peak"], cgroup["events"],
                      cgroup["stat"], prog.memory)
    # (a stdin program's input is the inbox on fd 0, rewound for each test)
    resident = bool(cfg.resident)
    what = confine.serve(fin, fout, cfg.scratch, limits, -1, -1, -1,
                         hs_w, hs_r, full, prog.output_limit + 1, STDERR_TAIL,
                         CHANNEL_CAP, base_kb, cfg.scratch, resident, accounting)
    if what:  # the confined child: one test (1), or a resident child's tests (2)
        status = 70
        try:
            status = serve_resident(prog, start) if what == 2 else execute(prog)
        finally:
            os._exit(status)
    os._exit(0)


def _buffer_size(fd):
    """The buffer size the interpreter gave its stream on ``fd``: the file's block size, as
    ``io.open`` takes it (a pipe's: 4 KiB)."""
    try:
        size = os.fstat(fd).st_blksize
    except OSError:
        size = 0
    return size if size > 1 else io.DEFAULT_BUFFER_SIZE


class _Unseekable(_io.FileIO):
    """A file that says it cannot seek, as the interpreter's own streams say: they were made on
    the worker's pipes, and a stream keeps what its file was at its making (a test's fds 0-2
    are memory files since). A fresh stream that could seek let ``sys.stdin.seek(0)`` pass in
    a resident child's later tests where a child of its own raises."""

    def seekable(self):
        return False


def _fresh_stream(spec, fd):
    """A new text stream on ``fd`` made as ``spec`` (``Interpreter``) says the child's was:
    no buffered byte or position of an earlier test's reads and writes in it, and the
    interpreter's ``mode``, ``name`` (PyRival's FastIO template reads ``file.mode``), buffer
    size and seekability (a program mixing ``print`` and ``os.write(1, ...)`` sees the same
    interleaving, and ``seek`` the same refusal, as on the interpreter's streams)."""
    encoding, errors, line_buffering, write_through, unbuffered, mode, name, size, seekable = spec
    raw = (_FILE_IO if seekable else _Unseekable)(fd, "rb" if fd == 0 else "wb", closefd=False)
    raw.name = name
    if unbuffered and fd != 0:
        buffer = raw
    else:
        buffer = _BUFFERED_READER(raw, size) if fd == 0 else _BUFFERED_WRITER(raw, size)
    stream = _TEXT_IO(buffer, encoding=encoding, errors=errors, newline="\n",
                      line_buffering=line_buffering, write_through=write_through)
    stream.mode = mode
    return stream


_STREAM_NAMES = ("stdin", "stdout", "stderr", "__stdin__", "__stdout__", "__stderr__")
#: _Unseekable's own attributes: a test reaches the class (``type(sys.stderr.buffer.raw)``), and
#: a method it put there would run when the restore makes the next test's streams
_UNSEEKABLE = dict(_CLASS_DICT(_Unseekable))
_BUILTIN_NAME = types.BuiltinFunctionType.__dict__["__name__"].__get__
_FLAGS = type.__dict__["__flags__"].__get__
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement (or type())


def _decimal_calls(names):
    """``getcontext`` and ``setcontext`` of a ``decimal`` module's dict if they are the C
    module's (builtins of those names: no function of a program's), else None."""
    get, put = names.get("getcontext"), names.get("setcontext")
    if (type(get) is types.BuiltinFunctionType and type(put) is types.BuiltinFunctionType
            and _BUILTIN_NAME(get) == "getcontext" and _BUILTIN_NAME(put) == "setcontext"):
        return get, put
    return None


class Interpreter:
    """What a test may change of the interpreter that the next test in a resident child
    must not find (each test's module namespace is fresh anyway): the standard streams
    (made anew on fds 0-2 for each test, as the child's were: a stdin program's reads of
    the inbox start at its first byte), the builtins, the working directory, ``sys.path``
    and ``sys.argv``, the recursion and digit limits, trace and profile functions and the
    collector's switch as a lone child would find them, ``random`` seeded afresh, as
    it is in every forked child (its at-fork hook), fds 0-3 (the inbox, outputs and
    report: ``open(0).read()`` closes fd 0 when its file goes) from copies made at the
    child's start, the modules the child started with in ``sys.modules`` (``__main__`` the
    worker's again), the collector's thresholds, the switch interval, and the thread's
    ``decimal`` context, ``warnings`` filters and ``asyncio`` event loop policy where those
    modules are loaded (a test's ``getcontext().prec = 40000`` slowed every later test's
    arithmetic; a closed event loop was every later test's ``get_event_loop()``).

    And every hook or callback through which the interpreter calls code a test left, in a
    later test (attack 7: each printed that test's answer): ``gc.callbacks`` and the
    collector's debug flags, every signal's handler, the interval timers (disarmed where a handler changed), the
    wakeup fd and the signal mask, ``sys``'s except, display, breakpoint and unraisable
    hooks, its async generator hooks and coroutine origin tracking, ``sys.meta_path``,
    ``sys.path_hooks`` and the finders in ``sys.path_importer_cache`` that are not the
    interpreter's own, ``threading``'s trace, profile and except hooks, ``os.environ`` and the
    umask. One mechanism for all: the start's value (taken here, in the zygote) is put back,
    by rebinding or through objects of the interpreter's own taken at the start (never through
    an object the test may have put in place: a ``list`` subclass as ``sys.path`` ran its
    ``__setitem__``), and what the test put there is held, never dropped. An audit hook
    cannot be taken out: a test that adds one retires its child (:meth:`retiring`), as half
    a memory budget does.

    Not restored: what an earlier test imported stays imported, and caches in modules
    (``re``'s compiled patterns) stay warm. Importing again is unsound for compiled code
    (an extension's init runs once per process: asyncio's C half would keep the first
    import's classes, numpy refuses), and no harness can reach every cache. What stays
    only makes a later test faster, so its verdict can differ from a child of its own's
    only where that child's is a timeout under the loop rule's tight limit and the full
    limit's is not (docs/PROTOCOL.md, "One child for a program's tests")."""

    #: ``sys``'s lists a test may rebind or change in place, put back as fresh copies
    LISTS = ("path", "argv", "meta_path", "path_hooks")
    #: ``sys``'s hooks the interpreter calls by name
    HOOKS = ("excepthook", "displayhook", "breakpointhook", "unraisablehook")

    def __init__(self, kept):
        # taken in the zygote before its children are forked (its state is theirs at the
        # fork): taken in each child it cost ~0.7 ms of the first test's CPU, the
        # copy-on-write faults of its copies' reference counts, a third of the loop
        # rule's 2 ms floor (fds and the working directory: :meth:`adopt`, in the child)
        self.fds: list[int] = []
        self.streams = [(s.encoding, s.errors, s.line_buffering, s.write_through,
                         isinstance(s.buffer, io.FileIO), getattr(s, "mode", "r" if fd == 0 else "w"),
                         getattr(s, "name", ("<stdin>", "<stdout>", "<stderr>")[fd]),
                         _buffer_size(fd), s.seekable())
                        for fd, s in enumerate((sys.stdin, sys.stdout, sys.stderr))]
        #: the streams the restore put in place (first the interpreter's): what a test put
        #: there instead is held, never dropped (see restore)
        self.made = (sys.stdin, sys.stdout, sys.stderr)
        #: what the restore took out of the interpreter's reach (a test's streams, builtins,
        #: modules, path, ...) and each finished test's namespace: held for the child's life
        self.held = []
        #: set by a test's end that cannot give the next test the start state back
        self.retire = False
        self.sys = _MODULE_DICT(sys)
        self.thresholds = gc.get_threshold()
        self.switch = sys.getswitchinterval()
        decimal = sys.modules.get("decimal")
        self.decimal = decimal.getcontext().copy() if decimal is not None else None
        #: the context a test starts with: one a test set in its place is held
        self.context = decimal.getcontext() if decimal is not None else None
        self.decimal_calls = _decimal_calls(_MODULE_DICT(decimal)) if decimal is not None else None
        warnings = sys.modules.get("warnings")
        self.warnings = list(warnings.filters) if warnings is not None else None
        #: (the filters list in place, the start's items)
        self.filters = (warnings.filters, self.warnings) if warnings is not None else None
        self.filters_mutated = sys.modules["_warnings"]._filters_mutated
        self.cwd = os.getcwd()
        #: each of LISTS: (the list in place, the start's items)
        self.lists = {name: (self.sys[name], list(self.sys[name])) for name in self.LISTS}
        self.importers = self.sys["path_importer_cache"]
        self.importers_start = dict(self.importers)
        external = sys.modules.get("importlib._bootstrap_external")
        self.finder = getattr(external, "FileFinder", None)
        self.loaders = tuple(getattr(external, name, None) for name in
                             ("ExtensionFileLoader", "SourceFileLoader", "SourcelessFileLoader"))
        self.hooks = {name: self.sys.get(name) for name in self.HOOKS}
        self.asyncgen = tuple(sys.get_asyncgen_hooks())
        self.origin_depth = sys.get_coroutine_origin_tracking_depth()
        self.builtins_dict = _MODULE_DICT(builtins)
        self.builtins = dict(self.builtins_dict)
        self.recursion = sys.getrecursionlimit()
        self.digits = sys.get_int_max_str_digits()
        self.gc = gc.isenabled()
        self.gc_dict = _MODULE_DICT(gc)
        self.callbacks_list = gc.callbacks
        self.callbacks = list(gc.callbacks)
        self.garbage = gc.garbage
        self.gc_debug = gc.get_debug()
        #: every signal's handler that python knows (SIGKILL's and SIGSTOP's cannot change)
        #: (not SIG_INTERRUPT's: the Gate's, put back by Gate.install after each restore)
        self.handlers = [(s, h) for s in signal.valid_signals()
                         if s != SIG_INTERRUPT and (h := _getsignal(s)) is not None]
        self.signums = tuple(s for s, _ in self.handlers)
        self.signal_handlers = tuple(h for _, h in self.handlers)
        self.wakeup = _set_wakeup_fd(-1)
        _set_wakeup_fd(self.wakeup)
        self.mask = None
        self.umask = None
        random = sys.modules.get("random")
        #: random's reseeding, as its at-fork hook does (``_inst.seed()``), through the C seed
        #: and the instance's dict taken now: a test may rebind ``random.seed``, or patch
        #: ``random.Random``'s methods
        self.reseed = None
        if random is not None:
            inst = random._inst
            self.reseed = (sys.modules["_random"].Random.seed, inst, vars(inst))
        self.modules_dict = sys.modules
        self.modules = dict(sys.modules)
        self.os = _MODULE_DICT(os)
        self.environ = os.environ
        self.environ_attrs = vars(os.environ)
        self.environ_data = os.environ._data
        self.environ_start = dict(self.environ_data)
        self.putenv, self.unsetenv = os.putenv, os.unsetenv
        threading = sys.modules.get("threading")
        #: threading's exit hooks at the start (a library's, registered at its import)
        self.thread_hooks = list(getattr(threading, "_threading_atexits", ()))
        self.thread_excepthook = _thread._excepthook
        #: the audited events' sentinel: the hook (``dict.pop``, C: no code of the program's, and
        #: nothing held) takes the key out at a ``sys.addaudithook`` event, and only then
        self.audit = {"sys.addaudithook": None}
        sys.addaudithook(self.audit.pop)
        #: native.kept: the start state's dicts compared without touching a reference count
        self.kept = kept

    def adopt(self):
        """What only the child knows, taken at its start: copies of its fds 0-3 (its first
        test's inbox, outputs and report), its working directory (the scratch directory
        it entered when confined; the zygote's is ``/``), its signal mask and its umask."""
        self.fds = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in range(4)]
        self.cwd = os.getcwd()
        self.mask = _sigmask(signal.SIG_BLOCK, ())
        self.umask = _umask(0)
        _umask(self.umask)

    def retiring(self):
        """Whether the finished test left what no restore can undo (an audit hook added, the
        main thread's lock not taken back): the child ends after it, and the next test runs
        as a new child's first."""
        return self.retire or "sys.addaudithook" not in self.audit

    def restore(self):
        """Put the start state back. Nothing a test left is dropped here: what it put in the
        interpreter's reach is held (:attr:`held`), as a child of its own's ``os._exit``
        leaves it, so no finalizer of the program's runs after its report (a replaced
        ``sys.stdout`` or a builtin whose ``__del__`` printed the answer made a resident test
        AC where a child of its own is WA). The hooks first, before the next test's streams
        are made: no code the test left runs on them."""
        held = []
        sysd = self.sys
        for hook in (_gettrace(), _getprofile()):
            if hook is not None:
                held.append(hook)
        _settrace(None)
        _setprofile(None)
        gate = _getsignal(SIG_INTERRUPT)
        if type(gate) is not Gate:  # (a test's handler, which Gate.install replaces: held)
            held.append(gate)
        if any(map(_is_not, map(_getsignal, self.signums), self.signal_handlers)):
            # the interval timers disarmed where a handler changed (one left armed with the
            # start's handlers, the default action, ends the child in a later test, which is
            # then run again in a new child: 1 us a test spared)
            for which in _ITIMERS:
                _setitimer(which, 0)
            for signum, handler in self.handlers:
                now = _getsignal(signum)
                if now is not handler:
                    held.append(now)
                    _setsignal(signum, handler)
        _set_wakeup_fd(self.wakeup)
        if self.mask is not None:
            _sigmask(_SIG_SETMASK, self.mask)
        self._restore_gc(held)
        for name, start in self.hooks.items():
            now = sysd.get(name)
            if now is not start:
                held.append(now)
                sysd[name] = start
        hooks = tuple(_get_asyncgen_hooks())
        if hooks[0] is not self.asyncgen[0] or hooks[1] is not self.asyncgen[1]:
            held.append(hooks)
            _set_asyncgen_hooks(firstiter=self.asyncgen[0], finalizer=self.asyncgen[1])
        _set_origin_depth(self.origin_depth)
        threading = self.modules_dict.get("threading")
        if type(threading) is _MODULE:
            names = _MODULE_DICT(threading)
            for name, start in (("_trace_hook", None), ("_profile_hook", None),
                                ("excepthook", self.thread_excepthook)):
                now = names.get(name, start)
                if now is not start:
                    held.append(now)
                    names[name] = start
        # (``.get``: a program may ``del sys.__stdout__``; read plainly, the restore raised
        # and the child ended after every such test, a fork per test)
        streams = (sysd.get(name) for name in _STREAM_NAMES)
        held += [s for s in streams if s is not None and all(s is not m for m in self.made)]
        builtins_changed = (len(self.builtins_dict) != len(self.builtins)
                            or not self.kept(self.builtins_dict, self.builtins))
        if builtins_changed:
            held.append(dict(self.builtins_dict))
        modules = self.modules_dict
        if sysd.get("modules") is not modules:
            held.append(sysd.get("modules"))
            sysd["modules"] = modules
        for name in ("__main__", "solution"):  # the test's program module
            now, start = modules.get(name), self.modules.get(name)
            if now is not start:
                held.append(now)
                if start is None:
                    del modules[name]
                else:
                    modules[name] = start
        modules_changed = not self.kept(modules, self.modules)
        if modules_changed:
            held.append(dict(modules))
        for name, (installed, start) in self.lists.items():
            now = sysd.get(name)
            if now is not installed or len(installed) != len(start) or any(map(_is_not, installed, start)):
                held += [now, list(installed)]
                fresh = list(start)
                sysd[name] = fresh
                self.lists[name] = (fresh, start)
        self._restore_importers(held)
        self._restore_libraries(held)
        self._restore_environ(held)
        if held:
            self.held.append(held)
        names = _CLASS_DICT(_Unseekable)
        if len(names) != len(_UNSEEKABLE) or any(names.get(k) is not v for k, v in _UNSEEKABLE.items()):
            held.append(dict(names))
            for key in [key for key in names if key not in _UNSEEKABLE]:
                type.__delattr__(_Unseekable, key)
            for key, value in _UNSEEKABLE.items():
                if names.get(key) is not value:
                    type.__setattr__(_Unseekable, key, value)
        # the test's streams go first: its own file on fd 0 or 1 (``sys.stdin = open(0)``)
        # closes that fd when it goes, so the copies are put back after, and the fresh
        # streams made last, on open fds
        for name in _STREAM_NAMES:
            sysd[name] = None
        for fd, copy in enumerate(self.fds):
            _dup2(copy, fd)
        made = tuple(_fresh_stream(spec, fd) for fd, spec in enumerate(self.streams))
        sysd["stdin"], sysd["stdout"], sysd["stderr"] = made
        sysd["__stdin__"], sysd["__stdout__"], sysd["__stderr__"] = made
        self.made = made
        _chdir(self.cwd)
        if self.umask is not None:
            _umask(self.umask)
        if builtins_changed:
            self.builtins_dict.clear()
            self.builtins_dict.update(self.builtins)
        _setrecursionlimit(self.recursion)
        _set_int_max_str_digits(self.digits)
        if self.gc:
            _gc_enable()
        _gc_set_threshold(*self.thresholds)
        _setswitchinterval(self.switch)
        if self.reseed is not None:
            # (256 bits of the kernel's randomness: seed(None) reads 2.5 KB, 8 us a test)
            seed, inst, attributes = self.reseed
            seed(inst, _from_bytes(_urandom(32), "little"))
            attributes["gauss_next"] = None
        if modules_changed:
            # a module of the child's start that a test replaced or removed
            modules.update(self.modules)

    def _restore_libraries(self, held):
        """The thread's ``decimal`` context, the ``warnings`` filters and ``asyncio``'s event
        loop policy, where those modules are loaded, through the C functions of ``_decimal``
        and ``_warnings`` (a function a test put in a module's place is not called) and by
        rebinding the modules' names."""
        modules = self.modules_dict
        decimal = modules.get("decimal")
        if self.decimal_calls is None and type(decimal) is _MODULE:
            self.decimal_calls = _decimal_calls(_MODULE_DICT(decimal))
        if self.decimal_calls is not None:
            get, put = self.decimal_calls
            now = get()
            if now is not self.context:
                held.append(now)
            if self.decimal is not None:
                fresh = self.decimal.copy()
            else:  # (the C type's own default, whatever class the test's context is)
                fresh = next(k for k in _MRO(type(now)) if not _FLAGS(k) & _HEAPTYPE)()
            put(fresh)
            self.context = get()
        warnings = modules.get("warnings")
        if self.warnings is not None and type(warnings) is _MODULE:
            names, (installed, start) = _MODULE_DICT(warnings), self.filters
            now = names.get("filters")
            if now is not installed or len(installed) != len(start) or any(map(_is_not, installed, start)):
                held += [now, list(installed)]
                fresh = list(start)
                names["filters"] = fresh
                self.filters = (fresh, start)
                self.filters_mutated()
        events = modules.get("asyncio.events")
        if type(events) is _MODULE:
            names = _MODULE_DICT(events)
            policy = names.get("_event_loop_policy")
            if policy is not None:
                held.append(policy)
                names["_event_loop_policy"] = None

    def _restore_gc(self, held):
        """The collector's callbacks (the interpreter's own list, whatever ``gc.callbacks``
        names now), its garbage list and debug flags, as at the start."""
        names, callbacks = self.gc_dict, self.callbacks_list
        if names.get("callbacks") is not callbacks:
            held.append(names.get("callbacks"))
            names["callbacks"] = callbacks
        if len(callbacks) != len(self.callbacks) or any(map(_is_not, callbacks, self.callbacks)):
            held.append(list(callbacks))
            callbacks[:] = self.callbacks
        if names.get("garbage") is not self.garbage:
            held.append(names.get("garbage"))
            names["garbage"] = self.garbage
        if self.garbage:
            held.append(list(self.garbage))
            del self.garbage[:]
        if _gc_get_debug() != self.gc_debug:
            _gc_set_debug(self.gc_debug)

    def _restore_importers(self, held):
        """``sys.path_importer_cache`` as the start's, but for the interpreter's own finders a
        test's imports added (a package's directory: kept warm): a finder of the program's
        there would be asked at a later test's import."""
        sysd, cache = self.sys, self.importers
        if sysd.get("path_importer_cache") is not cache:
            held.append(sysd.get("path_importer_cache"))
            sysd["path_importer_cache"] = cache
        if len(cache) == len(self.importers_start) and self.kept(cache, self.importers_start):
            return
        held.append(dict(cache))
        own = {}
        for key, value in cache.items():
            start = self.importers_start.get(key) if type(key) is str else None
            if value is start or (type(key) is str and self._own_finder(value)):
                own[key] = value
        cache.clear()
        cache.update(own)
        self.importers_start = dict(cache)

    def _own_finder(self, finder):
        """Whether ``finder`` is a ``FileFinder`` of the interpreter's own loaders (or None, a
        path entry without one), read without running code of the program's."""
        if finder is None:
            return True
        if self.finder is None or type(finder) is not self.finder:
            return False
        attributes = _attribute_values(finder, self.finder)
        for value in attributes:
            if type(value) is list:
                return all(type(item) is tuple and len(item) == 2 and type(item[0]) is str
                           and any(item[1] is loader for loader in self.loaders) for item in value)
        return False

    def _restore_environ(self, held):
        """``os.environ`` (the mapping and the process's environment) as at the start."""
        names = self.os
        if names.get("environ") is not self.environ:
            held.append(names.get("environ"))
            names["environ"] = self.environ
        data = self.environ_data
        if self.environ_attrs.get("_data") is not data:
            held.append(self.environ_attrs.get("_data"))
            self.environ_attrs["_data"] = data
        if self.kept(data, self.environ_start) and len(data) == len(self.environ_start):
            return
        held.append(dict(data))
        for key in list(data):
            if type(key) is bytes and key not in self.environ_start:
                try:
                    self.unsetenv(key)
                except (OSError, ValueError):
                    pass
        data.clear()
        data.update(self.environ_start)
        for key, value in self.environ_start.items():
            self.putenv(key, value)


def serve_resident(prog, before):
    """A resident child's tests (sandbox/confine.c, "Resident child"): run one, say done
    on fd 5, wait for "g" on fd 4 (the zygote has put the next test's input in the inbox,
    fd 0), restore the interpreter, run it; the exit status of the first test that does
    not end cleanly, or 0 when the zygote closes fd 4. A test that leaves a thread
    running ends the child: its thread would run into the next test.

    What a finished test leaves for the collector (its module namespace is a cycle, and
    holds its data) is frozen when it ends: no later test's collection traverses or frees
    it, as no child of its own meets an earlier test's objects; a test that interrupts
    nothing pays nothing for another's garbage, and its memory peak is its own (it cannot
    reuse an earlier test's freed memory). What is frozen stays until the child ends: the
    zygote retires a child whose memory cgroup holds more than half a budget, and without
    a cgroup the child ends itself once its peak RSS grew by half a budget.

    ``before``: the interpreter's state at the child's start, taken in the zygote."""
    before.adopt()
    start_kb = _getrusage(_RUSAGE_SELF).ru_maxrss
    room = _lowest_free_fd()
    gate = Gate()
    gate.install()
    while True:
        before.retire = False
        status = execute(prog, gate, before)
        if status != 0:
            return status
        if gate.fired:
            # An interrupted test's garbage (its namespace is a cycle, and a loop may have
            # grown it to millions of objects) is collected on its own time, a timeout's
            # (within the grace, or past it the kill a child of its own had), never on a
            # later test's under its tight limit; what finalizers print goes to its own
            # outputs, not the next test's.
            _gc_collect()
            for stream in _open_streams():
                try:
                    stream.flush()
                except BaseException:
                    pass
        # (asked only now: a finalizer that collection ran may have started a thread)
        if _thread_count():
            return status
        _gc_freeze()
        try:
            if before.retiring():
                # an audit hook the test added sees every later event, the restore's and the
                # next test's: no restore runs (none can take it out); the next test, handed
                # over, is run again at once as a new child's first
                _os_write(5, b"d")
                _os_read(4, 1)
                return 0
            grown = _getrusage(_RUSAGE_SELF).ru_maxrss - start_kb
            # The interpreter is restored before "done", on the finished test's time (its
            # report is written: the zygote sends no interrupt then, and allows what
            # follows as it allows a lone child's exit), never on the next test's: under
            # the shared floor (0.5 ms) the restore's first touches of the start state
            # (copy-on-write faults) made a later test TLE.
            before.restore()
            gate.install()
            gate.fired = gate.late = False
            # a finished test that left files open (an event loop's selector, a held mmap's
            # dup) would take them from every later test's RLIMIT_NOFILE: its child retires
            leaked = _lowest_free_fd() > room
            _os_write(5, b"d")
            if _os_read(4, 1) != b"g":
                return 0
            if grown * 1024 > prog.memory // 2 or leaked:
                # the next test, handed over, is run again at once as a new child's first,
                # with its whole budget (the zygote's path for a shared test that ends it)
                return 0
        except BaseException:  # the program broke what this needs: end with its last test
            return status


def _lowest_free_fd():
    """The lowest file descriptor free in this process (what the next ``open`` gets)."""
    fd = _dup(0)
    _close(fd)
    return fd


# ----------------------------------------------------------------------------- worker


class _Stop(BaseException):
    """SIGTERM from the pool: stop the zygote, reap everything, exit."""


def _on_sigterm(signum, frame):
    raise _Stop


def reap_all():
    """Wait for every child, and for the orphans reparented to us (we are the init of
    the worker's PID namespace, or its subreaper), until none is left."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def end_everything_below(pid_namespace):
    """Kill every process of the namespace but ourselves and reap them: nothing a
    program started outlives its zygote, whatever it did to its signals, session or
    parent (init may signal all; kill(-1) spares only the caller)."""
    if pid_namespace:
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
    reap_all()


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


#: The memory cgroup's files a zygote reads or writes per test (by role; cgroups.py
#: names them for v1 and v2), and how each is opened.
CGROUP_FILES = (("usage", os.O_RDONLY), ("limit", os.O_RDWR), ("peak", os.O_RDWR),
                ("events", os.O_RDONLY), ("stat", os.O_RDONLY))


def open_cgroup(spec):
    """The cgroup files a zygote needs, opened now, while they are reachable (the
    minimal root does not hold /sys) and the worker is privileged; None without."""
    if not spec:
        return None
    out = {"procs": [_high_fd(os.open(p, os.O_WRONLY | os.O_CLOEXEC)) for p in spec["procs"]]}
    for key, flags in CGROUP_FILES:
        out[key] = _high_fd(os.open(spec[key], flags | os.O_CLOEXEC))
    return out


def close_cgroup(cgroup):
    for fd in cgroup["procs"] + [cgroup[key] for key, _ in CGROUP_FILES]:
        os.close(fd)


def oom_kills(cgroup):
    if cgroup is None:
        return 0
    for line in os.pread(cgroup["events"], 4096, 0).decode().splitlines():
        if line.startswith("oom_kill "):
            return int(line.split()[1])
    return 0


def stand_by(init, self_fd):
    """W once it has forked its init: only waits for it. SIGTERM (the pool's stop)
    kills the init, and with it, the kernel ends the whole PID namespace."""
    def on_term(signum, frame):
        try:
            os.kill(init, signal.SIGKILL)
        except OSError:
            pass

    signal.signal(signal.SIGTERM, on_term)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    os.close(self_fd)
    while True:
        try:
            _, status = os.waitpid(init, 0)
            break
        except ChildProcessError:
            status = 0
            break
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if 0 <= code < 256 else 128 - code)


def main():
    cfg = Config(json.loads(sys.argv[1]))
    # What the interpreter a program inherits says of the host: no configuration (the
    # pool's pid, host paths) in sys.argv; the code runs as "<string>" (started with -c)
    sys.argv[:] = ["-c"]
    sys.orig_argv[:] = [sys.orig_argv[0]] if sys.orig_argv else []
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
    adopt_wire(confine)
    cfg.confine_path = ""
    confine.set_pdeathsig(signal.SIGKILL)
    if os.getppid() != cfg.pool_pid:
        os._exit(0)
    owner = watch_owner(cfg.pool_pid)  # opened while the pid is surely our parent's
    report = {"root": os.getuid() == 0, "errors": []}
    report.update(confine.probe())
    try:
        cgroup = open_cgroup(cfg.cgroup if cfg.full else None)
        cfg.cgroup = None  # opened: its paths (the pool's pid in them) are not kept
        report["cgroup"] = cgroup is not None
        namespaces = enter_namespaces(cfg, confine, report)
        # again after entering namespaces: a credential change (a user namespace)
        # would have cleared it
        confine.set_pdeathsig(signal.SIGKILL)
        if os.getppid() != cfg.pool_pid:
            os._exit(0)
        if namespaces:
            # The next child is PID 1 of the new PID namespace and serves as the
            # worker from here on: when it dies, for any reason, the kernel kills
            # every process of the namespace. This process only waits for it.
            self_fd = _high_fd(os.pidfd_open(os.getpid()))  # readable once W has died
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
            init = os.fork()
            if init:
                os.close(fin)
                os.close(fout)
                if owner >= 0:
                    os.close(owner)
                if cgroup is not None:
                    close_cgroup(cgroup)
                stand_by(init, self_fd)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
            confine.set_pdeathsig(signal.SIGKILL)
            if select.select([self_fd], [], [], 0)[0]:  # W died before the line above
                os._exit(0)
            os.close(self_fd)
        else:
            confine.set_subreaper()  # a test child orphaned by its zygote comes here
        ruleset = setup(cfg, confine, report, namespaces)
    except BaseException as exc:
        send(fout, OP_FATAL, f"worker set-up failed: {type(exc).__name__}: {exc}".encode())
        os._exit(2)
    # The parser and compiler set themselves up at their first use (~1 ms): once here,
    # not once in every program's zygote (a fixed text of ours, no program's)
    compile(WARM_UP, "<warm-up>", "exec", dont_inherit=True)
    report["rss_kb"] = statm()[1]
    report["modules"] = len(sys.modules)
    report["threading"] = "threading" in sys.modules
    send(fout, OP_READY, json.dumps(report).encode())
    me = os.getpid()
    fresh_scratch = bool(report.get("minimal_root") and report.get("tmpfs"))
    # each program's zygote is the init of a PID namespace of its own
    own_ns = -1
    if namespaces:
        try:
            own_ns = _high_fd(os.open("/proc/self/ns/pid", os.O_RDONLY | os.O_CLOEXEC))
        except OSError:
            own_ns = -1
    devnull = os.open("/dev/null", os.O_WRONLY | os.O_CLOEXEC)

    zygote = 0
    try:
        hbuf = bytearray(HEADER.size)
        first = True
        while True:
            if not wait_for(fin, owner):
                break  # the pool's process died: nobody will read what we run
            header = read_header(fin, hbuf)
            if header is None or header[0] == OP_QUIT:
                break
            op, n = header
            if op in (OP_TEST, OP_END):
                # frames the pool sent to a zygote that died before it read them: skip
                # them without reading them into this process (a zygote forked from it
                # must never find another test's input)
                while n:
                    k = os.splice(fin, devnull, n)
                    if k == 0:
                        break
                    n -= k
                continue
            if op != OP_LOAD:
                send(fout, OP_FATAL, f"worker: unexpected op {op}".encode())
                os._exit(3)
            if fresh_scratch and not first:
                mount_scratch(confine, cfg, fresh=True)
            first = False
            oom_before = oom_kills(cgroup)
            if own_ns >= 0:
                confine.new_pid_namespace(own_ns)
            zygote = os.fork()
            if zygote == 0:
                status = 4
                try:
                    if owner >= 0:
                        os.close(owner)  # W watches; the zygote has no use for it
                    serve_program(cfg, confine, ruleset, fin, fout, n,
                                  0 if own_ns >= 0 else me, cgroup)
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
            # a test child of a zygote that died mid-test (or anything else left; with a
            # PID namespace per zygote the kernel has already ended them)
            end_everything_below(namespaces)
            if status != 0:
                oom = oom_kills(cgroup) > oom_before
                send(fout, OP_ZDIED, ZDIED.pack(status, oom))
    except _Stop:
        pass
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if zygote:
        try:
            os.kill(zygote, signal.SIGKILL)
        except ProcessLookupError:
            pass
    end_everything_below(namespaces)
    os._exit(0)


if __name__ == "__main__":
    main()
