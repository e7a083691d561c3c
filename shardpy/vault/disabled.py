"""Is a note soft-deleted? One answer for every reader (issue 30, "Deletes").

``shardpy rm`` writes ``disabled: true`` (and ``disabled_at``) into a note's
frontmatter (shardpy/sync/deletes.py); the one admission rule every reader
asks (shardpy/notes/visibility.py) holds such a note back from the search
index and from every MCP surface, through :func:`is_disabled`. Only the YAML boolean ``true``
counts: ``disabled: "yes"`` or ``disabled: 1`` is a user's own key, left alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["DISABLED", "DISABLED_AT", "is_disabled"]

DISABLED = "disabled"
DISABLED_AT = "disabled_at"


def is_disabled(frontmatter: Mapping[str, Any]) -> bool:
    return frontmatter.get(DISABLED) is True
