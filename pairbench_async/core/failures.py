"""The closed vocabulary of failure names: what a crash may be called past the sandbox.

A program under evaluation chooses the name of every class it raises (``type(name, (Exception,),
{})`` builds one from its input), and its result report travels on a channel it can write.
A name it chose would reach scenario keys, feedback prompts, hints and records, so nothing
past the sandbox's decoder holds one: a failure is named by a word of this vocabulary,
and everything else by one fixed word.

* **Built-in exceptions**: every ``BaseException`` subclass in :mod:`builtins`
  (``ZeroDivisionError``, ``RecursionError``, ``ExceptionGroup``, warnings included).
  The sandbox's child reports a class's name only when the class *is* that builtins object
  (a program's own ``class ValueError(Exception)`` is not); the decoder maps again by name,
  since the report channel is the program's to write.
* :data:`PROGRAM_DEFINED` (``ProgramDefinedException``): any other exception class,
  whether the program defined it or a library did (``json.JSONDecodeError``), whatever
  its name (dotted, Unicode, 256 characters, shadowing a builtin). The name alone cannot
  tell a program's class from a builtin, so identity decides in the child and the name is
  never kept.
* **Signals**: the names of :class:`signal.Signals` (``SIGSEGV``), as the decoder names a
  child's terminating signal; ``signal N`` for a number without a name.
* **The sandbox's own**: ``SourceTooLarge`` and ``CompileTimeLimit`` (compile failures),
  ``corrupt result report``, ``no return value``, ``non-zero exit code`` and ``unnamed
  signal`` (the exit status and a signal's number are the program's to pick: 8 bits of
  its input per test, so they are not kept; records of older versions say ``exit code N``
  and ``signal N``).

A *failure type* (the scenario key's last part, and what prompts and hints say) is
``runtime:<word>`` with the word from :func:`runtime_word`. :func:`runtime_phrase` is its prose.
Pure: no I/O, no state.
"""

from __future__ import annotations

import builtins
import re
import signal
from typing import Final

__all__ = [
    "BUILTIN_EXCEPTIONS",
    "COMPILE_TIME_LIMIT",
    "CORRUPT_REPORT",
    "NONZERO_EXIT",
    "NO_RETURN_VALUE",
    "PROGRAM_DEFINED",
    "PROGRAM_DEFINED_PHRASE",
    "SIGNAL_NAMES",
    "SOURCE_TOO_LARGE",
    "UNNAMED_SIGNAL",
    "compile_failure_name",
    "is_failure_name",
    "reported_exception",
    "runtime_phrase",
    "runtime_word",
]

#: The one word for an exception whose class is not a builtins object, in records and keys.
PROGRAM_DEFINED: Final = "ProgramDefinedException"
#: ... and in prose (a library's class is not a builtin either, so "program-defined" would overstate).
PROGRAM_DEFINED_PHRASE: Final = "an exception whose type is not one of Python's built-in exceptions"

#: Every exception class :mod:`builtins` holds, by name.
BUILTIN_EXCEPTIONS: Final[frozenset[str]] = frozenset(
    name for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)
#: Every named signal (the decoder names a terminating signal from these).
SIGNAL_NAMES: Final[frozenset[str]] = frozenset(s.name for s in signal.Signals)

SOURCE_TOO_LARGE: Final = "SourceTooLarge"
COMPILE_TIME_LIMIT: Final = "CompileTimeLimit"
CORRUPT_REPORT: Final = "corrupt result report"
NO_RETURN_VALUE: Final = "no return value"
NONZERO_EXIT: Final = "non-zero exit code"
UNNAMED_SIGNAL: Final = "unnamed signal"
#: older records' forms, read for their word only
_EXIT_CODE: Final = re.compile(r"exit code [0-9]{1,3}")
_SIGNAL_NUMBER: Final = re.compile(r"signal [0-9]{1,3}")
_SANDBOX_WORDS: Final = frozenset({SOURCE_TOO_LARGE, COMPILE_TIME_LIMIT, CORRUPT_REPORT,
                                   NO_RETURN_VALUE})

