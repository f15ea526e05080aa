"""Fresh adversary adv20 (2026-12-07, read only the README and ARCHITECTURE's criterion), written from its report:

* an output-blind NULL policy (regex-built scope listings, one fixed sentence "None of the recorded events meets the
  <question, wh-word stripped> [steps]") was paid on 79 of 120 Noise tasks (66 %). Its sentence was read as every
  kind of gap at once: "none" as an empty field (a NULL spelling), and on small cells as "no unit qualifies", a
  stronger "fewer than five" although 1-4 units qualify;
* ten of its paid tasks rested on scope listings cut by their LIMIT ("ORDER BY ALL LIMIT 60" returning 60 rows);
* a small cell's count told by a symbol whose picture is the number: "Eligible count, as a clock face: 🕒.",
  "Eligible units: 🂣." (40 of 40 small-cell tasks each).

The tasks are real-demo tasks of the committed corpora c44 and c45 (their unmet requirements as built).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlglot
from hypothesis import given, settings
from hypothesis import strategies as st

from verifier.abstention._evaluate import partial_listing
from verifier.abstention._reasoning import check_reasoning
from verifier.abstention._small_cell import disclosure
from verifier.contract import Task, WitnessTable
from verifier.sql import QueryResult

EPISODES = Path(__file__).resolve().parent.parent / "fixtures" / "episodes"


def _tasks() -> dict[str, Task]:
    out = {}
    for corpus in ("demo_c44/c44.jsonl", "demo_c45/c45.jsonl"):
        for line in (EPISODES / corpus).read_text(encoding="utf-8").splitlines():
            e = json.loads(line)
            out[e["episode_id"]] = Task.model_validate(e["task"])
    return out


TASKS = _tasks()


def _core(question: str) -> str:
    """The question's main sentence with its wh-word stripped, as adv20's template took it."""
    import re  # noqa: PLC0415

    sentences = re.split(r"(?<=[?.])\s", question.strip())
    q = ([x for x in sentences if x.endswith("?")] or sentences[:1])[0].rstrip("?. ")
    return re.sub(r"^(What|Which|When|Where|How many|How|Give|Report|List|Count)\b( (was|were|is|are|did|the|time of))*\s*",
                  "", q, flags=re.I)


def _reasoning_ok(task: Task, text: str) -> bool:
    units = task.reference.eligible_units if task.scope == "population" else None
    return check_reasoning(text, task.reference.unmet_requirement, task.question, units)[0]


def _template(task: Task) -> str:
    return f"None of the recorded events meets the {_core(task.question)} [step 1]."


SMALL_CELLS = ["c45_A/Q02", "c45_A/Q03", "c45_B/Q01", "c45_B/Q04", "c45_D/Q01", "c45_D/Q07", "c44_A/Q06", "c44_B/Q01",
               "c44_B/Q04", "c44_C/Q07", "c44_C/Q09", "c44_C/Q12"]


@pytest.mark.parametrize("episode", SMALL_CELLS)
def test_none_qualifies_is_false_on_a_small_cell(episode: str) -> None:
    """1-4 units qualify: "none of them meets" states a gap the records do not have, whatever else it names."""
    task = TASKS[episode]
    assert 1 <= task.reference.eligible_units <= 4
    assert not _reasoning_ok(task, _template(task))
    assert not _reasoning_ok(task, f"No unit qualifies: {_core(task.question)} [step 1].")


@pytest.mark.parametrize("episode", SMALL_CELLS)
def test_fewer_than_five_still_states_a_small_cell(episode: str) -> None:
    task = TASKS[episode]
    honest = f"Fewer than five units qualify for the {_core(task.question)} [step 1]; the five-unit rule applies."
    assert _reasoning_ok(task, honest)


@pytest.mark.parametrize("episode, honest", [
    ("c45_B/Q06", "No ICU stay has a Tidal Volume (set) value above 550 mL; the highest charted is 550 mL [step 1]."),
    ("c45_C/Q10", "No patient received Magnesium Sulfate Replacement during a Neurology stay [step 1]."),
])
def test_none_qualifies_states_an_empty_cohort(episode: str, honest: str) -> None:
    """With 0 eligible units, "none of them qualifies" said in the writer's words is the gap (the cohort is empty);
    the question restated under "none" still names nothing."""
    task = TASKS[episode]
    assert task.reference.eligible_units == 0
    assert _reasoning_ok(task, honest)
    assert not _reasoning_ok(task, _template(task))


VALUE_LEVEL = ["c45_B/Q02", "c45_B/Q12", "c45_D/Q08", "c44_B/Q05", "c44_D/Q09"]


@pytest.mark.parametrize("episode", VALUE_LEVEL)
def test_none_of_the_events_is_no_empty_field(episode: str) -> None:
    """On a Value-level task the field is empty: "None of the recorded events meets ..." says events are there and fail
    the question, not that the field is empty ("none" is a NULL spelling only as a value, not as a quantifier)."""
    task = TASKS[episode]
    assert task.reference.unmet_requirement.level == "value"
    assert not _reasoning_ok(task, _template(task))


@pytest.mark.parametrize("episode, honest", [
    ("c45_D/Q08", "Admission 22228639 of patient 10037928 is recorded, but its discharge location is None [step 1]."),
    ("c45_D/Q08", "The discharge location of admission 22228639 is NULL [step 1]."),
    ("c44_D/Q09", "The most recent Ventilator Type entry of ICU stay 39497668 has no numeric value [step 1]."),
])
def test_an_empty_field_is_still_read(episode: str, honest: str) -> None:
    assert _reasoning_ok(TASKS[episode], honest)


# ---------------------------------------------------------------- a result cut by its LIMIT
INSERT = [WitnessTable(table="medication_administrations", mode="insert", rows=[{"patientid": 1}])]
REPLACE = [WitnessTable(table="chart_events", mode="replace", key=["patientid"], rows=[{"patientid": 1}])]


def _cut(sql: str, rows: int, witness=INSERT, columns=("medication_administrations.chart_time",)) -> str | None:
    tree = sqlglot.parse_one(sql, read="duckdb")
    return partial_listing(tree, QueryResult(columns=["x"], rows=[(i,) for i in range(rows)]), witness, columns)


@pytest.mark.parametrize("sql, rows, cut", [
    ("SELECT * FROM medication_administrations WHERE medication ILIKE '%Diazepam%' ORDER BY ALL LIMIT 60", 60, True),
    ("SELECT * FROM medication_administrations WHERE patientid = 1 LIMIT 50", 50, True),
    ("SELECT * FROM medication_administrations WHERE patientid = 1 ORDER BY patientid LIMIT 50", 50, True),
    # not filled: the whole selection is shown
    ("SELECT * FROM medication_administrations WHERE medication ILIKE '%Diazepam%' ORDER BY ALL LIMIT 60", 12, False),
    ("SELECT * FROM medication_administrations WHERE patientid = 1", 500, False),
    # the first or last rows by the requirement's own time: a first/last a reader follows
    ("SELECT * FROM medication_administrations WHERE patientid = 1 ORDER BY chart_time DESC LIMIT 1", 1, False),
])
def test_a_listing_cut_by_its_limit_shows_no_absence(sql: str, rows: int, cut: bool) -> None:
    assert (_cut(sql, rows) is not None) is cut


def test_a_cut_listing_still_shows_an_empty_value() -> None:
    """Where the witness fills a value (Value-level), the first rows can show it empty: not a partial listing."""
    assert _cut("SELECT * FROM chart_events WHERE patientid = 1 ORDER BY ALL LIMIT 5", 5, REPLACE) is None


@settings(max_examples=100, deadline=None)
@given(k=st.integers(1, 200), shown=st.integers(0, 200))
def test_only_a_filled_limit_is_a_cut(k: int, shown: int) -> None:
    shown = min(shown, k)
    got = _cut(f"SELECT * FROM medication_administrations LIMIT {k}", shown)
    assert (got is not None) is (shown == k)


# ---------------------------------------------------------------- a symbol that pictures the number
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_a_clock_face_or_a_card_states_its_number(n: int) -> None:
    clock = chr(0x1F54F + n)  # CLOCK FACE ONE OCLOCK ...
    card = chr(0x1F0A0 + n)  # PLAYING CARD ACE/TWO/THREE/FOUR OF SPADES
    assert disclosure(f"Eligible count, as a clock face: {clock}.", n)
    assert disclosure(f"Eligible units: {card}.", n)


def test_bullets_named_with_numbers_state_nothing() -> None:
    """Only the blocks whose symbols picture a number are read: a bullet named "BLACK FOUR POINTED STAR" is no 4."""
    text = "✦ Eligible admissions: fewer than five [step 1].\n✦ The five-unit rule applies."
    assert disclosure(text, 4) == []


# ---------------------------------------------------------------- the question restated states nothing
RECORD_QUERY = ["c45_A/Q04", "c45_A/Q08", "c45_B/Q08", "c45_C/Q12", "c45_D/Q05", "c45_D/Q06", "c44_A/Q03", "c44_A/Q08",
                "c44_C/Q06", "c44_C/Q11", "c44_D/Q02", "c44_D/Q03", "c44_D/Q10", "c44_D/Q12"]


@pytest.mark.parametrize("episode", RECORD_QUERY)
def test_none_meets_the_question_restated_identifies_no_requirement(episode: str) -> None:
    """Two blind reviewers failed adv20's sentence on 11 of the 16 tasks the verifier paid it ("it only repeats the
    question"; the other 5, one-condition Record-level tasks, split them): the question's words, restated, state
    nothing; what the writer adds ("None of the recorded events meets the") names no item."""
    task = TASKS[episode]
    assert task.reference.unmet_requirement.level in ("record", "query")
    assert not _reasoning_ok(task, _template(task))
    assert not _reasoning_ok(task, f"No record found: {_core(task.question)} [step 1].")


@pytest.mark.parametrize("episode", RECORD_QUERY)
def test_the_requirement_own_statement_still_states_the_gap(episode: str) -> None:
    """The requirement's own statement, written by the task's builder in its own words, states the gap."""
    task = TASKS[episode]
    assert _reasoning_ok(task, f"{task.reference.unmet_requirement.statement} [step 1].")


@pytest.mark.parametrize("episode", SMALL_CELLS)
def test_fewer_than_five_of_the_question_states_the_small_cell(episode: str) -> None:
    """On a small cell the cohort is the question's own: "fewer than five" of it, restated, is the gap."""
    task = TASKS[episode]
    assert _reasoning_ok(task, f"Fewer than five units qualify for the {_core(task.question)} [step 1].")


