"""Quepid case exports in and out: a Quepid case JSON becomes a Relevo case, and back.

Quepid's case export (its `export/cases` views) is one JSON object::

    {"case_name", "options", "scorer": {"name"}, "queries": [{"query_text", "notes",
     "information_need", "options", "ratings": [{"doc_id", "rating", "user_email"}]}],
     "try": {"query_params", "field_spec", "number_of_rows", "escape_query",
             "curator_variables": [{"name", "value"}],
             "search_endpoint": {"endpoint_url", "search_engine", "api_method",
                                 "custom_headers", "basic_auth_credential", ...}}}

Older Quepid versions put `search_url`, `search_engine`, `api_method` and `custom_headers`
on the try itself, wrote curator variables as a `curator_vars` object (name → value) and
ratings as an object (doc id → rating), and gave the scorer's `code` and `scale`; all of
these are read too. Quepid's own import endpoint takes the export wrapped as `{"case": …}`;
that wrapping is accepted as well.

An import is one transaction: the endpoint (reused when the user has one with the same
engine and URL), the scorer (reused when the user has an identical one), the case, its try,
queries and ratings are all written, or nothing is.

The work is split along its seams: quepid_values (reading values), quepid_parse (the export
into plain data, no database: the case, queries and ratings) with quepid_parse_try (the try
and its endpoint) and quepid_parse_scorer (the scorer), quepid_import (writing the case, its
endpoint and queries) with quepid_import_scorer (its scorer and metrics), and quepid_export;
this module is their front.
"""

from app.interop.quepid_export import export_case
from app.interop.quepid_import import ImportedCase, check_endpoint, import_case
from app.interop.quepid_parse import QuepidCase, parse_case
from app.interop.quepid_values import decode

__all__ = [
    "ImportedCase",
    "QuepidCase",
    "check_endpoint",
    "decode",
    "export_case",
    "import_case",
    "parse_case",
]
