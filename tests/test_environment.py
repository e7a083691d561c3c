"""The set-up check that replaces a wall of collection errors with one instruction."""

from __future__ import annotations

from pathlib import Path

from tests.environment import missing_distributions


def _pyproject(tmp_path: Path, deps: list[str], test: list[str]) -> Path:
    path = tmp_path / "pyproject.toml"
    quoted = lambda items: ", ".join(f'"{d}"' for d in items)  # noqa: E731
    path.write_text(
        f"[project]\nname = 'x'\ndependencies = [{quoted(deps)}]\n"
        f"[project.optional-dependencies]\ntest = [{quoted(test)}]\n",
        encoding="utf-8",
    )
    return path


def test_this_environment_has_everything() -> None:
    assert missing_distributions() == []


def test_missing_runtime_and_test_distributions_are_named(tmp_path: Path) -> None:
    path = _pyproject(
        tmp_path,
        ["pydantic>=2", "no-such-distribution-shardpy>=1", "other-missing; sys_platform == 'win32'"],
        ["pytest>=8", "also-not-installed-shardpy"],
    )
    assert missing_distributions(path) == ["no-such-distribution-shardpy", "also-not-installed-shardpy"]
