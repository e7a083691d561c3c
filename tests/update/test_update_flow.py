"""Update beyond the table: migrations, links, hooks, resolution, dry run."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from tests.update.kit import Scenario
from tests.update.test_table import NOTE_V1, base_files


def tree(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            out[p.relative_to(root).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def test_dry_run_and_json_write_nothing(sc: Scenario) -> None:
    sc.shard("1.0.0", base_files())
    sc.install("--defaults")
    sc.write("brain/Note.md", NOTE_V1.replace("beta", "beta (mine)"))
    sc.shard("1.1.0", {**base_files(NOTE_V1.replace("alpha", "alpha 2")), "brain/New.md": "n\n"})
    before = tree(sc.vault)
    report = sc.update_json("--dry-run")
    assert report["dry_run"] is True
    assert {f["path"]: f["action"] for f in report["files"]} == {
        "brain/New.md": "add",
        "brain/Note.md": "merge",
    }
    assert report["files"][1]["merge"]["auto_merged"] >= 1
    text = sc.update("--dry-run").out
    assert "Dry run" in text and "brain/New.md" in text
    assert tree(sc.vault) == before


def test_rename_migration_keeps_edits_and_rewrites_links(sc: Scenario) -> None:
    files = {**base_files(), ".claude/commands/standup.md": "# Standup\nsteps\n"}
    sc.shard("1.0.0", files)
    sc.install("--defaults")
    sc.write("brain/Note.md", NOTE_V1.replace("alpha", "alpha (mine)"))
    sc.write(
        "journal/today.md",
        "see [[Note]] and [[Note|the note]] and [[brain/Note#Section B]]\n```\n[[Note]]\n```\n",
    )
    new_files = {
        "brain/Renamed.md": NOTE_V1.replace("gamma", "gamma v2"),
        "brain/Other.md": "other links [[Renamed]]\n",
        "extra/x.md": "x\n",
        ".claude/commands/daily-standup.md": "# Standup\nsteps\n",
    }
    migration = (
        "version: 1.1.0\ndescription: rename\nrenames:\n"
        "  - {from: brain/Note.md, to: brain/Renamed.md}\n"
        "  - {from: .claude/commands/standup.md, to: .claude/commands/daily-standup.md}\n"
    )
    sc.shard("1.1.0", new_files, file_migrations={"1.1.0.yaml": migration})
    report = sc.update_json("--yes")
    assert not (sc.vault / "brain/Note.md").exists()
    assert sc.read("brain/Renamed.md") == NOTE_V1.replace("alpha", "alpha (mine)").replace(
        "gamma", "gamma v2"
    )
    assert sc.action(report, "brain/Renamed.md")["from"] == "brain/Note.md"
    assert sc.read(".claude/commands/daily-standup.md") == "# Standup\nsteps\n"
    assert not (sc.vault / ".claude/commands/standup.md").exists()
    assert sc.read("journal/today.md") == (
        "see [[Renamed]] and [[Renamed|the note]] and [[brain/Renamed#Section B]]\n```\n[[Note]]\n```\n"
    )
    assert sc.action(report, "journal/today.md")["links_rewritten"] == 3
    assert sc.ownership("brain/Renamed.md") == "modified"
    assert "brain/Note.md" not in sc.state()["files"]


def test_ten_thousand_user_notes_untouched(sc: Scenario) -> None:
    sc.shard("1.0.0", base_files())
    sc.install("--defaults")
    notes = sc.vault / "notes"
    notes.mkdir()
    for i in range(10_000):
        (notes / f"n{i}.md").write_text(f"note {i} [[Note]]\n")
    stamp = 1_000_000_000
    for p in notes.iterdir():
        os.utime(p, (stamp, stamp))
    sc.write("brain/Note.md", NOTE_V1.replace("gamma", "mine"))
    sc.shard("1.1.0", base_files(NOTE_V1.replace("alpha", "alpha 2")))
    sc.update("--yes")
    for p in sorted(notes.iterdir()):
        st = p.stat()
        assert st.st_mtime == stamp and st.st_atime == stamp, p
    assert all(p.read_text().startswith("note ") for p in notes.iterdir())
    assert sc.read("brain/Note.md") == NOTE_V1.replace("alpha", "alpha 2").replace("gamma", "mine")


def test_value_migrations_and_new_values(sc: Scenario) -> None:
    values_v1 = {"name": {"type": "string", "default": "", "group": "setup"}}
    sc.shard("1.0.0", {**base_files(), "who.md.njk": "{{ name }}\n"}, values=values_v1)
    sc.install("--defaults")
    sc.write("shard-values.yaml", "# my comment\nname: Jane  # inline\n")
    values_v2 = {
        "user_name": {"type": "string", "default": "", "group": "setup"},
        "org": {"type": "string", "default": "Independent", "group": "setup"},
    }
    migrations = [
        {"from_version": "1.1.0", "changes": [{"type": "rename", "old": "name", "new": "user_name"}]}
    ]
    sc.shard(
        "1.1.0",
        {**base_files(), "who.md.njk": "{{ user_name }} @ {{ org }}\n"},
        values=values_v2,
        migrations=migrations,
    )
    report = sc.update_json("--yes")
    assert report["values"]["asked"] == ["org"]
    assert sc.read("who.md") == "Jane @ Independent\n"
    text = sc.read("shard-values.yaml")
    assert "# my comment" in text and "user_name: Jane" in text and "org: Independent" in text


def test_a_value_added_with_a_computed_default_is_computed_on_the_updating_machine(sc: Scenario) -> None:
    """An ``added`` migration whose default is computed (the flagship's qmd_enabled, issue 29)
    is asked like any new value, with the default computed here; before, the expression itself
    was written into shard-values.yaml."""
    sc.shard("1.0.0", base_files())
    sc.install("--defaults")
    flag = {"type": "boolean", "default": "{{ command_found('no-such-command-here') }}", "group": "setup"}
    migrations = [
        {"from_version": "1.1.0", "changes": [{"type": "added", "key": "flag", "default": flag["default"]}]}
    ]
    sc.shard(
        "1.1.0",
        {**base_files(), "flag.md.njk": "flag={{ flag }}\n"},
        values={"flag": flag},
        migrations=migrations,
    )
    report = sc.update_json("--yes")
    assert report["values"]["asked"] == ["flag"]
    assert sc.read("flag.md") == "flag=False\n"
    assert "flag: false" in sc.read("shard-values.yaml")


def test_post_update_hook_is_additive_only(sc: Scenario) -> None:
    hook = (
        "import json, os, pathlib\n"
        "ctx = json.load(open(os.environ['SHARDPY_HOOK_CONTEXT']))\n"
        "pathlib.Path('brain/Other.md').write_text('clobbered\\n')\n"
        "for p in ctx['new_files']:\n"
        "    pathlib.Path(p).write_text(pathlib.Path(p).read_text() + 'hooked\\n')\n"
        "pathlib.Path('hook-log.json').write_text(json.dumps(ctx))\n"
    )
    files = {**base_files(), ".shardmind/hooks/post_update.py": hook}
    sc.shard("1.0.0", files, hooks={"post-update": ".shardmind/hooks/post_update.py"})
    sc.install("--defaults")
    sc.shard(
        "1.1.0", {**files, "brain/New.md": "new\n"}, hooks={"post-update": ".shardmind/hooks/post_update.py"}
    )
    report = sc.update_json("--yes")
    assert report["hooks"][0]["status"] == "ok"
    assert sc.read("brain/Other.md") == "other\n"
    assert report["hook_changes_restored"] == ["brain/Other.md"]
    assert sc.read("brain/New.md") == "new\nhooked\n"
    ctx = json.loads(sc.read("hook-log.json"))
    assert ctx["previous_version"] == "1.0.0" and ctx["new_files"] == ["brain/New.md"]
    assert sc.ownership("brain/New.md") == "managed"


def test_bootstrap_reruns_when_fingerprint_changes(sc: Scenario) -> None:
    hook = (
        "import pathlib\np = pathlib.Path('boot.log')\n"
        "p.write_text((p.read_text() if p.exists() else '') + 'run\\n')\n"
    )
    files = {**base_files(), ".shardmind/hooks/boot.py": hook}
    sc.shard("1.0.0", files, hooks={"bootstrap": {"script": ".shardmind/hooks/boot.py", "fingerprint": "a"}})
    sc.install("--defaults")
    assert sc.read("boot.log") == "run\n"
    sc.shard(
        "1.1.0",
        {**files, "brain/x.md": "x\n"},
        hooks={"bootstrap": {"script": ".shardmind/hooks/boot.py", "fingerprint": "a"}},
    )
    sc.update("--yes")
    assert sc.read("boot.log") == "run\n"
    sc.shard("1.2.0", files, hooks={"bootstrap": {"script": ".shardmind/hooks/boot.py", "fingerprint": "b"}})
    sc.update("--yes")
    assert sc.read("boot.log") == "run\nrun\n"


def test_not_in_vault_and_identity_change(sc: Scenario) -> None:
    sc.shard("1.0.0", base_files())
    run = sc.cli("update", "--json", cwd=sc.root)
    assert run.code == 1 and run.json()["error"]["code"] == "VAULT_NOT_FOUND"
    sc.install("--defaults")
    sc.shard("1.1.0", base_files(), name="other")
    run = sc.update("--json", ok=False)
    assert run.code == 1 and run.json()["error"]["code"] == "UPDATE_SOURCE_CHANGED"


def test_release_flag_refused_for_directory_source(sc: Scenario) -> None:
    sc.shard("1.0.0", base_files())
    sc.install("--defaults")
    run = sc.update("--json", "--release", "2.0.0", ok=False)
    assert run.json()["error"]["code"] == "UPDATE_NO_RELEASES"


def test_read_only_target_rolls_back(sc: Scenario) -> None:
    sc.shard("1.0.0", base_files())
    sc.install("--defaults")
    sc.shard(
        "1.1.0", {"brain/Note.md": NOTE_V1 + "more\n", "brain/Other.md": "other 2\n", "extra/x.md": "x 2\n"}
    )
    (sc.vault / "extra/x.md").chmod(0o444)
    before = tree(sc.vault)
    run = sc.update("--json", "--yes", ok=False)
    assert run.code == 1 and run.json()["error"]["code"] == "PATH_READ_ONLY"
    after = tree(sc.vault)
    assert after == before
    assert not (sc.vault / ".shardmind/journal.json").exists()


def test_source_gone(sc: Scenario) -> None:
    import shutil

    sc.shard("1.0.0", base_files())
    sc.install("--defaults")
    shutil.rmtree(sc.src)
    run = sc.update("--json", ok=False)
    assert run.code == 1 and run.json()["error"]["code"] == "UPDATE_SOURCE_GONE"


def test_a_rename_the_update_skips_leaves_links_alone(sc: Scenario) -> None:
    """The new path of a renamed note is the user's own file: the move is skipped (the note stays
    where it is), and so must the links to it be; they were pointed at the user's unrelated note."""
    sc.shard("1.0.0", {**base_files(), "brain/Plan.md": "plan v1\n"})
    sc.install("--defaults")
    sc.write("brain/Plan.md", "plan v1\nmy plan edits\n")
    sc.write("brain/Roadmap.md", "my own roadmap, unrelated\n")
    sc.write("journal.md", "today I worked on [[Plan]]\n")
    migration = (
        "version: 1.1.0\ndescription: rename\nrenames:\n  - {from: brain/Plan.md, to: brain/Roadmap.md}\n"
    )
    sc.shard(
        "1.1.0", {**base_files(), "brain/Roadmap.md": "plan v1\n"}, file_migrations={"1.1.0.yaml": migration}
    )
    sc.update_json("--yes")
    assert sc.read("brain/Plan.md") == "plan v1\nmy plan edits\n"
    assert sc.read("brain/Roadmap.md") == "my own roadmap, unrelated\n"
    assert sc.read("journal.md") == "today I worked on [[Plan]]\n"


