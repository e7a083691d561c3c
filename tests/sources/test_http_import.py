"""httpx is loaded without its command-line client (click, rich), the CLI
module still loads when something asks for it, and one verifying TLS
context serves every client of a process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_httpx_without_its_cli(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from shardpy.sources.http import http_client\n"
        "with http_client() as client:\n"
        "    assert client.headers['User-Agent'].startswith('shardpy/')\n"
        "assert 'httpx' in sys.modules and 'httpx._main' not in sys.modules\n"
        "assert 'rich' not in sys.modules and 'click' not in sys.modules\n"
        # One verifying TLS context for every client of the process.
        "import ssl\n"
        "from shardpy.sources.http import _ssl_context\n"
        "ctx = _ssl_context()\n"
        "assert ctx is _ssl_context() and ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname\n"
        "import importlib.util\n"
        "if importlib.util.find_spec('click') and importlib.util.find_spec('rich'):\n"
        "    import httpx._main\n"  # the block is lifted: the CLI module imports as usual
        "    assert callable(httpx._main.main)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
