"""Episodes as the chat records TRL's ``SFTTrainer`` and ``DPOTrainer`` read (TRL >= 1.0).

TRL's conversational tool-calling format (TRL documentation, "Dataset formats", tool calling;
``SFTTrainer`` / ``DPOTrainer`` pass the row's ``tools`` to ``apply_chat_template``, decoding it
with ``json.loads`` when it is a string):

* a ``user`` message: the environment's first observation
  (``verifier.env.instructions.reset_observation``: shared instructions, the schema
  description when a database is given, the question);
* per step, an ``assistant`` message with one ``tool_calls`` entry whose ``arguments`` is a
  **dict** (``run_sql`` with ``{"query": ...}``, ``run_python`` with ``{"code": ...}``: chat
  templates apply ``tojson`` to it, so a JSON string would be encoded twice), and a ``tool``
  message with the tool's ``name``, the call's ``tool_call_id`` and the observation
  (``[step N]`` then the output or the error, as the environment shows it);
* a final ``assistant`` message with the final response;
* a ``tools`` column: the environment's tool schemas (``verifier.env.TOOLS``) as JSON text, so
  ``datasets`` stores it as one string rather than unifying the two tools' parameters.

``datasets.load_dataset("json")`` (datasets >= 4) reads message lists whose dicts differ in keys
as ``List(Json())``, so a written file reads back unchanged (``tests/test_export_formats.py``).
``verifier.contract.from_chat_messages`` reads the messages back into a trajectory.
"""

from __future__ import annotations

import json
from typing import Any

from ..contract import Step, Task, Trajectory

#: Tool names, as the environment declares them.
SQL_TOOL, PYTHON_TOOL = "run_sql", "run_python"


def tools_json() -> str:
    """The environment's tool schemas (OpenAI function-calling shape) as compact JSON text."""
    from ..env import TOOLS

    return json.dumps(TOOLS, separators=(",", ":"))


def _observation(step: Step) -> str:
    """What the environment showed after the step (``EHREnv._sql_step``/``_python_step``)."""
    if step.kind == "sql":
        shown = step.error if step.error else (step.output or "")
    else:
        parts = [p for p in ((step.output or "").rstrip("\n"), step.error or "") if p]
        shown = "\n".join(parts) or "(no output)"
    return f"[step {step.index}]\n{shown}"


def prompt_messages(task: Task, schema: str = "") -> list[dict[str, Any]]:
    """The episode's opening message (the environment's reset observation), without the reference.

    Args:
        task: the task (only ``question`` is used).
        schema: the schema description shown to agents (``schema_doc.schema_text``); may be empty.

    Returns:
        ``[{"role": "user", "content": str}]``.
    """
    from ..env.instructions import reset_observation

    return [{"role": "user", "content": reset_observation(task.question, schema or "(see the database)")}]


def completion_messages(traj: Trajectory) -> list[dict[str, Any]]:
    """The agent's side of an episode: tool calls (dict arguments), tool results (with ``name``), final answer.

    Args:
        traj: the trajectory.

    Returns:
        Message dicts in the module's format (``role`` / ``content`` / ``tool_calls`` /
        ``tool_call_id`` / ``name``).
    """
    out: list[dict[str, Any]] = []
    for step in traj.steps:
        call_id = f"call_{step.index}"
        name, args = (SQL_TOOL, {"query": step.code}) if step.kind == "sql" else (PYTHON_TOOL, {"code": step.code})
        out.append({
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}],
        })
        out.append({"role": "tool", "tool_call_id": call_id, "name": name, "content": _observation(step)})
    out.append({"role": "assistant", "content": traj.final_response})
    return out


def sft_record(traj: Trajectory, task: Task, schema: str = "") -> dict[str, Any]:
    """One SFT example: ``{"messages", "tools", "task_id", "trajectory_id", "condition"}``.

    ``messages`` is the prompt and the completion; ``tools`` is :func:`tools_json`.
    """
    return {
        "messages": prompt_messages(task, schema) + completion_messages(traj),
        "tools": tools_json(),
        "task_id": task.task_id,
        "trajectory_id": traj.trajectory_id,
        "condition": task.condition,
    }


def dpo_record(chosen: Trajectory, rejected: Trajectory, task: Task, schema: str = "") -> dict[str, Any]:
    """One preference pair in TRL's conversational form: ``prompt``, ``chosen``, ``rejected`` message
    lists, ``tools`` (:func:`tools_json`), and ``task_id``, ``chosen_id``, ``rejected_id``, ``condition``."""
    return {
        "prompt": prompt_messages(task, schema),
        "chosen": completion_messages(chosen),
        "rejected": completion_messages(rejected),
        "tools": tools_json(),
        "task_id": task.task_id,
        "chosen_id": chosen.trajectory_id,
        "rejected_id": rejected.trajectory_id,
        "condition": task.condition,
    }
