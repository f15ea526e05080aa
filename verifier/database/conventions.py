"""Reading conventions: how every question is read unless it says otherwise (issue 33 point 1).

One list, ``rules/conventions.toml``, is used twice:

- the shared instructions (``verifier.env.instructions``) state each convention once, with its
  reason, so questions read as a clinician asks them instead of spelling the reading out;
- the construction audit (``verifier.construction.audit``) treats a relaxation a convention
  settles as a trap, not an ambiguity: the question gets no sentence, and a Noise twin answerable
  under the other reading is kept (its answer there is a near miss).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

from ..contract import RulesError, load_toml

_SELECTOR_KEYS = ("kind", "group", "name_table", "reference_table")


@dataclass(frozen=True)
class Convention:
    """One reading convention.

    Attributes:
        id: short name, recorded in audit entries.
        text: the instruction sentence agents read.
        reason: why it holds in MIMIC-IV.
        covers: selectors (dicts over ``kind``, ``group``, ``name_table``, ``reference_table``).
    """

    id: str
    text: str
    reason: str
    covers: tuple[tuple[tuple[str, str], ...], ...]

    def settles(self, kind: str, group: str | None, name_table: str | None, reference_tables: Iterable[str]) -> bool:
        """True when a relaxation with these fields is covered by one of ``covers``.

        Args:
            kind: the relaxation's kind (``relax.RELAX_KINDS``).
            group: its status group, if any.
            name_table: the table of a ``name`` relaxation, if any.
            reference_tables: the tables the program's reference reads.
        """
        have = {"kind": kind, "group": group, "name_table": name_table}
        tables = set(reference_tables)
        for sel in self.covers:
            if all((v in tables) if k == "reference_table" else have.get(k) == v for k, v in sel):
                return True
        return False


@lru_cache(maxsize=1)
def conventions() -> tuple[Convention, ...]:
    """The conventions of ``rules/conventions.toml``, in file order.

    Raises:
        RulesError: the file is missing, or an entry lacks ``id``/``text``/``reason`` or has an
            unknown selector key.
    """
    where = "rules/conventions.toml"
    out: list[Convention] = []
    for i, entry in enumerate(load_toml("conventions.toml").get("convention", [])):
        for key in ("id", "text", "reason"):
            if not isinstance(entry.get(key), str) or not entry[key].strip():
                raise RulesError(where, f"convention[{i}].{key} is missing")
        covers: list[tuple[tuple[str, str], ...]] = []
        for sel in entry.get("covers", []):
            bad = set(sel) - set(_SELECTOR_KEYS)
            if bad or not sel:
                raise RulesError(where, f"convention {entry['id']!r}: covers keys {sorted(bad) or '(none)'} not in {_SELECTOR_KEYS}")
            covers.append(tuple(sorted((k, str(v)) for k, v in sel.items())))
        out.append(Convention(entry["id"], entry["text"].strip(), entry["reason"].strip(), tuple(covers)))
    return tuple(out)


def settling(kind: str, group: str | None, name_table: str | None, reference_tables: Iterable[str]) -> Convention | None:
    """The first convention that settles a relaxation with these fields, or None (see ``Convention.settles``)."""
    tables = tuple(reference_tables)
    return next((c for c in conventions() if c.settles(kind, group, name_table, tables)), None)


def conventions_section() -> str:
    """The instructions' "Reading conventions" section: one bullet per convention, text then reason."""
    lines = ["Reading conventions (they hold unless the question says otherwise):"]
    lines += [f"- {c.text} Reason: {c.reason}" for c in conventions()]
    return "\n".join(lines) + "\n"

