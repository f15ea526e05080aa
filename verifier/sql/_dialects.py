"""Dialect rules as data: what SQLite and PostgreSQL evidence means, as tables the passes read.

ARCHITECTURE.md section 4 (Noise step 4, evidence from other dialects). Each table cites its
source; ``verifier.sql._translate`` and ``verifier.sql._sqlite_time`` apply them (sqlglot's
style: dialect behaviour as data, small passes).
"""

from __future__ import annotations

#: SQLite ``strftime`` format codes (SQLite docs, "Date And Time Functions", section 2, for
#: SQLite 3.40+; the later additions that DuckDB's strftime spells the same way are
#: included) -> DuckDB ``strftime`` spelling (DuckDB docs, "Date Format Functions"). ``%f``
#: (SQLite: seconds with milliseconds, ``SS.SSS``) is DuckDB's ``%S.%g``. Codes missing here
#: and not in ``STRFTIME_COMPUTED`` make the query unsupported.
STRFTIME_CODES: dict[str, str] = {
    "d": "%d", "H": "%H", "m": "%m", "M": "%M", "S": "%S", "Y": "%Y", "j": "%j", "w": "%w",
    "W": "%W", "%": "%%", "f": "%S.%g", "F": "%Y-%m-%d", "T": "%H:%M:%S", "R": "%H:%M",
    "u": "%u", "U": "%U", "V": "%V", "G": "%G", "I": "%I", "p": "%p",
}

#: Codes DuckDB's strftime lacks, computed: ``J`` the Julian day number with its fraction
#: (SQLite: days since noon in Greenwich on November 24, 4714 B.C.; Unix epoch = 2440587.5),
#: ``s`` seconds since 1970-01-01 (integer).
STRFTIME_COMPUTED = frozenset({"J", "s"})

#: Formats whose whole text is an integer: a strftime of only these codes is an integer when
#: SQLite converts it for arithmetic (``strftime('%Y', a) - strftime('%Y', b)``).
INTEGER_CODES = frozenset({"d", "H", "m", "M", "S", "Y", "j", "w", "W", "s", "u", "U", "V", "G", "I"})

#: SQLite date-modifier units (SQLite docs, "Date And Time Functions", section 3, modifiers
#: 1-6: ``NNN days``, ``NNN hours``, ``NNN minutes``, ``NNN seconds``, ``NNN months``,
#: ``NNN years``; the singular is accepted) -> DuckDB interval unit. Months and years follow
#: SQLite's rule (add to the month/year field, then let the day overflow into the next
#: month: ``2001-01-31 +1 month`` is ``2001-03-03``), not DuckDB's clamping.
MODIFIER_UNITS: dict[str, str] = {
    "day": "DAY", "days": "DAY", "hour": "HOUR", "hours": "HOUR", "minute": "MINUTE", "minutes": "MINUTE",
    "second": "SECOND", "seconds": "SECOND", "month": "MONTH", "months": "MONTH", "year": "YEAR", "years": "YEAR",
}

#: ``start of <unit>`` modifiers -> DuckDB ``date_trunc`` part.
START_OF: dict[str, str] = {"day": "day", "month": "month", "year": "year"}

#: Modifiers that need the machine's time zone or a numeric time value; a query using one
#: cannot be carried over faithfully (``localtime``/``utc`` depend on the time zone of the
#: machine that ran it).
UNSUPPORTED_MODIFIERS = frozenset({"localtime", "utc", "auto", "julianday", "subsec", "ceiling", "floor"})

#: Text SQLite stores for a DuckDB TIMESTAMP / DATE column in the EHRSQL convention (the
#: SQLite copy holds ISO text ``YYYY-MM-DD HH:MM:SS``; SQLite docs, "Datatypes In SQLite",
#: 2.2 "Date and Time Datatype"). Evidence from SQLite sees these columns as that text.
SQLITE_TEXT_FORMAT: dict[str, str] = {"TIMESTAMP": "%Y-%m-%d %H:%M:%S", "DATE": "%Y-%m-%d"}

#: SQLite functions DuckDB has no faithful equivalent for (the query is unsupported).
SQLITE_UNSUPPORTED_FUNCTIONS = frozenset({
    "typeof", "quote", "zeroblob", "randomblob", "soundex", "likelihood", "likely", "unlikely", "changes",
    "total_changes", "last_insert_rowid", "sqlite_version", "sqlite_source_id", "unicode", "timediff",
    "json_extract", "json", "json_array", "json_object", "json_each", "json_tree", "glob", "regexp",
})

#: PostgreSQL functions DuckDB has no faithful equivalent for.
POSTGRES_UNSUPPORTED_FUNCTIONS = frozenset({
    "to_number", "justify_days", "justify_hours", "justify_interval", "pg_typeof", "width_bucket",
    "regexp_split_to_table", "jsonb_path_query",
})

#: Functions whose value is "now" in each dialect (SQLite: ``CURRENT_TIMESTAMP``,
#: ``CURRENT_DATE``, ``CURRENT_TIME`` and the ``'now'`` time value; PostgreSQL docs 9.9.5
#: "Current Date/Time"). With a dataset time configured they are that time; following
#: EHRSQL's convention, SQLite's ``current_time`` stands for the whole dataset timestamp.
POSTGRES_NOW_FUNCTIONS = frozenset({"now", "transaction_timestamp", "statement_timestamp", "clock_timestamp",
                                    "localtimestamp", "current_timestamp"})
