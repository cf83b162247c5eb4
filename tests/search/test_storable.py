"""What an engine says about a doc is made storable where it becomes a Doc (pure)."""

from __future__ import annotations

from app.search.storable import CUT, MAX_NUM_FOUND, storable
from app.search.types import Doc, SearchResult


def test_text_numbers_and_nesting_are_made_storable() -> None:
    value = {"a\x00": ["x\ud800", 1.5, float("nan"), float("inf"), None, True, 3, {"k": "v"}]}
    assert storable(value, 5) == {
        "a\ufffd": ["x\ufffd", 1.5, None, None, None, True, 3, {"k": "v"}]
    }
    assert storable([[["x"]]], 2) == [[CUT]]
    assert storable({"a": {"b": 1}}, 1) == {"a": CUT}
    assert storable(("a", "b\x00"), 3) == ["a", "b\ufffd"]


def test_a_doc_and_a_result_clean_what_they_are_given() -> None:
    deep: object = "x"
    for _ in range(100):
        deep = [deep]
    doc = Doc(id="a\x00b", position=1, fields={"t\ud800": "T\x00", "d": deep}, explain=deep)
    assert (doc.id, doc.fields["t\ufffd"]) == ("a\ufffdb", "T\ufffd")
    assert str(doc.fields["d"]).count("[") == 32 and CUT in str(doc.fields["d"])
    assert str(doc.explain).count("[") == 64  # MAX_EXPLAIN_DEPTH
    assert SearchResult(docs=[doc], num_found=10**12).num_found == MAX_NUM_FOUND
    assert SearchResult(docs=[], num_found=-3).num_found == 0
