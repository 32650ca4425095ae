"""Table II's information boundaries: what a hint may not reveal below which level.

Seed 000, Section IV-C: "A hint is rejected if it reveals information reserved for a
higher hint level, such as exposing a suspicious code location in an L2 hint or
suggesting a concrete repair direction in an L4 hint." Each row of Table II reserves
one kind of information for its level and those above, so each is a boundary for
every level below it; and L6 gives a direction "without giving code, pseudocode, or
exact patch", so code is reserved for no level at all. The leakage rules
(:mod:`.leakage_reveals`, :mod:`.leakage_patterns`), the LLM judge's rubric
(:mod:`.judge`) and the labelled hint set's scoring (:mod:`.hint_labels`) all read
this one table. Pure data.
"""

from __future__ import annotations

from typing import Final, Literal

import msgspec

__all__ = ["BOUNDARIES", "BOUNDARY_NAMES", "Boundary", "BoundaryName", "boundary", "reserved"]

BoundaryName = Literal["input_pattern", "state", "location", "concept", "direction", "code"]


class Boundary(msgspec.Struct, frozen=True, kw_only=True):
    """One kind of information and the first hint level allowed to reveal it."""

    name: BoundaryName
    #: the first level that may reveal it (7: no level may)
    level: int
    #: Table II's own words for what it is (the judge's rubric; Table II's example hints
    #: are :data:`.hints.HINT_LEVELS`')
    what: str


BOUNDARIES: Final[tuple[Boundary, ...]] = (
    Boundary(name="input_pattern", level=2,
             what="The type of input or edge case exposing the failure."),
    Boundary(name="state", level=3,
             what="The information that the solution fails to preserve, update, or track correctly."),
    Boundary(name="location", level=4,
             what="The suspicious region of the candidate implementation."),
    Boundary(name="concept", level=5,
             what="The missing invariant, condition, or reasoning needed to handle the scenario."),
    Boundary(name="direction", level=6,
             what="A concrete implementation direction, without giving the full corrected code."),
    Boundary(name="code", level=7,
             what="Code, pseudocode, or an exact patch (L6 gives a direction \"without giving code, "
                  "pseudocode, or exact patch\"; no level may)."),
)
BOUNDARY_NAMES: Final[tuple[BoundaryName, ...]] = tuple(b.name for b in BOUNDARIES)


def boundary(name: str) -> Boundary:
    """The boundary called ``name`` (KeyError if there is none)."""
    for b in BOUNDARIES:
        if b.name == name:
            return b
    raise KeyError(name)


def reserved(level: int) -> tuple[Boundary, ...]:
    """The boundaries a level-``level`` hint may not cross (everything above it, and code)."""
    return tuple(b for b in BOUNDARIES if b.level > level)
