"""``EHRGymEnv``: ``EHREnv`` as a real ``gymnasium.Env``, registered as ``EHRVerifier-v0``.

Gymnasium 1.x contract (gymnasium documentation, "Env" and "Make your own custom
environment"): ``observation_space`` and ``action_space`` are ``gymnasium.spaces``;
``reset(seed=..., options=...)`` seeds ``self.np_random`` through ``super().reset`` and
returns ``(observation, info)``; ``step`` returns the 5-tuple. Here:

* **observation**: the text the agent sees (instructions, schema and question at reset; a
  tool's output after a step), in ``Text(max_length=EHRGymEnv.max_text, charset=CHARSET)``
  (``BMPText``: a ``Text`` whose repr summarises the alphabet instead of printing it).
  ``CHARSET`` is every Unicode code point of the Basic Multilingual Plane except the
  surrogates; characters outside it become U+FFFD, and text past ``max_text`` characters
  is cut with a note saying so, so every observation lies in the space.
* **action**: ``Dict(kind=Discrete(3), content=Text(...))`` with kind 0 = SQL, 1 = Python,
  2 = submit (the final response). The plain dicts ``EHREnv`` takes (``{"kind": "sql",
  "code": ...}``) are accepted too.
* **reset**: the task is ``options["task"]`` (a ``Task`` or task_id) if given, else one drawn
  with ``self.np_random`` from the env's tasks (optionally only those whose ``condition`` /
  ``split`` / ``noise_type`` equal ``options`` values): the same seed draws the same task.
  ``info`` holds ``task_index`` (position in ``env.tasks``), ``max_steps`` and the tool
  descriptions, never the task id (task ids end in ``-clean`` / ``-noise``) nor any other label.
* **reward**: 0 per tool call; the verdict's score when the episode ends (``info["verdict"]``).
* **vector envs**: ``gym.make_vec(ENV_ID, n, vectorization_mode="sync"|"async", ...)`` return
  the real observations in every mode. Gymnasium's shared memory for ``Text`` (the async
  default) reads the buffer once when the vector env is made, so every later observation was
  that first read: ``max_text`` NUL characters (index 0 of ``CHARSET``). ``BMPText`` registers
  its own reader (``SharedTexts``, decoding the buffer when read); Gymnasium's writer is kept.

``gymnasium`` is an optional dependency (extra ``.[gym]``); importing this module needs it.
``gym.make("verifier.env.gym_env:EHRVerifier-v0", db_path=..., tasks=...)`` imports this
module and makes the env; so does ``gym.make("EHRVerifier-v0", ...)`` after
``import verifier.env.gym_env``.
"""

from __future__ import annotations

from pathlib import Path
from collections.abc import Sequence
from typing import Any, Iterable, Mapping

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector.utils import read_from_shared_memory

from ..contract import InputError, Task, load_tasks
from .ehr_env import EHREnv, EnvConfig

#: Every BMP code point except the UTF-16 surrogates: the observation and action alphabet.
CHARSET = "".join(chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF)
_IN_CHARSET = frozenset(CHARSET)
#: Action ``kind`` values of the Discrete(3) component.
KINDS = ("sql", "python", "submit")
#: Registered id.
ENV_ID = "EHRVerifier-v0"
_FILTERS = ("condition", "split", "noise_type", "scope", "intent")


class BMPText(spaces.Text):
    """``gymnasium.spaces.Text`` whose repr names its alphabet instead of listing it.

    Same arguments, membership, sampling, equality and pickling as ``spaces.Text``; only
    ``repr``/``str`` differ: Gymnasium's repr prints the whole charset, about 64,000 characters
    for ``CHARSET``, so ``print(env.observation_space)`` filled a terminal. With ``CHARSET`` the
    repr is ``Text(0, 200000, charset=<BMP without surrogates: 63488 characters>)``; with any
    other charset, a sorted sample of at most 20 characters and the count.
    """

    def __repr__(self) -> str:
        """``Text(min_length, max_length, charset=<summary>)``, at most about 100 characters."""
        chars = self.character_set
        if chars == _IN_CHARSET:
            summary = f"<BMP without surrogates: {len(chars)} characters>"
        elif len(chars) <= 20:
            summary = "".join(sorted(chars))
        else:
            summary = f"<{len(chars)} characters: {''.join(sorted(chars)[:20])!r}...>"
        return f"Text({self.min_length}, {self.max_length}, charset={summary})"


