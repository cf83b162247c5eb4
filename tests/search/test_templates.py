"""Template rendering, validation and knob extraction (pure)."""

from __future__ import annotations

import json

import pytest

from app.search import (
    SearchRequest,
    TemplateError,
    build_es_body,
    build_solr_params,
    extract_knobs,
    validate_template,
)
from app.search.templates import (
    RenderContext,
    format_number,
    render_json_template,
    render_solr_pairs,
)
from app.vocabulary import Engine


def render(template: str, query: str = "star wars", **kwargs: object) -> object:
    return json.loads(render_json_template(template, RenderContext(query, **kwargs)))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "query",
    ['say "hi"', "back\\slash", "two\nlines", "tab\there", "ünïcödé ✓", "</script>"],
)
def test_query_inside_json_string_is_escaped(query: str) -> None:
    assert render('{"q": "#$query##"}', query) == {"q": query}


def test_keywords_split_on_whitespace_and_missing_keyword_is_empty() -> None:
    body = render('["#$keyword1##", "#$keyword2##", "#$keyword3##"]', "  star \t wars ")
    assert body == ["star", "wars", ""]


def test_missing_value_outside_a_string_renders_null() -> None:
    assert render('{"boost": #$qOption.boost##, "k": #$keyword5##}') == {"boost": None, "k": None}


def test_qoption_prefers_query_options_then_case_options() -> None:
    template = '["#$qOption.a##", "#$qOption.b##", "#$qOption.nested.c##"]'
    body = render(
        template,
        query_options={"a": "from query"},
        case_options={"a": "from case", "b": "case b", "nested": {"c": "deep"}},
    )
    assert body == ["from query", "case b", "deep"]


def test_null_query_option_falls_back_to_case_option() -> None:
    body = render('"#$qOption.a##"', query_options={"a": None}, case_options={"a": "case"})
    assert body == "case"


def test_qoption_values_keep_their_json_type_outside_strings() -> None:
    body = render(
        '{"n": #$qOption.n##, "f": #$qOption.f##, '
        '"filter": #$qOption.filter##, "s": "#$qOption.n##"}',
        query_options={"n": 3, "f": True, "filter": {"term": {"genre": "Drama"}}},
    )
    assert body == {"n": 3, "f": True, "filter": {"term": {"genre": "Drama"}}, "s": "3"}


def test_defaults_apply_when_missing_or_empty() -> None:
    template = '["#$keyword2|none##", "#$qOption.x|dflt##", "#$anything|ok##", "#$query|all##"]'
    assert render(template, "one") == ["none", "dflt", "ok", "one"]
    assert render(template, "") == ["none", "dflt", "ok", "all"]


def test_default_is_not_used_when_value_present() -> None:
    assert render('"#$qOption.x|dflt##"', query_options={"x": "set"}) == "set"


def test_knobs_render_as_numbers_with_default_ten() -> None:
    body = render(
        '{"a": ##title_boost##, "b": ##other##, "c": "title^##title_boost##"}',
        knobs={"title_boost": 2.0},
    )
    assert body == {"a": 2, "b": 10, "c": "title^2"}
    assert render_json_template("##x##", RenderContext("q", knobs={"x": 0.25})) == "0.25"


@pytest.mark.parametrize(("value", "text"), [(10.0, "10"), (3, "3"), (1.5, "1.5"), (-2.0, "-2")])
def test_format_number(value: float, text: str) -> None:
    assert format_number(value) == text


def test_non_finite_knob_is_an_error() -> None:
    with pytest.raises(TemplateError, match="not a finite number"):
        render_json_template("##x##", RenderContext("q", knobs={"x": float("nan")}))


def test_extract_knobs_in_order_of_first_appearance() -> None:
    template = '{"a": ##b2##, "b": "#$query##", "c": ##a1##, "d": ##b2##, "e": "x^##c_3##"}'
    assert extract_knobs(template) == ["b2", "a1", "c_3"]
    assert extract_knobs("q=#$query##") == []


