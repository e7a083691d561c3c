"""Three-way merging of vault files: git-exact line merges plus frontmatter-aware rules.

Pure code: nothing here reads or writes files. ``merge_document`` is the
entry point for ``update``/``import``; ``merge3`` merges LF text.
"""

from shardpy.merge.document import DocumentMerge, diff_stats, is_binary, merge_document, unified_diff
from shardpy.merge.frontmatter import ABSENT, KeyConflict, merge_frontmatter, split_frontmatter
from shardpy.merge.text import BothAdded, ConflictRegion, MergeStats, TextMerge, merge3

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
    "merge_document",
    "merge_frontmatter",
    "split_frontmatter",
    "unified_diff",
]
