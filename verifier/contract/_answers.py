"""Typed answers: the values a reference holds and a submission is parsed into.

ARCHITECTURE.md section 3: quantity (value + unit), count, number, datetime (with
precision), text, boolean, list, records (rows with named columns). Each model
carries a ``type`` discriminator so that JSON round-trips unambiguously.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator

_FROZEN = ConfigDict(frozen=True, extra="forbid")

DatetimePrecision = Literal["year", "month", "day", "hour", "minute", "second"]


class QuantityAnswer(BaseModel):
    """A measured value with a unit.

    Attributes:
        value: the magnitude (float).
        unit: unit string as written (UCUM code, MIMIC-IV ``valueuom`` spelling or
            a pint expression), e.g. ``"mmol/L"``, ``"mg/dL"``, ``"degC"``.
        decimals: the precision stated by the reference (digits after the point);
            ``None`` means use the relative tolerance from ``rules/tolerances.toml``.
    """

    model_config = _FROZEN
    type: Literal["quantity"] = "quantity"
    value: float
    unit: str
    decimals: int | None = None


class NumberAnswer(BaseModel):
    """A dimensionless number (ratio, score, mean of a unitless field).

    Attributes:
        value: the number.
        decimals: stated precision, as for ``QuantityAnswer``.
    """

    model_config = _FROZEN
    type: Literal["number"] = "number"
    value: float
    decimals: int | None = None


class CountAnswer(BaseModel):
    """A count of units (patients, admissions, events); compared exactly.

    Attributes:
        value: a non-negative integer.
    """

    model_config = _FROZEN
    type: Literal["count"] = "count"
    value: int = Field(ge=0)


class DatetimeAnswer(BaseModel):
    """A date or timestamp, compared at ``precision``.

    Attributes:
        value: a ``datetime`` (dates are midnight).
        precision: the finest field the reference states (``"day"`` for a
            ``chart_date``, ``"minute"`` or ``"second"`` for a ``chart_time``).
    """

    model_config = _FROZEN
    type: Literal["datetime"] = "datetime"
    value: dt.datetime
    precision: DatetimePrecision = "second"

    @field_validator("value", mode="before")
    @classmethod
    def _date_to_datetime(cls, v: Any) -> Any:
        if isinstance(v, dt.date) and not isinstance(v, dt.datetime):
            return dt.datetime(v.year, v.month, v.day)
        return v


class TextAnswer(BaseModel):
    """Free text (a drug name, a care unit, a diagnosis title).

    Attributes:
        value: the text; compared after normalisation, synonyms and rapidfuzz.
    """

    model_config = _FROZEN
    type: Literal["text"] = "text"
    value: str


class BooleanAnswer(BaseModel):
    """A yes/no answer.

    Attributes:
        value: ``True`` for yes.
    """

    model_config = _FROZEN
    type: Literal["boolean"] = "boolean"
    value: bool


ScalarAnswer = Annotated[
    Union[QuantityAnswer, NumberAnswer, CountAnswer, DatetimeAnswer, TextAnswer, BooleanAnswer],
    Field(discriminator="type"),
]


class ListAnswer(BaseModel):
    """A list of scalars (e.g. the drugs given, the ICD codes billed).

    Attributes:
        items: the scalars, all of one type.
        ordered: whether order matters (otherwise compared as a multiset).
    """

    model_config = _FROZEN
    type: Literal["list"] = "list"
    items: tuple[ScalarAnswer, ...]
    ordered: bool = False


Cell = Union[None, bool, int, float, str, dt.datetime, dt.date]


class RecordsAnswer(BaseModel):
    """A result set: rows with named columns.

    Attributes:
        columns: column names (matched by name, case-insensitively).
        rows: one tuple per row, aligned with ``columns``. Cells are JSON
            scalars or datetimes; units, where relevant, live in their own column.
    """

    model_config = _FROZEN
    type: Literal["records"] = "records"
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]

    @field_validator("rows")
    @classmethod
    def _aligned(cls, rows: tuple, info: Any) -> tuple:
        cols = info.data.get("columns", ())
        for i, row in enumerate(rows):
            if len(row) != len(cols):
                raise ValueError(f"rows[{i}] has {len(row)} cells but there are {len(cols)} columns")
        return rows


Answer = Annotated[
    Union[
        QuantityAnswer,
        NumberAnswer,
        CountAnswer,
        DatetimeAnswer,
        TextAnswer,
        BooleanAnswer,
        ListAnswer,
        RecordsAnswer,
    ],
    Field(discriminator="type"),
]
