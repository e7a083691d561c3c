"""Dump plain data as YAML for fixture files."""

from __future__ import annotations

from io import StringIO
from typing import Any

from ruamel.yaml import YAML


def dump(data: Any) -> str:
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    stream = StringIO()
    yaml.dump(data, stream)
    return stream.getvalue()
