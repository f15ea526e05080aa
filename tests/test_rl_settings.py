"""The README's RL settings run as written (issue 34, acceptance): a PPO/GRPO-style smoke run with a
scripted policy through verl's agent loop and through TRL's ``environment_factory`` path, with the
lengths parsed from the README itself (so README and test cannot drift).

verl: every ``RLHFDataset`` prompt (the row's message plus the tool schemas the chat template adds)
is within ``data.max_prompt_length`` (``data.truncation=error`` would stop the run otherwise), and
no tool result is cut at ``multi_turn.max_tool_response_length`` (the verl stand-in of
``tests/verl_fake.py`` cuts as verl does), the longest result the environment can show included.
TRL: the observation ``EHRToolEnv.reset`` returns fits the same prompt length (``GRPOConfig`` has
none), and each episode's completion (tool calls, tool results, final answer) fits
``max_completion_length``, within ``max_tool_calling_iterations``.

Tokens are estimated at 3 characters a token, more than BPE tokenizers give on this text (about 4):
no tokenizer is available offline here.
"""

from __future__ import annotations

import ast
import asyncio
import json
import math
import re
import textwrap
from pathlib import Path

import pytest
import yaml
from batch_data import episodes, pick_pairs

import verl_fake
from verifier.contract import Task, Trajectory, VerifyConfig
from verifier.verify import verify

README = Path(__file__).resolve().parent.parent / "README.md"


def tokens(text: str) -> int:
    """Token estimate (over-counts): 3 characters a token."""
    return math.ceil(len(text) / 3)


def _block(marker: str) -> str:
    """The README's fenced block whose first line is ``# RL settings: <marker>``."""
    text = README.read_text(encoding="utf-8")
    found = re.search(r"```[a-z]*\n\s*# RL settings: " + re.escape(marker) + r"\n(.*?)```", text, re.S)
    assert found, f"README.md has no '# RL settings: {marker}' block"
    return found.group(1)


def verl_settings() -> dict[str, str]:
    """``key=value`` lines of the README's verl block."""
    return dict(line.strip().split("=", 1) for line in _block("verl").splitlines() if "=" in line)


def trl_settings() -> dict[str, dict]:
    """Keyword arguments of each call in the README's TRL block (``GRPOConfig``, ``EnvConfig``)."""
    out: dict[str, dict] = {}
    for node in ast.walk(ast.parse(textwrap.dedent(_block("TRL")))):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            out[node.func.id] = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
    return out


@pytest.fixture(scope="module")
def verl_mods():
    try:
        import verl  # noqa: F401
        yield None
    except ImportError:
        mods = verl_fake.install()
        yield mods
        verl_fake.uninstall(mods)


@pytest.fixture(scope="module")
def sample(synth_db: Path, synth_tasks: list[Task]):
    tasks = pick_pairs(synth_tasks, 3)
    oracle = {t.task_id: t for t in (Trajectory.model_validate_json(line)
                                    for line in episodes(synth_db, tasks, agents=("oracle",)))}
    return tasks, oracle


def _largest_results(oracle_sql: str) -> list[str]:
    """Turns whose results are the longest the environment shows: a wide table, every column's
    description of the widest table, and Python printing far past its output limit, then failing
    (an error message is not capped by the environment: a policy raising a 10,000-character
    exception would see it cut)."""
    from verifier.database._schema_doc import DESCRIBE_QUERY

    return [verl_fake.tool_call("run_sql", query="SELECT * FROM lab_events"),
            verl_fake.tool_call("run_sql", query=DESCRIBE_QUERY.replace("<table>", "input_events")),
            verl_fake.tool_call("run_python", code="print('x' * 100000)\nraise ValueError('y' * 500)"),
            verl_fake.tool_call("run_sql", query=oracle_sql)]


