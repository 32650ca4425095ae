"""Structural code rules: code told with the program's own names, and patches of the reference.

The wording rules (:mod:`.leakage_patterns`) read a hint's phrasing; these read its *structure*
against the two programs the feedback model may know: the candidate's (which the candidate
sees) and the reference (hidden). Seed 000, Table II: L6 gives a direction "without giving
code, pseudocode, or exact patch", so code is reserved for no level.

* **Code fragments** (``code``, every level): an identifier of the candidate or the reference
  inside a code shape: an assignment (``on_path[u] = True``, ``hours = (total // 60) % 24``),
  a subscript (``on_path[v]``), a call (``dfs(u)``), or an operator between operands at least
  one of which is such a name of two or more characters, subscripted or called (``start + d``,
  ``nx >= 0``, ``a[0] * a[1]``). An expression copied verbatim from the candidate's program is a
  *quote of the candidate*, which gives no code the candidate lacks: it points at a place
  (a location, below L4; see :func:`candidate_quotes`), unless the hint tells the candidate to
  write it ("use", "write", "set ... to", "move"). Revision 12: any fragment of the candidate's code,
  a statement too ("what `parent[a] = find(b)` does"), is such a quote unless the reference adds it
  (:func:`_additions`: a line the reference inserts, moves or re-indents, a token it changes), the hint
  tells the candidate to write it ("Write visited[u] = True") or chains it with other statements. Text of the problem
  statement is public and never counts. A method after a subscript or call, or a string's method
  (``adj[u].append(v)``, ``"".join(out)``), continues the operand; an expression of one-letter
  names verbatim from the candidate and named as a place ("the n ** 0.5 computation") is a quote.
* **Reference n-grams** (``code``, every level): a run of :data:`NGRAM` code tokens (names,
  numbers, strings, operators, brackets; at least two of them symbols and two not) that a
  line of the reference holds and the candidate's program does not: an exact patch of the
  reference, e.g. its literal tuples ``(1, -2), (2, -1)`` or ``(900, "CM")``, whatever the words
  around it. Reads the reference as hidden data; the quote rule (:mod:`.leakage_quotes`)
  still reports verbatim runs as quotes.

Revision 15: the candidate's own expression inside a relative clause that tells what a part of the program
does ("the two lines that call `normalize` and multiply by `target / original`") names the place, even where
the reference changes that line; told as what the part should do, it is code.

Revision 17: a reference n-gram is read within one code span or one stretch of prose, never across a span's edge; a
code span citing a whole statement of the candidate (a header with its colon, an assignment) named as a place is a
quote even where the reference changes that line, unless an edit is asked of it ("Drop the `if ...:` line").

Revision 18: a span quoting the candidate verbatim but for what an ellipsis leaves out ("`if dq[0] ...: dq.popleft()`",
"`total = ...`"), no edit asked of it, is a quote too (:data:`ELLIPSIS`); its code shapes are no code.

Everything derived from the two programs alone is memoised per (candidate, reference) pair,
so that a hint costs time in its own length. Pure: no I/O.
"""

from __future__ import annotations

import difflib
import functools
import re
from typing import Final

import msgspec

from .leakage_patterns import code_identifiers

__all__ = ["ELLIPSIS", "NGRAM", "ProgramShape", "candidate_quotes", "data_fragments", "quoted_spans", "program_shape", "public_words",
           "structural_code_reasons"]

#: tokens in a reference n-gram that counts as a patch
NGRAM: Final = 5

_TOKEN: Final = re.compile(
    r"\"[^\"\n]*\"|'[^'\n]*'|“[^”\n]*”|[A-Za-z_]\w*|\d+(?:\.\d+)?|//|\*\*|[<>=!]=|->|[-+*/%<>=()\[\]{},:]"
)
_SYMBOL: Final = frozenset("//,**,<=,>=,==,!=,->,-,+,*,/,%,<,>,=,(,),[,],{,},,,:".split(","))


