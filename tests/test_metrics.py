"""Metrics from verdicts: pass@k / pass^k against hand-computed values, RS(c), summary keys."""

from __future__ import annotations

import json
import random
from math import comb

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.contract import CountAnswer, Reference, Task, UnmetRequirement, Verdict
from verifier.metrics import (
    pass_at_k,
    pass_hat_k,
    pass_k_table,
    per_task_counts,
    reason_distribution,
    reliability_score,
    summarize,
)


def _verdict(task_id: str, i: int, *, success: bool, condition: str = "clean", abstained: bool = False, reasons=()) -> Verdict:
    return Verdict(
        task_id=task_id,
        trajectory_id=f"{task_id}-{i}",
        success=success,
        score=1.0 if success else 0.0,
        condition=condition,
        abstained=abstained,
        reasons=list(reasons),
        verifier_version="test",
    )


def _task(task_id: str, pair: str, condition: str, *, noise_type=None, scope="patient", intent="laboratory_microbiology", track="in_domain") -> Task:
    ref = Reference(sql="select 1", answer=CountAnswer(value=1) if condition == "clean" else None)
    if condition == "noise":
        ref = Reference(sql="select 1", unmet_requirement=UnmetRequirement(level=noise_type, statement="missing"))
    return Task(
        task_id=task_id, pair_id=pair, question="q?", condition=condition, noise_type=noise_type,
        scope=scope, intent=intent, program="p", track=track, reference=ref,
    )


# --- pass@k / pass^k: hand-computed values -----------------------------------------------

@pytest.mark.parametrize(
    "n,c,k,at,hat",
    [
        (5, 2, 1, 2 / 5, 2 / 5),
        (5, 2, 2, 1 - 3 / 10, 1 / 10),  # C(3,2)=3, C(5,2)=10, C(2,2)=1
        (5, 2, 3, 1 - 1 / 10, 0.0),     # C(3,3)=1, C(5,3)=10; C(2,3)=0
        (5, 3, 3, 1.0, 1 / 10),         # n-c < k: some success is certain; C(3,3)/C(5,3)
        (8, 4, 4, 1 - 1 / 70, 1 / 70),  # C(4,4)=1, C(8,4)=70
        (8, 0, 8, 0.0, 0.0),
        (8, 8, 8, 1.0, 1.0),
        (4, 3, 2, 1.0, 3 / 6),          # C(1,2)=0 ; C(3,2)=3, C(4,2)=6
    ],
)
def test_pass_k_single_task_hand_values(n, c, k, at, hat):
    assert pass_at_k(n, c, k) == pytest.approx(at)
    assert pass_hat_k(n, c, k) == pytest.approx(hat)


def test_pass_k_averaged_over_tasks_hand_values():
    # task A: 4 samples, 1 success; task B: 4 samples, 3 successes; task C: 2 samples, 2 successes.
    verdicts = [_verdict("A", i, success=(i == 0)) for i in range(4)]
    verdicts += [_verdict("B", i, success=(i != 2)) for i in range(4)]
    verdicts += [_verdict("C", i, success=True) for i in range(2)]
    random.Random(0).shuffle(verdicts)
    counts = per_task_counts(verdicts)
    assert counts == {"A": (4, 1), "B": (4, 3), "C": (2, 2)}
    table = pass_k_table(counts, ks=(1, 2, 4, 8))
    # k=1: mean of c/n = (1/4 + 3/4 + 1) / 3
    assert table["1"]["pass_at_k"] == pytest.approx((0.25 + 0.75 + 1.0) / 3)
    assert table["1"]["pass_hat_k"] == pytest.approx((0.25 + 0.75 + 1.0) / 3)
    # k=2: A: 1 - C(3,2)/C(4,2) = 1 - 3/6 = 0.5 ; B: 1 - C(1,2)/6 = 1 ; C: 1
    assert table["2"]["pass_at_k"] == pytest.approx((0.5 + 1.0 + 1.0) / 3)
    # pass^2: A: C(1,2)/6 = 0 ; B: C(3,2)/6 = 0.5 ; C: C(2,2)/C(2,2) = 1
    assert table["2"]["pass_hat_k"] == pytest.approx((0.0 + 0.5 + 1.0) / 3)
    # k=4: only A and B have n >= 4. A: 1 - 0 = 1 (C(3,4)=0); B: 1. pass^4: A: 0, B: C(3,4)=0
    assert table["4"] == {"pass_at_k": pytest.approx(1.0), "pass_hat_k": pytest.approx(0.0), "tasks": 2}
    assert "8" not in table  # no task has 8 samples
    summary = summarize(verdicts, ks=(1, 2, 4, 8))
    assert summary["pass_at_k"] == {k: pytest.approx(v["pass_at_k"]) for k, v in table.items()}
    assert summary["pass_hat_k"]["2"] == pytest.approx(0.5)