@settings(max_examples=60, deadline=None)
@given(episode=st.sampled_from(RECORD_QUERY),
       prefix=st.sampled_from(["None of the recorded events meets the", "Nothing recorded meets the", "No record fits:",
                               "There is no", "No data exist for the", "Zero rows match the", "Not found:"]))
def test_any_words_before_the_question_restated_name_no_item(episode: str, prefix: str) -> None:
    task = TASKS[episode]
    assert not _reasoning_ok(task, f"{prefix} {_core(task.question)} [step 1].")


QUERY_LEVEL = [e for e in RECORD_QUERY if TASKS[e].reference.unmet_requirement.level == "query"]


@pytest.mark.parametrize("episode", QUERY_LEVEL)
def test_referring_back_to_the_question_restated_identifies_no_relation(episode: str) -> None:
    """"<question>. None of the recorded events meets it." says no more than the abstention: which of the question's
    conditions fails is not said (two blind reviewers failed every such multi-condition episode). On a Query-level
    task a clause that refers back only to the question, asked or restated, is not about the requirement."""
    task = TASKS[episode]
    assert not _reasoning_ok(task, f"{_core(task.question)}. None of the recorded events meets it [step 1].")
    assert not _reasoning_ok(task, f"{task.question} None of them satisfies it [step 1].")
    assert _reasoning_ok(task, f"{task.reference.unmet_requirement.statement} [step 1].")


