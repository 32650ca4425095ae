"""Per-episode transcripts: what each turn of an episode gave, got and changed.

The HTML report's transcripts (:mod:`.transcript_html`) and the searchable viewer
(:mod:`.transcript_viewer`) show, for every episode, each turn's hint (its level, the
rejected attempts with the leakage validator's reasons, whether the fallback hint was
used), the targeted scenario, every model call of the turn (the messages sent and the
raw reply), the candidate's program as a unified diff against the turn before, and the
hidden tests' verdicts. This module turns records into that data; it is pure (records
and the run's messages in, values out) so the caps can be tested without a page.

**Hidden data.** A page may be shared, so by default it holds no hidden test's input or
expected output: the feedback model's messages (its evidence prompt holds the failing
tests) are withheld, and so is everything of a turn that was not hidden-test protected
(its feedback, drafts, prompts and replies: the ``test`` and ``code`` protocols show the
candidate hidden data). ``with_tests=True`` (``report --with-tests``) shows them all, and
each turn's failing tests' inputs and expected outputs when the run's dataset reads back.

The records do not hold the instance's buggy program: the caller may pass it
(``buggy``, by instance id) so turn 0 is diffed against it; otherwise turn 0 shows its
full program. Everything is capped (:class:`TranscriptLimits`) so the report of a
sweep of thousands of episodes stays a page a browser opens; every cut is counted, so
the page can say what it left out. Texts stay raw here: the renderer escapes them.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from typing import Final, Literal

import msgspec

from ..core.types import Instance, Message
from ..runlog.records import CallRecord, EpisodeRecord, Record, SummaryCall, TurnRecord

__all__ = [
    "AttemptView",
    "CallView",
    "EpisodeTranscript",
    "NOT_RECORDED",
    "WITHHELD_EVIDENCE",
    "WITHHELD_UNPROTECTED",
    "MessageView",
    "TargetView",
    "TestView",
    "TranscriptLimits",
    "Transcripts",
    "TurnView",
    "build_transcripts",
    "clip",
    "fold_ids",
    "level_label",
    "of_settings",
]

Status = Literal["done", "error", "unfinished"]
CodeKind = Literal["diff", "program", "unchanged", "omitted"]


class TranscriptLimits(msgspec.Struct, frozen=True, kw_only=True):
    """How much of each episode the page shows (a cut is always said on the page)."""

    #: code lines (diff or program) shown per turn, and per episode over all its turns
    turn_code_lines: int = 150
    episode_code_lines: int = 600
    #: characters of one code line
    line_chars: int = 400
    #: characters of the hint and of the error
    text_chars: int = 2_000
    #: characters of a rejected attempt and of each of its reasons
    attempt_chars: int = 600
    #: rejected attempts shown per turn
    attempts: int = 10
    #: test ids listed per list (failed, passed, fixed, broken, target) per turn
    test_ids: int = 200
    #: characters of transcript text in the whole report (about the HTML it adds, in bytes,
    #: less its markup); the episodes past it are in the index only
    total_chars: int = 12_000_000
    #: characters of one message sent to a model, and of one raw reply
    message_chars: int = 20_000
    #: failing tests shown per turn (``with_tests``), and characters of each input and output
    tests_shown: int = 5
    test_chars: int = 2_000


class AttemptView(msgspec.Struct, frozen=True, kw_only=True):
    """One rejected hint generation and why the validator rejected it."""

    number: int  # 1-based, among all attempts of the turn
    text: str
    reasons: list[str]


#: why a call's messages are not on the page
NOT_RECORDED: Final = "not recorded (the run predates message recording)"
WITHHELD_EVIDENCE: Final = ("withheld: the feedback model's evidence holds hidden tests "
                            "(report --with-tests shows it)")
WITHHELD_UNPROTECTED: Final = ("withheld: this turn showed hidden test data "
                               "(report --with-tests shows it)")
#: what stands for a reply or draft the validator has not passed: it may quote what the
#: model was shown (the hidden tests, the reference); the accepted hint is what it passed
WITHHELD_DRAFT: Final = ("withheld: the feedback model's own text may quote the hidden tests or the "
                         "reference (the hint it led to is shown; report --with-tests shows this too)")


class CallView(msgspec.Struct, frozen=True, kw_only=True):
    """One model call of a turn: the messages sent (ids into :attr:`Transcripts.messages`)
    and the raw reply, or why either is not shown."""

    role: str
    model: str
    #: message ids, in order; empty when ``messages_note`` says why
    messages: list[str]
    messages_note: str = ""
    reply: str | None
    reply_note: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    attempts: int = 1


class TestView(msgspec.Struct, frozen=True, kw_only=True):
    """A failing hidden test, with its input and expected output (``with_tests`` only)."""

    id: str
    input: str
    expected: str


class MessageView(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """A message as the page shows it (its content cut to ``message_chars``)."""

    role: str
    content: str


class TargetView(msgspec.Struct, frozen=True, kw_only=True):
    """The targeted failure scenario G_t of a hinted turn."""

    scenario_id: str
    failure: str
    grouping: str
    shape: str | None
    tests: list[str]
    tests_total: int
    representatives: list[str]
    continued: bool


class TurnView(msgspec.Struct, frozen=True, kw_only=True):
    """One evaluated turn as the page shows it."""

    turn: int
    #: the feedback text the candidate got (None: no hint this turn)
    hint: str | None
    #: the hint's level (1..6), 0 for unleveled feedback (baselines), None without a hint
    level: int | None
    fallback: bool
    attempts_total: int
    rejected: list[AttemptView]
    rejected_omitted: int
    target: TargetView | None
    #: "diff" against the previous program (or the buggy one at turn 0), the full
    #: "program" (turn 0 without the buggy program), "unchanged", or "omitted" (the
    #: episode's code lines are used up)
    code: CodeKind
    code_lines: list[str]
    code_omitted: int
    #: what turn 0 is compared with, or "turn t-1"; "" when nothing is compared
    code_base: str
    added: int
    removed: int
    code_found: bool
    verdicts: dict[str, int]
    pass_rate: float
    passed: list[str]
    passed_total: int
    failed: list[str]
    failed_total: int
    #: the earlier turn whose lists these are, when the passing set did not change since
    #: (``passed`` and ``failed`` are then left empty: the page points there)
    tests_as_turn: int | None = None
    #: tests passing now that failed at the turn before (empty at turn 0)
    fixed: list[str]
    fixed_total: int
    broken: list[str]
    broken_total: int
    protected: bool
    #: turn 0 is the erroneous program as given (FeedbackEval's protocols), not a reply
    given: bool = False
    #: words of the feedback past the protocol's word cap, cut before the candidate saw it
    words_cut: int = 0
    #: the turn's model calls, in order
    calls: list[CallView] = []
    #: the feedback and drafts are withheld (an unprotected turn, without ``with_tests``)
    withheld: bool = False
    #: failing tests with their inputs and expected outputs (``with_tests`` only)
    failing_tests: list[TestView] = []


class EpisodeTranscript(msgspec.Struct, frozen=True, kw_only=True):
    """One episode: its identity, how it ended, and its turns (turn 0 first)."""

    #: the HTML anchor of the episode (``ep-<n>``, n its position in the index)
    anchor: str
    episode_id: str
    instance_id: str
    model: str
    protocol: str
    run: int
    status: Status
    stop_reason: str | None
    #: turns after turn 0 (the episode record's count, else the recorded turns)
    turns_count: int
    initial_pass_rate: float | None
    final_pass_rate: float | None
    error: str | None
    turns: list[TurnView]
    #: False when the episode is in the index only (past ``TranscriptLimits.total_chars``)
    shown: bool = True
    #: what was cut from this episode, in words
    cuts: list[str] = []
    #: the ``--sweep`` setting the episode ran in (:func:`of_settings`); "" in a single run
    setting: str = ""


class Transcripts(msgspec.Struct, frozen=True, kw_only=True):
    """Every episode of a run, grouped by instance, model, protocol and run."""

    episodes: list[EpisodeTranscript]
    limits: TranscriptLimits
    #: whether turn 0 was diffed against the instances' buggy programs
    buggy_known: bool
    #: report-wide notes (episodes left in the index only)
    notes: list[str] = []
    #: every message a shown call names, by id (role and content, cut)
    messages: dict[str, MessageView] = {}
    #: whether hidden test data is shown (``report --with-tests``)
    with_tests: bool = False


def clip(text: str, limit: int) -> tuple[str, int]:
    """``text`` cut to ``limit`` characters, and how many were cut."""
    if len(text) <= limit:
        return text, 0
    return text[:limit], len(text) - limit


def _clip_note(text: str, limit: int) -> str:
    kept, cut = clip(text, limit)
    return kept + (f" … [{cut} more characters cut]" if cut else "")


def level_label(level: int | None) -> str:
    """``L3``, ``feedback`` (a baseline's unleveled text) or ``no hint``."""
    if level is None:
        return "no hint"
    return f"L{level}" if level >= 1 else "feedback"


_NUMBERED = re.compile(r"(.*?)(\d+)")


def fold_ids(ids: Sequence[str]) -> list[str]:
    """Runs of three or more consecutively numbered ids folded into ``first–last``.

    ``["t01", "t02", "t03", "t05"]`` gives ``["t01–t03", "t05"]``: ids that share a prefix
    and whose trailing numbers follow each other, in the given order; other ids stay as
    they are. A 120-test suite's failing set is often a few such runs.
    """
    out: list[str] = []
    run: list[str] = []
    key: tuple[str, int] | None = None

    def flush() -> None:
        out.extend([f"{run[0]}–{run[-1]}"] if len(run) >= 3 else run)
        run.clear()

    for test_id in ids:
        m = _NUMBERED.fullmatch(test_id)
        here = (m.group(1), int(m.group(2))) if m else None
        if here is not None and key is not None and run and here == (key[0], key[1] + 1):
            run.append(test_id)
        else:
            flush()
            run.append(test_id)
        key = here
    flush()
    return out


def _ids(ids: Sequence[str], limit: int) -> list[str]:
    return list(ids[:limit])


def _diff(before: str, after: str, before_name: str, after_name: str) -> tuple[list[str], int, int]:
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), before_name,
                                      after_name, n=3, lineterm=""))
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return lines, added, removed


