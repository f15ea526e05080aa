"""The agent environment (ARCHITECTURE.md section 6).

``EHREnv`` (Gymnasium-style ``reset``/``step``), its ``Action``s, the
confined Python worker (``PythonSandbox``), the environment checker, and the
resumable trajectory log used by ``rollout``. ``verifier.env.gym_env.EHRGymEnv`` wraps
``EHREnv`` as a ``gymnasium.Env`` (registered as ``EHRVerifier-v0``); it is imported on
demand because gymnasium is optional (extra ``.[gym]``).

Layer: the environment owns episodes (observations, steps, the Python worker); it imports
``verifier.verify`` (the reward) and everything below it, never agents or scoring.
"""

from __future__ import annotations

from .actions import Action, parse_action
from .checker import Env, EnvCheckError, check_env, hidden_leaks
from .ehr_env import TOOLS, EHREnv, EnvConfig, prompt_schema
from .instructions import EVIDENCE_CHECK_INSTRUCTION, SHARED_INSTRUCTIONS
from ..contract import SandboxUnavailable
from ..pysandbox import PythonLimits, PythonResult, PythonSandbox

__all__ = [
    "SandboxUnavailable",
    "Action", "EHREnv", "EVIDENCE_CHECK_INSTRUCTION", "Env", "EnvCheckError", "EnvConfig", "PythonLimits",
    "PythonResult", "PythonSandbox", "SHARED_INSTRUCTIONS", "TOOLS", "check_env", "hidden_leaks", "parse_action", "prompt_schema",
]
