"""Unit parsing and conversion, cached so the hot path never re-parses.

``parse_unit`` turns a unit string (MIMIC-IV spelling, pint expression or UCUM
code) into a :class:`UnitSpec`; ``linear_converter`` returns the affine map
``y = scale * x + offset`` from one unit to another (optionally through an
analyte: mass <-> molar, mEq <-> mmol, IU <-> U). Both are ``lru_cache``d on
their string arguments; pint is called only on a cache miss, under the
registry lock.

Resolution order of a unit string (first that works):
0. ``rules/unparsed_units.toml``: refused with the listed reason;
1. ``rules/synonyms.toml`` ``[units]`` (exact, then case-insensitive);
2. UCUM (ucumvert) when the string looks like UCUM (brackets, braces,
   ``m-1`` style exponents, ``.`` products, ``10*3`` factors);
3. pint's own parser after light normalisation (µ -> u, ² -> **2,
   ``x10^9`` -> ``1e9``, ``°C`` -> ``degC``);
4. UCUM as a last resort;
5. only when none of the above parses the string as written: its case-insensitive readings
   (``verifier.units.casefold``: ``MG/DL`` -> ``mg/dL``), accepted when every reading that parses
   denotes the same unit (so ``Ms``, a megasecond as written, never becomes ``ms``).

Conversion (``linear_converter``) adds one case rule for strings that do parse as written: when
the exact reading cannot convert to the other unit in any way (no analyte bridge either) and the
case-insensitive reading can, the case-insensitive reading is taken. ``MG/dL`` parses as
megagauss per decilitre, which no concentration can be; against an ``mg/dL`` or ``mmol/L``
reference (with glucose) it is read as mg/dL. A reading that is dimensionally compatible as
written is never re-read (``Mg/dL``, megagrams per decilitre, stays a mass concentration a
billion times too large; ``Ms`` against ``ms`` stays a megasecond).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace
from functools import lru_cache

import pint

from ..contract import UnitError, load_toml
from .analytes import get_analyte
from .casefold import case_readings
from .registry import get_registry, pint_lock, ucum_to_pint

_UCUM_LIKE = re.compile(r"[\[\]{}]|[A-Za-z\]][-+]?\d|[A-Za-z\]]\.[A-Za-z\[(]|^10[*^]|\d\.[A-Za-z\[]")
_TEN_POW = re.compile(r"(?:^|(?<=[\s(*/]))(?:[x×*]\s*)?10\s*(?:\^|\*\*|\*|E|e)\s*([+-]?\d+)")
_TEN_POW_LEAD = re.compile(r"^[x×]\s*10\s*(?:\^|\*\*|\*)\s*([+-]?\d+)")
_DEG = re.compile(r"[°º]\s*([CF])\b")
_UNIT_WORD = re.compile(r"(?i)(?<![A-Za-z])units?(?![A-Za-z])")
_ANNOT = re.compile(r"\{[^}]*\}")
_MICRO = str.maketrans({"µ": "u", "μ": "u"})
_SUP_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SUP_POW = re.compile(r"(?<=[0-9A-Za-z)\]])([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)")
#: "mg/100mL": a number inside a denominator belongs to it (pint alone reads mg / 100 * mL)
_PER_NUMBER = re.compile(r"/\s*(\d+(?:\.\d+)?)\s*([A-Za-z]+)(?=\s*(?:$|/))")
_SUPER = str.maketrans({"²": "**2", "³": "**3", "µ": "u", "μ": "u", "·": "*", "⁻": "-", "¹": "1"})


@dataclass(frozen=True, slots=True)
class UnitSpec:
    """A parsed unit.

    Attributes:
        text: the string as given.
        factor: numeric factor of the unit (1000 for ``K/uL`` = 1e3/uL).
        unit: the pint unit (of the shared registry).
        via: how it was resolved: ``synonym``, ``pint`` or ``ucum``.
    """

    text: str
    factor: float
    unit: pint.Unit
    via: str

    @property
    def dimensionality(self) -> str:
        """The unit's dimensionality as a string (e.g. ``[substance] / [length] ** 3``)."""
        with pint_lock():
            return str(self.unit.dimensionality)


@lru_cache(maxsize=1)
def _spellings() -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    table = load_toml("synonyms.toml").get("units", {})
    refused = {k: v.get("reason", "") for k, v in load_toml("unparsed_units.toml").get("unit", {}).items()}
    return dict(table), {k.casefold(): v for k, v in table.items()}, refused