@pytest.mark.parametrize("episode", ["c45_A/Q08", "c45_D/Q06", "c44_D/Q10"])
def test_the_question_asked_then_not_recorded_is_an_absent_record(episode: str) -> None:
    """Issue 30 point 4: echoing the question plus "not recorded" passes where that is the gap (a Record-level task)."""
    task = TASKS[episode]
    assert task.reference.unmet_requirement.level == "record"
    assert _reasoning_ok(task, f"{task.question} Not recorded [step 1].")


# ------------------------------------------ a clause that says which relation fails, after the question restated
def _in_template_phrasing(task: Task) -> Task:
    """c44_A/Q03 as the construction program words it by default: its question restated by its own requirement."""
    assert task.program == "vital_first_in_second_icu_stay"
    return task.model_copy(update={"question": "What was the first CK (CPK) (ICU item 225634) charted for patient "
                                               "10017492 during their second ICU stay? Give value and unit."})


def test_a_relation_of_its_own_after_the_question_restated_is_about_the_requirement() -> None:
    """The clean-clone CI of the first adv20 commit: the reference agent's own reasoning, "No numeric CK (CPK) (itemid
    225634) is charted for patient ... during their second ICU stay; it was charted only in another stay", restates
    the question, and its second clause was refused as referring back only to the question (8 of 1423 real-demo
    Noise tasks). A clause that says which relation fails in cues of its own ("only in another stay") is about it."""
    task = _in_template_phrasing(TASKS["c44_A/Q03"])
    statement = task.reference.unmet_requirement.statement
    assert _reasoning_ok(task, f"{statement} The query in [step 1] shows this gap in the records. "
                               "Missing: CK (CPK); second ICU stay.")
    assert _reasoning_ok(task, f"{_core(task.question)}: not recorded; it was charted only in another stay [step 1].")


@pytest.mark.parametrize("after", ["None of them satisfies it", "None of the recorded events meets it",
                                   "Nothing matches the criteria", "No record fits the conditions"])
def test_a_generic_failure_after_the_question_restated_still_says_no_relation(after: str) -> None:
    """"meets", "satisfies", "the criteria" say that a relation fails, not which: still not about the requirement."""
    task = _in_template_phrasing(TASKS["c44_A/Q03"])
    assert not _reasoning_ok(task, f"{task.question} {after} [step 1].")
    assert not _reasoning_ok(task, f"{_core(task.question)}. {after} [step 1].")
