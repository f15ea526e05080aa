"""An MCP tool server (official ``mcp`` package, 2.x): any MCP-capable agent plays ``EHREnv`` episodes.

``ehr-verifier serve-tools --tasks tasks.jsonl --db demo.duckdb --out trajectories.jsonl`` runs a
server over stdio (the transport an MCP client spawns a server with, e.g.
``mcp.client.stdio.stdio_client`` or the OpenAI Agents SDK's ``MCPServerStdio``). A stdio server
serves one client connection, and each connection is **one episode**: the task is the first of
``--tasks`` (in file order) whose episode ``<task_id>#0`` is neither in ``--out`` nor being played
by another connection, or ``--task-id`` (played as its next sample: ``#1`` once ``#0`` is logged).
Parallel clients on one ``--out`` are safe: each connection claims its episode with a lock in
``<out>.claims/`` (``verifier.env.claim``), so two connections never play the same episode and
trajectory ids never repeat; a crashed server's claim ends with its process. Tools:

* ``get_task()``: the episode's observation (instructions, schema description, question);
* ``run_sql(query)`` / ``run_python(code)``: a step of the episode (SQL under the verifier's
  rules on a read-only connection; Python in the confined worker), answered with what the
  environment shows (``[step N]`` then the output or the error);
* ``submit(answer, reasoning=None)``: the final response; ends the episode. With a ``reasoning``
  the response is ``<answer>ANSWER</answer><reasoning>REASONING</reasoning>`` (the format the
  environment's instructions ask for); without one, ``answer`` is the whole final response.

When the episode ends (submission, the ``max_steps``-th tool call, or the client disconnecting
without submitting: scored as an empty response) its trajectory is appended to ``--out`` and,
with ``--verdicts``, its verdict to that file; the agent is never told the verdict. Nothing of
the task's reference is exposed. A connection that ends without calling any tool (a client that
never got going, ``serve-tools < /dev/null``) is not an episode: nothing is logged and its task stays
available for the next connection.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..contract import InputError, Task, load_tasks
from ..env import EHREnv, EnvConfig
from ..env.claim import Claim, claim_episode
from ..env.log import JsonlAppender, existing_keys, trajectory_id


def pick_task(tasks: str | Path, out: str | Path, task_id: str | None = None) -> Task:
    """The task the next connection would take (without claiming it: see ``claim_episode``).

    Args:
        tasks: tasks JSONL path.
        out: trajectories JSONL (episodes already there are done; may not exist yet).
        task_id: a specific task (played again even if done).

    Returns:
        ``task_id``'s task, else the first task in file order without an episode in ``out``.

    Raises:
        InputError: an unknown ``task_id``, or every task already has an episode.
    """
    task_map = load_tasks(tasks)
    if task_id is not None:
        if task_id not in task_map:
            raise InputError("--task-id", task_id, "not in the tasks file")
        return task_map[task_id]
    done = existing_keys(out) if Path(out).exists() else set()
    for task in task_map.values():
        if (task.task_id, 0) not in done:
            return task
    raise InputError("--tasks", str(tasks), f"every task already has an episode in {out}")


class Episode:
    """One connection's episode: the ``EHREnv``, its task, and where it is logged when it ends.

    Args:
        task: the task.
        db: the DuckDB database.
        out: trajectories JSONL (appended).
        verdicts: optional verdicts JSONL (appended).
        config: ``EnvConfig``.
        sample: the episode's sample number (trajectory id ``<task_id>#<sample>``).
    """

    def __init__(self, task: Task, db: str | Path, out: str | Path, verdicts: str | Path | None = None,
                 config: EnvConfig | None = None, sample: int = 0) -> None:
        self.task, self.out, self.verdicts = task, Path(out), Path(verdicts) if verdicts else None
        self.env = EHREnv(str(db), config)
        self.observation, _info = self.env.reset(task, trajectory_id=trajectory_id(task.task_id, sample),
                                                 metadata={"agent": "mcp", "sample": sample})
        self.logged = False
        self.touched = False  # a tool was called: the connection is an episode

    def act(self, action: dict[str, Any]) -> str:
        """Apply one action; the observation (or a note that the episode is over)."""
        if self.env.done:
            return "Error: the episode is over; nothing was run. Disconnect to start the next task."
        obs, _reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            self._log(info)
        return obs

    def end(self) -> None:
        """End the episode if it is still open (scored as an empty response) and log it.

        A connection that never called a tool is not an episode: nothing is logged.
        """
        if self.touched and not self.env.done:
            self.act({"kind": "submit", "text": ""})
        self.env.close()

    def _log(self, info: dict[str, Any]) -> None:
        if self.logged:
            return
        self.logged = True
        with JsonlAppender(self.out) as log:
            log.append(info["trajectory"])
        if self.verdicts is not None:
            with JsonlAppender(self.verdicts) as log:
                log.append(info["verdict"])


def final_response(answer: str, reasoning: str | None) -> str:
    """The final response ``submit`` records.

    Args:
        answer: the submitted Answer (or, without ``reasoning``, the whole response).
        reasoning: the submitted Reasoning, or ``None``/blank.

    Returns:
        ``answer`` unchanged when there is no reasoning; else
        ``<answer>ANSWER</answer><reasoning>REASONING</reasoning>`` (``answer`` kept as it is when it
        already holds ``<answer>`` tags, with the reasoning tags appended).
    """
    if reasoning is None or not reasoning.strip():
        return answer
    tail = f"<reasoning>{reasoning.strip()}</reasoning>"
    if "<answer" in answer.lower():
        return f"{answer.rstrip()}\n{tail}"
    return f"<answer>{answer.strip()}</answer>{tail}"


def build_server(episode: Episode) -> Any:
    """The ``mcp.server.mcpserver.MCPServer`` exposing ``episode``'s tools.

    Args:
        episode: the connection's episode.

    Returns:
        The server (``server.run("stdio")`` serves it).

    Raises:
        ImportError: the ``mcp`` package (2.x) is not installed (``pip install ehr-verifier[mcp]``).
    """
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("ehr-verifier", instructions=(
        "Answer a clinical question from a hospital database. Call get_task first; use run_sql and "
        "run_python to look at the data; finish with submit(answer, reasoning): the Answer (NULL when "
        "the database cannot answer it) and a Reasoning citing the steps that show it."))

    @server.tool()
    def get_task() -> str:
        """The task: instructions, the database schema and the question."""
        episode.touched = True
        return episode.observation

    @server.tool()
    def run_sql(query: str) -> str:
        """Run one read-only SQL query (DuckDB dialect) on the hospital database and see the result."""
        episode.touched = True
        return episode.act({"kind": "sql", "code": query})

    @server.tool()
    def run_python(code: str) -> str:
        """Run Python code; variables persist between calls; db.sql('SELECT ...') queries the database. Print what you want to see."""
        episode.touched = True
        return episode.act({"kind": "python", "code": code})

    @server.tool()
    def submit(answer: str, reasoning: str | None = None) -> str:
        """Submit the final response; ends the episode. ``answer``: the Answer only (NULL when the database
        cannot answer the question); ``reasoning``: why, citing the steps that show it ([step N]). Both are
        sent as <answer>...</answer><reasoning>...</reasoning>. Without ``reasoning``, ``answer`` is taken
        as the whole final response (it must then hold the Answer and the Reasoning itself)."""
        episode.touched = True
        if episode.env.done:
            return "Error: the episode is over; the first submission counts."
        episode.act({"kind": "submit", "text": final_response(answer, reasoning)})
        return "Submitted. The episode is over."

    return server


def serve_stdio(tasks: str | Path, db: str | Path, out: str | Path, *, task_id: str | None = None,
                verdicts: str | Path | None = None, max_steps: int = 20, schema_detail: str = "compact") -> Task:
    """Serve one episode over stdio until the client disconnects, then log it.

    Args:
        tasks, db, out, task_id, verdicts: as the module docstring.
        max_steps: tool calls before the episode is truncated.
        schema_detail: the schema description ``get_task`` shows (``EnvConfig.schema_detail``).

    Returns:
        The episode's task.

    Raises:
        InputError: as :func:`pick_task`, or ``max_steps`` < 1.
    """
    if max_steps < 1:
        raise InputError("--max-steps", max_steps, "must be >= 1")
    claim = claim_for(tasks, out, task_id)
    try:
        episode = Episode(claim.task, db, out, verdicts, EnvConfig(max_steps=max_steps, schema_detail=schema_detail),
                          sample=claim.sample)
        try:
            build_server(episode).run("stdio")
        finally:
            episode.end()
    finally:
        claim.release()  # after the trajectory is logged: a later claim sees it done
    return claim.task


def claim_for(tasks: str | Path, out: str | Path, task_id: str | None = None) -> Claim:
    """Claim this connection's episode (held until released or the process ends).

    Args:
        tasks: tasks JSONL path.
        out: trajectories JSONL (its claims live in ``<out>.claims/``).
        task_id: a specific task, claimed as its lowest sample neither logged nor claimed.

    Returns:
        The ``Claim`` (task and sample).

    Raises:
        InputError: an unknown ``task_id``, or every task is logged or claimed.
    """
    task_map = load_tasks(tasks)
    if task_id is None:
        return claim_episode(task_map.values(), out)
    if task_id not in task_map:
        raise InputError("--task-id", task_id, "not in the tasks file")
    return claim_episode([task_map[task_id]], out, replay=True)
