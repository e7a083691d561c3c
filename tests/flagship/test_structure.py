"""The flagship shard is consistent with itself: schema ↔ tree ↔ manifest ↔
scripts ↔ agent configs. These are the checks an engine cannot make for the
author — a module path that names nothing, a signal whose module is gone, a
removable module whose command would still install."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from tests.flagship.shardtools import (
    MIGRATIONS,
    REPO_ROOT,
    SHARD_ROOT,
    claim,
    defaults,
    installable_files,
    load_yaml,
    manifest,
    no_bytecode,
    render,
    render_context,
    schema,
    shipped_text,
    strip_njk,
    vault_manifest,
)

with no_bytecode():
    sys.path.insert(0, str(SHARD_ROOT / ".claude" / "scripts"))
    from vaultlib.notes import LinkIndex, check_note
    from vaultlib.vault import glob_match

SCHEMA = schema()
MODULES: dict[str, Any] = SCHEMA["modules"]
FILES = installable_files()
OUTPUTS = [strip_njk(f) for f in FILES]
RESERVED = {"shard", "install_date", "year", "included_modules", "values"}


def test_shard_size_is_a_real_vault() -> None:
    assert 80 <= len(FILES) <= 150, len(FILES)


def test_manifest_identity_and_hooks() -> None:
    m = manifest()
    assert (m["apiVersion"], m["namespace"], m["name"], m["version"]) == (
        "v1",
        "shardpy",
        "agent-vault",
        "1.0.0",
    )
    assert m["requires"]["python"] == ">=3.11"
    assert "shardpy" in m["requires"] and "shardmind" in m["requires"]
    for field in ("description", "persona", "license", "homepage"):
        assert isinstance(m[field], str) and m[field]
    hooks = m["hooks"]
    assert hooks["bootstrap"]["script"] == ".shardmind/hooks/bootstrap.py"
    assert isinstance(hooks["bootstrap"]["fingerprint"], str) and hooks["bootstrap"]["fingerprint"]
    # Values reach notes through templates only, so update re-renders them
    # (tests/hardening/test_repersonalise.py); no hook personalises.
    assert "personalize" not in hooks and "post-install" not in hooks
    assert not (SHARD_ROOT / ".shardmind/hooks/personalize.py").exists()
    assert hooks["post-update"] == ".shardmind/hooks/post_update.py"
    assert 1000 <= hooks["timeout_ms"] <= 600_000
    for script in (hooks["bootstrap"]["script"], hooks["post-update"]):
        assert (SHARD_ROOT / script).is_file(), script


def test_values_have_defaults_and_valid_shapes() -> None:
    values = SCHEMA["values"]
    assert list(values) == ["user_name", "org_name", "vault_purpose", "qmd_enabled"]
    group_ids = {g["id"] for g in SCHEMA["groups"]}
    assert len(group_ids) == 1
    for key, v in values.items():
        assert key not in RESERVED
        assert "default" in v, key
        assert v["group"] in group_ids
        assert v["message"]
    assert values["user_name"]["default"] == ""
    assert values["org_name"]["default"] == "Independent"
    assert values["vault_purpose"]["default"] == "engineering"
    assert [o["value"] for o in values["vault_purpose"]["options"]] == [
        "engineering",
        "research",
        "freelance",
        "general",
    ]
    # issue 29: computed at install, so QMD's server is registered only where qmd is installed
    qmd_default = "{{ command_found('qmd') }}"
    assert values["qmd_enabled"] == {**values["qmd_enabled"], "type": "boolean", "default": qmd_default}


def test_eleven_modules_with_the_right_removability() -> None:
    removable = {m for m, d in MODULES.items() if d["removable"]}
    fixed = {m for m, d in MODULES.items() if not d["removable"]}
    assert fixed == {"brain", "work", "reference", "thinking", "claude"}
    assert removable == {"org", "perf", "incidents", "one_on_ones", "codex", "gemini"}
    for mod in MODULES.values():
        assert isinstance(mod["paths"], list) and mod["label"]


def test_claude_never_claims_commands_or_agents_by_prefix() -> None:
    for mod_id, mod in MODULES.items():
        for entry in mod["paths"]:
            assert not entry.startswith((".claude/commands", ".claude/agents")), (mod_id, entry)


def test_every_module_path_and_name_exists_in_the_tree() -> None:
    outs = set(OUTPUTS)
    for mod_id, mod in MODULES.items():
        for entry in mod["paths"]:
            if entry.endswith("/"):
                assert any(o.startswith(entry) for o in outs), (mod_id, entry)
            else:
                assert entry in outs or entry + ".njk" in FILES, (mod_id, entry)
        for kind in ("commands", "agents"):
            for name in mod.get(kind) or []:
                assert f".claude/{kind}/{name}.md" in outs, (mod_id, kind, name)
        for base in mod.get("bases") or []:
            assert f"bases/{base}.base" in outs, (mod_id, base)


def test_every_command_agent_and_base_is_claimed_by_a_module() -> None:
    for rel in OUTPUTS:
        if rel.startswith((".claude/commands/", ".claude/agents/", "bases/", "templates/")):
            # The vault-wide view spans every module, so it belongs to none.
            assert claim(rel, MODULES) is not None or rel == "bases/Recently Touched.base", rel


@pytest.mark.parametrize("module", ["org", "perf", "incidents", "one_on_ones", "codex", "gemini"])
def test_removable_module_owns_all_of_its_files(module: str) -> None:
    mine = [rel for rel in FILES if claim(rel, MODULES) == module]
    assert mine, module
    expected_markers = {
        "org": [
            "org/People & Context.md",
            "bases/People Directory.base",
            ".claude/agents/people-profiler.md",
            ".claude/commands/person-update.md",
            "templates/Person.md",
            "templates/Team.md",
        ],
        "perf": [
            "perf/Brag Doc.md",
            "bases/Competency Map.base",
            ".claude/commands/review-brief.md",
            ".claude/commands/brag.md",
            ".claude/agents/brag-spotter.md",
            ".claude/agents/review-prep.md",
        ],
        "incidents": [
            "work/incidents/.gitkeep",
            "bases/Incidents.base",
            ".claude/commands/incident-capture.md",
            ".claude/agents/incident-timeline.md",
            "templates/Incident.md",
        ],
        "one_on_ones": [
            "work/1-1/.gitkeep",
            "bases/1-1 History.base",
            ".claude/commands/one-on-one-capture.md",
            ".claude/commands/one-on-one-prep.md",
            "templates/1-1.md",
        ],
        "codex": ["AGENTS.md", ".codex/hooks.json"],
        "gemini": ["GEMINI.md", ".gemini/settings.json"],
    }[module]
    for rel in expected_markers:
        assert rel in mine, (module, rel)
    # Nothing of this module's folders leaks to another owner.
    prefixes = [p for p in MODULES[module]["paths"] if p.endswith("/")]
    for rel in FILES:
        if any(rel.startswith(p) for p in prefixes):
            assert claim(rel, MODULES) == module, rel


def test_core_scripts_and_manuals_belong_to_always_on_modules() -> None:
    for rel in OUTPUTS:
        owner = claim(rel, MODULES)
        if rel.startswith(".claude/scripts/") or rel in ("CLAUDE.md", ".claude/settings.json"):
            assert owner == "claude", rel
        if owner is None:
            # Unclaimed files always install; they must be things every vault needs.
            assert rel in {
                "Home.md",
                "README.md",
                "CHANGELOG.md",
                "LICENSE",
                ".gitignore",
                ".gitattributes",
                ".mcp.json",
                ".shardmindignore",
                "vault-manifest.json",
                "bases/Recently Touched.base",
            } or rel.startswith(".obsidian/"), rel


def test_signals_match_modules_and_script_table() -> None:
    ids = [s["id"] for s in SCHEMA["signals"]]
    assert ids == [
        "DECISION",
        "ARCHITECTURE",
        "PROJECT_UPDATE",
        "PATTERN",
        "GOTCHA",
        "WIN",
        "INCIDENT",
        "PERSON_CONTEXT",
        "ONE_ON_ONE",
    ]
    gates = {s["id"]: s.get("module") for s in SCHEMA["signals"]}
    assert gates == {
        "DECISION": None,
        "ARCHITECTURE": None,
        "PROJECT_UPDATE": None,
        "PATTERN": None,
        "GOTCHA": None,
        "WIN": "perf",
        "INCIDENT": "incidents",
        "PERSON_CONTEXT": "org",
        "ONE_ON_ONE": "one_on_ones",
    }
    table = json.loads((SHARD_ROOT / ".claude/scripts/vaultlib/signals.json").read_text(encoding="utf-8"))
    by_id = {s["id"]: s for s in table["signals"]}
    for sig in SCHEMA["signals"]:
        assert sig["description"] and sig["routes_to"]
        if sig.get("module"):
            assert sig["module"] in MODULES and MODULES[sig["module"]]["removable"]
            assert not sig.get("core")
        else:
            assert sig["core"] is True
        script = by_id[sig["id"]]
        assert script["module"] == sig.get("module")
        assert script["core"] == bool(sig.get("core"))
        assert script["routes_to"] == sig["routes_to"]
        assert script["description"] == sig["description"]
        assert script["patterns"], sig["id"]
        for pattern in script["patterns"]:
            re.compile(pattern, re.IGNORECASE)
    assert set(by_id) == set(ids)


def test_frontmatter_rules_match_between_schema_and_manifest() -> None:
    fm = SCHEMA["frontmatter"]
    assert set(fm) == {"global", "work-note", "incident", "one-on-one", "person", "team", "brain-note"}
    vm = vault_manifest()["frontmatter_required"]
    assert vm["global"] == fm["global"]
    for note_type, rule in fm.items():
        if note_type == "global":
            continue
        assert vm[note_type] == {"required": rule["required"], "path_match": rule["path_match"]}
        assert rule["required"][0] == "date"


def test_value_migration_records_the_value_added_in_1_0_0() -> None:
    assert SCHEMA["migrations"] == [
        {
            "from_version": "1.0.0",
            # computed on the updating machine (issue 29): QMD registered only where qmd is found
            "changes": [{"type": "added", "key": "qmd_enabled", "default": "{{ command_found('qmd') }}"}],
        }
    ]


def _installed_class(vm: dict[str, Any], rel: str) -> set[str]:
    out = set()
    if any(glob_match(p, rel) for p in vm["infrastructure"]):
        out.add("infrastructure")
    if any(glob_match(p, rel) for p in vm["user_content_roots"]):
        out.add("user")
    return out


def test_vault_manifest_globs_match_real_paths_and_partition_the_tree() -> None:
    vm = vault_manifest()
    outs = [*OUTPUTS, ".shardmind/state.json"]
    for key in ("infrastructure", "user_content_roots"):
        for pattern in vm[key]:
            assert any(glob_match(pattern, o) for o in outs), (key, pattern)
    for rel in OUTPUTS:
        assert len(_installed_class(vm, rel)) == 1, (rel, _installed_class(vm, rel))
    for rel in vm["scaffold"]:
        assert rel in OUTPUTS and _installed_class(vm, rel) == {"user"}, rel


def test_vault_manifest_fields() -> None:
    vm = vault_manifest()
    m = manifest()
    assert vm["template"] == m["name"] and vm["version"] == m["version"]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", vm["released"])
    assert vm["qmd_index"] == ""
    assert isinstance(vm["eager_layer_budget_bytes"], int) and vm["eager_layer_budget_bytes"] >= 8000
    assert isinstance(vm["listing_collapse_threshold"], int) and vm["listing_collapse_threshold"] > 0
    assert vm["memory_root"] == "memories" and "memories/.gitkeep" in OUTPUTS
    fp = vm["version_fingerprints"]
    assert set(fp) == {"0.9.0", "1.0.0"}
    for path in fp["1.0.0"]["exists"]:
        assert path in OUTPUTS, path
    for path in fp["1.0.0"]["missing"]:
        assert path not in OUTPUTS, path


def test_migration_file_is_the_record_of_1_0_0() -> None:
    data = load_yaml(MIGRATIONS / "1.0.0.yaml")
    assert str(data["version"]) == "1.0.0" and data["description"]
    for rename in data["renames"]:
        assert set(rename) == {"from", "to"}
        assert rename["to"] in OUTPUTS, rename
        assert rename["from"] not in OUTPUTS, rename
        assert rename["from"].endswith("/") == rename["to"].endswith("/")
    assert sorted(p.name for p in MIGRATIONS.iterdir()) == ["1.0.0.yaml"]


def test_no_symlinks_and_no_special_files_anywhere() -> None:
    for dirpath, dirnames, filenames in os.walk(SHARD_ROOT):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            assert not p.is_symlink(), p
            assert p.is_dir() or p.is_file(), p


def test_empty_folders_carry_gitkeep_and_only_empty_folders_do() -> None:
    for dirpath, dirnames, filenames in os.walk(SHARD_ROOT):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        if not dirnames and not filenames:
            pytest.fail(f"empty folder without .gitkeep: {dirpath}")
        if ".gitkeep" in filenames:
            assert filenames == [".gitkeep"] and not dirnames, dirpath


def test_repository_only_files_are_ignored() -> None:
    assert (SHARD_ROOT / "CONTRIBUTING.md").is_file()
    assert "CONTRIBUTING.md" not in FILES
    assert not any(f.startswith(".shardmind/") for f in FILES)


def test_obsidian_config_has_ignore_filters() -> None:
    app = json.loads((SHARD_ROOT / ".obsidian/app.json").read_text(encoding="utf-8"))
    filters = app["userIgnoreFilters"]
    assert "templates/" in filters and "thinking/session-logs/" in filters
    for entry in filters:
        assert any(o.startswith(entry) or o == entry for o in OUTPUTS), entry


@pytest.mark.parametrize("qmd", [True, False])
def test_mcp_template_renders_valid_json_both_ways(qmd: bool) -> None:
    values = {**defaults(SCHEMA), "qmd_enabled": qmd}
    text = render(
        (SHARD_ROOT / ".mcp.json.njk").read_text(encoding="utf-8"),
        render_context(SCHEMA, values, list(MODULES)),
    )
    data = json.loads(text)
    assert ("qmd" in data["mcpServers"]) is qmd
    assert data["mcpServers"]["vault"] == {"command": "shardpy", "args": ["serve", "."]}
    if qmd:
        assert data["mcpServers"]["qmd"]["args"] == [".claude/scripts/qmd_mcp.py"]


def test_only_expected_templates() -> None:
    assert sorted(f for f in FILES if f.endswith(".njk")) == [
        ".mcp.json.njk",
        "Home.md.njk",
        "brain/North Star.md.njk",
    ]


def _hook_commands(config: dict[str, Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for event, groups in config["hooks"].items():
        for group in groups:
            for hook in group["hooks"]:
                assert hook["type"] == "command"
                script = re.search(r"\.claude/scripts/([a-z_]+\.py)", hook["command"])
                assert script, hook["command"]
                out.setdefault(event, []).append(script.group(1))
    return out


def test_agent_configs_wire_the_same_scripts_under_their_own_event_names() -> None:
    expect = {
        ".claude/settings.json": {
            "SessionStart": ["session_start.py"],
            "UserPromptSubmit": ["classify_message.py"],
            "PreToolUse": ["validate_write.py"],
            "PostToolUse": ["validate_write.py"],
            "PreCompact": ["pre_compact.py"],
            "Stop": ["stop_checklist.py"],
        },
        ".codex/hooks.json": {
            "SessionStart": ["session_start.py"],
            "UserPromptSubmit": ["classify_message.py"],
            "PreToolUse": ["validate_write.py"],
            "PostToolUse": ["validate_write.py"],
            "Stop": ["stop_checklist.py"],
        },
        ".gemini/settings.json": {
            "SessionStart": ["session_start.py"],
            "BeforeAgent": ["classify_message.py"],
            "BeforeTool": ["validate_write.py"],
            "AfterTool": ["validate_write.py"],
            "PreCompress": ["pre_compact.py"],
            "SessionEnd": ["stop_checklist.py"],
        },
    }
    for rel, wanted in expect.items():
        config = json.loads((SHARD_ROOT / rel).read_text(encoding="utf-8"))
        assert _hook_commands(config) == wanted, rel
        for scripts in wanted.values():
            for script in scripts:
                assert (SHARD_ROOT / ".claude/scripts" / script).is_file()


def test_slash_commands_and_agents_are_well_formed() -> None:
    for rel in OUTPUTS:
        if rel.startswith(".claude/commands/"):
            text = (SHARD_ROOT / rel).read_text(encoding="utf-8")
            assert text.startswith("---\ndescription: "), rel
            assert len(text) > 600, rel  # real instructions, not a stub
        if rel.startswith(".claude/agents/"):
            text = (SHARD_ROOT / rel).read_text(encoding="utf-8")
            name = PurePosixPath(rel).stem
            assert text.startswith(f"---\nname: {name}\ndescription: "), rel


def test_commands_reference_only_subagents_that_exist() -> None:
    agents = {PurePosixPath(r).stem for r in OUTPUTS if r.startswith(".claude/agents/")}
    for rel in OUTPUTS:
        if rel.startswith(".claude/commands/"):
            text = (SHARD_ROOT / rel).read_text(encoding="utf-8")
            for name in re.findall(r"`([a-z-]+)` subagent", text):
                assert name in agents, (rel, name)


def test_shipped_notes_pass_the_write_check() -> None:
    """Every note the shard ships as user content satisfies the same rules
    validate_write applies to the agent's writes (frontmatter, links)."""
    vm = vault_manifest()
    rules = vm["frontmatter_required"]
    index = LinkIndex(OUTPUTS)
    for rel in OUTPUTS:
        if not rel.endswith(".md") or _installed_class(vm, rel) != {"user"}:
            continue
        problems = check_note(shipped_text(rel), rel, rules, index)
        assert problems == [], (rel, problems)


