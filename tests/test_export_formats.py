"""SFT/DPO files in the format TRL's SFTTrainer and DPOTrainer read today: dict tool-call arguments,
tool messages with ``name``, a ``tools`` column; read back by ``datasets.load_dataset("json")``
with nothing altered, and rendered by transformers' chat-template code as TRL renders them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from batch_data import episodes, pick_pairs

datasets = pytest.importorskip("datasets", reason="datasets is in the dev extra")

from verifier.contract import Task, Trajectory, from_chat_messages  # noqa: E402
from verifier.env import TOOLS  # noqa: E402
from verifier.scoring import export_file, verdict_index, verify_batch  # noqa: E402

#: A tool-calling chat template of the common kind (Qwen2.5 / Llama 3.1 style): tools and
#: arguments go through ``tojson``, as TRL's SFTTrainer/DPOTrainer templates do.
TEMPLATE = (
    "{% if tools %}<tools>{% for t in tools %}{{ t | tojson }}{% endfor %}</tools>{% endif %}"
    "{% for m in messages %}<{{ m.role }}>"
    "{% if m.tool_calls %}{% for c in m.tool_calls %}<call>{\"name\": \"{{ c.function.name }}\", \"arguments\": "
    "{{ c.function.arguments | tojson }}}</call>{% endfor %}{% else %}{{ m.content }}{% endif %}"
    "{% if m.role == 'tool' %}[{{ m.name }}]{% endif %}</{{ m.role }}>{% endfor %}"
)


@pytest.fixture(scope="module")
def exported(synth_db: Path, synth_tasks: list[Task], tmp_path_factory):
    tasks = pick_pairs(synth_tasks, 6)
    lines = episodes(synth_db, tasks, agents=("oracle", "always-null", "fabricator"))
    folder = tmp_path_factory.mktemp("export")
    trajs_file = folder / "trajectories.jsonl"
    trajs_file.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    task_map = {t.task_id: t for t in tasks}
    index = verdict_index(verify_batch(lines, task_map, synth_db, backend="serial"))
    out = {}
    for kind in ("sft", "dpo"):
        out[kind] = folder / f"{kind}.jsonl"
        assert export_file(kind, trajs_file, task_map, out[kind], verdicts=index, schema="TABLE patients(...)") > 0
    return out, {json.loads(line)["trajectory_id"]: Trajectory.model_validate_json(line) for line in lines}


@pytest.mark.parametrize("kind", ["sft", "dpo"])
def test_load_dataset_json_reads_the_export_back_unchanged(exported, kind):
    files, _ = exported
    written = [json.loads(line) for line in files[kind].read_text(encoding="utf-8").splitlines()]
    ds = datasets.load_dataset("json", data_files=str(files[kind]), split="train")
    assert [dict(row) for row in ds] == written  # no null-filled keys, no re-encoded arguments


def test_sft_rows_have_dict_arguments_named_tool_messages_and_tools(exported):
    files, trajs = exported
    ds = datasets.load_dataset("json", data_files=str(files["sft"]), split="train")
    assert json.loads(ds[0]["tools"]) == TOOLS
    seen = set()
    for row in ds:
        for m in row["messages"]:
            for call in m.get("tool_calls") or []:
                args = call["function"]["arguments"]
                assert isinstance(args, dict) and set(args) == {"query" if call["function"]["name"] == "run_sql" else "code"}
                seen.add(call["function"]["name"])
            if m["role"] == "tool":
                assert m["name"] in ("run_sql", "run_python") and m["tool_call_id"]
        back = from_chat_messages(row["messages"], trajectory_id="x", task_id=row["task_id"])
        assert [(s.kind, s.code) for s in back.steps] == [(s.kind, s.code) for s in trajs[row["trajectory_id"]].steps]
    assert "run_sql" in seen


def test_chat_template_renders_arguments_once_encoded(exported):
    """What TRL's SFTTrainer does with a row: apply_chat_template(messages, tools=json.loads(tools))."""
    from transformers.utils.chat_template_utils import render_jinja_template

    files, _ = exported
    row = datasets.load_dataset("json", data_files=str(files["sft"]), split="train")[0]
    tools = json.loads(row["tools"]) if isinstance(row["tools"], str) else row["tools"]  # as TRL does
    rendered, _ = render_jinja_template([row["messages"]], tools=tools, chat_template=TEMPLATE)
    text = rendered[0]
    call = next(c for m in row["messages"] for c in (m.get("tool_calls") or []))
    code = call["function"]["arguments"]["query"]
    assert json.dumps({"query": code}) in text  # one level of JSON, not a string holding JSON
    assert '\\"query\\"' not in text and "[run_sql]</tool>" in text and '"name": "run_sql"' in text


def test_dpo_rows_pair_prompt_chosen_rejected_with_tools(exported):
    files, _ = exported
    ds = datasets.load_dataset("json", data_files=str(files["dpo"]), split="train")
    assert {"prompt", "chosen", "rejected", "tools"} <= set(ds.column_names) and len(ds) > 0
    row = ds[0]
    assert row["prompt"][0]["role"] == "user" and row["chosen"][-1]["role"] == "assistant"
    assert json.loads(row["tools"]) == TOOLS
