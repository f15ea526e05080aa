"""The ``ehr-verifier`` command line (typer).

Each command is a thin shell over a library function; heavy imports happen
inside the command so that ``ehr-verifier --help`` stays fast.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

import typer
from rich.console import Console

#: Plain (click-style) help: typer's rich help panels list every flag with a ``<bool>`` value type
#: (``--judge <bool>``, even ``--help <bool>``) although flags take no value; the plain format shows
#: flags bare, value types only where a value is taken, and the defaults (tests/test_cli_help.py).
app = typer.Typer(
    help="Verify clinical database agents on Clean-Noise task pairs (MIMIC-IV shaped, DuckDB).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
#: Piped output (CI logs, files) gets 120 columns so report tables are not cut to rich's default 80.
console = Console() if sys.stdout.isatty() else Console(width=120)
err_console = Console(stderr=True)

#: Default location of the real MIMIC-IV demo (overridden by --mimic-dir or $MIMIC_DEMO_DIR).
DEFAULT_MIMIC_DIR = "../shared/data/mimic-iv-demo"


def _version(value: bool) -> None:
    if value:
        from .contract import __version__

        console.print(f"ehr-verifier {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """Verify clinical database agents on Clean-Noise task pairs (MIMIC-IV shaped, DuckDB)."""


def default_mimic_dir() -> Path:
    """``$MIMIC_DEMO_DIR`` or ``../shared/data/mimic-iv-demo``."""
    return Path(os.environ.get("MIMIC_DEMO_DIR", DEFAULT_MIMIC_DIR))


def _fail(exc: Exception) -> None:
    if isinstance(exc, OSError) and exc.filename is not None:  # "<file>: No such file or directory"
        message = f"{exc.filename}: {exc.strerror or exc}"
    else:
        message = str(exc)
    from rich.markup import escape

    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)  # "[2]" in a field path is text
    raise typer.Exit(code=2)


@contextmanager
def _cli_errors(*extra: type[BaseException]) -> Iterator[None]:
    """The CLI boundary: expected failures print ``error: <message>`` and exit with code 2, no traceback.

    Caught: ``VerifierError`` (typed input errors), ``OSError`` (missing or
    unwritable files, named in the message), ``duckdb.Error``, and ``extra``.
    """
    import duckdb

    from .contract import VerifierError

    try:
        yield
    except (VerifierError, OSError, duckdb.Error, *extra) as exc:
        _fail(exc)


from .cli_checks import require_db as _require_db  # noqa: E402 - checks of file arguments
from .cli_checks import require_schema_detail  # noqa: E402
from .cli_checks import require_lines, require_out_dir, require_out_file, require_tasks  # noqa: E402


@app.command("schema")
def schema_cmd(out: Path = typer.Option(..., "--out", help="Folder to write <Name>.schema.json into.")) -> None:
    """Write the JSON Schemas of Task, Trajectory and Verdict."""
    from .contract import write_schemas

    with _cli_errors():
        for p in write_schemas(out):
            console.print(f"wrote {p}")


@app.command("build-db")
def build_db_cmd(
    mimic_dir: Optional[Path] = typer.Option(None, "--mimic-dir", help="MIMIC-IV folder with hosp/ and icu/ (default $MIMIC_DEMO_DIR or ../shared/data/mimic-iv-demo)."),
    out: Path = typer.Option(..., "--out", help="DuckDB file to write (replaced atomically)."),
    chartevents_meds: Optional[Path] = typer.Option(None, "--chartevents-meds", help="MEDS event parquet to fill chart_events when icu/chartevents is absent."),
) -> None:
    """Build the renamed, read-only-ready DuckDB database from MIMIC-IV CSVs."""
    from .database import build_database, print_summary

    with _cli_errors():
        report = build_database(mimic_dir or default_mimic_dir(), out, chartevents_meds=chartevents_meds, progress=True)
    print_summary(report, console)


@app.command("demo")
def demo_cmd(
    workdir: Optional[Path] = typer.Option(None, "--workdir", help="Folder for the generated hospital and outputs (default: a temporary folder)."),
    seed: int = typer.Option(0, "--seed", help="Seed of the synthetic hospital."),
) -> None:
    """Main job on the embedded default: generate the synthetic hospital, build it, and report."""
    from .demo import run_demo

    with _cli_errors():
        run_demo(workdir=workdir, seed=seed, console=console, progress_console=err_console)


@app.command("rollout")
def rollout_cmd(
    agent: str = typer.Option(..., "--agent", help="oracle, always-null, answer-anyway, wrong-scope, fabricator or openai."),
    tasks: Path = typer.Option(..., "--tasks", help="Tasks JSONL."),
    db: Path = typer.Option(..., "--db", help="DuckDB database the tasks were built on (opened read-only)."),
    out: Path = typer.Option(..., "--out", help="Trajectories JSONL (appended; episodes already there are skipped)."),
    k: int = typer.Option(1, "-k", help="Episodes per task (pass@k); trajectory ids are <task_id>#<sample>."),
    workers: int = typer.Option(1, "--workers", help="Worker processes."),
    max_steps: int = typer.Option(20, "--max-steps", help="Tool calls per episode before truncation."),
    schema_detail: str = typer.Option("compact", "--schema-detail", help="Schema description in the prompt: compact (about 2,000 tokens; each column's meaning one run_sql away) or full."),
    verdicts: Optional[Path] = typer.Option(None, "--verdicts", help="Also append the environment's verdicts here."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="openai agent: endpoint (default $OPENAI_BASE_URL)."),
    model: Optional[str] = typer.Option(None, "--model", help="openai agent: model (default $EHR_AGENT_MODEL)."),
    evidence_check: bool = typer.Option(False, "--evidence-check", help="openai agent: append the evidence-check instruction (prompt-only baseline)."),
    id_prefix: str = typer.Option("", "--id-prefix", help="Prefix of trajectory ids (<prefix><task_id>#<k>), so several agents' files can be combined for `export --kind dpo`."),
    ids: Optional[str] = typer.Option(None, "--ids", help="Run only these task ids (comma-separated)."),
    split: Optional[str] = typer.Option(None, "--split", help="Run only tasks of this split (train or test)."),
    condition: Optional[str] = typer.Option(None, "--condition", help="Run only clean or only noise tasks."),
    limit: Optional[int] = typer.Option(None, "--limit", help="Run only the first N tasks (after --ids/--split/--condition, file order)."),
) -> None:
    """Run an agent on tasks in the environment and log its trajectories (resumable; a subset with --ids/--split/--condition/--limit)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from .agents import AGENTS
    from .agents.rollout import rollout, select_tasks
    from .contract import InputError
    from .database import check_tasks_database
    from .env import EnvConfig

    options: dict = {}
    if agent == "openai":
        options = {"base_url": base_url, "model": model, "evidence_check": evidence_check}
    with _cli_errors():  # arguments are checked before any progress output
        require_schema_detail(schema_detail)
        if agent not in AGENTS:
            raise InputError("--agent", agent, f"unknown agent; choose one of {', '.join(sorted(AGENTS))}")
        for name, value in (("-k", k), ("--workers", workers), ("--max-steps", max_steps)):
            if value < 1:
                raise InputError(name, value, "must be >= 1")
        _require_db(db)
        task_list = list(require_tasks(tasks).values())
        check_tasks_database(task_list, db)  # before any episode: tasks of another database are refused
        id_list = [i.strip() for i in ids.split(",") if i.strip()] if ids is not None else None
        chosen = [t.task_id for t in select_tasks(task_list, ids=id_list, split=split, condition=condition, limit=limit)]
        with Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[ok]} ok"), TimeElapsedColumn(), console=err_console,
        ) as bar:
            job = bar.add_task(f"rollout {agent}", total=len(chosen) * k, ok=0)
            ok = {"n": 0}

            def tick(verdict) -> None:  # noqa: ANN001 - Verdict
                ok["n"] += int(verdict.success)
                bar.update(job, advance=1, ok=ok["n"])

            report = rollout(
                agent, task_list, db, out, k=k, workers=workers, agent_options=options,
                config=EnvConfig(max_steps=max_steps, schema_detail=schema_detail), verdicts_out=verdicts,
                on_episode=tick, id_prefix=id_prefix, only=chosen,
            )
            bar.update(job, completed=len(chosen) * k)
    console.print(f"{report.episodes} episodes run, {report.skipped} already in {out}; {report.seconds:.1f} s")
    if report.unreachable:
        console.print(f"error: the model endpoint could not be reached in {report.unreachable} episodes; they were "
                      f"not written to {out}, so running the same command again retries them", style="red")
    for cond in ("clean", "noise"):
        rate = report.rate(cond)
        if rate is not None:
            reasons = ", ".join(f"{r}={n}" for r, n in report.reasons.get(cond, {}).most_common())
            console.print(f"  {cond}: {report.success[cond]}/{report.total[cond]} succeeded ({rate:.1%})" + (f"; reasons: {reasons}" if reasons else ""))
    if report.unreachable:
        raise typer.Exit(1)


