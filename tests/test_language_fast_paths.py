"""The review's mends on the reading hot path (session 21): each is the same reading, reached faster or in any
case. The uppercase confidence failed before (the probe was case-sensitive while the pattern is not)."""
from __future__ import annotations

import sys
import unicodedata

from hypothesis import given, strategies as st

from verifier.match.confidence import without_confidence
from verifier.match.language import detect, in_script
from verifier.match.lead import field_block


def _by_name(ch: str) -> bool:
    return unicodedata.name(ch, "").startswith(("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH"))


def test_han_by_code_point_block_is_han_by_unicode_name_for_every_named_character() -> None:
    mismatched = [hex(o) for o in range(sys.maxunicode + 1)
                  if unicodedata.name(chr(o), "") and in_script(chr(o), "Han") != _by_name(chr(o))]
    assert mismatched == []


@given(st.text(max_size=60))
def test_han_reading_agrees_with_the_name_reading_on_any_text(text: str) -> None:
    assert [in_script(c, "Han") for c in text if c.isalpha()] == [_by_name(c) for c in text if c.isalpha()]


def test_an_uppercase_confidence_statement_is_set_aside() -> None:
    assert without_confidence("4.1 mEq/L (CONFIDENCE: 95%)").strip() == "4.1 mEq/L"
    assert without_confidence("4.1 mEq/L, 95% SURE").strip() == "4.1 mEq/L,"


def test_ascii_text_is_never_read_as_a_script_language_and_chinese_still_is() -> None:
    assert detect("The last potassium was 4.1 mEq/L [step 2].") is None
    lang = detect("患者最后一次血钾为 4.1 mEq/L，见 [step 2]。没有其他记录。")
    assert lang is not None and lang.code == "zh"


def test_a_field_named_twice_in_any_case_is_no_record() -> None:
    assert field_block("organism: E. coli\nInterpretation: S\ninterpretation: R") is None
    assert field_block("organism: E. coli\ninterpretation: R") == {"organism": "E. coli", "interpretation": "R"}
