"""Agents for the environment: reference agents and an OpenAI-compatible model agent.

``make_agent(name, tasks=..., **options)`` builds one by registry name
(``AGENTS``): ``oracle``, ``always-null``, ``answer-anyway``, ``wrong-scope``,
``fabricator`` (privileged, scripted; see ``reference_agents``) and
``openai`` (see ``openai_agent``).

Layer: agents and the roll-out loop sit above ``verifier.env`` and import it, ``verifier.sql``,
``verifier.database`` and ``verifier.contract``; scoring, adapters and the CLI sit above them.
"""

from __future__ import annotations

from typing import Any, Callable

from ..contract import InputError, Task
from .base import Agent, BaseAgent
from .format import format_answer, tagged_response
from .reference_agents import AlwaysNull, AnswerAnyway, Fabricator, Oracle, WrongScope


def _openai(**options: Any) -> Any:
    from .openai_agent import OpenAIAgent

    return OpenAIAgent(**options)


#: Registry: name -> factory(tasks=..., **options).
AGENTS: dict[str, Callable[..., Any]] = {
    "oracle": lambda tasks=None, **o: Oracle(**o),
    "always-null": lambda tasks=None, **o: AlwaysNull(**o),
    "answer-anyway": lambda tasks=None, **o: AnswerAnyway(tasks=tasks, **o),
    "wrong-scope": lambda tasks=None, **o: WrongScope(**o),
    "fabricator": lambda tasks=None, **o: Fabricator(**o),
    "openai": lambda tasks=None, **o: _openai(**o),
}

#: Reference agents and the reason code each must produce on every Noise task (None: must succeed).
EXPECTED_NOISE_REASON: dict[str, str | None] = {
    "oracle": None,
    "always-null": "NO_EVIDENCE",
    "answer-anyway": "ANSWERED_NOISE",
    "wrong-scope": "EVIDENCE_NOT_SENSITIVE",
    "fabricator": "EVIDENCE_FABRICATED",
}


def make_agent(name: str, *, tasks: list[Task] | None = None, **options: Any) -> Any:
    """Build the agent registered as ``name``.

    Args:
        name: a key of ``AGENTS``.
        tasks: all tasks of the run (some baselines look up Clean twins).
        options: agent-specific keyword options (e.g. ``model`` for ``openai``).

    Raises:
        InputError: unknown name, or options the agent does not accept.
    """
    factory = AGENTS.get(name)
    if factory is None:
        raise InputError("agent", name, f"unknown agent; choose one of {', '.join(sorted(AGENTS))}")
    try:
        return factory(tasks=tasks, **options)
    except TypeError as exc:
        raise InputError("agent options", options, f"not accepted by agent {name!r}: {exc}") from None


__all__ = [
    "AGENTS", "EXPECTED_NOISE_REASON", "Agent", "AlwaysNull", "AnswerAnyway", "BaseAgent", "Fabricator",
    "Oracle", "WrongScope", "format_answer", "make_agent", "tagged_response",
]
