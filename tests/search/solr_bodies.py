"""Response bodies in the exact JSON shape Solr 9 returns (wt=json)."""

from __future__ import annotations

from typing import Any

SELECT_PARAMS = {
    "q": "star wars",
    "defType": "edismax",
    "qf": "title",
    "fl": "id,title,genre",
    "rows": "10",
    "wt": "json",
}

OK: dict[str, Any] = {
    "responseHeader": {"status": 0, "QTime": 3, "params": SELECT_PARAMS},
    "response": {
        "numFound": 37,
        "start": 0,
        "numFoundExact": True,
        "docs": [
            {"id": "913", "title": "Star Wars Ep. IV: A New Hope", "genre": ["Adventure"]},
            {"id": "773", "title": "Star Wars Ep. VI: Return of the Jedi"},
        ],
    },
}

EXPLAIN_913 = {
    "match": True,
    "value": 5.4321,
    "description": "sum of:",
    "details": [
        {
            "match": True,
            "value": 2.7,
            "description": "weight(title:star in 912) [SchemaSimilarity], result of:",
            "details": [],
        },
        {
            "match": True,
            "value": 2.7321,
            "description": "weight(title:war in 912) [SchemaSimilarity], result of:",
            "details": [],
        },
    ],
}

WITH_DEBUG: dict[str, Any] = {
    **OK,
    "debug": {
        "rawquerystring": "star wars",
        "querystring": "star wars",
        "parsedquery": "+(DisjunctionMaxQuery((title:star)) DisjunctionMaxQuery((title:war)))",
        "parsedquery_toString": "+((title:star) (title:war))",
        "explain": {
            "913": EXPLAIN_913,
            "773": {"match": True, "value": 4.1, "description": "sum of:", "details": []},
        },
        "QParser": "ExtendedDismaxQParser",
        "timing": {"time": 2.0},
    },
}

UNDEFINED_FIELD: dict[str, Any] = {
    "responseHeader": {"status": 400, "QTime": 1, "params": {**SELECT_PARAMS, "fl": "id,bogus"}},
    "error": {
        "metadata": [
            "error-class",
            "org.apache.solr.common.SolrException",
            "root-error-class",
            "org.apache.solr.common.SolrException",
        ],
        "msg": "undefined field bogus",
        "code": 400,
    },
}
