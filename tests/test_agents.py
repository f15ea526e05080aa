"""Reference agents on tasks built from the real demo: the oracle succeeds, each baseline fails its known way.

For test time the episodes run on a stratified sample (every program, hence
every noise type and both scopes); ``benchmarks/bench_rollout_agents.py``
runs every agent on every task.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from verifier.agents import AGENTS, EXPECTED_NOISE_REASON, make_agent
from verifier.agents.evidence import rescope, wrong_scope_lookup
from verifier.agents.format import format_answer
from verifier.agents.rollout import run_episode
from verifier.contract import InputError, ReasonCode
from verifier.env import EHREnv, EnvConfig
from verifier.parse import parse


def _sample(tasks: list, per_program: int, condition: str | None = None, seed: int = 0) -> list:
    """``per_program`` pairs per program (both twins unless ``condition`` is given)."""
    by_pair: dict[str, list] = defaultdict(list)
    for t in tasks:
        by_pair[t.pair_id].append(t)
    by_program: dict[str, list[str]] = defaultdict(list)
    for pid, twins in sorted(by_pair.items()):
        by_program[twins[0].program].append(pid)
    rng = random.Random(seed)
    out = []
    for program in sorted(by_program):
        for pid in rng.sample(by_program[program], min(per_program, len(by_program[program]))):
            out += [t for t in by_pair[pid] if condition is None or t.condition == condition]
    return out


@pytest.fixture(scope="module")
def env(demo_db: Path):
    e = EHREnv(str(demo_db), EnvConfig(max_steps=10))
    yield e
    e.close()


def _run(env: EHREnv, name: str, tasks: list, all_tasks: list) -> list:
    agent = make_agent(name, tasks=all_tasks)
    return [(t, *run_episode(env, agent, t)) for t in tasks]


def test_sample_covers_every_noise_type_and_scope(demo_tasks: list) -> None:
    sample = _sample(demo_tasks, 1, "noise")
    assert {t.noise_type for t in sample} == {"record", "value", "query"}
    assert {t.scope for t in sample} == {"patient", "population"}
    assert {t.program for t in sample} == {t.program for t in demo_tasks}


def test_oracle_succeeds(env: EHREnv, demo_tasks: list) -> None:
    results = _run(env, "oracle", _sample(demo_tasks, 2), demo_tasks)
    rate: dict[str, list[bool]] = defaultdict(list)
    failures = []
    for task, traj, verdict in results:
        rate[task.condition].append(verdict.success)
        if not verdict.success:
            failures.append(f"{task.task_id}: {[r.value for r in verdict.reasons]}")
        assert traj.steps and traj.steps[0].code.strip() == task.reference.sql.strip()
    for condition in ("clean", "noise"):
        ok = rate[condition]
        assert ok and sum(ok) / len(ok) >= 0.97, f"oracle {condition}: {sum(ok)}/{len(ok)}; failures: {failures}"


def test_always_null_fails_everywhere_without_evidence(env: EHREnv, demo_tasks: list) -> None:
    for task, traj, verdict in _run(env, "always-null", _sample(demo_tasks, 1), demo_tasks):
        assert not verdict.success and not traj.steps
        expected = ReasonCode.ABSTAINED_ON_CLEAN if task.condition == "clean" else ReasonCode.NO_EVIDENCE
        assert expected in verdict.reasons, (task.task_id, verdict.reasons)


@pytest.mark.parametrize("name", ["answer-anyway", "wrong-scope", "fabricator"])
def test_baseline_fails_every_noise_task_with_its_reason(env: EHREnv, demo_tasks: list, name: str) -> None:
    expected = ReasonCode(EXPECTED_NOISE_REASON[name])
    wrong = Counter()
    for task, traj, verdict in _run(env, name, _sample(demo_tasks, 1, "noise"), demo_tasks):
        assert not verdict.success, f"{name} succeeded on {task.task_id}"
        if expected not in verdict.reasons:
            wrong[(task.program, tuple(r.value for r in verdict.reasons))] += 1
    assert not wrong, f"{name}: expected {expected.value} on every Noise task, got {dict(wrong)}"


def test_answer_anyway_is_right_on_clean(env: EHREnv, demo_tasks: list) -> None:
    for task, traj, verdict in _run(env, "answer-anyway", _sample(demo_tasks, 1, "clean")[:8], demo_tasks):
        assert verdict.success, (task.task_id, verdict.reasons)


def test_answer_anyway_answers_noise_with_a_plausible_value(demo_tasks: list) -> None:
    agent = make_agent("answer-anyway", tasks=demo_tasks)
    clean = {t.pair_id: t for t in demo_tasks if t.condition == "clean"}
    for task in _sample(demo_tasks, 1, "noise"):
        text = agent.plausible(task)
        assert text and not parse(f"<answer>{text}</answer>").abstained
        twin = clean.get(task.pair_id)
        if twin is not None:
            assert text == format_answer(twin.reference.answer)


def test_wrong_scope_rewrites_the_scope_literals(demo_tasks: list) -> None:
    for task in _sample(demo_tasks, 1, "noise"):
        lookup = wrong_scope_lookup(task)
        assert lookup is not None, task.task_id
        _sql, old = lookup
        bounds = {str(v) for v in [*task.reference.unmet_requirement.scope.values(), *task.params.values()]}
        assert old and all(str(v) in bounds for v in old.values()), (task.task_id, old)
        moved = rescope(task.reference.sql, old, {k: 77777777 for k in old})
        assert moved != task.reference.sql and "77777777" in moved


def test_fabricator_logs_an_output_the_database_does_not_give(env: EHREnv, demo_tasks: list) -> None:
    task = _sample(demo_tasks, 1, "noise")[0]
    traj, verdict = run_episode(env, make_agent("fabricator"), task)
    env.reset(task)
    obs, *_ = env.step({"kind": "sql", "code": traj.steps[0].code})
    assert env.steps[0].output != traj.steps[0].output and env.steps[0].rows != traj.steps[0].rows
    assert traj.metadata["fabricated_steps"] == [1]


def test_registry(demo_tasks: list) -> None:
    assert set(EXPECTED_NOISE_REASON) | {"openai"} == set(AGENTS)
    with pytest.raises(InputError):
        make_agent("nobody")
    with pytest.raises(InputError):
        make_agent("oracle", bogus=1)
