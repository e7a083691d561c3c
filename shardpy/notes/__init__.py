"""The Markdown concepts every reader of a vault shares, one module each (issue 25).

``frontmatter`` (one splitter, a fast bounded reading loader, one writer),
``blocks`` (one CommonMark-exact block scanner: what is code and what is
text), ``wikilinks`` (one link grammar over it) and ``note`` (stem, title,
tags, aliases, type). Nothing here touches the file system beyond what it is
handed; see docs/ARCHITECTURE.md, "The notes package".
"""
