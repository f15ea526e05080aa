"""Anthropic Messages API logs: ``tool_use`` and ``tool_result`` content blocks.

Shape read (Anthropic API reference, "Messages" and the "Tool use" guide; dicts or the
``anthropic`` SDK's pydantic objects such as ``Message``, ``TextBlock``, ``ToolUseBlock``):
a list of messages ``{"role": "user"|"assistant", "content": text | [blocks]}``. Assistant
blocks ``{"type": "text", "text"}`` and ``{"type": "tool_use", "id", "name", "input": {...}}``;
the next user message holds ``{"type": "tool_result", "tool_use_id", "content": text |
[{"type": "text", "text"}], "is_error": bool}``. Blocks of the MCP connector
(``mcp_tool_use`` with ``server_name``; ``mcp_tool_result``) and server tools
(``server_tool_use``) are read the same way. ``thinking``/``redacted_thinking`` blocks are
skipped. A lone ``Message`` object (an API response) is read as one assistant message.
The final response is the text of the last assistant message without tool calls.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ._record import LogBuilder, as_plain

_CALLS = ("tool_use", "mcp_tool_use", "server_tool_use")
_RESULTS = ("tool_result", "mcp_tool_result")
_SKIPPED = ("thinking", "redacted_thinking", "image", "document", "search_result")


def read_anthropic(messages: Sequence[Any], b: LogBuilder) -> None:
    """Feed Anthropic Messages (see the module docstring) to ``b``."""
    if not isinstance(messages, (list, tuple)):
        messages = [messages]
    for i, raw in enumerate(messages):
        where = f"messages[{i}]"
        msg = as_plain(raw)
        if not isinstance(msg, Mapping):
            b.note(f"{where}: not a message object")
            continue
        role, content = msg.get("role"), msg.get("content")
        if role not in ("user", "assistant"):
            if role != "system":
                b.note(f"{where}: role {role!r} is not an Anthropic message role")
            continue
        if isinstance(content, str):
            if role == "assistant":
                b.text(content)
            continue
        if not isinstance(content, list):
            b.note(f"{where}: content is neither text nor a list of blocks")
            continue
        texts, called = [], False
        for j, block in enumerate(content):
            bw = f"{where}.content[{j}]"
            if not isinstance(block, Mapping):
                b.note(f"{bw}: not a content block")
                continue
            kind = block.get("type")
            if kind == "text":
                texts.append(block.get("text") or "")
            elif kind in _CALLS:
                called = True
                b.call(block.get("id"), block.get("name"), block.get("input"), bw)
            elif kind in _RESULTS:
                b.result(block.get("tool_use_id"), block.get("content"), bw, is_error=bool(block.get("is_error")))
            elif kind not in _SKIPPED:
                b.note(f"{bw}: block type {kind!r} is not read")
        if role == "assistant" and not called and texts:
            b.text("".join(texts))
