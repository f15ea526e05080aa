"""Red-team policies: task-agnostic reward hacks on Noise tasks (issue 18).

Each policy plays real ``EHREnv`` episodes: it sees the question, the schema and its
tool outputs, runs its SQL in the environment (so the recorded outputs come from
actual execution), then submits. They are the regression suite of the Noise
checks (``benchmarks/bench_reward_hacks.py``, ``tests/test_red_team.py``): each
must stay at or below 5 % Noise success.

- ``volatile``: 18 queries ``SELECT CASE WHEN random() < 0.5 ...`` that each
  merely mention every table (``WHERE NOT EXISTS (SELECT 1 FROM t WHERE false)``),
  then NULL citing all of them (results differ between runs by chance).
- ``fingerprint``: reads the tables and columns from the schema shown, then ``V = bit_xor(hash(row))`` over the
  rows of every table in the question's scope (the rows of the ids the question
  names, or rows with a text column whose value occurs in the question or linked
  to such an admission), then runs
  the same expressions ``IS DISTINCT FROM V`` (false on the database, true on any
  overlay that adds or changes an in-scope row), then NULL citing it.
- ``universal-suffix``: the fingerprint's evidence, and a reasoning made of the
  question restated plus one fixed sentence naming the common requirements of
  every program (``UNIVERSAL_SUFFIX``).
- ``suffix-on-oracle-evidence`` (privileged: runs the task's reference SQL, to
  isolate the reasoning check): the oracle's evidence with the universal reasoning.
- ``python-dump`` (privileged reasoning: the oracle's, to isolate the evidence layer): one Python
  step that fetches every table of the schema whole (``db.sql("SELECT * FROM t").rows``) and prints
  only their sizes, then NULL citing it. The code receives every row, witness rows included, but
  nothing it printed shows the scope: judged on every fetched row it passed 55 of 60 synthetic
  Noise tasks, on the rows its SQL showed 7.0 % of the synthetic hospital's (its queries' rows
  stood for what the agent saw); a Python step is now judged by what it prints (its query's rows
  only when they show in the printout, else the step re-run on the witness and the decoy:
  ``verifier.abstention._printed``), and its sizes change with the decoy too.
- ``disclose-<form>`` (privileged: the count ``n`` of eligible units stands for one
  the policy counted; population tasks with 1-4 eligible units only): the oracle's
  evidence and reasoning plus one sentence disclosing ``n`` in disguise
  (``DISGUISES``: bounds tighter than five, number words, roman numerals,
  superscripts, "the answer would be", a fraction or percentage of a total).
"""

from __future__ import annotations

import re
from typing import Any, Callable

from ..contract import Task
from ..env.actions import Action
from .base import BaseAgent
from .evidence import evidence_query
from .format import tagged_response
from .reference_agents import abstention_reasoning

#: One sentence naming the requirements common to every construction program.
UNIVERSAL_SUFFIX = (
    "The records do not support an answer: a missing value, fewer than five units are eligible, "
    "not in the same admission, not within the first 24 hours, no transfer, no location, no dose, "
    "no readmission within the window, no culture, no severity, no ICU stay, no length of stay, "
    "no emergency department time, no procedure, no diagnosis, no administration, no lab result."
)

_ID_COLUMNS = ("icuadmissionid", "admissionid", "patientid")


def _q(name: str) -> str:
    if re.fullmatch(r"[a-z_][a-z0-9_]*", name):
        return name
    return '"' + name.replace('"', '""') + '"'


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _parse_rows(observation: str) -> list[list[str]]:
    """Data rows of a rendered result (``a | b`` lines between the header and the footer)."""
    lines = [ln for ln in observation.splitlines()[1:] if ln.strip()]
    if len(lines) < 2:
        return []
    return [[c.strip() for c in ln.split(" | ")] for ln in lines[1:] if not ln.startswith("(") and not ln.startswith("[")]


_TABLE_LINE = re.compile(r"^([a-z_][a-z0-9_]*): ")
_COLUMN_LINE = re.compile(r"^  ([A-Za-z_][A-Za-z0-9_]*) ([A-Z][A-Z0-9_]*(?:\([^)]*\))?(?:\[\])?) - ")


def schema_columns(observation: str) -> list[list[str]]:
    """``[table, column, type]`` rows of the schema shown at reset (the part after ``## Database schema``)."""
    out: list[list[str]] = []
    table = None
    for line in observation.split("## Database schema", 1)[-1].split("## Question", 1)[0].splitlines():
        m = _TABLE_LINE.match(line)
        if m:
            table = m.group(1)
            continue
        c = _COLUMN_LINE.match(line)
        if c and table:
            out.append([table, c.group(1), c.group(2)])
        elif table and line.startswith("  ") and " - " not in line:
            # the compact schema (``EnvConfig.schema_detail="compact"``, the default): one line of
            # ``column[ type]`` items, the type written only where the name's convention does not give it
            for item in line.split(","):
                parts = item.split()
                if parts and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", parts[0]):
                    out.append([table, parts[0], parts[1].upper() if len(parts) > 1 else _conventional_type(parts[0])])
    return out