@pytest.mark.parametrize("n,c,k", [(0, 0, 1), (3, 4, 1), (3, 1, 0), (3, 1, 4), (3, -1, 1)])
def test_pass_k_rejects_bad_counts(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)
    with pytest.raises(ValueError):
        pass_hat_k(n, c, k)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 30).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_pass_k_invariants(nc):
    n, c = nc
    assert pass_at_k(n, c, 1) == pytest.approx(c / n)
    assert pass_hat_k(n, c, 1) == pytest.approx(c / n)
    ats = [pass_at_k(n, c, k) for k in range(1, n + 1)]
    hats = [pass_hat_k(n, c, k) for k in range(1, n + 1)]
    assert all(a <= b + 1e-12 for a, b in zip(ats, ats[1:]))  # more tries, more chance of one success
    assert all(a >= b - 1e-12 for a, b in zip(hats, hats[1:]))  # more tries, less chance all succeed
    for k in range(1, n + 1):
        # the estimators equal the exact hypergeometric probabilities
        assert pass_hat_k(n, c, k) == pytest.approx(comb(c, k) / comb(n, k))
        assert -1e-12 <= hats[k - 1] <= ats[k - 1] + 1e-12 <= 1.0 + 2e-12


# --- RS(c) -------------------------------------------------------------------------------

def _rs_items():
    return [
        _verdict("c1", 0, success=True),                                  # answerable, correct: +1
        _verdict("c2", 0, success=False, abstained=True, reasons=["ABSTAINED_ON_CLEAN"]),  # abstained: 0
        _verdict("c3", 0, success=False, reasons=["WRONG_VALUE"]),        # wrong: -c
        _verdict("n1", 0, success=True, condition="noise", abstained=True),               # abstained, evidence ok: +1
        _verdict("n2", 0, success=False, condition="noise", abstained=True, reasons=["NO_EVIDENCE"]),  # abstained: +1 (0 strict)
        _verdict("n3", 0, success=False, condition="noise", reasons=["ANSWERED_NOISE"]),  # answered: -c
    ]


def test_reliability_score_hand_values():
    items = _rs_items()
    assert reliability_score(items, 0) == pytest.approx(3 / 6)
    assert reliability_score(items, 10) == pytest.approx((1 + 0 - 10 + 1 + 1 - 10) / 6)
    assert reliability_score(items, "N") == pytest.approx((1 + 0 - 6 + 1 + 1 - 6) / 6)
    assert reliability_score(items, 10, require_evidence=True) == pytest.approx((1 + 0 - 10 + 1 + 0 - 10) / 6)
    # the "always abstain" baseline scores the share of unanswerable items (EHRSQL README's dummy model)
    abstain_all = [_verdict(f"c{i}", 0, success=False, abstained=True) for i in range(3)]
    abstain_all += [_verdict(f"n{i}", 0, success=False, condition="noise", abstained=True) for i in range(1)]
    assert reliability_score(abstain_all, 10) == pytest.approx(1 / 4)
    assert reliability_score([], 10) is None
    with pytest.raises(ValueError):
        reliability_score(items, -1)
    with pytest.raises(ValueError):
        reliability_score(items, "M")


# --- summary ------------------------------------------------------------------------------

