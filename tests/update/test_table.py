"""Every row of CONTRACT §9's table as its own scenario, through the CLI:
old shard, old values, user edit, new shard, new values → bytes and
ownership afterwards."""

from __future__ import annotations

from tests.update.kit import Scenario

NOTE_V1 = "# Title\n\nintro line\n\n## Section A\nalpha\n\n## Section B\nbeta\n\n## Section C\ngamma\n"


def base_files(note: str = NOTE_V1) -> dict[str, str | bytes]:
    return {"brain/Note.md": note, "brain/Other.md": "other\n", "extra/x.md": "x\n"}


def test_managed_nothing_changed_is_up_to_date(sc: Scenario) -> None:
    sc.shard("1.0.0", base_files())
    sc.install("--defaults")
    report = sc.update_json("--yes")
    assert report["up_to_date"] is True


def test_managed_template_changed_is_overwritten_silently(sc: Scenario) -> None:
    sc.shard("1.0.0", base_files())
    sc.install("--defaults")
    sc.shard("1.1.0", base_files(NOTE_V1.replace("alpha", "alpha v2")))
    report = sc.update_json("--yes")
    assert sc.action(report, "brain/Note.md")["action"] == "update"
    assert sc.read("brain/Note.md") == NOTE_V1.replace("alpha", "alpha v2")
    assert sc.ownership("brain/Note.md") == "managed"


def test_values_change_rerenders_managed_files(sc: Scenario) -> None:
    files = base_files()
    files[".claude/settings.json.njk"] = '{"purpose": "{{ purpose }}"}\n'
    sc.shard("1.0.0", files)
    sc.install("--defaults")
    assert sc.read(".claude/settings.json") == '{"purpose": "eng"}\n'
    sc.write("shard-values.yaml", sc.read("shard-values.yaml").replace("purpose: eng", "purpose: res"))
    report = sc.update_json("--yes")
    assert report["values"]["changed"] == {"purpose": {"old": "eng", "new": "res"}}
    assert sc.action(report, ".claude/settings.json")["action"] == "update"
    assert sc.read(".claude/settings.json") == '{"purpose": "res"}\n'
    assert sc.update_json("--yes")["up_to_date"] is True


def test_modified_nothing_upstream_keeps_user_bytes(sc: Scenario) -> None:
    sc.shard("1.0.0", base_files())
    sc.install("--defaults")
    mine = NOTE_V1.replace("beta", "beta (mine)")
    sc.write("brain/Note.md", mine)
    sc.shard("1.1.0", {**base_files(), "brain/Other.md": "other v2\n"})
    report = sc.update_json("--yes")
    assert (
        sc.action(report, "brain/Note.md") is None or sc.action(report, "brain/Note.md")["action"] == "keep"
    )
    assert sc.read("brain/Note.md") == mine
    assert sc.ownership("brain/Note.md") == "modified"


def test_disjoint_edits_merge_without_prompt(sc: Scenario) -> None:
    sc.shard("1.0.0", base_files())
    sc.install("--defaults")
    sc.write("brain/Note.md", NOTE_V1.replace("gamma", "gamma (mine)"))
    sc.shard("1.1.0", base_files(NOTE_V1.replace("alpha", "alpha v2")))
    report = sc.update_json()
    item = sc.action(report, "brain/Note.md")
    assert item["action"] == "merge"
    assert item["merge"]["conflicted"] == 0
    assert sc.read("brain/Note.md") == NOTE_V1.replace("alpha", "alpha v2").replace("gamma", "gamma (mine)")


def _same_lines(sc: Scenario) -> None:
    sc.shard("1.0.0", base_files())
    sc.install("--defaults")
    sc.write("brain/Note.md", NOTE_V1.replace("beta", "beta (mine)"))
    sc.shard("1.1.0", base_files(NOTE_V1.replace("beta", "beta (shard)")))


def test_same_lines_conflict_yes_keeps_user_bytes(sc: Scenario) -> None:
    _same_lines(sc)
    report = sc.update_json("--yes")
    item = sc.action(report, "brain/Note.md")
    assert item["action"] == "conflict" and item["choice"] == "keep"
    assert sc.read("brain/Note.md") == NOTE_V1.replace("beta", "beta (mine)")
    assert sc.ownership("brain/Note.md") == "modified"


