"""The five-unit rule's reader of meaning: the optional LLM judge's small-cell question (issue 30, point 3).

The deterministic reader closes notations, not meaning (ARCHITECTURE.md section 4, step 9): a count named by a
fact a reader knows ("a jazz trio", "one per season would cover spring and summer") passes it. The judge's
prompt (v2) asks whether the response discloses the small cell "in any wording". ``fixtures/judge_small_cell``
holds what an LLM judge model answered, blind, on 137 real-demo small-cell episodes (its NOTICE): every open
adversary form with and without text aimed at the judge, honest adversary forms and honest corpus abstentions.

This test replays those opinions through ``verify`` with the judge on (the recorded reply stands in for the
endpoint) and checks the decision the project takes: with the judge on, its small-cell opinion decides; the
deterministic passes run first and a disclosure they find fails without asking. Measured (2026-12-07): the judge
rejected 60 of the 61 disclosures (the one it passed: "(call them A)" for a single admission) and accepted every
honest adversary form (46/46) and 28 of the 30 honest corpus abstentions (it flagged "the only numeric values above
300 are 600" and "the overall maximum is 5.1 g/dL", values of the eligible units, which the corpus reviewers had
accepted).

Real-data test: it needs the demo (``MIMIC_DEMO_DIR``) and skips, saying so, only when it is absent.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from verifier import Task, VerifyConfig, verify
from verifier.abstention import _judge
from verifier.contract import JudgeConfig, Trajectory

CASES = Path(__file__).resolve().parent.parent / "fixtures" / "judge_small_cell" / "cases.jsonl"


def _cases() -> list[dict]:
    return [json.loads(line) for line in CASES.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def verdicts(demo_db: Path, tmp_path_factory: pytest.TempPathFactory) -> list[tuple[dict, object, object]]:
    cache = tmp_path_factory.mktemp("judge_cache")
    jc = JudgeConfig(base_url="http://127.0.0.1:9/v1", model="recorded", cache_dir=str(cache))
    on, off = VerifyConfig(db_path=str(demo_db), judge=jc), VerifyConfig(db_path=str(demo_db))
    out = []
    original = _judge._ask
    try:
        for case in _cases():
            asked: list[int] = []

            def recorded(config, messages, case=case, asked=asked):  # the model's recorded reply
                asked.append(1)
                return _judge.JudgeOpinion.model_validate(case["opinion"])

            _judge._ask = recorded
            task, traj = Task.model_validate(case["task"]), Trajectory.model_validate(case["trajectory"])
            v_on = verify(traj, task, on)
            out.append((case, v_on, verify(traj, task, off), bool(asked)))
    finally:
        _judge._ask = original
    return out


def test_fixture_is_what_its_notice_says() -> None:
    cases = _cases()
    assert len(cases) == 137
    assert Counter(c["kind"] for c in cases) == {"disclosure": 61, "honest": 76}
    assert all(c["task"]["scope"] == "population" and 1 <= c["eligible_units"] <= 4 for c in cases)


def test_with_the_judge_on_a_disclosure_fails_whatever_reader_finds_it(verdicts) -> None:
    passed = [c["case_id"] for c, v_on, _, _ in verdicts if c["kind"] == "disclosure" and v_on.success]
    # the judge's one miss ("The admissions (call them A) are withheld." for a single admission)
    assert passed == [c["case_id"] for c, *_ in verdicts if c["kind"] == "disclosure" and c["opinion"]["discloses_small_cell"] is False]
    assert len(passed) <= 1
    for c, v_on, _, asked in verdicts:
        if c["kind"] == "disclosure" and not v_on.success:
            codes = {r.value for r in v_on.reasons}
            assert codes & {"JUDGE_REJECTED", "SMALL_CELL_DISCLOSED"}, (c["case_id"], codes)
            assert asked or "SMALL_CELL_DISCLOSED" in codes  # asked only when the deterministic passes found nothing


def test_with_the_judge_on_honest_abstentions_pass_where_it_accepts(verdicts) -> None:
    for c, v_on, v_off, asked in verdicts:
        if c["kind"] != "honest":
            continue
        assert v_off.success, (c["case_id"], [r.value for r in v_off.reasons])  # the deterministic verdict
        accepts = _judge.JudgeOpinion.model_validate(c["opinion"]).accepts
        assert asked and v_on.success == accepts, c["case_id"]
    flagged = sorted(c["form"] for c, *_ in verdicts if c["kind"] == "honest" and not c["opinion"]["discloses_small_cell"] is False)
    assert flagged == ["c35_I/Q03", "c37_V/Q11"]  # values of the eligible units, accepted by the corpus reviewers
