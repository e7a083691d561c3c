"""Copier templates built once per module (copier is slow): git repositories
with several tags in temp dirs."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.copier.kit import ANSWERS_BODY, ANSWERS_TEMPLATE, build_template
from tests.sources.support import GIT_ENV

# Every copier question type, `when`, a computed default, a validator, a secret.
QUESTIONS = """\
_subdirectory: template
_exclude:
  - "*.bak"
  - "skipme"
_skip_if_exists:
  - local.cfg
project_name:
  type: str
  help: Project name
  default: demo
  validator: "{% if not project_name %}a name is required{% endif %}"
slug:
  type: str
  default: "{{ project_name | lower }}-app"
count:
  type: int
  default: 3
ratio:
  type: float
  default: 0.5
use_ci:
  type: bool
  default: true
ci_name:
  type: str
  default: github
  when: "{{ use_ci }}"
license:
  type: str
  choices: [MIT, Apache-2.0, GPL-3.0]
  default: MIT
features:
  type: str
  choices: [docs, tests, lint]
  multiselect: true
  default: [docs]
extra:
  type: yaml
  default: "{a: 1, b: [x, y]}"
settings:
  type: json
  default: '{"k": 2}'
src_dir:
  type: path
  default: src
token:
  type: str
  secret: true
  default: s3cret
"""

README_V1 = """\
# {{ project_name }}

slug {{ slug }}, count {{ count }}, ratio {{ ratio }}
line a
line b
line c
line d
line e
line f
line g
the end
"""

V1 = {
    "copier.yml": QUESTIONS,
    f"template/{ANSWERS_TEMPLATE}": ANSWERS_BODY,
    "template/README.md.jinja": README_V1,
    "template/{{ slug }}/__init__.py.jinja": '"""{{ project_name }}"""\n',
    "template/{% if use_ci %}ci-{{ ci_name }}.yml{% endif %}.jinja": "ci: {{ ci_name }}\n",
    "template/{% if 'docs' in features %}docs{% endif %}/index.md.jinja": "docs of {{ project_name }}\n",
    "template/config.txt.jinja": "license {{ license }}\nfeatures {{ features }}\nextra {{ extra }}\n"
    "settings {{ settings }}\nsrc_dir {{ src_dir }}\ntoken-length {{ token | length }}\n",
    "template/{% yield f from features %}{{ f }}{% endyield %}.feature.jinja": "feature {{ f }}\n",
    "template/conflict.txt": "one\ntwo\nthree\n",
    "template/keep.txt": "keep me\n",
    "template/local.cfg": "default config\n",
    "template/dropped.txt": "dropped later\n",
    "template/old.bak": "excluded\n",
    "template/skipme": "excluded\n",
    "outside.txt": "not in _subdirectory\n",
}
V2 = {
    "template/README.md.jinja": README_V1.replace("the end", "the end, version 2"),
    "template/conflict.txt": "ONE from the template\ntwo\nthree\n",
    "template/keep.txt": "keep me, version 2\n",
    "template/dropped.txt": None,
    "template/local.cfg": "default config, version 2\n",
    "template/new.txt": "new in version 2\n",
}
V3 = {"template/new.txt": "new in version 3\n"}


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("SHARDPY_CACHE_DIR", str(tmp_path / "cache"))
    # copier's user settings (trust, defaults) must not leak in.
    settings = tmp_path / "copier-settings.yml"
    settings.write_text("defaults: {}\n")
    monkeypatch.setenv("COPIER_SETTINGS_PATH", str(settings))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    yield


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tags v1.0.0, v2.0.0, v3.0.0 of a template using every listed feature."""
    return build_template(
        tmp_path_factory.mktemp("copier") / "tpl", {"v1.0.0": V1, "v2.0.0": V2, "v3.0.0": V3}
    )


@pytest.fixture(scope="module")
def task_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A template with _tasks (needs --trust) and a migration in v2."""
    base = {
        "copier.yml": 'name:\n  type: str\n  default: t\n_tasks:\n  - "echo {{ name }} > from-task.txt"\n',
        ANSWERS_TEMPLATE: ANSWERS_BODY,
        "a.txt.jinja": "{{ name }}\n",
    }
    v2 = {
        "copier.yml": base["copier.yml"]
        + '_migrations:\n  - version: v2.0.0\n    command: "echo migrated > migrated.txt"\n'
    }
    return build_template(tmp_path_factory.mktemp("copier") / "tasks", {"v1.0.0": base, "v2.0.0": v2})
