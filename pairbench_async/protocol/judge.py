"""The LLM judge of the leakage validator: a rubric per level, and its verdict read back.

Seed 000, Section IV-C: "After generation, PAIR-BENCH validates each hint against
level-specific leakage criteria. A hint is rejected if it reveals information reserved
for a higher hint level". The rules (:mod:`.leakage`) check that offline; a run with
``--validator-model SPEC`` also asks a model, with a rubric built from Table II's own
definitions and examples (:mod:`.boundaries`): every level the hint may draw on, and
every boundary it may not cross, each with the paper's words.

* The rules run first; the judge sees only hints the rules accepted
  (:func:`judge_hint`), so it can only add rejections, and costs nothing on hints
  that leak plainly.
* The judge sees the problem statement, the candidate's current program (a
  location is a name *in that program*) and the hint; never hidden tests, expected
  outputs or the reference (the quote rule checks those).
* Its reply is asked as one JSON object ``{"verdict", "boundary", "reason"}``;
  :func:`parse_verdict` also reads a bare ``ACCEPT``/``REJECT`` first word, fenced
  JSON, and synonyms of the boundary names ("fault location", "L4", ...).
* A reply with no readable verdict is recorded as ``malformed`` (with the head of
  the reply) and does not reject: the rules' acceptance stands. A judge that
  cannot follow the format must not turn every hint into the fallback.
* A rejection that names a boundary the level allows ("location" for an L5 hint)
  contradicts the rubric and counts as an acceptance, recorded with that note; a
  rejection naming no known boundary stands.

Pure: no I/O; the call itself is the caller's ``ask_validator``.
"""

from __future__ import annotations

import json
import re
from typing import Final
from typing import Protocol as Interface

from ..core.types import Message
from .boundaries import BOUNDARIES, BOUNDARY_NAMES, reserved
from .context import TurnContext
from .evidence import Evidence
from .hints import HINT_LEVELS, hint_level
from .leakage import HiddenData, JudgeVerdict, ValidationPolicy, validate_hint

__all__ = ["JudgeIO", "judge_hint", "judge_messages", "parse_verdict"]

#: program characters shown to the judge (a location needs the program, not all of it)
_MAX_PROGRAM: Final = 4000
#: characters of a reason, or of a malformed reply, kept in the record
_MAX_REASON: Final = 300

_SYSTEM: Final = (
    "You review feedback hints for a programming benchmark. Hints are given at six levels of "
    "increasing detail (Table II of PAIR-BENCH); each level may reveal what the levels below it "
    "reveal, plus its own kind of information, and nothing reserved for a higher level:\n{levels}\n"
    "No level may give code, pseudocode, or an exact patch. You decide whether one hint reveals "
    "information reserved for a level above the one it was written for."
)


#: Table II's words per level: L1's own row, and the boundary each higher level opens
_REVEALS: Final = {1: "Only the observed incorrect behavior; no input pattern, cause, or code location.",
                   **{b.level: b.what for b in BOUNDARIES if b.level <= 6}}


def _levels_text() -> str:
    return "\n".join(f'L{lv.number} {lv.name}: {_REVEALS[lv.number]} Example: "{lv.example}"'
                      for lv in HINT_LEVELS)


def judge_messages(hint: str, level: int, problem: str, program: str) -> list[Message]:
    """The judge's conversation for one hint written for ``level``."""
    info = hint_level(level)
    forbidden = reserved(level)
    names = ", ".join(b.name for b in forbidden)
    rows = "\n".join(
        f"- {b.name}: {b.what}" + (f" (allowed from L{b.level} on)" if b.level <= 6 else "")
        for b in forbidden
    )
    shown = program if len(program) <= _MAX_PROGRAM else program[:_MAX_PROGRAM] + "\n# ... (cut)"
    user = (
        f"Problem statement:\n{problem.strip() or '(none)'}\n\n"
        f"The programmer's current program:\n{shown.strip() or '(none)'}\n\n"
        f"Hint written for level L{level} ({info.name}):\n<<<\n{hint.strip()}\n>>>\n\n"
        f"An L{level} hint may reveal: " + "; ".join(f"L{lv.number} {lv.name}" for lv in HINT_LEVELS[:level])
        + ".\nIt must NOT reveal any of these:\n" + rows + "\n\n"
        "Saying how the output differs from the expected one is never a leak. Reject the hint only if "
        "it clearly reveals one of the forbidden kinds of information.\n"
        "Answer with one JSON object and nothing else:\n"
        f'{{"verdict": "accept" or "reject", "boundary": one of {names} (the one it reveals) or "none", '
        '"reason": "one short sentence"}'
    )
    return [Message(role="system", content=_SYSTEM.format(levels=_levels_text())),
            Message(role="user", content=user)]