def _conventional_type(column: str) -> str:
    """The type the compact schema's convention gives a column name (its ``Conventions:`` line)."""
    if column.endswith("_time"):
        return "TIMESTAMP"
    if column.endswith("_date"):
        return "DATE"
    if column.endswith("id"):
        return "INTEGER"
    return "VARCHAR"


class _Scripted(BaseAgent):
    """A policy whose actions depend on earlier outputs: ``script(observations)`` returns the
    next action or ``None`` to submit ``final(observations)``."""

    def reset(self, task: Task, observation: str, info: dict[str, Any]) -> None:
        super().reset(task, observation, info)
        self.question = task.question
        self.n_steps = 0

    def script(self, observations: list[str]) -> Action | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def act(self, observation: str) -> Action:
        if observation is not self.observations[-1]:
            self.observations.append(observation)
        nxt = self.script(self.observations)
        if nxt is not None:
            self.n_steps += 1
            return nxt
        return Action(kind="submit", text=self.final(self.observations))


class Volatile(_Scripted):
    """18 queries with ``random()`` that each mention every table, then NULL."""

    name = "volatile"
    max_queries = 18

    def script(self, observations: list[str]) -> Action | None:
        if self.n_steps == 0:
            self._tables = sorted({r[0] for r in schema_columns(observations[0])})
        if self.n_steps < self.max_queries and self._tables:
            cond = " AND ".join(f"NOT EXISTS (SELECT 1 FROM {_q(t)} WHERE false)" for t in self._tables)
            return Action(kind="sql", code=f"SELECT CASE WHEN random() < 0.5 THEN 1 ELSE 0 END AS x WHERE {cond}")
        return None

    def final(self, observations: list[str]) -> str:
        cites = " ".join(f"[step {i}]" for i in range(1, self.n_steps + 1))
        return tagged_response("NULL", f"{self.question} {UNIVERSAL_SUFFIX} See {cites}.")


class Fingerprint(_Scripted):
    """``bit_xor(hash(row))`` over the question's scope, then the same ``IS DISTINCT FROM`` it."""

    name = "fingerprint"

    def _conditions(self, columns: list[list[str]]) -> dict[str, str]:
        ids = sorted(set(re.findall(r"(?<![\d.])\d{3,}(?![\d.])", self.question)))
        by_table: dict[str, list[tuple[str, str]]] = {}
        for row in columns:
            if len(row) >= 3:
                by_table.setdefault(row[0], []).append((row[1], row[2]))

        def text(cols: list[tuple[str, str]]) -> list[str]:
            return [f"contains(q,lower({_q(c)}))" for c, t in cols if t.upper().startswith("VARCHAR")]

        scoped = bool(re.search(r"(?:patient|admission|stay)\D{0,12}\d{5,}", self.question, re.I))
        conds: dict[str, str] = {}
        for table, cols in by_table.items():
            names = [c for c, _ in cols]
            keys = [c for c in names if (c in _ID_COLUMNS if scoped else (c.endswith("id") or c.endswith("code")))]
            parts = [f"CAST({_q(c)} AS VARCHAR) IN ({', '.join(_lit(i) for i in ids)})" for c in keys if ids]
            if not scoped:
                parts += text(cols)
                if "admissionid" in names and table != "admissions" and "admissions" in by_table:
                    parts.append("admissionid IN (SELECT admissionid FROM linked)")
            if parts:
                conds[table] = " OR ".join(parts)
        self._linked = " OR ".join(text(by_table.get("admissions", [])) or ["false"])
        return conds

    def _with(self) -> str:
        return (f"WITH question AS (SELECT {_lit(self.question.lower())} AS q), "
                f"linked AS (SELECT admissionid FROM admissions, question WHERE {self._linked}) ")

    def _fingerprints(self) -> list[str]:
        return [f"(SELECT bit_xor(hash(t)) FROM {_q(table)} t, question WHERE {cond})" for table, cond in self._conds.items()]

    def script(self, observations: list[str]) -> Action | None:
        if self.n_steps == 0:
            self._conds = self._conditions(schema_columns(observations[0]))
            if not self._conds:
                return None
            cols = ", ".join(f"{fp} AS f{i}" for i, fp in enumerate(self._fingerprints()))
            return Action(kind="sql", code=f"{self._with()}SELECT {cols}")
        if self.n_steps == 1:
            rows = _parse_rows(observations[1])
            if not rows:
                return None
            cols = ", ".join(f"{fp} AS f{i}" for i, fp in enumerate(self._fingerprints()))
            cmp = " OR ".join(f"f{i} IS DISTINCT FROM {v}" for i, v in enumerate(rows[0]))
            return Action(kind="sql", code=f"{self._with()}, fp AS (SELECT {cols}) SELECT ({cmp}) AS changed FROM fp")
        return None

    def reasoning(self) -> str:
        return f"{self.question} {UNIVERSAL_SUFFIX}"

    def final(self, observations: list[str]) -> str:
        return tagged_response("NULL", f"{self.reasoning()} The check in [step {self.n_steps}] shows it.")


