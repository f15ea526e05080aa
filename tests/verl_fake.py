"""A minimal stand-in for the parts of verl the EHR agent loop and tools build on (not a test module).

verl cannot be installed here (it pulls torch and ~60 packages), so ``install()`` puts small
modules under verl's own import paths into ``sys.modules``, written from verl's source
(``verl/tools/base_tool.py``, ``verl/tools/schemas.py``, ``verl/tools/utils/tool_registry.py``,
``verl/experimental/agent_loop/agent_loop.py`` and ``tool_agent_loop.py``) with the same
signatures and the same control flow where ours depends on it:

* ``BaseTool(config, tool_schema)`` with ``create`` / ``execute`` / ``calc_reward`` / ``release``;
* ``initialize_tools_from_config(path)``: ``class_name`` resolved with ``get_tool_class`` (import
  the module, ``getattr`` the class), ``config`` and ``tool_schema`` passed to the constructor
  (verl reads the YAML with OmegaConf; PyYAML here);
* ``register(name)`` filling ``_agent_loop_registry`` with ``{"_target_": fqdn}``, and
  ``instantiate(entry, **kwargs)`` doing what ``hydra.utils.instantiate`` does with ``_target_``;
* ``ToolAgentLoop.run``: ``raw_prompt`` copied into ``AgentData.messages``, states PENDING ->
  GENERATING -> PROCESSING_TOOLS -> ... -> TERMINATED; every tool call runs
  ``create(create_kwargs=tools_kwargs[name]["create_kwargs"])``, ``execute(instance_id, args,
  agent_data=agent_data)`` and ``release(instance_id)`` (errors become an error text); tool
  messages carry no ``tool_call_id``; the output's ``extra_fields`` hold only ``turn_scores`` and
  ``tool_rewards``; a tool's text longer than ``multi_turn.max_tool_response_length`` characters
  (verl's default 256) is cut as verl cuts it (``tool_response_truncate_side``, default middle:
  ``...(truncated)...``), and ``multi_turn.max_assistant_turns`` ends the loop.

The model is scripted: ``ScriptedServer`` returns one token per turn, ``TextTokenizer`` decodes it
to the turn's text, and a ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` block is a
tool call (hermes format, verl's default parser).
"""

from __future__ import annotations

import importlib
import json
import re
import sys
import types
import uuid
from enum import Enum
from typing import Any

from pydantic import BaseModel


class ToolResponse(BaseModel):
    text: str | None = None
    image: list[Any] | None = None
    video: list[Any] | None = None


class _Function(BaseModel):
    name: str
    description: str = ""
    parameters: dict[str, Any] = {}


class OpenAIFunctionToolSchema(BaseModel):
    type: str
    function: _Function


class BaseTool:
    def __init__(self, config: dict, tool_schema: OpenAIFunctionToolSchema):
        self.config = config
        self.tool_schema = tool_schema or self.get_openai_tool_schema()
        assert self.tool_schema is not None, "Tool schema is not set!"
        self.name = self.tool_schema.function.name

    def get_openai_tool_schema(self):
        return self.tool_schema

    async def create(self, instance_id=None, **kwargs):
        return (str(uuid.uuid4()) if instance_id is None else instance_id), ToolResponse()

    async def execute(self, instance_id, parameters, **kwargs):
        return ToolResponse(text="Updated the tool state."), 0.0, {}

    async def calc_reward(self, instance_id, **kwargs):
        return 0.0

    async def release(self, instance_id, **kwargs):
        return None


def get_tool_class(cls_name: str):
    module_name, class_name = cls_name.rsplit(".", 1)
    return getattr(importlib.import_module(module_name), class_name)


def initialize_tools_from_config(tools_config_file: str) -> list:
    import yaml

    with open(tools_config_file, encoding="utf-8") as f:
        tools_config = yaml.safe_load(f)
    out = []
    for entry in tools_config["tools"]:
        assert entry["config"]["type"] == "native"
        schema = OpenAIFunctionToolSchema.model_validate(entry["tool_schema"]) if entry.get("tool_schema") else None
        out.append(get_tool_class(entry["class_name"])(config=entry["config"], tool_schema=schema))
    return out


class AgentLoopOutput(BaseModel):
    prompt_ids: list[int]
    response_ids: list[int]
    response_mask: list[int]
    reward_score: float | None = None
    num_turns: int = 0
    metrics: dict[str, Any] = {}
    extra_fields: dict[str, Any] = {}


_agent_loop_registry: dict[str, dict] = {}


