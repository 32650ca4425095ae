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
  variables (``count = 0``), calls of common builtins and methods, ``==``/``!=``.
* ``location`` (below L4): line numbers (``line 12``), identifiers of the candidate's
  program that the problem statement does not use (those with ``_``, digits or
  camelCase, abbreviations of up to three letters, any quoted or followed by ``(``,
  and plain words next to a cue like "variable", "array", "function"), and references
  to program structure ("the loop", "the if statement", "the variable").
* ``direction`` (below L6): a sentence opening with a repair verb (change, replace,
  use, add, initialise, ...) and phrases like "should", "must be", "you need to",
  "make sure", "replace", "change ... to", "use ... instead", "instead of using".

Pure: no I/O.
"""

from __future__ import annotations

import ast
import builtins
import functools
import keyword
import re
from typing import Final

__all__ = ["code_identifiers"]


#: a maximal run of word characters: what "whole word" means throughout
_WORD: Final = re.compile(r"\w+")


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
        r"\blambda\b[^:\n]{0,40}:",
        r"\b\w+(?:\[[^\]\n]*\])?\s*(?:\+|-|\*|/|//|%|\||&|\^|<<|>>)=\s*\S",
        r"\b[A-Za-z_]\w*(?:\[[^\]\n]*\])?\s*=(?!=)\s*[^\n.;,]*?\b[A-Za-z_]\w*\s*[(\[]",
        r"\breturn\s+[A-Za-z_][\w.]*\s*[(\[+\-*/%]",
        r"\b(?:print|input|range|len|int|str|sorted|enumerate|list|dict|set|sum|max|min|abs)"
        r"\s*\([^()\n]*\)",
        r"\.\s*(?:append|extend|pop|sort|split|join|strip|add|get|items|keys|values|insert|"
        r"remove|update|readline|count|index)\s*\(",
        r"\b(?:elif|else)\s*:",
        r"[\w\])]\s*(?:==|!=)\s*[\w\[(\-'\"]",
        r"\bsys\.stdin\b",
    )
)
_BULLET: Final = re.compile(r"^[\s>*•\-+]*(?:\d+[.)]\s*)?")


def _code_reasons(hint: str, own_names: set[str]) -> list[str]:
    reasons: list[str] = []
    if _FENCE.search(hint):
        reasons.append("code: fenced code block")
    span = _CODE_SPAN.search(hint)
    if span:
        reasons.append(f"code: inline code span {span.group()[:40]!r}")
    for line in hint.splitlines():
        stripped = _BULLET.sub("", line).strip().strip("`")
        if stripped and _STATEMENT_LINE.match(stripped):
            reasons.append(f"code: statement line {stripped[:40]!r}")
            break
    for pattern in _INLINE_CODE:
        found = pattern.search(hint)
        if found:
            reasons.append(f"code: inline statement {found.group()[:40]!r}")
            break
    # an assigned name is followed by space or "=": it is one of the hint's whole words
    for name in sorted(own_names & set(_WORD.findall(hint))):
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
    r"(?:for[- ]loop|while[- ]loop|loop|if[- ]statement|if[- ]condition|else[- ]branch|"
    r"branch|assignment|variable|code block|return statement)s?\b",
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


def _own_names(candidate_code: str, public_words: set[str]) -> set[str]:
    return {
        name
        for name in code_identifiers(candidate_code)
        if len(name) >= 2 and name.lower() not in public_words and name not in _ENGLISH_SHORT
    }


def _location_reasons(hint: str, own_names: set[str]) -> list[str]:
    reasons: list[str] = []
    found = _LINE_NUMBER.search(hint)
    if found:
        reasons.append(f"location: line number {found.group()!r}")
    for name in sorted(own_names & set(_WORD.findall(hint))):  # whole-word occurrences only
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
    return reasons


# --------------------------------------------------------------------------- direction

_REPAIR_VERBS: Final = frozenset(
    "change replace use switch initialise initialize add remove delete swap move reset "
    "increment decrement insert modify rewrite revise update set fix store keep track sort "
    "handle return break compute convert cast append make ensure avoid skip accumulate apply "
    "call declare define wrap clamp limit iterate loop start introduce maintain guard "
    "subtract multiply divide replace treat count".split()
)
_DIRECTION: Final = re.compile(
    r"\bshould\b|\bmust\s+(?:be|use|have)\b|\byou\s+(?:need|have)\s+to\b|"
    r"\b(?:use|using|try|do|call|apply|take|pick|choose)\b[^.\n]{0,40}\binstead\b|"
    r"\binstead\s+of\s+(?:using|calling|checking|computing|storing|adding|returning)\b|"
    r"\byou\s+must\b|\btry\s+(?:using|to|adding)\b|\bconsider\s+(?:using|adding|changing|"
    r"replacing|initiali[sz]ing)\b|\bmake\s+sure\b|\breplac(?:e|ing)\b|\bchang(?:e|ing)\b[^.\n]"
    r"{0,40}\bto\b",
    re.IGNORECASE,
)
_SENTENCES: Final = re.compile(r"(?<=[.!?;])\s+|\n+")


def _direction_reasons(hint: str) -> list[str]:
    reasons: list[str] = []
    for sentence in _SENTENCES.split(hint):
        words = re.findall(r"[A-Za-z']+", _BULLET.sub("", sentence))
        if words and words[0].lower() in _REPAIR_VERBS:
            reasons.append(f"direction: imperative {words[0]!r}")
            break
    found = _DIRECTION.search(hint)
    if found:
        reasons.append(f"direction: repair phrasing {found.group()[:30]!r}")
    return reasons