def test_user_notes_move_with_a_renamed_folder_and_links_follow(sc: Scenario) -> None:
    sc.shard("1.0.0", base_files())
    sc.install("--defaults")
    sc.write("extra/mine.md", "my note, see [[x]]\n")
    sc.write("extra/deep/also.md", "deeper\n")
    sc.write("journal/today.md", "see [[extra/mine]] and [[mine|mine]]\n")
    sc.write("more/deep/also.md", "already here\n")  # never moved onto
    migration = "version: 1.1.0\ndescription: move\nrenames:\n  - {from: extra/, to: more/}\n"
    new_files = {**base_files(), "more/x.md": "x\n"}
    del new_files["extra/x.md"]
    sc.shard("1.1.0", new_files, file_migrations={"1.1.0.yaml": migration})
    report = sc.update_json("--yes")
    assert sc.action(report, "more/mine.md")["action"] == "move"
    assert sc.action(report, "more/mine.md")["from"] == "extra/mine.md"
    assert sc.action(report, "extra/mine.md")["action"] == "moved"
    assert sc.read("more/mine.md") == "my note, see [[x]]\n"
    assert not (sc.vault / "extra/mine.md").exists()
    assert sc.read("extra/deep/also.md") == "deeper\n"  # its new path is taken: left where it is
    assert sc.read("more/deep/also.md") == "already here\n"
    assert sc.read("journal/today.md") == "see [[more/mine]] and [[mine|mine]]\n"
    assert sc.action(report, "journal/today.md")["links_rewritten"] == 1
    assert "more/mine.md" not in sc.state()["files"]


