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

Revision 13 (precision on unseen hints, by class): an inline code span of literals and operators only
("`7 -2 /`", "`//`") is an example input or the problem's operator, not code; a value placed by a position
word and then compared in quantity ("the value left on the stack after a division is one lower than it
should be") is an observation, not a location, unless the sentence points; a bare program name of up to
three letters that is a word of prose or mathematics ("day", "gcd"), unquoted and uncued, is the domain's.

Revision 14: code spans pair their backticks left to right (a search from any backtick read the prose between
two spans as one); at L5 a formula in mathematics' notation ("lcm = product / gcd", "ceil(s/2)": names, numbers,
= + - * / ^, no builtin, index, method or Python operator, outside backticks, not a value the program is told to
take) states the rule L5 gives, not code (:func:`formula_reasons`, applied by :mod:`.leakage`); revision 15:
so does, at L5, a code span in one-letter placeholders no program uses ("`[x] * n` creates n references to the
same x", :func:`idiom_reasons`).

Pure: no I/O.

Revision 16: a construct word the problem uses as a noun ("the increment", "after the call") names no region of
the candidate; a quoted word after "notion of" is its sense; at L5 one-letter subscripts in a sum's notation are
mathematics.

Revision 18: the code rules read markdown emphasis ("are *not* anagrams") and plain words set side by side with
slashes ("strike / spare / open-frame", none a name of the program) as prose, not an expression.
"""

from __future__ import annotations

import ast
import builtins
import functools
import keyword
import re
from typing import Final

__all__ = ["code_identifiers", "formula_reasons", "mathematical_formula"]


#: a maximal run of word characters: what "whole word" means throughout
WORD: Final = re.compile(r"\w+")


# --------------------------------------------------------------------------- code

_FENCE: Final = re.compile(r"```|~~~")
#: revision 13: a span with operators or brackets and a name ("`a[i] <= x`"); one of literals and
#: operators only is an example input ("`7 -2 /`", data) or an operator of the problem quoted ("`//`")
#: a code span's backticks pair left to right: a search from any backtick also matched the prose between a
#: closing one and the next opening one ("`a=1&b=2`. Repeated values under a single key (`x=1&x=2`)", its
#: spans replaced as data; revision 14), so spans are taken in order and their contents tested
_BACKTICKED: Final = re.compile(r"`[^`\n]*`")
_CODE_SPAN_CONTENT: Final = re.compile(r"`(?=[^`\n]*[A-Za-z_])[^`\n]*[=()\[\]{}:+\-*/<>%][^`\n]*`")
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
        # (revision 11: "print (the gcd)", "list (lcm is associative)": a word with a remark in parentheses
        # after a space, not a call)
        r"\b(?:print|input|range|len|int|str|sorted|enumerate|list|dict|set|sum|max|min|abs|any|all|map|zip)"
        r"(?:\(|\s+\((?![A-Za-z]+\s+[A-Za-z]+))(?:[^()\n]|\([^()\n]*\))*\)",
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
BULLET: Final = re.compile(r"^[\s>*•\-+]*(?:\d+[.)]\s*)?")
#: "a = 6, b = 12, k = 3 gives 2", "n = 2, k = 1 fails": one-letter inputs given values, then
#: prose; an input described, not a statement (issue 24, round 3)
_INPUT_VALUES: Final = re.compile(r"^[A-Za-z]\s*=\s*-?\d+(?:\.\d+)?(?:\s*(?:,|and)\s*[A-Za-z]\s*=\s*-?\d+(?:\.\d+)?)*"
                                  r"\s*(?:[,;:]\s*|\s+)[A-Za-z]{2,}")


#: revision 18: markdown emphasis, an asterisk hugging a word or phrase at each end ("are *not* anagrams")
_EMPHASIS: Final = re.compile(r"(?<![\w*`])(\*{1,2})(?=[A-Za-z])([^*`\n]+?)(?<=[A-Za-z])\1(?![\w*`])")
#: revision 18: words set side by side with slashes ("strike / spare / open-frame", "add/remove")
_SLASHED: Final = re.compile(r"(?<![\w/`])[A-Za-z]\w+(?:\s*/\s*[A-Za-z]\w+)+(?![\w/(`])")


def _prose_marks(hint: str, own_names: set[str]) -> str:
    """``hint`` with prose's own uses of code's operators read as prose (revision 18): emphasis is the words it
    stresses, and words of two or more letters, none a name of the program, set side by side with slashes are a
    list of alternatives ("or"). Every operand of such a mark is an English word, so it writes no code; an
    operand the program names ("total / count"), a number ("n / 2") or a letter ("a / b") keeps the operator."""
    hint = _EMPHASIS.sub(r"\2", hint)
    def listed(found: re.Match[str]) -> str:
        words = re.split(r"\s*/\s*", found.group())
        return found.group() if any(w in own_names for w in words) else " or ".join(words)
    return _SLASHED.sub(listed, hint)


def writes_python(content: str) -> bool:
    """Revision 19: whether a span's content is Python over names: it parses (a block header with its body left
    out, `if n % 2 == 0:` or `else:`, too) and holds a name. A board (`X X _ / O O _`), an output line
    (`09:00 2xx=1 3xx=0`; `price: int`, which parses only as a bare annotation), a half-typed input (`x[y`), a
    pattern (`x*`) or a tuple of literals is data."""
    text = content.strip()
    for attempt in (text, f"{text} pass", f"if 1:\n pass\n{text} pass"):
        try:
            tree = ast.parse(attempt)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        if all(isinstance(statement, ast.AnnAssign) and statement.value is None for statement in tree.body):
            return False
        return any(isinstance(node, ast.Name) for node in ast.walk(tree))
    return False


def code_reasons(hint: str, own_names: set[str], level: int = 6) -> list[str]:
    """``code`` (every level): a fenced block, an inline span, a statement line, an inline code shape. Below L3
    (revision 19) an inline span must :func:`writes_python`: there a hint speaks of inputs and outputs, and its
    spans were test data read as code (first seen, revisions 14-18: wrong alone 7 times, right once)."""
    reasons: list[str] = []
    hint = _prose_marks(hint, own_names)
    if _FENCE.search(hint):
        reasons.append("code: fenced code block")
    span = next((found for found in _BACKTICKED.finditer(hint) if _CODE_SPAN_CONTENT.fullmatch(found.group())
                 and (level >= 3 or writes_python(found.group()[1:-1]))), None)
    if span:
        reasons.append(f"code: inline code span {span.group()[:40]!r}")
    for line in hint.splitlines():
        stripped = BULLET.sub("", line).strip().strip("`")
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


#: revision 14: at L5 (L6 gives changes, and a formula there is one), a formula in the notation of mathematics ("F(0) = 0", "lcm = product / gcd", "ceil(s/2)"):
#: names, numbers, parentheses, "=" and + - * / ^ only, outside backticks, no name Python reserves (a builtin such as
#: ``int`` or ``max``, a keyword): it states the problem's rule, which L5 gives, not the program's code. First seen,
#: the code rules fired on such a formula alone at L5 three times (three sets) and were never right there; a
#: formula with a Python operator ("(a + b - 1) // b"), a method call, an index or a builtin stays code, and so
#: does one the program is told to take ("should be i + limit here", "update free to start + d rather than ...")
_MATH_FORMULA: Final = re.compile(r"[\w\s()+\-*/^=,]+")
_CODE_OPERATOR: Final = re.compile(r"//|==|\*\*|[+\-*/]=")
_PATCHED_BEFORE: Final = re.compile(r"(?:\b(?:update|set|assign|change|reset|initiali[sz]e|increase|decrease|replace|"
                                    r"turn)\w*\b[^.;:!?]*\b(?:to|with|by|into)|\bbecomes?|"
                                    r"\b(?:should|must|has\s+to|have\s+to|ought\s+to|needs?\s+to)\s+be)\s+$", re.I)
_PATCHED_AFTER: Final = re.compile(r"\s*,?\s*(?:rather\s+than|instead\s+of|not|here|there)\b", re.I)
_MATH_KINDS: Final = ("code: inline statement ", "code: program names in a code shape ")
#: revision 16: a one-letter subscript, read as mathematics only inside a sum's notation (see below)
_SUBSCRIPT: Final = re.compile(r"\b([A-Za-z])\[[A-Za-z]\]")
_SUM_BEFORE: Final = re.compile(r"\b(?:sum|product|total)\s+of\s+(?:all\s+)?$", re.I)
_SUM_AFTER: Final = re.compile(r"\s+(?:over|for)\s+(?:all|every|each)\b", re.I)


def mathematical_formula(fragment: str, hint: str) -> bool:
    """Whether ``fragment`` of ``hint`` is written in mathematics' notation, not Python's (see above)."""
    fragment = shown = fragment.strip()
    at = hint.find(fragment)
    # revision 16: subscripts in a sum's notation ("the sum of a[i]*b[j] over all i + j = k") are a_i, b_j
    if at >= 0 and _SUBSCRIPT.search(fragment) and (_SUM_BEFORE.search(hint, 0, at)
                                                    and _SUM_AFTER.match(hint, at + len(fragment))):
        fragment = _SUBSCRIPT.sub(lambda m: m.group(1), fragment)
    if not fragment or not _MATH_FORMULA.fullmatch(fragment) or _CODE_OPERATOR.search(fragment):
        return False
    if any(word in _RESERVED for word in re.findall(r"[A-Za-z_]\w*", fragment)):
        return False
    if at < 0 or hint.count("`", 0, at) % 2:
        return False
    fragment = shown
    # a value the program is told to take ("update free to start + d rather than t + d", "must become
    # start + d"): a patch in notation, code
    before = re.split(r"[.;:!?]", hint[:at])[-1]
    return not (_PATCHED_BEFORE.search(before) or _PATCHED_AFTER.match(hint, at + len(fragment)))


def formula_reasons(reasons: list[str], hint: str) -> list[str]:
    """Of ``reasons``, the code reasons that only read a formula in mathematics' notation (L5 drops them)."""
    out = []
    for reason in reasons:
        kind = next((k for k in _MATH_KINDS if reason.startswith(k)), None)
        if kind is not None:
            shown = reason[len(kind):]
            try:
                fragment = ast.literal_eval(shown)
            except (ValueError, SyntaxError):
                continue
            if isinstance(fragment, str) and len(fragment) < 40 and mathematical_formula(fragment, hint):
                out.append(reason)
    return out


