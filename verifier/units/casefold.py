"""Case-insensitive readings of a unit string (``MG/DL`` is mg/dL), for the fallback in ``convert``.

UCUM is case-sensitive (``Ms`` is a megasecond, ``ms`` a millisecond), and clinical text often
writes units in upper case (``MG/DL``, ``MMOL/L``). :func:`case_readings` gives the spellings a
string that does *not* parse as written could mean when its case is ignored: its lower-case form,
and its reading under UCUM's own case-insensitive codes (the ``CODE`` attribute of every prefix
and unit in the UCUM essence file, vendored by ucumvert as ``vendor/ucum-essence.xml``; UCUM
defines those codes to be unambiguous). ``verifier.units.convert`` accepts the fallback only when
every reading that parses denotes the same unit; it never re-reads a string that parses as written.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from functools import lru_cache
from pathlib import Path

_ATOM = re.compile(r"[A-Za-z]+")


@lru_cache(maxsize=1)
def _ucum_codes() -> tuple[dict[str, str], dict[str, str], frozenset[str]]:
    """(prefixes CI->CS, units CI->CS, metric CS unit codes) from the UCUM essence file."""
    import ucumvert

    path = Path(ucumvert.__file__).resolve().parent / "vendor" / "ucum-essence.xml"
    root = ET.parse(path).getroot()
    prefixes, units, metric = {}, {}, set()
    for el in root:
        cs, ci = el.get("Code"), el.get("CODE")
        if not cs or not ci:
            continue
        tag = el.tag.rsplit("}", 1)[-1]  # the essence file has a default namespace
        if tag == "prefix":
            prefixes[ci] = cs
        elif tag in ("unit", "base-unit"):
            units[ci] = cs
            if tag == "base-unit" or el.get("isMetric") == "yes":
                metric.add(cs)
    return prefixes, units, frozenset(metric)


def _atom_readings(atom: str) -> set[str]:
    """Case-sensitive UCUM codes whose case-insensitive code is ``atom`` (upper-cased)."""
    prefixes, units, metric = _ucum_codes()
    key = atom.upper()
    out = {units[key]} if key in units else set()
    for ci, cs in prefixes.items():
        if key.startswith(ci) and key[len(ci):] in units and units[key[len(ci):]] in metric:
            out.add(cs + units[key[len(ci):]])
    return out


def case_readings(text: str) -> list[str]:
    """The spellings ``text`` may stand for when its letter case is ignored.

    Args:
        text: a unit string that did not parse as written (e.g. ``"MG/DL"``).

    Returns:
        Up to two candidate spellings, without ``text`` itself: the lower-case form and, when
        every letter run is a UCUM case-insensitive code with exactly one reading, the UCUM
        case-sensitive form (``"mg/dL"``). Empty when ``text`` has no upper-case letter. A UCUM
        letter run with several readings makes the UCUM form absent (no guess).
    """
    if text == text.lower():
        return []
    out = [text.lower()]
    pieces, pos, ok = [], 0, True
    for m in _ATOM.finditer(text):
        readings = _atom_readings(m.group())
        if len(readings) != 1:
            ok = False
            break
        pieces += [text[pos:m.start()], next(iter(readings))]
        pos = m.end()
    if ok:
        ucum = "".join(pieces) + text[pos:]
        if ucum not in out and ucum != text:
            out.append(ucum)
    return out
