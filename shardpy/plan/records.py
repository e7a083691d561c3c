"""The state record of a file the shard produced (one constructor for
install, update and adopt)."""

from __future__ import annotations

from shardpy.shard.produce import Output
from shardpy.vault.manifest import ContentRules
from shardpy.vault.state import FileRecord, Ownership


def record_for(
    out: Output, content: ContentRules, *, ownership: Ownership = "managed", installed: str | None = None
) -> FileRecord:
    """``rendered_hash`` is always the shard's render, whatever is on disk."""
    return FileRecord(
        template=out.source,
        rendered_hash=out.sha256,
        ownership="volatile" if out.volatile else ownership,
        volatile=out.volatile,
        iterator_key=out.iterator_key,
        module=out.module,
        content_class=content.classify(out.path),
        installed_hash=installed,
        link=out.link,
    )
