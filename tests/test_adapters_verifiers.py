"""prime-intellect ``verifiers`` (>= 0.4, ``verifiers.v1``): the EHR taskset, toolset and reward,
through the real package's API. Synthetic hospital.

A full ``vf.Env`` rollout needs a live model endpoint and launches the toolset as an MCP server
process; here the environment is built with verifiers' own ``load_environment``, its tasks are
read from the env's taskset, the toolset's tools run on a real ``EHREnv`` episode (after
``setup_task``, as the server does) and are registered on the ``mcp`` server class verifiers
serves them with, and the reward is computed by verifiers' ``Task.score`` on a ``vf.Trace``
holding the rollout state the toolset wrote and the model's last reply.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from batch_data import episodes, pick_pairs

from verifier.contract import Task, Trajectory, VerifyConfig
from verifier.verify import verify

vf = pytest.importorskip("verifiers.v1", reason="verifiers is in the verifiers and dev extras: pip install -e '.[dev]'")


@pytest.fixture(scope="module")
def setup(synth_db: Path, synth_tasks: list[Task], tmp_path_factory):
    from verifier.adapters.verifiers_env import load_environment

    tasks = pick_pairs(synth_tasks, 2)
    path = tmp_path_factory.mktemp("vf") / "tasks.jsonl"
    path.write_text("".join(t.model_dump_json() + "\n" for t in tasks), encoding="utf-8")
    oracle = {Trajectory.model_validate_json(line).task_id: Trajectory.model_validate_json(line)
              for line in episodes(synth_db, tasks, agents=("oracle",))}
    env = load_environment(path, synth_db)
    return {"tasks": tasks, "env": env, "oracle": oracle, "db": str(synth_db)}


def _trace(vf_task, state, reply: str):
    from verifier.adapters.verifiers_env import EHRState

    return vf.Trace(task=vf.TraceTask(type=type(vf_task).__name__, data=vf_task.data),
                    agent=vf.AgentInfo(config=vf.AgentConfig()),
                    nodes=[vf.MessageNode(message=vf.AssistantMessage(content=reply), sampled=True)],
                    state=state if state is not None else EHRState())


def _play(vf_task, traj: Trajectory):
    """The toolset of one rollout plays the steps (as the MCP server would); returns its state."""
    toolset = type(vf_task).toolsets(vf_task.config)[0]
    asyncio.run(toolset.setup_task(vf_task.data))
    for s in traj.steps:
        (toolset.run_sql(query=s.code) if s.kind == "sql" else toolset.run_python(code=s.code))
    return toolset


def test_load_environment_gives_a_vf_env_over_the_tasks(setup):
    from verifier.adapters.verifiers_env import EHRTask

    env = setup["env"]
    assert isinstance(env, vf.Env) and isinstance(env, vf.SingleAgentEnv)
    loaded = list(env.taskset)
    assert [t.data.id for t in loaded] == [t.task_id for t in setup["tasks"]]
    for vt, task in zip(loaded, setup["tasks"]):
        assert isinstance(vt, EHRTask) and vt.key == task.task_id
        assert task.question in vt.data.prompt_text and task.reference.sql not in vt.data.prompt_text
        assert Task.model_validate_json(vt.data.task) == task
        assert vt.config.db == setup["db"] and vt.config.tools.db == setup["db"]


def test_toolset_registers_run_sql_and_run_python_on_the_mcp_server(setup):
    from mcp.server.mcpserver import MCPServer

    vt = next(iter(setup["env"].taskset))
    toolset = type(vt).toolsets(vt.config)[0]
    server = MCPServer("ehr")
    toolset.register(server)
    tools = asyncio.run(server.list_tools())
    assert sorted(t.name for t in tools) == ["run_python", "run_sql"]
    assert toolset.server_name == ""  # advertised bare: the names verifier.logs reads


def test_reward_scores_the_toolsets_episode(setup):
    """Clean and Noise: the oracle's steps played through the toolset and its reply score as the
    oracle's episode does; the same reply without the episode's evidence fails on Noise."""
    config = VerifyConfig(db_path=setup["db"])
    for vt in setup["env"].taskset:
        task = Task.model_validate_json(vt.data.task)
        oracle = setup["oracle"][task.task_id]
        toolset = _play(vt, oracle)
        episode = Trajectory.model_validate(toolset.state.episode) if oracle.steps else None
        if episode is not None:
            assert [s.output for s in episode.steps] == [s.output for s in oracle.steps]
        trace = _trace(vt, toolset.state, oracle.final_response)
        asyncio.run(vt.score(trace))
        expected = verify(oracle, task, config)
        assert expected.success
        assert trace.rewards["ehr_verify"].score == expected.score == 1.0
        assert trace.metrics["ehr_abstained"] == float(task.condition == "noise")
        if task.condition == "noise":
            bare = _trace(vt, None, oracle.final_response)
            asyncio.run(vt.score(bare))
            assert bare.rewards["ehr_verify"].score == 0.0
        toolset.env.close()


def test_module_is_a_taskset_plugin(setup):
    """verifiers finds the taskset by id (the module path) through ``__all__``."""
    from verifiers.v1.utils.loaders import taskset_class

    from verifier.adapters.verifiers_env import EHRTaskset

    assert taskset_class("ehr_verifier_taskset") is EHRTaskset
