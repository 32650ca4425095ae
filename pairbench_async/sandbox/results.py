"""Judging a worker's RESULT frame: the TestResult (verdict) of one test.

Kept apart from the pool because it is the one place that reads bytes a program
controls: past the frame's fixed header, stdout, stderr and the report on fd 3 are
the program's own writing. Decoding never raises, whatever the bytes, and the size
and nesting gates here bound what one result may cost the evaluator (time, memory,
what is kept) before anything is decoded. Also the verdict of a program that does
not compile.
"""

from __future__ import annotations

import os
import signal
from typing import Annotated, Any, NamedTuple

import msgspec

from ..core.failures import (
    NONZERO_EXIT,
    UNNAMED_SIGNAL,
    compile_failure_name,
    reported_exception,
)
from ..core.types import Test, TestResult, Verdict
from .compare import compare_output, values_equal
from .jobs import ARGS, Job
from .wire import FLAG_CONFINED, FLAG_CPU_TIMEOUT, FLAG_OOM, FLAG_WALL_TIMEOUT, RESULT
from .worker import OPAQUE_KINDS

__all__ = [
    "SIGNAL_NAMES",
    "signal_name",
    "compile_failure",
    "decode_result",
]

#: A RESULT frame starts with a ``wire.RESULT`` (sandbox/confine.c's struct result_block): wait status, flags, CPU and
#: wall time, peak and base RSS, the peak in the memory cgroup (-1: none) and what the test
#: left in scratch and its output files (kB), then the lengths of stdout, stderr, report and
#: fault text.
_CHANNEL = msgspec.json.Decoder()
SIGNAL_NAMES = {int(s): s.name for s in signal.Signals}


def signal_name(sig: int) -> str:
    """A terminating signal in the closed vocabulary: its name, or one fixed word for a
    number without one (the program picks the number)."""
    return SIGNAL_NAMES.get(sig, UNNAMED_SIGNAL)


def compile_failure(test: Test, text: str) -> TestResult:
    """A program that did not compile: RE with the compiler's exception class
    (SyntaxError, ValueError for NUL bytes, RecursionError...), or MLE when
    compiling it went over the job's memory budget."""
    name = text.split(":", 1)[0]
    error = compile_failure_name(name) if name.isidentifier() else "SyntaxError"
    if error == "CompileTimeLimit":
        return TestResult(id=test.id, verdict=Verdict.TLE, timeout="cpu", error=error, stderr=text)
    verdict = Verdict.MLE if error == "MemoryError" else Verdict.RE
    return TestResult(id=test.id, verdict=verdict, error=error, stderr=text)


#: The child's normaliser replaces whatever lies deeper than 200 levels with a
#: tagged object; its tags ($set, $complex, $error, $int) add at most 3 levels.
#: A value nested deeper was not written by it, and is refused before anything
#: downstream (comparison, repr, hints, records) recurses on it.
_NORMALISED_DEPTH = 200
_MAX_DEPTH = _NORMALISED_DEPTH + 4
_CORRUPT = "corrupt result report"


class _Report(msgspec.Struct):
    """The child's report on fd 3. Untrusted: the program may write there too, so
    anything off-shape makes the whole report corrupt (the program's own verdict)."""

    exc: Annotated[str, msgspec.Meta(max_length=256)] | None = None
    #: decoded on its own: a value that cannot be decoded spoils only the value
    value: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    #: decoded on its own (``_traced_lines``), only once its length is known to fit
    #: the program; off-shape, it still makes the whole report corrupt
    lines: msgspec.Raw | msgspec.UnsetType = msgspec.UNSET
    #: the program died of a MemoryError (or subclass) or an ENOMEM OSError
    mem: bool = False
    #: the CPU time (us) of the program's own module and call, without the test's
    #: fixed cost (what a reference's ``ref_ms`` measures)
    work_us: Annotated[int, msgspec.Meta(ge=0)] | None = None
    #: a resident child's interrupt at the CPU limit came while the harness ran (the
    #: program had returned): the pool runs the test again alone (process._again_alone)
    late: bool = False


_REPORT = msgspec.json.Decoder(_Report)
_NO_REPORT = _Report()


_CONTAINERS = frozenset((list, dict))


def _too_deep(value: list[Any] | dict[str, Any], limit: int = _MAX_DEPTH) -> bool:
    """Whether lists and dicts nest more than ``limit`` levels. Iterative, level by
    level; a list or dict holding no container costs one C-level pass over its
    items, so only containers of containers are looped over in Python."""
    level: list[Any] = [value]
    depth = 1
    while level:
        if depth > limit:
            return True
        below: list[Any] = []
        for node in level:
            items = node.values() if type(node) is dict else node
            if not _CONTAINERS.isdisjoint(map(type, items)):
                below.extend([x for x in items if type(x) is list or type(x) is dict])
        level = below
        depth += 1
    return False