def _files(vault: Path) -> dict[str, bytes]:
    return {
        p.relative_to(vault).as_posix(): p.read_bytes()
        for p in sorted(vault.rglob("*"))
        if p.is_file() and ".shardmind" not in p.parts
    }


def test_a_release_turns_a_file_into_a_folder_and_a_folder_into_a_file(sc: Scenario) -> None:
    """`guide` becomes `guide/intro.md`, `kit/` becomes the file `kit`. Writes ran before deletes:
    PATH_NOT_DIRECTORY "guide is not a directory", or IO_ERROR "kit: Is a directory", on the
    shard's own unmodified files, and the release could not be applied at all (the closing note's
    left-out list). A failure later in the run still rolls all of it back, files and folders."""
    v1 = {"CLAUDE.md": "# A\n", "guide": "plain guide\n", "kit/sub/a.md": "# a\n", "kit/b.md": "# b\n"}
    v1["extra/x.md"] = "x\n"
    sc.shard("1.0.0", v1)
    sc.install("--yes")
    v2 = {"CLAUDE.md": "# A\n", "guide/intro.md": "# Intro\n", "kit": "kit file\n", "extra/x.md": "x 2\n"}
    sc.shard("2.0.0", v2)
    before = _files(sc.vault)
    (sc.vault / "extra/x.md").chmod(0o444)  # written after the folders changed: the run fails there
    failed = sc.update("--json", "--yes", ok=False)
    assert failed.code == 1 and failed.json()["error"]["code"] == "PATH_READ_ONLY"
    assert _files(sc.vault) == before and (sc.vault / "kit/sub").is_dir() and (sc.vault / "guide").is_file()
    assert not (sc.vault / ".shardmind/journal.json").exists()
    (sc.vault / "extra/x.md").chmod(0o644)
    sc.update("--yes")
    assert sc.read("guide/intro.md") == "# Intro\n" and sc.read("kit") == "kit file\n"
    status = sc.cli("status", "--json").json()
    assert status["missing"] == [] and status["modified"] == []
    sc.shard("3.0.0", v1)  # and back
    sc.update("--yes")
    assert sc.read("guide") == "plain guide\n" and sc.read("kit/sub/a.md") == "# a\n"
    assert not (sc.vault / "guide").is_dir()


def test_a_folder_holding_the_users_notes_is_never_replaced_by_a_file(sc: Scenario) -> None:
    sc.shard("1.0.0", {"CLAUDE.md": "# A\n", "kit/a.md": "# a\n"})
    sc.install("--yes")
    sc.write("kit/mine.md", "mine\n")
    sc.shard("2.0.0", {"CLAUDE.md": "# A\n", "kit": "kit file\n"})
    before = _files(sc.vault)
    run = sc.update("--json", "--yes", ok=False)
    error = run.json()["error"]
    assert run.code == 1 and error["code"] == "PATH_NOT_REGULAR" and error["path"] == "kit"
    assert "rolled back" in error["hint"]
    assert _files(sc.vault) == before