#: revision 15: at L5, an inline code span written in one-letter placeholders none of the programs use ("`[x] *
#: n` creates n references to the same x"): a generic idiom that explains the concept L5 gives, not the
#: program's code; a span with a name of the program ("`[free] * levels`") stays code
_IDIOM_KIND: Final = "code: inline code span "


def idiom_reasons(reasons: list[str], names: frozenset[str]) -> list[str]:
    """Of ``reasons``, the inline code span reasons that only read a generic idiom in placeholders (L5 drops them)."""
    out = []
    for reason in reasons:
        if not reason.startswith(_IDIOM_KIND):
            continue
        try:
            span = ast.literal_eval(reason[len(_IDIOM_KIND):])
        except (ValueError, SyntaxError):
            continue
        words = re.findall(r"[A-Za-z_]\w*", span) if isinstance(span, str) and span.endswith("`") else []
        if words and all(len(word) == 1 and word not in names for word in words):
            out.append(reason)
    return out


# --------------------------------------------------------------------------- location

_ENGLISH_SHORT: Final = frozenset(
    "a an as at be by do go he if in is it me my no of on or so to up us we all and any are "
    "but can did end few for get got had has her him his how its let may new not now odd off "
    "old one our out own put say see set she the too two use was way who why yes yet you add "
    "sum max min big low top key row ten six sub per via".split()
)
#: revision 13: short program names that are also words of prose or of mathematics ("one day earlier", "the
#: gcd is 2"): written bare, unquoted and uncued, they name the domain's thing, not the program's identifier
_PROSE_SHORT: Final = frozenset(
    "day age bag box car cat cup dog egg fee gap hit job lap leg lot map net pay pen pin pot ray run sea sky sun "
    "tax tea tie tip toy war web win arc area bus cap cell coin fan gas ice ink lid oil pie rug tag van gcd lcm "
    "mod log exp sin cos tan avg mid".split()
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
#: up to three words between "the" and a construct's noun, none of them a subject pronoun or a
#: relative word: in "the length you print" or "the lines that print" the construct's word is the
#: verb of a relative clause about the output (the symptom), not a part of the program
_PREHEAD: Final = r"(?:(?!(?:you|we|i|it|they|he|she|one|that|which|who|whom)\b)[\w-]+\s+){0,3}?"
#: a sentence pointing at a part: "is where the mistake sits", "is the place to look", "is the suspect"
_POINTED: Final = (
    r"(?:\b(?:is|are)\s+(?:(?:probably|likely|most\s+likely|clearly)\s+)?(?:where|the\s+(?:part|place|spot|line|one|bit|"
    r"piece|area|region|suspect|culprit|bug|problem|faulty\s+\w+|wrong\s+(?:tool|choice|call|one))|(?:suspicious|faulty|off|broken|buggy|at\s+fault|"
    r"to\s+blame|responsible))\b|\bthe\s+(?:part|place|spot|area|region|bit|piece|section)\s+to\s+(?:look|examine|"
    r"check|inspect|focus|start|watch)\b|\b(?:sits|lies|hides)\b|\bgoes\s+wrong\b|\blook\s+(?:at|into)\b|"
    r"\bfocus\s+on\b|\bwhere\s+to\s+(?:look|start|search|dig)\b|\b(?:inspect|examine|scrutini[sz]e|suspect)\b)"
)
_PLACED: Final = re.compile(
    rf"\bthe\s+{_PREHEAD}(?:{_CONSTRUCT}|{_STRUCTURE_NOUN})(?:\s+of\s+[\w-]+)?"
    rf"(?:\s+(?:built|used|created|computed|passed|given|stored|kept|defined|declared|made|called))?\s+{_POSITION}"
    rf"|\b(?:{_POSITION.replace('(?:(?:right', '(?:(?:right', 1)})\s+the\s+(?:[\w-]+\s+){{0,2}}?(?:loop|branch|function|"
    rf"check|comparison|condition|assignment|initiali[sz]ation|call|update|return|print)\b",
    re.IGNORECASE,
)
_CONSTRUCT_RE: Final = re.compile(rf"\bthe\s+{_PREHEAD}{_CONSTRUCT}\b(?!-)", re.IGNORECASE)
_POINTED_RE: Final = re.compile(_POINTED, re.IGNORECASE)
#: "the part to look at is where the program decides ...": the program's act, pointed at
_WHERE_PROGRAM: Final = re.compile(
    r"\bwhere\s+(?:the\s+|your\s+)?(?:program|code|solution|algorithm|loop)\s+(?:decides|checks|tests|compares|"
    r"computes|updates|builds|adds|appends|handles|sets|resets|chooses|picks|sorts|loops|iterates|stores|keeps|"
    r"reads|splits|joins|multiplies|divides|initiali[sz]es)\b"
    r"|\bthe\s+(?:part|place|spot|area|region|bit|piece|section)\s+(?:to\s+(?:look\s+at|examine|inspect|check|focus\s+on)|"
    r"(?:that|which|where)\s+(?:decides|checks|handles|computes|updates|builds))\b"
    # a step of the processing pointed at: "look at how the events get ordered", "examine where the totals
    # are updated" (revision 11: once "you might want to look" no longer reads as a direction)
    r"|\b(?:look\s+(?:at|into)|examine|inspect|revisit|check)\s+(?:how|where|when)\s+(?:the\s+|your\s+)?"
    r"(?:[\w-]+\s+){1,2}?(?:get|gets|got|are|is|were|was)\s+(?:being\s+)?[a-z]+(?:ed|en)\b",
    re.IGNORECASE,
)


def _structural_location(hint: str) -> str | None:
    """A structural reference to a part of the program: a construct with a position word, a
    construct pointed at in its sentence, or the program's act pointed at."""
    found = _PLACED.search(hint) or _WHERE_PROGRAM.search(hint)
    if found:
        return found.group()
    for sentence in SENTENCES.split(hint):
        construct = next((m for m in _CONSTRUCT_RE.finditer(sentence) if not _of_data(sentence, m)), None)
        if construct and _POINTED_RE.search(sentence):
            return construct.group()
    return None


#: a line of the data, not of the program: "read on the first line", "the last line of the output"
_DATA_BEFORE: Final = re.compile(r"\b(?:read|given|entered|typed|supplied|written|printed|appears?)\s+(?:on|from|in|at|as)"
                                 r"\s+$", re.IGNORECASE)
_DATA_AFTER: Final = re.compile(r"\s+(?:(?:of|in|from)\s+(?:the\s+|each\s+|every\s+|a\s+|your\s+|its\s+)?(?:input|"
                                r"output|test|file|data|log|stdin|answer|expected)|(?:is|are|was)\s+(?:printed|missing|"
                                r"read|blank|empty)|printed|you\s+print)\b"
                                # "the first line 'aa bb'": a line given by its text, of the data (revision 12)
                                r"|\s*[:=]?\s*(?:'[^'\n=()\[\]]*'|\"[^\"\n=()\[\]]*\")", re.IGNORECASE)
#: a test case, not a condition test: "the only test where ...", "the third test with ..."
_TEST_CASE: Final = re.compile(r"\s+(?:where|in\s+which|with|that\s+fails|case|cases|\d)", re.IGNORECASE)


_CASE_WORDS: Final = frozenset("first second third fourth fifth sixth last only failing hidden sample public example "
                              "given other same next previous".split())


def _of_data(hint: str, found: re.Match[str]) -> bool:
    """Whether a construct word names the data, not the program (revision 10): a line of the input or
    the output ("the count read on the first line", "the last line of the output"), or a test case ("the
    only test where the value repeats")."""
    words = found.group().lower().split()
    if words[-1] in ("line", "lines"):
        return bool(_DATA_BEFORE.search(hint, 0, found.start()) or _DATA_AFTER.match(hint, found.end()))
    if words[-1] in ("test", "tests"):
        # "the third test", "the only test", "the failing test": a test case, told by its modifier
        return bool(_TEST_CASE.match(hint, found.end())) or bool(set(words) & _CASE_WORDS)
    return False


#: revision 13: what a value placed by a position word turns out to be ("the value left on the stack after a
#: division is one lower than it should be"): an observation of the symptom's value, not a place to look (a
#: quantity compared; "the length check before appending is wrong" still blames a construct)
_OBSERVED: Final = re.compile(
    r"[^.;!?]*?\b(?:is|are|was|were|ends?\s+up|comes?\s+out|turns?\s+out)\s+(?:(?:already|always|sometimes|then|"
    r"still|often)\s+)?(?:off\s+by\b|(?:one|\d+|much|slightly|far|a\s+bit|a\s+little)?\s*"
    r"(?:lower|higher|smaller|larger|bigger|less|more|greater|fewer|shorter|longer)\s+than\s+(?:it|they|expected|"
    r"the\s+expected)|too\s+(?:high|low|large|small|big|long|short))", re.IGNORECASE)


def _observed_value(hint: str, placed: str) -> bool:
    """Whether the sentence holding ``placed`` says, after it, what its value is (revision 13), and
    points at nothing: no pointing verb ("look at", "inspect", "suspect") in the sentence."""
    at = hint.find(placed)
    if at < 0:
        return False
    start = max((m.end() for m in SENTENCES.finditer(hint, 0, at)), default=0)
    stop = SENTENCES.search(hint, at + len(placed))
    sentence = hint[start: stop.start() if stop else len(hint)]
    return bool(_OBSERVED.match(hint, at + len(placed), stop.start() if stop else len(hint))
                and not _POINTED_RE.search(sentence))


def _problem_word(found: str, public: frozenset[str]) -> bool:
    """Revision 16: whether a construct's noun (the match's last word: "the increment", "the first call", "after
    the call") is a word the problem statement itself uses: the problem's thing or the test's step ("a single move
    overruns ... by less than the increment", "checks made after the call"), no region of the candidate."""
    words = re.findall(r"[A-Za-z]+", found)
    return bool(words) and words[-1].lower() in public


#: revision 16: a quoted word as a notion ("a single notion of \"seen\""): the word's sense, not the identifier
_NOTION: Final = r"\b(?:notion|sense|idea|kind|concept|meaning)\s+of\s+"


def location_reasons(hint: str, own_names: set[str], public: frozenset[str] = frozenset()) -> list[str]:
    """``location`` reasons; ``public`` (the words the problem statement uses as nouns, lower-cased) names the
    problem's things."""
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
        if marked and not codey and re.search(rf"{_NOTION}[\"'“]{escaped}[\"'”]", hint, re.IGNORECASE):
            marked = None
        if codey or (len(name) <= 3 and name.lower() not in _PROSE_SHORT) or marked or cued:
            reasons.append(f"location: names the program's identifier {name!r}")
    found = next((m for m in _STRUCTURE.finditer(hint) if not _of_data(hint, m)
                  and not _problem_word(m.group(), public)), None)
    if found:
        reasons.append(f"location: refers to program structure {found.group()!r}")
    else:
        placed = _structural_location(hint)
        if placed and not _observed_value(hint, placed) and not _problem_word(placed, public):
            reasons.append(f"location: refers to a part of the program {placed[:40]!r}")
    return reasons

#: where a hint's sentences end
SENTENCES: Final = re.compile(r"(?<=[.!?;:])\s+|\n+")

