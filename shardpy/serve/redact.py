"""No absolute path leaves the server (issue 24, item 16).

The caller is a session in another repository running someone else's prompt: where the vault, the
user's cache or QMD's binary live on this machine is none of its business. Every text the server
builds from something it did not write (an exception's message, a child's error) passes here
(tests/security/test_serve_writes.py).
"""

from __future__ import annotations

import re
from pathlib import Path

# Two or more segments after a leading "/" not glued to a word: "/tmp/x/y.db", "'/usr/bin/qmd'",
# never "work/active/" or the "/" of "without / \ [ ]".
_ABSOLUTE = re.compile(r"(?<![\w.~])/[^\s'\"/]+(?:/[^\s'\"]*)+")


def unplaced(text: str, vault: Path | None = None) -> str:
    """``text`` with the vault's location spelled vault-relative and any other absolute path as "…"."""
    if vault is not None:
        root = str(vault)
        text = text.replace(root + "/", "").replace(root, "the vault")
    return _ABSOLUTE.sub("…", text)
