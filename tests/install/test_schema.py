"""Manifest and schema parsing (CONTRACT §2): the obsidian-mind shapes parse,
and every rule violation is a typed error naming file, key and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardpy.errors import ShardpyError
from shardpy.shard.manifest import load_manifest
from shardpy.shard.rules import missing_keys, note_type
from shardpy.shard.schema import load_schema
from shardpy.shard.walk import claim_module
from tests.shardkit import Cli, make_shard, read_json

# Written in the shape of obsidian-mind's .shardmind/shard.yaml (v6+).
OM_MANIFEST = """\
# editor schema hint comment, as the real file starts with one

apiVersion: v1
name: mind-like
namespace: someone
version: 6.1.0
description: "A vault for agent-assisted knowledge work"
persona: "People who think with an AI pair"
license: MIT
homepage: https://example.invalid/mind-like

requires:
  obsidian: ">=1.12.0"
  # hooks are TypeScript run natively by node
  node: ">=22.6.0"
  shardmind: ">=0.1.3"

hooks:
  bootstrap:
    script: .shardmind/hooks/bootstrap.ts
    # bump to re-run bootstrap on update
    fingerprint: "index-v1"
  personalize: .shardmind/hooks/personalize.ts
  post-update: .shardmind/hooks/post-update.ts
  timeout_ms: 60000
"""

# Written in the shape of obsidian-mind's .shardmind/shard-schema.yaml.
OM_SCHEMA = """\
schema_version: 1

# Values: a handful of questions on one screen.
values:
  user_name:
    type: string
    required: true
    message: "Your name"
    placeholder: "Sam Example"
    default: ""
    group: setup

  org_name:
    type: string
    message: "Organisation (or 'Independent')"
    default: "Independent"
    group: setup

  vault_purpose:
    type: select
    required: true
    message: "What is this vault for?"
    hint: "Picks the main lens; editable later."
    options:
      - { value: engineering, label: "Engineering",  description: "Projects, incidents, decisions" }
      - { value: research,    label: "Research",     description: "Sources and findings" }
      - { value: general,     label: "General",      description: "Anything" }
    default: engineering
    group: setup

  search_enabled:
    type: boolean
    message: "Enable semantic search?"
    default: true
    hint: "Needs an extra tool installed"
    group: setup

groups:
  - id: setup
    label: "Quick Setup"
    description: "A few questions."

# Modules: which files exist.
modules:
  brain:
    label: "Operational memory"
    paths: ["brain/"]
    removable: false

  work:
    label: "Projects and meetings"
    paths:
      - "work/Index.md"
      - "work/active/"
      - "bases/Work Dashboard.base"
    commands: ["om-meeting", "om-intake"]
    removable: false

  org:
    label: "People and teams"
    paths:
      - "org/"
      - "bases/People Directory.base"
    agents: ["people-profiler"]
    removable: true

  incidents:
    label: "Incident tracking"
    paths: ["work/incidents/", "bases/Incidents.base"]
    commands: ["om-incident-capture"]
    agents: ["slack-archaeologist"]
    removable: true

  claude:
    label: "Claude agent layer"
    paths: ["CLAUDE.md", ".claude/agents/", ".claude/commands/", ".claude/settings.json"]
    agents: ["claude"]
    removable: false

signals:
  - id: DECISION
    description: "A choice was made"
    routes_to: "work/Index.md decisions log"
    core: true

  - id: INCIDENT
    description: "An outage"
    routes_to: "work/incidents/"
    module: incidents

# Frontmatter: shorthand `key: [a, b]` means required keys.
frontmatter:
  global: [date, description, tags]

  work-note:
    required: [date, status, quarter]
    path_match: "work/active/**.md"

  one-on-one:
    required: [date, quarter]
    path_match: "work/1-1/*.md"

  person:
    required: [date, title]
    path_match: "org/people/*.md"

