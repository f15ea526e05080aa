"""UCUM functional tests (conversion section) against the verifier's registry.

Reads ``UcumFunctionalTests.xml`` from ``$UCUM_DIR`` or ``../shared/data/ucum``
(skips, saying so, only when the file is absent). Every conversion case the
registry can express must pass; cases it cannot express are out of scope with
a reason, and fewer than a quarter of the section may be out of scope.
"""

from __future__ import annotations

import math
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from verifier.contract import UnitError
from verifier.units import linear_converter, parse_unit

REPO = Path(__file__).resolve().parent.parent
UCUM_DIR = Path(os.environ.get("UCUM_DIR", REPO.parent / "shared" / "data" / "ucum"))
UCUM_FILE = UCUM_DIR / "UcumFunctionalTests.xml"


def _sig_digits(text: str) -> int:
    """Significant digits of a decimal literal; an integer's trailing zeros are not significant.

    Capped at 9: the file notes that implementations need not keep the long-hand
    precision of the [pi]/[mu_0] cases (pint uses CODATA 2018 for mu_0).
    """
    mantissa = text.lower().split("e")[0].lstrip("+-")
    if "." in mantissa:
        digits = mantissa.replace(".", "").lstrip("0")
    else:
        digits = mantissa.lstrip("0").rstrip("0")
    return min(9, max(1, len(digits)))


def _cases() -> list[dict[str, str]]:
    if not UCUM_FILE.is_file():
        pytest.skip(f"UCUM functional tests not found at {UCUM_FILE} (set UCUM_DIR); test skipped")
    root = ET.parse(UCUM_FILE).getroot()
    section = root.find("conversion")
    assert section is not None, "no <conversion> section in the UCUM test file"
    return [dict(c.attrib) for c in section.findall("case")]


def test_ucum_conversion_cases() -> None:
    cases = _cases()
    ran, passed, out_of_scope, failures = 0, 0, [], []
    for case in cases:
        src, dst = case["srcUnit"], case["dstUnit"]
        try:
            parse_unit(src)
            parse_unit(dst)
        except UnitError as exc:
            out_of_scope.append((case["id"], f"unit not expressible: {exc}"))
            continue
        conv = linear_converter(src, dst)
        if conv.error:
            out_of_scope.append((case["id"], conv.error))
            continue
        ran += 1
        got = conv(float(case["value"]))
        want = float(case["outcome"])
        # UCUM states outcomes to the significant digits of the outcome text.
        sig = _sig_digits(case["outcome"])
        ok = math.isclose(got, want, rel_tol=0.5 * 10 ** (1 - sig) + 1e-12, abs_tol=0.0) or got == want
        if ok:
            passed += 1
        else:
            failures.append(f"{case['id']}: {case['value']} {src} -> {dst}: got {got!r}, want {want} ({sig} s.f.)")
    print(f"\nUCUM conversion cases: {len(cases)} total, ran {ran}, passed {passed}, out of scope {len(out_of_scope)}")
    for cid, why in out_of_scope:
        print(f"  out of scope {cid}: {why}")
    assert not failures, "\n".join(failures)
    assert len(out_of_scope) * 4 < len(cases), f"{len(out_of_scope)} of {len(cases)} conversion cases out of scope"
    assert ran == passed > 0
