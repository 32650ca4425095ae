"""Hidden data as a rule recognises it re-encoded, and cutting its echoes from program output."""

from __future__ import annotations

import pytest

from pairbench_async.protocol.echoes import (
    REDACTED,
    encodings,
    redact_echoes,
    spelled_digits,
    squash,
)

SECRET = "CANARY_7731 4242 1717\n"


def test_squash_reads_case_separators_and_invisible_characters_alike() -> None:
    assert squash("CANARY_7731") == squash("canary-77 31") == squash("Canary\u200b7731") == "canary7731"


def test_encodings_of_a_text() -> None:
    assert set(encodings("canary7731")) == {
        "1377yranac",  # reversed
        "canaryhhdb",  # digits as letters, a=0..j=9
        "bdhhyranac",  # and reversed
        "canarysevenseventhreeone",  # digits as words
        "onethreesevensevenyranac",  # reversed, then spelled
    }
    assert encodings("abba") == ()  # a palindrome without digits has no other form



def test_the_digits_a_text_spells() -> None:
    assert spelled_digits("It printed HHDB ecec_bhbh, then stopped.", letters=12, words=4) == ["773142421717"]
    assert spelled_digits("seven seven three one", letters=12, words=4) == ["7731"]
    assert spelled_digits("SEVEN-seventhree one", letters=12, words=4) == ["7731"]
    # prose: short runs of a..j words, number words apart, number words inside other words
    assert spelled_digits("It is a bad idea: one of the two, someone, none, eighteen.", letters=12,
                          words=4) == []


@pytest.mark.parametrize(
    "output",
    [
        "CANARY_7731",
        "the label was canary and 7731",
        "CaNaRy 77-31",
        "1377_YRANAC",
        "hhdb",
        "HHDB",
        "b d h h",
        "seven seven three one",
        "SEVEN-SEVEN-THREE-ONE",
        "one three seven seven",
        "C\u200bANARY",
    ],
)
def test_every_encoding_of_a_hidden_token_is_cut(output: str) -> None:
    cut = redact_echoes(output, [SECRET])
    assert REDACTED in cut
    for form in ("canary", "yranac", "7731", "1377", "hhdb", "bdhh", "seven", "anary"):
        assert form not in squash(cut.replace(REDACTED, " ")), (output, cut)


def test_what_the_reader_sees_anyway_is_kept() -> None:
    # the expected output, the problem and the candidate's code are not hidden from it
    assert redact_echoes("answer 5959", [SECRET], ["5959"]) == "answer 5959"
    assert redact_echoes("CANARY wins", [SECRET], ["Print CANARY when ..."]) == "CANARY wins"
    # nor are short tokens, which occur everywhere (a rule cannot tell an echo from an answer)
    assert redact_echoes("12 7 yes", ["12 7 yes no\n"]) == "12 7 yes"
    assert redact_echoes("", [SECRET]) == ""
    assert redact_echoes("!!! ???", [SECRET]) == "!!! ???"


def test_an_input_of_short_tokens_echoed_whole_is_cut() -> None:
    secret = "12\n1 2 3 4 5 6 7 8 9 1 2 3\n"
    assert redact_echoes("1 2 3 4 5 6 7 8 9 1 2 3\nsum 45", [secret], ["45"]) == f"{REDACTED}\nsum 45"
    reversed_ = " ".join("123456789123"[::-1])
    assert redact_echoes(reversed_, [secret]).startswith(REDACTED)


def test_cut_spans_joined_only_across_separators() -> None:
    assert redact_echoes("CANARY_7731 and then 4242!", [SECRET]) == f"{REDACTED} and then {REDACTED}!"
    assert redact_echoes("x=[4242, 1717]", [SECRET]) == f"x=[{REDACTED}]"
