"""Rendering rules (CONTRACT §4): sandbox, frontmatter safety, volatile
marker, `_each` iterators, computed defaults, the render context, static
files, and module claims (§2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardpy.errors import ShardpyError
from shardpy.notes.frontmatter import parse_frontmatter
from shardpy.shard.render import RenderContext, render_template
from shardpy.shard.schema import parse_schema
from shardpy.shard.values import resolve_defaults
from shardpy.shard.walk import claim_module
from tests.shardkit import Cli, make_shard, read_json, sha256, values_yaml

INSTALL_DATE = "2023-04-05T06:07:08Z"


def ctx(values: dict[str, Any] | None = None, modules: list[str] | None = None) -> RenderContext:
    return RenderContext(values or {}, modules or [], "demo", "acme", "1.2.3", INSTALL_DATE)


def render(source: str, values: dict[str, Any] | None = None, *, output: str = "out.md") -> str:
    [one] = render_template(source, output, ctx(values), name="t.md.njk")
    return one.text


def render_error(source: str, values: dict[str, Any] | None = None) -> ShardpyError:
    with pytest.raises(ShardpyError) as info:
        render(source, values)
    return info.value


# --- sandbox ---------------------------------------------------------------


@pytest.mark.parametrize(
    "expression",
    [
        "''.__class__.__mro__[1].__subclasses__()",
        "cycler.__init__.__globals__",
        "joiner.__init__.__globals__['os']",
        "namespace.__init__.__globals__",
        "values.update({'x': 1})",
        "range(10 ** 9) | list",
    ],
)
def test_sandbox_refuses_python_internals(expression: str) -> None:
    err = render_error("ok\n{{ " + expression + " }}\n", {"a": 1})
    assert err.code == "RENDER_TEMPLATE_ERROR"
    assert err.path == "t.md.njk" and err.line == 2


def test_sandbox_escape_fails_the_whole_install(tmp_path: Path, cli: Cli) -> None:
    shard = make_shard(tmp_path / "shard", files={"x.md.njk": "{{ cycler.__init__.__globals__.os }}\n"})
    res = cli.run("install", shard, tmp_path / "vault", "--defaults", "--json", cwd=tmp_path)
    assert res.error_code() == "RENDER_TEMPLATE_ERROR"
    assert not (tmp_path / "vault").exists()


# --- frontmatter -------------------------------------------------------------

EVIL = 'x"\nadmin: true'

VALID_YAML_BLOCK = (
    '---\ntitle: "{{ user_name }}"\nowner: {{ user_name }}\ntags: [a]\n---\nHi {{ user_name }}\n'
)
TAGGED_BLOCK = (
    '---\n{% if user_name %}\ntitle: {{ user_name }}\n{% endif %}\nquoted: "{{ user_name }}"\n'
    "n: {{ n }}\n---\nbody\n"
)


@pytest.mark.parametrize("template", [VALID_YAML_BLOCK, TAGGED_BLOCK], ids=["valid-yaml", "with-tags"])
@pytest.mark.parametrize(
    "value",
    [EVIL, "a: b", "- item", "# not a comment", "'single'", '"double"', "{x: 1}", "[1, 2]", "---", "\n\n"],
)
def test_a_value_never_adds_a_key_or_breaks_the_yaml(template: str, value: str) -> None:
    text = render(template, {"user_name": value, "n": 3})
    front = parse_frontmatter(text)
    assert front is not None, text
    expected_keys = {"title", "owner", "tags"} if template is VALID_YAML_BLOCK else {"title", "quoted", "n"}
    assert set(front) == expected_keys, text
    assert front["title"] == value
    assert "admin" not in front


@settings(max_examples=150, deadline=None)
@given(
    value=st.text(max_size=40) | st.sampled_from([EVIL, "x\x85admin: true", "a\u2028b: c", "k: v\r\nz: 1"])
)
def test_frontmatter_round_trips_any_text(value: str) -> None:
    template = "---\ntitle: Hi {{ user_name }}\nowner: {{ user_name }}\n---\n"  # structured, plain scalars
    for tpl, keys in ((VALID_YAML_BLOCK, 3), (TAGGED_BLOCK, 3), (template, 2)):
        front = parse_frontmatter(render(tpl, {"user_name": value, "n": 1}))
        assert front is not None
        if value or tpl is not TAGGED_BLOCK:  # `{% if user_name %}` drops the title for an empty value
            assert len(front) == keys, front
            assert front["title"] == ("Hi " + value if tpl is template else value)


def test_frontmatter_keeps_types_of_whole_unquoted_values() -> None:
    template = "---\n{% if true %}\nn: {{ n }}\nflag: {{ flag }}\n"
    template += "teams: {{ teams }}\nq: '{{ n }}'\n{% endif %}\n---\n"
    front = parse_frontmatter(render(template, {"n": 3, "flag": False, "teams": ["a", "b"]}))
    assert front == {"n": 3, "flag": False, "teams": ["a", "b"], "q": "3"}


def test_frontmatter_loop_builds_keys_from_the_template() -> None:
    template = "---\n{% for t in teams %}\n{{ t }}: {{ who }}\n{% endfor %}\n---\nbody\n"
    front = parse_frontmatter(render(template, {"teams": ["core", "ops"], "who": EVIL}))
    assert front == {"core": EVIL, "ops": EVIL}


def test_frontmatter_that_is_not_a_mapping_after_rendering_is_typed() -> None:
    err = render_error("---\n{% if true %}\n- a\n- b\n{% endif %}\n---\nbody\n")
    assert err.code == "RENDER_FRONTMATTER_INVALID"
    err = render_error("---\n{% if true %}\na: [b\n{% endif %}\n---\nbody\n")
    assert err.code == "RENDER_FRONTMATTER_INVALID"


def test_body_error_line_counts_the_frontmatter() -> None:
    err = render_error("---\ntitle: x\nother: y\n---\nline 5\n{{ broken( }}\n")
    assert (err.code, err.line) == ("RENDER_TEMPLATE_ERROR", 6)
    err = render_error("---\ntitle: x\nbad: {{ nope( }}\n---\nbody\n")
    assert (err.code, err.line) == ("RENDER_TEMPLATE_ERROR", 3)
    err = render_error('---\ntitle: x\nok: "{{ 1 }}"\nbad: "{{ nope( }}"\n---\nbody\n')  # valid YAML block
    assert (err.code, err.line) == ("RENDER_TEMPLATE_ERROR", 4)


def test_body_is_rendered_as_text_not_yaml() -> None:
    assert render("---\na: 1\n---\n{{ v }}\n", {"v": EVIL}) == f"---\na: 1\n---\n{EVIL}\n"


# --- volatile, iterators -----------------------------------------------------


def test_volatile_marker_is_removed_and_flagged() -> None:
    [one] = render_template(
        "\n  {# shardmind: volatile #}\n# Inbox {{ n }}\n", "o.md", ctx({"n": 1}), name="t"
    )
    assert one.volatile and one.text == "# Inbox 1\n"
    [other] = render_template("# Inbox {# shardmind: volatile #}\n", "o.md", ctx(), name="t")
    assert not other.volatile, "the marker must be the first non-blank content"


def test_each_renders_one_file_per_item_named_by_slug_or_name() -> None:
    people = [{"name": "Ada Lovelace", "slug": "ada"}, {"name": "Bob"}]
    out = render_template(
        "---\nname: {{ item.name }}\n---\n# {{ item.name }} ({{ user }})\n",
        "people/_each.md",
        ctx({"people": people, "user": "me"}),
        name="people/_each.md.njk",
        iterator="people",
    )
    assert [(r.output, r.iterator_key) for r in out] == [("people/ada.md", "ada"), ("people/Bob.md", "Bob")]
    assert parse_frontmatter(out[0].text) == {"name": "Ada Lovelace"}
    assert out[1].text.endswith("# Bob (me)\n")


@pytest.mark.parametrize(
    "items",
    [
        [{"name": "a"}, {"name": "a"}],  # duplicate slug
        [{"title": "no slug or name"}],
        [{"slug": "../escape"}],
        [{"slug": ".."}],
        "not a list",
    ],
)
def test_each_refuses_bad_items(items: Any) -> None:
    with pytest.raises(ShardpyError) as info:
        render_template("x", "people/_each.md", ctx({"people": items}), name="n", iterator="people")
    assert info.value.code == "RENDER_ITERATOR_INVALID"


def test_each_through_install_records_iterator_keys(tmp_path: Path, cli: Cli) -> None:
    shard = make_shard(
        tmp_path / "shard",
        schema={"values": {"team": {"type": "list", "default": [{"name": "Core", "slug": "core"}, "ops"]}}},
        files={"team/_each.md.njk": "# {{ item.name if item.name else item }}\n"},
    )
    vault = tmp_path / "vault"
    cli.install_json(shard, vault, "--defaults", cwd=tmp_path)
    assert (vault / "team/core.md").read_text() == "# Core\n"
    assert (vault / "team/ops.md").read_text() == "# ops\n"
    assert not (vault / "team/_each.md").exists()
    files = read_json(vault / ".shardmind/state.json")["files"]
    assert files["team/core.md"]["iterator_key"] == "core"
    assert files["team/core.md"]["template"] == "team/_each.md.njk"


# --- computed defaults ---------------------------------------------------------

COMPUTED_SCHEMA: dict[str, Any] = {
    "values": {
        "purpose": {
            "type": "select",
            "default": "engineering",
            "options": [{"value": "engineering"}, {"value": "research"}],
        },
        "user_name": {"type": "string", "default": "Ada"},
        "is_eng": {"type": "boolean", "default": "{{ purpose == 'engineering' }}"},
        "folders": {"type": "list", "default": "{{ ['work', purpose] }}"},
        "greeting": {"type": "string", "default": "{{ 'Hello ' ~ values.user_name }}"},
        "count": {"type": "number", "default": "{{ 2 * 3 }}"},
    }
}


def test_computed_defaults_resolve_against_other_answers() -> None:
    schema = parse_schema(COMPUTED_SCHEMA, display="s")
    assert resolve_defaults(schema, {}) == {
        "purpose": "engineering",
        "user_name": "Ada",
        "is_eng": True,
        "folders": ["work", "engineering"],
        "greeting": "Hello Ada",
        "count": 6,
    }
    research = resolve_defaults(schema, {"purpose": "research", "user_name": "Bo"})
    assert research["is_eng"] is False
    assert research["folders"] == ["work", "research"]
    assert research["greeting"] == "Hello Bo"


@pytest.mark.parametrize(
    ("vtype", "expression"),
    [("boolean", "{{ 'maybe' }}"), ("list", "{{ 'not json' }}"), ("number", "{{ 'x' }}")],
)
def test_a_computed_default_of_the_wrong_type_names_the_key(vtype: str, expression: str) -> None:
    schema = parse_schema({"values": {"k": {"type": vtype, "default": expression}}}, display="s")
    with pytest.raises(ShardpyError) as info:
        resolve_defaults(schema, {})
    assert info.value.code == "VALUES_COMPUTED_DEFAULT"
    assert info.value.details["key"] == "k"


def test_computed_defaults_through_install(tmp_path: Path, cli: Cli) -> None:
    shard = make_shard(
        tmp_path / "shard",
        schema=COMPUTED_SCHEMA,
        files={"out.md.njk": "{{ is_eng }} {{ folders | join(',') }} {{ greeting }} {{ count }}\n"},
    )
    vfile = tmp_path / "v.yaml"
    vfile.write_text(values_yaml({"purpose": "research"}))
    data = cli.install_json(shard, tmp_path / "vault", "--defaults", "--values", vfile, cwd=tmp_path)
    assert (tmp_path / "vault/out.md").read_text() == "False work,research Hello Ada 6\n"
    assert data["values"]["is_eng"] is False


# --- context and static files ---------------------------------------------------


def test_render_context_through_install(tmp_path: Path, cli: Cli) -> None:
    shard = make_shard(
        tmp_path / "shard",
        manifest={"name": "ctx-demo", "namespace": "acme", "version": "2.3.4"},
        schema={
            "values": {"user_name": {"type": "string", "default": "Ada"}},
            "modules": {
                "a": {"label": "A", "paths": ["a/"], "removable": True},
                "b": {"label": "B", "paths": ["b/"], "removable": True},
            },
        },
        files={
            "ctx.md.njk": (
                "{{ user_name }}|{{ values.user_name }}|{{ shard.name }}|{{ shard.version }}|"
                "{{ install_date }}|{{ year }}|{{ included_modules | join(',') }}\n"
            ),
            "a/x.md": "a\n",
            "b/y.md": "b\n",
        },
    )
    vault = tmp_path / "vault"
    cli.install_json(shard, vault, "--defaults", "--exclude-module", "b", cwd=tmp_path)
    state = read_json(vault / ".shardmind/state.json")
    install_date = state["install_date"]
    assert install_date.endswith("Z") and install_date[4] == "-"
    text = (vault / "ctx.md").read_text()
    assert text == f"Ada|Ada|ctx-demo|2.3.4|{install_date}|{install_date[:4]}|a\n"


STATIC = [
    "title: {{title}}\n",
    "{% raw %}{{ x }}{% endraw %}\n",
    "{% if broken\n{{ unclosed\n",
    "---\nfront: {{ matter }}\n---\n{# shardmind: volatile #}\n",
]


def test_static_files_are_copied_byte_for_byte(tmp_path: Path, cli: Cli) -> None:
    files: dict[str, str | bytes] = {f"s{i}.md": text for i, text in enumerate(STATIC)}
    files["crlf.md"] = b"line\r\nline\r\n"
    files["latin1.txt"] = "caf\xe9".encode("latin-1")
    shard = make_shard(tmp_path / "shard", files=files)
    vault = tmp_path / "vault"
    cli.install_json(shard, vault, "--defaults", cwd=tmp_path)
    for rel, content in files.items():
        raw = content if isinstance(content, bytes) else content.encode()
        assert sha256((vault / rel).read_bytes()) == sha256(raw), rel
    recs = read_json(vault / ".shardmind/state.json")["files"]
    assert all(not r.get("volatile") for r in recs.values())


def test_volatile_file_is_recorded_volatile(tmp_path: Path, cli: Cli) -> None:
    shard = make_shard(tmp_path / "shard", files={"Inbox.md.njk": "{# shardmind: volatile #}\n# Inbox\n"})
    vault = tmp_path / "vault"
    cli.install_json(shard, vault, "--defaults", cwd=tmp_path)
    assert (vault / "Inbox.md").read_text() == "# Inbox\n"
    rec = read_json(vault / ".shardmind/state.json")["files"]["Inbox.md"]
    assert rec["volatile"] is True and rec["ownership"] == "volatile"


# --- module claims ---------------------------------------------------------------

CLAIMS = parse_schema(
    {
        "modules": {
            "docs": {"label": "d", "paths": ["docs/"], "commands": ["om-a"]},
            "special": {"label": "s", "paths": ["docs/special.md"]},
            "deep": {"label": "d", "paths": ["docs/deep/"]},
            "deeper": {"label": "d", "paths": ["docs/deep/er/"]},
            "dash": {"label": "b", "bases": ["Dash", "Tpl"], "agents": ["brag"]},
            "allbases": {"label": "b", "paths": ["bases/Other.base"]},
            "cmds": {"label": "c", "commands": ["om-a", "om-b"], "agents": ["helper"]},
            "settings": {"label": "s", "paths": [".claude/settings.json"]},
        }
    },
    display="s",
)


@pytest.mark.parametrize(
    ("path", "module"),
    [
        ("docs/readme.md", "docs"),
        ("docs/special.md", "special"),  # exact path beats a prefix
        ("docs/special.md/x", "special"),  # an entry without `/` naming a folder claims it
        ("docs/deep/x.md", "deep"),  # longest prefix wins
        ("docs/deep/er/x.md", "deeper"),
        ("bases/Dash.base", "dash"),
        ("bases/Tpl.base.njk", "dash"),
        ("bases/Other.base", "allbases"),
        ("bases/Unknown.base", None),
        ("docs/commands/om-a.md", "docs"),  # a path claim beats a command name
        (".claude/commands/om-b.md", "cmds"),
        (".claude/Commands/om-b.md", "cmds"),  # directory name is case-insensitive
        ("x/y/AGENTS/helper.md.njk", "cmds"),  # any depth; `.njk` stripped
        (".claude/agents/brag.md", "dash"),
        (".claude/agents/unknown.md", None),
        (".claude/commands/sub/om-b.md", None),  # parent directory must be `commands`
        ("om-b.md", None),
        (".claude/settings.json.njk", "settings"),  # a path entry names the output
        ("notes/a.md", None),
    ],
)
def test_module_claim_priority(path: str, module: str | None) -> None:
    assert claim_module(path, CLAIMS) == module
