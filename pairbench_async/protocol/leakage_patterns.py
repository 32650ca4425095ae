"""The leakage validator's wording rules: code, program locations, repair directions.

These three rules read only the hint and the candidate's program (never hidden data), so
they live apart from the quote rule (:mod:`.leakage_quotes`) and from the verdict and
regeneration loop (:mod:`.leakage`), which applies them by level. Each returns its
rejection reasons, each starting with the rule's name; a reason shows at most 40
characters of the hint itself, so it tells the feedback model nothing it did not write.

* ``code`` (every level): a fenced block, an inline code span with operators or
  brackets, a statement line (``def f(``, ``for ...:``, ``return x``, ``import``,
  ``x = ...``), or inline statements: ``for i in range(``, augmented assignments,
  assignments whose right side calls or indexes, assignments to the program's own
  variables (``count = 0``), calls of common builtins and methods, ``==``/``!=``; and
  what L6 also forbids, "pseudocode, or exact patch": an operator swap ("from <= to
  <"), a comparison of indexed or called operands (``a[mid] <= x``), any call with
  arguments (``pow(2, MOD - 2, MOD)``), a three-operand expression, "pseudocode".
* ``location`` (below L4): line numbers (``line 12``), identifiers of the candidate's
  program that the problem statement does not use (those with ``_``, digits or
  camelCase, abbreviations of up to three letters, any quoted or followed by ``(``,
  and plain words next to a cue like "variable", "array", "function"), and references
  to program structure ("the loop", "the binary search loop", "the key function",
  "the list comprehension", "the line that prints", "the comparison inside ...",
  "the part of the program that ...").
* ``direction`` (below L6): a sentence or clause opening with a repair verb (change,
  replace, use, add, initialise, print, check, ...; "In the loop, stop ..."), the
  programmer addressed ("you should", "you need to"), a modal asking for a change
  ("should be initialised", "must also accept", but not "the amount that should be
  removed", nor "should be 5"), and phrases like "make sure", "replace", "change ...
  to", "use ... instead", "instead of using", "the fix is".

Issue 24 widened ``location`` and ``direction`` to their classes: a named construct placed by a
position word ("the length check before appending", "the moves table near the top", "the set
built inside the join"), a construct pointed at in its sentence ("is the place to look"), the
program's act pointed at ("where the program decides"), the program's possessed table or list;
a wider class of repair verbs whose object may be a program identifier or a literal, a gerund
asked for ("need reducing"), suggestions as questions and hedges ("have you considered
adding", "you might keep"), the candidate's code told what to do ("your search should push"),
a missing builtin named ("needs abs around"); not a noun before its example ("Change amounts
such as ..."), a predicate ("..., go wrong"), a remark ("Keep in mind that"). ``code`` also takes
an exact patch in context ("Change x <= 18 to x < 18", "Replace 7 with n"); the structural code
rules are :mod:`.leakage_structure`'s.

Round 3 (issue 24, revisions 6-7): "you'll want to", "I'd suggest", "it's worth ...ing" and an
expression asked for ("it needs lo <= x", "should be (a - 1) // k") are directions; "ought to get
YES" describes; an operator patch is code at a sentence's start too; one-letter inputs given
values ("n = 2, k = 1 fails") are no statement line.

Revision 8: a spaced dash opens an imperative clause ("too permissive - make it strict"); an opening
verb followed by a degree word ("Output too large") or by a bare noun and a finite verb in the same
clause ("Count values in the output are right") is a subject, not an instruction; compare/run/test
with the output or a test as object observes the symptom; "you can see/notice" perceives it; a repair
word in a relative clause with its own subject ("the half that the division should keep") or after
"whether to" describes; "don't forget to", "remember to", lower/raise/align are instructions. A
pointing verb ("inspect", "suspect", "where to look") places print, literal, division and slice too.

Revision 9 (fresh15, an outside reviewer's set, missed directions with verbs no list held): the list of
change verbs is gone. A direction is recognised by construction (:mod:`.leakage_grammar`): a clause
opening with a word outside the closed classes (determiners, pronouns, prepositions, conjunctions,
auxiliaries, wh-words, common adverbs, numerals), uninflected, not a pointing verb (look, check,
trace, ...), followed by what opens an object (a determiner, pronoun, possessive, a number used as a
quantity, the program's or Python's names, a bracketed literal, a preposition of a complement); a
request ("could you <verb>", "please <verb>", "try <verb>ing") whose verb does not point; a change
coordinated with a pointing verb ("look one character ahead and subtract ..."). Only the pointing
verbs that also ask for a change in some frames ("check for", "print the count") keep their list and
special cases. A parenthetical between commas ("the first column, read from bottom to top, becomes")
opens no instruction, nor does a call written out ("print(f...)").

Pure: no I/O.
"""

from __future__ import annotations

import ast
import builtins
import functools
import keyword
import re
from typing import Final

from .leakage_grammar import (
    LEAD,
    adverbial,
    constructed_imperative,
    coordinated_imperative,
    exercise,
    lead_only,
    lone_verb,
    open_verb,
    pointing,
    request_verb,
    starts_with_lead,
)

__all__ = ["code_identifiers"]


#: a maximal run of word characters: what "whole word" means throughout
WORD: Final = re.compile(r"\w+")


# --------------------------------------------------------------------------- code

