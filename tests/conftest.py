"""Fixtures shared by every test (builders live in tests/shardkit.py)."""

from __future__ import annotations

import signal
import sys

import pytest

from tests.environment import missing_distributions
from tests.shardkit import Cli


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    # Without pytest-xdist, the README's `-n 2` would stop at argparse's "unrecognized
    # arguments" before pytest_configure could say which packages are missing.
    if not pluginmanager.has_plugin("xdist"):
        # pytest reserves short options for plugins: registered the way pytest-xdist itself does.
        group = parser.getgroup("xdist", "distributed testing (pytest-xdist is not installed)")
        group._addoption("-n", "--numprocesses", dest="numprocesses", default=None, help="needs pytest-xdist")


def pytest_configure(config: pytest.Config) -> None:
    _sigint_reaches_children()
    # Without this, a Python that never ran the README's install command fails with
    # a ModuleNotFoundError per test module that happens to import a dependency.
    missing = missing_distributions()
    if config.getoption("numprocesses", None) is not None and not config.pluginmanager.has_plugin("xdist"):
        missing = sorted({*missing, "pytest-xdist"})
    if missing:
        raise pytest.UsageError(
            f"shardpy's dependencies are not installed for {sys.executable}: missing "
            f"{', '.join(missing)}.\nInstall them first: pip install -e '.[test]'"
        )


def _sigint_reaches_children() -> None:
    """A suite started in the background (`cmd &` in a script, nohup, some CI runners) inherits
    SIGINT ignored, and a process passes an ignored signal on to what it starts: every test that
    presses Ctrl-C on a shardpy process saw it ignored (8 failed so). With a handler here, each
    process a test starts gets SIGINT's default again (a handler is reset by exec, an ignored
    signal is not)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    # A developer's own settings must not leak into the tests.
    for key in ("SHARDPY_TEST_APPLY_DELAY", "SHARDPY_HOOK_CONTEXT", "SHARDPY_HOOK", "NO_COLOR"):
        monkeypatch.delenv(key, raising=False)
    # Nothing a test runs (the flagship's bootstrap builds a search index) writes the user's cache.
    monkeypatch.setenv("SHARDPY_CACHE_DIR", str(tmp_path_factory.mktemp("shardpy-cache")))


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Cli:
    return Cli(monkeypatch)
