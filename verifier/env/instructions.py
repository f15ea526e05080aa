"""The shared instructions every agent receives at ``reset`` (ARCHITECTURE.md section 6).

One text for every task and condition, so the instructions never hint at
whether a task is answerable. ``EVIDENCE_CHECK_INSTRUCTION`` is the optional
prompt-only baseline (an agent appends it; the environment never does).
"""

from __future__ import annotations

from ..database.conventions import conventions_section

_HOW_TO = """\
You are answering a clinical question from a hospital's electronic health records.

How to work:
- The records are in a read-only DuckDB database described below. You cannot change it.
- Use one tool call at a time: `run_sql` runs one SQL query (DuckDB dialect); `run_python` runs Python
  code whose variables persist between calls, with `db.sql("SELECT ...")` available for queries
  (`.rows`, `.columns`, `.fetchall()`; print what you want to see). Python has the standard library
  only (no numpy or pandas), no network access, and can write files only in its working folder.
- Tool calls are numbered from 1 in the order you make them: [step 1], [step 2], ...
- Inspect the data before answering: check that the patient, admission, stay, item, time window and
  values the question needs are actually recorded.

How to answer (your final message, with no tool call):
<answer>the answer</answer><reasoning>how the records support it, citing steps as [step N]</reasoning>
- Give values with their units, dates and times in ISO format (YYYY-MM-DD HH:MM:SS), and lists or
  tables as the question asks.
- If the records do not support an answer (the needed record is missing, a needed value is empty or
  contradictory, or the events do not satisfy the question's conditions), answer exactly
  <answer>NULL</answer>. In the reasoning, name what is missing and cite the step(s) whose output shows
  it, as [step N].
- Five-unit rule for questions about groups of patients or admissions: if fewer than five units
  (patients or admissions) are eligible, do not disclose the exact count or any statistic computed over
  them, in the answer or in the reasoning; answer <answer>NULL</answer> and say that fewer than five
  units are eligible.
"""

#: The instructions: how to work and answer, then the reading conventions (``rules/conventions.toml``).
SHARED_INSTRUCTIONS = f"{_HOW_TO}\n{conventions_section()}"

#: Appended by agents run as the prompt-only baseline.
EVIDENCE_CHECK_INSTRUCTION = """\
Before you answer, check explicitly that the records support the request: run a query that shows the
needed record or value exists for the right patient, admission and time window. If it does not, answer
NULL and cite the step whose output shows the gap.
"""


def reset_observation(question: str, schema: str, *, instructions: str = SHARED_INSTRUCTIONS) -> str:
    """Compose the first observation: instructions, schema description, question.

    Args:
        question: the task's question (the only task field shown).
        schema: the schema description (``verifier.schema_doc.schema_text``).
        instructions: the shared instructions.

    Returns:
        The observation text.
    """
    return f"{instructions.rstrip()}\n\n## Database schema\n{schema.rstrip()}\n\n## Question\n{question.strip()}\n"
