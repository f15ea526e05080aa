"""The MIMIC-IV -> descriptive schema mapping, read from ``rules/schema.toml``.

Every source table and column is listed there with its renamed form, DuckDB
type (after the official MIMIC-IV build scripts, mimic-code
``buildmimic/postgres/create.sql``) and a one-line meaning. The shared
identifiers are ``patientid`` (subject_id), ``admissionid`` (hadm_id) and
``icuadmissionid`` (stay_id).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..contract import RulesError, load_toml, rules_path

#: Derived column added to ``admissions`` (the only one): anchor_age + year(admission_time) - anchor_year.
ADMISSION_AGE = "admission_age"


@dataclass(frozen=True)
class ColumnSpec:
    """One column: source name, target name, DuckDB type, meaning."""

    source: str
    name: str
    type: str
    description: str


@dataclass(frozen=True)
class TableSpec:
    """One table: source file stem, module (``hosp``/``icu``), target name, meaning, columns."""

    source: str
    module: str
    name: str
    description: str
    columns: tuple[ColumnSpec, ...]

    def column(self, name: str) -> ColumnSpec:
        """Return the column whose target name is ``name``.

        Raises:
            KeyError: no such column.
        """
        for col in self.columns:
            if col.name == name:
                return col
        raise KeyError(f"{self.name}.{name}")


@lru_cache(maxsize=1)
def schema_tables() -> tuple[TableSpec, ...]:
    """Return the table specs in file order.

    Raises:
        RulesError: malformed entries (wrong arity, duplicate names).
    """
    data = load_toml("schema.toml")
    path = rules_path("schema.toml")
    tables: list[TableSpec] = []
    seen: set[str] = set()
    for i, t in enumerate(data.get("table", [])):
        try:
            cols = tuple(ColumnSpec(*c) for c in t["columns"])
            spec = TableSpec(t["source"], t["module"], t["name"], t["description"], cols)
        except (KeyError, TypeError) as exc:
            raise RulesError(path, f"table[{i}] malformed: {exc}") from exc
        if spec.name in seen:
            raise RulesError(path, f"table[{i}]: duplicate target name {spec.name!r}")
        names = [c.name for c in cols]
        if len(set(names)) != len(names):
            raise RulesError(path, f"table {spec.name!r}: duplicate column names")
        seen.add(spec.name)
        tables.append(spec)
    return tuple(tables)


def table_by_name(name: str) -> TableSpec:
    """Return the spec of target table ``name`` (e.g. ``"lab_events"``).

    Raises:
        KeyError: unknown table.
    """
    for t in schema_tables():
        if t.name == name:
            return t
    raise KeyError(name)


def table_by_source(source: str) -> TableSpec:
    """Return the spec of MIMIC-IV table ``source`` (e.g. ``"labevents"``).

    Raises:
        KeyError: unknown table.
    """
    for t in schema_tables():
        if t.source == source:
            return t
    raise KeyError(source)