_ACCEPT: Final = frozenset({"accept", "accepted", "pass", "passes", "ok", "clean", "allowed", "valid"})
_REJECT: Final = frozenset({"reject", "rejected", "fail", "fails", "leak", "leaks", "leaking", "invalid"})
_ALIASES: Final = {
    **{name.replace("_", " "): name for name in BOUNDARY_NAMES},
    "inputpattern": "input_pattern", "input": "input_pattern", "edge case": "input_pattern",
    "state tracking": "state", "statetracking": "state", "missing state": "state",
    "fault location": "location", "code location": "location", "fault localization": "location",
    "conceptual correction": "concept", "concept correction": "concept", "concept. correction": "concept",
    "conceptual": "concept", "invariant": "concept",
    "repair direction": "direction", "implementation direction": "direction", "fix": "direction",
    "pseudocode": "code", "patch": "code", "exact patch": "code",
    **{f"l{b.level}": b.name for b in BOUNDARIES if b.level <= 6},
}


def _boundary(value: object) -> tuple[str | None, bool]:
    """(boundary name or None, whether a non-empty value was given)."""
    if not isinstance(value, str):
        return None, False
    key = " ".join(value.strip().lower().replace("-", " ").replace("_", " ").split())
    if key in ("", "none", "null", "n/a", "no"):
        return None, False
    return _ALIASES.get(key) or _ALIASES.get(key.replace(" ", "")), True


def _json_object(text: str) -> dict[str, object] | None:
    """The LAST JSON object of the reply: a model that drafts and then corrects itself means its last word."""
    decoder = json.JSONDecoder()
    last = None
    for found in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, found.start())
        except ValueError:
            continue
        if isinstance(value, dict):
            last = {str(k).lower(): v for k, v in value.items()}
    return last


#: a reasoning model's thinking block (closed, or cut off at the end of the reply)
_THINK: Final = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|$)", re.S | re.I)
#: a verdict line: "Verdict: reject. Boundary: fault location." (any case)
_VERDICT_LINE: Final = re.compile(r"verdict\W*([A-Za-z]+)", re.I)


def parse_verdict(reply: str, level: int) -> JudgeVerdict:
    """The judge's verdict on a level-``level`` hint, from its reply (see the module doc)."""
    raw = _THINK.sub("", reply).strip()
    obj = _json_object(raw)
    if obj is not None:
        word = str(obj.get("verdict", obj.get("decision", ""))).strip().lower()
        boundary, named = _boundary(obj.get("boundary"))
        reason = str(obj.get("reason", "")).strip()
    else:
        lines = list(_VERDICT_LINE.finditer(raw))
        first = lines[-1] if lines else re.match(r"[\W_]*([A-Za-z]+)", raw)
        word = first.group(1).lower() if first else ""
        after = raw[first.start():] if lines and first else raw
        mentioned = re.search(r"boundary\W+([A-Za-z_. -]+?)(?:[\n,.;\"]|$)", after, re.IGNORECASE)
        boundary, named = _boundary(mentioned.group(1)) if mentioned else (None, False)
        reason = raw[first.end():].strip(" :;,.-\n") if first else ""
    reason = " ".join(reason.split())[:_MAX_REASON]
    if word in _ACCEPT:
        return JudgeVerdict(verdict="accept", reason=reason)
    if word not in _REJECT:
        return JudgeVerdict(verdict="malformed", reason=" ".join(raw.split())[:_MAX_REASON])
    allowed = {b.name for b in BOUNDARIES} - {b.name for b in reserved(level)}
    if boundary in allowed:
        return JudgeVerdict(verdict="accept", boundary=boundary,
                            reason=f"[rejection names {boundary}, which L{level} may reveal] {reason}".strip())
    if boundary is None and named:
        reason = f"[unknown boundary] {reason}".strip()
    return JudgeVerdict(verdict="reject", boundary=boundary, reason=reason)


class JudgeIO(Interface):
    """The part of a protocol's window on the run the judge needs (``FeedbackIO`` has it)."""

    #: a validator model is configured (``--validator-model``)
    judging: bool

    async def ask_validator(self, messages: list[Message], context: TurnContext) -> str: ...


async def judge_hint(
    io: JudgeIO,
    text: str,
    *,
    level: int,
    evidence: Evidence,
    candidate_code: str,
    hidden: HiddenData,
    context: TurnContext,
    policy: ValidationPolicy | None = None,
) -> JudgeVerdict | None:
    """The judge's verdict on ``text``, or None: no judge, or the rules reject it already.

    Give the result to :func:`.leakage.review` as ``judge=``.
    """
    if not io.judging or validate_hint(text, level, evidence, candidate_code, hidden, policy):
        return None
    reply = await io.ask_validator(judge_messages(text, level, evidence.problem or "", candidate_code), context)
    return parse_verdict(reply, level)
