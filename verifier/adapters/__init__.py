"""Thin wrappers that let training and evaluation frameworks call ``verify``.

Each adapter is imported on demand and never imports its framework at module
import time (the frameworks are not dependencies of ehr-verifier):

* ``verifier.adapters.trl_reward.make_reward_func`` (and ``make_async_reward_func``) -> a TRL
  ``GRPOTrainer`` reward function ``reward_func(prompts, completions, **kwargs) -> list[float]``
  whose scoring pool lives across steps and which logs reason codes through
  ``log_extra`` / ``log_metric``;
* ``verifier.adapters.trl_env`` -> ``environment_factory`` (``EHRToolEnv``: tools ``run_sql``,
  ``run_python``, ``submit``) and ``env_reward_func``, the reward read from the environments;
* ``verifier.adapters.trl_data`` -> ``to_grpo_dataset`` / ``to_hf_dataset`` /
  ``from_hf_dataset``: tasks, trajectories and verdicts as ``datasets`` that keep them whole;
* ``verifier.adapters.verl_score.compute_score`` / ``compute_score_async`` /
  ``compute_score_batch`` -> verl custom reward functions returning ``{"score": ..., verdict
  fields}`` (``custom_reward_function.path: pkg://verifier.adapters.verl_score``);
  ``verifier.adapters.verl_agent_loop.EHRAgentLoop`` (agent loop ``ehr_agent``) and
  ``verifier.adapters.verl_tools`` (``run_sql`` / ``run_python`` BaseTools) -> verl's multi-turn
  rollout keeping the ``EHREnv`` episode for ``compute_score``; ``verifier.adapters.verl_data.
  to_verl_parquet`` -> the rows verl's ``RLHFDataset`` reads;
* ``verifier.adapters.verifiers_env.load_environment`` -> a prime-intellect ``verifiers``
  ``vf.Env`` (toolset ``run_sql`` / ``run_python`` on ``EHREnv``, reward ``verify``);
* ``verifier.adapters.inspect_scorer.ehr_scorer`` -> an inspect_ai ``Scorer``;
  ``verifier.adapters.inspect_task.ehr_verifier`` -> an inspect_ai ``@task`` with ``@tool``
  ``run_sql`` / ``run_python`` backed by ``EHREnv`` episodes;
* ``verifier.adapters.mcp_server`` -> ``ehr-verifier serve-tools``: an MCP tool server (official
  ``mcp`` package) playing one ``EHREnv`` episode per client connection.

``verifier.adapters.common`` holds what they share: finding the task of a
sample and turning a framework's completion into a ``Trajectory``.

Layer: adapters sit above ``verifier.scoring`` and ``verifier.verify`` and import them and
``verifier.contract``; only the CLI and the demo sit above.
"""
