"""Logs of other systems read into Trajectories (issue 14, part 1): every format gives the verdict
of the episode it records.

Each oracle episode on the synthetic hospital (a Clean task and a Noise task per program) is
written out in every log format's documented shape (``verifier.logs`` module docstrings cite
them), as plain dicts and, where the vendor's package is installed, with the vendor's own
Python types; ``read_log`` must read each back to the same steps and the same verdict.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from verifier import verify
from verifier.agents import make_agent
from verifier.agents.rollout import run_episode
from verifier.contract import ReasonCode, Trajectory, VerifyConfig, from_chat_messages
from verifier.env import EHREnv, EnvConfig
from verifier.logs import ToolNames, detect_format, read_log


@pytest.fixture(scope="module")
def episodes(synth_db: Path) -> list[tuple[Any, Trajectory]]:
    """Oracle episodes (task, trajectory) on 6 programs of the synthetic hospital, both conditions."""
    from verifier.construction import make_tasks

    tasks, _ = make_tasks(synth_db, seed=0, pairs=12)
    pairs = sorted({t.program for t in tasks})[:6]
    env = EHREnv(str(synth_db), EnvConfig(max_steps=5))
    out = []
    for task in tasks:
        if task.program in pairs:
            traj, verdict = run_episode(env, make_agent("oracle"), task)
            assert verdict.success, (task.task_id, verdict.reasons)
            assert traj.steps
            out.append((task, traj))
    assert {t.condition for t, _ in out} == {"clean", "noise"}
    return out


# ---------------------------------------------------------------- writers, one per format
def _args(step) -> str:
    return json.dumps({"query" if step.kind == "sql" else "code": step.code})


def _tool(step) -> str:
    return "run_sql" if step.kind == "sql" else "run_python"


def _result(step) -> str:
    return step.output if step.ok else f"Error: {step.error}"


def chat_dicts(traj: Trajectory, name: Callable[[Any], str] = _tool) -> list[dict]:
    """OpenAI Chat Completions messages (API reference, function calling)."""
    msgs: list[dict] = [{"role": "system", "content": "You are a clinical data agent."}, {"role": "user", "content": "Q"}]
    for s in traj.steps:
        msgs.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{s.index}", "type": "function", "function": {"name": name(s), "arguments": _args(s)}}]})
        msgs.append({"role": "tool", "tool_call_id": f"call_{s.index}", "content": _result(s)})
    msgs.append({"role": "assistant", "content": traj.final_response})
    return msgs


def chat_openai_types(traj: Trajectory) -> list[Any]:
    """The same with the openai SDK's ChatCompletionMessage objects for the model's turns."""
    from openai.types.chat import ChatCompletionMessage, ChatCompletionMessageFunctionToolCall
    from openai.types.chat.chat_completion_message_function_tool_call import Function

    msgs: list[Any] = [{"role": "user", "content": "Q"}]
    for s in traj.steps:
        msgs.append(ChatCompletionMessage(role="assistant", content=None, tool_calls=[ChatCompletionMessageFunctionToolCall(
            id=f"call_{s.index}", type="function", function=Function(name=_tool(s), arguments=_args(s)))]))
        msgs.append({"role": "tool", "tool_call_id": f"call_{s.index}", "content": _result(s)})  # ChatCompletionToolMessageParam
    msgs.append(ChatCompletionMessage(role="assistant", content=traj.final_response))
    return msgs


def trl_dicts(traj: Trajectory) -> list[dict]:
    """TRL's tool-calling conversational format: dict arguments, tool messages by ``name``, no ids."""
    msgs: list[dict] = [{"role": "user", "content": "Q"}]
    for s in traj.steps:
        msgs.append({"role": "assistant", "tool_calls": [
            {"type": "function", "function": {"name": _tool(s), "arguments": json.loads(_args(s))}}]})
        msgs.append({"role": "tool", "name": _tool(s), "content": _result(s)})
    msgs.append({"role": "assistant", "content": traj.final_response})
    return msgs


