"""The option tables' choices: each a ``Literal``, its values what the option accepts.

Apart from shardpy/cli/options.py because a ``Literal`` needs ``typing`` at run time, and a
one-shot ``shardpy search``, whose table has no choice, pays for none of it (shardpy/record.py).
"""

from __future__ import annotations

from typing import Literal

OnConflict = Literal["keep", "theirs", "markers"]
ConflictStyle = Literal["merge", "diff3"]
AdoptMode = Literal["keep-mine", "use-shard", "merge", "ask"]
ImportFormat = Literal["basic-memory", "claude-code-memory", "mcp-memory"]
