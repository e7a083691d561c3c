"""Whether this Python can run the suite at all (checked before collection, in conftest.py)."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def missing_distributions(pyproject: Path = PYPROJECT) -> list[str]:
    """Distributions pyproject.toml asks for (runtime and test extras) that this Python lacks."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    missing: list[str] = []
    for requirement in wanted:
        if ";" in requirement:
            continue  # platform-specific extras (a C speed-up) are not needed to run the suite
        name = re.match(r"[A-Za-z0-9._-]+", requirement)
        assert name is not None, requirement
        try:
            metadata.distribution(name.group())
        except metadata.PackageNotFoundError:
            missing.append(name.group())
    return missing