_FENCE: Final = re.compile(r"```|~~~")
_CODE_SPAN: Final = re.compile(r"`[^`\n]*[=()\[\]{}:+\-*/<>%][^`\n]*`")
_STATEMENT_LINE: Final = re.compile(
    r"^(?:(?:def|class)\s+\w+\s*[(:]"
    r"|(?:for|while|if|elif|with|except)\b[^\n]*:$"
    r"|(?:else|try|finally)\s*:"
    r"|return(?:\s+[\w.\[\]()+\-*/%, ]+)?$"
    r"|import\s+\w+|from\s+[\w.]+\s+import\b"
    r"|[A-Za-z_][\w.]*(?:\[[^\]]*\])?\s*(?:[+\-*/%|&^]|//|<<|>>)?=(?!=)\s*\S.*$)"
)
_INLINE_CODE: Final = tuple(
    re.compile(p)
    for p in (
        r"\bfor\s+\w+(?:\s*,\s*\w+)*\s+in\s+(?:range|enumerate|zip|sorted|reversed)\s*\(",
        r"\bdef\s+\w+\s*\(",
        r"\blambda(?:\s+[A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)?\s*:",
        r"\b\w+(?:\[[^\]\n]*\])?\s*(?:\+|-|\*|/|//|%|\||&|\^|<<|>>)=\s*\S",
        r"\b[A-Za-z_]\w*(?:\[[^\]\n]*\])?\s*=(?!=)\s*[^\n.;,]*?\b[A-Za-z_]\w*\s*[(\[]",
        r"\breturn\s+[A-Za-z_][\w.]*\s*[(\[+\-*/%]",
        r"\b(?:print|input|range|len|int|str|sorted|enumerate|list|dict|set|sum|max|min|abs|any|all|map|zip)"
        r"\s*\((?:[^()\n]|\([^()\n]*\))*\)",
        # a method call "s.lower()", "dict.fromkeys(words)"; a call of a name of 2+ characters on a name
        # ("Counter(a)"; never the one-letter maths of "F(n)")
        r"\b[A-Za-z_]\w*\.[A-Za-z_]\w*\(",
        r"\b[A-Za-z_]\w+\([A-Za-z_]\w*\)",
        # pseudocode: "bal <- bal + x", "x ← 0", "if bal < 0 then ..."
        r"\w\s*(?:<-|←|:=)\s*[\w(-]",
        r"\bif\s+[^.\n]{0,30}?(?:<|>|==|!=|=)[^.\n]{0,30}?\bthen\b",
        r"\.\s*(?:append|extend|pop|sort|split|join|strip|add|get|items|keys|values|insert|"
        r"remove|update|readline|count|index)\s*\(",
        r"\b(?:elif|else)\s*:",
        r"[\w\])]\s*(?:==|!=)\s*[\w\[(\-'\"]",
        r"\bsys\.stdin\b",
        # an exact patch of an operator: "from <= to <", "use < instead of <="
        r"(?i:\b(?:from|replace|replacing|change|changing|swap|swapping|turn|use|using))\s+[`'\"]?"
        r"(?:<=|>=|==|!=|<|>|\+=?|-=?|\*|//|/|%)[`'\"]?\s+(?:to|with|by|into|instead|for)\b",
        # a literal swapped: "Replace 7 with n in the division", 'change "aeiouy" to "aeiou"'
        r"(?i:\b(?:replace|replacing|change|changing|swap|swapping|turn|turning)\s+)(?:-?\d+(?:\.\d+)?|\"[^\"\n]*\"|"
        r"'[^'\n]*')\s+(?i:with|to|into|by|for)\s+(?:[A-Za-z_]\w*|-?\d+(?:\.\d+)?|\"[^\"\n]*\"|'[^'\n]*')(?![\w-])",
        # ... and in context: "Change x <= 18 to x < 18", "uses <= where < is needed", "< rather than <="
        r"(?i:\b(?:change|changing|replace|replacing|turn|turning|swap|swapping))\s+[^.;\n]{0,20}?(?:<=|>=|==|!=|<|>)"
        r"[^.;\n]{0,20}?\s(?:to|with|into|by)\s+[^.;\n]{0,20}?(?:<=|>=|==|!=|<|>)",
        r"(?:<=|>=|==|!=|<|>)\s*\w*\s+(?:where|when)\s+\w*\s*(?:<=|>=|==|!=|<|>)\s*\w*\s+(?:is|was)\s+(?:needed|meant|"
        r"required|intended|right|correct)",
        r"(?:<=|>=|==|!=|<|>)\s*\w*\s+(?:instead\s+of|rather\s+than|in\s+place\s+of)\s+\w*\s*(?:<=|>=|==|!=|<|>)",
        # a comparison whose operand is indexed, called or an attribute: "a[mid] <= x"
        r"(?:\w+(?:\[[^\]\n]*\]|\([^()\n]*\))+|\b\w+\.\w+)\s*(?:<=|>=|<|>)\s*[-\w(\[]",
        r"[\w\])]\s*(?:<=|>=|<|>)\s*-?\w+(?:\[[^\]\n]*\]|\([^()\n]*\))+",
        # a call with arguments: "pow(2, MOD - 2, MOD)" (never "O(n*m)", never "word (note)")
        r"\b(?!O\()[A-Za-z_]\w*\((?=[^()\n]*[,+\-*/%])[^()\n]*\)",
        # an expression of three operands: "s * s - sq", "x % m + 1"
        r"(?<![\w-])(?=(?:\d+|[A-Za-z_]\w*)\)?(?:\s*(?://|[+\-*/%])\s*\(?(?:\d+|[A-Za-z_]\w*)\)?)*?\s*(?://|[%*/])|"
        r"(?:(?:\d+|[A-Za-z_])\s*[+\-*/]\s*)*[A-Za-z_]\w)"
        r"(?:[A-Za-z_]\w*|\d+)\s*(?://|[+*/%]|-(?!\d))\s*(?:[A-Za-z_]\w*|\d+)\s*"
        r"(?://|[+\-*/%])\s*(?:[A-Za-z_]\w*|\d+)\b(?=[^\n]*?[A-Za-z_])",
        r"(?i:\bpseudo-?code\b)",
    )
)
_BULLET: Final = re.compile(r"^[\s>*•\-+]*(?:\d+[.)]\s*)?")
#: "a = 6, b = 12, k = 3 gives 2", "n = 2, k = 1 fails": one-letter inputs given values, then
#: prose; an input described, not a statement (issue 24, round 3)
_INPUT_VALUES: Final = re.compile(r"^[A-Za-z]\s*=\s*-?\d+(?:\.\d+)?(?:\s*(?:,|and)\s*[A-Za-z]\s*=\s*-?\d+(?:\.\d+)?)*"
                                  r"\s*(?:[,;:]\s*|\s+)[A-Za-z]{2,}")