class _Budget:
    """The code lines an episode may still show."""

    def __init__(self, limits: TranscriptLimits) -> None:
        self.limits = limits
        self.episode = limits.episode_code_lines

    def take(self, lines: list[str]) -> tuple[list[str], int, bool]:
        """The lines shown (each cut to ``line_chars``), how many were cut, and True when
        none could be shown."""
        allowed = min(self.limits.turn_code_lines, self.episode)
        if allowed <= 0 and lines:
            return [], len(lines), True
        shown = [_clip_note(line, self.limits.line_chars) for line in lines[:allowed]]
        self.episode -= len(shown)
        return shown, len(lines) - len(shown), False


def _size(ep: EpisodeTranscript, sizes: Mapping[str, int]) -> int:
    """About how many characters the episode adds to the page (text plus markup)."""
    total = 600 + len(ep.error or "")
    for t in ep.turns:
        total += 350 + len(t.hint or "") + sum(len(line) + 30 for line in t.code_lines)
        total += sum(len(a.text) + sum(map(len, a.reasons)) + 80 for a in t.rejected)
        lists = [t.passed, t.failed, t.fixed, t.broken, t.target.tests if t.target else []]
        total += sum(len(i) + 2 for ids in lists for i in ids)
        total += sum(len(x.input) + len(x.expected) + 100 for x in t.failing_tests)
        for c in t.calls:
            total += 300 + len(c.reply or "") + sum(sizes.get(m, 0) + 60 for m in c.messages)
    return total


