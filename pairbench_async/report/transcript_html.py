"""The transcript viewer of the HTML report: an index of episodes and one transcript each.

The section opens with an index table (one row per episode: instance, model, protocol,
run, status, turns, initial → final pass rate) whose links jump to the episode's
transcript, a closed ``<details>``; following a link opens it (the target sits inside
the ``<details>``, and browsers open a closed ``<details>`` around a fragment's target).
No JavaScript: the page stays one self-contained file. Every text of a run (hints,
programs, reasons, errors, ids) is untrusted and goes through :func:`html.escape`.
The data and its caps are :mod:`.transcript`'s.
"""

from __future__ import annotations

import html
from collections.abc import Collection, Mapping, Sequence
from typing import Final

from .transcript import (
    WITHHELD_UNPROTECTED,
    CallView,
    EpisodeTranscript,
    MessageView,
    TargetView,
    TestView,
    Transcripts,
    TurnView,
    fold_ids,
    level_label,
)

__all__ = ["TRANSCRIPT_CSS", "render_transcripts"]

_GROUPING: Final = {"full": "full signature (trace, shape, failure)",
                    "shape_type": "output shape and failure type", "type": "failure type"}
#: test id lists longer than this are collapsed
_INLINE_IDS: Final = 12

TRANSCRIPT_CSS: Final = """
table.tx-index td a{white-space:nowrap}table.tx-index tr.first td{border-top:2px solid #999}
.st-done{color:#1b6e1b}.st-error{color:#b00020;font-weight:600}.st-unfinished{color:#8a6d00}
h3.tx-inst{font-size:1rem;margin:1.4rem 0 .3rem;font-family:ui-monospace,monospace}
details.ep{border:1px solid #ccc;border-radius:4px;margin:.35rem 0;background:#fff}
details.ep>summary{cursor:pointer;padding:.35rem .6rem;background:#f6f6f6;font-size:.9rem}
details.ep[open]>summary{border-bottom:1px solid #ccc}
.ep-body{padding:.3rem .8rem .6rem;scroll-margin-top:3rem}
.ep-body:target{outline:2px solid #4a7bd0;outline-offset:-2px}
.turn{border-top:1px solid #e3e3e3;padding:.5rem 0}.turn:first-of-type{border-top:0}
.turn-head{font-weight:600;margin-bottom:.3rem}.m{color:#555;font-size:.85rem;font-weight:400}
.turn-head .m{font-size:1rem}
.lvl{display:inline-block;padding:0 .4rem;border-radius:3px;font-size:.8rem;background:#e8e8e8;
font-weight:600}.lvl.l1,.lvl.l2{background:#dbe9fb}.lvl.l3,.lvl.l4{background:#fbeccd}
.lvl.l5,.lvl.l6{background:#f8d5d5}.lvl.fb{background:#e6def5}.tag{font-size:.8rem;color:#8a3b00}
dl.kv{display:grid;grid-template-columns:6.5rem minmax(0,1fr);gap:.25rem .6rem;margin:.2rem 0;
font-size:.85rem}dl.kv dt{color:#555;font-weight:600}dl.kv dd{margin:0}
.hint{white-space:pre-wrap;margin:0;padding:.3rem .5rem;border-left:3px solid #4a7bd0;
background:#f4f8fe}ol.rej{margin:0;padding-left:1.2rem}ol.rej li{margin-bottom:.25rem}
.att{white-space:pre-wrap;color:#555}.why{color:#b00020}
pre.code{margin:0;padding:.3rem .5rem;background:#fafafa;border:1px solid #e3e3e3;overflow-x:auto;
font-size:.78rem;line-height:1.35;max-height:32rem}
pre.code span{display:block}pre.code .a{background:#e3f6e3}pre.code .d{background:#fbe3e3}
pre.code .h{color:#4a5fb0}pre.code .f{color:#777}
.ids{font-family:ui-monospace,monospace;font-size:.78rem;word-break:break-word;margin:.1rem 0}
.cut{color:#8a6d00;font-size:.8rem}.err{white-space:pre-wrap;background:#fdf0f0;
border:1px solid #f0c0c0;padding:.4rem .6rem;font-size:.8rem;margin:.3rem 0}
details.call{margin:.15rem 0}details.call>summary{cursor:pointer;font-size:.82rem}
.role{font-size:.72rem;font-weight:700;text-transform:uppercase;color:#555;margin-top:.3rem}
pre.msg,pre.reply,pre.tv{white-space:pre-wrap;word-break:break-word;margin:0;padding:.3rem .5rem;
font-size:.76rem;line-height:1.35;max-height:24rem;overflow:auto;border:1px solid #e3e3e3;
background:#fafafa}pre.reply{background:#f3faf3}pre.tv{max-height:10rem}
table.tests{border-collapse:collapse;font-size:.78rem}table.tests td{vertical-align:top;
padding:.1rem .4rem;border-top:1px solid #eee}
""".strip()


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _pct(rate: float | None) -> str:
    return "-" if rate is None else f"{100 * rate:.1f}"