def responses_dicts(traj: Trajectory) -> list[dict]:
    """OpenAI Responses API items (conversation state: input items + output items)."""
    items: list[dict] = [{"role": "user", "content": "Q"}]
    for s in traj.steps:
        items.append({"type": "reasoning", "id": f"rs_{s.index}", "summary": []})
        items.append({"type": "function_call", "id": f"fc_{s.index}", "call_id": f"call_{s.index}", "name": _tool(s),
                      "arguments": _args(s), "status": "completed"})
        items.append({"type": "function_call_output", "call_id": f"call_{s.index}", "output": _result(s)})
    items.append({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                  "content": [{"type": "output_text", "text": traj.final_response, "annotations": []}]})
    return items


def responses_openai_types(traj: Trajectory) -> list[Any]:
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    items: list[Any] = []
    for s in traj.steps:
        items.append(ResponseFunctionToolCall(type="function_call", call_id=f"call_{s.index}", name=_tool(s), arguments=_args(s)))
        items.append({"type": "function_call_output", "call_id": f"call_{s.index}", "output": _result(s)})
    items.append(ResponseOutputMessage(id="msg_1", type="message", role="assistant", status="completed",
                                       content=[ResponseOutputText(type="output_text", text=traj.final_response, annotations=[])]))
    return items


def responses_mcp_calls(traj: Trajectory) -> list[dict]:
    """Remote MCP tools in the Responses API: one ``mcp_call`` item holds call and output."""
    items: list[dict] = [{"type": "mcp_list_tools", "id": "mcpl_1", "server_label": "ehr", "tools": []}]
    for s in traj.steps:
        item = {"type": "mcp_call", "id": f"mcp_{s.index}", "server_label": "ehr", "name": _tool(s), "arguments": _args(s)}
        item.update({"output": s.output} if s.ok else {"error": s.error})
        items.append(item)
    items.append({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": traj.final_response}]})
    return items


def agents_dicts(traj: Trajectory) -> list[dict]:
    """OpenAI Agents SDK run items (``RunResult.new_items``) in their dict form."""
    items: list[dict] = []
    for item in responses_dicts(traj):
        kind = {"function_call": "tool_call_item", "function_call_output": "tool_call_output_item",
                "message": "message_output_item", "reasoning": "reasoning_item"}.get(item.get("type"))
        if kind:
            items.append({"type": kind, "raw_item": item})
    return items


def agents_sdk_types(traj: Trajectory) -> Any:
    """A RunResult-like object holding the Agents SDK's own RunItem objects."""
    agents = pytest.importorskip("agents")
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    agent = agents.Agent(name="ehr")
    items: list[Any] = []
    for s in traj.steps:
        items.append(agents.ToolCallItem(agent=agent, raw_item=ResponseFunctionToolCall(
            type="function_call", call_id=f"call_{s.index}", name=_tool(s), arguments=_args(s))))
        items.append(agents.ToolCallOutputItem(agent=agent, output=_result(s), raw_item={
            "type": "function_call_output", "call_id": f"call_{s.index}", "output": _result(s)}))
    items.append(agents.MessageOutputItem(agent=agent, raw_item=ResponseOutputMessage(
        id="msg_1", type="message", role="assistant", status="completed",
        content=[ResponseOutputText(type="output_text", text=traj.final_response, annotations=[])])))
    return items


def anthropic_dicts(traj: Trajectory, name: Callable[[Any], str] = _tool) -> list[dict]:
    """Anthropic Messages: ``tool_use`` blocks, then ``tool_result`` blocks in the next user turn."""
    msgs: list[dict] = [{"role": "user", "content": "Q"}]
    for s in traj.steps:
        msgs.append({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "...", "signature": "x"},
            {"type": "text", "text": "Let me query the records."},
            {"type": "tool_use", "id": f"toolu_{s.index}", "name": name(s), "input": json.loads(_args(s))}]})
        msgs.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{s.index}",
                                                  "content": [{"type": "text", "text": s.output if s.ok else s.error}],
                                                  "is_error": not s.ok}]})
    msgs.append({"role": "assistant", "content": [{"type": "text", "text": traj.final_response}]})
    return msgs