def test_same_lines_conflict_markers_exactly(sc: Scenario) -> None:
    _same_lines(sc)
    sc.update("--yes", "--on-conflict", "markers")
    expected = NOTE_V1.replace(
        "beta\n", "<<<<<<< yours\nbeta (mine)\n=======\nbeta (shard)\n>>>>>>> shard 1.1.0\n"
    )
    assert sc.read("brain/Note.md") == expected


def test_same_lines_conflict_diff3_markers(sc: Scenario) -> None:
    _same_lines(sc)
    sc.update("--yes", "--on-conflict", "markers", "--conflict-style", "diff3")
    expected = NOTE_V1.replace(
        "beta\n",
        "<<<<<<< yours\nbeta (mine)\n||||||| base\nbeta\n=======\nbeta (shard)\n>>>>>>> shard 1.1.0\n",
    )
    assert sc.read("brain/Note.md") == expected


def test_same_lines_conflict_theirs_takes_shard(sc: Scenario) -> None:
    _same_lines(sc)
    sc.update("--yes", "--on-conflict", "theirs")
    assert sc.read("brain/Note.md") == NOTE_V1.replace("beta", "beta (shard)")
    assert sc.ownership("brain/Note.md") == "managed"


def test_user_deleted_section_is_honoured(sc: Scenario) -> None:
    sc.shard("1.0.0", base_files())
    sc.install("--defaults")
    sc.write("brain/Note.md", NOTE_V1.replace("## Section C\ngamma\n", "").rstrip("\n") + "\n")
    sc.shard("1.1.0", base_files(NOTE_V1.replace("intro line", "intro line v2")))
    sc.update("--yes")
    result = sc.read("brain/Note.md")
    assert "Section C" not in result and "gamma" not in result
    assert "intro line v2" in result


def test_user_additions_are_kept(sc: Scenario) -> None:
    sc.shard("1.0.0", base_files())
    sc.install("--defaults")
    sc.write("brain/Note.md", NOTE_V1.replace("## Section B\n", "## Section B\nmy added line\n"))
    sc.shard("1.1.0", base_files(NOTE_V1.replace("gamma", "gamma v2")))
    sc.update("--yes")
    assert sc.read("brain/Note.md") == NOTE_V1.replace(
        "## Section B\n", "## Section B\nmy added line\n"
    ).replace("gamma", "gamma v2")


def test_both_appended_keeps_both_shard_first(sc: Scenario) -> None:
    sc.shard("1.0.0", base_files())
    sc.install("--defaults")
    sc.write("brain/Note.md", NOTE_V1 + "\n## My notes\nmine\n")
    sc.shard("1.1.0", base_files(NOTE_V1 + "shard line\n"))
    report = sc.update_json("--yes")
    item = sc.action(report, "brain/Note.md")
    assert item["action"] == "merge"
    assert item["merge"]["both_added"] > 0
    assert sc.read("brain/Note.md") == NOTE_V1 + "shard line\n" + "\n## My notes\nmine\n"


def test_new_in_shard_is_added(sc: Scenario) -> None:
    sc.shard("1.0.0", base_files())
    sc.install("--defaults")
    sc.shard("1.1.0", {**base_files(), "brain/New.md": "new\n"})
    report = sc.update_json("--yes")
    assert sc.action(report, "brain/New.md")["action"] == "add"
    assert sc.read("brain/New.md") == "new\n"
    assert sc.ownership("brain/New.md") == "managed"


def test_removed_upstream_unmodified_deleted_modified_kept(sc: Scenario) -> None:
    sc.shard("1.0.0", {**base_files(), "brain/Gone.md": "gone\n", "brain/Kept.md": "kept\n"})
    sc.install("--defaults")
    sc.write("brain/Kept.md", "kept, edited\n")
    sc.shard("1.1.0", base_files())
    report = sc.update_json("--yes")
    assert sc.action(report, "brain/Gone.md")["action"] == "delete"
    assert not (sc.vault / "brain/Gone.md").exists()
    assert sc.action(report, "brain/Kept.md")["action"] == "orphan"
    assert sc.read("brain/Kept.md") == "kept, edited\n"
    assert sc.ownership("brain/Kept.md") == "user"


