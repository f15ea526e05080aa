"""Access to the declarative rules under ``rules/`` (schema mapping, units,
analytes, tolerances, synonyms).

Rules are data, reviewed by clinicians, and shipped inside the package as
``verifier._rules`` (see pyproject.toml); in a source checkout they are read
from the top-level ``rules/`` folder.
"""

from __future__ import annotations

import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

from ._errors import RulesError


def rules_dir() -> Path:
    """Return the folder holding the rules files.

    Raises:
        RulesError: when neither the installed copy nor ``rules/`` exists.
    """
    here = Path(__file__).resolve().parent.parent  # the verifier package
    for cand in (here / "_rules", here.parent / "rules"):
        if (cand / "schema.toml").is_file():
            return cand
    raise RulesError(here, "rules folder not found (expected verifier/_rules or ../rules with schema.toml)")


def rules_path(name: str) -> Path:
    """Path of the rules file ``name`` (e.g. ``"units.txt"``)."""
    return rules_dir() / name


@lru_cache(maxsize=None)
def load_toml(name: str) -> dict[str, Any]:
    """Parse ``rules/<name>`` as TOML (cached; treat the result as read-only).

    Raises:
        RulesError: the file is missing or not valid TOML.
    """
    path = rules_path(name)
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError as exc:
        raise RulesError(path, "missing rules file") from exc
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(path, f"invalid TOML: {exc}") from exc