def code_reasons(hint: str, own_names: set[str]) -> list[str]:
    reasons: list[str] = []
    if _FENCE.search(hint):
        reasons.append("code: fenced code block")
    span = _CODE_SPAN.search(hint)
    if span:
        reasons.append(f"code: inline code span {span.group()[:40]!r}")
    for line in hint.splitlines():
        stripped = _BULLET.sub("", line).strip().strip("`")
        if stripped and _STATEMENT_LINE.match(stripped) and not _INPUT_VALUES.match(stripped):
            reasons.append(f"code: statement line {stripped[:40]!r}")
            break
    for pattern in _INLINE_CODE:
        found = pattern.search(hint)
        if found:
            reasons.append(f"code: inline statement {found.group()[:40]!r}")
            break
    # an assigned name is followed by space or "=": it is one of the hint's whole words
    for name in sorted(own_names & set(WORD.findall(hint))):
        found = re.search(rf"(?<![\w.]){re.escape(name)}\s*=(?!=)\s*\S", hint)
        if found:
            reasons.append(f"code: assignment to the program's variable {name!r}")
            break
    return reasons


# --------------------------------------------------------------------------- location

_ENGLISH_SHORT: Final = frozenset(
    "a an as at be by do go he if in is it me my no of on or so to up us we all and any are "
    "but can did end few for get got had has her him his how its let may new not now odd off "
    "old one our out own put say see set she the too two use was way who why yes yet you add "
    "sum max min big low top key row ten six sub per via".split()
)
_RESERVED: Final = (
    frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins))
)
_CUES: Final = (
    "variable|array|list|dict|dictionary|set|map|counter|flag|index|pointer|accumulator|"
    "parameter|argument|function|method"
)
_LINE_NUMBER: Final = re.compile(r"\blines?\s*#?\s*\d+", re.IGNORECASE)
_STRUCTURE: Final = re.compile(
    r"\b(?:the|this|that|your|its|inner|outer|first|second|last|main|nested|same)\s+"
    r"(?:[\w-]+\s+){0,3}?"
    r"(?<!\bto\s)(?:for[- ]loop|while[- ]loop|loop|if[- ]statement|if[- ]condition|else[- ]branch|"
    r"branch|assignment|variable|code block|return statement|print statement|(?:list |dict |set )?"
    r"comprehension|lambda|(?:key|helper|inner|recursive|comparator|comparison|sort|sorting) function|"
    r"recursive call|base case|initiali[sz]ation|declaration|conditional|increment|decrement|"
    r"lines? of (?:the )?code|line (?:that|which|where))(?:s|es)?\b"
    # a check or step of the program, placed: "the comparison inside ...", "the check that decides"
    r"|\bthe\s+(?:[\w-]+\s+){0,2}?(?:comparison|condition|check|update|computation|calculation|step)\s+"
    r"(?:inside|in\s+the|within|on\s+line|that\s+(?:decides|checks|tests|compares|determines|controls|"
    r"updates|computes))\b"
    # "the issue seems to be in how the words are split", "the bug lies in the handling of ..."
    r"|\b(?:problem|issue|bug|fault|error|mistake|culprit|defect)\s+(?:is|lies|sits|seems\s+to\s+(?:be|lie)|"
    r"appears\s+to\s+(?:be|lie)|must\s+be|could\s+be|may\s+be|might\s+be)\s+(?:\w+\s+){0,2}?"
    r"(?:in|inside|within)\s+(?:how|the\s+way|the\s+(?:[\w-]+\s+)?(?:handling|logic|loop|update|check|"
    r"condition|comparison|computation|initiali[sz]ation|step|branch|indexing|slicing|parsing|splitting))\b"
    # "the set that remembers earlier values", "the dictionary used to count"
    r"|\bthe\s+(?:[\w-]+\s+)?(?:set|dict|dictionary|map|hash\s*map|stack|queue|heap|deque|counter|table|"
    r"cache|buffer|accumulator)\s+(?:that|which|used\s+to)\s+\w+"
    # "the indexing right after sorting", "the slicing"
    r"|\b(?:the|this|that)\s+(?:[\w-]+\s+)?(?:indexing|slicing|slice|subscript|index\s+expression)\b"
    # "the program's table of best sums": a part of the program, possessed
    r"|\b(?:program|solution|code)['’]s\s+(?:[\w-]+\s+){0,2}?(?:table|list|array|dictionary|dict|map|set|stack|queue|"
    r"counter|loop|function|variable|lookup|matrix|grid\s+of\s+\w+)\b"
    # "the part of the program that ...", "in how the code ..."
    # "the while condition", "the range given to the for", "the join line", "the split call", "the final print"
    r"|\bthe\s+(?:[\w-]+\s+){0,2}?(?:while|for|if|elif|else|return|print|join|split|sort|range|comparison|"
    r"assignment|loop|membership|generator)\s+(?:condition|header|line|call|statement|body|bound|clause|"
    r"test|expression)s?\b"
    r"|(?<!\ball\s)\bthe\s+(?:for|while|if|elif|else)\b(?!\s+(?:example|instance|a|an|the|each|every|all|"
    r"some|any|now|being|first|last)\b)(?!-)"
    r"|\bthe\s+(?:final|last|first|initial|closing|opening)\s+(?:print|return|line|statement|call|assignment|"
    r"join|split|sort)\b"
    r"|\b(?:upper|lower)\s+bound\s+of\s+the\s+(?:range|loop)\b|\bthe\s+(?:starting|initial)\s+value\s+"
    r"(?:chosen|given|assigned|used)\b|\bthe\s+(?:generator|membership\s+test)\b"
    r"|\b(?:part|region|section|portion|piece)\s+of\s+(?:the|your)\s+(?:program|code|solution|"
    r"implementation)\b|\bin\s+how\s+the\s+(?:program|code|solution)\b",
    re.IGNORECASE,
)