class SharedTexts(Sequence[str]):
    """The ``n`` observations of an async vector env's shared buffer, decoded when read.

    What ``read_from_shared_memory`` returns for a ``BMPText`` space (Gymnasium's own reader for
    ``Text`` returns strings decoded once, at creation, so they never change). Indexing,
    iteration and ``len`` read the buffer as it is now; ``copy.deepcopy`` (what ``AsyncVectorEnv``
    returns with ``copy=True``, its default) and ``tuple()`` give plain strings; equal to a tuple
    of the same strings.

    Args:
        space: the single-env ``Text`` space (its ``character_list`` decodes the int32 codes;
            codes >= ``len(character_set)`` are Gymnasium's padding and are skipped).
        shared_memory: the ``multiprocessing`` int32 array of ``n * space.max_length`` codes.
        n: the number of envs.
    """

    def __init__(self, space: spaces.Text, shared_memory: Any, n: int) -> None:
        self._space, self._n = space, n
        self._codes = np.frombuffer(shared_memory.get_obj(), dtype=np.int32).reshape((n, space.max_length))

    def __len__(self) -> int:
        """The number of envs."""
        return self._n

    def __getitem__(self, index: Any) -> Any:
        """Env ``index``'s observation as it is in the buffer now (a tuple for a slice)."""
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(self._n)))
        row = self._codes[index]
        chars, size = self._space.character_list, len(self._space.character_set)
        return "".join(chars[c] for c in row[row < size].tolist())

    def __eq__(self, other: object) -> bool:
        """Equal to any sequence of the same strings."""
        return isinstance(other, (tuple, list, SharedTexts)) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]  # mutable view

    def __deepcopy__(self, memo: dict) -> tuple[str, ...]:
        """A tuple of the current strings (what the vector env hands out when it copies)."""
        return tuple(self)

    def __repr__(self) -> str:
        """``SharedTexts(n=..., lengths=[...])``: the observations can be 200,000 characters."""
        return f"SharedTexts(n={self._n}, lengths={[len(t) for t in self]})"


@read_from_shared_memory.register(BMPText)
def _read_bmp_text(space: BMPText, shared_memory: Any, n: int = 1) -> SharedTexts:
    return SharedTexts(space, shared_memory, n)


def _as_task_list(tasks: Mapping[str, Task] | Iterable[Task] | str | Path) -> list[Task]:
    if isinstance(tasks, (str, Path)):
        return list(load_tasks(tasks).values())
    if isinstance(tasks, Mapping):
        return list(tasks.values())
    out = list(tasks)
    for i, t in enumerate(out):
        if not isinstance(t, Task):
            raise InputError(f"tasks[{i}]", t, "expected a Task (or give a tasks JSONL path)")
    return out