def test_validate_accepts_good_templates_and_they_render() -> None:
    es = '{"query": {"match": {"title": "#$query##"}}}'
    boosted = '{"query": {"match": {"title": {"query": "#$query##", "boost": ##b##}}}}'
    solr = "q=#$query##\ndefType=edismax&qf=title^##tb## overview"
    validate_template(Engine.ELASTICSEARCH, es)
    validate_template(Engine.OPENSEARCH, boosted)
    validate_template(Engine.SOLR, solr)
    body = build_es_body(SearchRequest(template=boosted, query_text="star wars", knobs={"b": 2}))
    assert body["query"] == {"match": {"title": {"query": "star wars", "boost": 2}}}
    params = build_solr_params(SearchRequest(template=solr, query_text="x", knobs={"tb": 3}))
    assert ("qf", "title^3 overview") in params and ("q", "x") in params


def test_validate_reports_bad_json_with_line_column_and_snippet() -> None:
    template = '{\n  "query": {\n    "match": {"title" "#$query##"}\n  }\n}'
    with pytest.raises(TemplateError) as info:
        validate_template(Engine.ELASTICSEARCH, template)
    message = str(info.value)
    assert "line 3, column 23" in message
    assert '"title" "test"' in message
    assert "Expecting ':' delimiter" in message


def test_validate_reports_unquoted_query_as_bad_json() -> None:
    with pytest.raises(TemplateError, match="not valid JSON"):
        validate_template(Engine.ELASTICSEARCH, '{"query": {"match": {"title": #$query##}}}')


def test_validate_reports_unknown_placeholder_with_position() -> None:
    with pytest.raises(TemplateError) as info:
        validate_template(Engine.ELASTICSEARCH, '{\n "q": "#$qury##"}')
    assert str(info.value).startswith("unknown placeholder '#$qury##' at line 2, column 8")
    assert "#$qury|value##" in str(info.value)


def test_unknown_placeholder_with_default_is_allowed() -> None:
    validate_template(Engine.SOLR, "q=#$qury|x##")
    assert ("q", "x") in build_solr_params(SearchRequest(template="q=#$qury|x##", query_text="y"))


def test_validate_reports_unclosed_placeholder() -> None:
    with pytest.raises(TemplateError, match="line 1, column 11 is not closed"):
        validate_template(Engine.ELASTICSEARCH, '{"query": #$query#}')


def test_validate_rejects_empty_and_non_object_templates() -> None:
    with pytest.raises(TemplateError, match="empty"):
        validate_template(Engine.SOLR, "  \n ")
    with pytest.raises(TemplateError, match="JSON object"):
        validate_template(Engine.ELASTICSEARCH, '["#$query##"]')


def test_validate_rejects_solr_piece_that_is_not_key_value() -> None:
    with pytest.raises(TemplateError, match="line 2: 'oops' is not key=value"):
        validate_template(Engine.SOLR, "q=#$query##\ndefType=edismax&oops")


def test_solr_template_is_decoded_once_but_query_text_never() -> None:
    ctx = RenderContext("100%25 & a+b", knobs={"tb": 5})
    pairs = render_solr_pairs("q=#$query##&qf=title%5E##tb##+overview\nfq=genre:%22Drama%22", ctx)
    assert pairs == [
        ("q", "100%25 & a+b"),
        ("qf", "title^5+overview"),
        ("fq", 'genre:"Drama"'),
    ]


def test_solr_values_keep_equals_signs_and_repeated_keys() -> None:
    pairs = render_solr_pairs("fq=a:b\nfq=c:d\nbq=x=y", RenderContext("q"))
    assert pairs == [("fq", "a:b"), ("fq", "c:d"), ("bq", "x=y")]


def test_substituted_values_are_not_rendered_again() -> None:
    query = "##boost## #$query## #$qOption.x##"
    assert render('"#$query##"', query, knobs={"boost": 2}) == query
    pairs = render_solr_pairs("q=#$query##", RenderContext(query))
    assert pairs == [("q", query)]
