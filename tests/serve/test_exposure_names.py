"""The server's two questions agree on a note whose name holds a control character: neither lists
it nor reads it (it was listed, and then no reference could name it: a helper's review). The
plain note beside it is both listed and read."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardpy.serve.exposure import Exposure

NAMES = ["plain.md", "It\u00e2\u0080\u0099s.md", "tab\there.md", "esc\x1b[31m.md", "csi\x9b.md"]


@pytest.mark.parametrize("name", NAMES)
def test_listing_and_reading_agree(tmp_path: Path, name: str) -> None:
    (tmp_path / "brain").mkdir()
    (tmp_path / "brain" / name).write_text("# t\n\nbody\n", encoding="utf-8")
    exposure = Exposure.load(tmp_path)
    rel = f"brain/{name}"
    listed = rel in exposure.notes()
    readable = exposure.may_read(rel) is not None
    assert listed == readable
    assert listed == (name == "plain.md")
