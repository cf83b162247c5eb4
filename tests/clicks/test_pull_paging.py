"""A pull's requests and its reading of hits, as plain data: no engine, no database."""

from __future__ import annotations

from datetime import UTC, datetime

from app.clicks import pull_paging


def test_the_first_page_asks_for_the_window_oldest_first() -> None:
    body = pull_paging.search_body(since_ms=1_000, until_ms=5_000, size=50)
    assert body == {
        "size": 50,
        "query": {"range": {"timestamp": {"gte": 1_000, "lt": 5_000}}},
        "sort": [{"timestamp": {"order": "asc", "unmapped_type": "date"}}],
    }
    assert pull_paging.search_body(since_ms=None, until_ms=None, size=10)["query"] == {
        "match_all": {}
    }
    assert pull_paging.search_body(since_ms=None, until_ms=7, size=10)["query"] == {
        "range": {"timestamp": {"lt": 7}}
    }


def test_the_engine_root_drops_the_endpoints_index() -> None:
    assert str(pull_paging.engine_base("http://h:9200/movies")) == "http://h:9200/"
    assert str(pull_paging.engine_base("http://h:9200/movies/_search")) == "http://h:9200/"
    assert str(pull_paging.engine_base("https://h/proxy/es/movies")) == "https://h/proxy/es"


def test_hits_become_numbered_records_with_their_ids_and_newest_stamp() -> None:
    hits = [
        {"_id": "a", "_source": {"timestamp": "2025-03-01T10:00:02Z"}},
        {"_id": "b", "_source": {"timestamp": 1_740_823_205_000}},  # 2025-03-01T10:00:05Z
        {"_id": "c", "_source": {"timestamp": "not a time"}},
        "not a hit",
    ]
    page = pull_paging.read_hits(hits, first_line=11)
    assert [record.line for record in page.records] == [11, 12, 13, 14]
    assert page.records[0].value == {"timestamp": "2025-03-01T10:00:02Z"}
    assert page.records[3].value is None
    assert page.doc_ids == {11: "a", 12: "b", 13: "c", 14: ""}
    assert page.newest_ms == 1_740_823_205_000
    assert pull_paging.read_hits([{"_id": "x", "_source": {}}], first_line=1).newest_ms is None


def test_a_cursor_is_epoch_milliseconds_of_a_utc_time() -> None:
    naive = datetime(2025, 3, 1, 10, 0, 5, 250_000)
    assert pull_paging.millis(naive) == 1_740_823_205_250
    assert pull_paging.cursor_time(1_740_823_205_250) == naive.replace(tzinfo=UTC)
    assert pull_paging.millis(None) is None
    assert pull_paging.cursor_key(3, "ubi_events") == "3:ubi_events"