@app.command("make-tasks")
def make_tasks_cmd(
    db: Path = typer.Option(..., "--db", help="DuckDB database in the renamed schema (opened read-only)."),
    out: Path = typer.Option(..., "--out", help="JSONL file to write, one Task per line."),
    seed: int = typer.Option(0, "--seed", help="Seed of candidate order, phrasings and splits."),
    pairs: Optional[int] = typer.Option(None, "--pairs", help="At most this many Clean-Noise pairs (default: all programs' quotas)."),
    rewrite_url: Optional[str] = typer.Option(None, "--rewrite-url", help="Optional: OpenAI-compatible endpoint to reword the programs' question templates (off by default; every pair is verified after)."),
    rewrite_model: str = typer.Option("rewriter", "--rewrite-model", help="Model name for --rewrite-url."),
    rewrite_cache: Optional[Path] = typer.Option(None, "--rewrite-cache", help="JSON cache of rewrites (default: <out>.rewrites.json)."),
    difficulty: Optional[str] = typer.Option(None, "--difficulty", help="'hard': keep only pairs whose Noise twin has a near miss and >= 3 stated conditions."),
) -> None:
    """Build verified Clean-Noise task pairs from the database and write them as JSONL."""
    from .construction import make_tasks, print_summary, write_tasks
    from .construction.rewrite import RewriteConfig

    cache = str(rewrite_cache or out.with_name(out.name + ".rewrites.json"))
    rewrite = RewriteConfig(base_url=rewrite_url, model=rewrite_model, cache_path=cache) if rewrite_url else None
    with _cli_errors():
        _require_db(db)
        require_out_file(out)  # before minutes of construction
        tasks, report = make_tasks(db, seed=seed, pairs=pairs, progress=True, rewrite=rewrite, difficulty=difficulty)
        n = write_tasks(tasks, out)
    print_summary(report, console)
    if report.rewrites:
        console.print(f"rewriting: {report.rewrites}")
    console.print(f"wrote {n} tasks ({report.pairs} pairs) to {out}")