def code_identifiers(source: str) -> frozenset[str]:
    """Names the program defines or uses, minus keywords and builtins.

    Memoised (pure, and called for the same program at every hint attempt of a turn
    and by every episode that reaches the same program).
    """
    return _code_identifiers(source)


@functools.lru_cache(maxsize=4096)
def _code_identifiers(source: str) -> frozenset[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        names = set(re.findall(r"[A-Za-z_]\w*", source))
    else:
        names = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.alias):
                names.add((node.asname or node.name).split(".")[0])
    return frozenset(name for name in names if name not in _RESERVED)


def program_names(candidate_code: str, public_words: set[str]) -> set[str]:
    return {
        name
        for name in code_identifiers(candidate_code)
        if len(name) >= 2 and name.lower() not in public_words and name not in _ENGLISH_SHORT
    }


#: a part of a program named by what it is (the construct of a structural reference)
_CONSTRUCT: Final = (
    r"(?:check|test|condition|comparison|update|increment|decrement|initiali[sz]ation|assignment|computation|"
    r"calculation|formula|expression|call|guard|branch|loop|statement|header|clause|sort|search|traversal|"
    r"recursion|lookup|append|fill|built-?in|print|literal|division|slice|slicing)"
)
#: a data structure of the program: one of the input's words too ("the list"), so only placed or owned
_STRUCTURE_NOUN: Final = r"(?:table|list|array|dictionary|dict|map|set|stack|queue|counter|accumulator|offsets|buffer)"
#: where in the program: a position word after the construct
_POSITION: Final = (
    r"(?:(?:right\s+|just\s+|directly\s+|immediately\s+)?(?:before|after|inside|within|near|around)\b|"
    r"at\s+the\s+(?:top|bottom|start|end|beginning|head)\b|in\s+the\s+(?:loop|body|branch|function|program|code|"
    r"header|middle\s+of\s+the\s+(?:loop|program|code))\b|of\s+the\s+(?:loop|program|code|function|branch)\b|"
    r"on\s+line\b|(?:that|which)\s+(?:the\s+(?:program|solution|code)\s+)?(?:decides|checks|tests|compares|computes|"
    r"updates|builds|adds|returns|appends|sets|resets|handles|multiplies|prints|uses|keeps|fills|walks|runs)\b|"
    r"(?:the\s+)?(?:program|solution|code)\s+(?:uses|keeps|builds|holds|relies\s+on|applies|fills|walks|runs)\b)"
)
#: a sentence pointing at a part: "is where the mistake sits", "is the place to look", "is the suspect"
_POINTED: Final = (
    r"(?:\b(?:is|are)\s+(?:(?:probably|likely|most\s+likely|clearly)\s+)?(?:where|the\s+(?:part|place|spot|line|one|bit|"
    r"piece|area|region|suspect|culprit|bug|problem|faulty\s+\w+|wrong\s+(?:tool|choice|call|one))|(?:suspicious|faulty|off|broken|buggy|at\s+fault|"
    r"to\s+blame|responsible))\b|\bthe\s+(?:part|place|spot|area|region|bit|piece|section)\s+to\s+(?:look|examine|"
    r"check|inspect|focus|start|watch)\b|\b(?:sits|lies|hides)\b|\bgoes\s+wrong\b|\blook\s+(?:at|into)\b|"
    r"\bfocus\s+on\b|\bwhere\s+to\s+(?:look|start|search|dig)\b|\b(?:inspect|examine|scrutini[sz]e|suspect)\b)"
)
_PLACED: Final = re.compile(
    rf"\bthe\s+(?:[\w-]+\s+){{0,3}}?(?:{_CONSTRUCT}|{_STRUCTURE_NOUN})(?:\s+of\s+[\w-]+)?"
    rf"(?:\s+(?:built|used|created|computed|passed|given|stored|kept|defined|declared|made|called))?\s+{_POSITION}"
    rf"|\b(?:{_POSITION.replace('(?:(?:right', '(?:(?:right', 1)})\s+the\s+(?:[\w-]+\s+){{0,2}}?(?:loop|branch|function|"
    rf"check|comparison|condition|assignment|initiali[sz]ation|call|update|return|print)\b",
    re.IGNORECASE,
)
_CONSTRUCT_RE: Final = re.compile(rf"\bthe\s+(?:[\w-]+\s+){{0,3}}?{_CONSTRUCT}\b(?!-)", re.IGNORECASE)
_POINTED_RE: Final = re.compile(_POINTED, re.IGNORECASE)
#: "the part to look at is where the program decides ...": the program's act, pointed at
_WHERE_PROGRAM: Final = re.compile(
    r"\bwhere\s+(?:the\s+|your\s+)?(?:program|code|solution|algorithm|loop)\s+(?:decides|checks|tests|compares|"
    r"computes|updates|builds|adds|appends|handles|sets|resets|chooses|picks|sorts|loops|iterates|stores|keeps|"
    r"reads|splits|joins|multiplies|divides|initiali[sz]es)\b"
    r"|\bthe\s+(?:part|place|spot|area|region|bit|piece|section)\s+(?:to\s+(?:look\s+at|examine|inspect|check|focus\s+on)|"
    r"(?:that|which|where)\s+(?:decides|checks|handles|computes|updates|builds))\b",
    re.IGNORECASE,
)


