"""Where the importers' Markdown grammar used to live: :mod:`shardpy.notes.blocks` and
:mod:`shardpy.notes.wikilinks` own it now (issue 25). A re-export for the
readers not moved yet (serve, importers)."""

from shardpy.notes.blocks import InlineBlock as InlineBlock
from shardpy.notes.blocks import code_spans as code_spans
from shardpy.notes.blocks import inline_blocks as inline_blocks
from shardpy.notes.blocks import line_starts as line_starts
from shardpy.notes.blocks import markdown_it_blocks as markdown_it_blocks
from shardpy.notes.blocks import scanned_blocks as scanned_blocks
from shardpy.notes.blocks import strip_code_spans as strip_code_spans
from shardpy.notes.wikilinks import MdLink as MdLink
from shardpy.notes.wikilinks import WikiLink as WikiLink
from shardpy.notes.wikilinks import find_md_links as find_md_links
from shardpy.notes.wikilinks import find_wikilinks as find_wikilinks
from shardpy.notes.wikilinks import split_inner as split_inner
