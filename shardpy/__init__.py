"""shardpy: a package manager for Obsidian vault templates ("shards")."""

__version__ = "0.1.0"

# The ShardMind engine-contract level shardpy implements: a shard that says
# `requires: {shardmind: ">=0.1.3"}` installs; a range this level does not
# meet is refused (SHARD_ENGINE_UNSUPPORTED).
SHARDMIND_CONTRACT_VERSION = "0.2.0"
