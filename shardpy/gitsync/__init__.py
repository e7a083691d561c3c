"""git as the sync engine of a vault on several machines; shardpy as its merge driver.

* :mod:`shardpy.gitsync.driver` — what ``shardpy merge-file --driver %O %A %B %P``
  does with one file: notes and the vault's records, each by its own rules.
* :mod:`shardpy.gitsync.setup` — ``shardpy git setup``: the driver in the
  repository's config, ``.gitattributes`` and ``.gitignore`` entries.
* :mod:`shardpy.gitsync.report` — what ``shardpy status`` says in a git vault.

The merging itself lives in :mod:`shardpy.merge`; this package only adapts
git's three files to it (see docs/GIT.md).
"""
