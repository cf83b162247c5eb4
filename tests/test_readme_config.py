"""The README's configuration table is the whole list: every variable Settings reads is in it,
and each documented default is what Settings really uses when the variable is unset."""

from __future__ import annotations

import re
from pathlib import Path

from app.config import Settings

ROOT = Path(__file__).resolve().parent.parent
ROW = re.compile(r"^\| `(?P<names>[A-Z_]+)`[^|]*\| (?P<meaning>[^|]+) \| (?P<default>[^|]+) \|$")


def _table() -> dict[str, str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        match = ROW.match(line)
        if match:
            rows[match["names"]] = match["default"].strip()
    return rows


def test_every_variable_settings_reads_is_in_the_readme_table() -> None:
    source = (ROOT / "app" / "config.py").read_text()
    read = set(re.findall(r'"((?:RELEVO_[A-Z_]+)|DATABASE_URL)"', source))
    assert len(read) >= 15  # the scan finds what Settings reads
    assert read - set(_table()) == set()


def test_documented_plain_defaults_are_the_real_defaults() -> None:
    unset = Settings.from_env({})
    checked = 0
    for name, default in _table().items():
        plain = re.fullmatch(r"`([\w.]+)`", default)
        if not name.startswith("RELEVO_") or plain is None:
            continue
        assert Settings.from_env({name: plain[1]}) == unset, name
        checked += 1
    assert checked >= 8