def _normalise(text: str) -> str:
    s = _SUP_POW.sub(lambda m: "^" + m[1].translate(_SUP_DIGITS), text.strip())
    s = s.translate(_SUPER)
    s = _ANNOT.sub("", s)
    s = _DEG.sub(r"deg\1", s)
    s = _TEN_POW_LEAD.sub(r"1e\1 *", s)
    s = _TEN_POW.sub(r"1e\1 *", s)
    s = s.replace("^", "**").strip()
    s = re.sub(r"\*\s*$", "", s).strip()
    if s.startswith("/"):
        s = "1 " + s
    s = re.sub(r"\*\s*/", "/", s)
    return _PER_NUMBER.sub(r"/ (\1 * \2)", s)


def _to_spec(text: str, q, via: str) -> UnitSpec:
    reg = get_registry()
    if isinstance(q, (int, float)):
        q = reg.Quantity(q)
    elif isinstance(q, pint.Unit):
        q = reg.Quantity(1, q)
    factor = float(q.magnitude)
    if factor <= 0:
        raise UnitError(text, "unit factor must be positive")
    return UnitSpec(text, factor, q.units, via)


#: Longer unit strings are refused before pint sees them (a 2,000-times
#: repeated ``m/`` took seconds); the longest real unit is ~20 characters.
MAX_UNIT_CHARS = 64


@lru_cache(maxsize=4096)
def _parse_cached(text: str, fold_case: bool = True) -> UnitSpec | str:
    exact, folded, refused = _spellings()
    if text in refused or text.strip() in refused:
        return f"not parsed on purpose (rules/unparsed_units.toml): {refused.get(text) or refused[text.strip()]}"
    stripped = text.strip()
    if not stripped:
        return "empty unit string"
    if len(stripped) > MAX_UNIT_CHARS:  # bounds pint's work on pathological strings
        return f"unit string longer than {MAX_UNIT_CHARS} characters"
    reg = get_registry()
    errors = []
    with pint_lock():
        key = stripped.translate(_MICRO)
        expr = exact.get(key) or folded.get(key.casefold())
        if expr is not None:
            try:
                return _to_spec(text, reg.parse_expression(expr), "synonym")
            except Exception as exc:  # rules entry is broken: report, do not guess
                return f"synonym {expr!r} does not parse: {exc}"
        if _UNIT_WORD.search(stripped):
            # "unit(s)" in a compound ("units/hr", "unit/kg/hr") is the charted drug unit (IU, as the
            # synonym "units" says); pint would read "unit" as micro-nit (a luminance)
            stripped = _UNIT_WORD.sub("IU", stripped)
        attempts = [("ucum", stripped), ("pint", _normalise(stripped))]
        if not _UCUM_LIKE.search(stripped):
            attempts.reverse()
        for via, s in attempts:
            try:
                q = ucum_to_pint(s) if via == "ucum" else reg.parse_expression(s)
                return _to_spec(text, q, via)
            except Exception as exc:  # pint/lark raise many types; collect and report
                errors.append(f"{via}: {type(exc).__name__}: {(str(exc).splitlines() or [''])[0][:120]}")
        folded_spec = _case_fallback(text, stripped) if fold_case else None
        if folded_spec is not None:
            return folded_spec
    return "; ".join(errors) or "not a unit"


def _case_fallback(text: str, stripped: str) -> UnitSpec | None:
    """The unit of ``stripped`` read case-insensitively, if every reading agrees (see module doc)."""
    specs = [s for s in (_parse_cached(c, False) for c in case_readings(stripped)) if not isinstance(s, str)]
    if not specs:
        return None
    first = specs[0]
    for other in specs[1:]:
        if other.unit.dimensionality != first.unit.dimensionality:
            return None
        ratio = (first.factor * first.unit / (other.factor * other.unit)).to_base_units()
        if not ratio.unitless or abs(float(ratio.magnitude) - 1.0) > 1e-9:
            return None
    return UnitSpec(text, first.factor, first.unit, "casefold")


def parse_unit(text: str) -> UnitSpec:
    """Parse a unit string (cached).

    Args:
        text: e.g. ``"mEq/L"``, ``"K/uL"``, ``"mm[Hg]"``, ``"mL/min/1.73 m2"``.

    Returns:
        The :class:`UnitSpec`.

    Raises:
        UnitError: the string is not a unit the registry can express.
    """
    out = _parse_cached(text)
    if isinstance(out, str):
        raise UnitError(text, out)
    return out


@dataclass(frozen=True, slots=True)
class Conversion:
    """An affine conversion ``y = scale * x + offset`` (or why there is none).

    Attributes:
        scale / offset: the map, when ``error`` is ``None``.
        bridge: what analyte constants were used (``""`` if none), e.g.
            ``"molar_mass 180.156 g/mol"``.
        error: why the units cannot be converted, else ``None``.
        incompatible: True when the failure is a dimension mismatch (as
            opposed to an unparseable unit).
    """

    scale: float = 1.0
    offset: float = 0.0
    bridge: str = ""
    error: str | None = None
    incompatible: bool = False

    def __call__(self, x: float) -> float:
        return self.scale * x + self.offset