def _structural_location(hint: str) -> str | None:
    """A structural reference to a part of the program: a construct with a position word, a
    construct pointed at in its sentence, or the program's act pointed at."""
    found = _PLACED.search(hint) or _WHERE_PROGRAM.search(hint)
    if found:
        return found.group()
    for sentence in _SENTENCES.split(hint):
        construct = _CONSTRUCT_RE.search(sentence)
        if construct and _POINTED_RE.search(sentence):
            return construct.group()
    return None


def location_reasons(hint: str, own_names: set[str]) -> list[str]:
    reasons: list[str] = []
    found = _LINE_NUMBER.search(hint)
    if found:
        reasons.append(f"location: line number {found.group()!r}")
    for name in sorted(own_names & set(WORD.findall(hint))):  # whole-word occurrences only
        escaped = re.escape(name)
        codey = "_" in name or any(c.isdigit() for c in name) or re.search("[a-z][A-Z]", name)
        marked = re.search(rf"[`'\"]{escaped}\b|\b{escaped}[`'\"]|\b{escaped}\s*[(\[]", hint)
        cued = re.search(
            rf"\b{escaped}\s+(?:{_CUES})\b|\b(?:{_CUES})\s+{escaped}\b", hint, re.IGNORECASE
        )
        if codey or len(name) <= 3 or marked or cued:
            reasons.append(f"location: names the program's identifier {name!r}")
    found = _STRUCTURE.search(hint)
    if found:
        reasons.append(f"location: refers to program structure {found.group()!r}")
    else:
        placed = _structural_location(hint)
        if placed:
            reasons.append(f"location: refers to a part of the program {placed[:40]!r}")
    return reasons


# --------------------------------------------------------------------------- direction

#: pointing verbs that also ask for a change in some frames ("Check for an empty list first", "Print the
#: count after the loop", "count a pair only while ..."): :func:`_imperative` reads them with its special
#: cases. Every other verb is read by construction (:mod:`.leakage_grammar`): revision 9 dropped the list
#: of change verbs that revisions 1-8 grew.
_POINTING_REPAIRS: Final = frozenset("check compare count print read remember run test verify walk".split())
#: a word after a sentence-initial verb that makes the verb a noun ("Sort order is ...")
_NOUN_AFTER: Final = frozenset("is are was were of order has have seems looks appears does did "
                               "can will would that".split())
