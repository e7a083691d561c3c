"""The CLI's stand-in for pydantic's plugin loader (shardpy.cli.app._light_plugin_loader):
no importlib.metadata while every plugin is off, pydantic's own loader otherwise."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.shardkit import REPO_ROOT

PRELUDE = (
    "import os, sys\n"
    "from shardpy.cli.app import _no_pydantic_plugin_scan\n"
    "_no_pydantic_plugin_scan()\n"
    "from shardpy.shard.schema import parse_schema\n"
    "schema = parse_schema({'values': {'a': {'type': 'number', 'default': 2, 'min': 1}}}, display='s')\n"
    "assert schema.values['a'].min == 1.0 and schema.values['a'].default == 2\n"
)


def _run(code: str, **env: str) -> list[str]:
    base = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    done = subprocess.run(
        [sys.executable, "-c", PRELUDE + code],
        capture_output=True,
        text=True,
        env={**base, "PYTHONPATH": str(REPO_ROOT), **env},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_no_package_metadata_is_read_while_plugins_are_off() -> None:
    out = _run("print('importlib.metadata' in sys.modules, os.environ['PYDANTIC_DISABLE_PLUGINS'])")
    assert out == ["False", "__all__"]
    assert _run("print('importlib.metadata' in sys.modules)", PYDANTIC_DISABLE_PLUGINS="1") == ["False"]


def test_pydantic_gets_its_own_loader_once_plugins_are_on() -> None:
    code = (
        "from pydantic.plugin import _loader\n"
        "os.environ['PYDANTIC_DISABLE_PLUGINS'] = 'someone-else'\n"
        "from pydantic.plugin._loader import get_plugins\n"
        "plugins = list(get_plugins())\n"
        "real = sys.modules['pydantic.plugin._loader']\n"
        # The real loader is a module from a file; the stand-in is made in memory (no __file__),
        # whatever pydantic names its imports (2.13 renamed entry_points).
        "print(real is not _loader, _loader.PYDANTIC_ENTRY_POINT_GROUP, hasattr(real, '__file__'))\n"
    )
    assert _run(code) == ["True", "pydantic", "True"]


def test_a_user_setting_that_keeps_some_plugins_gets_the_real_loader() -> None:
    loader = "sys.modules['pydantic.plugin._loader']"
    code = f"print('importlib.metadata' in sys.modules, hasattr({loader}, '__file__'))"
    assert _run(code, PYDANTIC_DISABLE_PLUGINS="some-plugin") == ["True", "True"]
