"""personalize: write the user's answers into the two notes that show them —
the user's name into brain/North Star.md's heading, and the owner,
organisation and purpose into the vault card of Home.md.

The engine calls it after install and adopt, and never when every value is
its default (Invariant 2), so a defaults install stays byte-identical to the
shard. It is idempotent: a second run changes nothing, and a heading or card
line the user rewrote in their own words is left alone.
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
        vals = values(ctx)
        results = {rel: personalize_file(root, rel, vals) for rel in (NORTH_STAR, HOME)}
    except HookError as exc:
        print(f"personalize: {exc}", file=sys.stderr)
        return 1
    for rel, outcome in results.items():
        if outcome == "changed":
            print(f"personalize: updated {rel}")
        elif outcome == "missing":
            print(f"personalize: {rel} is not in this vault; skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