def test_verl_smoke_run_with_the_readme_settings(synth_db, sample, tmp_path, verl_mods):
    import pyarrow.parquet as pq

    from verifier.adapters import verl_agent_loop, verl_tools
    from verifier.adapters.verl_data import to_verl_parquet
    from verifier.adapters.verl_score import compute_score

    cfg = verl_settings()
    max_prompt = int(cfg["data.max_prompt_length"])
    max_tool = int(cfg["actor_rollout_ref.rollout.multi_turn.max_tool_response_length"])
    turns_cap = int(cfg["actor_rollout_ref.rollout.multi_turn.max_assistant_turns"])
    assert cfg["data.truncation"] == "error" and int(cfg["data.max_response_length"]) > 0
    tasks, oracle = sample
    tool_yaml = tmp_path / "ehr_tools.yaml"
    tool_yaml.write_text(verl_tools.tool_config_yaml(synth_db), encoding="utf-8")
    schemas = json.dumps([e["tool_schema"] for e in yaml.safe_load(tool_yaml.read_text())["tools"]])
    entry = yaml.safe_load(verl_agent_loop.agent_loop_yaml())[0]
    rows = pq.read_table(to_verl_parquet(tasks, tmp_path / "train.parquet", db=synth_db)).to_pylist()
    multi_turn = {"max_tool_response_length": max_tool, "max_assistant_turns": turns_cap}
    for row, task in zip(rows, tasks):
        prompt = "".join(m["content"] for m in row["prompt"]) + schemas
        assert tokens(prompt) <= max_prompt, f"RLHFDataset (truncation=error) would stop: {tokens(prompt)} > {max_prompt}"
        traj = oracle[task.task_id]
        sql = next(s.code for s in traj.steps if s.kind == "sql")
        turns = [*_largest_results(sql), traj.final_response]
        assert len(turns) <= turns_cap
        loop, tok = verl_fake.make_loop(entry, str(tool_yaml), turns, multi_turn=multi_turn)
        kwargs = {**row, "raw_prompt": row["prompt"], "tools_kwargs": row["extra_info"]["tools_kwargs"]}
        output = asyncio.run(loop.run({"temperature": 1.0}, **kwargs))
        episode = Trajectory.model_validate(output.extra_fields["ehr_episode"])
        shown = tok.decode(output.response_ids)
        assert "(truncated)" not in shown  # no tool result was cut
        assert len(episode.steps) == 4 and all(s.output or s.error for s in episode.steps)
        for step in episode.steps:
            assert (step.output or "").rstrip("\n")[-200:] in shown or (step.error or "")[-200:] in shown
        extra = {**row["extra_info"], **output.extra_fields}
        scored = compute_score(data_source=row["data_source"], solution_str=shown, ground_truth=row["reward_model"]["ground_truth"],
                               extra_info=extra, db=str(synth_db))
        expected = verify(episode, task, VerifyConfig(db_path=str(synth_db)))
        assert scored["success"] == expected.success
        if task.condition == "clean":
            assert scored["success"], scored["reasons"]


def test_verl_default_tool_response_length_would_cut_results(synth_db, sample, tmp_path, verl_mods):
    """Why the README sets the tool response length: verl's default (256 characters) cuts them."""
    from verifier.adapters import verl_agent_loop, verl_tools
    from verifier.adapters.verl_data import verl_rows

    tasks, _ = sample
    tool_yaml = tmp_path / "ehr_tools.yaml"
    tool_yaml.write_text(verl_tools.tool_config_yaml(synth_db), encoding="utf-8")
    entry = yaml.safe_load(verl_agent_loop.agent_loop_yaml())[0]
    row = verl_rows(tasks[:1], db=synth_db)[0]
    loop, tok = verl_fake.make_loop(entry, str(tool_yaml), [*_largest_results("SELECT 1")[:1], "<answer>NULL</answer>"])
    output = asyncio.run(loop.run({}, **{**row, "raw_prompt": row["prompt"], "tools_kwargs": row["extra_info"]["tools_kwargs"]}))
    assert "...(truncated)..." in tok.decode(output.response_ids)


def test_trl_smoke_run_with_the_readme_settings(synth_db, sample):
    from verifier.adapters.trl_data import to_grpo_dataset
    from verifier.adapters.trl_env import EHRToolEnv, env_reward_func, environment_factory
    from verifier.agents import make_agent
    from verifier.env import TOOLS, EnvConfig

    cfg = trl_settings()
    grpo, env_cfg = cfg["GRPOConfig"], EnvConfig(**cfg["EnvConfig"])
    max_completion, iterations = grpo["max_completion_length"], grpo["max_tool_calling_iterations"]
    max_prompt = int(verl_settings()["data.max_prompt_length"])
    assert env_cfg.max_steps <= iterations
    tasks, oracle = sample
    ds = to_grpo_dataset(tasks, prompt="empty")
    make = environment_factory(None, synth_db, env_cfg)
    envs: list[EHRToolEnv] = [make() for _ in tasks]
    completions = []
    for i, (env, task) in enumerate(zip(envs, tasks)):
        row = ds[i]
        obs = env.reset(**row)
        # GRPOConfig (TRL >= 1.0) has no prompt length: the prompt (this observation and the tools)
        # is held to the README's verl prompt length, the length a model's context is set up for
        assert obs and task.question in obs and tokens(obs + json.dumps(TOOLS)) <= max_prompt
        agent = make_agent("oracle", tasks=[task])
        agent.reset(task, obs, {})
        messages, seen, calls = [], obs, 0
        while True:
            act = agent.act(seen)
            if act.kind == "submit":
                messages.append({"role": "assistant", "content": act.content})
                break
            calls += 1
            name, arg = ("run_sql", "query") if act.kind == "sql" else ("run_python", "code")
            seen = getattr(env, name)(**{arg: act.content})
            messages += [{"role": "assistant", "content": "", "tool_calls": [
                {"type": "function", "function": {"name": name, "arguments": {arg: act.content}}}]},
                {"role": "tool", "name": name, "content": seen}]
        assert calls <= iterations
        assert tokens(json.dumps(messages)) <= max_completion
        completions.append(messages)
    # the longest result the environment shows fits a completion, with room for the answer
    probe = make()
    probe.reset(task=tasks[0].model_dump_json(), prompt=[{"role": "user", "content": ""}])
    longest = probe.run_sql(query="SELECT * FROM lab_events")
    assert tokens(longest) < max_completion // 2
    rewards = env_reward_func(completions=completions, environments=envs)
    assert rewards == [1.0] * len(tasks), [v.reasons for v in env_reward_func.last_verdicts]