@app.command("review-sample")
def review_sample_cmd(
    tasks: Path = typer.Option(..., "--tasks", help="Tasks JSONL (make-tasks output)."),
    n: int = typer.Option(100, "--n", help="Number of pairs to sample, stratified by program."),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder for the review sheets, index and judgement template."),
    seed: int = typer.Option(0, "--seed", help="Seed of the sample."),
    judgements: Optional[Path] = typer.Option(None, "--judgements", help="Reviewers' verdicts (JSONL) to read back instead of sampling."),
) -> None:
    """Write N stratified Clean-Noise pairs as blind-review sheets, or (--judgements) print validity by program, noise level and scope."""
    from rich.table import Table

    from .construction.review import read_judgements, validity_table, write_review_sheets
    from .contract import InputError, load_tasks

    with _cli_errors():
        loaded = list(load_tasks(tasks).values())
        if judgements is None:
            if out is None:
                raise InputError("--out", None, "give --out DIR to write review sheets (or --judgements FILE to read verdicts)")
            sample = write_review_sheets(loaded, n, out, seed=seed)
            console.print(f"wrote {len(sample)} review sheets from {len({p.clean.program for p in sample})} programs to {out}/sheets "
                          f"(index.jsonl, judgements.template.jsonl beside them)")
            return
        table = validity_table(loaded, read_judgements(judgements))
    for dim in ("program", "noise_type", "scope", "all"):
        t = Table(title=f"Validity by {dim.replace('_', ' ')}")
        for col in (dim.replace("_", " "), "pairs", "reviews", "reviews valid", "pairs valid", "pair validity"):
            t.add_column(col, justify="left" if col == dim.replace("_", " ") else "right")
        for key, g in table[dim].items():
            t.add_row(key, str(g["pairs"]), str(g["reviews"]), str(g["reviews_valid"]), str(g["pairs_valid"]), f"{g['pair_validity']:.1%}")
        console.print(t)


