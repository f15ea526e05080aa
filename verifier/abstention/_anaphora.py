"""A number word that refers back to the things the question names, not to the cohort (blind corpus
c35, agent J, Q01).

"Diagnosis Z66 ... is coded in a number of admissions [step 1], and procedure D7021ZZ ... is present
[step 2]. Intersecting the two on the same admission id [step 3] yields fewer than five eligible
admissions": "the two" is a pronoun whose antecedent is the two codes, and the five-unit rule read it
as a count of two admissions on a task with two eligible units. What decides is grammar, not a list of
phrasings: a definite article and a number with no noun after it (the next word is a preposition, a
conjunction or punctuation), the object of a word before it in the sentence, is a pronoun, and it
counts its antecedent (a subject, "The two ... are eligible", may be the cohort: never resolved). When the question names exactly ``N``
things (the task's string parameters: codes, items, names) and the response has named every one of
them before "the N", the antecedent is those things; the phrase is then read as "those". A number with
a noun after it ("the two admissions") is never a pronoun, and "the N" before any of the named things
appears, or with another ``N``, still counts whatever it counts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_WORDS = {"two": 2, "three": 3, "four": 4, "both": 2}
#: "the N" as the object of a word before it in its sentence ("intersecting the two", "of the two"), with a
#: preposition, a conjunction or punctuation after it: the number stands without a noun. A sentence's
#: first words ("The two on the same admission id are eligible") or a verb after ("the two are") make it a
#: subject, which may be the cohort: never resolved.
_PRONOUN = re.compile(
    r"(?<=[^\W\d_] )(?P<the>the)\s+(?P<n>two|three|four|[2-4])(?=\s*(?:[,.;:)\]]|\s(?:on|in|of|by|with|at|to|from|"
    r"and|or|together|combined|jointly)\b))",
    re.IGNORECASE)


def named_things(params: dict) -> tuple[str, ...]:
    """The distinct string values of a task's ``params`` (the things its question names), in order."""
    return tuple(dict.fromkeys(v.strip() for v in params.values() if isinstance(v, str) and v.strip()))


def resolve(text: str, named: Sequence[str]) -> str:
    """``text`` with each pronoun "the N" whose antecedent is the question's ``N`` named things
    replaced by "those" (module docstring).

    Args:
        text: the response (Answer and Reasoning joined).
        named: the question's named things (``named_things(task.params)``).

    Returns:
        The text, unchanged where no such pronoun stands.
    """
    if len(named) < 2 or len(named) > 4:
        return text
    low = text.casefold()

    def sub(m: re.Match[str]) -> str:
        word = m.group("n").casefold()
        k = _WORDS.get(word) or int(word)
        if k != len(named) or not all(low.find(x.casefold(), 0, m.start()) >= 0 for x in named):
            return m.group(0)
        return "those"

    return _PRONOUN.sub(sub, text)
