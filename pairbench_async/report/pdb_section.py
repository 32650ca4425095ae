"""PDB's bug-level recall and fix-verified precision as the reports show them.

The text report's repair-precision table and the page's PDB section read the same
:class:`~.precision.PrecisionSummary` fields (``pdb_*``, from
:func:`.precision.precision_by_model` over the same verdicts), and write them with the
same cell functions and the same legend here, so the page cannot drift from the text
and ``--json``. When nothing could be scored (``--no-bug-check`` with no verdict in the
records, no dataset, no bug the tests need) the page says why instead of a column of '-'.
"""

from __future__ import annotations

from typing import Final

from .layout import Cell, Section, Table, model_protocols
from .metrics import group_key
from .model import Report
from .precision import PrecisionSummary

__all__ = ["PDB_LEGEND", "bugs_fixed", "pct", "pdb_section"]

#: What PDB-Recall and PDB-Precision are (docs/PRECISION.md), as the text report's legend says it.
PDB_LEGEND: Final = (
    "PDB-Recall and PDB-Precision are PDB's bug-level recall and edit-level precision of the "
    "final program (bugs = hunks of the buggy -> reference diff that the tests need; a bug is "
    "fixed when the model's edit near it, with the reference's fixes of the other bugs, passes "
    "every hidden test; precision = edited lines credited to fixed bugs / edited lines; "
    "docs/PRECISION.md)")


def pct(value: float | None) -> str:
    """A rate in % to one decimal, as the text report prints it; '-' when undefined."""
    return "-" if value is None else f"{100 * value:.1f}"


def bugs_fixed(s: PrecisionSummary) -> str:
    """Bugs fixed / bugs over the scored episodes; '-' when none was scored."""
    return f"{s.pdb_fixed}/{s.pdb_bugs}" if s.pdb_episodes else "-"


def _missing(report: Report, groups: list[PrecisionSummary]) -> str:
    """Why the page shows no PDB numbers; "" when it shows them."""
    if not groups:
        return ("No PDB recall or precision: " + (report.precision_note or
                "this page was built without the repair-precision summaries."))
    scored = sum(s.pdb_episodes for s in groups)
    unverified = sum(s.pdb_unverified for s in groups)
    if scored == 0 and not report.bug_check:
        return ("No PDB recall or precision: --no-bug-check was given, so PDB's pseudo-fixed "
                "programs were not run, and the records verify none of them "
                f"({unverified} finished episodes unverified). Report without --no-bug-check "
                "to score them.")
    if scored == 0:
        return ("No PDB recall or precision: no final program could be verified "
                f"({unverified} finished episodes unverified: the bug checks did not run or "
                "the sandbox faulted).")
    if sum(s.pdb_bugs for s in groups) == 0:
        return (f"No PDB recall or precision: the {scored} scored episodes' instances have no "
                "bug the tests need (every hunk of the buggy -> reference diff can be put back "
                "without a test failing).")
    return ""


def pdb_section(report: Report) -> Section:
    """PDB-Recall, PDB-Precision and the bugs fixed per model and protocol (the Naive Copy
    baseline has no verdicts: it is left out), or a note saying why there are none."""
    groups = [(model, p, report.precision[group_key(model, p)])
              for model, p in model_protocols(report) if group_key(model, p) in report.precision]
    intro = ("In %, on each finished episode's final program, mean over the episodes scored "
             f"(every verdict they need known), per model and protocol: {PDB_LEGEND}. Bugs fixed "
             "sums fixed bugs / bugs over the scored episodes; unverified episodes (a verdict "
             "missing) are left out of the means, never scored as failures.")
    missing = _missing(report, [s for _, _, s in groups])
    if missing:
        return Section(id="pdb", title="PDB: bug-level recall and fix-verified precision",
                       intro=intro, notes=[missing])
    rows, last = [], ""
    for model, p, s in groups:
        rows.append([Cell(model if model != last else ""), Cell(p), Cell(pct(s.pdb_recall)),
                     Cell(pct(s.pdb_precision)), Cell(bugs_fixed(s)), Cell(str(s.pdb_episodes)),
                     Cell(str(s.pdb_unverified))])
        last = model
    notes = []
    if not report.bug_check:
        notes.append("--no-bug-check was given: PDB's pseudo-fixed programs were not run, so only "
                     "the episodes whose verdicts the records already hold are scored; the "
                     "others are counted as unverified.")
    return Section(
        id="pdb", title="PDB: bug-level recall and fix-verified precision", intro=intro,
        tables=[Table(header=["Model", "Protocol", "PDB-Recall (%) ↑", "PDB-Precision (%) ↑",
                              "Bugs fixed", "Episodes scored", "Unverified"], rows=rows, left=2)],
        notes=notes)