class EHRGymEnv(gym.Env):
    """A ``gymnasium.Env`` over ``EHREnv`` episodes, one task per episode.

    Args:
        db_path: the DuckDB database (opened read-only per episode).
        tasks: the tasks to draw from: a list, ``{task_id: Task}`` or a tasks JSONL path.
        config: ``EnvConfig`` of the wrapped ``EHREnv`` (``max_steps``, Python limits, ...).
        max_text: the longest observation and action text, in characters.
        render_mode: ``None`` or ``"ansi"`` (``render()`` returns the last observation).

    Raises:
        InputError: no tasks, a task that is not a ``Task``, ``max_text`` < 1, or an
            unknown ``render_mode``.
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}
    #: Default of ``max_text``: the schema description of the MIMIC-IV build fits.
    max_text = 200_000

    def __init__(self, db_path: str | Path, tasks: Mapping[str, Task] | Iterable[Task] | str | Path,
                 config: EnvConfig | None = None, *, max_text: int | None = None, render_mode: str | None = None) -> None:
        self.tasks = _as_task_list(tasks)
        if not self.tasks:
            raise InputError("tasks", tasks, "no tasks to draw episodes from")
        if max_text is not None:
            if max_text < 1:
                raise InputError("max_text", max_text, "must be >= 1")
            self.max_text = max_text
        if render_mode not in (None, "ansi"):
            raise InputError("render_mode", render_mode, "expected None or 'ansi'")
        self.render_mode = render_mode
        self.core = EHREnv(str(db_path), config)
        text = BMPText(max_length=self.max_text, min_length=0, charset=CHARSET)
        self.observation_space = text
        self.action_space = spaces.Dict({"kind": spaces.Discrete(len(KINDS)), "content": text})
        self.task: Task | None = None
        self._last = ""

    def _fit(self, text: str) -> str:
        """``text`` made a member of the observation space (replacement char, cut with a note)."""
        if any(c not in _IN_CHARSET for c in text):
            text = "".join(c if c in _IN_CHARSET else "\ufffd" for c in text)
        if len(text) > self.max_text:
            note = f"\n[cut: the observation had {len(text)} characters; {self.max_text} are shown]"
            text = text[: self.max_text - len(note)] + note
        self._last = text
        return text

    def _choose(self, options: Mapping[str, Any]) -> tuple[int, Task]:
        given = options.get("task", options.get("task_id"))
        if isinstance(given, Task):
            idx = next((i for i, t in enumerate(self.tasks) if t.task_id == given.task_id), -1)
            return idx, given
        if given is not None:
            for i, t in enumerate(self.tasks):
                if t.task_id == given:
                    return i, t
            raise InputError("options.task", given, "unknown task_id (not among the env's tasks)")
        pool = [i for i, t in enumerate(self.tasks)
                if all(getattr(t, k) == options[k] for k in _FILTERS if options.get(k) is not None)]
        if not pool:
            wanted = {k: options[k] for k in _FILTERS if options.get(k) is not None}
            raise InputError("options", wanted, "no task matches these values")
        i = pool[int(self.np_random.integers(len(pool)))]
        return i, self.tasks[i]

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        """Start an episode (see the module docstring for how the task is chosen).

        Args:
            seed: seeds ``self.np_random`` (Gymnasium semantics: only when given).
            options: ``task`` (a Task or task_id) or filters ``condition``, ``split``,
                ``noise_type``, ``scope``, ``intent``; also ``trajectory_id``.

        Returns:
            ``(observation, info)``; ``info``: ``task_index`` (-1 for a task given that is not
            among ``env.tasks``), ``max_steps``, ``tools``.

        Raises:
            InputError: an unknown task id, or filters no task matches.
        """
        super().reset(seed=seed)
        options = dict(options or {})
        index, task = self._choose(options)
        self.task = task
        obs, info = self.core.reset(task, trajectory_id=options.get("trajectory_id"))
        return self._fit(obs), {"task_index": index, **info}

    def step(self, action: Mapping[str, Any]) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Apply one action: ``{"kind": 0|1|2, "content": str}`` (or ``EHREnv``'s dict form).

        Returns:
            ``(observation, reward, terminated, truncated, info)`` as ``EHREnv.step``; an invalid
            action is an error observation that uses a step.

        Raises:
            InputError: the episode is over or was never started.
        """
        act: Any = action
        if isinstance(action, Mapping) and "content" in action and not isinstance(action.get("kind"), str):
            kind = int(action["kind"])
            if not 0 <= kind < len(KINDS):
                act = {"kind": str(action["kind"])}  # reported as an invalid action, not raised
            else:
                key = "text" if KINDS[kind] == "submit" else "code"
                act = {"kind": KINDS[kind], key: str(action["content"])}
        obs, reward, terminated, truncated, info = self.core.step(act)
        return self._fit(obs), reward, terminated, truncated, info

    def render(self) -> str | None:
        """The last observation (``render_mode="ansi"``), else None."""
        return self._last if self.render_mode == "ansi" else None

    def close(self) -> None:
        """End the episode's connection and Python worker."""
        self.core.close()


def register() -> None:
    """Register ``EHRVerifier-v0`` with Gymnasium (done on import; calling again does nothing)."""
    if ENV_ID not in gym.registry:
        gym.register(id=ENV_ID, entry_point="verifier.env.gym_env:EHRGymEnv")


register()
