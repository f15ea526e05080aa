"""Agent actions: run SQL, run Python, or submit the final response.

An action is an ``Action`` model or a plain dict of the same shape, e.g.
``{"kind": "sql", "code": "SELECT ..."}``, ``{"kind": "python", "code": "..."}``,
``{"kind": "submit", "text": "<answer>..</answer><reasoning>..</reasoning>"}``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ..contract import InputError

ActionKind = Literal["sql", "python", "submit"]


class Action(BaseModel):
    """One agent action.

    Attributes:
        kind: ``sql`` | ``python`` | ``submit``.
        code: SQL text or Python source (``sql``/``python``).
        text: the final response (``submit``); ``code`` is accepted there too.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: ActionKind
    code: str | None = None
    text: str | None = None

    @property
    def content(self) -> str:
        """The action's payload: ``text`` for submit, ``code`` otherwise (either as fallback)."""
        first, second = (self.text, self.code) if self.kind == "submit" else (self.code, self.text)
        return first if first is not None else (second or "")


def sql(code: str) -> Action:
    """Shorthand for ``Action(kind="sql", code=code)``."""
    return Action(kind="sql", code=code)


def python(code: str) -> Action:
    """Shorthand for ``Action(kind="python", code=code)``."""
    return Action(kind="python", code=code)


def submit(text: str) -> Action:
    """Shorthand for ``Action(kind="submit", text=text)``."""
    return Action(kind="submit", text=text)


def parse_action(action: Any) -> Action:
    """Turn an ``Action`` or dict into an ``Action``.

    Dict aliases: ``query``/``sql`` for ``code``; ``answer``/``response`` for ``text``.

    Raises:
        InputError: not a dict/Action, unknown kind, missing or non-string payload.
    """
    if isinstance(action, Action):
        act = action
    elif isinstance(action, dict):
        data = dict(action)
        for alias in ("query", "sql"):
            if alias in data and "code" not in data:
                data["code"] = data.pop(alias)
        for alias in ("answer", "response"):
            if alias in data and "text" not in data:
                data["text"] = data.pop(alias)
        try:
            act = Action.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err.get("loc", ())) or "action"
            raise InputError(f"action.{loc}", err.get("input"), err.get("msg", "invalid")) from None
    else:
        raise InputError("action", action, "expected an Action or a dict like {'kind': 'sql', 'code': '...'}")
    if act.kind != "submit" and not act.content.strip():
        raise InputError("action.code", act.content, f"a {act.kind} action needs non-empty code")
    return act
