"""Three-way merging of vault files: git-exact line merges plus frontmatter-aware rules.

Pure code: nothing here reads or writes files. ``merge_document`` is the
entry point for ``update``/``import``; ``merge3`` merges LF text.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # no typing at run time (shardpy/record.py: a sync and a search import none)
if TYPE_CHECKING:
    from typing import Any

    from shardpy.merge.document import DocumentMerge, diff_stats, is_binary, merge_document, unified_diff
    from shardpy.merge.frontmatter import ABSENT, KeyConflict, merge_frontmatter, split_frontmatter
    from shardpy.merge.text import BothAdded, ConflictRegion, MergeStats, TextMerge, merge3, merge3_git

# Loaded on first use: git's merge driver imports shardpy.merge.text once per
# file it merges and should not pay for the document and frontmatter modules.
_HOME = {
    "document": ("DocumentMerge", "diff_stats", "is_binary", "merge_document", "unified_diff"),
    "frontmatter": ("ABSENT", "KeyConflict", "merge_frontmatter", "split_frontmatter"),
    "text": ("BothAdded", "ConflictRegion", "MergeStats", "TextMerge", "merge3", "merge3_git"),
}
_WHERE = {name: module for module, names in _HOME.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'shardpy.merge' has no attribute {name!r}")
    return getattr(importlib.import_module(f"shardpy.merge.{module}"), name)


__all__ = [
    "ABSENT",
    "BothAdded",
    "ConflictRegion",
    "DocumentMerge",
    "KeyConflict",
    "MergeStats",
    "TextMerge",
    "diff_stats",
    "is_binary",
    "merge3",
    "merge3_git",
    "merge_document",
    "merge_frontmatter",
    "split_frontmatter",
    "unified_diff",
]
