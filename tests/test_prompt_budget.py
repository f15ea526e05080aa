"""The prompt budget (issue 34, point 1): the first observation shows a compact schema, the full
description is one ``run_sql`` away, and one option (``schema_detail``) picks the rendering in the
environment, the gym, the TRL and verl data, the SFT export and the CLI.

Tokens are estimated, not counted: no tokenizer is available offline here (tiktoken downloads its
encodings; no transformers tokenizer is cached), so the tests take 3 characters a token, more
tokens than BPE tokenizers give on this text (about 4 characters a token), and the budget of
"about 2,000 tokens" is checked as at most 2,300 tokens at 4 characters a token.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from batch_data import episodes, pick_pairs
from hypothesis import given, settings, strategies as st

from verifier.contract import Task
from verifier.database import describe_schema
from verifier.env import EHREnv, EnvConfig
from verifier.sql import open_readonly

#: "About 2,000 tokens" at 4 characters a token, with 15 % of slack.
BUDGET_CHARS = 2_300 * 4


def _schema_of(observation: str) -> str:
    return observation.split("## Database schema\n", 1)[1].split("\n\n## Question", 1)[0]


@pytest.fixture(scope="module")
def catalog(synth_db: Path) -> list[tuple[str, str, str, str]]:
    con = open_readonly(str(synth_db))
    try:
        return describe_schema(con)
    finally:
        con.close()


def test_first_observation_fits_the_budget_and_names_every_table_and_column(synth_db, synth_tasks, catalog):
    """On main the observation carried the whole description (about 33,000 characters)."""
    task = synth_tasks[0]
    obs, _info = EHREnv(str(synth_db)).reset(task)
    schema = _schema_of(obs)
    assert len(schema) <= BUDGET_CHARS, len(schema)
    assert len(obs) <= BUDGET_CHARS + 3_000  # the shared instructions and the question besides
    lines = schema.splitlines()
    for table in {t for t, *_ in catalog}:
        header = next(i for i, line in enumerate(lines) if line.startswith(f"{table}:"))
        shown = {c.strip().split(" ")[0] for c in lines[header + 1].split(",")}
        assert shown == {c for t, c, *_ in catalog if t == table}, table
    full, _ = EHREnv(str(synth_db), EnvConfig(schema_detail="full")).reset(task)
    assert len(_schema_of(full)) > 3 * len(schema)  # the full description is still there when asked for


def test_compact_types_follow_the_stated_convention(synth_db, catalog):
    """Every column's type can be read back from the compact text: the printed type, else the name's."""
    from verifier.database import compact_schema_text
    from verifier.database._schema_doc import implied_type

    con = open_readonly(str(synth_db))
    try:
        text = compact_schema_text(con)
    finally:
        con.close()
    assert "*_time TIMESTAMP, *_date DATE, *id INTEGER, else VARCHAR" in text
    lines = text.splitlines()
    read_back = {}
    for i, line in enumerate(lines):
        if not line.startswith(" ") and ":" in line and i + 1 < len(lines) and lines[i + 1].startswith("  ") and i > 0:
            table = line.split(":", 1)[0]
            for item in lines[i + 1].strip().split(", "):
                name, _, typ = item.partition(" ")
                read_back[(table, name)] = typ.upper() if typ else implied_type(name)
    assert read_back == {(t, c): ty for t, c, ty, _d in catalog}


def test_full_description_is_one_run_sql_away(synth_db, synth_tasks, catalog):
    """The query the compact text names shows every column's meaning, inside an episode."""
    from verifier.database._schema_doc import DESCRIBE_QUERY

    env = EHREnv(str(synth_db))
    obs, _ = env.reset(synth_tasks[0])
    assert DESCRIBE_QUERY.replace("<table>", "lab_events") in obs
    for table in ("lab_events", "admissions"):
        shown, *_ = env.step({"kind": "sql", "code": DESCRIBE_QUERY.replace("<table>", table)})
        assert not shown.startswith("[step") or "Error" not in shown.splitlines()[1]
        for t, column, _typ, desc in catalog:
            if t == table:
                assert column in shown and desc[:40] in shown, (table, column)
        described, *_ = env.step({"kind": "sql", "code": f"DESCRIBE {table}"})
        assert "Error" not in described and "column_name" in described
    env.close()