#: "should/must ... be <participle>": a change to the program (passive), not a rule of the problem
_CHANGED: Final = (
    r"(?:initiali[sz]ed|increased|incremented|decremented|decreased|reset|changed|replaced|moved|added|"
    r"removed|swapped|stored|updated|used|called|set|appended|inserted|deleted|rewritten|revised|"
    r"converted|cast|clamped|wrapped|skipped|declared|defined|done\s+(?:with|by|using)|"
    r"computed\s+(?:with|by|using|from\s+(?:the\s+)?(?:right|left|end)|right\s+to\s+left|backwards|in\s+reverse)|"
    r"implemented|handled\s+(?:with|by|using)|moved|placed|started)"
)
_DIRECTION: Final = re.compile(
    # ("you can see that ...", "you could notice" perceive the symptom, revision 8)
    r"\byou\s+(?:should|must|need\s+to|have\s+to|could|can|might\s+want\s+to|want\s+to|may\s+want\s+to)\b"
    r"(?!\s+(?:already\s+|easily\s+|clearly\s+)?(?:see|notice|tell|observe|spot|verify\s+that|check\s+that)\b)"
    # "any sum you can actually get": what can be obtained, a relative clause on a quantity (revision 9)
    r"(?!\s+(?:actually\s+|ever\s+|possibly\s+)?(?:get|obtain|reach|achieve|form|make|buy|afford)\b)|"
    # a reminder is an instruction: "don't forget to output the last run", "remember to flush ..."
    r"\b(?:do\s+not|don['’]t|never)\s+forget\s+to\b|\bremember\s+to\b|"
    # the future or conditional of the same ask: "you'll want to record it", "you'd need to", "I'd suggest",
    # "it's worth keeping" (issue 24, round 3)
    r"\byou(?:['’]ll|['’]d|\s+will|\s+would)\s+(?:probably\s+|also\s+)?(?:want|need|have)\s+to\b|"
    r"\b(?:I|we)(?:['’]d|\s+would)?\s+(?:suggest|recommend|advise)\b|"
    r"\bit(?:['’]s|\s+is|\s+would\s+be|['’]d\s+be)\s+worth\s+[a-z]+ing\b|"
    rf"(?<!\bthat\s)(?<!\bwhich\s)(?<!\bwho\s)(?<!\bthere\s)\b(?:should|must|needs?\s+to|has\s+to|have\s+to)\s+"
    rf"(?:(?:also|now|instead|first|then|rather|only|not|never|always|still)\s+)?(?:(?:be|get)\s+{_CHANGED}\b|"
    r"(?:use|change|replace|switch|initiali[sz]e|add|remove|swap|move|reset|increment|decrement|insert|"
    r"modify|rewrite|update|store|keep|sort|iterate|loop|start|stop|skip|call|append|accept|check|"
    r"compare|subtract|process|traverse|visit|mark|convert|cast|clamp|wrap|guard|handle|allocate|"
    r"record|go|run|begin|restart|break|continue|exit|set)\b|be\s+(?:a|an)\s+(?:dict|dictionary|map|"
    r"hash\s*map|set|list|array|counter|stack|queue|heap|deque|tuple|integer|int|float|string|loop)\b|"
    r"be\s+(?!(?:decided|processed|handled|considered|counted|resolved|settled|seen|known)\b)[a-z]+(?:ed|en)\s+"
    r"(?:before|after|first|using|with|into|instead)\b)|"
    r"\b(?:use|using|try|do|call|apply|take|pick|choose)\b[^.\n]{0,40}\binstead\b|"
    r"\binstead\s+of\s+(?:using|calling|checking|computing|storing|adding|returning)\b|"
    r"\btry\s+(?:using|to|adding)\b|\bconsider\s+(?:using|adding|changing|"
    r"replacing|initiali[sz]ing)\b|\bmake\s+sure\b|\breplac(?:e|ing)\b|\bchang(?:e|ing)\b[^.\n]"
    r"{0,40}\bto\b|\bthe\s+fix\s+is\b|"
    # "would fix it", "solves it", "is the remedy", "It would help to", "what is needed is", "ought to continue"
    r"\b(?:would|will|should|could|might)\s+(?:\w+\s+)?(?:fix|solve|repair|correct|resolve|cure|avoid|remove)\b|"
    r"\b(?:fix(?:es)?|solves?|repairs?|corrects?|resolves?|cures?)\s+(?:it|this|that|the\s+(?:bug|problem|issue|"
    r"error|count|output|answer|result))\b|\bthe\s+(?:fix|remedy|cure|repair|correction|right\s+move)\s+"
    r"(?:would\s+be|is|will\s+be|could\s+be)\b|\bis\s+the\s+(?:remedy|fix|cure|way\s+to\s+go|way\s+to\s+fix\w*)\b|"
    r"\b(?:it|this|that)\s+would\s+(?:help|work|be\s+(?:better|enough|correct|right))\b|\bwould\s+work\s+if\b|"
    r"\bwhat\s+is\s+needed\s+is\b|\bought\s+to\s+(?!be\s+\d|(?:get|receive|print|output|return|show|give|"
    r"produce|yield)\b)\w+|\byou\s+need\b(?!\s*[:.;,)?!]|\s*$)|"
    # an expression asked for: "it needs 0 <= nr < h", "it should be (a - 1) // k" (issue 24, round 3)
    r"\b(?:needs|requires)\s+[`'\"(]*-?[\w.\[\]]+\)?\s*(?:<=|>=|==|!=|<|>)\s*[`'\"(]*-?[\w.\[\]]+|"
    r"\b(?:should|must|has\s+to|ought\s+to)\s+be\s+[`'\"(]*-?[\w.\[\]]+\)?\s*"
    r"(?:<=|>=|==|!=|<|>|\+|-(?=\s)|\*|//|%|/)\s*[`'\"(]*-?[\w.\[\]]+|"
    r"\bmakes?\s+the\s+\w+\s+(?:correct|right)\b|\bgives?\s+the\s+(?:right|correct)\s+(?:value|answer|result|output)\b|"
    r"\b(?:should|must|needs?\s+to|has\s+to)\s+be\s+(?:a|an)\s+[\w\s-]{0,30}?\s+rather\s+than\b|"
    # a change asked for with a gerund: "the hours just need reducing modulo 24", "wants resetting"
    r"\b(?:needs?|wants?|requires?)\s+(?:\w+\s+)?(?!(?:some|no|any|every)thing\b|being\b|having\b|knowing\b)"
    r"[a-z]+ing\b(?!\s+(?:of|that)\b)|"
    # "must become start + d"
    r"\b(?:should|must|needs?\s+to|has\s+to|ought\s+to)\s+(?:instead\s+)?become\b|"
    r"\b(?:needs|requires|is\s+missing|lacks)\s+(?:an?\s+|the\s+)?`?(?:abs|sorted|sort|set|min|max|sum|len|round|"
    r"int|str|reversed|range|break|return|continue|else|guard|modulo|mod)\b`?\s+(?:around|on|before|after|at|call|"
    r"here|there|to|in)\b|`?\b(?:abs|sorted|set|min|max|sum|len|round|reversed|break|return|continue|else)`?\s+"
    r"(?:is|are)\s+missing\b|"
    # suggestions in other moods: "you might keep ...", "have you considered adding ...", "what you want
    # is to dedupe ...", "how about sorting ..."
    r"\byou\s+(?:might|may|could|would)\s+(?:also\s+|first\s+|instead\s+)?(?!be\b|see\b|get\b|notice\b|find\b|"
    r"expect\b|think\b|have\b)[a-z]+\b|"
    r"\b(?:have|did)\s+you\s+(?:considered|tried|thought\s+(?:about|of))\s+[a-z]+ing\b|"
    r"\b(?:how|what)\s+about\s+[a-z]+ing\b|\bwhy\s+not\s+[a-z]+\b|"
    r"\bwhat\s+(?:you|the\s+(?:program|code|solution))\s+(?:want|need|should\s+do)\w*\s+(?:here\s+)?is\s+to\b|"
    r"\b(?:must|should|needs?\s+to|has\s+to)\s+not\s+(?:call|use|loop|scan|compute|recompute|iterate|sort|"
    r"append|print|add|subtract|reset)\b|"
    # "your stack-based search should push neighbours ...": the candidate's own code told what to do
    r"\byour\s+(?:[\w-]+\s+){0,3}?(?:should|must|needs?\s+to|has\s+to|ought\s+to)\s+(?:also\s+|instead\s+|"
    r"first\s+|then\s+)?(?!be\b|print|output|return|give|show|produce|report)[a-z]+\b|"
    r"(?<!\bthat\s)(?<!\bwhich\s)\b(?:should|must|needs?\s+to|has\s+to)\s+(?:also\s+|instead\s+|first\s+)?"
    r"(?:push|pop|explore|walk|step|reduce|wrap|round|apply|filter|drop|subtract|multiply|divide|merge|advance|"
    r"unmark|clear|truncate|cap|extend|shift|split|join|strip|negate|flip|invert|recompute|recurse)\b",
    re.IGNORECASE,
)
_SENTENCES: Final = re.compile(r"(?<=[.!?;:])\s+|\n+")
_LEAD: Final = frozenset("and then so just simply also first instead finally only".split())
#: a finite verb right after a sentence-initial repair verb makes that verb a noun, the sentence's
#: subject: "Count values are too small", "Output lines have ...", "Uppercase vowels are not counted"
_FINITE: Final = frozenset("is are was were has have had seems seem looks appears does do did can will "
                           "would pass passes fail fails print prints give gives come comes stay stays "
                           "contain contains exceed exceeds differ differs".split())
