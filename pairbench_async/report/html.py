"""The visual report of a run: the paper's Section V tables and figures as HTML and Markdown.

Three steps, each a function over plain values so it can be tested without a run
directory or a browser, in a module of its own:

1. :func:`build_report` (:mod:`.model`) turns records (and the manifest) into a
   :class:`Report`: every number of Tables III-VI, Figs. 3-6, the per-protocol
   comparison, the protocols' ranking agreement, Repair@k and token usage;
2. :func:`report_sections` (:mod:`.sections`) lays a report out as sections of tables
   whose cells carry their best/worst marks, so HTML and Markdown show the same thing;
3. :func:`render_html` / :func:`render_markdown` (here) print the sections, and
   :func:`draw_figures` (:mod:`.figures`) draws the figures to PNG bytes.

This module is the report's public face and re-exports the names of the other three.
The page is self-contained (figures are ``data:`` URIs, the CSS is inline, no
JavaScript, no external resource), so it can be mailed or archived as one file. All
text that comes from a run (model names, instance ids, errors, hints, programs) is
escaped. Given :class:`~.transcript.Transcripts`, the page ends with the per-episode
transcript viewer (:mod:`.transcript`, :mod:`.transcript_html`); Markdown has none.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Collection, Mapping, Sequence
from typing import Final

from .cost import TokenRow
from .figures import FIGURES, draw_figures
from .layout import Cell, Section, Table, extremes
from .model import Report, build_report
from .run_tables import leaderboard_table
from .sections import report_sections
from .sweep_sections import sensitivity_sections
from .transcript import Transcripts
from .transcript_html import TRANSCRIPT_CSS, render_transcripts

__all__ = [
    "FIGURES",
    "Cell",
    "Report",
    "Section",
    "Table",
    "TokenRow",
    "Transcripts",
    "build_report",
    "draw_figures",
    "extremes",
    "html_table",
    "leaderboard_table",
    "markdown_table",
    "render_html",
    "render_markdown",
    "render_sections_text",
    "render_transcript_page",
    "report_sections",
    "sensitivity_sections",
    "text_table",
]




# --------------------------------------------------------------------------- HTML

_CSS: Final = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:2rem auto;
max-width:1200px;padding:0 1rem;color:#222;background:#fff}
h1{font-size:1.6rem}h2{font-size:1.2rem;margin-top:2.2rem;border-bottom:1px solid #ddd}
nav a{margin-right:.8rem}table{border-collapse:collapse;margin:.6rem 0;font-size:.85rem}
th,td{border:1px solid #ccc;padding:.25rem .5rem;text-align:right;vertical-align:top}
th{background:#f3f3f3}td.l,th.l{text-align:left}
th.g{text-align:center}td.best{background:#c8ecc8;font-weight:600}td.worst{background:#f6cccc}
td.top1{background:#c8ecc8;font-weight:600}td.top2{background:#cfe0f7}td.top3{background:#fde0bf}
caption{text-align:left;font-weight:600;padding:.2rem 0}
sup{font-size:.7em;color:#555}figure{margin:.8rem 0}figure img{max-width:100%;height:auto}
figcaption,.note{color:#555;font-size:.85rem}.intro{max-width:60rem}
""".strip()


_TITLES: Final = {"best": "best in column", "worst": "worst in column",
                  "top1": "top-1 of its setting", "top2": "top-2 of its setting",
                  "top3": "top-3 of its setting"}
#: Table VII's places where there is no colour (Markdown, text)
_PLACE_SUP: Final = {"top1": "¹", "top2": "²", "top3": "³"}


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def html_table(table: Table) -> str:
    """One table as HTML; marked cells get class ``best``/``worst`` (and a title saying so)."""
    out = ["<table>"]
    if table.caption:
        out.append(f"<caption>{_e(table.caption)}</caption>")
    out.append("<thead>")
    if table.groups:
        out.append("<tr>" + "".join(f'<th colspan="{span}" class="g">{_e(label)}</th>'
                                    for label, span in table.groups) + "</tr>")
    heads = [f'<th scope="col" class="{"l" if i < table.left else "r"}">{_e(h)}</th>'
             for i, h in enumerate(table.header)]
    out.append("<tr>" + "".join(heads) + "</tr>")
    out.append("</thead><tbody>")
    for row in table.rows:
        cells = []
        for i, cell in enumerate(row):
            classes = " ".join(c for c in ("l" if i < table.left else "", cell.mark) if c)
            attrs = f' class="{classes}"' if classes else ""
            if cell.mark:
                attrs += f' title="{_TITLES[cell.mark]}"'
            sup = f"<sup>{_e(cell.sup)}</sup>" if cell.sup else ""
            cells.append(f"<td{attrs}>{_e(cell.text)}{sup}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def render_html(report: Report, figures: Mapping[str, bytes] | None = None,
                transcripts: Transcripts | None = None) -> str:
    """The whole page; ``figures`` (key -> PNG bytes, from :func:`draw_figures`) are embedded
    as ``data:`` URIs, and a section whose figure is missing shows its tables only.
    ``transcripts`` (:func:`.transcript.build_transcripts`) adds the per-episode transcript
    viewer as the last section."""
    figures = figures or {}
    sections = report_sections(report)
    links = [(s.id, s.title.split(" (")[0]) for s in sections]
    if transcripts is not None:
        links.append(("transcripts", "Transcripts"))
    body = [f"<header><h1>{_e(report.title)}</h1></header>",
            "<nav>" + "".join(f'<a href="#{sid}">{_e(title)}</a>' for sid, title in links)
            + "</nav>"]
    for s in sections:
        body.append(f'<section id="{s.id}"><h2>{_e(s.title)}</h2>')
        if s.intro:
            body.append(f'<p class="intro">{_e(s.intro)}</p>')
        if s.figure and s.figure in figures:
            data = base64.b64encode(figures[s.figure]).decode("ascii")
            body.append(f'<figure><img src="data:image/png;base64,{data}" '
                        f'alt="{_e(s.figure_caption)}"><figcaption>{_e(s.figure_caption)}'
                        "</figcaption></figure>")
        body += [html_table(t) for t in s.tables]
        body += [f'<p class="note">{_e(n)}</p>' for n in s.notes]
        body.append("</section>")
    css = _CSS
    if transcripts is not None:
        body.append(render_transcripts(transcripts))
        css += "\n" + TRANSCRIPT_CSS
    return _page(report.title, css, "\n".join(body))


