"""post-update: finish an update of agent-vault — tell the user what arrived:
new commands, and where the changelog is.

It writes no file (Invariant 3 allows a post-update hook only new files, and
shardpy undoes any other write). The values reach the Home card and the
North Star heading through their templates, which update re-renders and
merges itself when shard-values.yaml changes.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True

import os  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _hooklib import HookError, load_context, vault_root  # noqa: E402


def main() -> int:
    try:
        ctx = load_context()
        vault_root(ctx)
    except HookError as exc:
        print(f"post-update: {exc}", file=sys.stderr)
        return 1
    raw_new = ctx.get("new_files")
    new_files = [p for p in raw_new if isinstance(p, str)] if isinstance(raw_new, list) else []
    raw_removed = ctx.get("removed_files")
    removed = [p for p in raw_removed if isinstance(p, str)] if isinstance(raw_removed, list) else []
    raw_shard = ctx.get("shard")
    shard = raw_shard if isinstance(raw_shard, dict) else {}
    before, after = ctx.get("previous_version") or "?", shard.get("version") or "?"

    print(
        f"post-update: agent-vault {before} -> {after}: {len(new_files)} files added, {len(removed)} removed."
    )
    commands = sorted(
        os.path.splitext(os.path.basename(p))[0]
        for p in new_files
        if p.startswith(".claude/commands/") and p.endswith(".md")
    )
    if commands:
        print("post-update: new commands: " + ", ".join(f"/{c}" for c in commands))
    print("post-update: see CHANGELOG.md for what changed.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