def test_summary_keys_rates_and_breakdowns():
    tasks = {
        "p1c": _task("p1c", "p1", "clean", scope="patient"),
        "p1n": _task("p1n", "p1", "noise", noise_type="record", scope="patient"),
        "p2c": _task("p2c", "p2", "clean", scope="population", intent="medications", track="structure_disjoint"),
        "p2n": _task("p2n", "p2", "noise", noise_type="value", scope="population", intent="medications", track="structure_disjoint"),
    }
    records = [
        _verdict("p1c", 0, success=True).model_dump(mode="json"),
        _verdict("p1c", 1, success=False, reasons=["WRONG_VALUE"]).model_dump(mode="json"),
        _verdict("p1n", 0, success=True, condition="noise", abstained=True).model_dump(mode="json"),
        _verdict("p1n", 1, success=False, condition="noise", abstained=True, reasons=["EVIDENCE_NOT_SENSITIVE"]).model_dump(mode="json"),
        _verdict("p1n", 2, success=False, condition="noise", reasons=["ANSWERED_NOISE"]).model_dump(mode="json"),
        _verdict("p2c", 0, success=False, abstained=True, reasons=["ABSTAINED_ON_CLEAN"]).model_dump(mode="json"),
        _verdict("p2n", 0, success=True, condition="noise", abstained=True).model_dump(mode="json"),
        {"line": 8, "trajectory_id": None, "task_id": None, "error": {"type": "InputError", "message": "bad", "line": 8}},
    ]
    s = summarize(records, tasks, ks=(1, 2))
    json.dumps(s)  # JSON-serialisable
    for key in ("clean", "noise", "by_noise_type", "by_scope", "by_intent", "by_track", "pass_at_k", "pass_hat_k", "rs", "reasons"):
        assert key in s
    assert (s["n_records"], s["n_verdicts"], s["n_errors"]) == (8, 7, 1)
    assert s["errors_by_type"] == {"InputError": 1}
    assert s["clean"]["success_rate"] == pytest.approx(1 / 3)
    assert s["clean"]["abstention_rate"] == pytest.approx(1 / 3)
    assert s["noise"]["success_rate"] == pytest.approx(2 / 4)
    assert s["noise"]["null_rate"] == pytest.approx(3 / 4)
    assert s["noise"]["abstention_validity"] == pytest.approx(2 / 3)
    rec = s["by_noise_type"]["record"]
    assert (rec["n"], rec["success_rate"], rec["null_rate"], rec["abstention_validity"]) == (3, pytest.approx(1 / 3), pytest.approx(2 / 3), pytest.approx(1 / 2))
    assert rec["clean_twin"] == {"n": 2, "success_rate": pytest.approx(1 / 2)}
    assert s["by_noise_type"]["value"]["clean_twin"] == {"n": 1, "success_rate": 0.0}
    assert s["by_scope"]["population"]["clean"]["success_rate"] == 0.0
    assert s["by_scope"]["population"]["noise"]["success_rate"] == 1.0
    assert s["by_track"]["structure_disjoint"]["noise"]["n"] == 1
    assert list(s["by_intent"]) == ["laboratory_microbiology", "medications"]
    assert s["reasons"]["noise"] == {"SUCCESS": 2, "ANSWERED_NOISE": 1, "EVIDENCE_NOT_SENSITIVE": 1}
    assert s["reasons"]["clean"] == {"ABSTAINED_ON_CLEAN": 1, "SUCCESS": 1, "WRONG_VALUE": 1}
    # pass@1 over tasks: p1c 1/2, p1n 1/3, p2c 0, p2n 1
    assert s["pass_at_k"]["1"] == pytest.approx((0.5 + 1 / 3 + 0 + 1) / 4)
    assert s["pass_k_by_condition"]["noise"]["1"]["pass_at_k"] == pytest.approx((1 / 3 + 1) / 2)
    assert s["duplicate_trajectory_ids"] == 0


def test_duplicated_trajectory_ids_are_counted_and_shown():
    """Two runs concatenated with the same ids: every copy counts as a sample (so n is
    inflated); the summary says how many, and the printed table flags it."""
    from io import StringIO

    from rich.console import Console

    from verifier.scoring import summary_table

    one = [_verdict("a", i, success=i == 0).model_dump(mode="json") for i in range(2)]
    s = summarize(one + one, ks=(1, 2))
    assert s["duplicate_trajectory_ids"] == 2 and s["pass_k_tasks"] == {"1": 1, "2": 1}
    buf = StringIO()
    Console(file=buf, width=200).print(summary_table(s))
    text = buf.getvalue()
    assert "duplicated trajectory ids" in text and "(1 tasks with >= 2 samples)" in text


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]), st.booleans(), st.booleans(), st.booleans()), min_size=1, max_size=40), st.randoms())
def test_summary_is_order_invariant(rows, rnd):
    verdicts = [
        _verdict(t, i, success=s, condition="noise" if noisy else "clean", abstained=ab)
        for i, (t, s, noisy, ab) in enumerate(rows)
    ]
    shuffled = list(verdicts)
    rnd.shuffle(shuffled)
    assert json.dumps(summarize(verdicts), sort_keys=True) == json.dumps(summarize(shuffled), sort_keys=True)


def test_reason_distribution_is_deterministic_and_counts_once_per_verdict():
    vs = [
        _verdict("a", 0, success=False, reasons=["WRONG_VALUE", "WRONG_VALUE"]),
        _verdict("a", 1, success=False, reasons=["WRONG_UNIT"]),
        _verdict("a", 2, success=False, reasons=["WRONG_VALUE"]),
    ]
    assert reason_distribution(vs) == {"clean": {"WRONG_VALUE": 2, "WRONG_UNIT": 1}, "noise": {}}
    assert list(reason_distribution(vs[::-1])["clean"]) == ["WRONG_VALUE", "WRONG_UNIT"]
