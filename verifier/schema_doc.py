"""Documented import path (README): ``verifier.schema_doc.schema_text``; the code lives in ``verifier.database``."""

from .database._schema_doc import describe_schema, schema_text

__all__ = ["describe_schema", "schema_text"]
