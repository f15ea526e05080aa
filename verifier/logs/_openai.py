"""OpenAI log formats: Chat Completions (and TRL), the Responses API, Agents SDK run items.

Shapes read (OpenAI API reference and the SDKs' types, ``openai`` 1.x-3.x; dicts or the
SDK's pydantic objects):

* **Chat Completions** ("Create chat completion", function calling guide): messages with
  ``role``; assistant ``tool_calls`` ``[{"id", "type": "function", "function": {"name",
  "arguments": JSON text}}]``; ``{"role": "tool", "tool_call_id", "content"}`` results;
  the legacy ``function_call`` / ``{"role": "function", "name"}`` pair; ``content`` as text
  or parts. A ``ChatCompletion`` object is read as its first choice's message.
  **TRL** conversational datasets use the same shape with ``arguments`` as a dict and tool
  messages carrying ``name`` and no ``tool_call_id`` (TRL docs, "Dataset formats: Tool
  calling"): such results answer the earliest unanswered call of that name.
* **Responses API** ("Conversation state", "Function calling"): a list of items, or a
  ``Response`` object's ``output``: ``{"type": "function_call", "call_id", "name",
  "arguments"}``, ``{"type": "function_call_output", "call_id", "output"}``,
  ``{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text"}]}``,
  ``{"type": "mcp_call", "id", "name", "server_label", "arguments", "output", "error"}``
  (remote MCP tools), ``custom_tool_call``/``custom_tool_call_output`` (``input`` text);
  input messages (``role`` user/system/developer), ``reasoning`` and other items are skipped.
* **OpenAI Agents SDK** ("Results": ``RunResult.new_items``; ``RunItem`` types): items with
  ``type`` ``message_output_item``, ``tool_call_item``, ``tool_call_output_item`` and
  ``raw_item`` holding the Responses item above (a ``tool_call_output_item``'s ``raw_item`` is
  a ``function_call_output`` dict); ``reasoning_item``, ``handoff_*`` and MCP listing items
  are skipped. A ``RunResult`` is read as its ``new_items``, and its ``final_output`` (text)
  is the final response.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ._record import LogBuilder, as_plain, content_text

_SKIPPED_ROLES = ("system", "user", "developer")


# ---------------------------------------------------------------- chat completions / TRL
def read_chat(messages: Sequence[Any], b: LogBuilder) -> None:
    """Feed Chat Completions / TRL messages to ``b`` (see the module docstring)."""
    for i, raw in enumerate(messages):
        where = f"messages[{i}]"
        msg = as_plain(raw)
        if isinstance(msg, Mapping) and isinstance(msg.get("choices"), list):  # a ChatCompletion
            choices = msg["choices"]
            msg = as_plain(choices[0].get("message")) if choices and isinstance(choices[0], Mapping) else None
            where += ".choices[0].message"
        if not isinstance(msg, Mapping):
            b.note(f"{where}: not a message object")
            continue
        role = msg.get("role")
        if role in _SKIPPED_ROLES:
            continue
        if role == "assistant":
            calls = msg.get("tool_calls") or []
            if msg.get("function_call"):
                calls = [{"id": None, "function": msg["function_call"]}]
            if not isinstance(calls, list):
                calls = [calls]
            for j, call in enumerate(calls):
                cw = f"{where}.tool_calls[{j}]"
                fn = call.get("function") if isinstance(call, Mapping) else None
                if isinstance(fn, str):  # inspect_ai's shape: function is the name
                    b.call(call.get("id"), fn, call.get("arguments"), cw)
                elif isinstance(fn, Mapping):
                    b.call(call.get("id"), fn.get("name"), fn.get("arguments"), cw)
                else:
                    b.note(f"{cw}: a tool call without a function name")
            if not calls:
                b.text(msg.get("content"))
        elif role in ("tool", "function"):
            error = msg.get("error")  # inspect_ai: ToolCallError {"type", "message"}
            name = msg.get("name") or msg.get("function")
            if error:
                text = error.get("message") if isinstance(error, Mapping) else str(error)
                b.result(msg.get("tool_call_id"), f"Error: {text}", where, name=name, is_error=True)
            else:
                b.result(msg.get("tool_call_id"), msg.get("content"), where, name=name)
        else:
            b.note(f"{where}: role {role!r} is not a chat role")


# ---------------------------------------------------------------- responses API
RESPONSES_TYPES = frozenset({
    "function_call", "function_call_output", "message", "reasoning", "mcp_call", "mcp_list_tools",
    "mcp_approval_request", "mcp_approval_response", "custom_tool_call", "custom_tool_call_output",
    "web_search_call", "file_search_call", "computer_call", "computer_call_output", "code_interpreter_call",
    "image_generation_call", "local_shell_call", "local_shell_call_output", "item_reference",
})
_IGNORED_RESPONSES = frozenset({"reasoning", "mcp_list_tools", "mcp_approval_request", "mcp_approval_response",
                                "item_reference"})


def read_response_item(item: Any, where: str, b: LogBuilder) -> None:
    """Feed one Responses API item (dict or SDK object) to ``b``."""
    it = as_plain(item)
    if not isinstance(it, Mapping):
        b.note(f"{where}: not an item object")
        return
    kind = it.get("type")
    if kind is None and it.get("role"):
        kind = "message"  # EasyInputMessage: {"role", "content"}
    if kind == "message":
        if it.get("role") == "assistant":
            b.text(it.get("content"))
        return
    if kind == "function_call":
        b.call(it.get("call_id") or it.get("id"), it.get("name"), it.get("arguments"), where)
    elif kind == "custom_tool_call":
        b.call(it.get("call_id") or it.get("id"), it.get("name"), it.get("input"), where)
    elif kind in ("function_call_output", "custom_tool_call_output"):
        b.result(it.get("call_id"), it.get("output"), where)
    elif kind == "mcp_call":
        cid = it.get("id") or it.get("call_id") or f"mcp:{where}"
        b.call(cid, it.get("name"), it.get("arguments"), where)
        if it.get("error"):
            b.result(cid, f"Error: {content_text(it['error'])}", where, is_error=True)
        elif it.get("output") is not None:
            b.result(cid, it.get("output"), where)
    elif kind in _IGNORED_RESPONSES:
        return
    else:
        b.note(f"{where}: item type {kind!r} is not read (built-in tools are not SQL/Python steps)")


def read_responses(items: Any, b: LogBuilder) -> None:
    """Feed a Responses API item list, or a ``Response`` object (its ``output``), to ``b``."""
    plain = as_plain(items)
    if isinstance(plain, Mapping) and isinstance(plain.get("output"), list):
        plain = plain["output"]
    if not isinstance(plain, list):
        b.note("log: not a list of Responses API items")
        return
    for i, it in enumerate(plain):
        read_response_item(it, f"items[{i}]", b)


# ---------------------------------------------------------------- agents SDK
AGENTS_TYPES = frozenset({
    "message_output_item", "tool_call_item", "tool_call_output_item", "reasoning_item", "handoff_call_item",
    "handoff_output_item", "mcp_list_tools_item", "mcp_approval_request_item", "mcp_approval_response_item",
    "tool_approval_item",
})


def _raw_item(item: Any) -> Any:
    if isinstance(item, Mapping):
        return item.get("raw_item")
    return getattr(item, "raw_item", None)


def _item_type(item: Any) -> Any:
    return item.get("type") if isinstance(item, Mapping) else getattr(item, "type", None)


def read_agents(run: Any, b: LogBuilder) -> None:
    """Feed Agents SDK run items (or a ``RunResult``: its ``new_items`` and ``final_output``) to ``b``."""
    final = None
    items = run
    if not isinstance(run, (list, tuple)) and hasattr(run, "new_items"):
        items, final = list(run.new_items), getattr(run, "final_output", None)
    elif isinstance(run, Mapping) and "new_items" in run:
        items, final = run.get("new_items") or [], run.get("final_output")
    if not isinstance(items, (list, tuple)):
        b.note("log: not a list of Agents SDK run items")
        return
    for i, item in enumerate(items):
        where = f"items[{i}]"
        kind = _item_type(item)
        raw = _raw_item(item)
        if kind in ("message_output_item", "tool_call_item", "tool_call_output_item") and raw is not None:
            read_response_item(raw, f"{where}.raw_item", b)
        elif kind in AGENTS_TYPES:
            continue
        else:
            b.note(f"{where}: run item type {kind!r} is not read")
    if isinstance(final, str) and final.strip():
        b.text(final)
