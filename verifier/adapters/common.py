"""What the framework adapters share: task lookup and completion -> Trajectory.

Frameworks hand over a *completion* in one of three forms, all accepted:

* a string: the final response only (no tool steps recorded there); steps
  may come separately as a recorded ``Trajectory`` (dict or JSON);
* a tool-call log in another common format (OpenAI Responses API or Agents SDK
  items, Anthropic ``tool_use``/``tool_result`` blocks, inspect_ai messages): read
  with ``verifier.logs.read_log`` (tool names of ``verifier.logs.ToolNames``, MCP
  prefixes such as ``mcp__ehr__run_sql`` removed);
* OpenAI-style chat messages (``role``/``content``/``tool_calls`` and
  ``tool`` results), the conversational format of TRL and most agent logs:
  converted with ``verifier.contract.from_chat_messages``. Tool results without
  ``tool_call_id`` (TRL's tool loop logs them by ``name``) are paired with
  the earliest unanswered call, in order;
* a ``Trajectory`` (model or dict, as the framework recorded it; text the model
  generated is never read as steps, so a model cannot type its own evidence).

The completion is model output, so it is never an error: what is not a
serialized trajectory or a message list is the final-response text, scored by
``verify`` (an unreadable response fails with ``UNPARSEABLE_RESPONSE``, a JSON
answer is read as one); tool calls that are not SQL/Python steps are skipped,
and a ``submit`` call's answer is the final response (``model_messages``).
What the *caller* configures (the task, a recorded trajectory) is checked and
raises ``InputError`` naming the field.

And the task in one of: a ``Task`` (model, dict or JSON text) or a
``task_id`` looked up in a mapping of tasks (or a tasks JSONL path, loaded
once per process).
"""

from __future__ import annotations

import json
import logging
import re
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..contract import (
    InputError,
    Task,
    Trajectory,
    from_chat_messages,
    load_tasks,
    validate,
)
from ..logs import ToolNames, detect_format, read_log


@lru_cache(maxsize=8)
def _tasks_from_file(path: str) -> dict[str, Task]:
    return load_tasks(path)


def task_map(tasks: Mapping[str, Task] | str | Path | None) -> Mapping[str, Task]:
    """``{task_id: Task}`` from a mapping, a tasks JSONL path (cached per process) or ``None`` (empty).

    Raises:
        InputError / OSError: as ``verifier.contract.load_tasks`` for a path.
    """
    if tasks is None:
        return {}
    if isinstance(tasks, (str, Path)):
        return _tasks_from_file(str(Path(tasks).resolve()))
    return tasks


def resolve_task(value: Any, tasks: Mapping[str, Task], *, field: str = "task") -> Task:
    """The Task a sample refers to.

    Args:
        value: a Task, a dict or JSON text of one, or a task_id.
        tasks: where task ids are looked up.
        field: name used in error messages.

    Raises:
        InputError: an unknown task id, or an invalid task object.
    """
    if isinstance(value, Task):
        return _same_as_known(value, tasks, field)
    if isinstance(value, Mapping):
        try:
            task = validate(Task, dict(value), where=f"{field}: ")
        except InputError as exc:
            if _has_null(value):
                raise InputError(exc.field, exc.value, f"{exc.message}; {_ALTERED}") from None
            raise
        return _same_as_known(task, tasks, field)
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("{"):
            return _same_as_known(validate(Task, text, where=f"{field}: "), tasks, field)
        task = tasks.get(text)
        if task is None:
            raise InputError(field, value, "unknown task_id (give the tasks mapping or tasks JSONL path to the adapter)")
        return task
    raise InputError(field, value, "expected a Task, a task dict/JSON or a task_id")


#: What an altered task dict most likely went through, and the fix.
_ALTERED = ("a task dict that went through HF datasets (Dataset.from_list, map) is altered: datasets gives every row "
            "the same nested schema, adding null-valued keys; store tasks as task_id or JSON text "
            "(verifier.adapters.trl_data.to_grpo_dataset)")