def test_always_installed_notes_never_link_into_removable_modules() -> None:
    """A deselected module must not leave dangling links in the notes that stay."""
    removable_names: dict[str, str] = {}
    for rel in FILES:
        owner = claim(rel, MODULES)
        if owner and MODULES[owner]["removable"] and strip_njk(rel).endswith((".md", ".base")):
            name = PurePosixPath(strip_njk(rel)).name
            removable_names[name.lower()] = owner
            removable_names[name.lower().removesuffix(".md")] = owner
    for rel in FILES:
        owner = claim(rel, MODULES)
        if not strip_njk(rel).endswith(".md") or (owner and MODULES[owner]["removable"]):
            continue
        from vaultlib.notes import parse_frontmatter, wikilinks

        _, body = parse_frontmatter(shipped_text(strip_njk(rel)))
        for link in wikilinks(body):
            assert link.target.lower() not in removable_names, (rel, link.target)


def test_links_in_infrastructure_notes_resolve() -> None:
    index = LinkIndex(OUTPUTS)
    for rel in ("Home.md", "thinking/README.md"):
        problems = check_note(shipped_text(rel), rel, {}, index)
        assert problems == [], (rel, problems)


def test_scripts_are_stdlib_only() -> None:
    allowed_local = {"vaultlib", "_hooklib"}
    stdlib = set(sys.stdlib_module_names)
    for folder in (SHARD_ROOT / ".claude/scripts", SHARD_ROOT / ".shardmind/hooks"):
        for py in folder.rglob("*.py"):
            for line in py.read_text(encoding="utf-8").splitlines():
                m = re.match(r"^\s*(?:from|import)\s+([A-Za-z_][A-Za-z0-9_]*)", line)
                if m and not line.lstrip().startswith("from ."):
                    mod = m.group(1)
                    assert mod in stdlib or mod in allowed_local or mod == "__future__", (py, line)


