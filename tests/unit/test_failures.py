"""The closed vocabulary of failure names (core.failures) and the words it gives prompts and hints."""

from __future__ import annotations

import builtins
import signal

import pytest

from pairbench_async.core.failures import (
    BUILTIN_EXCEPTIONS,
    PROGRAM_DEFINED,
    SIGNAL_NAMES,
    compile_failure_name,
    is_failure_name,
    reported_exception,
    runtime_phrase,
    runtime_word,
)
from pairbench_async.protocol.evidence import describe_failure
from pairbench_async.protocol.hints import fallback_hint

CANARY = "CANARY_7731"
#: names a program can give a class it raises: none of them may survive past the sandbox
CHOSEN = [
    f"_{CANARY}_4242_1717",  # built from the hidden input (the reported bug)
    "Ωμέγα_7731",  # Unicode letters
    "E" * 256,  # as long as the report channel allows
    "json.decoder.JSONDecodeError",  # dotted
    "hhdb_ecec",  # digits as letters
    "MyError",
    "ValueError2",
    "valueerror",  # a builtin's name in another case
]


def test_the_vocabulary_is_derived_from_builtins_and_signals() -> None:
    expected = {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}
    assert expected == BUILTIN_EXCEPTIONS
    assert {"ZeroDivisionError", "RecursionError", "KeyboardInterrupt", "ExceptionGroup", "UserWarning",
            "SystemExit", "MemoryError"} <= BUILTIN_EXCEPTIONS
    assert SIGNAL_NAMES == {s.name for s in signal.Signals} and "SIGSEGV" in SIGNAL_NAMES


@pytest.mark.parametrize("name", sorted(BUILTIN_EXCEPTIONS))
def test_builtin_names_are_kept(name: str) -> None:
    assert reported_exception(name) == name
    assert compile_failure_name(name) == name
    assert runtime_word(name) == name and runtime_phrase(name) == name
    assert is_failure_name(name)


@pytest.mark.parametrize("name", CHOSEN)
def test_any_other_name_is_the_one_fixed_word(name: str) -> None:
    assert reported_exception(name) == PROGRAM_DEFINED
    assert compile_failure_name(name) == PROGRAM_DEFINED
    assert runtime_word(name) == PROGRAM_DEFINED
    assert not is_failure_name(name)
    text = describe_failure(f"runtime:{runtime_word(name)}")
    assert text == "stops with an exception whose type is not one of Python's built-in exceptions"


def test_no_report_is_no_exception() -> None:
    assert reported_exception(None) is None
    assert runtime_word(None) == "unknown" and runtime_word("'junk") == "unknown"


@pytest.mark.parametrize(
    ("error", "word", "says"),
    [
        ("exit code 42", "ExitCode", "stops with a non-zero exit code"),  # an older record
        ("non-zero exit code", "ExitCode", "stops with a non-zero exit code"),
        ("unnamed signal", "Signal", "stops with a signal that has no name"),
        ("signal 42", "Signal", "stops with a signal that has no name"),
        ("SIGSEGV", "SIGSEGV", "stops with SIGSEGV"),
        ("corrupt result report", "CorruptReport", "stops with a runtime error"),
        ("no return value", "NoReturnValue", "stops with no return value"),
        ("SourceTooLarge", "SourceTooLarge", "stops with SourceTooLarge (the program is too large to be run)"),
        ("ValueError: 4242 is not valid", "ValueError", "stops with ValueError"),  # a result decoded elsewhere
        (f"_{CANARY}: boom", PROGRAM_DEFINED, "stops with an exception whose type is not one of Python's "
         "built-in exceptions"),
    ],
)
def test_the_sandboxs_own_texts_without_the_number_a_program_picks(error: str, word: str, says: str) -> None:
    assert runtime_word(error) == word
    assert describe_failure(f"runtime:{word}") == says
    assert "42" not in says


@pytest.mark.parametrize("level", range(1, 7))
@pytest.mark.parametrize("name", CHOSEN)
def test_prose_never_repeats_a_word_outside_the_vocabulary(level: int, name: str) -> None:
    # an old record's key (or any Scenario built by hand) with a program-chosen word
    assert describe_failure(f"runtime:{name}") == "stops with a runtime error"
    assert name not in fallback_hint(level, f"runtime:{name}") and "7731" not in fallback_hint(level, f"runtime:{name}")