#: The failure-type words for the sandbox's texts that are not names: the number a program
#: picked (its exit code, a signal without a name) stays out of the key and the prose.
_WORDS: Final = {CORRUPT_REPORT: "CorruptReport", NO_RETURN_VALUE: "NoReturnValue",
                 NONZERO_EXIT: "ExitCode", UNNAMED_SIGNAL: "Signal"}
_PHRASES: Final = {
    PROGRAM_DEFINED: PROGRAM_DEFINED_PHRASE,
    "ExitCode": "a non-zero exit code",
    "Signal": "a signal that has no name",
    "CorruptReport": "a runtime error",
    "NoReturnValue": "no return value",
    SOURCE_TOO_LARGE: "SourceTooLarge (the program is too large to be run)",
    COMPILE_TIME_LIMIT: "CompileTimeLimit (compiling the program takes too long)",
    "unknown": "a runtime error",
}


def reported_exception(name: str | None) -> str | None:
    """The exception class a test's child reported, as a vocabulary word (None: none).

    A builtin's name is kept; anything else (the child's own :data:`PROGRAM_DEFINED`, or
    whatever a program wrote on the report channel) is :data:`PROGRAM_DEFINED`.
    """
    if name is None:
        return None
    return name if name in BUILTIN_EXCEPTIONS else PROGRAM_DEFINED


def compile_failure_name(name: str) -> str:
    """The exception class of a program that did not compile (compiling runs none of the
    program's code, so only builtins and the sandbox's own two occur; anything else is
    :data:`PROGRAM_DEFINED`)."""
    return name if name in BUILTIN_EXCEPTIONS or name in (SOURCE_TOO_LARGE, COMPILE_TIME_LIMIT) else PROGRAM_DEFINED


def is_failure_name(error: str) -> bool:
    """Whether ``error`` is a word of the vocabulary (what a decoded RE, MLE or compile
    failure's ``TestResult.error`` may hold)."""
    return (error in BUILTIN_EXCEPTIONS or error in SIGNAL_NAMES or error in _SANDBOX_WORDS
            or error in (PROGRAM_DEFINED, NONZERO_EXIT, UNNAMED_SIGNAL))


_LEADING_NAME: Final = re.compile(r"\s*([^\W\d][\w.]*)")


def runtime_word(error: str | None) -> str:
    """The word of ``runtime:<word>`` for a runtime error's ``TestResult.error``.

    Vocabulary names are kept (``exit code N`` → ``ExitCode``, ``signal N`` → ``Signal``,
    ``corrupt result report`` → ``CorruptReport``, ``no return value`` → ``NoReturnValue``);
    a text that only starts with a name (a result decoded elsewhere: ``ValueError: bad``)
    keeps that name if it is a builtin's, any other leading name is :data:`PROGRAM_DEFINED`,
    and a text with no leading name (or none at all) is ``unknown``.
    """
    if error is None:
        return "unknown"
    if error in _WORDS:
        return _WORDS[error]
    if _EXIT_CODE.fullmatch(error):
        return "ExitCode"
    if _SIGNAL_NUMBER.fullmatch(error):
        return "Signal"
    if error in SIGNAL_NAMES or error in _SANDBOX_WORDS:
        return error
    found = _LEADING_NAME.match(error)
    if found is None:
        return "unknown"
    return found.group(1) if found.group(1) in BUILTIN_EXCEPTIONS else PROGRAM_DEFINED


def runtime_phrase(word: str) -> str:
    """What a program "stops with", in words, for a :func:`runtime_word`; a word outside
    the vocabulary (an old record's key) is "a runtime error", never the word itself."""
    if word in BUILTIN_EXCEPTIONS or word in SIGNAL_NAMES:
        return word
    return _PHRASES.get(word, _PHRASES["unknown"])
