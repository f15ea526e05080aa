"""verl, as verl loads and calls a custom reward: ``get_custom_reward_fn`` resolving the documented
``pkg://`` path and the file path, the reward loop's ``NaiveRewardManager`` awaiting the async
``compute_score``, and one scoring pool across calls. Synthetic hospital."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

import pytest
from batch_data import episodes, pick_pairs

from verifier.contract import Task, Trajectory, VerifyConfig
from verifier.verify import verify


@pytest.fixture(scope="module")
def sample(synth_db: Path, synth_tasks: list[Task], tmp_path_factory):
    tasks = pick_pairs(synth_tasks, 4)
    trajs = [Trajectory.model_validate_json(line) for line in episodes(synth_db, tasks)]
    by_id = {t.task_id: t for t in tasks}
    config = VerifyConfig(db_path=str(synth_db))
    expected = {t.trajectory_id: verify(t, by_id[t.task_id], config) for t in trajs}
    assert {v.success for v in expected.values()} == {True, False}
    tasks_file = tmp_path_factory.mktemp("verl") / "tasks.jsonl"
    tasks_file.write_text("".join(t.model_dump_json() + "\n" for t in tasks), encoding="utf-8")
    return by_id, trajs, expected, {"tasks": str(tasks_file), "db": str(synth_db)}


def _verl_config(path: str, name: str, reward_kwargs: dict):
    omegaconf = pytest.importorskip("omegaconf", reason="verl is not installed (optional extra .[verl], not in dev: it brings torch); it brings omegaconf")
    return omegaconf.OmegaConf.create({"reward": {"custom_reward_function": {"path": path, "name": name, "reward_kwargs": reward_kwargs}}})


def _get_custom_reward_fn():
    reward = pytest.importorskip("verl.trainer.ppo.reward", reason="verl is not installed (optional extra .[verl], not in dev: it brings torch)")
    return reward.get_custom_reward_fn


MODULE_FILE = Path(__file__).resolve().parents[1] / "verifier" / "adapters" / "verl_score.py"


@pytest.mark.parametrize("path", ["pkg://verifier.adapters.verl_score", str(MODULE_FILE)])
def test_verl_resolves_the_documented_path_and_the_file_path(sample, path):
    """verl's own loader: ``pkg://`` imports the module; a file path execs it standalone (absolute imports)."""
    tasks, trajs, expected, kwargs = sample
    fn = _get_custom_reward_fn()(_verl_config(path, "compute_score", kwargs))
    for t in trajs[:4]:
        out = fn(data_source="ehr", solution_str=t.final_response, ground_truth=t.task_id,
                 extra_info={"trajectory": t.model_dump(mode="json"), "trajectory_id": t.trajectory_id})
        assert out["score"] == expected[t.trajectory_id].score


def test_module_loads_by_file_path_without_verl(sample):
    """What verl's ``load_module`` does with a file path (``spec_from_file_location`` + ``exec_module``
    under a fresh name), done here without verl: the module has no relative import to break."""
    import importlib.util

    tasks, trajs, expected, kwargs = sample
    spec = importlib.util.spec_from_file_location(f"custom_module_{hash(str(MODULE_FILE))}", MODULE_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    t = trajs[0]
    out = module.compute_score(data_source="ehr", solution_str=t.final_response, ground_truth=t.task_id,
                               extra_info={"trajectory": t.model_dump(mode="json")}, **kwargs)
    assert out["score"] == expected[t.trajectory_id].score
    assert inspect.iscoroutinefunction(module.compute_score_async)


def test_verl_reward_loop_awaits_the_async_compute_score(sample):
    """``NaiveRewardManager.run_single`` (use_reward_loop, verl's default) with our coroutine."""
    import numpy as np

    torch = pytest.importorskip("torch", reason="verl is not installed (optional extra .[verl], not in dev: it brings torch)")
    pytest.importorskip("verl", reason="verl is not installed (optional extra .[verl], not in dev: it brings torch)")
    from verl import DataProto
    from verl.experimental.reward_loop.reward_manager.naive import NaiveRewardManager

    tasks, trajs, expected, kwargs = sample
    fn = _get_custom_reward_fn()(_verl_config("pkg://verifier.adapters.verl_score", "compute_score_async", kwargs))
    assert inspect.iscoroutinefunction(fn)

    class Text:  # the tokenizer's decode: token ids stand for the response text
        def __init__(self, texts):
            self.texts = texts

        def decode(self, ids, skip_special_tokens=True):
            return self.texts[int(ids[0])]

    texts = [t.final_response for t in trajs]

    async def run_all():
        manager = NaiveRewardManager(None, Text(texts), fn)
        out = []
        for i, t in enumerate(trajs):
            data = DataProto.from_dict(
                tensors={"responses": torch.tensor([[i, 0]]), "attention_mask": torch.tensor([[1, 1, 1, 0]])},
                non_tensors={"data_source": np.array(["ehr"], dtype=object),
                             "reward_model": np.array([{"ground_truth": t.task_id}], dtype=object),
                             "extra_info": np.array([{"trajectory": t.model_dump(mode="json"), "trajectory_id": t.trajectory_id}], dtype=object)},
            )
            out.append(await manager.run_single(data))
        return out

    results = asyncio.run(run_all())
    assert [r["reward_score"] for r in results] == [expected[t.trajectory_id].score for t in trajs]
    assert results[0]["reward_extra_info"]["task_id"] == trajs[0].task_id


def test_verl_pool_lives_across_calls(sample, monkeypatch):
    import verifier.scoring._batch as batch
    from verifier.adapters import verl_score

    created = []

    class CountingPool(batch._ProcessPool):
        def __init__(self, *args, **kwargs):
            created.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(batch, "_ProcessPool", CountingPool)
    tasks, trajs, expected, kwargs = sample
    verl_score.close_pools()
    try:
        for step in range(10):
            chosen = [trajs[(step + j) % len(trajs)] for j in range(3)]
            out = verl_score.compute_score_batch(
                None, [t.final_response for t in chosen], [t.task_id for t in chosen],
                [{"trajectory": t.model_dump(mode="json"), "trajectory_id": t.trajectory_id} for t in chosen],
                workers=2, **kwargs)
            assert [o["score"] for o in out] == [expected[t.trajectory_id].score for t in chosen]
            t = chosen[0]
            one = asyncio.run(verl_score.compute_score_async(
                "ehr", t.final_response, t.task_id, {"trajectory": t.model_dump(mode="json")}, workers=2, **kwargs))
            assert one["score"] == expected[t.trajectory_id].score
        assert len(created) == 1
    finally:
        verl_score.close_pools()