def test_module_added_and_removed_on_update(sc: Scenario) -> None:
    files = {**base_files(), "extra/y.md": "y\n"}
    sc.shard("1.0.0", files)
    sc.install("--defaults", "--exclude-module", "extra")
    assert not (sc.vault / "extra").exists()
    report = sc.update_json("--yes", "--add-module", "extra")
    assert sc.action(report, "extra/x.md")["action"] == "add"
    assert sc.read("extra/y.md") == "y\n"
    sc.write("extra/y.md", "y edited\n")
    report = sc.update_json("--yes", "--remove-module", "extra")
    assert sc.action(report, "extra/x.md")["action"] == "delete"
    assert not (sc.vault / "extra/x.md").exists()
    assert sc.read("extra/y.md") == "y edited\n"
    assert sc.state()["modules"]["extra"] == "excluded"
    assert "extra/y.md" not in sc.state()["files"]


def test_each_list_grew_and_shrank(sc: Scenario) -> None:
    values = {
        "teams": {"type": "list", "default": [{"name": "core"}], "group": "setup"},
    }
    files = {**base_files(), "teams/_each.md.njk": "# Team {{ item.name }}\n"}
    sc.shard("1.0.0", files, values=values)
    sc.install("--defaults")
    assert sc.read("teams/core.md") == "# Team core\n"
    sc.write("shard-values.yaml", "teams:\n  - name: core\n  - name: infra\n")
    report = sc.update_json("--yes")
    assert sc.action(report, "teams/infra.md")["action"] == "add"
    assert sc.read("teams/infra.md") == "# Team infra\n"
    sc.write("shard-values.yaml", "teams:\n  - name: infra\n")
    report = sc.update_json("--yes")
    assert sc.action(report, "teams/core.md")["action"] == "delete"
    assert not (sc.vault / "teams/core.md").exists()


def test_volatile_is_never_rewritten(sc: Scenario) -> None:
    files = {**base_files(), "inbox.md.njk": "{# shardmind: volatile #}\n# Inbox\n"}
    sc.shard("1.0.0", files)
    sc.install("--defaults")
    assert sc.read("inbox.md") == "# Inbox\n"
    sc.write("inbox.md", "# Inbox\n- my item\n")
    sc.shard("1.1.0", {**base_files(), "inbox.md.njk": "{# shardmind: volatile #}\n# Inbox v2\n"})
    sc.update("--yes")
    assert sc.read("inbox.md") == "# Inbox\n- my item\n"
    assert sc.ownership("inbox.md") == "volatile"


def test_empty_file_gets_content(sc: Scenario) -> None:
    sc.shard("1.0.0", {**base_files(), "brain/Empty.md": ""})
    sc.install("--defaults")
    sc.shard("1.1.0", {**base_files(), "brain/Empty.md": "now with content\n"})
    sc.update("--yes")
    assert sc.read("brain/Empty.md") == "now with content\n"


def test_missing_file_stays_deleted_until_restore(sc: Scenario) -> None:
    sc.shard("1.0.0", base_files())
    sc.install("--defaults")
    (sc.vault / "brain/Other.md").unlink()
    sc.shard("1.1.0", {**base_files(), "brain/Other.md": "other v2\n"})
    report = sc.update_json("--yes")
    assert sc.action(report, "brain/Other.md")["action"] == "missing"
    assert not (sc.vault / "brain/Other.md").exists()
    sc.shard("1.2.0", {**base_files(), "brain/Other.md": "other v3\n"})
    sc.update("--yes")
    assert not (sc.vault / "brain/Other.md").exists()
    assert "brain/Other.md" in sc.cli("status", "--json").json()["missing"]
    sc.update("--yes", "--restore-missing")
    assert sc.read("brain/Other.md") == "other v3\n"


def test_binary_never_text_merged(sc: Scenario) -> None:
    blob_v1 = bytes(range(256)) * 4
    sc.shard("1.0.0", {**base_files(), "assets/logo.png": blob_v1})
    sc.install("--defaults")
    mine = blob_v1 + b"mine\x00"
    sc.write("assets/logo.png", mine)
    theirs = blob_v1 + b"theirs\x00"
    sc.shard("1.1.0", {**base_files(), "assets/logo.png": theirs})
    report = sc.update_json("--yes")
    assert sc.action(report, "assets/logo.png")["action"] == "conflict"
    assert sc.read_bytes("assets/logo.png") == mine
    sc.shard("1.2.0", {**base_files(), "assets/logo.png": theirs + b"more"})
    sc.update("--yes", "--on-conflict", "theirs")
    assert sc.read_bytes("assets/logo.png") == theirs + b"more"


