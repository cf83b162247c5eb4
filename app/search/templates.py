"""Query template rendering, validation and knob extraction.

Placeholders (both engines):

- ``#$query##`` — the whole query text.
- ``#$keyword1##``, ``#$keyword2##`` … — the query split on whitespace; a keyword past the
  end is *missing*.
- ``#$qOption.a.b##`` — a value from the query's options, else from the case's options
  (dotted paths reach into objects); absent or null is *missing*.
- ``#$name|default##`` — any of the above with a default, used when the value is missing
  or empty text. An unknown name is only allowed with a default (the default is used).
- ``##name##`` — a knob: a tunable number (``knobs[name]``, 10 when not set), rendered
  without a trailing ``.0`` for whole numbers.

A missing value without a default renders as empty text, except outside a JSON string
literal in an Elasticsearch/OpenSearch body, where it renders as ``null`` so that the
body stays valid JSON and the engine reports the problem.

Elasticsearch/OpenSearch: inside a JSON string literal a value is JSON-escaped
(``"#$query##"`` with ``say "hi"`` gives ``"say \\"hi\\""``); outside one, text is inserted
as-is and numbers, booleans, lists and objects as JSON.

Solr: the template is ``key=value`` pairs separated by newlines or ``&``. The template's
own text is URL-decoded once (``%XX`` escapes only; ``+`` stays a plus, as in
splainer-search), *before* placeholders are filled in, so query text is never decoded.
The builder returns decoded pairs and httpx encodes them when sending.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from app.search.errors import TemplateError
from app.search.fieldspec import is_missing, lookup_field
from app.search.types import SearchRequest

__all__ = [
    "DEFAULT_KNOB",
    "RenderContext",
    "extract_knobs",
    "format_number",
    "parse_json_body",
    "render_json_template",
    "render_solr_pairs",
]

DEFAULT_KNOB = 10.0
SAMPLE_QUERY = "test"
# A JSON body may nest this deep: far beyond any real query, and well within the recursion
# the standard library's parser and encoder (and the engine's) can take.
MAX_BODY_DEPTH = 100
_TOO_DEEP = f"template nests objects and lists more than {MAX_BODY_DEPTH} deep"

_TOKEN = re.compile(
    r"#\$(?P<name>[^#|\s]+)(?:\|(?P<default>[^#]*))?##|##(?P<knob>[A-Za-z_][A-Za-z0-9_]*)##"
)
_KEYWORD = re.compile(r"keyword([1-9][0-9]*)")
_MISSING = object()


@dataclass(frozen=True)
class RenderContext:
    """The values a template is rendered with."""

    query_text: str
    query_options: Mapping[str, Any] = field(default_factory=dict)
    case_options: Mapping[str, Any] = field(default_factory=dict)
    knobs: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def from_request(cls, request: SearchRequest) -> RenderContext:
        """Return the context for a search request."""
        return cls(request.query_text, request.query_options, request.case_options, request.knobs)


def format_number(value: float) -> str:
    """Return ``value`` as JSON/Solr number text, whole numbers without ``.0``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TemplateError(f"knob value {value!r} is not a number")
    if isinstance(value, int):
        return str(value)
    if not math.isfinite(value):
        raise TemplateError(f"knob value {value!r} is not a finite number")
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


def extract_knobs(template: str) -> list[str]:
    """Return the names of the ``##name##`` knobs in order of first appearance."""
    names = (m.group("knob") for m in _TOKEN.finditer(template) if m.group("knob"))
    return list(dict.fromkeys(names))