#: words that open a clause of their own inside an instruction ("Count values that are ...", "check for
#: an empty list first and print EMPTY")
_SUBORDINATE: Final = frozenset("that which who whose where when whenever if unless so because since until while "
                                "it they there we you he she as than once before after and or then what how whether".split())


#: words that open a verb's object (the verb is an instruction then)
_OBJECT_LEAD: Final = frozenset("the a an each every all both its their this that these those it them".split())
#: a complement that makes the verb before it a subject's predicate ("go wrong", "run out"); a degree
#: word makes it a noun with its adjective ("Output too large on ...", revision 8)
_COMPLEMENT: Final = frozenset("wrong right wrongly badly off astray awry missing unnoticed out "
                               "too very slightly much far".split())


#: verbs that also ask the programmer to observe, not to change, when their object is the output or a test
_OBSERVING: Final = frozenset("compare run test try trace start begin read".split())
_OBSERVED: Final = re.compile(r"\b(?:outputs?|expected|printed|answers?|results?|tests?|test\s+cases?|examples?|"
                              r"samples?|inputs?)\b", re.IGNORECASE)


def _imperative(clause: str, names: frozenset[str] = frozenset()) -> str | None:
    """The repair verb a clause opens with, as an instruction to the programmer (``names``: the
    program's identifiers, which after the verb are its object: "reset fails so ...")."""
    words: list[str] = re.findall(r"[A-Za-z0-9'][A-Za-z0-9'-]*", _BULLET.sub("", clause))
    while words and words[0].lower() in _LEAD:
        words = words[1:]
    if not words or words[0].lower() not in _POINTING_REPAIRS:
        return None
    # "Count the islands by hand": an exercise for the candidate (revision 9)
    if exercise(clause):
        return None
    # "Code: print(f"...")": a call written out (code), not an instruction in words
    if re.match(r"\s*(?:\w+\s+)*?" + re.escape(words[0]) + r"\(", _BULLET.sub("", clause)):
        return None
    # "Keep in mind that ...", "Remember that ...", "Bear in mind": a remark, not a repair
    if re.match(r"(?:keep|bear|remember|note|notice|observe|recall|mind)\s+(?:in\s+mind\b|that\b)",
                " ".join(words).lower()):
        return None
    if len(words) > 1 and words[1] in names and words[1].lower() not in _NOUN_AFTER:
        return words[0]
    if len(words) > 1 and words[1].lower() in _NOUN_AFTER:
        return None
    # "Test 3 prints 9": a noun with a number; "Count values are ...": a noun phrase as subject
    # ("Add (900, ...)": a literal after the verb is its object, not a number naming a noun)
    literal = re.match(r"\s*[A-Za-z]+\s+[(\[{\"']", _BULLET.sub("", clause))
    numbered = len(words) > 1 and words[1][0].isdigit() and not literal and (
        len(words) == 2 or words[2].lower() in _FINITE or words[2].lower() in ("of", "and", "or", "to"))
    if len(words) > 1 and (numbered or any(w.lower() in _FINITE for w in words[1:3])):
        return None
    # "Count values in the output are right": a bare noun after the verb and a finite verb later with no
    # clause of its own in between make the opening words the sentence's subject (revision 8)
    if len(words) > 2 and words[1].lower() not in (*_OBJECT_LEAD, "to") and words[1] not in names:
        for word in words[2:]:
            if word.lower() in _SUBORDINATE:
                break
            if word.lower() in _FINITE:
                return None
    # "Test lines with repeated words fail": a subject whose clause ends with its verb
    if words[-1].lower() in ("fail", "fails", "pass", "passes", "break", "breaks", "crash", "crashes"):
        return None
    # "Change amounts such as 5 ...", "Lowercase input like ff fails": a noun phrase with its example
    if len(words) > 2 and words[1].lower() not in _OBJECT_LEAD and words[2].lower() in ("such", "like", "containing",
                                                                                       "whose", "where"):
        return None
    # "..., and numbers one less than such squares, go wrong": a predicate, not an instruction
    if len(words) > 1 and words[1].lower() in _COMPLEMENT:
        return None
    # "Compare your output with the expected one", "Run the second test": observing the symptom (revision 8)
    if words[0].lower() in _OBSERVING and _OBSERVED.search(" ".join(words[1:])):
        return None
    # "Check the loop ..." points at a place; "Check for an empty list first" asks for a new test
    if words[0].lower() in ("check", "examine", "inspect", "look", "verify") and (
            len(words) < 2 or words[1].lower() not in ("for", "whether", "that", "if")) and not (
            words[0].lower() in ("check", "verify") and re.search(r"\b(?:before|after)\s+\w+ing\b", clause)):
        return None
    return words[0]


