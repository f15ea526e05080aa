"""Blind corpus c41 (held out, 2026-12-07): the forms the verifier refused that both reviewers accepted.

A data engineer's Answer written as a YAML block, every line a ``field: value`` line (no lead phrase), with YAML
quoting and a YAML comment: the record the reviewers read ("interpretation: R   # resistant" over the organism,
antibiotic, dilution and specimen lines, for the susceptibility asked; "drg_code: \"161\"" and "description: ..."
among the previous admission's fields, for its APR DRG). Refused before: the first line was read as a lead
phrase ("interpretation: R # resistant" against "R": token_sort_ratio 7.4) and each line as a one-cell record
(7 extra records, the reference's missing). Rule (``verifier.match.lead.field_block``): an Answer whose every
line is a ``field: value`` line with distinct fields is one record, read as the JSON object it spells; a hedge
gains nothing (a field named twice is no record; an alternative's label keeps the whole Answer judged).
"""

from __future__ import annotations

from verifier.contract import AnswerPolicy, RecordsAnswer, TextAnswer
from verifier.match.dispatch import match_answer
from verifier.match.lead import field_block
from verifier.parse import parse

SUSCEPTIBILITY = TextAnswer(value="R")
DRG = RecordsAnswer(columns=["drg_code", "description"], rows=[["161", "CARDIAC DEFIBRILLATOR & HEART ASSIST IMPLANT"]])
DRG_POLICY = AnswerPolicy(order="set", key_columns=["drg_code"], required_columns=["drg_code"])

C_Q04 = ('interpretation: R   # resistant\norganism: ENTEROCOCCUS SP. (isolate 1)\nantibiotic: TETRACYCLINE\n'
         'dilution: "=>16"\nspecimen: 1738145 (URINE, URINE CULTURE)')
C_Q08 = ('previous_admissionid: 29839885\nadmission_time: 2170-10-08 07:15:00\ndrg_type: APR\ndrg_code: "161"\n'
         'description: CARDIAC DEFIBRILLATOR & HEART ASSIST IMPLANT\ndrg_severity: 1\ndrg_mortality: 2')


def _match(answer: str, ref, policy=AnswerPolicy(), columns: tuple[str, ...] = ()):
    p = parse(f"<answer>\n{answer}\n</answer><reasoning>From the records [step 1].</reasoning>")
    assert p.error is None, p.error
    return match_answer(p.answer_text, ref, policy, p.answer_json, columns)


def test_a_yaml_block_is_the_record_it_spells() -> None:
    assert field_block(C_Q04) == {"interpretation": "R", "organism": "ENTEROCOCCUS SP. (isolate 1)",
                                  "antibiotic": "TETRACYCLINE", "dilution": "=>16",
                                  "specimen": "1738145 (URINE, URINE CULTURE)"}
    assert field_block("R\norganism: X") is None  # a lead phrase: the lead-line rule's
    assert field_block("value: 3\nvalue: 4") is None  # a field named twice is no record


def test_c41_C_Q04_the_field_named_by_the_reference_commits() -> None:
    assert _match(C_Q04, SUSCEPTIBILITY, columns=("interpretation",)).ok
    assert not _match(C_Q04.replace(": R ", ": S "), SUSCEPTIBILITY, columns=("interpretation",)).ok


def test_c41_C_Q08_a_yaml_record_with_quoted_code() -> None:
    assert _match(C_Q08, DRG, DRG_POLICY, ("drg_code", "description")).ok
    assert not _match(C_Q08.replace('"161"', '"166"'), DRG, DRG_POLICY, ("drg_code", "description")).ok


def test_a_hedge_in_a_yaml_block_gains_nothing() -> None:
    cols = ("interpretation",)
    assert not _match("interpretation: S\nalternatively: R\norganism: X", SUSCEPTIBILITY, columns=cols).ok
    assert not _match("interpretation: S\ninterpretation: R", SUSCEPTIBILITY, columns=cols).ok
    assert not _match("interpretation: R or S\norganism: X", SUSCEPTIBILITY, columns=cols).ok
    assert not _match(C_Q08 + '\ndrg_code: "166"', DRG, DRG_POLICY, ("drg_code", "description")).ok