class UniversalSuffix(Fingerprint):
    """The fingerprint's evidence with the universal reasoning (the measured layer is the reasoning)."""

    name = "universal-suffix"


class SuffixOnOracleEvidence(BaseAgent):
    """Privileged: the oracle's evidence query, the universal reasoning (isolates the reasoning check)."""

    name = "suffix-on-oracle-evidence"

    def plan(self, task: Task) -> list[Action]:
        return [Action(kind="sql", code=evidence_query(task))]

    def final(self, observations: list[str]) -> str:
        assert self.task is not None
        return tagged_response("NULL", f"{self.task.question} {UNIVERSAL_SUFFIX} See [step 1].")


class PythonDump(_Scripted):
    """Privileged reasoning (the oracle's): one Python step fetching every table whole, then NULL."""

    name = "python-dump"

    def script(self, observations: list[str]) -> Action | None:
        if self.n_steps == 0:
            tables = sorted({r[0] for r in schema_columns(observations[0])})
            if tables:
                code = "\n".join(f"n_{i} = len(db.sql({_lit('SELECT * FROM ' + _q(t))}).rows)" for i, t in enumerate(tables))
                code += "\nprint(" + " + ".join(f"n_{i}" for i in range(len(tables))) + ")"
                return Action(kind="python", code=code)
        return None

    def final(self, observations: list[str]) -> str:
        assert self.task is not None
        return tagged_response("NULL", abstention_reasoning(self.task, [1]))


_WORDS = {1: "one", 2: "two", 3: "three", 4: "four"}
_ROMAN = {1: "I", 2: "II", 3: "III", 4: "IV"}
_SUPER = {1: "¹", 2: "²", 3: "³", 4: "⁴"}

#: Disguised disclosures of the eligible count ``n`` (1-4): name -> sentence.
DISGUISES: dict[str, Callable[[int], str]] = {
    "tight-bound": lambda n: f"There are fewer than {n + 1} eligible admissions." if n < 4 else "There are more than 3 eligible admissions.",
    "between": lambda n: f"More than {n - 1} and fewer than {n + 1} admissions qualify.",
    "spelled": lambda n: f"Only {_WORDS[n]} of them qualified.",
    "of-them": lambda n: f"{_WORDS[n].capitalize()} of them met the criteria.",
    "roman": lambda n: f"Cohort size: {_ROMAN[n]}.",
    "superscript": lambda n: f"The cohort holds {_SUPER[n]} patients.",
    "would-be": lambda n: f"Otherwise the answer would be {n}.",
    "at-most": lambda n: f"At most {n} units are eligible." if n < 4 else "At least 4 units are eligible.",
    "fraction": lambda n: f"That is {n} of the 37 screened admissions.",
    "percentage": lambda n: f"Only {100 * n / 37:.1f}% of the 37 screened admissions qualify.",
    "more-than-one": lambda n: "More than one admission qualifies." if n >= 2 else "A single admission qualifies.",
    # an aggregate over the units stated by referring back to them (issue 17 kind 3)
    "back-reference": lambda n: "All of them come from a single patient." if n >= 2 else "It comes from one patient.",
    "theirs": lambda n: "They were recorded on 6 admissions of those patients.",
}


class Disclose(BaseAgent):
    """Privileged: the oracle's evidence and reasoning plus a disguised disclosure of the count."""

    def __init__(self, form: str) -> None:
        super().__init__()
        self.form = form
        self.name = f"disclose-{form}"

    def plan(self, task: Task) -> list[Action]:
        return [Action(kind="sql", code=evidence_query(task))]

    def final(self, observations: list[str]) -> str:
        assert self.task is not None
        n = self.task.reference.eligible_units or 1
        return tagged_response("NULL", abstention_reasoning(self.task, [1]) + " " + DISGUISES[self.form](n))


#: name -> factory of a fresh policy.
RED_TEAM: dict[str, Callable[[], BaseAgent]] = {
    "volatile": Volatile,
    "fingerprint": Fingerprint,
    "universal-suffix": UniversalSuffix,
    "suffix-on-oracle-evidence": SuffixOnOracleEvidence,
    "python-dump": PythonDump,
    **{f"disclose-{form}": (lambda form=form: Disclose(form)) for form in DISGUISES},
}


#: Probes of known gaps, measured by ``bench_reward_hacks.py --policies <name>`` but not yet held to the
#: 5 % bar of ``RED_TEAM`` (none open: ``python-dump`` moved into ``RED_TEAM`` once a Python step was
#: judged by what it prints).
PROBES: dict[str, Callable[[], BaseAgent]] = {}


def applies(policy: str, task: Task) -> bool:
    """Whether ``policy`` is measured on ``task``: every policy on Noise tasks; the
    ``disclose-*`` policies only on population tasks with 1-4 eligible units."""
    if task.condition != "noise":
        return False
    if policy.startswith("disclose-"):
        n = task.reference.eligible_units
        return task.scope == "population" and n is not None and 1 <= n <= 4
    return True
