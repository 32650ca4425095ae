"""Example data in a hint: the literals of a test's input or output (revision 15, issue 24).

A hint at L2 shows failing inputs, and any hint may state what an input should give. Written in backticks or
quotes, such an example looks like code to the code rules ("`("Tue", "06:30", 21, "C")`", "`cells = {"A1":
1}`"), like a quote of the candidate to the location rule ("for example `aaaa` or just `q`"), and what the
sentence goes on to say of it ("`5-30/10` should match 5, 15 and 25", "'978-0-8044-2957-3' should convert to
'080442957X'") looks like a rule or a repair. First seen by revision 14 on three blind sets, seven of its
22 false positives were such examples. A span is example data, by its structure:

* a literal: digits, strings (``True`` / ``False`` / ``None``) and their separators only, no operator but
  ``-`` ``+`` ``/`` (a date, a range, a fraction: "`5-30/10`"), so "`>=`" or "`x`" is none;
* or any span that follows an example cue in its own sentence ("for example", "e.g.", "such as", "like",
  "Example:", "with"), unless it is a statement (a keyword, an augmented assignment, a method call or
  index, a name given a value that is not a non-empty literal).

Revision 16 adds the labels that frame a test ("Failing board:", "Scenario:") to the cues, and reads a span after a
verb of output ("Expected a line of the form", "printed", "got") as output, the program named or not, when it
holds a space or a digit (a line, not a lone name) and no operator.

The validator reads the hint with each example span set aside (:mod:`.leakage`), and a sentence whose
subject is an example and whose predicate is its expected output ("should be", "should match", "should
convert to", "the answer is") states the expected behaviour, not the rule or a change.
"""

from __future__ import annotations

import ast
import re
from typing import Final

__all__ = ["example_spans", "expected_tail"]

#: a code span in backticks, or a quoted token with no space (a string of the input: '080442957X')
_SPAN: Final = re.compile(r"`[^`\n]+`|(?<![\w'])'[^'\s]{1,40}'(?![\w'])|(?<![\w\"])\"[^\"\s]{1,40}\"(?![\w\"])")
_STRING: Final = re.compile(r"\"[^\"\n]*\"|'[^'\n]*'")
_CONSTANT: Final = re.compile(r"\b(?:True|False|None)\b")
#: an example cue earlier in the span's sentence
_CUE: Final = re.compile(r"\b(?:for\s+example|for\s+instance|e\.\s?g\.|such\s+as|like|example\s*:|"
                         r"inputs?\s+(?:of|is|are))\s|^\s*with\s|"
                         # revision 16: a label framing a test's data ("Failing board:", "Scenario:")
                         r"\b(?:(?:failing|sample|test|example)\s+[a-z]+|scenarios?|inputs?|cases?)\s*:\s*$", re.I)
#: revision 16: a verb of the program's output or the expected one before the span in its sentence ("Expected a
#: line of the form `...`", "your program printed ... (`...`)"): the span is output, even with the program named
_OUTPUT_CUE: Final = re.compile(r"\b(?:expected|printed|printing|outputs?|output\s+was|got|gave|of\s+the\s+form)\b",
                                re.I)
#: an operator outside strings: such a span after an output cue may be an expression, not an output line
_OPERATOR: Final = re.compile(r"[+*/%<>=!&|^]|\s-\s")
#: a part of the program in the cue's clause makes what follows a quote of it ("a guard such as `x > 0`")
_PLACE: Final = re.compile(r"\b(?:expression|condition|comparison|line|call|check|term|operand|loop|branch|statement|"
                           r"computation|calculation|update|guard|header|bound|argument|variable|name|function|method|"
                           r"helper|program|operator|assignment|counter|flag)s?\b", re.I)
#: a repair verb in the cue's clause makes what follows a thing to write ("write it like `a + b`")
_REPAIR: Final = re.compile(r"\b(?:write|use|replace|change|set|return|make|turn|update|assign|initiali[sz]e|"
                            r"compute|add|append|put|try|something|instead|rather)\b", re.I)
#: what makes a span a statement, even after a cue
_STATEMENT: Final = re.compile(r"\b(?:if|elif|else|for|while|return|def|class|import|lambda|yield|not|and|or|in)\b|"
                               r"[+\-*/%|&^]=|\.[A-Za-z_]\w*\s*\(|[A-Za-z_]\w*\s*\[")