#: what comes right before a repair word that makes it part of a description: a relative clause with
#: its own subject ("the half that the division should keep is thrown away") or the program's choice
#: ("the condition that decides whether to replace best"): neither asks the programmer for a change (revision 8)
_DESCRIBED_CHOICE: Final = re.compile(
    r"(?:\b(?:that|which)\s+(?:the|its|this|each|every)\s+[\w-]+\s+|\bwhether\s+(?:or\s+not\s+)?to\s+)$", re.I)


#: "the solution subtracts the distance instead of adding it": what the program does, told against what it
#: should, describes it (state, L3), it does not ask for the change (revision 8)
_PROGRAM_DOES: Final = re.compile(r"\b(?:the\s+(?:solution|program|code|loop|function)|it)\s+(?:\w+ly\s+)?[a-z]+s\b"
                                  r"[^.;:!?]*$", re.I)


def _starts(sentence: str) -> list[str]:
    """Where an imperative may open in a sentence: its start, a clause after a colon or a spaced dash,
    after a lead word ("Also, require ..."), a clause opening with one ("..., so carry ..."), or the main
    clause after an adverbial one ("When the next is larger, subtract ..."); not a parenthetical between
    commas ("the first column, read from bottom to top, becomes ...": revision 9)."""
    pieces = _CLAUSE_SPLIT.split(sentence)
    parts, seps = pieces[0::2], pieces[1::2]
    starts = [parts[0]]
    for index, part in enumerate(parts[1:], 1):
        sep = seps[index - 1].strip()
        if sep and sep != "," or part[:1].islower() and (lead_only(parts[index - 1]) or adverbial(parts[0])
                                                         or starts_with_lead(part)):
            starts.append(part)
    return starts


def _constructed(sentence: str, names: frozenset[str]) -> str | None:
    """An imperative by construction (:mod:`.leakage_grammar`) at one of the sentence's :func:`_starts`,
    or a change coordinated with an imperative there."""
    for part in _starts(sentence):
        verb = constructed_imperative(part, names)
        if verb:
            return verb
        if _imperative_shape(part):
            verb = coordinated_imperative(part, names)
            if verb:
                return verb
    return None


#: where an imperative may also start inside a sentence: "In the loop, stop ...", "...: print", "... too
#: permissive - make it strict" (a spaced dash opens a clause; "out-of-range" does not, revision 8); the
#: marks are kept, since a colon or a spaced dash opens an instruction of its own and a comma only after
#: a lead word or an adverbial clause (revision 9)
_CLAUSE_SPLIT: Final = re.compile(r"(,\s*|:\s*|\s+[-–—]+\s+)")


def _imperative_shape(clause: str) -> bool:
    """Whether a clause opens with a bare verb, pointing or not ("Look one character ahead and ...")."""
    words: list[str] = re.findall(r"[A-Za-z][A-Za-z'-]*", clause)
    while words and words[0].lower() in LEAD:
        words = words[1:]
    return bool(words) and (pointing(words[0]) or open_verb(words[0]))


def direction_reasons(hint: str, names: frozenset[str] = frozenset()) -> list[str]:
    reasons: list[str] = []
    sentences = _SENTENCES.split(hint)
    for index, sentence in enumerate(sentences):
        # "Lowercasing the line first ... rather than ...": a repair told as a gerund
        gerund = re.match(r"\s*([A-Z][a-z]+ing)\b[^.\n]{0,80}?\b(?:rather\s+than|instead\s+of)\b", sentence)
        if gerund and gerund.group(1).lower()[:-3] not in ("someth", "noth", "everyth", "anyth"):
            reasons.append(f"direction: a repair told as a gerund {gerund.group(1)!r}")
            break
        verb = next((v for part in _starts(sentence) if (v := _imperative(part, names))), None)
        if verb:
            reasons.append(f"direction: imperative {verb!r}")
            break
        # a lone word before a colon heads what follows ("Symptom: ..."), unless nothing follows ("Change:")
        verb = _constructed(sentence, names) or (
            lone_verb(sentence) if not sentence.rstrip().endswith(":") or index == len(sentences) - 1 else None)
        if verb:
            reasons.append(f"direction: imperative by construction {verb!r}")
            break
        verb = request_verb(sentence, names)
        if verb:
            reasons.append(f"direction: request {verb!r}")
            break
    found = next((m for m in _DIRECTION.finditer(hint) if not _DESCRIBED_CHOICE.search(hint, 0, m.start())
                  and not (m.group().lower().startswith("instead") and _PROGRAM_DOES.search(hint, 0, m.start()))),
                 None)
    if found:
        reasons.append(f"direction: repair phrasing {found.group()[:30]!r}")
    return reasons