def _where(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"line {line}, column {column}"


def _tokens(text: str) -> Iterator[tuple[str, re.Match[str] | None]]:
    """Yield (literal text, token match) pairs; the last match is None."""
    start = 0
    for match in _TOKEN.finditer(text):
        yield text[start : match.start()], match
        start = match.end()
    yield text[start:], None


def _check_unclosed(text: str) -> None:
    masked = _TOKEN.sub(lambda m: " " * len(m.group(0)), text)
    index = masked.find("#$")
    if index >= 0:
        snippet = text[index : index + 30].splitlines()[0]
        raise TemplateError(
            f"placeholder at {_where(text, index)} is not closed with '##': {snippet!r}"
        )


def _option(ctx: RenderContext, path: str) -> Any:
    for options in (ctx.query_options, ctx.case_options):
        value = lookup_field(options, path)
        if not is_missing(value) and value is not None:
            return value
    return _MISSING


def _resolve(ctx: RenderContext, match: re.Match[str], text: str) -> Any:
    """Return the value for a placeholder match, or _MISSING."""
    name, default = match.group("name"), match.group("default")
    keyword = _KEYWORD.fullmatch(name)
    if name == "query":
        value: Any = ctx.query_text
    elif keyword:
        words = ctx.query_text.split()
        index = int(keyword.group(1)) - 1
        value = words[index] if index < len(words) else _MISSING
    elif name.startswith("qOption.") and len(name) > len("qOption."):
        value = _option(ctx, name[len("qOption.") :])
    elif default is None:
        raise TemplateError(
            f"unknown placeholder {match.group(0)!r} at {_where(text, match.start())}; "
            "use #$query##, #$keyword1##, #$qOption.name## or give a default: "
            f"#${name}|value##"
        )
    else:
        value = _MISSING
    if default is not None and (value is _MISSING or value == ""):
        return default
    return value


def _knob(ctx: RenderContext, name: str) -> str:
    return format_number(ctx.knobs.get(name, DEFAULT_KNOB))


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return format_number(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _track_string(chunk: str, in_string: bool) -> bool:
    """Return whether a JSON scanner is inside a string literal after ``chunk``."""
    escaped = False
    for char in chunk:
        if escaped:
            escaped = False
        elif in_string and char == "\\":
            escaped = True
        elif char == '"':
            in_string = not in_string
    return in_string


def render_json_template(template: str, ctx: RenderContext) -> str:
    """Return the ES/OS template text with placeholders and knobs filled in."""
    _check_unclosed(template)
    parts: list[str] = []
    in_string = False
    for literal, match in _tokens(template):
        parts.append(literal)
        in_string = _track_string(literal, in_string)
        if match is None:
            break
        if match.group("knob"):
            parts.append(_knob(ctx, match.group("knob")))
            continue
        value = _resolve(ctx, match, template)
        if value is _MISSING:
            parts.append("" if in_string else "null")
        elif in_string:
            parts.append(json.dumps(_as_text(value), ensure_ascii=False)[1:-1])
        else:
            parts.append(_as_text(value))
    return "".join(parts)


def parse_json_body(rendered: str) -> dict[str, Any]:
    """Return the rendered body as a dict; raise TemplateError with line, column and snippet."""
    try:
        body = json.loads(rendered)
    except json.JSONDecodeError as exc:
        line = rendered.splitlines()[exc.lineno - 1] if rendered.strip() else ""
        start = max(0, exc.colno - 40)
        snippet = line[start : exc.colno + 40].strip()
        raise TemplateError(
            f"template is not valid JSON after rendering: {exc.msg} at line {exc.lineno}, "
            f"column {exc.colno}: {snippet!r}"
        ) from None
    except RecursionError:  # far deeper than the bound below
        raise TemplateError(_TOO_DEEP) from None
    if _deeper_than(body, MAX_BODY_DEPTH):
        raise TemplateError(_TOO_DEEP)
    if not isinstance(body, dict):
        raise TemplateError("template must render to a JSON object ({...})")
    return body


def _deeper_than(value: Any, limit: int) -> bool:
    """Return whether ``value`` nests lists and objects more than ``limit`` deep."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            stack.extend(
                (v, depth + 1) for v in (item.values() if isinstance(item, dict) else item)
            )
    return False


def _render_solr_text(text: str, ctx: RenderContext, whole: str) -> str:
    parts: list[str] = []
    for literal, match in _tokens(text):
        parts.append(unquote(literal))
        if match is None:
            break
        if match.group("knob"):
            parts.append(_knob(ctx, match.group("knob")))
            continue
        value = _resolve(ctx, match, whole)
        parts.append("" if value is _MISSING else _as_text(value))
    return "".join(parts)


def render_solr_pairs(template: str, ctx: RenderContext) -> list[tuple[str, str]]:
    """Return the decoded (key, value) pairs of a Solr template, placeholders filled in."""
    _check_unclosed(template)
    pairs: list[tuple[str, str]] = []
    for number, line in enumerate(template.splitlines(), start=1):
        for piece in line.split("&"):
            if not piece.strip():
                continue
            key, sep, value = piece.strip().partition("=")
            if not sep or not key.strip():
                raise TemplateError(
                    f"Solr template line {number}: {piece.strip()!r} is not key=value"
                )
            pairs.append(
                (
                    _render_solr_text(key.strip(), ctx, template),
                    _render_solr_text(value, ctx, template),
                )
            )
    if not pairs:
        raise TemplateError("Solr template is empty; expected key=value pairs such as q=#$query##")
    return pairs