def _label(ep: EpisodeTranscript) -> str:
    where = f"{ep.setting} · " if ep.setting else ""
    return f"{where}{ep.model} · {ep.protocol} · run {ep.run}"


def _index(episodes: Sequence[EpisodeTranscript]) -> str:
    """The index table; a sweep's (episodes labelled with their setting) has a Setting
    column first, and an instance's rows restart under each setting."""
    settings = any(ep.setting for ep in episodes)
    heads = ((("Setting", "l"),) if settings else ()) + (
        ("Instance", "l"), ("Model", "l"), ("Protocol", "l"), ("Run", "r"),
        ("Status", "l"), ("Turns", "r"), ("Pass rate (%): initial → final", "r"),
        ("Transcript", "l"))
    out = ['<table class="tx-index"><thead><tr>'
           + "".join(f'<th scope="col" class="{c}">{h}</th>' for h, c in heads)
           + "</tr></thead><tbody>"]
    previous: tuple[str, str] | None = None
    for ep in episodes:
        first = (ep.setting, ep.instance_id) != previous
        previous = (ep.setting, ep.instance_id)
        error = (ep.error or "").strip()
        title = f' title="{_e(error.splitlines()[-1])}"' if error else ""
        status = ep.status + (f" ({ep.stop_reason})" if ep.stop_reason else "")
        link = (f'<a href="#{_e(ep.anchor)}">turns ↓</a>' if ep.shown
                else '<span class="cut">index only</span>')
        row_class = ' class="first"' if first else ""
        out.append(f"<tr{row_class}>"
                   + (f'<td class="l">{_e(ep.setting) if first else ""}</td>' if settings else "")
                   + f'<td class="l">{_e(ep.instance_id) if first else ""}</td>'
                   f'<td class="l">{_e(ep.model)}</td><td class="l">{_e(ep.protocol)}</td>'
                   f"<td>{ep.run}</td><td class=\"l st-{_e(ep.status)}\"{title}>{_e(status)}</td>"
                   f"<td>{ep.turns_count}</td>"
                   f"<td>{_pct(ep.initial_pass_rate)} → {_pct(ep.final_pass_rate)}</td>"
                   f'<td class="l">{link}</td></tr>')
    out.append("</tbody></table>")
    return "\n".join(out)


def _ids(label: str, ids: Sequence[str], total: int) -> str:
    """A list of test ids (numbered runs folded to ``first–last``); collapsed under a
    summary when long, and says what it left out."""
    more = f' <span class="cut">… and {total - len(ids)} more</span>' if total > len(ids) else ""
    text = _e(", ".join(fold_ids(ids)))
    body = f'<p class="ids">{text}{more}</p>'
    if total <= _INLINE_IDS:
        return f'<div>{_e(label)} ({total}): <span class="ids">{text}</span>{more}</div>'
    return f"<details><summary>{_e(label)} ({total})</summary>{body}</details>"


def _target(t: TargetView) -> str:
    parts = [f"scenario <code>{_e(t.scenario_id)}</code>: {_e(t.failure)}"]
    if t.shape:
        parts.append(f"output shape {_e(t.shape)}")
    parts.append(f"grouped by {_e(_GROUPING.get(t.grouping, t.grouping))}")
    head = ", ".join(parts) + (' <span class="tag">(continued)</span>' if t.continued else "")
    reps = (f"; shown to the feedback model: {_e(', '.join(t.representatives))}"
            if t.representatives else "")
    return f"{head}{reps}{_ids('target tests', t.tests, t.tests_total)}"


def _code(turn: TurnView) -> str:
    if turn.code == "unchanged":
        return f"unchanged from {_e(turn.code_base)}" + (
            "" if turn.code_found else " (the reply had no code block: the program was kept)")
    if turn.code == "omitted":
        return (f'<span class="cut">omitted ({turn.code_omitted} lines): the episode\'s code lines '
                "are used up</span>")
    lines = []
    for line in turn.code_lines:
        cls = "c"
        if turn.code == "diff":
            cls = ("f" if line.startswith(("+++", "---")) else "a" if line.startswith("+")
                   else "d" if line.startswith("-") else "h" if line.startswith("@@") else "c")
        # a block per line, its newline inside: empty lines keep their height, copies their breaks
        lines.append(f'<span class="{cls}">{_e(line)}\n</span>')
    what = (f"diff against {_e(turn.code_base)}: +{turn.added} −{turn.removed} lines"
            if turn.code == "diff"
            else "full program (the buggy program is not known to the report)")
    cut = (f'<div class="cut">{turn.code_omitted} more lines cut</div>'
           if turn.code_omitted else "")
    found = "" if turn.code_found else " (no code block in the reply)"
    return f'<div class="m">{what}{found}</div><pre class="code">{"".join(lines)}</pre>{cut}'