# What a result may cost the evaluator. A program writes its stdout (up to
# ``Limits.output_limit``) and its report on fd 3 (up to 16 MiB) itself, so both are
# judged before they are decoded or kept: the work and memory spent on one result
# are bounded by what a legitimate answer to the test needs (the expected value or
# output), never by what the program chose to write.

#: An equal value's JSON is at most this many times the expected's compact JSON (plus
#: the margin). The child writes ``json.dumps`` text (", " and ": " separators, \u
#: escapes); the worst case is a one-digit int matched by a float within tolerance,
#: ``0,`` written back as ``-9.999999999999999e-09, `` (24 bytes for 2: 12x); escapes
#: take at most 3x (6 bytes for 2, 12 for 4); a lone scalar falls within the margin.
_VALUE_FACTOR = 16
_VALUE_MARGIN = 64 * 1024
#: An equal value has the expected's brackets and commas, plus one ``{`` for each
#: number that travels as an ``$int`` tag (at most one per bracket or comma): twice
#: the expected's count, and 4x plus a margin is generous. Counting ``[``, ``{`` and
#: ``,`` in the raw text (also inside strings, which only loosens it) bounds the
#: containers and scalars decoding may build, whatever the value's shape.
_NODE_FACTOR = 4
_NODE_MARGIN = 10_000
#: A returned value is kept in its TestResult (hints, records, exec's rows show it)
#: when its JSON is at most this long, or when it is accepted (then it is the
#: expected one), or when the test has no expected value (the value is what the
#: caller asked for, e.g. a recording); otherwise UNSET, and ``error`` says why.
_KEEP_VALUE = 64 * 1024
#: Stdout kept in a TestResult, in characters: 64 KiB plus 4x the expected output
#: (a legitimate output, accepted or not, is kept whole); beyond it, the first part.
#: The comparison has already seen all of it. A stdio test without an expected
#: output keeps all of it (the output is what the caller asked for); a call test's
#: stdout (never compared) is only decoded as far as it is kept.
_KEEP_OUTPUT = 64 * 1024
_OUTPUT_FACTOR = 4
#: A traced run's lines are a sorted set of the program's own line numbers: at most
#: ~12 bytes of JSON per line of source. Longer was not written by the child.
_LINE_BYTES = 12
_LINES = msgspec.json.Decoder(list[Annotated[int, msgspec.Meta(ge=0, lt=1 << 31)]] | None)


def _memory_kb(rss_kb: int, cgroup_kb: int, held_kb: int) -> int:
    """What a test held at its peak. With a memory cgroup, its peak: heap, scratch files,
    memory files and page cache alike. Without one, the peak RSS above the zygote's plus,
    counted by hand, what it left in scratch and its stdout and stderr files (what it
    wrote there and removed before exiting escapes this count; the scratch tmpfs's size
    still bounds it)."""
    if cgroup_kb >= 0:
        return cgroup_kb
    return max(0, rss_kb) + max(0, held_kb)


def _structure(text: bytes) -> int:
    """Brackets and commas in JSON text: a bound on the nodes it decodes to (C speed)."""
    return text.count(b"[") + text.count(b"{") + text.count(b",")


def _value_refusal(raw: msgspec.Raw, expected: Any) -> str | None:
    """Why the returned value (its raw JSON) cannot be ``expected``, judged without
    decoding it; None when it has to be decoded and compared."""
    try:
        text = ARGS.encode(expected)
    except Exception:  # no JSON form (never for a decoded test): compare as before
        return None
    if len(raw) > _VALUE_FACTOR * len(text) + _VALUE_MARGIN:
        return f"returned a value too large to be the expected one ({len(raw)} bytes of JSON)"
    if _structure(bytes(raw)) > _NODE_FACTOR * _structure(text) + _NODE_MARGIN:
        return "returned a value with too many items to be the expected one"
    return None


def _traced_lines(job: Job, raw: msgspec.Raw | msgspec.UnsetType) -> list[int] | None:
    """The report's lines, refused (ValueError: the report is corrupt) when longer
    than the program's source allows or off-shape."""
    if raw is msgspec.UNSET:
        return None
    source = job.program.source
    if len(raw) > _LINE_BYTES * (source.count("\n") + source.count("\r") + 2) + 64:
        raise ValueError("more traced lines than the program has")
    return _LINES.decode(raw)


