"""The one pint registry used by the verifier, built once.

Built lazily on first use, under a lock, from pint's defaults, ucumvert's UCUM
definitions (minus the lines ``rules/units.txt`` replaces) and
``rules/units.txt``. After construction it is only read; every pint call the
verifier makes goes through :func:`pint_lock` so that pint's internal parse
caches are never written by two threads at once. Results are cached one level
up (``verifier.units.convert``), so the hot path does not touch pint.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pint

from ..contract import RulesError, rules_path

#: ucumvert definition lines (by defined name) that rules/units.txt replaces:
#: UCUM makes ``eq`` a mole and ``IU``/HPF/LPF dimensionless; clinically an
#: equivalent depends on valence and an IU on the substance.
UCUM_LINES_REPLACED = ("equivalents", "international_unit", "high_power_field", "low_power_field")

_LOCK = threading.RLock()
_REGISTRY: pint.UnitRegistry | None = None
_UCUM = None


def pint_lock() -> threading.RLock:
    """The lock guarding every call into pint (re-entrant)."""
    return _LOCK


def _ucum_lines() -> list[str]:
    import ucumvert

    path = Path(ucumvert.__file__).resolve().parent / "pint_ucum_defs.txt"
    keep = []
    for line in path.read_text(encoding="utf8").splitlines():
        name = line.split("=", 1)[0].strip()
        if name in UCUM_LINES_REPLACED:
            continue
        keep.append(line)
    return keep


def _build() -> pint.UnitRegistry:
    reg = pint.UnitRegistry(autoconvert_offset_to_baseunit=False, on_redefinition="raise", cache_folder=None)
    reg.load_definitions(_ucum_lines())
    path = rules_path("units.txt")
    try:
        reg.load_definitions(str(path))
    except (pint.errors.DefinitionSyntaxError, pint.errors.RedefinitionError, ValueError) as exc:
        raise RulesError(path, f"bad unit definition: {exc}") from exc
    return reg


def get_registry() -> pint.UnitRegistry:
    """Return the shared registry, building it on first call (thread-safe).

    Returns:
        A ``pint.UnitRegistry``; treat it as read-only and call it only while
        holding :func:`pint_lock`.

    Raises:
        RulesError: ``rules/units.txt`` is malformed.
    """
    global _REGISTRY
    if _REGISTRY is None:
        with _LOCK:
            if _REGISTRY is None:
                _REGISTRY = _build()
    return _REGISTRY


def ucum_to_pint(code: str) -> pint.Quantity:
    """Parse a UCUM code (case-sensitive) into a quantity of the shared registry.

    Returns:
        A pint Quantity (magnitude = the code's numeric factor, e.g. 1000 for
        ``10*3/uL``).

    Raises:
        Exception: lark/pint errors for codes that are not valid UCUM or not
        expressible; callers wrap them into ``UnitError``.
    """
    global _UCUM
    reg = get_registry()
    with _LOCK:
        if _UCUM is None:
            from ucumvert import UcumToPintTransformer, get_ucum_parser

            _UCUM = (get_ucum_parser(), UcumToPintTransformer(ureg=reg))
        parser, transformer = _UCUM
        tree = parser.parse(code)
        out = transformer.transform(tree)
        if not isinstance(out, pint.Quantity):
            out = reg.Quantity(1, out) if isinstance(out, pint.Unit) else reg.Quantity(out)
        return out
