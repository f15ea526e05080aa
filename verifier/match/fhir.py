"""An HL7 FHIR resource as the Answer: the value it states (blind corpus c44, a clinical-informatics engineer).

Agents built for clinical interoperability answer with a FHIR resource (R4/R5, https://hl7.org/fhir/): an
``Observation`` whose value is its ``value[x]`` element, the other elements (``code``, ``subject``, ``encounter``,
``effectiveDateTime``, ``status``) saying what was observed, of whom and when. Read as text, such an Answer holds
the item's id, the patient's and the encounter's ids and a time beside the value ("ambiguous answer: 4 different
numbers" on c44's ``{"resourceType": "Observation", ..., "valueQuantity": {"value": 104, "unit": "mEq/L"}}``).

The rule is FHIR's own: ``value[x]`` is a choice element of cardinality 0..1, so a resource states at most one
value, and that element is the Answer's one reading:

* ``valueQuantity`` → its ``value`` and its ``unit`` (the human-readable unit; else its UCUM ``code``), with its
  ``comparator`` before it when it has one ("< 5 mg": a bound, which the matchers read as such);
* ``valueInteger``, ``valueDecimal``, ``valueString``, ``valueBoolean``, ``valueDateTime``, ``valueDate``,
  ``valueTime``, ``valueInstant`` → the value as written;
* ``valueCodeableConcept`` with exactly one ``coding`` → that coding's ``code`` and ``display`` ("254 – OTHER
  DIGESTIVE SYSTEM DIAGNOSES"); without a coding, its ``text``; ``valueCoding`` likewise. The concept's ``text``
  beside a coding is FHIR's rendering of the same concept and is not read (one place only).
* a ``MeasureReport`` (a population measure) with exactly one ``group`` → that group's ``measureScore`` as a
  quantity, else the ``count`` of its one ``population``.

Anything else is read as written, as before: a resource with no value element, with two (``valueQuantity`` beside
``valueString``: not valid FHIR, two values), with ``component`` values or a ``dataAbsentReason`` beside a value,
a concept with several codings, a range, ratio, period or sampled data, a report with several groups or
populations. Exactly one element is read, so a hedge gains nothing: a second value elsewhere in the resource (an
``interpretation``, a ``note``, the concept's ``text``) is never a candidate, and a right value standing only there
never rescues a wrong ``value[x]``.

Layer: pure; ``verifier.verify`` calls :func:`fhir_value` before the matchers on Clean tasks.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .lead import json_literal

#: A FHIR choice element ``value[x]``: "value" then a type name ("valueQuantity", "valueString").
_VALUE_X = re.compile(r"^value[A-Z][A-Za-z]*$")
_SCALAR_TYPES = frozenset({"valueInteger", "valueDecimal", "valueString", "valueBoolean", "valueDateTime", "valueDate",
                           "valueTime", "valueInstant", "valueUnsignedInt", "valuePositiveInt", "valueCode"})
_COMPARATORS = frozenset({"<", "<=", ">=", ">", "ad"})


def fhir_value(text: str, answer_json: Any = None) -> str | None:
    """The value an Answer written as one FHIR resource states (module docstring), else ``None``.

    Args:
        text: the parsed Answer text; read when it is one JSON object (at most 20,000 characters).
        answer_json: the decoded JSON answer of a JSON response (``ParsedResponse.answer_json``), or ``None``.

    Returns:
        The value as text ("104 mEq/L", "Right IJ", "254 – OTHER DIGESTIVE SYSTEM DIAGNOSES"), or ``None`` when the
        Answer is not a FHIR resource (a JSON object with a string ``resourceType``) or does not state exactly one
        value by the rule above. Never raises.
    """
    obj = answer_json if isinstance(answer_json, dict) else json_literal(text, dict)
    if not isinstance(obj, dict) or not isinstance(obj.get("resourceType"), str):
        return None
    if _duplicate_keys(text):
        return None  # '{"valueQuantity": A, "valueQuantity": B}' states two values (a decoder keeps the last)
    if obj["resourceType"] == "MeasureReport":
        return _measure(obj)
    keys = [k for k in obj if isinstance(k, str) and _VALUE_X.match(k)]
    if len(keys) != 1 or "component" in obj or "dataAbsentReason" in obj:
        return None
    return _element(keys[0], obj[keys[0]])


def fhir_absent(obj: Any) -> bool:
    """Whether a decoded Answer is one FHIR resource that states its value is absent: FHIR's own NULL.

    FHIR (R4/R5 ``Observation.dataAbsentReason``, binding http://hl7.org/fhir/ValueSet/data-absent-reason) says why
    ``value[x]`` is missing, and the invariant obs-6 forbids the two together. A resource with a ``dataAbsentReason``
    and no ``value[x]``, no ``component`` and no ``valueQuantity`` in a ``MeasureReport`` group is the abstention
    written in FHIR (issue 32: an agent answering in FHIR abstains this way). Anything else is not NULL: a
    ``dataAbsentReason`` beside a value states a value (read as written, a hedge on Noise as on Clean).

    Args:
        obj: the decoded JSON Answer (any JSON value).

    Returns:
        ``True`` for such a resource, else ``False``. Never raises.
    """
    if not isinstance(obj, dict) or not isinstance(obj.get("resourceType"), str) or "dataAbsentReason" not in obj:
        return False
    reason = obj["dataAbsentReason"]
    if not (isinstance(reason, dict) and (reason.get("coding") or reason.get("text"))):
        return False  # a reason must be stated: a CodeableConcept with a coding or a text
    return not any(isinstance(k, str) and (_VALUE_X.match(k) or k in ("component", "group")) for k in obj)


def _element(key: str, value: Any) -> str | None:
    if key == "valueQuantity":
        return _quantity(value)
    if key in _SCALAR_TYPES:
        return _scalar(value)
    if key == "valueCodeableConcept" and isinstance(value, dict):
        codings = value.get("coding")
        if codings is None:
            return _scalar(value.get("text"))
        return _coding(codings[0]) if isinstance(codings, list) and len(codings) == 1 else None
    if key == "valueCoding":
        return _coding(value)
    return None  # a range, ratio, period, sampled data, attachment, reference: read as written


def _duplicate_keys(text: str) -> bool:
    """Whether the Answer's JSON names a key twice in one object (at any depth); ``False`` when it is no JSON."""
    seen_twice = False

    def pairs(items: list[tuple[str, Any]]) -> dict:
        nonlocal seen_twice
        keys = [k for k, _ in items]
        seen_twice = seen_twice or len(keys) != len(set(keys))
        return dict(items)

    try:
        json.loads(text.strip(), object_pairs_hook=pairs)
    except ValueError:
        return False
    return seen_twice


def _same_unit(unit: str, code: str) -> bool:
    """Whether a Quantity's ``unit`` and UCUM ``code`` name one unit: equal once case, spaces, brackets and braces are
    set aside ("mEq/L" and "meq/L", "insp/min" and "{insp}/min", "mm Hg" and "mm[Hg]"), or convertible by identity."""
    from ..units.convert import same_unit  # noqa: PLC0415 - pint loads lazily

    def fold(u: str) -> str:
        return re.sub(r"[\s\[\]{}]", "", u).casefold()

    if fold(unit) == fold(code):
        return True
    try:
        return same_unit(unit, code)
    except Exception:  # noqa: BLE001 - a unit the registry cannot read: not shown to be the same
        return False


def _scalar(value: Any) -> str | None:
    if isinstance(value, (bool, int, float)):  # JSON's own spelling: true, 4, 4.5
        return json.dumps(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _quantity(value: Any) -> str | None:
    if not isinstance(value, dict):
        return None
    number = value.get("value")
    if isinstance(number, bool) or not isinstance(number, (int, float, str)) or not str(number).strip():
        return None
    unit = value.get("unit") if isinstance(value.get("unit"), str) and value["unit"].strip() else value.get("code")
    code = value.get("code")
    if isinstance(unit, str) and isinstance(code, str) and code.strip() and not _same_unit(unit, code):
        return None  # the human unit and the UCUM code disagree ("mg/dL" coded "mmol/L"): two quantities
    comparator = value.get("comparator")
    if comparator is not None and comparator not in _COMPARATORS:
        return None
    out = f"{comparator} " if comparator else ""
    out += str(number).strip()
    return f"{out} {unit.strip()}" if isinstance(unit, str) and unit.strip() else out


def _coding(coding: Any) -> str | None:
    if not isinstance(coding, dict):
        return None
    code, display = _scalar(coding.get("code")), _scalar(coding.get("display"))
    if code and display:
        return f"{code} – {display}"
    return code or display


def _measure(obj: dict) -> str | None:
    groups = obj.get("group")
    if not isinstance(groups, list) or len(groups) != 1 or not isinstance(groups[0], dict):
        return None
    group = groups[0]
    if "measureScore" in group:
        return _quantity(group["measureScore"])
    populations = group.get("population")
    if isinstance(populations, list) and len(populations) == 1 and isinstance(populations[0], dict):
        count = populations[0].get("count")
        return str(count) if isinstance(count, int) and not isinstance(count, bool) else None
    return None