def _test_text(value: object) -> str:
    """A call test's arguments or expected value, as JSON."""
    return "" if value is msgspec.UNSET else msgspec.json.encode(value).decode()


class _Calls:
    """The calls of the shown turns, and the messages they name (each cut once)."""

    def __init__(self, messages: Mapping[str, Message], limits: TranscriptLimits,
                 with_tests: bool) -> None:
        self.source, self.limits, self.with_tests = messages, limits, with_tests
        self.shown: dict[str, MessageView] = {}
        #: characters of each shown message (the page repeats a message per call)
        self.sizes: dict[str, int] = {}

    def view(self, call: CallRecord, protected: bool, role: str | None = None) -> CallView:
        """``role`` names a call made outside the turn's protocol (``summary``: the
        ``--obfuscate`` summary, whose messages hold only the problem statement)."""
        withheld = not self.with_tests and not protected
        # the feedback model and its judge were shown the evidence: their messages hold it,
        # and their replies (drafts, verdicts' reasons) may quote it
        evidence = call.role in ("feedback", "validator") and role is None and not self.with_tests
        note = ""
        ids: list[str] = []
        if withheld:
            note = WITHHELD_UNPROTECTED
        elif evidence:
            note = WITHHELD_EVIDENCE
        elif not call.messages or any(m not in self.source for m in call.messages):
            note = NOT_RECORDED
        else:
            ids = list(call.messages)
            for mid in ids:
                if mid not in self.shown:
                    m = self.source[mid]
                    self.shown[mid] = MessageView(role=m.role,
                                                  content=_clip_note(m.content, self.limits.message_chars))
                    self.sizes[mid] = len(self.shown[mid].content)
        return CallView(role=role or call.role, model=call.model, messages=ids, messages_note=note,
                        reply=None if withheld or evidence else _clip_note(call.text, self.limits.message_chars),
                        reply_note=WITHHELD_UNPROTECTED if withheld else WITHHELD_DRAFT if evidence else "",
                        prompt_tokens=call.usage.prompt_tokens,
                        completion_tokens=call.usage.completion_tokens,
                        latency_ms=call.latency_ms, attempts=call.attempts)


