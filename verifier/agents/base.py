"""The agent protocol the rollout loop drives.

An agent sees the observation text; reference agents (oracle and the
baselines) are privileged and also receive the ``Task`` at ``reset`` so they
can use the hidden reference; model-driven agents must ignore it.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ..contract import Task, Trajectory
from ..env.actions import Action


@runtime_checkable
class Agent(Protocol):
    """``reset`` at the start of an episode, then ``act`` until the episode ends.

    Attributes:
        name: registry name (recorded in ``Trajectory.metadata["agent"]``).
    """

    name: str

    def reset(self, task: Task, observation: str, info: dict[str, Any]) -> None:
        """Start an episode. ``task`` is for privileged reference agents only."""

    def act(self, observation: str) -> Action | dict[str, Any]:
        """Return the next action given the latest observation."""


class BaseAgent:
    """Convenience base: stores the task and keeps a queue of scripted actions.

    Subclasses implement ``plan(task)`` returning the actions to take before
    ``final(observations)``, which returns the final response text.
    """

    name = "base"

    def __init__(self) -> None:
        self.task: Task | None = None
        self._queue: list[Action] = []
        self.observations: list[str] = []

    def reset(self, task: Task, observation: str, info: dict[str, Any]) -> None:
        self.task = task
        self.observations = [observation]
        self._queue = list(self.plan(task))

    def plan(self, task: Task) -> list[Action]:
        """Tool actions to run, in order (default: none)."""
        return []

    def final(self, observations: list[str]) -> str:
        """Final response text once the planned actions are done."""
        raise NotImplementedError

    def act(self, observation: str) -> Action:
        if observation is not self.observations[-1]:
            self.observations.append(observation)
        if self._queue:
            nxt = self._queue.pop(0)
            return nxt
        assert self.task is not None
        return Action(kind="submit", text=self.final(self.observations))

    def finalize(self, trajectory: Trajectory) -> Trajectory:
        """Hook run on the finished trajectory before it is logged (default: unchanged)."""
        return trajectory
