"""Response parsing: formats, NULL spellings, citations, errors (verifier.parse)."""

from __future__ import annotations

import pytest

from verifier.parse import ParsedResponse, is_null_answer, parse


@pytest.mark.parametrize(
    "text, answer, reasoning, fmt",
    [
        ("<answer>5.2 mEq/L</answer>\n<reasoning>lab_events</reasoning>", "5.2 mEq/L", "lab_events", "tags"),
        ("<ANSWER> 7 </ANSWER><Reasoning>r</Reasoning>", "7", "r", "tags"),
        ("<final_answer>yes</final_answer>", "yes", "", "tags"),
        ("Answer: 5.2\nReasoning: because", "5.2", "because", "sections"),
        ("**Answer:** 5.2 mmol/L\n\n**Reasoning:** from step 2", "5.2 mmol/L", "from step 2", "sections"),
        ("**Answer**: 98.6 °F\n**Reasoning**: chart", "98.6 °F", "chart", "sections"),
        ("## Answer\n\n42\n\n## Reasoning\ncounted", "42", "counted", "sections"),
        ("Final answer: **furosemide**.", "furosemide", "", "sections"),
        ("Answer: 12\n\nThe count comes from admissions.", "12", "The count comes from admissions.", "sections"),
        ('{"answer": "2180-07-23", "reasoning": "admit date"}', "2180-07-23", "admit date", "json"),
        ('Result:\n```json\n{"Answer": 3, "Explanation": "x"}\n```', "3", "x", "json"),
    ],
)
def test_formats(text: str, answer: str, reasoning: str, fmt: str) -> None:
    p = parse(text)
    assert p.error is None
    assert (p.answer_text, p.reasoning, p.format) == (answer, reasoning, fmt)
    assert not p.abstained


def test_last_answer_tag_wins_and_json_structure_is_kept() -> None:
    assert parse("<answer>1</answer> on second thought <answer>2</answer>").answer_text == "2"
    p = parse('{"answer": [{"id": 1}], "reasoning": "r"}')
    assert p.answer_json == [{"id": 1}]


@pytest.mark.parametrize(
    "answer",
    ["NULL", "null", "None", "N/A", "n/a", "**NULL**", "`null`", '"NULL"', "NULL.", "NULL - no potassium recorded",
     "None (the lab was never drawn)", "N/A; not documented"],
)
def test_null_spellings_abstain(answer: str) -> None:
    assert is_null_answer(answer)
    assert parse(f"Answer: {answer}\nReasoning: nothing in [step 2]").abstained


@pytest.mark.parametrize(
    "answer",
    ["insufficient data", "cannot be determined", "None of the above drugs", "Na", "NA", "0", "no", "nullity",
     "5.2 mmol/L"],
)
def test_prose_and_values_are_not_null(answer: str) -> None:
    assert not is_null_answer(answer)
    assert not parse(f"<answer>{answer}</answer>").abstained


@pytest.mark.parametrize("answer", ["NULL (or 2, the severity on the other DRG)", "NULL; otherwise 4", "NULL, or 3.1 mg/dL",
                                    "null (alternatively: 12 days)", "None - else 7"])
def test_null_offering_an_alternative_value_is_a_hedge_not_an_abstention(answer: str) -> None:
    """A NULL that offers a value beside it hedges between abstaining and answering (red-team study:
    "NULL (or 1, ...)" passed as an abstention; blind reviewers failed it)."""
    assert not is_null_answer(answer)
    assert not parse(f"<answer>{answer}</answer><reasoning>r [step 1]</reasoning>").abstained


@pytest.mark.parametrize("answer", ["NULL (fewer than 5 admissions or patients are eligible)", "NULL (or none)",
                                    "NULL (not recorded in step 2 or step 3)", "NULL (redacted or missing)",
                                    # a review: an "or" inside the statement of the gap offers no value
                                    "NULL (no lactate within the first 24 or 48 hours)", "NULL (see steps 3 or 4)",
                                    "NULL; no ICD-9 or 10 code is billed", "NULL (no admission 22595853 or 22595854 row)"])
def test_null_with_an_or_that_offers_no_value_abstains(answer: str) -> None:
    assert is_null_answer(answer)


def test_json_null_is_abstention() -> None:
    p = parse('{"answer": null, "reasoning": "no row [step 4]"}')
    assert p.abstained and p.citations == [4]


@pytest.mark.parametrize(
    "text, cited",
    [
        ("Answer: NULL\nReasoning: see [step 3]", [3]),
        ("Answer: NULL\nReasoning: [steps 2, 4] and (step 5)", [2, 4, 5]),
        ("Answer: NULL [Step #7]\nReasoning: [steps 2-4]", [2, 3, 4, 7]),
        ("Answer: NULL\nReasoning: steps 2 and 4 without brackets", [2, 4]),
        ("Answer: 1\nReasoning: [step 0] is not a step", []),
        # issue 18 point 3: the notations real agents use
        ("Answer: NULL\nReasoning: no chloride row [step 1, step 3]", [1, 3]),
        ("Answer: NULL\nReasoning: Step no. 2 lists every transfer", [2]),
        ("Answer: NULL\nReasoning: as steps 1 to 3 show", [1, 2, 3]),
        ("Answer: NULL\nReasoning: in the second step the table was empty", [2]),
        ("Answer: NULL\nReasoning: as a first step I read the schema; footsteps 4; a 3-step plan", []),
    ],
)
def test_citations(text: str, cited: list[int]) -> None:
    assert parse(text).citations == cited


@pytest.mark.parametrize(
    "text, why",
    [("", "empty"), ("   \n", "empty"), ("The potassium is 5.2.", "no Answer"), ("Answer:   \nReasoning: x", "empty"),
     ("<answer></answer>", "empty")],
)
def test_unparseable_responses_have_a_reason(text: str, why: str) -> None:
    p = parse(text)
    assert p.error is not None and why in p.error
    assert not p.ok


def test_non_text_input_does_not_raise() -> None:
    assert parse(None).error  # type: ignore[arg-type]


def test_parsed_response_is_frozen() -> None:
    p = parse("Answer: 1")
    assert isinstance(p, ParsedResponse)
    with pytest.raises(AttributeError):
        p.answer_text = "2"  # type: ignore[misc]


@pytest.mark.parametrize("echo", ["<answer>...</answer>", "<answer>value or NULL</answer>", "<answer>the answer</answer>",
                                  "<answer>your answer here</answer>"])
def test_an_echoed_format_placeholder_is_not_a_second_answer(echo: str) -> None:
    """A review: an agent that quotes the output format before answering NULL keeps its NULL."""
    p = parse(f"As instructed, the format is {echo}. <answer>NULL</answer><reasoning>no row [step 1]</reasoning>")
    assert p.abstained and p.answers == (), p