def _bridges(analyte: str | None) -> list[tuple[object, str]]:
    """Every product of the analyte's constants with exponent -1, 0 or +1.

    The first entry is ``(None, "")`` (no bridge). At most one entry can fit a
    given pair of dimensions because the constants' dimensions are independent.
    """
    if not analyte:
        return [(None, "")]
    reg = get_registry()
    a = get_analyte(analyte)
    consts = []
    if a.molar_mass:
        consts.append((reg.Quantity(a.molar_mass, "g/mol"), f"molar_mass {a.molar_mass} g/mol"))
    if a.valence:
        consts.append((reg.Quantity(a.valence, "eq/mol"), f"valence {a.valence}"))
    if a.iu_per_u:
        consts.append((reg.Quantity(a.iu_per_u, "IU/enzyme_unit"), f"iu_per_u {a.iu_per_u}"))
    out: list[tuple[object, str]] = []
    for powers in itertools.product((0, 1, -1), repeat=len(consts)):
        if not any(powers):
            out.insert(0, (None, ""))
            continue
        q, labels = reg.Quantity(1), []
        for (c, label), p in zip(consts, powers):
            if p:
                q = q * c if p > 0 else q / c
                labels.append(label)
        out.append((q, f"{analyte}: " + ", ".join(labels)))
    return out


@lru_cache(maxsize=1)
def _dose_unit_bridges() -> list[tuple[object, str]]:
    """The bridge between the charted dose unit and ``U`` (issue 32, point 3).

    MIMIC-IV charts insulin and heparin doses and rates in the word ``units`` (``units/hr``,
    ``unit/mL``, read as IU, ``rules/units.txt``); clinicians abbreviate it ``U`` (ISMP lists the
    abbreviation as error-prone, its meaning is "units"), which the registry reads as the enzyme
    unit (UCUM ``U`` = 1 umol/min). When one side is spelled with the word ``unit(s)``, a ``U`` on
    the other side is that unit, 1:1, whatever the analyte: ``4 U/hr`` is ``4 units/hr``. Never a
    mass (a unit of insulin has no fixed mass here) and never ``IU`` against ``U`` alone: an IU is
    defined per substance (``rules/analytes.toml`` bridges IU and U per analyte)."""
    reg = get_registry()
    label = "'U' read as the charted dose unit 'units' (1:1)"
    one = reg.Quantity(1, "IU/enzyme_unit")
    return [(one, label), (1 / one, label)]


