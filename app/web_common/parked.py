"""Things a page keeps briefly on the server under a token, for the person who left them.

An upload waits between its preview and its import (so the file is not picked again), and
an outcome between the POST that made it and the page the browser is redirected to (so a
refresh re-posts nothing). They live as files under the data directory, which every worker
of one server shares, and are swept once older than ``KEEP_S``.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import time
from pathlib import Path
from typing import IO, Any

__all__ = ["KEEP_S", "claim", "drop", "park", "park_json", "read_json"]

KEEP_S = 30 * 60
_DIR = "parked"
_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,64}")
_KIND = re.compile(r"[a-z]{1,20}")


def _path(data_dir: Path, kind: str, owner_id: int, token: str) -> Path | None:
    if not _TOKEN.fullmatch(token) or not _KIND.fullmatch(kind):
        return None
    return data_dir / _DIR / f"{kind}-{owner_id}-{token}"


def _sweep(folder: Path, now: float) -> None:
    """Remove what has been kept too long (anyone's: a token is only good for a while)."""
    for old in folder.iterdir():
        try:
            if now - old.stat().st_mtime > KEEP_S:
                old.unlink()
        except OSError:  # another worker swept it first
            continue


def park(*, data_dir: Path, kind: str, owner_id: int, content: IO[bytes] | bytes) -> str:
    """Keep the content for its owner and return the token that claims it."""
    folder = data_dir / _DIR
    folder.mkdir(parents=True, exist_ok=True)
    _sweep(folder, time.time())
    token = secrets.token_urlsafe(18)
    path = folder / f"{kind}-{owner_id}-{token}"
    partial = path.with_name(path.name + ".part")
    with partial.open("wb") as out:
        if isinstance(content, bytes):
            out.write(content)
        else:
            shutil.copyfileobj(content, out)
    os.replace(partial, path)  # whole or absent: a reader never sees half a file
    return token


def claim(*, data_dir: Path, kind: str, owner_id: int, token: str) -> Path | None:
    """Return the kept file if the token is its owner's and still good, else None."""
    path = _path(data_dir, kind, owner_id, token)
    if path is None:
        return None
    try:
        fresh = time.time() - path.stat().st_mtime <= KEEP_S
    except OSError:
        return None
    return path if fresh else None


def drop(*, data_dir: Path, kind: str, owner_id: int, token: str) -> None:
    """Forget a kept file once it has served its purpose."""
    path = _path(data_dir, kind, owner_id, token)
    if path is not None:
        path.unlink(missing_ok=True)


def park_json(*, data_dir: Path, kind: str, owner_id: int, value: Any) -> str:
    """Keep a JSON-able value for its owner and return the token that reads it."""
    content = json.dumps(value, ensure_ascii=False, default=str).encode()
    return park(data_dir=data_dir, kind=kind, owner_id=owner_id, content=content)


def read_json(*, data_dir: Path, kind: str, owner_id: int, token: str) -> Any | None:
    """Return the kept value, or None when the token is not its owner's or has expired."""
    path = claim(data_dir=data_dir, kind=kind, owner_id=owner_id, token=token)
    if path is None:
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
