"""Things kept briefly under a token: only for their owner, only for a while."""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

from app.web_common import parked


def test_a_kept_file_is_its_owners_until_it_expires(tmp_path: Path) -> None:
    token = parked.park(data_dir=tmp_path, kind="ratings", owner_id=7, content=io.BytesIO(b"a,b"))
    path = parked.claim(data_dir=tmp_path, kind="ratings", owner_id=7, token=token)
    assert path is not None and path.read_bytes() == b"a,b"
    assert parked.claim(data_dir=tmp_path, kind="ratings", owner_id=8, token=token) is None
    assert parked.claim(data_dir=tmp_path, kind="results", owner_id=7, token=token) is None
    for bad in ("", "../../etc/passwd", "a" * 8, "x/" + "a" * 20):
        assert parked.claim(data_dir=tmp_path, kind="ratings", owner_id=7, token=bad) is None

    old = time.time() - parked.KEEP_S - 1
    os.utime(path, (old, old))
    assert parked.claim(data_dir=tmp_path, kind="ratings", owner_id=7, token=token) is None
    # The next park sweeps what has expired.
    value = {"problem": "bad", "errors": [{"line": 2, "message": "x"}]}
    fresh = parked.park_json(data_dir=tmp_path, kind="results", owner_id=7, value=value)
    assert not path.exists()
    assert parked.read_json(data_dir=tmp_path, kind="results", owner_id=7, token=fresh) == value
    parked.drop(data_dir=tmp_path, kind="results", owner_id=7, token=fresh)
    assert parked.read_json(data_dir=tmp_path, kind="results", owner_id=7, token=fresh) is None