def _turn_view(rec: TurnRecord, prev: TurnRecord | None, base: str | None,
               limits: TranscriptLimits, budget: _Budget, listed: int | None,
               calls: _Calls, instance: Instance | None,
               summary: CallRecord | None = None) -> tuple[TurnView, list[str]]:
    """One turn; ``listed`` is the turn whose test lists stand for this one's, if unchanged;
    ``instance`` (``with_tests`` and the dataset read back) gives the failing tests;
    ``summary`` is the ``--obfuscate`` summary's call, shown first at turn 0."""
    cuts: list[str] = []
    withheld = not rec.protected and not calls.with_tests
    hint = rec.hint if not withheld else None
    text: str | None = None
    rejected: list[AttemptView] = []
    attempts_total = 0
    rejected_total = 0
    if hint is not None:
        text = _clip_note(hint.text, limits.text_chars)
        if len(hint.text) > limits.text_chars:
            cuts.append(f"turn {rec.turn}: hint cut to {limits.text_chars} characters")
        attempts_total = len(hint.attempts)
        for number, attempt in enumerate(hint.attempts, start=1):
            if not attempt.reasons:
                continue
            rejected_total += 1
            if len(rejected) < limits.attempts:
                rejected.append(AttemptView(
                    number=number,  # a rejected draft may quote hidden data: shown only on request
                    text=_clip_note(attempt.text, limits.attempt_chars) if calls.with_tests else WITHHELD_DRAFT,
                    reasons=[_clip_note(r, limits.attempt_chars) for r in attempt.reasons]))
    target = None
    if rec.target is not None:
        t = rec.target
        target = TargetView(scenario_id=t.scenario_id, failure=t.failure, grouping=t.grouping,
                            shape=t.shape, tests=_ids(t.tests, limits.test_ids),
                            tests_total=len(t.tests),
                            representatives=_ids(t.representatives, limits.test_ids),
                            continued=t.continued)
    # the program: a diff against the turn before (turn 0: against the buggy program)
    before, base_name = (prev.program, f"turn {prev.turn}") if prev is not None else (
        (base, "buggy program") if base is not None else (None, ""))
    kind: CodeKind
    added = removed = 0
    if before is None:
        kind, lines = "program", rec.program.splitlines()
    elif before == rec.program:
        kind, lines = "unchanged", []
    else:
        lines, added, removed = _diff(before, rec.program, base_name, f"turn {rec.turn}")
        kind = "diff"
    shown, omitted, none_left = budget.take(lines)
    if none_left:
        kind = "omitted"
        cuts.append(f"turn {rec.turn}: code omitted ({omitted} lines; the episode's "
                    f"{limits.episode_code_lines} code lines are used up)")
    elif omitted:
        cuts.append(f"turn {rec.turn}: {omitted} of {len(lines)} code lines cut")
    failed_before = set(prev.failed) if prev is not None else set()
    passed_before = set(prev.passed) if prev is not None else set()
    fixed = [t for t in rec.passed if t in failed_before]
    broken = [t for t in rec.failed if t in passed_before]
    failing: list[TestView] = []
    if calls.with_tests and instance is not None:
        by_id = {t.id: t for t in instance.tests}
        for test_id in rec.failed[: limits.tests_shown]:
            test = by_id.get(test_id)
            if test is None:
                continue
            stdio = test.kind == "stdio"
            given = (test.input or "") if stdio else _test_text({"args": test.args or [],
                                                                  "kwargs": test.kwargs or {}})
            want = (test.output or "") if stdio else _test_text(test.expected)
            failing.append(TestView(id=test.id, input=_clip_note(given, limits.test_chars),
                                    expected=_clip_note(want, limits.test_chars)))
    view = TurnView(
        turn=rec.turn, hint=text, level=rec.hint.level if rec.hint is not None else None,
        fallback=hint.fallback if hint is not None else False, attempts_total=attempts_total,
        words_cut=hint.words_cut if hint is not None else 0,
        rejected=rejected, rejected_omitted=rejected_total - len(rejected), target=target,
        code=kind, code_lines=shown, code_omitted=omitted,
        code_base=base_name if before is not None and kind != "program" else "",
        added=added, removed=removed, code_found=rec.code_found,
        verdicts=dict(sorted(rec.verdicts.items())),
        pass_rate=rec.pass_rate,
        passed=[] if listed is not None else _ids(rec.passed, limits.test_ids),
        passed_total=len(rec.passed),
        failed=[] if listed is not None else _ids(rec.failed, limits.test_ids),
        failed_total=len(rec.failed), tests_as_turn=listed,
        fixed=_ids(fixed, limits.test_ids), fixed_total=len(fixed),
        broken=_ids(broken, limits.test_ids), broken_total=len(broken),
        protected=rec.protected, given=rec.given,
        calls=([calls.view(summary, True, "summary")] if summary is not None and rec.turn == 0 else [])
        + [calls.view(c, rec.protected) for c in rec.calls], withheld=withheld,
        failing_tests=failing)
    return view, cuts


