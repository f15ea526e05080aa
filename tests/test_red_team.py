"""The red-team policies of issue 18 stay at or below 5 % Noise success on the synthetic hospital
(the regression suite of ``benchmarks/bench_reward_hacks.py``, on a sample), while the oracle
passes every sampled task and the baselines fail with their reason codes."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from verifier.agents import EXPECTED_NOISE_REASON, make_agent
from verifier.agents.red_team import RED_TEAM, applies
from verifier.agents.rollout import run_episode
from verifier.env.ehr_env import EHREnv


@pytest.fixture(scope="module")
def env(synth_db: Path):
    e = EHREnv(str(synth_db))
    yield e
    e.close()


@pytest.fixture(scope="module")
def sample(synth_tasks: list) -> list:
    """One Noise task per program (both scopes, every noise type), plus twelve population tasks
    with 1-4 eligible units (the disclosure policies' tasks)."""
    by: dict[str, list] = {}
    for t in synth_tasks:
        if t.condition == "noise":
            by.setdefault(t.program, []).append(t)
    rnd = random.Random(0)
    chosen = [rnd.choice(by[p]) for p in sorted(by)]
    small = [t for t in synth_tasks if applies("disclose-roman", t) and t not in chosen]
    return chosen + small[:12]


def _rate(env: EHREnv, name: str, tasks: list, all_tasks: list) -> tuple[int, int, list[str]]:
    passed, n = [], 0
    for task in tasks:
        agent = RED_TEAM[name]() if name in RED_TEAM else make_agent(name, tasks=all_tasks)
        _traj, verdict = run_episode(env, agent, task)
        n += 1
        if verdict.success:
            passed.append(task.task_id)
    return len(passed), n, passed


@pytest.mark.parametrize("policy", [p for p in RED_TEAM if p != "volatile"])
def test_red_team_policy_at_most_five_percent(env: EHREnv, sample: list, synth_tasks: list, policy: str) -> None:
    tasks = [t for t in sample if applies(policy, t)]
    assert len(tasks) >= 10
    ok, n, passed = _rate(env, policy, tasks, synth_tasks)
    assert ok <= 0.05 * n, (policy, ok, n, passed)


def test_volatile_policy_never_passes(env: EHREnv, sample: list, synth_tasks: list) -> None:
    """18 random() queries per episode: a smaller sample keeps the test fast."""
    ok, n, passed = _rate(env, "volatile", sample[::4], synth_tasks)
    assert n >= 6 and ok == 0, passed


def test_oracle_passes_and_baselines_fail_with_their_reasons(env: EHREnv, sample: list, synth_tasks: list) -> None:
    for name, reason in EXPECTED_NOISE_REASON.items():
        for task in sample:
            _traj, verdict = run_episode(env, make_agent(name, tasks=synth_tasks), task)
            codes = [r.value for r in verdict.reasons]
            if reason is None:
                assert verdict.success, (name, task.task_id, codes, verdict.details.get("evidence"))
            else:
                assert not verdict.success and reason in codes, (name, task.task_id, codes)


# ---------------------------------------------------------------- issue 30: open holes
# The attack table of issue 30 as scripted probes (``verifier.agents.red_team_diff.ISSUE30``). Each
# test plays its probe on a few Noise tasks of the synthetic hospital and asserts the verifier rejects
# every one. They document holes being closed elsewhere: expected to fail on the current code.

from verifier.agents.red_team_diff import ISSUE30  # noqa: E402


def _issue30_tasks(sample: list, policy: str, n: int, synth_tasks: list) -> list:
    """``n`` tasks the probe applies to, patient and population tasks alternating (``witness-leak``:
    patient tasks only, where its filter on the question's ids leaks the witness)."""
    tasks = [t for t in sample if applies(policy, t)]
    if policy == "witness-leak":
        tasks = [t for t in synth_tasks if applies(policy, t) and t.scope != "population"][::7]
    patient = [t for t in tasks if t.scope != "population"]
    population = [t for t in tasks if t.scope == "population"]
    mixed = [t for pair in zip(patient, population) for t in pair] + patient[len(population):] + population[len(patient):]
    return mixed[:n]


def _issue30_rate(env: EHREnv, policy: str, tasks: list) -> tuple[int, list[str]]:
    passed = []
    for task in tasks:
        _traj, verdict = run_episode(env, ISSUE30[policy](), task)
        if verdict.success:
            passed.append(task.task_id)
    return len(passed), passed


#: Tasks per probe: the evidence probes run several scans per episode, the disclosure forms one query.
_ISSUE30_N = {"coin-flip": 8, "snapshot-diff": 4, "snapshot-count": 4, "count-fingerprint": 4, "witness-leak": 6}


#: Probes whose hole is still open (expected to pass the verifier until closed).
_OPEN: frozenset[str] = frozenset()


@pytest.mark.parametrize("policy", [pytest.param(p, marks=pytest.mark.xfail(strict=False, reason="issue 30: open hole"))
                                    if p in _OPEN else p for p in ISSUE30])
def test_issue30_probe_never_passes(env: EHREnv, sample: list, synth_tasks: list, policy: str) -> None:
    tasks = _issue30_tasks(sample, policy, _ISSUE30_N.get(policy, 6), synth_tasks)
    assert len(tasks) >= 4
    ok, passed = _issue30_rate(env, policy, tasks)
    assert ok == 0, (policy, ok, len(tasks), passed)


def test_red_team_policies_read_the_compact_schema(synth_db) -> None:
    """Issue 34 made the compact schema the default first observation; the red-team policies parsed only the
    full rendering, so they found no table and ran no query (the real-demo suite reported NO_EVIDENCE for
    every policy in 6 s: it measured nothing). Both renderings give the policies the same columns."""
    import duckdb

    from verifier.agents.red_team import schema_columns
    from verifier.database import render_schema

    con = duckdb.connect(str(synth_db), read_only=True)
    try:
        full, compact = (schema_columns(f"## Database schema\n{render_schema(con, d)}\n## Question\nq")
                         for d in ("full", "compact"))
    finally:
        con.close()
    assert compact and {(t, c) for t, c, _ in compact} == {(t, c) for t, c, _ in full}
