"""Shared test helpers (moved from tests/engines/test_searchapi_vespa.py, which uses them too)."""

from __future__ import annotations

QUEPID_MAPPER = """
// docsMapper takes in the response from the search API and returns an array of documents
docsMapper = function(data){
  let docs = [];
  for (let doc of data) {
    docs.push ({
      id: doc.publication_id,
      title: doc.title,
      publish_date_int: doc.publish_date_int,
    })
  }
  return docs;
};

numberOfResultsMapper = function(data){
  return data.length;
};
"""
