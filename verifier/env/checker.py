"""A tiny Env protocol and an environment checker (after Gymnasium's ``check_env``).

``check_env`` runs one short episode and asserts the API shapes, the
end-of-episode behaviour and that nothing hidden in the task reaches the
agent (``hidden_leaks``).
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol, runtime_checkable

from ..contract import Task, Verdict


@runtime_checkable
class Env(Protocol):
    """What an environment offers: ``reset``, ``step``, ``close``."""

    def reset(self, task: Task | None = None, **kwargs: Any) -> tuple[Any, dict[str, Any]]: ...

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]: ...

    def close(self) -> None: ...


class EnvCheckError(AssertionError):
    """An environment broke the protocol; the message says how."""


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def hidden_leaks(text: str, task: Task) -> list[str]:
    """Which hidden parts of ``task`` appear in ``text`` (an observation the agent sees).

    Checked, after whitespace/case normalisation, with the question itself
    removed first (it is meant to be seen): the task and pair ids, the
    condition label and noise type as labels (``condition``, ``noise_type``,
    the words "clean"/"noise" as whole words), the reference SQL, the unmet
    requirement statement, and reference/witness JSON fragments.

    Returns:
        Names of the leaked parts (empty when none leaked).
    """
    body = _norm(text).replace(_norm(task.question), " ")
    found: list[str] = []
    ref = task.reference
    checks = {
        "task_id": task.task_id,
        "pair_id": task.pair_id,
        "reference.sql": ref.sql,
        "reference.answer": ref.answer.model_dump_json() if ref.answer is not None else "",
        "unmet_requirement.statement": ref.unmet_requirement.statement if ref.unmet_requirement else "",
        "witness": json.dumps([w.model_dump(mode="json") for w in ref.witness], sort_keys=True) if ref.witness else "",
    }
    for name, value in checks.items():
        if value and len(value) >= 4 and _norm(value) in body:
            found.append(name)
    for word in ("clean", "noise", "noise_type", "unmet_requirement", "witness", "pair_id", "condition"):
        if re.search(rf"\b{word}\b", body):
            found.append(f"label:{word}")
    return found


def check_env(env: Env, task: Task, *, probe_sql: str = "SELECT 1 AS one") -> None:
    """Check an environment against the protocol with one short episode.

    Runs ``reset(task)``, one SQL step, an invalid action, and a submission,
    and asserts: observation types (str) and info dicts; the 5-tuple shape and
    types; reward 0 before the end; submission terminates with a float reward
    in [0, 1] and a ``Verdict`` in ``info["verdict"]``; stepping after the end
    raises; no hidden task field in any observation or in the reset info.

    Raises:
        EnvCheckError: on the first violation, naming it.
    """

    def need(cond: bool, msg: str) -> None:
        if not cond:
            raise EnvCheckError(msg)

    out = env.reset(task)
    need(isinstance(out, tuple) and len(out) == 2, "reset must return (observation, info)")
    obs, info = out
    need(isinstance(obs, str) and task.question in obs, "reset observation must be text containing the question")
    need(isinstance(info, dict), "reset info must be a dict")
    seen = [obs, json.dumps(info, default=str)]
    for action in ({"kind": "sql", "code": probe_sql}, {"kind": "bogus"}):
        res = env.step(action)
        need(isinstance(res, tuple) and len(res) == 5, "step must return (observation, reward, terminated, truncated, info)")
        o, r, term, trunc, inf = res
        need(isinstance(o, str), "observation must be text")
        need(isinstance(r, float) and r == 0.0, "reward before submission must be 0.0")
        need(isinstance(term, bool) and isinstance(trunc, bool) and isinstance(inf, dict), "terminated/truncated must be bool, info a dict")
        need(not term, "a tool call must not terminate the episode")
        seen.append(o)
        if trunc:
            break
    else:
        o, r, term, trunc, inf = env.step({"kind": "submit", "text": "<answer>NULL</answer><reasoning>check</reasoning>"})
        need(term and not trunc, "a submission must terminate the episode")
        need(isinstance(r, float) and 0.0 <= r <= 1.0, "reward must be a float in [0, 1]")
        need(isinstance(inf.get("verdict"), Verdict), "info['verdict'] must hold the Verdict at the end")
        need(r == inf["verdict"].score, "reward must equal the verdict's score")
        seen.append(o)
    try:
        env.step({"kind": "sql", "code": probe_sql})
    except Exception:  # noqa: BLE001 - any error is the expected refusal
        pass
    else:
        raise EnvCheckError("step after the end of an episode must raise")
    for text in seen:
        leaks = hidden_leaks(text, task)
        need(not leaks, f"hidden task fields visible to the agent: {leaks}")