def test_user_content_root_never_overwritten_or_deleted(sc: Scenario) -> None:
    manifest = '{"user_content_roots": ["work/"], "infrastructure": ["brain/"]}\n'
    files = {
        **base_files(),
        "vault-manifest.json": manifest,
        "work/Start.md": "start\n",
        "work/Old.md": "old\n",
    }
    sc.shard("1.0.0", files)
    sc.install("--defaults")
    sc.write("work/Start.md", "start, mine\n")
    sc.shard("1.1.0", {**base_files(), "vault-manifest.json": manifest, "work/Start.md": "start v2\n"})
    report = sc.update_json("--yes", "--on-conflict", "theirs")
    assert sc.read("work/Start.md") == "start, mine\n"
    assert sc.action(report, "work/Start.md")["class"] == "user_content"
    assert sc.read("work/Old.md") == "old\n"  # unchanged, no longer produced: kept
    assert "work/Old.md" not in sc.state()["files"]


def test_frontmatter_tags_merge_both_sides(sc: Scenario) -> None:
    v1 = "---\ntitle: Note\ntags:\n  - a\n  - b\n---\n# Note\nbody\n"
    sc.shard("1.0.0", {**base_files(), "brain/Tagged.md": v1})
    sc.install("--defaults")
    sc.write("brain/Tagged.md", "---\ntitle: Note\ntags:\n  - a\n  - b\n  - mine\n---\n# Note\nbody\n")
    sc.shard(
        "1.1.0",
        {**base_files(), "brain/Tagged.md": "---\ntitle: Note\ntags:\n  - b\n  - shard\n---\n# Note\nbody\n"},
    )
    sc.update("--yes")
    text = sc.read("brain/Tagged.md")
    fm = text.split("---\n")[1]
    assert "- mine" in fm and "- shard" in fm and "- b" in fm and "- a" not in fm


def test_utf8_byte_exact_and_crlf_kept(sc: Scenario) -> None:
    v1 = "# Café ☕ 日本語\n\nline 1 🎉\nline 2\nline 3\n"
    sc.shard("1.0.0", {**base_files(), "brain/Intl.md": v1})
    sc.install("--defaults")
    mine = v1.replace("line 1 🎉", "line 1 🎉 ñandú").replace("\n", "\r\n")
    sc.write("brain/Intl.md", mine.encode("utf-8"))
    sc.shard("1.1.0", {**base_files(), "brain/Intl.md": v1.replace("line 3", "line 3 — über")})
    sc.update("--yes")
    expected = (
        v1.replace("line 1 🎉", "line 1 🎉 ñandú").replace("line 3", "line 3 — über").replace("\n", "\r\n")
    )
    assert sc.read_bytes("brain/Intl.md") == expected.encode("utf-8")


def test_edits_survive_three_updates_in_a_row(sc: Scenario) -> None:
    sc.shard("1.0.0", base_files())
    sc.install("--defaults")
    sc.write("brain/Note.md", NOTE_V1.replace("gamma", "gamma (mine)"))
    note = NOTE_V1
    for i, version in enumerate(["1.1.0", "1.2.0", "1.3.0"], 1):
        note = (
            note.replace("intro line", f"intro line v{i}") if i == 1 else note.replace(f"v{i - 1}", f"v{i}")
        )
        sc.shard(version, base_files(note))
        sc.update("--yes")
        assert sc.read("brain/Note.md") == note.replace("gamma", "gamma (mine)"), version
        assert sc.ownership("brain/Note.md") == "modified"


def test_static_files_never_templated(sc: Scenario) -> None:
    weird = "{{title}} and {% raw %} and {% if %} broken {{ \n"
    sc.shard("1.0.0", {**base_files(), "brain/Weird.md": weird})
    sc.install("--defaults")
    assert sc.read("brain/Weird.md") == weird
    sc.write("brain/Weird.md", weird + "my line\n")
    sc.shard("1.1.0", {**base_files(), "brain/Weird.md": "shard line\n" + weird})
    sc.update("--yes")
    assert sc.read("brain/Weird.md") == "shard line\n" + weird + "my line\n"
