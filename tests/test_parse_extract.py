"""Typed extraction from answer text (verifier.match.extract, re-exported by verifier.parse)."""

from __future__ import annotations

import datetime as dt

import pytest

from verifier.parse import (
    extract_boolean,
    extract_count,
    extract_datetimes,
    extract_list,
    extract_numbers,
    extract_quantities,
    extract_records,
)


@pytest.mark.parametrize(
    "text, value, decimals, percent",
    [("1,234.5", 1234.5, 1, False), ("-3", -3.0, 0, False), ("+0.25", 0.25, 2, False), ("−7.1", -7.1, 1, False),
     ("1.2e-3", 0.0012, 1, False), ("6.02E23", 6.02e23, 2, False), ("35.2%", 35.2, 1, True),
     ("1.5 × 10^3", 1500.0, 1, False), ("about 12,000,000 people", 12_000_000.0, 0, False)],
)
def test_numbers(text: str, value: float, decimals: int, percent: bool) -> None:
    tok = extract_numbers(text)[0]
    assert tok.value == pytest.approx(value) and tok.decimals == decimals and tok.percent is percent


def test_numbers_skip_dates() -> None:
    assert [t.value for t in extract_numbers("on 2180-07-23 the count was 4")] == [4.0]


@pytest.mark.parametrize(
    "text, value, unit",
    [("5.2 mEq/L", 5.2, "mEq/L"), ("98.6 °F", 98.6, "°F"), ("37 °C", 37.0, "°C"), ("90 mg/dL", 90.0, "mg/dL"),
     ("35.2%", 35.2, "%"), ("7.5 x10^9/L", 7.5, "x10^9/L"), ("7.5 K/uL", 7.5, "K/uL"), ("120 mm Hg", 120.0, "mm Hg"),
     ("60 mL/min/1.73 m2", 60.0, "mL/min/1.73 m2"), ("4 insulin units", 4.0, "insulin units"),
     ("3 #/hpf", 3.0, "#/hpf"), ("K was 5.2 mmol/L in the morning", 5.2, "mmol/L"), ("5 patients", 5.0, None),
     ("2.5 in the morning", 2.5, None)],
)
def test_quantities(text: str, value: float, unit: str | None) -> None:
    tok = next((t for t in extract_quantities(text) if t.unit), extract_quantities(text)[0])
    assert (tok.value, tok.unit) == (value, unit)


def test_power_of_ten_stays_in_the_unit() -> None:
    toks = extract_quantities("WBC 4.2 x 10^9/L")
    assert len(toks) == 1 and toks[0].value == 4.2


@pytest.mark.parametrize(
    "text, value, precision",
    [
        ("2180-07-23", dt.datetime(2180, 7, 23), "day"),
        ("07/23/2180", dt.datetime(2180, 7, 23), "day"),
        ("23/07/2180", dt.datetime(2180, 7, 23), "day"),
        ("July 23, 2180", dt.datetime(2180, 7, 23), "day"),
        ("Jul 23rd 2180", dt.datetime(2180, 7, 23), "day"),
        ("23 Jul 2180 14:00", dt.datetime(2180, 7, 23, 14, 0), "minute"),
        ("the 23rd of July, 2180", dt.datetime(2180, 7, 23), "day"),
        ("2180-07-23T14:05:09", dt.datetime(2180, 7, 23, 14, 5, 9), "second"),
        ("July 23, 2180 at 2:30 PM", dt.datetime(2180, 7, 23, 14, 30), "minute"),
        ("07/23/2180 12:15 am", dt.datetime(2180, 7, 23, 0, 15), "minute"),
        ("September 2180", dt.datetime(2180, 9, 1), "month"),
    ],
)
def test_datetimes(text: str, value: dt.datetime, precision: str) -> None:
    tok = extract_datetimes(text)[0]
    assert (tok.value, tok.precision) == (value, precision)


def test_invalid_dates_are_ignored() -> None:
    assert extract_datetimes("2180-02-30") == []


@pytest.mark.parametrize("text, value", [("yes", True), ("No.", False), ("**True**", True), ("false, never", False),
                                          ("Y", True), ("maybe", None), ("not sure", None)])
def test_booleans(text: str, value: bool | None) -> None:
    assert extract_boolean(text) is value


@pytest.mark.parametrize("text, value", [("12", 12), ("1,204 patients", 1204), ("three", 3), ("4.5", None),
                                          ("none found", None)])
def test_counts(text: str, value: int | None) -> None:
    assert extract_count(text) == value


@pytest.mark.parametrize(
    "text, items",
    [("- aspirin\n- heparin\n- insulin", ["aspirin", "heparin", "insulin"]),
     ("1. a\n2) b", ["a", "b"]), ("aspirin, heparin and insulin", ["aspirin", "heparin", "insulin"]),
     ("a; b; c", ["a", "b", "c"]), ('["x", "y"]', ["x", "y"]), ("x\ny", ["x", "y"])],
)
def test_lists(text: str, items: list[str]) -> None:
    assert extract_list(text) == items


def test_records_markdown_csv_json() -> None:
    md = "| ID | **Drug** |\n|:---|---:|\n| 1 | aspirin |\n| 2 | heparin |"
    assert extract_records(md) == (["ID", "Drug"], [["1", "aspirin"], ["2", "heparin"]])
    assert extract_records("id\tdrug\n1\taspirin") == (["id", "drug"], [["1", "aspirin"]])
    assert extract_records("id, drug\n1, aspirin") == (["id", "drug"], [["1", "aspirin"]])
    assert extract_records('[{"id": 1, "drug": "a"}, {"drug": "b", "id": 2}]') == (["id", "drug"], [[1, "a"], [2, "b"]])
    assert extract_records('{"columns": ["a"], "rows": [[1], [2]]}') == (["a"], [[1], [2]])
    assert extract_records("just words") is None