def test_qmd_index_rule_is_the_same_in_scripts_and_hooks() -> None:
    with no_bytecode():
        sys.path.insert(0, str(SHARD_ROOT / ".shardmind" / "hooks"))
        import _hooklib
        from vaultlib.qmd import slugify

    for name in ["agent-vault", "My Vault", "Ünïcode Notes", "  ", "work.vault_2026", "A--B", "---"]:
        assert slugify(name) == _hooklib.slugify(name), name


def test_root_ignore_file_is_relative_to_the_repository_root() -> None:
    lines = [
        ln
        for ln in (REPO_ROOT / ".shardmindignore").read_text().splitlines()
        if ln and not ln.startswith("#")
    ]
    assert "shard-template/CONTRIBUTING.md" in lines


TEMPLATE_TYPES = {
    "templates/Work Note.md": "work-note",
    "templates/Incident.md": "incident",
    "templates/1-1.md": "one-on-one",
    "templates/Person.md": "person",
    "templates/Team.md": "team",
    "templates/Brain Note.md": "brain-note",
}


def test_templates_carry_the_frontmatter_of_their_note_type() -> None:
    from vaultlib.notes import parse_frontmatter

    rules = SCHEMA["frontmatter"]
    templates = [o for o in OUTPUTS if o.startswith("templates/")]
    assert len(templates) >= 12
    for rel in templates:
        fm, body = parse_frontmatter((SHARD_ROOT / rel).read_text(encoding="utf-8"))
        assert fm.present and fm.closed, rel
        needed = list(rules["global"])
        if rel in TEMPLATE_TYPES:
            needed += rules[TEMPLATE_TYPES[rel]]["required"]
        assert fm.missing(needed) == [], (rel, fm.missing(needed))
        assert "# {{title}}" in body, rel  # Obsidian's core Templates syntax, not Jinja


