"""``shardpy sync``: git drives the vault between machines; shardpy drives git.

* :mod:`shardpy.sync.records` — this machine's id and its sync records, kept
  in the repository's own ``.git/config`` (never committed, never a vault file);
* :mod:`shardpy.sync.plan` — what a round would do (reads only);
* :mod:`shardpy.sync.round` — one round: recover, stamp and commit, fetch,
  merge through the merge driver (:mod:`shardpy.gitsync`), push;
* :mod:`shardpy.sync.remotes` — ``add-remote``, ``remove-remote``, ``init-seed``;
* :mod:`shardpy.sync.watch` — ``sync --watch``, the loop, and its service units.

Never a rebase, never a force-push (docs/GIT.md, "shardpy sync").
"""