def _has_null(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, Mapping):
        return any(_has_null(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_null(v) for v in value)
    return False


def _same_as_known(task: Task, tasks: Mapping[str, Task], field: str) -> Task:
    """``task``, unless ``tasks`` holds a different task under the same id (an altered copy)."""
    known = tasks.get(task.task_id) if tasks else None
    if known is not None and known != task:
        raise InputError(field, task.task_id, f"differs from the task with this id in the tasks given; {_ALTERED}")
    return task


_FRAMING = re.compile(r"\A\[step \d+\]\n")

#: Tool names whose call carries the final answer (inspect_ai's ``basic_agent`` / ``react`` default).
SUBMIT_TOOLS = frozenset({"submit"})
_ROLES = frozenset({"system", "user", "developer", "assistant", "tool"})
_ANSWER_KEYS = ("answer", "final_answer", "response", "text")

logger = logging.getLogger(__name__)


def _pair_tool_results(messages: Sequence[Any]) -> list[Any]:
    """Copy of ``messages`` with ids on tool calls and ``tool_call_id`` on tool results (FIFO pairing),
    and the environment's ``[step N]`` line removed from tool results (so ``Error: ...`` results are
    recognised as errors)."""
    out: list[Any] = []
    pending: list[str] = []
    n = 0
    for msg in messages:
        if hasattr(msg, "model_dump"):
            msg = msg.model_dump()
        if not isinstance(msg, Mapping):
            out.append(msg)
            continue
        msg = dict(msg)
        if msg.get("role") == "assistant" and isinstance(msg.get("tool_calls"), (list, tuple)) and msg["tool_calls"]:
            calls = []
            for call in msg["tool_calls"]:
                call = dict(call) if isinstance(call, Mapping) else call
                if isinstance(call, dict):
                    if not call.get("id"):
                        n += 1
                        call["id"] = f"call_{n}"
                    pending.append(str(call["id"]))
                calls.append(call)
            msg["tool_calls"] = calls
        elif msg.get("role") == "tool":
            if isinstance(msg.get("content"), str):  # the environment's "[step N]" framing is not output
                msg["content"] = _FRAMING.sub("", msg["content"], count=1)
            cid = msg.get("tool_call_id")
            if cid and str(cid) in pending:
                pending.remove(str(cid))
            elif pending:
                msg["tool_call_id"] = pending.pop(0)
        out.append(msg)
    return out


def _call_name(call: Any) -> str:
    fn = call.get("function") if isinstance(call, Mapping) else None
    return str(fn.get("name", "")).strip().lower() if isinstance(fn, Mapping) else ""


def _submitted_answer(call: Mapping[str, Any]) -> str:
    """The answer argument of a submit call (``answer`` key, else the only string argument, else the raw text)."""
    raw = (call.get("function") or {}).get("arguments", "")
    args: Any = raw
    if isinstance(raw, str):
        try:
            args = json.loads(raw) if raw.strip() else ""
        except ValueError:
            return raw
    if isinstance(args, str):
        return args
    if isinstance(args, Mapping):
        for key in _ANSWER_KEYS:
            if isinstance(args.get(key), str):
                return args[key]
        strings = [v for v in args.values() if isinstance(v, str)]
        if len(strings) == 1:
            return strings[0]
    return json.dumps(args, ensure_ascii=False, default=str)


def _is_step_call(call: Any) -> bool:
    """True when ``from_chat_messages`` reads ``call`` as a SQL/Python step (known tool name, code found)."""
    if not isinstance(call, Mapping) or not isinstance(call.get("function"), Mapping):
        return False
    try:
        from_chat_messages([{"role": "assistant", "tool_calls": [dict(call)]}], trajectory_id="-", task_id="-")
    except (InputError, TypeError, AttributeError):
        return False
    return True


@lru_cache(maxsize=64)
def _tool_names(submit_tools: frozenset[str]) -> ToolNames | None:
    try:
        return ToolNames(submit=submit_tools | ToolNames().submit)
    except InputError:  # a submit name that is also a default SQL/Python name: keep the exact names only
        return None


def _tool_kind(name: str, submit_tools: frozenset[str]) -> str | None:
    """``verifier.logs.ToolNames`` classification of a call's name (MCP prefixes removed)."""
    tools = _tool_names(frozenset(submit_tools))
    return tools.kind(name) if tools is not None else None


def model_messages(messages: Sequence[Any], *, submit_tools: frozenset[str] = SUBMIT_TOOLS) -> tuple[list[dict[str, Any]], list[str]]:
    """Chat messages written (in part) by the model, made safe for ``from_chat_messages``.

    Tool names and arguments are model output, so they are never an error:

    * a call to a submit tool (``submit_tools``, lower-case) ends the episode with its
      answer: an assistant text message holding the answer is put in its place, so it is the
      final response unless the model wrote assistant text later;
    * any other call that is not a SQL/Python step (unknown tool, arguments without code,
      malformed call) is skipped, with its tool result: it cannot count as SQL evidence;
    * an assistant message left with no step call after that is dropped (its text came
      with a tool call, so it is not a final response);
    * tool results answering no call, non-object messages and unknown roles are skipped.

    Args:
        messages: OpenAI-style message dicts (or pydantic models of them).
        submit_tools: lower-cased tool names whose call carries the final answer.

    Returns:
        ``(messages, notes)``: message dicts ``from_chat_messages`` accepts, and one
        human-readable note per skipped item (empty when nothing was skipped).

    Raises:
        Nothing on message content (see above).
    """
    out: list[dict[str, Any]] = []
    notes: list[str] = []
    kept: set[str] = set()
    for i, msg in enumerate(_pair_tool_results(messages)):
        if not isinstance(msg, dict) or not isinstance(msg.get("role"), str) or msg["role"] not in _ROLES:
            role = msg.get("role") if isinstance(msg, dict) else type(msg).__name__
            notes.append(f"messages[{i}]: skipped (role {role!r})")
            continue
        if msg["role"] == "tool":
            if str(msg.get("tool_call_id", "")) in kept:
                out.append(msg)
            continue
        calls = msg.get("tool_calls") if msg["role"] == "assistant" else None
        if not calls:
            out.append({k: v for k, v in msg.items() if k != "tool_calls"} if "tool_calls" in msg else msg)
            continue
        steps, answers = [], []
        for j, call in enumerate(calls if isinstance(calls, (list, tuple)) else [calls]):
            name = _call_name(call)
            kind = _tool_kind(name, submit_tools)
            if kind in ("sql", "python") and isinstance(call, Mapping):  # MCP-prefixed or another SQL/Python name
                call = dict(call, function=dict(call["function"], name=f"run_{kind}"))
            if (name in submit_tools or kind == "submit") and isinstance(call, Mapping):
                answers.append(_submitted_answer(call))
            elif _is_step_call(call):
                steps.append(call)
                kept.add(str(call["id"]))
            else:
                notes.append(f"messages[{i}].tool_calls[{j}]: skipped (tool {name!r} is not a SQL/Python step)")
        if steps:
            out.append(dict(msg, tool_calls=steps))
        out.extend({"role": "assistant", "content": a} for a in answers)
    return out, notes


def is_messages(value: Any) -> bool:
    """True when ``value`` (any object) is a non-empty list/tuple of message objects (each a mapping
    with a ``role`` key, or an object with a ``role`` attribute); never raises."""
    return isinstance(value, (list, tuple)) and bool(value) and all(
        (isinstance(m, Mapping) and "role" in m) or hasattr(m, "role") for m in value
    )


def _last_assistant_text(messages: Sequence[Any]) -> str:
    for m in reversed(messages):
        if isinstance(m, Mapping) and m.get("role") == "assistant" and isinstance(m.get("content"), str):
            return m["content"]
    return ""


def read_trajectory(value: Any, *, task_id: str, trajectory_id: str, field: str = "trajectory") -> Trajectory:
    """A recorded Trajectory given by the caller (not model output).

    Args:
        value: a Trajectory, a dict or JSON text of one, or chat messages (read strictly).
        task_id: the task it answers (overrides what the record says).
        trajectory_id: id used when the record has none.
        field: name used in error messages.

    Returns:
        The validated Trajectory.

    Raises:
        InputError: not JSON, not an object, not a valid Trajectory, or messages
            ``verifier.contract.from_chat_messages`` rejects.
    """
    if isinstance(value, Trajectory):
        return value.model_copy(update={"task_id": task_id})
    if isinstance(value, (str, bytes)):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise InputError(field, value, f"not JSON: {exc}") from None
    if isinstance(value, (list, tuple)):
        return from_chat_messages(_pair_tool_results(value), trajectory_id=trajectory_id, task_id=task_id)
    if not isinstance(value, Mapping):
        raise InputError(field, value, "expected a Trajectory, a trajectory dict, its JSON text or chat messages")
    data = dict(value, task_id=task_id)
    data.setdefault("trajectory_id", trajectory_id)
    return validate(Trajectory, data, where=f"{field}: ")


def _as_trajectory(value: Any, task_id: str, trajectory_id: str) -> Trajectory | None:
    """``value`` read as a serialized trajectory (a dict with a ``steps`` list), else None.

    Text is never read as a trajectory: a string completion is what the model wrote,
    and a model could type out steps with the outputs it expects (an empty result is
    easy to guess) and have them count as evidence it never obtained. Steps come
    from the framework (message lists with its tool results, a dict or Trajectory
    it recorded, the caller's ``recorded`` trajectory), never from generated text."""
    if not isinstance(value, Mapping) or not isinstance(value.get("steps"), list):
        return None
    try:
        return read_trajectory(value, task_id=task_id, trajectory_id=trajectory_id, field="completion")
    except InputError:
        return None


def to_trajectory(
    completion: Any,
    *,
    task_id: str,
    trajectory_id: str,
    recorded: Any = None,
    submit_tools: frozenset[str] = SUBMIT_TOOLS,
) -> Trajectory:
    """Build the Trajectory to verify from a framework's completion.

    The completion is model output: whatever it holds, it is scored, never an error.
    It is read as a serialized Trajectory when the framework hands over one (a
    Trajectory, or a dict with a ``steps`` list that validates; never text: see
    ``_as_trajectory``), as chat messages when it is a non-empty list of message
    objects (see ``model_messages``), and otherwise as the final-response text (a
    non-string is JSON-encoded), which ``verify`` parses like any response.
    What was skipped is listed in ``metadata["adapter_notes"]``.

    Args:
        completion: final-response text, chat messages, or a Trajectory
            (model or dict with ``steps``).
        task_id: the task it answers (overrides what a serialized trajectory says).
        trajectory_id: id to give it.
        recorded: optional recorded trajectory from the caller (its steps are used when
            the completion is only text; the completion text is the final response).
        submit_tools: tool names whose call carries the final answer (``model_messages``).

    Returns:
        The Trajectory.

    Raises:
        InputError: ``recorded`` is not a valid trajectory (caller data, not model output).
    """
    if isinstance(completion, Trajectory):
        return completion.model_copy(update={"task_id": task_id})
    traj = _as_trajectory(completion, task_id, trajectory_id)
    if traj is not None:
        return traj
    if isinstance(completion, Mapping) and "role" in completion:
        completion = [completion]
    if isinstance(completion, (list, tuple)) and completion and detect_format(completion) != "chat":
        # Responses API / Agents SDK items, Anthropic blocks, inspect_ai messages: verifier.logs
        tools = _tool_names(frozenset(submit_tools)) or ToolNames()
        traj = read_log(completion, task_id=task_id, trajectory_id=trajectory_id, tools=tools)
        notes = traj.metadata["log"]["unread"]
        return traj.model_copy(update={"metadata": {**traj.metadata, "adapter_notes": notes}}) if notes else traj
    if is_messages(completion):
        messages, notes = model_messages(completion, submit_tools=submit_tools)
        try:
            traj = from_chat_messages(messages, trajectory_id=trajectory_id, task_id=task_id)
        except InputError as exc:  # a form model_messages did not foresee: score the last text
            notes.append(f"messages not read: {exc}")
            traj = Trajectory(trajectory_id=trajectory_id, task_id=task_id, final_response=_last_assistant_text(messages))
        if notes:
            logger.debug("%s: %s", trajectory_id, "; ".join(notes))
            traj = traj.model_copy(update={"metadata": {**traj.metadata, "adapter_notes": notes}})
        return traj
    if completion is None or (isinstance(completion, (list, tuple)) and not completion):
        text = ""
    elif isinstance(completion, str):
        text = completion
    else:
        text = json.dumps(completion, ensure_ascii=False, default=str)
    if recorded is not None:
        base = read_trajectory(recorded, task_id=task_id, trajectory_id=trajectory_id)
        return base.model_copy(update={"final_response": text})
    return Trajectory(trajectory_id=trajectory_id, task_id=task_id, final_response=text)


def verdict_fields(verdict: Any) -> dict[str, Any]:
    """The flat verdict fields adapters report.

    Args:
        verdict: a ``Verdict``.

    Returns:
        ``{"score": float, "success": bool, "abstained": bool, "condition": str,
        "reasons": comma-joined codes, "task_id": str, "trajectory_id": str}``; raises nothing.
    """
    return {
        "score": float(verdict.score),
        "success": bool(verdict.success),
        "abstained": bool(verdict.abstained),
        "condition": verdict.condition,
        "reasons": ",".join(str(getattr(r, "value", r)) for r in verdict.reasons),
        "task_id": verdict.task_id,
        "trajectory_id": verdict.trajectory_id,
    }