def _page(title: str, css: str, body: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            "<link rel=\"icon\" href=\"data:,\">"
            f"<title>{_e(title)}</title><style>{css}</style></head><body>\n"
            + body + "\n</body></html>\n")


def render_transcript_page(transcripts: Transcripts, title: str = "PAIR-BENCH transcripts",
                           opened: Collection[str] = ()) -> str:
    """The transcript viewer alone as a page (same look as in the report), the episodes
    whose anchors are in ``opened`` already open: to look at or screenshot a few episodes."""
    body = f"<header><h1>{_e(title)}</h1></header>\n{render_transcripts(transcripts, opened)}"
    return _page(title, _CSS + "\n" + TRANSCRIPT_CSS, body)


# --------------------------------------------------------------------------- Markdown

_MD_SPECIAL: Final = str.maketrans({c: "\\" + c for c in "\\`*_[]<>|#"})


def _m(text: str) -> str:
    return text.translate(_MD_SPECIAL).replace("\n", " ")


def markdown_table(table: Table) -> str:
    """One table as GitHub Markdown (its caption in italics above); best cells in bold,
    worst in italics, text escaped."""
    def cell(c: Cell) -> str:
        text = _m(c.text) + (f" ({_m(c.sup)})" if c.sup else "")
        if c.mark in _PLACE_SUP:
            return (f"**{text}**" if c.mark == "top1" else text) + _PLACE_SUP[c.mark]
        return f"**{text}**" if c.mark == "best" else f"_{text}_" if c.mark == "worst" else text

    lines = [f"*{_m(table.caption)}*", ""] if table.caption else []
    lines += ["| " + " | ".join(_m(h) for h in table.header) + " |",
             "|" + "|".join("---" if i < table.left else "---:"
                            for i in range(len(table.header))) + "|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in table.rows]
    return "\n".join(lines)


def render_markdown(report: Report, figure_paths: Mapping[str, str] | None = None) -> str:
    """The report as Markdown tables (terminals, papers); best in bold, worst in italics.

    ``figure_paths`` (key -> relative path of a written PNG) adds image links.
    """
    figure_paths = figure_paths or {}
    out = [f"# {_m(report.title)}", ""]
    for s in report_sections(report):
        out += [f"## {_m(s.title)}", ""]
        if s.intro:
            out += [_m(s.intro), ""]
        if s.figure and s.figure in figure_paths:
            out += [f"![{_m(s.figure_caption)}]({figure_paths[s.figure]})", ""]
        for t in s.tables:
            out += [markdown_table(t), ""]
        out += [f"> {_m(n)}" for n in s.notes]
        if s.notes:
            out.append("")
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------- plain text

_TEXT_MARK: Final = {"best": "*", "worst": "!", **_PLACE_SUP}


def text_table(table: Table) -> str:
    """One table as aligned plain text (terminals, logs); a top-k place as a superscript
    digit, Table III's best ``*`` and worst ``!``; text columns left, numbers right."""
    def cell(c: Cell) -> str:
        return c.text + (f" ({c.sup})" if c.sup else "") + _TEXT_MARK.get(c.mark, "")

    rows = [table.header, *([cell(c) for c in row] for row in table.rows)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(table.header))]

    def line(r: list[str]) -> str:
        return "  ".join(v.ljust(w) if i < table.left else v.rjust(w)
                         for i, (v, w) in enumerate(zip(r, widths, strict=True))).rstrip()

    out = [table.caption] if table.caption else []
    out += [line(rows[0]), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows[1:]]
    return "\n".join(out)


def render_sections_text(sections: Sequence[Section], *, intro: bool = True) -> str:
    """Sections as plain text: title, intro (unless ``intro=False``: a terminal report that
    leaves explanations to the HTML), tables, notes (figures are left out)."""
    out: list[str] = []
    for s in sections:
        out += [f"== {s.title} ==", *([s.intro] if s.intro and intro else []), ""]
        for t in s.tables:
            out += [text_table(t), ""]
        out += [f"note: {n}" for n in s.notes]
        if s.notes:
            out.append("")
    return "\n".join(out).rstrip() + "\n"
