"""Launch QMD's MCP server on this vault's own index (registered in .mcp.json).

The index name comes from the same resolver every hook uses (the manifest's
qmd_index, else the vault folder's name), so search reads the store that
bootstrap and the refresh hooks write. Without qmd on PATH it writes one line
and exits 0: the entry is rendered whatever the machine has (a defaults
install equals the shard's files), so a machine without qmd is an expected
state, not a failure; the agent simply has no qmd tools, and grep and the
vault's own server (`shardpy serve`) still search (docs/FLAGSHIP.md).
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True

import os  # noqa: E402
import shutil  # noqa: E402

from vaultlib.qmd import index_name  # noqa: E402
from vaultlib.vault import load_manifest, vault_root  # noqa: E402


def main() -> int:
    qmd = shutil.which("qmd")
    if qmd is None:
        sys.stderr.write(
            "qmd is not installed (npm install -g @tobilu/qmd): no qmd tools;"
            " vault search falls back to grep.\n"
        )
        return 0
    root = vault_root()
    name = index_name(root, load_manifest(root))
    argv = [qmd, "--index", name, "mcp", *sys.argv[1:]]
    if os.name == "nt":
        # npm installs qmd as a .cmd shim there, which exec cannot start.
        import subprocess

        return subprocess.call(argv, cwd=str(root))
    os.chdir(root)
    os.execv(qmd, argv)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
