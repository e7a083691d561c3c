"""httpx is loaded without its command-line client (click, rich), and the
client still loads when something asks for it."""

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
        "import importlib.util\n"
        "if importlib.util.find_spec('click') and importlib.util.find_spec('rich'):\n"
        "    import httpx._main\n"  # the block is lifted: the CLI module imports as usual
        "    assert callable(httpx._main.main)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
