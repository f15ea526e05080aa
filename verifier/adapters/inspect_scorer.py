"""inspect_ai scorer backed by ``verify``.

inspect_ai scorers are made by a ``@scorer(metrics=[...])``-decorated factory
returning ``async def score(state: TaskState, target: Target) -> Score``
(inspect_ai documentation, "Scorers"). ``ehr_scorer`` builds one:

* the task: ``state.metadata["task"]`` (a Task dict), else the task id in
  ``state.metadata["task_id"]`` or ``target.text``, looked up in ``tasks``;
* the trajectory: ``state.messages`` (assistant ``tool_calls`` to
  ``run_sql``/``run_python`` and their ``tool`` results) converted to
  OpenAI-style dicts and then with ``verifier.chat.from_chat_messages``; the
  final response is the last assistant text (else ``state.output.completion``);
* the Score: ``value`` CORRECT/INCORRECT, ``answer`` the parsed Answer,
  ``explanation`` the reason codes, ``metadata`` the whole verdict.

Metrics stay separate from scoring (DESIGN.md section 8): ``accuracy`` and
``stderr`` by default. inspect_ai is imported only when ``ehr_scorer`` is
called; it is not a dependency of ehr-verifier.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ..config import VerifyConfig
from ..task import Task
from .common import resolve_task, task_map, to_trajectory


def inspect_messages_to_chat(messages: list[Any]) -> list[dict[str, Any]]:
    """inspect_ai ``ChatMessage`` objects -> OpenAI-style message dicts (tool errors become ``Error: ...`` results)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        role = getattr(m, "role", None)
        if role == "assistant":
            msg: dict[str, Any] = {"role": "assistant", "content": m.text}
            if m.tool_calls:
                msg["tool_calls"] = [
                    {"id": tc.id, "type": "function", "function": {"name": tc.function, "arguments": dict(tc.arguments)}}
                    for tc in m.tool_calls
                ]
            out.append(msg)
        elif role == "tool":
            text = m.text
            if getattr(m, "error", None) is not None:
                text = f"Error: {m.error.message}"
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": text})
        elif role in ("system", "user"):
            out.append({"role": role, "content": m.text})
    return out


def ehr_scorer(
    tasks: Mapping[str, Task] | str | Path | None = None,
    db: str | Path | None = None,
    *,
    config: VerifyConfig | None = None,
) -> Any:
    """An inspect_ai ``Scorer`` that runs ``verify`` on the sample's episode.

    Args:
        tasks: ``{task_id: Task}`` or a tasks JSONL path (when samples carry task ids).
        db: DuckDB file for Noise evidence re-execution.
        config: VerifyConfig for finer settings.

    Returns:
        The scorer (pass it as ``Task(scorer=ehr_scorer(...))``).

    Raises:
        ImportError: inspect_ai is not installed.
    """
    from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer, stderr
    from inspect_ai.solver import TaskState

    cfg = config or VerifyConfig()
    if db is not None:
        cfg = cfg.model_copy(update={"db_path": str(db)})

    @scorer(metrics=[accuracy(), stderr()], name="ehr_verifier")
    def _ehr_verifier() -> Any:
        async def score(state: TaskState, target: Target) -> Score:
            import anyio

            from ..verify import verify

            meta = state.metadata or {}
            ref = meta.get("task") or meta.get("task_id") or target.text
            task = resolve_task(ref, task_map(tasks), field="sample task")
            chat = inspect_messages_to_chat(state.messages)
            if not any(m["role"] == "assistant" and not m.get("tool_calls") for m in chat) and state.output is not None:
                chat.append({"role": "assistant", "content": state.output.completion})
            traj = to_trajectory(chat, task_id=task.task_id, trajectory_id=f"{state.sample_id}#{state.epoch}")
            verdict = await anyio.to_thread.run_sync(verify, traj, task, cfg)
            answer = ((verdict.details or {}).get("parse") or {}).get("answer")
            return Score(
                value=CORRECT if verdict.success else INCORRECT,
                answer=answer,
                explanation=", ".join(r.value for r in verdict.reasons) or "success",
                metadata=verdict.model_dump(mode="json"),
            )

        return score

    return _ehr_verifier()
