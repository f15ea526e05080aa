"""An agent driven by any OpenAI-compatible chat endpoint with tool calls.

The model sees the reset observation (instructions, schema, question) as the
user message and the environment's tools (``run_sql``, ``run_python``); each
tool call becomes one environment step and its observation goes back as the
tool result; an assistant message without tool calls is the final response.
The task's hidden reference is never read.

Configuration (arguments, else environment variables):
``base_url`` ($OPENAI_BASE_URL), ``model`` ($EHR_AGENT_MODEL, else
$OPENAI_MODEL), the key from the variable named by ``api_key_env``
(default $OPENAI_API_KEY; "EMPTY" when unset, as local servers accept).
``evidence_check=True`` appends ``EVIDENCE_CHECK_INSTRUCTION`` to the
shared instructions (the prompt-only baseline).
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..contract import InputError, Task, Trajectory
from ..env.actions import Action
from ..env.ehr_env import TOOLS
from ..env.instructions import EVIDENCE_CHECK_INSTRUCTION

SYSTEM_PROMPT = "You are a careful clinical data analyst. Use the tools to query the records, then answer."
_TOOL_KINDS = {"run_sql": ("sql", ("query", "sql", "code")), "run_python": ("python", ("code", "source", "query"))}
_SCHEMA_HEADER = "\n\n## Database schema\n"


class OpenAIAgent:
    """Chat-completions agent with tool calls.

    Args:
        base_url: endpoint (e.g. ``http://127.0.0.1:8000/v1``).
        model: model name.
        api_key_env: variable holding the key.
        evidence_check: append the evidence-check instruction.
        temperature: sampling temperature.
        max_tokens: completion cap per request (None: server default).
        timeout_s: per-request time limit.
        max_retries: client retries on transport errors.
        tasks: ignored (accepted so every agent factory has one signature).

    Raises:
        InputError: no base URL or no model configured.
    """

    name = "openai"

    def __init__(
        self,
        base_url: str | None = None,
        model: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        evidence_check: bool = False,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        timeout_s: float = 120.0,
        max_retries: int = 2,
        tasks: Any = None,
    ) -> None:
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL")
        self.model = model or os.environ.get("EHR_AGENT_MODEL") or os.environ.get("OPENAI_MODEL")
        if not self.base_url:
            raise InputError("base_url", self.base_url, "set --base-url or $OPENAI_BASE_URL")
        if not self.model:
            raise InputError("model", self.model, "set --model or $EHR_AGENT_MODEL")
        self.evidence_check = evidence_check
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._api_key = os.environ.get(api_key_env) or "EMPTY"
        self._timeout = timeout_s
        self._max_retries = max_retries
        self._client: Any = None
        self.messages: list[dict[str, Any]] = []
        self._pending: list[str] = []  # tool_call_id awaiting the environment's observation
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "requests": 0}

    def _chat(self) -> Any:
        if self._client is None:
            import httpx
            import openai

            self._client = openai.OpenAI(
                base_url=self.base_url, api_key=self._api_key, timeout=self._timeout, max_retries=self._max_retries,
                http_client=httpx.Client(trust_env=False, timeout=self._timeout),
            )
        return self._client

    def reset(self, task: Task, observation: str, info: dict[str, Any]) -> None:
        """Start a conversation from the reset observation (``task`` is not read)."""
        text = observation
        if self.evidence_check:
            head, sep, tail = observation.partition(_SCHEMA_HEADER)
            text = f"{head.rstrip()}\n{EVIDENCE_CHECK_INSTRUCTION.rstrip()}{sep}{tail}" if sep else f"{observation}\n{EVIDENCE_CHECK_INSTRUCTION}"
        self.messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": text}]
        self._pending = []
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0, "requests": 0}

    def act(self, observation: str) -> Action | dict[str, Any]:
        """Send the last observation as the pending tool result; return the model's next action."""
        if self._pending:
            self.messages.append({"role": "tool", "tool_call_id": self._pending.pop(0), "content": observation})
        kwargs: dict[str, Any] = {"model": self.model, "messages": self.messages, "tools": TOOLS, "temperature": self.temperature}
        if self.max_tokens is not None:
            kwargs["max_tokens"] = self.max_tokens
        resp = self._chat().chat.completions.create(**kwargs)
        self.usage["requests"] += 1
        if getattr(resp, "usage", None) is not None:
            self.usage["prompt_tokens"] += int(resp.usage.prompt_tokens or 0)
            self.usage["completion_tokens"] += int(resp.usage.completion_tokens or 0)
        msg = resp.choices[0].message
        calls = list(msg.tool_calls or [])
        if not calls:
            content = msg.content or ""
            self.messages.append({"role": "assistant", "content": content})
            return Action(kind="submit", text=content)
        self.messages.append({
            "role": "assistant", "content": msg.content or None,
            "tool_calls": [
                {"id": c.id, "type": "function", "function": {"name": c.function.name, "arguments": c.function.arguments or ""}}
                for c in calls
            ],
        })
        first, rest = calls[0], calls[1:]
        for extra in rest:  # one tool call at a time: answer the others without running them
            self.messages.append({
                "role": "tool", "tool_call_id": extra.id,
                "content": "Error: only one tool call is run at a time; this call was skipped. Call it again on its own.",
            })
        self._pending = [first.id]
        return _to_action(first.function.name, first.function.arguments)

    def finalize(self, trajectory: Trajectory) -> Trajectory:
        """Record the model, endpoint and token usage in the trajectory metadata."""
        meta = {**trajectory.metadata, "model": self.model, "base_url": self.base_url,
                "evidence_check": self.evidence_check, "usage": dict(self.usage)}
        return trajectory.model_copy(update={"metadata": meta})


def _to_action(name: str, arguments: str | None) -> dict[str, Any]:
    """Map a tool call to an action dict (an unknown tool becomes an invalid action the env reports)."""
    kind_keys = _TOOL_KINDS.get(name)
    if kind_keys is None:
        return {"kind": f"unknown tool {name!r}"}
    kind, keys = kind_keys
    try:
        args = json.loads(arguments) if arguments else {}
    except json.JSONDecodeError:
        return {"kind": kind, "code": arguments or ""}  # some models send the bare code
    if isinstance(args, str):
        return {"kind": kind, "code": args}
    code = next((args[k] for k in keys if isinstance(args, dict) and isinstance(args.get(k), str)), "")
    return {"kind": kind, "code": code}