def anthropic_sdk_types(traj: Trajectory) -> list[Any]:
    anthropic = pytest.importorskip("anthropic")
    from anthropic.types import Message, TextBlock, ToolUseBlock, Usage

    def message(content: list) -> Any:
        return Message(id="msg", type="message", role="assistant", model="claude", content=content,
                       stop_reason="end_turn", stop_sequence=None, usage=Usage(input_tokens=1, output_tokens=1))

    assert anthropic
    msgs: list[Any] = [{"role": "user", "content": "Q"}]
    for s in traj.steps:
        msgs.append(message([ToolUseBlock(type="tool_use", id=f"toolu_{s.index}", name=_tool(s), input=json.loads(_args(s)))]))
        msgs.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{s.index}",
                                                  "content": _result(s), "is_error": not s.ok}]})  # ToolResultBlockParam
    msgs.append(message([TextBlock(type="text", text=traj.final_response)]))
    return msgs


def mcp_prefixed_anthropic(traj: Trajectory) -> list[dict]:
    """Claude Code / Claude Agent SDK names MCP tools ``mcp__<server>__<tool>``."""
    return anthropic_dicts(traj, name=lambda s: f"mcp__ehr__{_tool(s)}")


def mcp_prefixed_chat(traj: Trajectory) -> list[dict]:
    return chat_dicts(traj, name=lambda s: f"ehr.{_tool(s)}")


