"""Gymnasium vector envs of ``EHRVerifier-v0`` return the real observations in every mode.

Issue 34: ``gym.make_vec(..., vectorization_mode="async")`` with its default shared memory
returned every observation as ``max_text`` NUL characters (Gymnasium's ``Text`` reader decodes
the shared buffer once, when the vector env is made); sync mode and ``shared_memory=False`` worked.
"""

from __future__ import annotations

import copy
import warnings

import pytest

gym = pytest.importorskip("gymnasium", reason="gymnasium is in the dev extra")

from gymnasium.utils.env_checker import check_env  # noqa: E402

from verifier.env.gym_env import ENV_ID, EHRGymEnv  # noqa: E402

MODES = [("sync", {}), ("async", {"shared_memory": True}), ("async", {"shared_memory": False}),
         ("async", {"shared_memory": True, "copy": False})]


def _expected(synth_db, tasks, seed):
    """What two single envs seeded as the vector env seeds them (seed, seed + 1) observe."""
    out = []
    for i in range(2):
        env = EHRGymEnv(synth_db, tasks)
        obs, _ = env.reset(seed=seed + i)
        out.append(obs)
        env.close()
    return out


def _observe(mode: str, vector_kwargs: dict, db: str, task_lines: list[str]) -> None:
    """The whole check, run in a fresh interpreter (``_in_fresh_process``)."""
    from verifier import Task

    tasks = [Task.model_validate_json(line) for line in task_lines]
    single = EHRGymEnv(db, tasks)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(single, skip_render_check=True)
    single.close()
    vec = gym.make_vec(ENV_ID, 2, vectorization_mode=mode, vector_kwargs=vector_kwargs, db_path=db, tasks=tasks)
    try:
        obs, _ = vec.reset(seed=7)
        first = [obs[0], obs[1]]
        assert first == _expected(db, tasks, 7)
        assert all(o.strip("\x00") and "\x00" not in o for o in first)
        assert all(vec.single_observation_space.contains(o) for o in first)
        obs, reward, term, trunc, _ = vec.step({"kind": [0, 0], "content": ("SELECT 41 + 1 AS answer", "SELECT 'ok' AS word")})
        after = copy.deepcopy(obs)
        assert isinstance(after, tuple) and len(after) == 2
        assert "answer" in after[0] and "42" in after[0] and "word" in after[1] and "ok" in after[1]
        assert list(reward) == [0.0, 0.0] and not any(term) and not any(trunc)
    finally:
        vec.close()


@pytest.mark.parametrize(("mode", "vector_kwargs"), MODES, ids=["sync", "async-shm", "async-pipes", "async-shm-nocopy"])
def test_vector_env_returns_the_real_observations(synth_db, synth_tasks, mode, vector_kwargs):
    """Run in a fresh interpreter, as a training script starts: in the full suite, an async vector
    env forked from the pytest process (which earlier tests leave holding threads, connections and
    sandboxes) lost its workers at start (BrokenPipeError in ``_check_spaces``, clean-clone CI of
    2026-12-04; not reproduced in a fresh process, nor after ``ray.init``)."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    lines = [t.model_dump_json() for t in synth_tasks[:6]]
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as ex:
        ex.submit(_observe, mode, vector_kwargs, str(synth_db), lines).result(timeout=600)
