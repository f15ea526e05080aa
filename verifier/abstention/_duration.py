"""Whether a word is a unit of time: a number before it measures a time and counts no units (the five-unit
rule's readers, ``_small_cell`` and ``_derived``)."""

from __future__ import annotations

from functools import lru_cache

from ..match.language import fold, languages


@lru_cache(maxsize=1024)
def is_duration(word: str) -> bool:
    """Whether ``word`` is a unit of time (pint's dimension ``[time]``: "d", "h", "min", "wk", "days"): a
    number before it measures a time ("none borderline (2-3 d)", blind corpus c36), never counts units.
    Only time: "2 pts." (pint's pint) states a count of patients. A word of another language is read as the
    English word its table gives (``rules/languages.toml``: "3 días" measures a time as "3 days" does, blind corpus
    c43, where "dentro de los 3 días siguientes" restated the question's window).

    Args:
        word: one word, any case.

    Returns:
        ``True`` for a unit of time; ``False`` otherwise (never raises: an unknown word is no unit).
    """
    from ..units.convert import parse_unit  # noqa: PLC0415 - pint loads lazily

    try:
        unit = parse_unit(word).unit
    except Exception:  # noqa: BLE001 - not a unit
        english = {lang.replacement.get(fold(word)) for lang in languages()} - {None, word}
        return any(" " not in e and is_duration(e) for e in english)
    return dict(unit.dimensionality) == {"[time]": 1}