def inspect_types(traj: Trajectory) -> list[Any]:
    """inspect_ai ChatMessage objects, the episode ending with a ``submit`` call (basic_agent / react)."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser
    from inspect_ai.tool import ToolCall, ToolCallError

    msgs: list[Any] = [ChatMessageUser(content="Q")]
    for s in traj.steps:
        msgs.append(ChatMessageAssistant(content="", tool_calls=[
            ToolCall(id=f"c{s.index}", function=_tool(s), arguments=json.loads(_args(s)))]))
        msgs.append(ChatMessageTool(content=s.output or "", tool_call_id=f"c{s.index}", function=_tool(s),
                                    error=None if s.ok else ToolCallError("unknown", s.error or "")))
    msgs.append(ChatMessageAssistant(content="", tool_calls=[
        ToolCall(id="done", function="submit", arguments={"answer": traj.final_response})]))
    msgs.append(ChatMessageTool(content="", tool_call_id="done", function="submit"))
    return msgs


def inspect_json(traj: Trajectory) -> list[dict]:
    """The same messages as an inspect_ai log file stores them (``EvalSample.messages`` JSON)."""
    return [json.loads(m.model_dump_json()) for m in inspect_types(traj)]


FORMATS: dict[str, tuple[Callable[[Trajectory], Any], str]] = {
    "chat-dicts": (chat_dicts, "chat"),
    "chat-openai-types": (chat_openai_types, "chat"),
    "trl": (trl_dicts, "chat"),
    "responses-dicts": (responses_dicts, "responses"),
    "responses-openai-types": (responses_openai_types, "responses"),
    "responses-mcp-call": (responses_mcp_calls, "responses"),
    "agents-dicts": (agents_dicts, "agents"),
    "agents-sdk-types": (agents_sdk_types, "agents"),
    "anthropic-dicts": (anthropic_dicts, "anthropic"),
    "anthropic-sdk-types": (anthropic_sdk_types, "anthropic"),
    "mcp-prefixed-anthropic": (mcp_prefixed_anthropic, "anthropic"),
    "mcp-prefixed-chat": (mcp_prefixed_chat, "chat"),
    "inspect-types": (inspect_types, "inspect"),
    "inspect-json": (inspect_json, "inspect"),
}


def _key(verdict: Any) -> tuple:
    return verdict.success, verdict.abstained, [r.value for r in verdict.reasons]


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_every_format_reads_the_oracle_episode_to_the_same_verdict(name: str, episodes, synth_db: Path) -> None:
    write, fmt = FORMATS[name]
    cfg = VerifyConfig(db_path=str(synth_db))
    for task, traj in episodes:
        log = write(traj)
        assert detect_format(log) == fmt, name
        got = read_log(log, task_id=task.task_id, trajectory_id=traj.trajectory_id)
        assert [(s.kind, s.code, s.output, s.error) for s in got.steps] == \
            [(s.kind, s.code, s.output, s.error) for s in traj.steps], (name, task.task_id)
        assert got.final_response == traj.final_response
        assert got.metadata["log"]["steps_read"] == len(traj.steps) and "warning" not in got.metadata["log"]
        assert _key(verify(got, task, cfg)) == _key(verify(traj, task, cfg)) == (True, task.condition == "noise", [])


def _noise(episodes) -> tuple[Any, Trajectory]:
    return next((t, tr) for t, tr in episodes if t.condition == "noise")


def test_fabricated_output_is_still_fabricated_through_every_format(episodes, synth_db: Path) -> None:
    task, traj = _noise(episodes)
    lie = traj.model_copy(update={"steps": [traj.steps[0].model_copy(update={"output": "n\n---\n41"})]})
    cfg = VerifyConfig(db_path=str(synth_db))
    for name, (write, _fmt) in FORMATS.items():
        try:
            log = write(lie)
        except pytest.skip.Exception:  # the vendor's package is not installed here
            continue
        got = read_log(log, task_id=task.task_id)
        assert ReasonCode.EVIDENCE_FABRICATED in verify(got, task, cfg).reasons, name


def test_a_log_with_unknown_tool_names_is_no_steps_read_with_a_warning(episodes, synth_db: Path) -> None:
    """Before ``verifier.logs``, an Anthropic log or unconfigured tool names gave zero steps silently: the
    honest abstention scored NO_EVIDENCE as if the agent had run nothing."""
    task, traj = _noise(episodes)
    cfg = VerifyConfig(db_path=str(synth_db))
    old = from_chat_messages([m for m in anthropic_dicts(traj) if m["role"] == "assistant" and isinstance(m["content"], str)],
                             trajectory_id="t", task_id=task.task_id)
    assert old.steps == []
    log = anthropic_dicts(traj, name=lambda s: "database")
    got = read_log(log, task_id=task.task_id)
    v = verify(got, task, cfg)
    assert v.reasons == [ReasonCode.NO_STEPS_READ]
    assert "database" in v.details["log"]["unread"][0] and "no SQL or Python step" in v.details["log"]["warning"]
    # configured, the same log is read and passes
    tools = ToolNames(sql={"database"})
    assert verify(read_log(log, task_id=task.task_id, tools=tools), task, cfg).success
    # a Clean episode with an unreadable log keeps its verdict and carries the warning
    ctask, ctraj = next((t, tr) for t, tr in episodes if t.condition == "clean")
    cv = verify(read_log(anthropic_dicts(ctraj, name=lambda s: "database"), task_id=ctask.task_id), ctask, cfg)
    assert cv.success and "warning" in cv.details["log"]


def test_an_agent_that_ran_nothing_stays_no_evidence(episodes, synth_db: Path) -> None:
    task, traj = _noise(episodes)
    log = [{"role": "user", "content": "Q"}, {"role": "assistant", "content": [{"type": "text", "text": traj.final_response}]}]
    got = read_log(log, task_id=task.task_id, format="anthropic")
    assert got.steps == [] and "warning" not in got.metadata["log"]
    assert verify(got, task, VerifyConfig(db_path=str(synth_db))).reasons == [ReasonCode.NO_EVIDENCE]


@pytest.mark.parametrize("name,kind", [
    ("run_sql", "sql"), ("RUN_SQL", "sql"), ("mcp__ehr__run_sql", "sql"), ("mcp__my__server__execute_sql", "sql"),
    ("ehr.run_python", "python"), ("ehr/query", "sql"), ("ehr:submit", "submit"), ("ehr__submit", "submit"),
    ("think", None), ("mcp__ehr__think", None), ("", None),
])
def test_tool_names_and_mcp_prefixes(name: str, kind: str | None) -> None:
    assert ToolNames().kind(name) == kind


def test_tool_names_configuration_errors_name_the_field() -> None:
    from verifier.contract import InputError

    with pytest.raises(InputError, match="ToolNames.python"):
        ToolNames(sql={"x"}, python={"X"})
    with pytest.raises(InputError, match="ToolNames.sql"):
        ToolNames(sql={""})
    with pytest.raises(InputError, match="format"):
        read_log([], task_id="t", format="langchain")
    with pytest.raises(InputError, match="log"):
        read_log("text", task_id="t")


def test_unreadable_items_never_raise() -> None:
    log = [{"type": "function_call", "call_id": "a", "name": "run_sql", "arguments": "{not json"},
           {"type": "function_call_output", "call_id": "zzz", "output": "1"}, {"type": "web_search_call", "id": "w"},
           42, {"type": "function_call", "call_id": "b", "name": "run_sql", "arguments": "{}"}]
    got = read_log(log, task_id="t")
    assert [s.code for s in got.steps] == ["{not json"]  # bare code, as some models send it
    notes = " ".join(got.metadata["log"]["unread"])
    assert "answers no earlier call" in notes and "web_search_call" in notes and "no code" in notes


@pytest.mark.parametrize("name", ["mcp-prefixed-chat", "anthropic-dicts", "responses-dicts", "agents-dicts", "mcp-prefixed-anthropic"])
def test_framework_adapters_read_the_other_formats(name: str, episodes, synth_db: Path) -> None:
    """The TRL/verl/inspect adapters' completion reader (``to_trajectory``) takes these formats too:
    before, Anthropic blocks and Responses items gave no step (an honest abstention scored NO_EVIDENCE)
    and ``mcp__ehr__run_sql`` calls were skipped as unknown tools."""
    from verifier.adapters.common import to_trajectory

    task, traj = _noise(episodes)
    got = to_trajectory(FORMATS[name][0](traj), task_id=task.task_id, trajectory_id="x")
    assert len(got.steps) == len(traj.steps)
    assert verify(got, task, VerifyConfig(db_path=str(synth_db))).success


def test_vendor_response_objects_are_read_whole(episodes, synth_db: Path) -> None:
    """A Responses API ``Response`` (its ``output``), a ``ChatCompletion`` (its first choice) and an Agents
    SDK ``RunResult``-shaped object (``new_items`` + ``final_output``) are logs too."""
    from openai.types.chat import ChatCompletion
    from openai.types.responses import Response

    task, traj = _noise(episodes)
    items = responses_openai_types(traj)
    resp = Response(id="resp_1", created_at=0, model="m", object="response", output=[i for i in items if not isinstance(i, dict)],
                    parallel_tool_calls=True, tool_choice="auto", tools=[])
    got = read_log(resp, task_id=task.task_id)
    assert detect_format(resp) == "responses" and [s.code for s in got.steps] == [s.code for s in traj.steps]
    assert got.final_response == traj.final_response
    step = traj.steps[0]
    completion = ChatCompletion(id="c", created=0, model="m", object="chat.completion", choices=[{
        "index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "run_sql", "arguments": _args(step)}}]}}])
    got = read_log([{"role": "user", "content": "Q"}, completion, {"role": "tool", "tool_call_id": "call_1", "content": step.output},
                    {"role": "assistant", "content": traj.final_response}], task_id=task.task_id)
    assert verify(got, task, VerifyConfig(db_path=str(synth_db))).success

    class RunResult:  # the attributes of agents.RunResult that read_log uses
        new_items = agents_dicts(traj)[:-1]
        final_output = traj.final_response

    got = read_log(RunResult(), task_id=task.task_id)
    assert detect_format(RunResult()) == "agents" and verify(got, task, VerifyConfig(db_path=str(synth_db))).success