def _call(call: CallView, messages: Mapping[str, MessageView]) -> str:
    """One model call, closed: the messages sent and the raw reply."""
    tokens = f"{call.prompt_tokens:,} + {call.completion_tokens:,} tokens"
    extra = f", {call.attempts} tries" if call.attempts > 1 else ""
    summary = (f"{_e(call.role)} · <code>{_e(call.model)}</code> · {tokens}, "
               f"{call.latency_ms:,.0f} ms{extra}")
    parts = []
    if call.messages_note:
        parts.append(f'<div class="m">messages {_e(call.messages_note)}</div>')
    for mid in call.messages:
        m = messages[mid]
        parts.append(f'<div class="role">{_e(m.role)}</div><pre class="msg">{_e(m.content)}</pre>')
    if call.reply is not None:
        parts.append(f'<div class="role">reply (raw)</div><pre class="reply">{_e(call.reply)}</pre>')
    else:
        parts.append(f'<div class="m">reply {_e(call.reply_note)}</div>')
    return f'<details class="call"><summary>{summary}</summary>{"".join(parts)}</details>'


def _tests(tests: Sequence[TestView], total: int) -> str:
    rows = "".join(f'<tr><td><code>{_e(t.id)}</code></td><td><pre class="tv">{_e(t.input)}</pre></td>'
                   f'<td><pre class="tv">{_e(t.expected)}</pre></td></tr>' for t in tests)
    more = (f'<div class="cut">the first {len(tests)} of {total} failing tests</div>'
            if total > len(tests) else "")
    return (f'<table class="tests"><thead><tr><th>test</th><th>input</th><th>expected output</th>'
            f"</tr></thead><tbody>{rows}</tbody></table>{more}")


def _turn(turn: TurnView, messages: Mapping[str, MessageView] | None = None) -> str:
    level = turn.level
    lvl_cls = "fb" if level == 0 else f"l{level}" if level is not None else ""
    badge = (f'<span class="lvl {lvl_cls}">{_e(level_label(level))}</span>'
             if level is not None else '<span class="m">no hint</span>')
    verdicts = " · ".join(f"{_e(k)} {v}" for k, v in turn.verdicts.items())
    change = (f", fixed {turn.fixed_total}, broke {turn.broken_total}" if turn.turn > 0 else "")
    head = (f'<div class="turn-head">Turn {turn.turn} {badge}'
            + (' <span class="tag">fallback hint</span>' if turn.fallback else "")
            + (f' <span class="tag">{turn.words_cut} words past the word cap cut</span>'
               if turn.words_cut else "")
            + ("" if turn.protected else ' <span class="tag">not hidden-test protected</span>')
            + f' <span class="m">— pass rate {_pct(turn.pass_rate)}%{change}</span></div>')
    rows: list[tuple[str, str]] = []
    if turn.target is not None:
        rows.append(("Target", _target(turn.target)))
    if turn.withheld:
        rows.append(("Hint" if level else "Feedback",
                     f'<span class="m">{_e(WITHHELD_UNPROTECTED)}</span>'))
    elif turn.hint is not None:
        rows.append(("Hint" if level else "Feedback",
                     f'<blockquote class="hint">{_e(turn.hint)}</blockquote>'))
    elif turn.turn == 0 and turn.given:
        rows.append(("Hint", '<span class="m">none: turn 0 is the erroneous program as given '
                             '(no model call); feedback starts at turn 1</span>'))
    elif turn.turn == 0:
        rows.append(("Hint", '<span class="m">none: turn 0 is the unhinted repair</span>'))
    if turn.attempts_total:
        accepted = "the fallback hint was used" if turn.fallback else (
            f"attempt {turn.attempts_total} accepted" if turn.rejected or turn.rejected_omitted else
            "accepted at the first attempt")
        items = "".join(
            f'<li value="{a.number}"><div class="att">{_e(a.text)}</div><div class="why">rejected: '
            f'{_e("; ".join(a.reasons))}</div></li>' for a in turn.rejected)
        more = (f'<div class="cut">{turn.rejected_omitted} more rejected attempts not shown</div>'
                if turn.rejected_omitted else "")
        rows.append(("Attempts", (f'<ol class="rej">{items}</ol>' if items else "")
                     + f'{more}<div class="m">{_e(accepted)}</div>'))
    if turn.calls:
        rows.append(("Calls", "".join(_call(c, messages or {}) for c in turn.calls)))
    rows.append(("Program", _code(turn)))
    tests = [f"<div>{verdicts or 'no verdicts'}</div>"]
    if turn.turn > 0:
        tests += [_ids(label, ids, total) for label, ids, total in (
            ("fixed", turn.fixed, turn.fixed_total), ("broken", turn.broken, turn.broken_total))
            if total]
    if turn.tests_as_turn is not None:
        tests.append(f'<div class="m">the same {turn.failed_total} failing and {turn.passed_total} '
                     f"passing tests as at turn {turn.tests_as_turn}</div>")
    else:
        tests += [_ids(label, ids, total) for label, ids, total in (
            ("failed", turn.failed, turn.failed_total), ("passed", turn.passed, turn.passed_total))
            if total]
    rows.append(("Tests", "".join(tests)))
    if turn.failing_tests:
        rows.append(("Failing", _tests(turn.failing_tests, turn.failed_total)))
    body = "".join(f"<dt>{_e(k)}</dt><dd>{v}</dd>" for k, v in rows)
    return f'<div class="turn">{head}<dl class="kv">{body}</dl></div>'