def _same_spelling(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` spell one unit (see ``linear_converter``)."""
    a, b = " ".join(a.split()), " ".join(b.split())
    if a == b:
        return bool(a)
    return a.casefold() == b.casefold() and a.casefold() in _refused_folded()


@lru_cache(maxsize=16384)
def is_unit_spelling(text: str) -> bool:
    """Whether ``text`` is a unit: it parses, or it is a unit refused on purpose.

    Units listed in ``rules/unparsed_units.toml`` (dose forms such as ``NEB``,
    ``TAB``; log-scale viral loads; ``mg PE``) are units of the record even
    though they never convert: answer extraction must keep them attached to
    their number, so that ``1 NEB`` compares with a ``1 NEB`` reference (the
    identity, see ``linear_converter``) and ``1 TAB`` against it is
    ``INCOMPATIBLE_UNIT``, not a unitless 1. Case-insensitive for listed units.
    """
    if " ".join(text.split()).casefold() in _refused_folded():
        return True
    return not isinstance(_parse_cached(text), str)


@lru_cache(maxsize=1)
def _refused_folded() -> frozenset[str]:
    return frozenset(" ".join(k.split()).casefold() for k in _spellings()[2])


@lru_cache(maxsize=8192)
def linear_converter(src: str, dst: str, analyte: str | None = None) -> Conversion:
    """The cached affine map from unit ``src`` to unit ``dst``.

    Args:
        src / dst: unit strings (any spelling :func:`parse_unit` accepts).
        analyte: key or alias in ``rules/analytes.toml``; enables mass<->molar
            (molar mass), mEq<->mmol (valence) and IU<->U (enzymes).

    Returns:
        A :class:`Conversion`; never raises for bad units (``error`` says why),
        so that failures are cached too. Two spellings of the same unit
        (equal after collapsing whitespace; case-insensitively for the dose
        forms and other units refused on purpose in
        ``rules/unparsed_units.toml``, such as ``NEB`` and ``neb``) give the
        identity map without parsing: "1 NEB" is "1 NEB" whatever a NEB is.
    """
    if _same_spelling(src, dst):
        return Conversion()
    try:
        s, d = parse_unit(src), parse_unit(dst)
    except UnitError as exc:
        return Conversion(error=str(exc))
    try:
        bridges = _bridges(analyte)
    except UnitError as exc:
        return Conversion(error=str(exc))
    with pint_lock():
        found = _connect(s, d, bridges, src, dst)
        if found is None:  # the exact readings cannot convert: a case-insensitive reading may (module doc)
            for s2, d2 in _case_alternatives(s, d):
                found = _connect(s2, d2, bridges, src, dst)
                if found is not None:
                    read = "; ".join(f"{x.text!r} read case-insensitively (its exact-case reading is another dimension)"
                                     for x in (s2, d2) if x.via == "casefold")
                    found = replace(found, bridge="; ".join(b for b in (found.bridge, read) if b))
                    break
        if found is None and (_UNIT_WORD.search(src) or _UNIT_WORD.search(dst)):
            found = _connect(s, d, _dose_unit_bridges(), src, dst)
        if found is not None:
            return found
        why = f"{src!r} [{s.unit.dimensionality}] cannot convert to {dst!r} [{d.unit.dimensionality}]"
        if analyte is None:
            why += " (no analyte given for a mass/molar/equivalent bridge)"
    return Conversion(error=why, incompatible=True)


def _connect(s: UnitSpec, d: UnitSpec, bridges: list[tuple[object, str]], src: str, dst: str) -> Conversion | None:
    """The conversion from ``s`` to ``d`` through the first bridge that fits their dimensions.

    Args:
        s / d: the parsed source and target units.
        bridges: ``_bridges(analyte)`` (``(None, "")`` first: no bridge).
        src / dst: the unit strings as given (for the error).

    Returns:
        A ``Conversion`` (with ``error`` set when pint cannot compute a map that fits, e.g. an
        offset unit with a factor), or None when no bridge fits the dimensions. Call under
        ``pint_lock``.
    """
    reg = get_registry()
    target = d.unit.dimensionality
    for bridge, label in bridges:
        base = reg.Quantity(1, s.unit) if bridge is None else reg.Quantity(1, s.unit) * bridge
        if base.dimensionality != target:
            continue
        try:
            def conv(x: float) -> float:
                q = reg.Quantity(x * s.factor, s.unit)
                if bridge is not None:
                    q = q * bridge
                return float(q.to(d.unit).magnitude) / d.factor

            y0, y1 = conv(0.0), conv(1.0)
        except Exception as exc:  # offset units with a factor, etc.
            return Conversion(error=f"cannot convert {src!r} to {dst!r}: {exc}")
        return Conversion(scale=y1 - y0, offset=y0, bridge=label)
    return None


def _case_alternatives(s: UnitSpec, d: UnitSpec) -> list[tuple[UnitSpec, UnitSpec]]:
    """Pairs of readings to try when ``s`` cannot convert to ``d`` as written (module doc).

    Args:
        s / d: the exact-case readings of the source and target units.

    Returns:
        ``(folded s, d)``, ``(s, folded d)``, ``(folded s, folded d)``, for each side whose
        case-insensitive reading exists (``_case_fallback``: every reading agrees) and is
        another dimension than its exact reading; empty when neither side has one.
    """
    fs, fd = _refolded(s), _refolded(d)
    out = []
    if fs is not None:
        out.append((fs, d))
    if fd is not None:
        out.append((s, fd))
    if fs is not None and fd is not None:
        out.append((fs, fd))
    return out


def _refolded(spec: UnitSpec) -> UnitSpec | None:
    """``spec.text`` read case-insensitively when that reading is another dimension, else None."""
    if spec.via == "casefold":
        return None
    folded = _case_fallback(spec.text, spec.text.strip())
    if folded is None or folded.unit.dimensionality == spec.unit.dimensionality:
        return None
    return folded


def convert(value: float, src: str, dst: str, analyte: str | None = None) -> float:
    """Convert ``value`` from unit ``src`` to unit ``dst``.

    Raises:
        UnitError: a unit does not parse, or the dimensions cannot be bridged.
    """
    c = linear_converter(src, dst, analyte)
    if c.error:
        raise UnitError(src, c.error)
    return c(value)


def same_unit(a: str, b: str) -> bool:
    """True when two unit strings denote the identical unit (identity conversion)."""
    if a.strip() == b.strip():
        return True
    c = linear_converter(a, b, None)
    return c.error is None and abs(c.scale - 1.0) < 1e-12 and abs(c.offset) < 1e-9
