"""A verl agent loop that keeps the ``EHREnv`` episode, so ``compute_score`` scores its real tool evidence.

verl's default multi-turn rollout (``verl.experimental.agent_loop``) instantiates one agent loop per
sample from ``_agent_loop_registry`` (filled by ``@register(name)`` or by the YAML at
``actor_rollout_ref.rollout.agent.agent_loop_config_path``: ``- name: ...`` / ``_target_: ...``),
picked by the row's ``agent_name`` column. The stock ``ToolAgentLoop`` returns only token ids and
``turn_scores`` / ``tool_rewards``: what the tools returned never reaches the reward function, so a
Noise abstention would score ``NO_EVIDENCE``. :data:`EHRAgentLoop` (registered as
:data:`AGENT_NAME`) is that loop with the tools of ``verifier.adapters.verl_tools``; when the
rollout ends it closes the episode and puts its Trajectory (steps as ``EHREnv`` recorded them, the
model's last text as the final response) in ``AgentLoopOutput.extra_fields["ehr_episode"]``.
verl's reward loop merges a sample's ``extra_fields`` into ``extra_info``, and
``verifier.adapters.verl_score.compute_score`` scores ``extra_info["ehr_episode"]`` when present.

verl config (see the README, "verl")::

    actor_rollout_ref.rollout.multi_turn.enable: true
    actor_rollout_ref.rollout.multi_turn.tool_config_path: ehr_tools.yaml   # verl_tools.tool_config_yaml(db)
    actor_rollout_ref.rollout.agent.agent_loop_config_path: ehr_agent_loop.yaml   # agent_loop_yaml()
    custom_reward_function: {path: pkg://verifier.adapters.verl_score, name: compute_score_async}
    data.train_files: tasks.parquet    # verl_data.to_verl_parquet(tasks, path, db=...): agent_name ehr_agent

The class is built on verl's ``ToolAgentLoop`` at first access (module ``__getattr__``), so this
module imports without verl; without verl the access raises ``ImportError`` naming the extra.
"""

from __future__ import annotations

from typing import Any

from .common import _last_assistant_text
from .verl_tools import finish_episode, rollout_task

#: The name the loop is registered under; the dataset rows' ``agent_name``.
AGENT_NAME = "ehr_agent"
_MISSING = "verifier.adapters.verl_agent_loop.EHRAgentLoop needs verl: pip install 'ehr-verifier[verl]' ({exc})"


def agent_loop_yaml(name: str = AGENT_NAME) -> str:
    """The YAML verl reads at ``actor_rollout_ref.rollout.agent.agent_loop_config_path``.

    Args:
        name: the agent name the rows use (default :data:`AGENT_NAME`).

    Returns:
        YAML text: one entry ``{name, _target_: verifier.adapters.verl_agent_loop.EHRAgentLoop}``.
    """
    import yaml

    return yaml.safe_dump([{"name": name, "_target_": f"{__name__}.EHRAgentLoop"}], sort_keys=False)


def episode_output(agent_data: Any, final_text: str, tools_kwargs: Any, tasks: Any = None) -> dict[str, Any]:
    """The ``extra_fields`` an EHR rollout adds to verl's ``AgentLoopOutput``.

    Args:
        agent_data: verl's ``AgentData`` of the rollout (``extra_fields``, ``request_id``), or None
            when the loop ended before its first state.
        final_text: the model's last generated text (its Answer and Reasoning).
        tools_kwargs: the row's ``tools_kwargs`` (the task, for a rollout that called no tool).
        tasks: ``{task_id: Task}`` or tasks JSONL path for ``task_id`` rows (a tool's ``config.tasks``).

    Returns:
        ``{"ehr_episode": Trajectory JSON dict}``.

    Raises:
        InputError: the rollout called no tool and ``tools_kwargs`` names no task.
    """
    extra = getattr(agent_data, "extra_fields", None)
    extra = extra if isinstance(extra, dict) else {}
    task = None if extra.get("ehr_env") is not None else rollout_task(tools_kwargs, tasks)
    rid = str(getattr(agent_data, "request_id", "") or "")
    return {"ehr_episode": finish_episode(extra, final_text, task, trajectory_id=rid)}


def _build() -> type:
    try:
        from verl.experimental.agent_loop.agent_loop import register
        from verl.experimental.agent_loop.tool_agent_loop import ToolAgentLoop
    except ImportError as exc:
        raise ImportError(_MISSING.format(exc=exc)) from exc

    class EHRAgentLoop(ToolAgentLoop):
        """verl's ``ToolAgentLoop`` whose output keeps the ``EHREnv`` episode (``extra_fields["ehr_episode"]``).

        Same constructor and ``run(sampling_params, **kwargs) -> AgentLoopOutput`` as verl's loop;
        ``kwargs`` are the dataset row's fields (``raw_prompt``, ``tools_kwargs``, ...).
        """

        async def _handle_pending_state(self, agent_data: Any, sampling_params: dict[str, Any]) -> Any:
            self._ehr_agent_data = agent_data  # one loop instance per sample: the rollout's AgentData
            return await super()._handle_pending_state(agent_data, sampling_params)

        async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> Any:
            """Run verl's tool loop, then close the episode and attach its Trajectory.

            Returns:
                verl's ``AgentLoopOutput`` with ``extra_fields["ehr_episode"]`` added.
            """
            self._ehr_agent_data = None
            try:
                output = await super().run(sampling_params, **kwargs)
                data = self._ehr_agent_data
                ids = list(getattr(data, "response_ids", None) or [])
                text = self.tokenizer.decode(ids, skip_special_tokens=True) if ids else _last_assistant_text(
                    getattr(data, "messages", None) or [])
                tasks = next((t.config.get("tasks") for t in getattr(self, "tools", {}).values()
                              if isinstance(getattr(t, "config", None), dict) and t.config.get("tasks")), None)
                output.extra_fields.update(episode_output(data, text, kwargs.get("tools_kwargs"), tasks))
                return output
            finally:
                env = (getattr(self._ehr_agent_data, "extra_fields", None) or {}).pop("ehr_env", None)
                if env is not None:  # the rollout failed before the episode was recorded
                    env.close()

    EHRAgentLoop.__module__ = __name__
    EHRAgentLoop.__qualname__ = "EHRAgentLoop"
    register(AGENT_NAME)(EHRAgentLoop)
    return EHRAgentLoop


def __getattr__(name: str) -> Any:
    """``EHRAgentLoop``, built on verl's ``ToolAgentLoop`` and registered at first access (PEP 562).

    Raises:
        ImportError: verl is not installed (names the ``verl`` extra).
        AttributeError: any other name.
    """
    if name == "EHRAgentLoop":
        cls = _build()
        globals()["EHRAgentLoop"] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
