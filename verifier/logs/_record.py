"""What every reader shares: tool calls, their results and the final text -> a Trajectory.

A reader turns its format's items into three events, in log order: ``call`` (a tool call
with an id, a name and arguments), ``result`` (what a call returned, linked by id, or by
name / order when the format has no id) and ``text`` (assistant text outside a turn with
tool calls). ``LogBuilder.trajectory`` classifies the calls with ``ToolNames``: SQL and
Python calls become steps (1-based, in call order), a submit call's answer is a final
response, anything else is listed as *unread* with the reason. The final response is the
last assistant text or submitted answer.

Nothing in the log is an error here (the log holds model output): what cannot be read is
noted. ``Trajectory.metadata["log"]`` records ``format``, ``tool_calls``, ``steps_read``,
``unread`` (one note per item not read, at most ``MAX_NOTES``) and, when tool calls or
items were present but no step could be read, a ``warning``; ``verify`` then reports
``NO_STEPS_READ`` on Noise tasks instead of ``NO_EVIDENCE``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Mapping

from ..contract import Dialect, Step, Trajectory
from ._tools import ToolNames

#: Result texts read as a failed call (lower-cased prefixes), as ``from_chat_messages`` does.
ERROR_PREFIXES = ("error:", "error ", "traceback", "exception:")
#: The environment's observation framing, not output.
_FRAMING = re.compile(r"\A\[step \d+\][ \t]*\n")
#: Notes kept in ``metadata["log"]["unread"]``.
MAX_NOTES = 50


def as_plain(obj: Any) -> Any:
    """``obj`` as plain JSON-like data: pydantic models (openai, anthropic, inspect_ai types)
    through ``model_dump``, dataclasses through their fields, mappings and sequences
    element-wise; other values unchanged. Never raises."""
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    if hasattr(obj, "model_dump"):
        try:
            return as_plain(obj.model_dump())
        except Exception:  # noqa: BLE001 - a broken model is read as text
            return str(obj)
    if isinstance(obj, Mapping):
        return {str(k): as_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [as_plain(v) for v in obj]
    if hasattr(obj, "__dataclass_fields__"):
        return {k: as_plain(getattr(obj, k, None)) for k in obj.__dataclass_fields__}
    return obj


def content_text(content: Any) -> str:
    """Text of a message or result content: a string, or a list of parts/blocks whose
    ``text`` (``text``, ``input_text``, ``output_text`` parts; MCP text content) is joined;
    other parts (images, reasoning) are left out; a dict with ``text`` is its text."""
    content = as_plain(content)
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        if isinstance(content.get("text"), str):
            return content["text"]
        if "content" in content:
            return content_text(content["content"])
        return json.dumps(content, ensure_ascii=False, default=str)
    if isinstance(content, list):
        parts = []
        for p in content:
            if isinstance(p, str):
                parts.append(p)
            elif isinstance(p, Mapping) and isinstance(p.get("text"), str) and p.get("type", "text") in (
                    "text", "input_text", "output_text"):
                parts.append(p["text"])
        return "".join(parts)
    return str(content)


def parse_arguments(raw: Any) -> Any:
    """Call arguments as a dict when they are a JSON object (or a dict), else the raw text."""
    raw = as_plain(raw)
    if isinstance(raw, str):
        try:
            value = json.loads(raw) if raw.strip() else {}
        except ValueError:
            return raw  # some models send the bare code
        return value
    return raw


@dataclass
class _Call:
    id: str
    name: str
    args: Any
    where: str
    output: str | None = None
    error: str | None = None
    answered: bool = False


@dataclass
class LogBuilder:
    """Collects a log's events and builds the Trajectory (see the module docstring).

    Args:
        format: the log format's name (recorded in ``metadata["log"]``).
        tools: which tool names mean SQL, Python, submit.
    """

    format: str
    tools: ToolNames
    calls: list[_Call] = field(default_factory=list)
    finals: list[tuple[int, str]] = field(default_factory=list)  # (event position, text)
    unread: list[str] = field(default_factory=list)
    _by_id: dict[str, _Call] = field(default_factory=dict)
    _events: int = 0

    def note(self, text: str) -> None:
        """Record an item that was not read."""
        self.unread.append(text)

    def call(self, call_id: Any, name: Any, arguments: Any, where: str) -> None:
        """A tool call (``call_id`` may be empty: results are then paired by name and order)."""
        self._events += 1
        c = _Call(str(call_id or f"#{len(self.calls) + 1}"), str(name or ""), parse_arguments(arguments), where)
        self.calls.append(c)
        if call_id:
            self._by_id[str(call_id)] = c
        if self.tools.kind(c.name) == "submit":
            self.finals.append((self._events, self._answer(c.args)))

    def result(self, call_id: Any, content: Any, where: str, *, is_error: bool = False, name: Any = None) -> None:
        """What a call returned. Without an id, the earliest unanswered call (of that name, when
        given) is meant (TRL's tool messages carry only ``name``)."""
        c = self._by_id.get(str(call_id)) if call_id else None
        if c is None and not call_id:
            low = str(name).lower() if name else None
            c = next((x for x in self.calls if not x.answered and (low is None or x.name.lower() == low)), None)
        if c is None:
            self.note(f"{where}: a tool result that answers no earlier call ({call_id or name!r})")
            return
        text = _FRAMING.sub("", content_text(content), count=1)
        c.answered = True
        if is_error or text.strip().lower().startswith(ERROR_PREFIXES):
            c.error = text or "error"
        else:
            c.output = text

    def text(self, content: Any) -> None:
        """Assistant text outside a tool-calling turn (a candidate final response)."""
        self._events += 1
        text = content_text(content)
        if text.strip():
            self.finals.append((self._events, text))

    def _answer(self, args: Any) -> str:
        if isinstance(args, str):
            return args
        if isinstance(args, Mapping):
            for key in self.tools.answer_keys:
                if isinstance(args.get(key), str):
                    return args[key]
            strings = [v for v in args.values() if isinstance(v, str)]
            if len(strings) == 1:
                return strings[0]
        return json.dumps(args, ensure_ascii=False, default=str)

    def _code(self, c: _Call) -> str | None:
        if isinstance(c.args, str):
            return c.args if c.args.strip() else None
        if isinstance(c.args, Mapping):
            for key in self.tools.code_keys:
                if isinstance(c.args.get(key), str) and c.args[key].strip():
                    return c.args[key]
        return None

    def trajectory(self, *, trajectory_id: str, task_id: str, dialect: Dialect = "duckdb",
                   metadata: Mapping[str, Any] | None = None) -> Trajectory:
        """The Trajectory of the collected events, with ``metadata["log"]`` (module docstring)."""
        steps: list[Step] = []
        for c in self.calls:
            kind = self.tools.kind(c.name)
            if kind == "submit":
                continue
            if kind is None:
                self.note(f"{c.where}: tool {c.name!r} is not a configured SQL, Python or submit tool")
                continue
            code = self._code(c)
            if code is None:
                self.note(f"{c.where}: {kind} tool {c.name!r} call has no code under any of the keys {list(self.tools.code_keys)}")
                continue
            steps.append(Step(index=len(steps) + 1, kind=kind, code=code, output=c.output, error=c.error))
        final = self.finals[-1][1] if self.finals else ""
        log: dict[str, Any] = {"format": self.format, "tool_calls": len(self.calls), "steps_read": len(steps),
                               "unread": self.unread[:MAX_NOTES]}
        if len(self.unread) > MAX_NOTES:
            log["unread_more"] = len(self.unread) - MAX_NOTES
        if not steps and self.unread:
            log["warning"] = (f"no SQL or Python step could be read from this {self.format} log "
                              f"({len(self.calls)} tool call(s), {len(self.unread)} item(s) not read): "
                              "configure the tool names (verifier.logs.ToolNames) or the format")
        meta = dict(metadata or {})
        meta["log"] = log
        return Trajectory(trajectory_id=trajectory_id, task_id=task_id, steps=steps, final_response=final,
                          dialect=dialect, metadata=meta)
