"""Clinical units: one pint registry (rules/units.txt), analyte bridges
(rules/analytes.toml), MIMIC-IV spellings and UCUM codes, cached conversions.

Public: ``parse_unit``, ``is_unit_spelling``, ``linear_converter``, ``convert``, ``same_unit``,
``get_registry``, ``get_analyte``, ``UnitSpec``, ``Conversion``.

Layer: imports only ``verifier.contract`` (errors, rule tables).
"""

from .analytes import Analyte, analyte_keys, get_analyte
from .convert import (
    Conversion,
    UnitSpec,
    convert,
    is_unit_spelling,
    linear_converter,
    parse_unit,
    same_unit,
)
from .registry import get_registry, pint_lock

__all__ = [
    "Analyte", "Conversion", "UnitSpec", "analyte_keys", "convert", "get_analyte", "get_registry", "is_unit_spelling",
    "linear_converter", "parse_unit", "pint_lock", "same_unit",
]
