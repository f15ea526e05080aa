"""``ehr-verifier review-sample`` (issue 12 point 4) on tasks built from the synthetic hospital."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from verifier.cli import app
from verifier.construction import make_tasks, write_tasks
from verifier.construction.review import read_judgements, sample_pairs, validity_table
from verifier.contract import InputError


@pytest.fixture(scope="module")
def synth_tasks(synth_db: Path, tmp_path_factory: pytest.TempPathFactory):
    tasks, _ = make_tasks(synth_db, seed=0, pairs=120)
    out = tmp_path_factory.mktemp("review") / "tasks.jsonl"
    write_tasks(tasks, out)
    return tasks, out


def test_sample_is_stratified_and_deterministic(synth_tasks):
    tasks, _ = synth_tasks
    programs = {t.program for t in tasks}
    k = min(10, len(programs))
    sample = sample_pairs(tasks, k, seed=1)
    assert len({p.clean.program for p in sample}) == k  # no program twice before all are drawn
    big = sample_pairs(tasks, 2 * len(programs), seed=1)
    counts = Counter(p.clean.program for p in big)
    pairs_per_program = Counter(t.program for t in tasks if t.condition == "noise")
    assert all(counts[p] >= min(2, pairs_per_program[p]) for p in programs)  # each drawn twice (or all it has)
    assert [p.clean.pair_id for p in sample_pairs(tasks, k, seed=1)] == [p.clean.pair_id for p in sample]
    assert [p.clean.pair_id for p in sample_pairs(tasks, k, seed=2)] != [p.clean.pair_id for p in sample]
    assert all(p.noise.pair_id == p.clean.pair_id and p.noise.condition == "noise" for p in big)


def test_cli_writes_sheets_and_reads_judgements(synth_tasks, tmp_path):
    tasks, path = synth_tasks
    out = tmp_path / "review"
    res = CliRunner().invoke(app, ["review-sample", "--tasks", str(path), "--n", "12", "--out", str(out)])
    assert res.exit_code == 0, res.output
    index = [json.loads(x) for x in (out / "index.jsonl").read_text().splitlines()]
    assert len(index) == 12 and len(list((out / "sheets").glob("*.md"))) == 12
    by_id = {t.task_id: t for t in tasks}
    first = (out / index[0]["sheet"]).read_text()
    clean = by_id[index[0]["pair_id"] + "-clean"]
    noise = by_id[index[0]["pair_id"] + "-noise"]
    for part in (clean.question, noise.question, clean.reference.sql.strip(), noise.reference.unmet_requirement.statement,
                 "Robustness audit", "Your verdict"):
        assert part in first
    # two reviewers; reviewer b rejects the first pair's noise twin
    lines = []
    for r in ("a", "b"):
        for i, row in enumerate(index):
            lines.append({"pair_id": row["pair_id"], "reviewer": r, "clean_valid": True, "noise_valid": not (r == "b" and i == 0)})
    jfile = tmp_path / "judgements.jsonl"
    jfile.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    table = validity_table(tasks, read_judgements(jfile))
    assert table["all"]["all"]["pairs"] == 12 and table["all"]["all"]["reviews"] == 24
    assert table["all"]["all"]["pairs_valid"] == 11 and table["all"]["all"]["reviews_valid"] == 23
    assert table["program"][index[0]["program"]]["pairs_valid"] == table["program"][index[0]["program"]]["pairs"] - 1
    assert sum(g["pairs"] for g in table["noise_type"].values()) == 12
    res = CliRunner().invoke(app, ["review-sample", "--tasks", str(path), "--judgements", str(jfile)])
    assert res.exit_code == 0, res.output
    assert "Validity by program" in res.output and "Validity by noise type" in res.output and "91.7%" in res.output


def test_bad_judgements(synth_tasks, tmp_path):
    tasks, path = synth_tasks
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"pair_id": "x", "valid": "yes"}\n')
    with pytest.raises(InputError, match="line 1"):
        read_judgements(bad)
    bad.write_text('{"pair_id": "nope", "valid": true}\n')
    with pytest.raises(InputError, match="nope"):
        validity_table(tasks, read_judgements(bad))
    res = CliRunner().invoke(app, ["review-sample", "--tasks", str(path), "--judgements", str(bad)])
    assert res.exit_code == 2 and "nope" in res.output
    res = CliRunner().invoke(app, ["review-sample", "--tasks", str(path), "--n", "3"])
    assert res.exit_code == 2 and "--out" in res.output


def test_sheet_shows_tied_alternatives(synth_tasks):
    """A reviewer sees every answer the verifier accepts: the rows tied with the reference's
    (a tie judged as 'no single answer' when the sheet showed only one of them)."""
    from verifier.construction.review import render_sheet

    tasks, _ = synth_tasks
    pair = sample_pairs(tasks, 1, seed=3)[0]
    assert "Also accepted" not in render_sheet(pair, 1) or pair.clean.reference.alternatives
    ans = pair.clean.reference.answer
    tied = pair.clean.model_copy(update={"reference": pair.clean.reference.model_copy(update={"alternatives": [ans]})})
    sheet = render_sheet(type(pair)(clean=tied, noise=pair.noise), 1)
    assert "Also accepted" in sheet and json.dumps(ans.model_dump(), default=str, indent=1) in sheet
