"""post-update: finish an update of agent-vault.

It may change only files this update added (Invariant 3; shardpy restores
any other managed file a hook touches). So it personalises the North Star or
Home note only when the update (re)created one of them — for instance after
the user deleted it — and only when the user's values are not all defaults.
Then it tells the user what arrived: new commands, and where the changelog is.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True

import os  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _hooklib import HOME, NORTH_STAR, HookError, load_context, personalize_file, values, vault_root  # noqa: E402


def main() -> int:
    try:
        ctx = load_context()
        root = vault_root(ctx)
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

    if ctx.get("values_are_defaults") is not True:
        vals = values(ctx)
        for rel in (NORTH_STAR, HOME):
            if rel in new_files:
                try:
                    if personalize_file(root, rel, vals) == "changed":
                        print(f"post-update: personalised the new {rel}")
                except HookError as exc:
                    print(f"post-update: {exc}", file=sys.stderr)

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