def _judge_config(judge: bool, url: Optional[str], model: Optional[str]):  # noqa: ANN202 - JudgeConfig | None
    from .contract import InputError, JudgeConfig

    if not judge:
        return None
    url = url or os.environ.get("EHR_JUDGE_BASE_URL")
    model = model or os.environ.get("EHR_JUDGE_MODEL")
    if not url or not model:
        raise InputError("--judge", None, "needs --judge-url and --judge-model (or $EHR_JUDGE_BASE_URL and $EHR_JUDGE_MODEL)")
    return JudgeConfig(base_url=url, model=model)


@app.command("score")
def score_cmd(
    tasks: Path = typer.Option(..., "--tasks", help="Tasks JSONL."),
    trajectories: Path = typer.Option(..., "--trajectories", help="Trajectories JSONL (one per line)."),
    db: Path = typer.Option(..., "--db", help="DuckDB database the tasks were built on (opened read-only)."),
    out: Path = typer.Option(..., "--out", help="Folder for verdicts.jsonl, summary.json and report.png."),
    workers: int = typer.Option(1, "--workers", help="Worker processes (or Ray actors); the output does not depend on it."),
    backend: str = typer.Option("process", "--backend", help="process, ray or serial."),
    judge: bool = typer.Option(False, "--judge", help="Also ask the LLM judge on Noise abstentions (needs --judge-url/--judge-model)."),
    judge_url: Optional[str] = typer.Option(None, "--judge-url", help="Judge endpoint (default $EHR_JUDGE_BASE_URL)."),
    judge_model: Optional[str] = typer.Option(None, "--judge-model", help="Judge model (default $EHR_JUDGE_MODEL)."),
    item_time_limit: float = typer.Option(120.0, "--item-time-limit", help="Seconds per trajectory before a TIMEOUT verdict."),
    title: str = typer.Option("", "--title", help="Title of the report (e.g. the agent's name)."),
) -> None:
    """Score trajectories: DIR/verdicts.jsonl (one line per input line), DIR/summary.json, DIR/report.png.

    Exits 1 when any input line could not be scored (its error record is still written), 2 on bad arguments
    (tasks whose db_fingerprint is not --db's included: checked before scoring starts).
    """
    import json

    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from .contract import VerifyConfig
    from .database import check_tasks_database
    from .metrics import summarize
    from .scoring import plot_report, print_report, verify_file

    with _cli_errors(ImportError):
        task_map = require_tasks(tasks)
        _require_db(db)
        require_out_dir(out)
        check_tasks_database(task_map.values(), db)  # before scoring: tasks of another database are refused
        config = VerifyConfig(db_path=str(db), judge=_judge_config(judge, judge_url, judge_model))
        total = require_lines(trajectories)
        out.mkdir(parents=True, exist_ok=True)
        with Progress(
            TextColumn("[bold]score"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[ok]} ok"),
            TimeElapsedColumn(), console=err_console,
        ) as bar:
            job = bar.add_task("score", total=total, ok=0)
            ok = {"n": 0}

            def tick(line: str) -> None:
                ok["n"] += int('"success":true' in line)
                bar.update(job, advance=1, ok=ok["n"])

            verify_file(trajectories, task_map, db, out / "verdicts.jsonl", workers=workers, backend=backend,  # type: ignore[arg-type]
                        config=config, on_record=tick, item_time_limit_s=item_time_limit)
        with open(out / "verdicts.jsonl", encoding="utf-8") as fh:
            summary = summarize((json.loads(line) for line in fh), task_map)
        (out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        plot_report(summary, out / "report.png", title=title or trajectories.name)
    print_report(summary, console, title=title)
    console.print(f"wrote {out / 'verdicts.jsonl'}, {out / 'summary.json'}, {out / 'report.png'}")
    if summary["n_errors"]:
        # every input line has its record, but a scoring run with error records is not a clean run:
        # a script chaining `score` must not mistake it for one (exit 1, as `rollout` does on failed episodes)
        by_type = ", ".join(f"{k} {v}" for k, v in summary["errors_by_type"].items())
        err_console.print(f"error: {summary['n_errors']} of {summary['n_records']} input lines could not be "
                          f"scored ({by_type}); their error records are in {out / 'verdicts.jsonl'}")
        raise typer.Exit(1)


@app.command("export")
def export_cmd(
    kind: str = typer.Option(..., "--kind", help="sft (successful trajectories as chat JSONL) or dpo (success/failure pairs per task)."),
    tasks: Path = typer.Option(..., "--tasks", help="Tasks JSONL."),
    trajectories: Path = typer.Option(..., "--trajectories", help="Trajectories JSONL."),
    out: Path = typer.Option(..., "--out", help="JSONL file to write."),
    verdicts: Optional[Path] = typer.Option(None, "--verdicts", help="verdicts.jsonl from `score` (else the trajectories are scored now, which needs --db)."),
    db: Optional[Path] = typer.Option(None, "--db", help="DuckDB database: scores when --verdicts is absent, and gives the schema text of the prompt."),
    workers: int = typer.Option(1, "--workers", help="Worker processes when scoring."),
    max_pairs: Optional[int] = typer.Option(None, "--max-pairs-per-task", help="dpo: at most this many pairs per task."),
    schema_detail: str = typer.Option("compact", "--schema-detail", help="Schema description in the prompt: compact (about 2,000 tokens; each column's meaning one run_sql away) or full."),
) -> None:
    """Export training data: SFT chat examples or DPO preference pairs (the reference is never included).

    Exits 1 when some trajectory lines could not be used (not JSON, not a trajectory, unknown task_id): they
    are listed and the records of the others are still written; 2 on bad arguments (tasks whose db_fingerprint
    is not --db's included).
    """
    from .contract import InputError
    from .database import check_tasks_database
    from .scoring import (
        export_file,
        iter_lines,
        read_verdicts,
        verdict_index,
        verify_batch,
    )

    with _cli_errors():
        require_schema_detail(schema_detail)
        if kind not in ("sft", "dpo"):
            raise InputError("--kind", kind, "expected sft or dpo")
        if db is not None:
            _require_db(db)
        task_map = require_tasks(tasks)
        require_lines(trajectories)
        if db is not None:
            check_tasks_database(task_map.values(), db)  # its schema text and scores must be the tasks' database
        if verdicts is not None:
            index = verdict_index(read_verdicts(verdicts))
        elif db is not None:
            index = verdict_index(verify_batch(iter_lines(trajectories), task_map, db, workers=workers))
        else:
            raise InputError("--verdicts", None, "give --verdicts (from `score`) or --db to score the trajectories now")
        schema = ""
        if db is not None:
            from .env import prompt_schema

            schema = prompt_schema(db, schema_detail)
        skipped: list[str] = []
        n = export_file(kind, trajectories, task_map, out, verdicts=index, schema=schema, max_pairs_per_task=max_pairs,  # type: ignore[arg-type]
                        skipped=skipped)
    console.print(f"wrote {n} {kind} record(s) to {out}")
    if skipped:
        for why in skipped[:20]:
            err_console.print(f"  skipped {why}", highlight=False, soft_wrap=True, markup=False)
        more = f" (first 20 listed)" if len(skipped) > 20 else ""
        err_console.print(f"error: {len(skipped)} trajectory line(s) could not be used{more}; the records of the "
                          f"others are in {out}", highlight=False, markup=False)
        raise typer.Exit(1)


@app.command("serve-tools")
def serve_tools_cmd(
    tasks: Path = typer.Option(..., "--tasks", help="Tasks JSONL."),
    db: Path = typer.Option(..., "--db", help="DuckDB database the tasks were built on (opened read-only)."),
    out: Path = typer.Option(..., "--out", help="Trajectories JSONL: the episode is appended when it ends."),
    task_id: Optional[str] = typer.Option(None, "--task-id", help="Play this task (default: the first task without an episode in --out)."),
    verdicts: Optional[Path] = typer.Option(None, "--verdicts", help="Also append the episode's verdict here."),
    max_steps: int = typer.Option(20, "--max-steps", help="Tool calls per episode before truncation."),
    schema_detail: str = typer.Option("compact", "--schema-detail", help="Schema description in the prompt: compact (about 2,000 tokens; each column's meaning one run_sql away) or full."),
) -> None:
    """MCP tool server over stdio: one episode per client connection (tools get_task, run_sql, run_python, submit).

    Exits 2 on bad arguments, tasks whose db_fingerprint is not --db's included (checked before serving).
    """
    from .adapters.mcp_server import serve_stdio
    from .database import check_tasks_database

    with _cli_errors(ImportError):
        require_schema_detail(schema_detail)
        _require_db(db)
        check_tasks_database(require_tasks(tasks).values(), db)  # before serving: tasks of another database are refused
        serve_stdio(tasks, db, out, task_id=task_id, verdicts=verdicts, max_steps=max_steps, schema_detail=schema_detail)


def main() -> None:  # pragma: no cover - console entry
    """Console entry point."""
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