def _kept_output(stdout: str, test: Test) -> str:
    if test.output is None:
        return stdout
    keep = _KEEP_OUTPUT + _OUTPUT_FACTOR * len(test.output)
    return stdout if len(stdout) <= keep else stdout[:keep]


def decode_result(job: Job, test: Test, payload: bytes) -> TestResult:
    """The TestResult of one RESULT frame. Never raises, whatever the bytes: a frame
    or report that cannot be read is the program's doing (RE, "corrupt result
    report"); a value that cannot be compared is a wrong one (WA)."""
    try:
        return _decode(job, test, payload)
    except Exception:  # defence in depth: _decode handles every case it knows
        return TestResult(id=test.id, verdict=Verdict.RE, error=_CORRUPT)


class _Frame(NamedTuple):
    """A RESULT frame's head and texts."""

    status: int
    flags: int
    cpu_us: int
    wall_us: int
    memory_kb: int
    raw_out: bytes
    stderr: str
    chan: bytes
    fault: str


def interrupted_late(payload: bytes) -> bool:
    """Whether a RESULT's report says its interrupt came while the harness ran (``late``).
    Untrusted like the rest of the report: a program that forges it buys only a run alone."""
    frame = _frame(payload)
    if frame is None:
        return False
    try:
        return _REPORT.decode(frame.chan).late
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False


def _frame(payload: bytes) -> _Frame | None:
    if len(payload) < RESULT.size:
        return None
    (status, flags, cpu_us, wall_us, maxrss_kb, base_kb, cg_peak_kb, held_kb, _alone_us, n_out,
     n_err, n_chan, n_fault) = RESULT.unpack_from(payload)
    pos = RESULT.size
    raw_out = payload[pos:pos + n_out]
    pos += n_out
    stderr = payload[pos:pos + n_err].decode("utf-8", "replace")
    pos += n_err
    chan = payload[pos:pos + n_chan]
    pos += n_chan
    fault = payload[pos:pos + n_fault].decode("utf-8", "replace")
    return _Frame(status, flags, cpu_us, wall_us, _memory_kb(maxrss_kb - base_kb, cg_peak_kb, held_kb),
                  raw_out, stderr, chan, fault)


class _Verdicts:
    """The results one frame can give: its measurements, output and traced lines in each."""

    def __init__(self, test: Test, frame: _Frame, stdout: str, lines: list[int] | None,
                 work_us: int | None) -> None:
        self.common = {"id": test.id, "cpu_ms": frame.cpu_us / 1000, "wall_ms": frame.wall_us / 1000,
                       "memory_kb": frame.memory_kb, "stderr": frame.stderr, "stdout": stdout,
                       # the program writes its report: never more than the CPU it used
                       "work_ms": None if work_us is None else min(work_us, frame.cpu_us) / 1000}
        self.lines = lines

    def __call__(self, verdict: Verdict, **kw: Any) -> TestResult:
        return TestResult(verdict=verdict, lines=self.lines, **self.common, **kw)


def _decode(job: Job, test: Test, payload: bytes) -> TestResult:
    frame = _frame(payload)
    if frame is None:
        return TestResult(id=test.id, verdict=Verdict.RE, error=_CORRUPT)
    if not frame.flags & FLAG_CONFINED:
        return TestResult(id=test.id, verdict=Verdict.SF, error=f"sandbox: {frame.fault}", cpu_ms=frame.cpu_us / 1000,
                          wall_ms=frame.wall_us / 1000, memory_kb=frame.memory_kb, stderr=frame.stderr)
    limits = job.limits
    if job.program.kind == "call":  # never compared: decode only what is kept
        kept = frame.raw_out[: min(limits.output_limit, 4 * _KEEP_OUTPUT)]  # <= 4 bytes a char
        stdout = shown = kept.decode("utf-8", "replace")[:_KEEP_OUTPUT]
    else:
        stdout = frame.raw_out[: limits.output_limit].decode("utf-8", "replace")
        shown = _kept_output(stdout, test)
    report, corrupt, traced = _NO_REPORT, False, None
    if frame.chan:
        try:
            report = _REPORT.decode(frame.chan)
            traced = _traced_lines(job, report.lines)
        except Exception:  # not JSON, nested too deep, not an object, a field off-shape
            report, corrupt = _NO_REPORT, True
    result = _Verdicts(test, frame, shown, traced if job.trace else None, report.work_us)
    failed = _failure(job, test, frame, report, corrupt, result)
    if failed is not None:
        return failed
    if job.program.kind == "call":
        return _call_verdict(job, test, report, frame.chan, result)
    return _stdio_verdict(job, test, stdout, result)


