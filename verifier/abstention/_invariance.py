"""Specificity as invariance: judge a perturbation's change on the part of the result in scope.

ARCHITECTURE.md section 4 ("Noise abstentions", metamorphic testing of the evidence query,
issue 18 point 2). Evidence must change with the witness and stay the same under every
perturbation that leaves the requirement as it is (the decoy, the nuisances of
``verifier.abstention._nuisance``). A careful analyst often writes a query broader than the
scope, showing the scope next to its neighbours: a GROUP BY over every DRG type with the
question's type as one row, a match on a code OR its description. Such a query sees a
perturbation in rows of its own; that is not a lack of specificity. So a perturbation's
change is **tolerated** (``change_tolerated``) when it is transparent and outside the scope:

1. every changed row (rows new or gone in the visible result, ``_witness.compare``) shows a
   value the perturbation introduced (``introduced``: another type, code, item, label or
   entity id) and none of the task's own values it replaced (``replaced``), i.e. the change
   sits in rows that visibly belong to something else;
2. the base result shows the scope: a visible base row holds one of the task's values; and
3. the witness changes that part: a row new or gone with the witness holds one of them.

A **nuisance** (``nuisance_tolerated``: an in-scope row of another item or code) leaves the
requirement as it is, so the part of the result that shows the gap must not change with it.
Its change is tolerated when the base result is empty (no row at all in what the query looked
at), when it is transparent (every new row shows a value the nuisance introduced, no more rows
gone than new: a listing of every lab of the admission with its item), or when the witness
fills the gap in cells (empty, zero or NULL on the base) and the nuisance leaves those cells
as they are (``count(*) FILTER (WHERE item = ...)`` next to a total ``count(*)``, a severity
column next to rows of another DRG type). It is not tolerated when the cells that show the gap
change with it (a ``count(*)`` of every row of the admission, 0 on the base, 1 with a lab of
any item: a count of everything, not an observation of the item), or when the gap is rows
appearing and the nuisance adds rows that do not show what they are.

A digest of the scope (one opaque cell), a count over everything, or a query keyed on marks
only invented rows carry fails 1 or 2, as before. A cell "holds" a value when it equals it
(case-insensitive text, numbers by value) or contains it as a whole word (values of at least
``MIN_MARKER`` characters; shorter numbers, such as an ICD version, must match a whole cell).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable

from ..contract import DisplayConfig, WitnessTable
from ..sql import QueryResult
from ._evidence import visible_canon
from ._witness import compare

#: Shortest value found inside a longer cell (shorter ones must equal the whole cell).
MIN_MARKER = 3


def _text(cell: Any) -> str:
    if isinstance(cell, float) and cell.is_integer():
        return str(int(cell))
    return str(cell).strip().lower()


def holds(row: Iterable[Any], values: frozenset[str]) -> bool:
    """Whether a canonical result row holds one of ``values`` (lower-cased text; rule above)."""
    if not values:
        return False
    for cell in row:
        if cell is None:
            continue
        t = _text(cell)
        if t in values:
            return True
        for v in values:
            if len(v) >= MIN_MARKER and not v.isdigit() and re.search(rf"(?<!\w){re.escape(v)}(?!\w)", t):
                return True
            if len(v) >= MIN_MARKER + 2 and v.isdigit() and re.search(rf"(?<!\d){v}(?!\d)", t):
                return True
    return False


def change_tolerated(base: QueryResult, witness_over: QueryResult, perturbed: QueryResult, display: DisplayConfig | None,
                     introduced: frozenset[str], replaced: frozenset[str], *, small_cell_threshold: int | None = None) -> bool:
    """Whether the change ``perturbed`` makes to ``base`` lies wholly in rows outside the scope
    that the query shows next to it (rules 1-3 of the module docstring). ``True`` also when
    nothing visible changes.

    Args:
        base, witness_over, perturbed: the query's results on the base, the witness overlay
            and the perturbation's overlay.
        display: the environment's display limits.
        introduced: values the perturbation introduced (lower-cased text).
        replaced: the task's own values the perturbation replaced (lower-cased text).
        small_cell_threshold: as ``_witness.compare``.
    """
    moved = compare(base, perturbed, display, small_cell_threshold=small_cell_threshold)
    if not moved.sensitive:
        return True
    introduced = frozenset(v for v in introduced if v and v not in replaced)
    for row in (*moved.new, *moved.gone):
        if not holds(row, introduced) or holds(row, replaced):
            return False
    if not any(holds(row, replaced) for row in visible_canon(base, display)):
        return False
    seen = compare(base, witness_over, display, small_cell_threshold=small_cell_threshold)
    return any(holds(row, replaced) for row in (*seen.new, *seen.gone))


def nuisance_tolerated(base: QueryResult, witness_over: QueryResult, perturbed: QueryResult, display: DisplayConfig | None,
                       introduced: frozenset[str], *, small_cell_threshold: int | None = None,
                       strict_empty: bool = False) -> bool:
    """Whether a nuisance's change leaves the part of the result that shows the gap as it is
    (rule in the module docstring). ``True`` also when nothing visible changes.

    ``strict_empty``: the query excludes rows by category texts read earlier
    (``_observation.Observation.excludes``), so an empty base result need not be the scope's own
    emptiness: then, on an empty base, any visible change with the nuisance is not tolerated."""
    moved = compare(base, perturbed, display, small_cell_threshold=small_cell_threshold)
    if not moved.sensitive:
        return True
    if not visible_canon(base, display):
        return not strict_empty
    if all(holds(row, introduced) for row in moved.new) and len(moved.gone) <= len(moved.new):
        return True
    seen = compare(base, witness_over, display, small_cell_threshold=small_cell_threshold)
    gaps = [(g, {j for j, (a, b) in enumerate(zip(g, n)) if _empty(a) and not _empty(b)})
            for g in seen.gone for n in seen.new if len(g) == len(n)]
    gaps = [(g, cols) for g, cols in gaps if cols]
    if not gaps:
        return False  # the gap is rows appearing or disappearing, and the nuisance moves rows that show nothing of it
    gone = Counter(moved.gone)
    for g, cols in gaps:
        if gone[g] and not any(len(n) == len(g) and all(n[j] == g[j] for j in cols) for n in moved.new):
            return False  # a cell that shows the gap changes with a row of another item
    return True


def _empty(v: Any) -> bool:
    return v is None or v is False or v == 0 or (isinstance(v, str) and not v.strip())


@dataclass(frozen=True)
class Perturbation:
    """A metamorphic perturbation of the base that leaves the task's requirement as it is.

    Attributes:
        name: ``decoy`` (the witness moved out of scope) or ``nuisance`` (another item or code in scope).
        witness: the rows the overlay inserts.
        introduced, replaced: values (lower-cased text) it introduced, and the task's own it replaced.
    """

    name: str
    witness: list[WitnessTable]
    introduced: frozenset[str]
    replaced: frozenset[str]

    @property
    def why(self) -> str:
        """The per-query explanation when the evidence changes with this perturbation."""
        if self.name == "decoy":
            return ("the result also changes when the witness rows are moved out of the task's scope (another patient, "
                    "admission, stay, item or code), outside any row that shows the scope: the query does not look at the task's scope")
        return ("the part of the result that shows the gap also changes with a row of another item or code in the task's "
                "scope, which leaves the requirement unmet: the query does not observe the requirement")

    def tolerated(self, base: QueryResult, over: QueryResult, p_over: QueryResult, display: Any, threshold: int | None,
                  *, strict_empty: bool = False) -> bool:
        """Whether the query's change under this perturbation is allowed (``verifier.abstention._invariance``;
        ``strict_empty`` as ``nuisance_tolerated``'s)."""
        if self.name == "decoy":
            return change_tolerated(base, over, p_over, display, self.introduced, self.replaced, small_cell_threshold=threshold)
        return nuisance_tolerated(base, over, p_over, display, self.introduced, small_cell_threshold=threshold,
                                  strict_empty=strict_empty)