migrations: []
"""


def _write(tmp_path: Path, manifest: str = OM_MANIFEST, schema: str = OM_SCHEMA) -> Path:
    return make_shard(tmp_path / "shard", manifest=manifest, schema=schema)


def test_obsidian_mind_shapes_parse(tmp_path: Path) -> None:
    shard = _write(tmp_path)
    manifest = load_manifest(shard / ".shardmind/shard.yaml")
    assert manifest.identity == "someone/mind-like"
    assert manifest.requires == {"obsidian": ">=1.12.0", "node": ">=22.6.0", "shardmind": ">=0.1.3"}
    assert manifest.hooks.bootstrap is not None
    assert manifest.hooks.bootstrap.script == ".shardmind/hooks/bootstrap.ts"
    assert manifest.hooks.bootstrap.fingerprint == "index-v1"
    assert manifest.hooks.personalize == ".shardmind/hooks/personalize.ts"
    assert manifest.hooks.post_update == ".shardmind/hooks/post-update.ts"
    assert manifest.hooks.timeout_ms == 60000

    schema = load_schema(shard / ".shardmind/shard-schema.yaml")
    assert list(schema.values) == ["user_name", "org_name", "vault_purpose", "search_enabled"]
    purpose = schema.values["vault_purpose"]
    assert [o.value for o in purpose.options or []] == ["engineering", "research", "general"]
    assert purpose.options is not None and purpose.options[0].description == "Projects, incidents, decisions"
    assert schema.removable_modules() == ["org", "incidents"]
    assert schema.frontmatter["global"].required == ["date", "description", "tags"]
    assert schema.signals[1].module == "incidents"

    # A `paths` claim beats a per-name claim (as ShardMind's classifyModule does):
    assert claim_module(".claude/agents/people-profiler.md", schema) == "claude"
    assert claim_module("x/agents/people-profiler.md", schema) == "org"
    assert claim_module(".codex/commands/om-incident-capture.md", schema) == "incidents"
    assert claim_module(".claude/commands/other.md", schema) == "claude"
    assert claim_module("bases/People Directory.base", schema) == "org"
    assert claim_module("work/incidents/2024 outage.md", schema) == "incidents"

    assert note_type("work/active/a.md", schema) == "work-note"
    assert note_type("work/active/proj/deep/a.md", schema) == "work-note"
    assert note_type("work/1-1/Sam 2024-01-01.md", schema) == "one-on-one"
    assert note_type("work/1-1/nested/x.md", schema) is None, "* stays inside one segment"
    kind, missing = missing_keys("org/people/Sam.md", "---\ndate: 2024-01-01\ntags: []\n---\n", schema)
    assert (kind, missing) == ("person", ["description", "title"])


def test_obsidian_mind_shape_installs_with_defaults(tmp_path: Path, cli: Cli) -> None:
    shard = _write(tmp_path)
    (shard / "brain").mkdir()
    (shard / "brain/North Star.md").write_text("# North Star\n")
    data = cli.install_json(shard, tmp_path / "vault", "--defaults", "--no-hooks", cwd=tmp_path)
    assert data["shard"] == "someone/mind-like" and data["version"] == "6.1.0"
    assert data["values"] == {
        "user_name": "",
        "org_name": "Independent",
        "vault_purpose": "engineering",
        "search_enabled": True,
    }
    assert read_json(tmp_path / "vault/.shardmind/state.json")["modules"]["incidents"] == "included"


def test_unknown_manifest_keys_are_kept_not_fatal(tmp_path: Path) -> None:
    shard = _write(tmp_path, manifest=OM_MANIFEST + "x-publisher: someone\nfuture_key: {a: 1}\n")
    manifest = load_manifest(shard / ".shardmind/shard.yaml")
    assert manifest.unknown_keys() == ["future_key", "x-publisher"]


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


MANIFEST_BREAKS = [
    ("apiVersion: v1", "apiVersion: v2", "apiVersion"),
    ("name: mind-like", "name: Mind_Like", "name"),
    ("namespace: someone", "namespace: some one", "namespace"),
    ("version: 6.1.0", "version: v6.1", "version"),
    ('  node: ">=22.6.0"', '  node: "at least 22"', "requires"),
    ("  timeout_ms: 60000", "  timeout_ms: 999", "hooks.timeout_ms"),
    ("  timeout_ms: 60000", "  timeout_ms: 600001", "hooks.timeout_ms"),
    ("  personalize: .shardmind/hooks/personalize.ts", "  personalize: /abs/hook.ts", "hooks.personalize"),
    ("  post-update: .shardmind/hooks/post-update.ts", "  pre-install: x.py", "hooks.pre-install"),
    ('    fingerprint: "index-v1"', '    fingerprint: "x"\n    extra: 1', "hooks.bootstrap.extra"),
]


@pytest.mark.parametrize(("old", "new", "key"), MANIFEST_BREAKS, ids=[b[1].strip() for b in MANIFEST_BREAKS])
def test_manifest_rule_violations_name_key_and_line(tmp_path: Path, old: str, new: str, key: str) -> None:
    text = OM_MANIFEST.replace(old, new)
    assert text != OM_MANIFEST
    shard = _write(tmp_path, manifest=text)
    with pytest.raises(ShardpyError) as info:
        load_manifest(shard / ".shardmind/shard.yaml")
    err = info.value
    assert err.code == "SHARD_MANIFEST_INVALID", err
    assert err.path == ".shardmind/shard.yaml"
    assert err.details["key"].startswith(key), err.details
    assert err.line == _line_of(text, new.strip().split("\n")[-1].split(":")[0] + ":"), (err.line, str(err))


def test_manifest_missing_required_key(tmp_path: Path) -> None:
    shard = _write(tmp_path, manifest=OM_MANIFEST.replace("namespace: someone\n", ""))
    with pytest.raises(ShardpyError) as info:
        load_manifest(shard / ".shardmind/shard.yaml")
    assert info.value.code == "SHARD_MANIFEST_INVALID"
    assert info.value.details["key"] == "namespace"


def test_engine_range_is_checked(tmp_path: Path) -> None:
    shard = _write(tmp_path, manifest=OM_MANIFEST.replace('shardmind: ">=0.1.3"', 'shardmind: ">=5.0.0"'))
    with pytest.raises(ShardpyError) as info:
        load_manifest(shard / ".shardmind/shard.yaml")
    assert info.value.code == "SHARD_ENGINE_UNSUPPORTED"
    assert ">=5.0.0" in info.value.message


INV = "SHARD_SCHEMA_INVALID"
SCHEMA_BREAKS = [
    # (old, new, code, key, the text on the reported line)
    ("schema_version: 1", "schema_version: 2", INV, "schema_version", "schema_version"),
    ("    type: boolean", "    type: toggle", INV, "values.search_enabled.type", "type: toggle"),
    ("    default: engineering", "    default: sales", INV, "values.vault_purpose", "vault_purpose:"),
    ('    default: "Independent"', "    default: 3", INV, "values.org_name", "org_name:"),
    ('    default: "Independent"', "", "SHARD_SCHEMA_DEFAULT_MISSING", None, "org_name:"),
    ("  org_name:", "  values:", "SHARD_SCHEMA_RESERVED_NAME", None, "  values:"),
    ("  org_name:", "  install_date:", "SHARD_SCHEMA_RESERVED_NAME", None, "install_date:"),
    (
        "    group: setup\n\n  org_name",
        "    group: nowhere\n\n  org_name",
        INV,
        "values.user_name.group",
        "group: nowhere",
    ),
    ("    module: incidents", "    module: pagers", INV, "signals.1.module", "module: pagers"),
    ('    paths: ["brain/"]', '    paths: ["/brain/"]', INV, "modules.brain.paths", 'paths: ["/brain/"]'),
    ('    paths: ["brain/"]', '    paths: ["../up/"]', INV, "modules.brain.paths", "../up/"),
    ('    label: "Operational memory"\n', "", INV, "modules.brain.label", "brain:"),
    ('    routes_to: "work/incidents/"\n', "", INV, "signals.1.routes_to", "- id: INCIDENT"),
    (
        "    required: [date, status, quarter]",
        "    required: yes-please",
        INV,
        "frontmatter.work-note.required",
        "required: yes-please",
    ),
    (
        "migrations: []",
        "migrations:\n  - from_version: one\n    changes: []",
        INV,
        "migrations.0.from_version",
        "from_version: one",
    ),
    (
        "migrations: []",
        "migrations:\n  - from_version: 1.0.0\n    changes:\n      - {type: explode, key: a}",
        INV,
        "migrations.0.changes.0",
        "type: explode",
    ),
    ('    label: "Quick Setup"\n', "", INV, "groups.0.label", "- id: setup"),
]


@pytest.mark.parametrize(("old", "new", "code", "key", "line_text"), SCHEMA_BREAKS)
def test_schema_rule_violations_name_key_and_line(
    tmp_path: Path, old: str, new: str, code: str, key: str | None, line_text: str
) -> None:
    text = OM_SCHEMA.replace(old, new, 1)
    assert text != OM_SCHEMA
    shard = _write(tmp_path, schema=text)
    with pytest.raises(ShardpyError) as info:
        load_schema(shard / ".shardmind/shard-schema.yaml")
    err = info.value
    assert err.code == code, str(err)
    assert err.path == ".shardmind/shard-schema.yaml"
    assert err.hint
    if key is not None:
        assert err.details["key"].startswith(key), err.details
    assert err.line == _line_of(text, line_text), (err.line, str(err))


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"type": "select", "default": "a"}, "options"),
        ({"type": "number", "default": 0, "min": 5, "max": 1}, "min"),
        ({"type": "number", "default": 0, "min": 1}, "below min"),
        ({"type": "number", "default": 11, "max": 10}, "above max"),
        ({"type": "multiselect", "default": ["z"], "options": [{"value": "a"}]}, "not in options"),
        ({"type": "select", "options": [{"value": "a", "default": True}]}, "only valid for type multiselect"),
        ({"type": "boolean", "default": "yes"}, "does not match type"),
        ({"type": "list", "default": "a,b"}, "does not match type"),
    ],
)
def test_value_definition_rules(value: dict[str, object], problem: str) -> None:
    from shardpy.shard.schema import parse_schema

    with pytest.raises(ShardpyError) as info:
        parse_schema({"values": {"k": value}}, display="s.yaml")
    assert info.value.code == "SHARD_SCHEMA_INVALID"
    assert problem in info.value.message, info.value.message
    assert info.value.details["key"].startswith("values.k")


def test_multiselect_per_option_defaults(tmp_path: Path) -> None:
    from shardpy.shard.schema import parse_schema

    schema = parse_schema(
        {
            "values": {
                "k": {"type": "multiselect", "options": [{"value": "a", "default": True}, {"value": "b"}]}
            }
        },
        display="s",
    )
    assert schema.values["k"].default == ["a"]
