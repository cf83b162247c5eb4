"""Parsing a Quepid case export into plain data (no database): the case, its queries and
ratings; its try and endpoint are read by quepid_parse_try, its scorer by quepid_parse_scorer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.errors import Invalid
from app.interop.quepid_parse_scorer import QuepidScorer, read_scorer
from app.interop.quepid_parse_try import (
    QuepidEndpoint,
    read_curator_variables,
    read_endpoint,
    read_field_spec,
    read_rows,
)
from app.interop.quepid_values import (
    MAX_NAME_CHARS,
    MAX_QUERY_CHARS,
    Loc,
    _clean_text,
    _json_object,
    _missing,
    _object,
    _path,
    _ratings,
    _required,
    _text,
    _wrong,
)
from app.queries.bulk_lines import from_options

READ_BATCH = 5000


# The key under which Relevo's export carries, in a case's and a query's options (Quepid
# keeps unknown option keys as they are), what Quepid's case has no place for: the scorer's
# kind and parameters, extra metrics and the aggregate; a query's tags and weight.
RELEVO_KEY = "relevo"


@dataclass
class QuepidQuery:
    """One query of the export, with its ratings (doc id → rating)."""

    text: str
    notes: str | None
    information_need: str | None
    options: dict[str, Any]
    ratings: dict[str, float]
    # From Relevo's own export (the options' "relevo"): None when the file does not say.
    tags: list[str] | None = None
    weight: float | None = None


@dataclass
class QuepidCase:
    """A Quepid case export, checked and put in Relevo's terms."""

    name: str
    options: dict[str, Any]
    scorer: QuepidScorer
    queries: list[QuepidQuery]
    query_template: str
    field_spec: str
    rows: int
    curator_variables: dict[str, Any]
    endpoint: QuepidEndpoint
    warnings: list[str] = field(default_factory=list)
    # Relevo's own export: the case options' "relevo" (scorer, metrics, aggregate), unread.
    relevo: dict[str, Any] = field(default_factory=dict)


def parse_case(data: Any) -> QuepidCase:
    """Return the export as a QuepidCase; 422 naming the first missing or wrong key."""
    if isinstance(data, dict) and "case_name" not in data and isinstance(data.get("case"), dict):
        data = data["case"]  # the body of Quepid's own import endpoint
    if not isinstance(data, dict):
        raise Invalid((), "This is not a Quepid case export: the file must hold a JSON object.")
    _clean_text(data, ())
    name = _text(_required(data, "case_name", ()), ("case_name",))
    assert name is not None
    name = name.strip()
    if not name:
        raise _missing(("case_name",))
    scorer = read_scorer(_object(_required(data, "scorer", ()), ("scorer",)))
    queries_raw = _required(data, "queries", ())
    if not isinstance(queries_raw, list):
        raise _wrong(("queries",), "a list")
    the_try = _object(_required(data, "try", ()), ("try",))
    template = _text(_required(the_try, "query_params", ("try",)), ("try", "query_params"))
    assert template is not None
    endpoint = read_endpoint(the_try)
    warnings: list[str] = []
    queries = _queries(queries_raw, warnings)
    options = _json_object(data.get("options"), ("options",))
    relevo = _json_object(options.pop(RELEVO_KEY, None), ("options", RELEVO_KEY))
    endpoint_options = the_try.get("search_endpoint")
    if isinstance(endpoint_options, dict) and endpoint_options.get("options"):
        # Quepid reads qOption values from the case's options merged with the endpoint's.
        options = {**options, **_json_object(endpoint_options["options"], ("try", "options"))}
    field_spec = read_field_spec(the_try.get("field_spec"), endpoint.engine, warnings)
    rows = read_rows(the_try.get("number_of_rows"), warnings)
    if len(name) > MAX_NAME_CHARS:
        warnings.append(f"The case name was cut to {MAX_NAME_CHARS} characters.")
        name = name[:MAX_NAME_CHARS].rstrip()
    return QuepidCase(
        name=name,
        options=options,
        scorer=scorer,
        queries=queries,
        query_template=template,
        field_spec=field_spec,
        rows=rows,
        curator_variables=read_curator_variables(the_try),
        endpoint=endpoint,
        warnings=warnings,
        relevo=relevo,
    )


def options_warnings(left_out: list[tuple[str, list[str]]], shown: int = 10) -> list[str]:
    """Return a warning for each query whose tags or weight were not all taken (at most
    ``shown``, then how many more): an import never drops them silently."""
    said = [f'Query "{text[:80]}": {"; ".join(problems)}.' for text, problems in left_out[:shown]]
    if len(left_out) > shown:
        said.append(f"{len(left_out) - shown} more queries had tags or a weight left out.")
    return said


def _queries(items: list[Any], warnings: list[str]) -> list[QuepidQuery]:
    by_text: dict[str, QuepidQuery] = {}
    left_out: list[tuple[str, list[str]]] = []
    repeated = 0
    for index, item in enumerate(items):
        loc: Loc = ("queries", index)
        query = _object(item, loc)
        text = _text(_required(query, "query_text", loc), (*loc, "query_text"))
        assert text is not None
        text = text.strip()
        if not text:
            raise Invalid((*loc, "query_text"), f'"{_path((*loc, "query_text"))}" is empty.')
        if len(text) > MAX_QUERY_CHARS:
            raise Invalid(
                (*loc, "query_text"),
                f"Query {index + 1} is longer than {MAX_QUERY_CHARS} characters, "
                "the longest query Relevo keeps.",
            )
        ratings = _ratings(query.get("ratings"), (*loc, "ratings"))
        notes = _text(query.get("notes"), (*loc, "notes"), optional=True)
        need = _text(query.get("information_need"), (*loc, "information_need"), optional=True)
        options = _json_object(query.get("options"), (*loc, "options"))
        extras = _json_object(options.pop(RELEVO_KEY, None), (*loc, "options", RELEVO_KEY))
        if text in by_text:
            repeated += 1
            earlier = by_text[text]
            earlier.ratings.update(ratings)
            earlier.notes = notes or earlier.notes
            earlier.information_need = need or earlier.information_need
            earlier.options = {**earlier.options, **options}
            continue
        by_text[text] = QuepidQuery(text, notes or None, need or None, options, ratings)
        if extras:
            # The same rules as tags and a weight in Quepid's own query options.
            by_text[text].tags, by_text[text].weight, problems = from_options(extras)
            if problems:
                left_out.append((text, problems))
    warnings.extend(options_warnings(left_out))
    if repeated:
        warnings.append(
            f"{repeated} queries repeat the text of an earlier one: each was merged into the "
            "first (its ratings win over the earlier ones for the same document)."
        )
    return list(by_text.values())