@pytest.fixture(scope="module")
def one_task(synth_db, synth_tasks) -> tuple[str, Task]:
    return str(synth_db), synth_tasks[0]


@settings(max_examples=25, deadline=None)
@given(detail=st.sampled_from(["compact", "full"]), question=st.text(min_size=1, max_size=200).filter(str.strip))
def test_one_option_gives_one_prompt_everywhere(one_task, detail, question):
    """The environment, the TRL dataset, the verl rows and the SFT export open with the same text."""
    from verifier.adapters.trl_data import to_grpo_dataset
    from verifier.adapters.verl_data import verl_rows
    from verifier.env import prompt_schema
    from verifier.scoring._chat_format import prompt_messages

    db, task = one_task
    task = task.model_copy(update={"question": question})
    env_obs, _ = EHREnv(db, EnvConfig(schema_detail=detail)).reset(task)
    trl = to_grpo_dataset([task], db=db, schema_detail=detail)[0]["prompt"][0]["content"]
    verl = verl_rows([task], db=db, schema_detail=detail)[0]["prompt"][0]["content"]
    sft = prompt_messages(task, prompt_schema(db, detail))[0]["content"]
    assert env_obs == trl == verl == sft


def test_gym_and_cli_export_use_the_compact_schema_by_default(synth_db, synth_tasks, tmp_path):
    gym_env = pytest.importorskip("verifier.env.gym_env", reason="gymnasium is in the dev extra")
    tasks = pick_pairs(synth_tasks, 1)
    env = gym_env.EHRGymEnv(synth_db, tasks)
    obs, _ = env.reset(options={"task": tasks[0]})
    assert len(_schema_of(obs)) <= BUDGET_CHARS
    env.close()

    lines = episodes(synth_db, tasks, agents=("oracle",))
    tasks_file, trajs = tmp_path / "tasks.jsonl", tmp_path / "trajectories.jsonl"
    tasks_file.write_text("".join(t.model_dump_json() + "\n" for t in tasks), encoding="utf-8")
    trajs.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    rows = {}
    for detail in ("compact", "full"):
        out = tmp_path / f"sft-{detail}.jsonl"
        run = subprocess.run([sys.executable, "-m", "verifier.cli", "export", "--kind", "sft", "--tasks", str(tasks_file),
                              "--trajectories", str(trajs), "--db", str(synth_db), "--out", str(out),
                              *(["--schema-detail", "full"] if detail == "full" else [])],
                             capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stderr
        rows[detail] = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows["compact"] and all(len(_schema_of(r["messages"][0]["content"])) <= BUDGET_CHARS for r in rows["compact"])
    assert all(len(r["messages"][0]["content"]) > 3 * BUDGET_CHARS for r in rows["full"])
    bad = subprocess.run([sys.executable, "-m", "verifier.cli", "export", "--kind", "sft", "--tasks", str(tasks_file),
                          "--trajectories", str(trajs), "--db", str(synth_db), "--out", str(tmp_path / "x.jsonl"),
                          "--schema-detail", "short"], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "--schema-detail" in bad.stderr


def test_unknown_schema_detail_is_a_typed_error(synth_db):
    from verifier.contract import InputError
    from verifier.env import prompt_schema

    with pytest.raises(InputError, match="schema_detail"):
        prompt_schema(synth_db, "short")


def test_real_demo_prompt_fits(demo_db):
    """The real MIMIC-IV demo (31 tables, about 490 columns): the compact schema fits the budget."""
    from verifier.env import prompt_schema

    compact, full = prompt_schema(demo_db), prompt_schema(demo_db, "full")
    assert len(compact) <= BUDGET_CHARS < len(full)
    assert math.ceil(len(compact) / 4) <= 2_300