def register(agent_name: str):
    def decorator(subclass):
        _agent_loop_registry[agent_name] = {"_target_": f"{subclass.__module__}.{subclass.__qualname__}"}
        return subclass

    return decorator


def instantiate(config: dict, **kwargs: Any):
    """``hydra.utils.instantiate`` for a ``{"_target_": "pkg.module.Class"}`` entry."""
    module_name, attr = config["_target_"].rsplit(".", 1)
    return getattr(importlib.import_module(module_name), attr)(**kwargs)


class AgentState(Enum):
    PENDING = "pending"
    GENERATING = "generating"
    PROCESSING_TOOLS = "processing_tools"
    TERMINATED = "terminated"


class FunctionCall(BaseModel):
    name: str
    arguments: str


class AgentData:
    def __init__(self, messages, request_id, tools_kwargs):
        self.messages = messages
        self.request_id = request_id
        self.tools_kwargs = tools_kwargs
        self.prompt_ids: list[int] = []
        self.response_ids: list[int] = []
        self.response_mask: list[int] = []
        self.tool_calls: list[FunctionCall] = []
        self.assistant_turns = 0
        self.user_turns = 0
        self.turn_scores: list = []
        self.tool_rewards: list = []
        self.extra_fields: dict[str, Any] = {}


_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)


