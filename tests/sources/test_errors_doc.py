"""Every error code the sources raise is documented in docs/ERRORS.md."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_codes_are_documented() -> None:
    raised: set[str] = set()
    for path in (ROOT / "shardpy" / "sources").glob("*.py"):
        raised |= set(re.findall(r'"((?:SOURCE|SHARD)_[A-Z_]+)"', path.read_text()))
    doc = (ROOT / "docs" / "ERRORS.md").read_text()
    section = doc.split("## Sources", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| `([A-Z_]+)` \|", section, flags=re.MULTILINE))
    assert raised, "no codes found: the scan is broken"
    assert raised <= documented, sorted(raised - documented)
