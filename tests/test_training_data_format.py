"""Training data a model should learn from (issue 34, point 5).

* The oracle's exported reasoning says what the agent observed ("[step 1]"), never "the reference
  query": a model trained on SFT rows would learn to copy the phrase.
* One tool format: the environment's tools (``verifier.env.TOOLS``), the TRL environment's tools
  (what ``GRPOTrainer(environment_factory=...)`` exposes), verl's tool schemas and the exported
  rows' ``tools`` column are the same two tools, and in every one of them the final answer is the
  last assistant message without a tool call (no ``submit`` tool).
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest
from batch_data import episodes, pick_pairs

from verifier.contract import Task, Trajectory
from verifier.env import TOOLS


@pytest.fixture(scope="module")
def sft_rows(synth_db: Path, synth_tasks: list[Task]) -> list[dict]:
    from verifier.scoring import export_records, verdict_index, verify_batch

    tasks = pick_pairs(synth_tasks, 6)
    lines = episodes(synth_db, tasks, agents=("oracle",))
    index = verdict_index(verify_batch(lines, {t.task_id: t for t in tasks}, synth_db, backend="serial"))
    trajs = [Trajectory.model_validate_json(line) for line in lines]
    rows = list(export_records("sft", trajs, index, {t.task_id: t for t in tasks}, schema="(schema)"))
    assert len(rows) == len(trajs)  # the oracle succeeds on every task, so every episode is a row
    return rows


def test_exported_reasoning_never_names_the_reference(sft_rows):
    for row in sft_rows:
        for message in row["messages"]:
            if message["role"] == "assistant" and message.get("content"):
                assert not re.search(r"\breference\b", message["content"], re.I), message["content"]
                if "<reasoning>" in message["content"]:
                    assert "[step 1]" in message["content"]  # what the agent observed, cited


def _trl_tools(instance) -> dict:
    """What TRL's GRPOTrainer exposes: public functions of the class other than reset/get_reward."""
    return {name: getattr(instance, name) for name, _ in inspect.getmembers(type(instance), predicate=inspect.isfunction)
            if name not in ("reset", "get_reward") and not name.startswith("_")}


def test_one_tool_format_for_the_environment_trl_verl_and_exports(synth_db, sft_rows):
    from transformers.utils import get_json_schema

    from verifier.adapters.trl_env import environment_factory
    from verifier.adapters.verl_tools import TOOL_NAMES, tool_schema

    env_tools = {t["function"]["name"]: t["function"] for t in TOOLS}
    trl = {n: {k: v for k, v in get_json_schema(f)["function"].items() if k != "return"}  # templates show no return
           for n, f in _trl_tools(environment_factory(None, synth_db)()).items()}
    assert trl == env_tools  # names, descriptions and parameters, as transformers renders TRL's tools
    assert {n: tool_schema(n)["function"] for n in TOOL_NAMES} == env_tools
    for row in sft_rows:
        assert json.loads(row["tools"]) == TOOLS
        called = {c["function"]["name"] for m in row["messages"] for c in (m.get("tool_calls") or [])}
        assert called <= set(env_tools)
        assert row["messages"][-1]["role"] == "assistant" and not row["messages"][-1].get("tool_calls")