def test_bases_are_valid_and_point_at_real_folders() -> None:
    for rel in (o for o in OUTPUTS if o.endswith(".base")):
        text = (SHARD_ROOT / rel).read_text(encoding="utf-8")
        data = load_yaml(SHARD_ROOT / rel)
        assert isinstance(data, dict) and isinstance(data.get("views"), list) and data["views"], rel
        for view in data["views"]:
            assert view["type"] in ("table", "cards", "list") and view["name"], rel
            assert isinstance(view.get("order"), list) and view["order"], rel
        for folder in re.findall(r'file\.inFolder\("([^"]+)"\)', text):
            assert any(o.startswith(folder + "/") for o in OUTPUTS), (rel, folder)


def test_agent_settings_are_valid_json_and_scripts_run_under_python3() -> None:
    for rel in (
        ".claude/settings.json",
        ".codex/hooks.json",
        ".gemini/settings.json",
        ".obsidian/app.json",
        ".obsidian/templates.json",
        ".obsidian/core-plugins.json",
        "vault-manifest.json",
    ):
        json.loads((SHARD_ROOT / rel).read_text(encoding="utf-8"))
    for rel in (".claude/settings.json", ".codex/hooks.json", ".gemini/settings.json"):
        for groups in json.loads((SHARD_ROOT / rel).read_text())["hooks"].values():
            for group in groups:
                for hook in group["hooks"]:
                    assert hook["command"].startswith("python3 "), hook["command"]
