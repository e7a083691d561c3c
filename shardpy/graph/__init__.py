"""The memory graph: entities as notes under ``<memory_root>/graph/`` (docs/MEMORY.md).

Pure modules over a note's text (``facts``, ``note``, ``ops``, ``traverse``), a derived
index kept fresh by file stat (``store``), and one writer entry (``commit``) that runs a
graph change as one :class:`~shardpy.apply.transaction.Transaction` under the vault lock.
Nothing here knows about MCP or callers: visibility arrives as a predicate.
"""