def _episode(ep: EpisodeTranscript, opened: bool, messages: Mapping[str, MessageView]) -> str:
    status = ep.status + (f": {ep.stop_reason}" if ep.stop_reason else "")
    summary = (f"<b>{_e(_label(ep))}</b> — <span class=\"st-{_e(ep.status)}\">{_e(status)}</span>, "
               f"{ep.turns_count} turns, pass rate {_pct(ep.initial_pass_rate)}% → "
               f"{_pct(ep.final_pass_rate)}%")
    parts = [f'<div class="m">episode <code>{_e(ep.episode_id)}</code></div>']
    if ep.error:
        parts.append(f'<pre class="err">{_e(ep.error)}</pre>')
    if not ep.turns:
        parts.append('<p class="m">no turn was recorded.</p>')
    parts += [_turn(t, messages) for t in ep.turns]
    if ep.cuts:
        parts.append('<div class="cut">cut to keep the report small: '
                     + _e("; ".join(ep.cuts)) + "</div>")
    return (f'<details class="ep"{" open" if opened else ""}><summary>{summary}</summary>'
            f'<div class="ep-body" id="{_e(ep.anchor)}">' + "\n".join(parts) + "</div></details>")


def render_transcripts(transcripts: Transcripts, opened: Collection[str] = ()) -> str:
    """The ``transcripts`` section: the index table, then each shown episode's transcript
    (closed, but those whose anchor is in ``opened``)."""
    eps = transcripts.episodes
    base = ("turn 0 is a diff against the instance's buggy program" if transcripts.buggy_known
            else "turn 0 shows its full program (the run's dataset could not be read back "
                 "unchanged, so the buggy program is not known)")
    hidden = ("Hidden tests' inputs and expected outputs are shown (--with-tests): do not share "
              "this page." if transcripts.with_tests else
              "No hidden test's input or expected output is shown (the feedback model's prompts "
              "and unprotected turns are withheld; report --with-tests shows them).")
    intro = (f"{len(eps)} episodes, grouped by instance, then model, protocol and run. A link "
             "opens the episode's transcript; every turn shows its hint and level, the hint "
             "attempts the leakage validator rejected (with its reasons), the targeted scenario, "
             "every model call (the messages sent and the raw reply), "
             f"the program as a diff against the turn before ({base}), and the hidden tests' "
             f"verdicts. {hidden}")
    out = ['<section id="transcripts"><h2>Transcripts</h2>', f'<p class="intro">{_e(intro)}</p>']
    out += [f'<p class="note cut">{_e(n)}</p>' for n in transcripts.notes]
    out.append(_index(eps))
    previous: tuple[str, str] | None = None
    for ep in eps:
        if not ep.shown:
            continue
        if (ep.setting, ep.instance_id) != previous:
            where = f"{ep.setting} · " if ep.setting else ""
            out.append(f'<h3 class="tx-inst">{_e(where + ep.instance_id)}</h3>')
            previous = (ep.setting, ep.instance_id)
        out.append(_episode(ep, ep.anchor in opened, transcripts.messages))
    out.append("</section>")
    return "\n".join(out)