def _tokens(text: str) -> list[str]:
    out = []
    for tok in _TOKEN.findall(text):
        if tok[0] in "\"'“":
            tok = "'" + tok[1:-1] + "'"
        out.append(tok)
    return out


def _is_symbol(tok: str) -> bool:
    return tok in _SYMBOL or tok == ","


def _grams(tokens: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text).replace('"', "'")


class ProgramShape(msgspec.Struct, frozen=True):
    """What the structural rules derive from the two programs alone."""

    #: identifiers of the candidate or the reference (not keywords or builtins)
    names: frozenset[str]
    #: the candidate's source without whitespace (double quotes as single)
    candidate: str
    #: code-token n-grams of reference lines that the candidate lacks
    patches: frozenset[tuple[str, ...]]
    #: the reference's code tokens, and for each whether the reference adds it (:func:`_additions`)
    reference: tuple[str, ...] = ()
    added: tuple[bool, ...] = ()
    #: names the candidate assigns (a program variable given a value is a statement, not an input)
    assigned: frozenset[str] = frozenset()


def program_shape(candidate: str, reference: str) -> ProgramShape:
    """The structural rules' view of the two programs (memoised)."""
    return _program_shape(candidate, reference)


@functools.lru_cache(maxsize=1024)
def _program_shape(candidate: str, reference: str) -> ProgramShape:
    names = code_identifiers(candidate) | code_identifiers(reference)
    candidate_lines = {" ".join(line.split()) for line in candidate.splitlines()}
    candidate_grams = _grams(_tokens(candidate), NGRAM)
    patches: set[tuple[str, ...]] = set()
    for line in reference.splitlines():
        if " ".join(line.split()) in candidate_lines:
            continue
        for gram in _grams(_tokens(line), NGRAM):
            symbols = sum(1 for t in gram if _is_symbol(t))
            if symbols >= 2 and NGRAM - symbols >= 2 and gram not in candidate_grams:
                patches.add(gram)
    tokens, added = _additions(candidate, reference)
    return ProgramShape(names=frozenset(names), candidate=_squash(candidate), patches=frozenset(patches),
                        reference=tokens, added=added, assigned=frozenset(
                            re.findall(r"^\s*([A-Za-z_]\w*)\s*(?:[-+*/%]|//)?=(?!=)", candidate, re.M)))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _additions(candidate: str, reference: str) -> tuple[tuple[str, ...], tuple[bool, ...]]:
    """The reference's tokens, each flagged when the reference adds it: a line the candidate lacks where it
    stands (inserted, moved or re-indented: all of it), or, in a line changed in place (same indentation),
    the tokens that differ ("<" for "<=")."""
    old = [line.rstrip() for line in candidate.splitlines() if line.strip()]
    new = [line.rstrip() for line in reference.splitlines() if line.strip()]
    tokens: list[str] = []
    flags: list[bool] = []
    matcher = difflib.SequenceMatcher(None, [" ".join(o.split()) + f"@{_indent(o)}" for o in old],
                                      [" ".join(n.split()) + f"@{_indent(n)}" for n in new], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        for k, line in enumerate(new[j1:j2]):
            mine = _tokens(line)
            if op == "equal":
                flags += [False] * len(mine)
            elif op == "replace" and i1 + k < i2 and _indent(old[i1 + k]) == _indent(line):
                theirs = _tokens(old[i1 + k])
                marks = [True] * len(mine)
                for tag, _, _, b1, b2 in difflib.SequenceMatcher(None, theirs, mine, autojunk=False).get_opcodes():
                    if tag == "equal":
                        marks[b1:b2] = [False] * (b2 - b1)
                flags += marks
            else:
                flags += [True] * len(mine)
            tokens += mine
    return tuple(tokens), tuple(flags)


def _own(text: str, shape: ProgramShape) -> bool:
    """Whether ``text`` is the candidate's own code and no part of what the reference adds: verbatim in the
    candidate (whitespace aside) and nowhere in the reference over a token the reference adds
    (revision 12). Such a fragment names a place of the program the candidate sees; the fix is what the
    reference adds."""
    # "events.sort(...)": a call with its arguments elided names the candidate's call of that name
    elided = re.fullmatch(r"([A-Za-z_][\w.]*)\(\s*(?:\.\.\.|…)\s*\)", text.strip())
    if elided:
        return _squash(elided.group(1)) + "(" in shape.candidate
    if not text.strip() or _squash(text) not in shape.candidate:
        return False
    run = tuple(_tokens(text))
    size = len(run)
    return not any(shape.reference[i : i + size] == run and any(shape.added[i : i + size])
                   for i in range(len(shape.reference) - size + 1))


#: an operand: a name or number, optionally subscripted or called (one level of nesting)
#: (issue 24, round 3: a method after a subscript or call, ``adj[u].append(v)``, and a string's
#: method, ``"".join(out)``, continue the same operand)
_OPERAND: Final = (r"(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*|\d+(?:\.\d+)?|\"[^\"\n]{0,12}\"(?=\.)|'[^'\n]{0,12}'(?=\.))"
                   r"(?:\[[^\[\]\n]*(?:\[[^\[\]\n]*\][^\[\]\n]*)*\]|\((?:[^()\n]|\([^()\n]*\))*\)|\.[A-Za-z_]\w*)*")
_OPERATOR: Final = r"(?://|\*\*|<=|>=|==|!=|[+*/%<>]|-(?=\s))"
#: one code fragment: assignment, or operator chain, or a subscript or call alone
_FRAGMENT: Final = re.compile(
    rf"(?<![\w.])(?P<lhs>{_OPERAND})\s*(?P<aug>//|\*\*|[-+*/%])?=(?!=)\s*\(?\s*(?P<rhs>-?{_OPERAND}"
    rf"(?:\s*{_OPERATOR}\s*\(?\s*-?{_OPERAND}\)?)*)"
    rf"|(?<![\w.])\(?(?P<left>{_OPERAND})\)?(?:\s*{_OPERATOR}\s*\(?\s*-?(?:{_OPERAND})\)?)+"
    rf"|(?<![\w.])(?P<alone>(?:[A-Za-z_]\w*|\"[^\"\n]{{0,12}}\"|'[^'\n]{{0,12}}')(?:\.[A-Za-z_]\w*)*"
    rf"(?:\[[^\[\]\n]+\]|\((?:[^()\n]|\([^()\n]*\))*\))+(?:\.[A-Za-z_]\w*(?:\[[^\[\]\n]+\]|\((?:[^()\n]|\([^()\n]*\))*\))+)*)"
)
_NAME: Final = re.compile(r"[A-Za-z_]\w*")
#: the hint tells the candidate to write the fragment: "Write visited[u] = True", "set x to ..."
_WRITE: Final = re.compile(
    r"\b(?:write|writes|put|use|using|add|insert|append|assign|move|moving|indent|make\s+it|(?:change|set|update|reset|turn|"
    r"initiali[sz]e)\s+(?:it|them|[\w\[\]]+)\s+to|replace\s+\S+\s+with|set|becomes?)\s*[`'\"]?\s*$",
    re.I,
)


#: "Compare when x == y holds": an imperative to compare, the comparison it names is to be written
_COMPARE: Final = re.compile(r"(?:^|[.;!?:]\s+)compare\s+(?:when|whether|if|that|how)?\s*[`'\"]?\s*$", re.I)


#: a construct named just before a quoted expression, or a verb of the program introducing it
_PLACE_NOUN: Final = (r"(?:expression|condition|comparison|line|call|check|test|term|operand|loop|branch|statement|"
                      r"part|computation|calculation|product|sum|update|guard|header|bound|argument)")
_FRAMED_BEFORE: Final = re.compile(
    rf"\b(?:{_PLACE_NOUN}s?|(?:which|that|it|comparing|computing|checking|using|calling|multiplying|adding)"
    rf"(?:\s+(?:adds|computes|compares|checks|multiplies|returns|prints|uses|divides|calls|tests|takes))?)"
    rf"[\s,:`'\"]*(?:\w+[\s,:`'\"]+){{0,2}}$",
    re.I,
)
#: the fragment continues a statement ("for i in range(n)", "return sorted(a)"): code, not a name
_STATEMENT_LEAD: Final = re.compile(r"\b(?:for\s+[\w, ]+\s+in|while|if|elif|return|yield|lambda[^:]*:|print\(|"
                                    r"not\s+in)\s*[`'\"]?\s*$")
_REPLACED: Final = re.compile(r"\b(?:replace|replacing|rewrite|rewriting)\s+(?:[^.;\n]{0,60}?\s(?:and|or)\s+)?[`'\"]?$",
                             re.I)


#: a relative clause after a part of the program, up to the fragment, in one sentence
_DESCRIBING: Final = re.compile(
    rf"\b(?:{_PLACE_NOUN}|code|helper|function)s?\b[^.;:!?]*?\b(?:that|which)\s+[a-z]+\b[^.;:!?]*$", re.I)
_PRESCRIBED: Final = re.compile(r"\b(?:should|must|need|needs|has\s+to|have\s+to|ought|instead|rather|"
                                r"supposed|want|meant)\b", re.I)


def _described(before: str) -> bool:
    """Whether ``before`` ends inside a relative clause describing what a part of the program does."""
    found = _DESCRIBING.search(before)
    return found is not None and not _PRESCRIBED.search(found.group())


def _in_words(rest: str) -> bool:
    """Whether what replaces the quoted code ("... with a two-sided range check") is told in words."""
    sentence = re.split(r"[.;!?\n]", rest, maxsplit=1)[0]
    found = re.search(r"\b(?:with|by)\b", sentence)
    return found is not None and not re.search(r"[<>=+*/%\[\]()]|\s-\s", sentence[found.end():])
_FRAMED_AFTER: Final = re.compile(rf"[\s`'\")]*(?:\w+\s+){{0,1}}{_PLACE_NOUN}s?\b", re.I)


#: a statement of the candidate quoted as the place it stands: "Take another look at `if ...`", "right after
#: `total += ...`", "the `x = y` line" (revision 11)
_PLACED_BEFORE: Final = re.compile(
    r"\b(?:at|after|before|around|near|inside|below|above|following|from|on)\s+(?:the\s+(?:\w+\s+){0,2}?)?"
    r"[`'\"]?\s*(?:(?:if|elif|while|for\s+[\w, ]+\s+in|return)\s+)?$", re.I)
#: the opening mark of a citation, with the statement's head inside it: "`if ", "'"
_CITED: Final = re.compile(r"(?P<mark>[`'\"])(?P<head>(?:if|elif|while|for\s+[\w, ]+\s+in|return)\s+)?$")
#: the hint tells the candidate to call it: "Call restock([7, 2], 5) again"
_CALL_VERB: Final = re.compile(r"\b(?:call|calling|invoke|invoking|return|returning)\s*[`'\"]?\s*$", re.I)
#: what a literal argument list may hold: strings removed, only numbers, brackets and separators remain
_LITERALS: Final = re.compile(r"[\d\s.,\-+()\[\]{}:]*")
#: the kinds of fragment :func:`_fragments` tells apart
CODE, QUOTE, DATA = "code", "quote", "data"


def _literal_call(text: str, public: frozenset[str]) -> bool:
    """Whether ``text`` calls a function the problem names on literal arguments only:
    ``wrap('aa bb', 4)`` is a test's input written as the problem writes its calls, not code."""
    found = re.fullmatch(r"([A-Za-z_]\w*)\((.*)\)", text.strip(), re.S)
    if not found or found.group(1).lower() not in public:
        return False
    args = re.sub(r"\"[^\"\n]*\"|'[^'\n]*'|\b(?:True|False|None)\b", "", found.group(2))
    return bool(found.group(2).strip()) and _LITERALS.fullmatch(args) is not None


def _spec_arithmetic(found: re.Match[str], names: list[str], public: frozenset[str]) -> bool:
    """An operator chain on the problem's own words and numbers, no subscript or call ("a line of
    width + 1 characters", "length <= width"): the specification's quantities, not the program's code
    (the caller first lets the candidate's own expression be a quote: "the n ** 0.5 computation")."""
    return (found.group("left") is not None and not re.search(r"[\[(]", found.group())
            and all(n.lower() in public for n in names))


def _fragments(hint: str, shape: ProgramShape, public: frozenset[str] = frozenset()) -> list[tuple[re.Match[str], str]]:
    """Code fragments of ``hint`` that use a program name, each with its kind: :data:`CODE`, a
    :data:`QUOTE` of the candidate, or :data:`DATA` (a test input written as a call); arithmetic on the
    problem's own words is left out (the wording rules still read it: "Replace ... with lo <= x <= hi")."""
    out: list[tuple[re.Match[str], str]] = []
    for found in _FRAGMENT.finditer(hint):
        text = found.group()
        names = [n for n in _NAME.findall(text) if n in shape.names]
        if not names:
            continue
        shaped = bool(re.search(r"[\[(]", text))
        before, after = hint[max(0, found.start() - 40) : found.start()], hint[found.end() : found.end() + 25]
        written = bool(_WRITE.search(before))
        verbatim = _squash(text) in shape.candidate and not written
        # revision 11: a call of the problem's function on literals is an input; arithmetic on the
        # problem's own words is its specification; neither is code unless the hint says to write it
        if not written and not _CALL_VERB.search(before) and _literal_call(text, public):
            out.append((found, DATA))
            continue
        if not written and _squash(text) not in shape.candidate and _spec_arithmetic(found, names, public):
            continue
        if found.group("lhs") is not None:
            # "n = 1" describes an input; a longer name, a subscript or an expression is code
            if not (len(found.group("lhs")) >= 2 or found.group("aug") or re.search(r"[A-Za-z_(\[]", found.group("rhs"))):
                continue
        elif found.group("left") is not None:
            # an operator between operands, one of them a program name of 2+ characters or a
            # subscripted or called name: "start + d", "nx >= 0"; not "n - 1", "k * 2"
            if not (shaped or any(len(n) >= 2 for n in names)):
                # ... unless the candidate's own expression is named as a place: "the n ** 0.5
                # computation" (issue 24, round 3)
                if verbatim and (_FRAMED_BEFORE.search(before) or _FRAMED_AFTER.match(after)):
                    out.append((found, QUOTE))
                continue
        # "Replace nr < h and nc < w with a two-sided range check": the candidate's code named as what
        # to replace, the replacement told in words (issue 24, round 3)
        replaced = bool(_REPLACED.search(hint[max(0, found.start() - 80): found.start()])
                        and _squash(text) in shape.candidate and _in_words(hint[found.end():]))
        quote = replaced or (found.group("lhs") is None and verbatim and not _STATEMENT_LEAD.search(before)
                 and bool(found.group("alone") or _FRAMED_BEFORE.search(before) or _FRAMED_AFTER.match(after)))
        # revision 15: inside a relative clause that tells what a part of the program does ("the two lines
        # ... that call `normalize` and multiply by `target / original`"), the candidate's own expression
        # describes the place; told as what the part should do ("that should multiply by ...") it is code
        quote = quote or (verbatim and _described(hint[: found.start()]))
        # revision 11: a statement of the candidate, whole as the candidate has it (with its "if" or
        # "return") and set off as a citation (backticks or quotes around it), quoted as the place it
        # stands ("look at `if s > ends[j]`", "the `result = balances` line", "right after `total += ...`"),
        # gives no code the candidate lacks: a location. Unmarked ("the cur = word line") it stays code.
        if not quote and verbatim:
            cited = _CITED.search(before)
            if cited and hint[found.end() : found.end() + 2].lstrip(":").startswith(cited.group("mark")):
                whole = (cited.group("head") or "") + text
                quote = _squash(whole) in shape.candidate and bool(
                    _PLACED_BEFORE.search(before) or _FRAMED_BEFORE.search(before) or _FRAMED_AFTER.match(after))
        # revision 17: a fragment inside a code span that cites a whole statement of the candidate verbatim (its
        # colon aside: "the `if counts[0] == 3:` return", "the `upper = (base[0] + 1, 0, 0)` line") framed as a place
        # quotes it, whatever the reference does to that line; the fragment alone may stop short of the span
        if not quote and not written:
            quote = _cited_statement(hint, found, shape)
        # revision 12: any fragment of the candidate's own code the reference does not add, not told to
        # write, names the candidate's code ("what `parent[a] = find(b)` does"): a place, never code
        # (not a statement chained with others, "if k: a = b; c = d"; not what a replacement replaces,
        # "Replace lo < x with ...": that is :data:`_REPLACED`'s; not a comparison the hint says to make)
        chained = bool(re.search(r"[;:]\s*$", before) or re.match(r"\s*;", hint[found.end():]))
        replacing = bool(_REPLACED.search(hint[max(0, found.start() - 80): found.start()]))
        if (not quote and not written and not chained and not replacing and not _COMPARE.search(before)
                and not _STATEMENT_LEAD.search(before) and _own(text, shape)):
            quote = True
        out.append((found, QUOTE if quote else CODE))
    return out


#: after a cited statement, a word naming it as a place ("the `if ...:` return fires first")
_STATEMENT_AFTER: Final = re.compile(r"\s*(?:return|assignment|line|statement|branch|test|check|condition|loop|call|"
                                     r"header|guard|update)s?\b", re.I)


#: an edit asked of the statement cited after it: what to delete, move or rewrite is the patch
_EDITED: Final = re.compile(r"\b(?:drop|delete|remove|dedent|indent|unindent|move|swap|replace|change|rewrite|put|"
                            r"insert|add|wrap|split|merge|reorder)\b[^.;:!?]*$", re.I)


def _cited_statement(hint: str, found: re.Match[str], shape: ProgramShape) -> bool:
    """Whether ``found`` lies in a code span holding one of the candidate's statements whole and verbatim, the span
    named as a place (after "at the", before "line" / "return" / a construct), and not asked to be written."""
    span = next((m for m in _SPAN.finditer(hint) if m.start() < found.start() and found.end() <= m.end()), None)
    if span is None:
        return False
    content = span.group(1).strip()
    if not content.endswith(":") and not re.search(r"\w\s*=(?!=)", content):
        return False  # a statement: a header with its colon or an assignment, not an expression
    if _squash(content.rstrip(":")) not in shape.candidate:
        return False
    before = hint[max(0, span.start() - 40): span.start() + 1]
    if (_WRITE.search(before[:-1]) or _REPLACED.search(hint[max(0, span.start() - 80): span.start()])
            or _EDITED.search(re.split(r"[.;!?]\s", hint[:span.start()])[-1])):
        return False  # "Drop the `if ...:` line": the statement is the patch's object, the deletion the patch
    after = hint[span.end(): span.end() + 25]
    return bool(_PLACED_BEFORE.search(before) or _FRAMED_BEFORE.search(before[:-1]) or _FRAMED_AFTER.match(after)
                or _STATEMENT_AFTER.match(after))


def structural_code_reasons(hint: str, problem: str, shape: ProgramShape) -> list[str]:
    """``code`` reasons: a program name in a code shape that is not a quote of the candidate,
    or an n-gram of a reference line the candidate lacks."""
    reasons: list[str] = []
    public = _squash(problem)
    for found, kind in _fragments(hint, shape, public_words(problem)):
        if kind == CODE and _squash(found.group()) not in public:
            reasons.append(f"code: program names in a code shape {found.group()[:40]!r}")
            break
    if shape.patches:
        # revision 17: a run is read inside one code span or one stretch of prose, never across a span's edge
        # ("(`a.popleft()` and `b.popleft()`)": the prose's closing bracket is no part of the quoted call)
        for piece in hint.split("`"):
            tokens = _tokens(piece)
            if any(tuple(tokens[i : i + NGRAM]) in shape.patches for i in range(len(tokens) - NGRAM + 1)):
                reasons.append("code: repeats code of the reference that the candidate's program lacks")
                break
    return reasons


def candidate_quotes(hint: str, shape: ProgramShape, problem: str = "") -> list[str]:
    """Fragments of the candidate's code quoted in ``hint`` (a location, below L4)."""
    return [found.group() for found, kind in _fragments(hint, shape, public_words(problem)) if kind == QUOTE]


#: an inline code span
_SPAN: Final = re.compile(r"`([^`\n]+)`")
#: an ellipsis: what a quote leaves out
ELLIPSIS: Final = re.compile(r"\.\.\.+|…")


def _in_candidate(content: str, candidate: str) -> bool:
    """Whether a span's content is the candidate's code, verbatim but for what an ellipsis leaves out (revision 18:
    "`if dq[0] ...: dq.popleft()`", "`chargeable = ...`"): each piece, in order, is in the candidate's squashed code.
    Such a span writes nothing the program lacks; it points at a line, a quote (a location), never code."""
    pieces = [_squash(piece) for piece in ELLIPSIS.split(content)]
    at = 0
    for piece in pieces:
        if not piece:
            continue
        at = candidate.find(piece, at)
        if at < 0:
            return False
        at += len(piece)
    return any(pieces)


def quoted_spans(hint: str, shape: ProgramShape, problem: str = "") -> list[str]:
    """Inline code spans holding the candidate's own code verbatim, with a name in them ("`[[]] * n` repeats
    a reference"), that the hint does not tell the candidate to write: a quote of a place (revision 11); or verbatim
    but for what an ellipsis leaves out, and no edit asked of it ("Drop the `if ...:` line" is a patch; revision 18).
    Not a lone word of the problem statement ("`width`", "`changes`": the problem's own parameter, revision 12)."""
    public = public_words(problem)
    return [found.group() for found in _SPAN.finditer(hint)
            if re.search(r"[A-Za-z_]", found.group(1))
            and (_squash(found.group(1)) in shape.candidate
                 or (_in_candidate(found.group(1), shape.candidate)
                     and not _EDITED.search(re.split(r"[.;!?]\s", hint[:found.start()])[-1])))
            and not (re.fullmatch(r"\s*[A-Za-z_]\w*\s*", found.group(1)) and found.group(1).strip().lower() in public)
            and not _WRITE.search(hint[max(0, found.start() - 40) : found.start()])]


#: a parameter of the problem given a literal value: "n=3", "deps = [(0, 2), (1, 2)]", "text='aa bb'"
_GIVEN: Final = re.compile(r"(?<![\w.\[(])(?P<name>[A-Za-z_]\w*)\s*=(?!=)\s*(?P<value>-?\d+(?:\.\d+)?(?![\w.(\[])|"
                           r"\"[^\"\n]*\"|'[^'\n]*'|\[[^\n]*?\](?=[\s,.;:)]|$)|\([^\n]*?\)(?=[\s,.;:]|$))")


def data_fragments(hint: str, shape: ProgramShape, problem: str) -> list[str]:
    """Fragments of ``hint`` in a code shape that are data, not code: a call of the problem's function on
    literals, a test's input (revision 11); a parameter the problem names given a literal value
    ("e.g. n=3 with deps = [(0, 2), (1, 2)]": an example input, revision 12)."""
    public = public_words(problem)
    calls = [found.group() for found, kind in _fragments(hint, shape, public) if kind == DATA]
    given = [found.group() for found in _GIVEN.finditer(hint)
             if found.group("name").lower() in public and found.group("name") not in shape.assigned
             and not _WRITE.search(hint[max(0, found.start() - 40): found.start()])
             and _LITERALS.fullmatch(re.sub(r"\"[^\"\n]*\"|'[^'\n]*'|\b(?:True|False|None)\b", "",
                                            found.group("value"))) is not None]
    return calls + given


@functools.lru_cache(maxsize=256)
def public_words(problem: str) -> frozenset[str]:
    """The problem statement's words, lower-cased: what the candidate reads anyway."""
    return frozenset(word.lower() for word in re.findall(r"[A-Za-z_]\w*", problem))