class ToolAgentLoop:
    def __init__(self, trainer_config, server_manager, tokenizer, processor, **kwargs):
        self.config = trainer_config.config
        self.server_manager = server_manager
        self.tokenizer = tokenizer
        multi_turn = self.config.get("multi_turn", {})
        self.max_assistant_turns = multi_turn.get("max_assistant_turns", self.config.get("max_assistant_turns", 8))
        self.max_tool_response_length = multi_turn.get("max_tool_response_length", 256)
        self.tool_response_truncate_side = multi_turn.get("tool_response_truncate_side", "middle")
        tool_list = initialize_tools_from_config(self.config["tool_config_path"]) if self.config.get("tool_config_path") else []
        self.tools = {tool.name: tool for tool in tool_list}

    async def run(self, sampling_params, **kwargs):
        messages = list(kwargs["raw_prompt"])
        agent_data = AgentData(messages, uuid.uuid4().hex, kwargs.get("tools_kwargs", {}))
        state = AgentState.PENDING
        while state != AgentState.TERMINATED:
            if state == AgentState.PENDING:
                state = await self._handle_pending_state(agent_data, sampling_params)
            elif state == AgentState.GENERATING:
                state = await self._handle_generating_state(agent_data, sampling_params)
            else:
                state = await self._handle_processing_tools_state(agent_data)
        n = len(agent_data.response_mask)
        output = AgentLoopOutput(prompt_ids=agent_data.prompt_ids[: len(agent_data.prompt_ids) - n],
                                 response_ids=agent_data.prompt_ids[-n:] if n else [], response_mask=agent_data.response_mask,
                                 num_turns=agent_data.user_turns + agent_data.assistant_turns + 1, extra_fields={})
        output.extra_fields.update({"turn_scores": agent_data.turn_scores, "tool_rewards": agent_data.tool_rewards})
        return output

    async def _handle_pending_state(self, agent_data, sampling_params):
        agent_data.prompt_ids = [0]
        return AgentState.GENERATING

    async def _handle_generating_state(self, agent_data, sampling_params):
        ids = await self.server_manager.generate(agent_data.request_id, prompt_ids=agent_data.prompt_ids, sampling_params=sampling_params)
        agent_data.assistant_turns += 1
        agent_data.response_ids = ids
        agent_data.prompt_ids += ids
        agent_data.response_mask += [1] * len(ids)
        if agent_data.assistant_turns >= self.max_assistant_turns:
            return AgentState.TERMINATED
        text = self.tokenizer.decode(ids, skip_special_tokens=True)
        agent_data.tool_calls = []
        for block in _CALL.findall(text):
            call = json.loads(block)
            agent_data.tool_calls.append(FunctionCall(name=call["name"], arguments=json.dumps(call["arguments"])))
        return AgentState.PROCESSING_TOOLS if agent_data.tool_calls else AgentState.TERMINATED

    async def _handle_processing_tools_state(self, agent_data):
        for call in agent_data.tool_calls:
            response, reward, _ = await self._call_tool(call, agent_data.tools_kwargs, agent_data)
            agent_data.messages.append({"role": "tool", "content": response.text or ""})
            ids = self.tokenizer.encode(response.text or "")
            agent_data.prompt_ids += ids
            agent_data.response_mask += [0] * len(ids)
            if reward is not None:
                agent_data.tool_rewards.append(reward)
        agent_data.user_turns += 1
        return AgentState.GENERATING

    async def _call_tool(self, tool_call, tools_kwargs, agent_data):
        tool, instance_id = None, None
        try:
            tool = self.tools[tool_call.name]
            kwargs = tools_kwargs.get(tool_call.name, {})
            instance_id, _ = await tool.create(create_kwargs=kwargs.get("create_kwargs", {}))
            response, reward, extra = await tool.execute(instance_id, json.loads(tool_call.arguments), agent_data=agent_data)
        except Exception as e:  # noqa: BLE001 - as verl: the error becomes the tool's text
            return ToolResponse(text=f"Error when executing tool: {e}"), 0.0, {}
        finally:
            if tool and instance_id:
                await tool.release(instance_id)
        text, cap = response.text, self.max_tool_response_length
        if text and len(text) > cap:  # verl's ToolAgentLoop._call_tool
            if self.tool_response_truncate_side == "left":
                text = text[:cap] + "...(truncated)"
            elif self.tool_response_truncate_side == "right":
                text = "(truncated)..." + text[-cap:]
            else:
                text = text[: cap // 2] + "...(truncated)..." + text[-(cap // 2):]
        return ToolResponse(text=text), reward, extra


class TextTokenizer:
    """Token ids stand for whole texts: ``encode`` appends the text, ``decode`` joins them."""

    def __init__(self):
        self.texts: list[str] = [""]

    def encode(self, text: str) -> list[int]:
        self.texts.append(text)
        return [len(self.texts) - 1]

    def decode(self, ids, skip_special_tokens=True) -> str:
        return "".join(self.texts[i] for i in ids)


class ScriptedServer:
    """verl's ``AsyncLLMServerManager.generate`` playing a fixed list of turns (text per turn)."""

    def __init__(self, tokenizer: TextTokenizer, turns: list[str]):
        self.tokenizer, self.turns = tokenizer, list(turns)

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        if not self.turns:
            raise RuntimeError("the scripted model has no turn left")
        return self.tokenizer.encode(self.turns.pop(0))


def tool_call(name: str, **arguments: Any) -> str:
    """One hermes-format tool-call block."""
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


class _Wrap:
    def __init__(self, config):
        self.config = config


def install() -> dict[str, types.ModuleType]:
    """Put the stand-in modules into ``sys.modules`` (returns them; ``uninstall`` removes them)."""
    mods = {name: types.ModuleType(name) for name in (
        "verl", "verl.tools", "verl.tools.base_tool", "verl.tools.schemas", "verl.tools.utils",
        "verl.tools.utils.tool_registry", "verl.experimental", "verl.experimental.agent_loop",
        "verl.experimental.agent_loop.agent_loop", "verl.experimental.agent_loop.tool_agent_loop")}
    mods["verl.tools.base_tool"].BaseTool = BaseTool
    mods["verl.tools.schemas"].ToolResponse = ToolResponse
    mods["verl.tools.schemas"].OpenAIFunctionToolSchema = OpenAIFunctionToolSchema
    reg = mods["verl.tools.utils.tool_registry"]
    reg.get_tool_class, reg.initialize_tools_from_config = get_tool_class, initialize_tools_from_config
    loop = mods["verl.experimental.agent_loop.agent_loop"]
    loop.AgentLoopOutput, loop.register, loop._agent_loop_registry = AgentLoopOutput, register, _agent_loop_registry
    mods["verl.experimental.agent_loop.tool_agent_loop"].ToolAgentLoop = ToolAgentLoop
    sys.modules.update(mods)
    return mods


def uninstall(mods: dict[str, types.ModuleType]) -> None:
    for name in mods:
        sys.modules.pop(name, None)


def make_loop(entry: dict, tool_config_path: str, turns: list[str], multi_turn: dict | None = None):
    """Instantiate an agent loop from its registry/YAML entry as verl's worker does.

    ``multi_turn``: ``actor_rollout_ref.rollout.multi_turn`` settings (``max_tool_response_length``,
    ``max_assistant_turns``, ``tool_response_truncate_side``); verl's defaults when absent.
    """
    tok = TextTokenizer()
    config = {"tool_config_path": tool_config_path, "multi_turn": dict(multi_turn or {})}
    return instantiate(entry, trainer_config=_Wrap(config),
                       server_manager=ScriptedServer(tok, turns), tokenizer=tok, processor=None,
                       dataset_cls=None, dataset_config=_Wrap({})), tok
