"""Which tool names mean SQL, Python or submit, and where a call keeps its code.

Tool names differ between harnesses (``run_sql``, ``execute_sql``, ``query``...) and MCP
clients prefix them with the server's name. ``ToolNames`` is the configuration: three
sets of names (lower case) and the argument keys that hold the code or the answer.

MCP prefixes removed before the lookup (``ToolNames.base_name``):

* ``mcp__<server>__<tool>``: Claude Code and the Claude Agent SDK ("MCP tools follow the
  naming pattern mcp__<serverName>__<toolName>", Claude Code docs, "Connect Claude Code to
  tools via MCP");
* ``<server>__<tool>``, ``<server>.<tool>``, ``<server>/<tool>``, ``<server>:<tool>``: the
  separators other MCP clients use to keep tools of several servers apart (only when the
  whole name is not itself a configured tool name).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from ..contract import InputError

ToolKind = Literal["sql", "python", "submit"]

#: Tool names read as SQL calls by default (lower case).
DEFAULT_SQL = frozenset({"sql", "run_sql", "execute_sql", "query", "sql_query", "execute_query", "run_query",
                         "query_database", "sql_db_query", "read_query", "db_query"})
#: Tool names read as Python calls by default.
DEFAULT_PYTHON = frozenset({"python", "run_python", "execute_python", "python_exec", "code_interpreter",
                            "execute_code", "run_code", "ipython"})
#: Tool names whose call carries the final answer (inspect_ai's ``basic_agent``/``react`` default).
DEFAULT_SUBMIT = frozenset({"submit", "final_answer", "submit_answer"})
#: Argument keys that hold the code of a SQL/Python call, in order of preference.
DEFAULT_CODE_KEYS = ("query", "sql", "code", "source", "input", "statement", "script")
#: Argument keys that hold a submitted answer, in order of preference.
DEFAULT_ANSWER_KEYS = ("answer", "final_answer", "response", "text", "output", "result")

_MCP = re.compile(r"\Amcp__(?:.+?)__(.+)\Z")
_SEPARATED = re.compile(r"\A.+?(?:__|[./:])([^./:]+)\Z")


def _names(value: object, where: str) -> frozenset[str]:
    if isinstance(value, str):
        value = [value]
    try:
        items = list(value)  # type: ignore[call-overload]
    except TypeError:
        raise InputError(where, value, "expected a tool name or a collection of tool names") from None
    for v in items:
        if not isinstance(v, str) or not v.strip():
            raise InputError(where, v, "expected a non-empty tool name")
    return frozenset(v.strip().lower() for v in items)


@dataclass(frozen=True)
class ToolNames:
    """Which tool names mean SQL, Python or submit (lower-cased, exact after the MCP prefix).

    Attributes:
        sql, python, submit: tool names (any case; stored lower-cased).
        code_keys: argument keys holding a SQL/Python call's code, in order.
        answer_keys: argument keys holding a submit call's answer, in order.

    Raises:
        InputError: a name is empty or not text, or one name is in two sets.
    """

    sql: frozenset[str] = DEFAULT_SQL
    python: frozenset[str] = DEFAULT_PYTHON
    submit: frozenset[str] = DEFAULT_SUBMIT
    code_keys: tuple[str, ...] = DEFAULT_CODE_KEYS
    answer_keys: tuple[str, ...] = DEFAULT_ANSWER_KEYS
    _all: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("sql", "python", "submit"):
            object.__setattr__(self, name, _names(getattr(self, name), f"ToolNames.{name}"))
        for a, b in (("sql", "python"), ("sql", "submit"), ("python", "submit")):
            both = getattr(self, a) & getattr(self, b)
            if both:
                raise InputError(f"ToolNames.{b}", sorted(both), f"also named in ToolNames.{a}: a tool has one meaning")
        object.__setattr__(self, "_all", self.sql | self.python | self.submit)

    def base_name(self, name: str) -> str:
        """``name`` lower-cased, without an MCP server prefix (see the module docstring)."""
        low = str(name or "").strip().lower()
        if low in self._all:
            return low
        # the longest configured suffix after a separator (server names may hold "__" too)
        for sep in ("__", ".", "/", ":"):
            parts = low.split(sep)
            for i in range(1, len(parts)):
                tail = sep.join(parts[i:])
                if tail in self._all:
                    return tail
        m = _MCP.match(low) or _SEPARATED.match(low)
        return m.group(1) if m else low

    def kind(self, name: str) -> ToolKind | None:
        """``"sql"``, ``"python"``, ``"submit"`` or ``None`` (not a configured tool) for a tool name."""
        base = self.base_name(name)
        if base in self.sql:
            return "sql"
        if base in self.python:
            return "python"
        if base in self.submit:
            return "submit"
        return None
