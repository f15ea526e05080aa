"""``EHRGymEnv`` is a real ``gymnasium.Env``: Gymnasium's own checker, ``gym.make``, seeded task
sampling, the Dict action space driving full oracle episodes on the synthetic hospital."""

from __future__ import annotations

import warnings

import pytest

gym = pytest.importorskip("gymnasium", reason="gymnasium is in the dev extra")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from verifier.agents import make_agent  # noqa: E402
from verifier.contract import InputError  # noqa: E402
from verifier.env.gym_env import CHARSET, KINDS, BMPText, EHRGymEnv  # noqa: E402


@pytest.fixture()
def env(synth_db, synth_tasks):
    e = EHRGymEnv(synth_db, synth_tasks[:16])
    yield e
    e.close()


def test_gymnasium_check_env_passes_without_warnings(env):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the checker's warnings (spaces, seeding, render) fail the test
        check_env(env, skip_render_check=True)
    assert isinstance(env, gym.Env)
    assert isinstance(env.observation_space, gym.spaces.Text) and isinstance(env.action_space, gym.spaces.Dict)
    assert env.observation_space.contains("SELECT ° µ ² ≥ é\n\t{}") and len(CHARSET) > 60_000


def test_spaces_print_short_and_stay_gymnasium_text(env):
    """Printing the spaces must not dump the 63,488-character alphabet; the space is unchanged."""
    import copy
    import pickle

    for space in (env.observation_space, env.action_space):
        assert len(repr(space)) < 200 and len(str(space)) < 200, repr(space)[:300]
    assert "63488 characters" in repr(env.observation_space) and "200000" in repr(env.observation_space)
    plain = gym.spaces.Text(max_length=env.max_text, min_length=0, charset=CHARSET)
    obs = env.observation_space
    assert obs == plain and plain == obs and copy.deepcopy(obs) == obs and pickle.loads(pickle.dumps(obs)) == obs
    assert obs.contains("x ° µ") == plain.contains("x ° µ") and not obs.contains("\U0001F600")
    assert obs.sample(mask=None) is not None
    small = BMPText(max_length=5, charset="abc")
    assert repr(small) == "Text(1, 5, charset=abc)" and small.contains("cab")


def test_gym_make_by_module_path(synth_db, synth_tasks):
    made = gym.make("verifier.env.gym_env:EHRVerifier-v0", db_path=str(synth_db), tasks=synth_tasks[:4])
    try:
        obs, info = made.reset(seed=1)
        assert made.observation_space.contains(obs) and 0 <= info["task_index"] < 4
        assert "EHRVerifier-v0" in gym.registry
    finally:
        made.close()


def test_reset_samples_tasks_by_seed_and_filters(env):
    picks = [env.reset(seed=s)[1]["task_index"] for s in range(12)]
    assert picks == [env.reset(seed=s)[1]["task_index"] for s in range(12)]  # same seed, same task
    assert len(set(picks)) > 1  # different seeds draw different tasks
    for s in range(6):
        obs, info = env.reset(seed=s, options={"condition": "noise"})
        assert env.tasks[info["task_index"]].condition == "noise"
        assert env.task.task_id not in obs and not any(env.task.task_id in str(v) for v in info.values())
    one = env.tasks[3]
    assert env.reset(options={"task": one.task_id})[1]["task_index"] == 3
    with pytest.raises(InputError, match="options.task"):
        env.reset(options={"task": "no-such-task"})
    with pytest.raises(InputError, match="no task matches"):
        env.reset(options={"condition": "clean", "noise_type": "record"})


def test_oracle_solves_clean_and_noise_through_the_dict_action_space(env):
    oracle = make_agent("oracle", tasks=env.tasks)
    seen = set()
    for i, task in enumerate(env.tasks[:8]):
        obs, info = env.reset(options={"task": task})
        oracle.reset(task, obs, info)
        for _ in range(30):
            act = oracle.act(obs)
            action = {"kind": KINDS.index(act.kind), "content": act.content}
            assert env.action_space.contains(action)
            obs, reward, terminated, truncated, info = env.step(action)
            assert env.observation_space.contains(obs)
            if terminated or truncated:
                break
        assert terminated and not truncated and reward == 1.0, (task.task_id, info["verdict"].reasons)
        seen.add(task.condition)
    assert seen == {"clean", "noise"}


def test_observations_are_cut_and_cleaned_into_the_space(synth_db, synth_tasks):
    small = EHRGymEnv(synth_db, synth_tasks[:2], max_text=500)
    try:
        obs, _ = small.reset(seed=0)
        assert len(obs) == 500 and "[cut: the observation had" in obs and small.observation_space.contains(obs)
        obs, *_ = small.step({"kind": 0, "content": "SELECT '\U0001F600' AS smile"})
        assert "\U0001F600" not in obs and "\ufffd" in obs and small.observation_space.contains(obs)
        obs, reward, terminated, truncated, _ = small.step({"kind": 7, "content": "x"})
        assert obs.startswith("Error: invalid action") and reward == 0.0 and not terminated
    finally:
        small.close()
    with pytest.raises(InputError, match="tasks"):
        EHRGymEnv(synth_db, [])
