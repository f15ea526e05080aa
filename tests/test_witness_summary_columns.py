"""A listing's repeated total is not a property of its rows (blind corpus c34, agent D).

Agent D listed the patient's TraZODone administrations with ``count(*) OVER ()`` beside each row; the
witness (one administration in the asked admission) adds a row, and the total on every row changes
from 19 to 20. Before, every base row counted as "gone", so the step was judged not to show the
gap (both blind reviewers accepted the episode). The rule: a column that holds one value on every
base row and another on every overlay row is the result's own total; the listing is judged without it.
"""

from __future__ import annotations

from verifier.abstention._witness import _compare
from verifier.sql._execute import QueryResult

COLS = ["medication", "event_text", "admissionid", "n"]
BASE = [("TraZODone", "Administered", 29279905 + i % 2, 19) for i in range(19)]


def _over(extra: list[tuple], total: int) -> list[tuple]:
    return [r[:3] + (total,) for r in BASE] + extra


def test_a_repeated_total_is_set_aside_and_the_new_row_shows() -> None:
    over = _over([("TraZODone", "Administered", 26226543, 20)], 20)
    s = _compare(QueryResult(COLS, BASE), QueryResult(COLS, over), None, None)
    assert s.sensitive and s.shows_gap, s.why


def test_a_listing_whose_rows_change_is_not_rescued_by_the_rule() -> None:
    # the witness replaces a row (and the total stays): no row appears from the listing's side alone
    over = _over([], 19)
    over[0] = ("TraZODone", "Administered", 26226543, 19)
    s = _compare(QueryResult(COLS, BASE), QueryResult(COLS, over), None, None)
    assert "base listing lacks" not in s.why
    # only the total changes: nothing appears
    s = _compare(QueryResult(COLS, BASE), QueryResult(COLS, _over([], 20)), None, None)
    assert not s.shows_gap, s.why