def _rate(recorded: float | None, recs: Sequence[TurnRecord], index: int) -> float | None:
    """The episode record's pass rate, else that of its first/last recorded turn."""
    if recorded is not None:
        return recorded
    return recs[index].pass_rate if recs else None


def _status(end: EpisodeRecord | None) -> Status:
    return "unfinished" if end is None else end.status


def build_transcripts(
    records: Sequence[Record],
    buggy: Mapping[str, str] | None = None,
    *,
    protocols: Sequence[str] = (),
    limits: TranscriptLimits | None = None,
    messages: Mapping[str, Message] | None = None,
    with_tests: bool = False,
    instances: Mapping[str, Instance] | None = None,
    summaries: Mapping[str, SummaryCall] | None = None,
) -> Transcripts:
    """The transcripts of every episode in ``records``: finished, errored and unfinished.

    Episodes are ordered by instance, model, protocol (in ``protocols``' order, then by
    name) and run. ``buggy`` maps an instance id to its buggy program: turn 0 is then a
    diff against it. A turn recorded twice (a resumed run) counts once, the later record.
    ``messages`` are the run's (``runlog.messages.read_messages``): without them every
    call shows its reply only. ``with_tests`` shows hidden test data (see the module
    docstring), and with ``instances`` (by id) each turn's failing tests. ``summaries``
    (``runlog.messages.read_summary_calls``) adds each instance's ``--obfuscate`` summary
    call to its episodes' turn 0, as a call of role ``summary``.
    """
    limits = limits or TranscriptLimits()
    calls = _Calls(messages or {}, limits, with_tests)
    turns: dict[str, dict[int, TurnRecord]] = {}
    ends: dict[str, EpisodeRecord] = {}
    first: dict[str, Record] = {}
    for rec in records:
        first.setdefault(rec.episode_id, rec)
        if isinstance(rec, TurnRecord):
            turns.setdefault(rec.episode_id, {})[rec.turn] = rec
        else:
            ends[rec.episode_id] = rec
    order = {p: i for i, p in enumerate(protocols)}

    def key(eid: str) -> tuple[str, str, int, str, int, str]:
        r = first[eid]
        return (r.instance_id, r.model, order.get(r.protocol, len(order)), r.protocol, r.run, eid)

    used = 0
    full = False  # the report's text budget is used up: the rest are in the index only
    episodes: list[EpisodeTranscript] = []
    for n, eid in enumerate(sorted(first, key=key), start=1):
        head, end = first[eid], ends.get(eid)
        recs = [turns.get(eid, {})[t] for t in sorted(turns.get(eid, {}))]
        views: list[TurnView] = []
        cuts: list[str] = []
        budget = _Budget(limits)
        prev: TurnRecord | None = None
        listed: int | None = None  # the turn whose test lists are on the page
        made = (summaries or {}).get(head.instance_id)
        summary = made.call if made is not None else None
        for rec in recs if not full else []:
            # a gap in the turn numbers (a lost record) diffs against the last turn seen
            same = (prev is not None and listed is not None
                    and set(rec.passed) == set(prev.passed) and set(rec.failed) == set(prev.failed))
            view, turn_cuts = _turn_view(rec, prev, (buggy or {}).get(head.instance_id),
                                         limits, budget, listed if same else None, calls,
                                         (instances or {}).get(head.instance_id), summary)
            listed = listed if same else rec.turn
            views.append(view)
            cuts += turn_cuts
            prev = rec
        error = None
        if end is not None and end.error:
            error = _clip_note(end.error, limits.text_chars)
            if len(end.error) > limits.text_chars:
                cuts.append(f"error cut to {limits.text_chars} characters")
        episode = EpisodeTranscript(
            anchor=f"ep-{n}", episode_id=eid, instance_id=head.instance_id, model=head.model,
            protocol=head.protocol, run=head.run, status=_status(end),
            stop_reason=end.stop_reason if end is not None else None,
            turns_count=end.turns if end is not None else max(len(recs) - 1, 0),
            initial_pass_rate=_rate(end.initial_pass_rate if end else None, recs, 0),
            final_pass_rate=_rate(end.final_pass_rate if end else None, recs, -1),
            error=error, turns=views, cuts=cuts)
        if not full:
            used += _size(episode, calls.sizes)
            full = used > limits.total_chars
        if full:
            episode = msgspec.structs.replace(episode, turns=[], cuts=[], shown=False)
        episodes.append(episode)
    notes: list[str] = []
    hidden = sum(1 for e in episodes if not e.shown)
    if hidden:
        notes.append(f"{hidden} of {len(episodes)} episodes are in the index only: their "
                     f"transcripts would take the page past its budget of "
                     f"{limits.total_chars:,} characters")
    named = {m for e in episodes for t in e.turns for c in t.calls for m in c.messages}
    return Transcripts(episodes=episodes, limits=limits, buggy_known=bool(buggy), notes=notes,
                       messages={k: v for k, v in calls.shown.items() if k in named},
                       with_tests=with_tests)


def of_settings(parts: Sequence[tuple[str, Transcripts]]) -> Transcripts:
    """The transcripts of a sweep's settings as one: each episode labelled with its setting
    (episode ids repeat across settings), in the sweep's order, their anchors numbered
    anew over the whole index (each setting's start at ``ep-0``); messages are keyed by
    their content hash, so the settings' sets merge; each note says its setting."""
    if not parts:
        raise ValueError("no setting to take transcripts from")
    episodes = [msgspec.structs.replace(e, setting=name, anchor=f"ep-{n}") for n, (name, e) in
                enumerate((name, e) for name, tx in parts for e in tx.episodes)]
    messages: dict[str, MessageView] = {}
    for _, tx in parts:
        messages.update(tx.messages)
    first = parts[0][1]
    return Transcripts(episodes=episodes, limits=first.limits,
                       buggy_known=all(tx.buggy_known for _, tx in parts),
                       notes=[f"{name}: {note}" for name, tx in parts for note in tx.notes],
                       messages=messages, with_tests=first.with_tests)
