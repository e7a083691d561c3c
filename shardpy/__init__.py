"""shardpy: a package manager for Obsidian vault templates ("shards")."""

__version__ = "0.1.0"

# The ShardMind engine-contract level shardpy implements: a shard that says
# `requires: {shardmind: ">=0.1.3"}` installs; a range this level does not
# meet is refused (SHARD_ENGINE_UNSUPPORTED).
SHARDMIND_CONTRACT_VERSION = "0.2.0"

# pydantic looks for plugins in every installed distribution's entry points the
# first time a model is built (~100 ms of a command's start-up); shardpy uses
# none, so its CLI turns the search off (PYDANTIC_DISABLE_PLUGINS, pydantic's
# documented switch) unless the user set that variable. The name below is the
# variable shardpy set itself, so hooks get the user's environment back.
PYDANTIC_PLUGINS_VAR = "PYDANTIC_DISABLE_PLUGINS"
pydantic_plugins_turned_off = False
