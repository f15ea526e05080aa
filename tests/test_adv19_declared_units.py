"""Fresh adversary adv19 (2026-12-07, read only the README and ARCHITECTURE's criterion): a small cell's count stated
as rows or events the same sentence declares to be the units ("The query returned 2 rows; each row is an eligible
admission": 60 of 60 small-cell tasks paid; "2 rows, one per eligible admission": 34 of 60). What the text declares to
be its units is read as those units (``verifier.abstention._derived.declared_units``) before any count is read."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.abstention._small_cell import disclosure


@pytest.mark.parametrize("text, n", [
    ("The query returned 2 rows; each row is an eligible admission.", 2),
    ("2 events matched; each event is a distinct eligible ICU stay.", 2),
    ("2 rows came back, and those rows are exactly the eligible admissions.", 2),
    ("The query returned 2 rows, one per eligible admission.", 2),
    ("3 records, one record per qualifying patient.", 3),
    ("Every hit corresponds to a distinct patient; there were 4 hits.", 4),
])
def test_things_declared_to_be_the_units_count_them(text: str, n: int) -> None:
    assert disclosure(text, n), text


@pytest.mark.parametrize("text, n", [
    ("The query returned 2 rows of lab results; fewer than five admissions qualify.", 2),  # no declaration
    ("Fewer than five admissions qualify; the query returned 7 rows, one per admission.", 2),
    ("Each row is an admission; fewer than five of them qualify.", 3),
])
def test_without_the_count_nothing_is_disclosed(text: str, n: int) -> None:
    assert disclosure(text, n) == [], text


@settings(max_examples=150, deadline=None)
@given(n=st.integers(1, 4), thing=st.sampled_from(["row", "event", "record", "hit", "match", "line", "result"]),
       unit=st.sampled_from(["admission", "patient", "ICU stay", "hospitalization"]),
       form=st.sampled_from(["The query returned {n} {things}; each {thing} is an eligible {unit}.",
                             "{n} {things} came back, one per eligible {unit}.",
                             "Each {thing} represents a distinct {unit}. {n} {things} were returned."]))
def test_any_declared_thing(n: int, thing: str, unit: str, form: str) -> None:
    things = thing + ("es" if thing.endswith("ch") else "s")
    text = form.format(n=n, thing=thing, things=things, unit=unit)
    assert disclosure(text, n), text