def _failure(job: Job, test: Test, frame: _Frame, report: _Report, corrupt: bool,
             result: _Verdicts) -> TestResult | None:
    """TLE, OLE, MLE or RE when the run itself failed; None when it ran to its end."""
    limits = job.limits
    exc = reported_exception(report.exc)
    status = frame.status
    signaled = os.WIFSIGNALED(status)
    sig = os.WTERMSIG(status) if signaled else 0
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 0
    cpu_limit_ms = (test.time_limit if test.time_limit is not None else limits.time_limit) * 1000
    if frame.flags & FLAG_WALL_TIMEOUT:
        return result(Verdict.TLE, timeout="wall")
    # killed at its CPU limit by the zygote (the test's own, or the loop rule's: see
    # pool.py), past the test's own limit, or by the kernel's backstop
    if frame.flags & FLAG_CPU_TIMEOUT or frame.cpu_us / 1000 > cpu_limit_ms or sig == signal.SIGXCPU:
        return result(Verdict.TLE, timeout="cpu")
    if len(frame.raw_out) > limits.output_limit:
        return result(Verdict.OLE)
    if (frame.flags & FLAG_OOM or report.mem or exc == "MemoryError"
            or frame.memory_kb > limits.memory_limit_mb * 1024):
        return result(Verdict.MLE, error=exc)
    if signaled:
        return result(Verdict.RE, error=signal_name(sig))
    if corrupt:
        return result(Verdict.RE, error=_CORRUPT)
    if exc is not None or code != 0:
        return result(Verdict.RE, error=exc or NONZERO_EXIT)
    return None


def _call_verdict(job: Job, test: Test, report: _Report, chan: bytes, result: _Verdicts) -> TestResult:
    """AC or WA of a function call's returned value (or RE: it returned none)."""
    raw = report.value
    if raw is msgspec.UNSET:
        return result(Verdict.RE, error="no return value")
    # no expected value (e.g. recording a reference's calls): the value is what the
    # caller asked for, decoded and kept whatever its size (still compared with None)
    wanted = test.expected is msgspec.UNSET
    expected = None if wanted else test.expected
    refused = None if wanted else _value_refusal(raw, expected)
    if refused is not None:
        return result(Verdict.WA, mismatch="value", error=refused)

    def with_value(verdict: Verdict, value: Any, error: str | None = None, **kw: Any) -> TestResult:
        if wanted or verdict is Verdict.AC or len(raw) <= _KEEP_VALUE:
            return result(verdict, value=value, error=error, **kw)
        note = f"the returned value is not kept ({len(raw)} bytes of JSON, over {_KEEP_VALUE})"
        return result(verdict, error=f"{error}; {note}" if error else note, **kw)

    try:
        value = _CHANNEL.decode(raw)
    except RecursionError:
        return result(Verdict.WA, mismatch="value", error="returned a value nested too deep")
    except Exception:  # a number out of range (an integer past 4,300 digits, 1e999)
        # fixed words: the decoder's message names a path into the value the program chose
        return result(Verdict.WA, mismatch="value", error="returned a value that cannot be read")
    # fewer brackets in the whole report than the limit: no need to walk the value
    if ((type(value) is list or type(value) is dict)
            and chan.count(b"[") + chan.count(b"{") > _MAX_DEPTH and _too_deep(value)):
        return result(Verdict.WA, mismatch="value", error="returned a value nested too deep")
    if type(value) is dict and "$type" in value and not isinstance(expected, dict):
        kind = value["$type"]
        # the worker's own words for what has no JSON form; a class name is the program's
        kind = kind if type(kind) is str and kind in OPAQUE_KINDS else "object"
        return with_value(Verdict.WA, value, mismatch="value", error=f"returned a {kind}, which has no JSON value")
    try:
        equal = bool(values_equal(expected, value, job.checker))
    except Exception as err:  # the comparator's failure is not the sandbox's
        return with_value(Verdict.WA, value, mismatch="value",
                          error=f"the value could not be compared ({type(err).__name__})")
    if equal:
        return with_value(Verdict.AC, value)
    return with_value(Verdict.WA, value, mismatch="value")


def _stdio_verdict(job: Job, test: Test, stdout: str, result: _Verdicts) -> TestResult:
    """AC or WA of a program's standard output against the expected one."""
    if test.output is None:  # nothing to compare with (e.g. computing a reference's outputs)
        return result(Verdict.AC)
    try:
        mismatch = compare_output(test.output, stdout, job.checker)
    except Exception as err:
        return result(Verdict.WA, mismatch="value",
                      error=f"the output could not be compared ({type(err).__name__})")
    if mismatch is None:
        return result(Verdict.AC)
    return result(Verdict.WA, mismatch=mismatch)
