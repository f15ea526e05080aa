"""The inspect_ai ``@task``: ``inspect eval`` with the mock model runs it end to end, and scripted
tool calls replaying the oracle's episode are scored CORRECT, with metrics grouped by condition
and noise type. Synthetic hospital."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from batch_data import episodes, pick_pairs

pytest.importorskip("inspect_ai", reason="inspect_ai is in the dev extra")

from inspect_ai import eval as inspect_eval  # noqa: E402
from inspect_ai.log import read_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402

from verifier.contract import Task, Trajectory  # noqa: E402

_OFFLINE_CLI = (
    "import sys; import inspect_ai.model._model as m; "
    "m.count_text_tokens = lambda text: max(1, len(text) // 4); "
    "from inspect_ai._cli.main import main; sys.argv = ['inspect', *sys.argv[1:]]; main()"
)
TASK_FILE = Path(__file__).resolve().parents[1] / "verifier" / "adapters" / "inspect_task.py"


@pytest.fixture(scope="module")
def pairs(synth_db: Path, synth_tasks: list[Task], tmp_path_factory):
    tasks = pick_pairs(synth_tasks, 2)
    path = tmp_path_factory.mktemp("inspect") / "tasks.jsonl"
    path.write_text("".join(t.model_dump_json() + "\n" for t in tasks), encoding="utf-8")
    oracle = {Trajectory.model_validate_json(line).task_id: Trajectory.model_validate_json(line)
              for line in episodes(synth_db, tasks, agents=("oracle",))}
    return tasks, path, oracle


def _metrics(log) -> dict[str, float]:
    return {name: m.value for score in log.results.scores for name, m in score.metrics.items()}


def test_inspect_eval_cli_runs_the_task_with_the_mock_model(pairs, synth_db, tmp_path):
    tasks, path, _ = pairs
    env = dict(os.environ, INSPECT_LOG_DIR=str(tmp_path / "logs"), INSPECT_DISPLAY="none")
    # `inspect eval` (inspect's own CLI entry point, inspect_ai._cli.main:main). mockllm estimates
    # token usage with tiktoken's o200k_base, which tiktoken downloads on first use; offline that
    # estimate alone is replaced (len / 4): nothing of the task, the tools or the scorer is.
    cmd = [sys.executable, "-c", _OFFLINE_CLI]
    proc = subprocess.run(cmd + ["eval", f"{TASK_FILE}@ehr_verifier", "-T", f"tasks={path}", "-T", f"db={synth_db}",
                                 "--model", "mockllm/model", "--log-dir", str(tmp_path / "logs")],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [log_file] = list((tmp_path / "logs").glob("*.eval"))
    log = read_eval_log(str(log_file))
    assert log.status == "success" and len(log.samples) == len(tasks)
    metrics = _metrics(log)
    # the mock model answers every question with filler text: unparseable, so nothing succeeds
    assert metrics["accuracy"] == 0.0
    assert {"clean", "noise"} <= set(metrics) and "none" in metrics  # grouped by condition and by noise type
    reasons = {s.id: s.scores["ehr_verifier"].explanation for s in log.samples}
    assert all("UNPARSEABLE_RESPONSE" in r for r in reasons.values()), reasons


def _script(traj: Trajectory) -> list[ModelOutput]:
    """The oracle's episode as model outputs: its tool calls, then its final response."""
    out = []
    for s in traj.steps:
        name, args = ("run_sql", {"query": s.code}) if s.kind == "sql" else ("run_python", {"code": s.code})
        out.append(ModelOutput.for_tool_call("mockllm/model", name, args))
    out.append(ModelOutput.from_content("mockllm/model", traj.final_response))
    for o in out:  # set, so mockllm does not estimate it with tiktoken (a download)
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return out


def test_scripted_oracle_episodes_score_correct_through_the_tools(pairs, synth_db, tmp_path):
    from verifier.adapters.inspect_task import ehr_verifier

    tasks, path, oracle = pairs
    seen = set()
    for t in tasks:
        model = get_model("mockllm/model", custom_outputs=_script(oracle[t.task_id]))
        [log] = inspect_eval(ehr_verifier(tasks=str(path), db=str(synth_db)), model=model, sample_id=t.task_id,
                             display="none", log_dir=str(tmp_path / "logs"))
        assert log.status == "success", log.error
        [sample] = log.samples
        score = sample.scores["ehr_verifier"]
        assert score.value == "C", (t.task_id, score.explanation)
        tool_results = [m for m in sample.messages if m.role == "tool"]
        assert len(tool_results) == len(oracle[t.task_id].steps)
        assert all(m.text.startswith("[step ") for m in tool_results)  # the environment's own framing
        seen.add((t.condition, _metrics(log)[t.condition]))
    assert seen == {("clean", 1.0), ("noise", 1.0)}


def test_grouped_metrics_have_meaningful_names(pairs, synth_db, tmp_path):
    """Issue 34: the two grouped metrics each added an overall copy, named ``all`` and ``all2``."""
    from verifier.adapters.inspect_task import ehr_verifier

    tasks, path, _ = pairs
    outputs = [ModelOutput.from_content("mockllm/model", "no idea") for _ in tasks]
    for o in outputs:
        o.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    model = get_model("mockllm/model", custom_outputs=outputs)
    [log] = inspect_eval(ehr_verifier(tasks=str(path), db=str(synth_db)), model=model, display="none",
                         log_dir=str(tmp_path / "logs"), max_samples=1)
    assert log.status == "success", log.error
    names = set(_metrics(log))
    noise_types = {t.noise_type or "none" for t in tasks}
    assert names == {"accuracy", "stderr", "clean", "noise"} | noise_types, names