_GIVEN: Final = re.compile(r"\s*[A-Za-z_]\w*\s*=(?!=)\s*(?P<value>.+)")
#: the end of a sentence, outside a span
_SENTENCE_END: Final = re.compile(r"[.;!?](?=\s|$)|\n")


def _literal(content: str) -> bool:
    """Whether a span's content has letters only inside strings (a tuple, dict, list, number, date)."""
    bare = _CONSTANT.sub("", _STRING.sub("", content))
    # digits, strings and their separators only: "`>=`", "`x`" are no data
    return bool(re.fullmatch(r"[\d\s.,:\-+/()\[\]{}]*", bare)) and bool(re.search(r"\d", bare) or bare != content)


def _nonempty_literal(value: str) -> bool:
    try:
        parsed = ast.literal_eval(value.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return False
    return isinstance(parsed, (tuple, list, dict, set, str)) and len(parsed) > 0


def _cued(hint: str, start: int, end: int) -> bool:
    """Whether an example cue precedes the span at ``start``-``end`` in its own sentence (spans masked, their
    dots aside), with no repair verb or part of the program in that sentence ("something like `a - b`
    instead": a thing to write)."""
    masked = re.sub(r"`[^`\n]*`", lambda m: "x" * len(m.group()), hint)
    ends = list(_SENTENCE_END.finditer(masked, 0, start))
    clause = masked[ends[-1].end() if ends else 0: start]
    after = _SENTENCE_END.search(masked, end)
    rest = masked[end: after.start() if after else len(masked)]
    content = hint[start + 1: end - 1]
    # an output line has words or numbers ("White 0:03 Black 0:12"); a lone name ("Expected `seen` to be
    # cleared") is the program's
    if (_OUTPUT_CUE.search(clause) and re.search(r"\s|\d", content.strip())
            and not _OPERATOR.search(_STRING.sub("", content))):
        return True
    return bool(_CUE.search(clause)) and not any(_REPAIR.search(part) or _PLACE.search(part)
                                                 for part in (clause, rest))


def example_spans(hint: str, literals: bool = True) -> list[str]:
    """The spans of ``hint`` that are example data (see the module's docstring), each with its marks;
    with ``literals`` false only those after an example cue (a literal of the candidate's code, "the `0`
    in the range call", may still name its place)."""
    out: list[str] = []
    for found in _SPAN.finditer(hint):
        content = found.group()[1:-1]
        quoted = found.group()[0] != "`"
        if quoted and not re.search(r"[\d]", content) and len(content) > 1:
            continue  # a quoted word ('compact') is a word of the prose, not necessarily data
        if _literal(content) and (literals or (not quoted and _cued(hint, found.start(), found.end()))):
            out.append(found.group())
            continue
        if quoted or not _cued(hint, found.start(), found.end()):
            continue
        given = _GIVEN.fullmatch(content)
        if given:
            if _nonempty_literal(given.group("value")):
                out.append(found.group())
            continue
        if not _STATEMENT.search(_STRING.sub("", content)):
            out.append(found.group())
    return out


#: an example as a sentence's subject with its expected output as the predicate
_EXPECTED: Final = re.compile(
    r"\bthe example\b[^.;!?\n]{0,80}?\b(?:should\s+(?:be|match|convert\s+to|give|return|print|yield|produce|"
    r"come\s+(?:out|back)\s+as)|(?:the\s+)?(?:expected\s+)?(?:answer|output|result)\s+is|is\s+expected)\b"
    r"(?P<rest>[^.;!?\n]*)", re.I)


def expected_tail(prose: str, names: frozenset[str]) -> str:
    """``prose`` (examples already replaced by "the example") with each sentence part "<example> should be
    <value>" cut to "the example.": its expected output, not a rule; kept whole where the value names the
    program ("`-1` should be the starting value of best" sets a program's variable)."""
    def cut(found: re.Match[str]) -> str:
        named = any(word in names for word in re.findall(r"[A-Za-z_]\w+", found.group("rest")))
        return found.group() if named else "the example."
    return _EXPECTED.sub(cut, prose)
