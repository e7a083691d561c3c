"""``shardpy sync`` on a bare hub and three clones (issue 30): what a round commits,
fetches, merges and pushes, and what it does when a remote is gone or pushes race."""

from __future__ import annotations

import json
from pathlib import Path

from shardpy.merge.frontmatter import split_frontmatter
from shardpy.merge.revisions import REV_KEY, parse_stamps
from shardpy.yamlsafe import load
from tests.gitsync.kit import git
from tests.shardkit import run_shardpy
from tests.sync.kit import MACHINES, STATE, Fleet

NOTE = "---\ntitle: Plan\nstatus: draft\ntags: [work]\n---\n# Plan\n\none\ntwo\nthree\n"


def _data(text: str) -> dict[str, object]:
    fm, _ = split_frontmatter(text)
    assert fm is not None
    data = load(fm.inner)
    assert isinstance(data, dict)
    return data


def test_a_round_commits_pushes_and_the_others_receive(fleet: Fleet) -> None:
    fleet.start({"notes/plan.md": NOTE})
    fleet.write("b", "notes/plan.md", NOTE.replace("status: draft", "status: done"))
    fleet.write("b", "notes/new.md", "# New\n")
    report = fleet.sync("b")
    assert report["committed"] == ["notes/new.md", "notes/plan.md"]
    assert report["remotes"][0]["pushed"] is True
    message = git(fleet.machines["b"], "log", "-1", "--format=%s").stdout
    assert report["machine"] in message and "notes/plan.md" in message and "notes/new.md" in message
    # The hand edit got its stamp at the commit: this machine, one more than anything seen.
    stamps = parse_stamps(_data(fleet.read("b", "notes/plan.md"))[REV_KEY])
    assert stamps == {"status": (1, report["machine"])}
    # The same command as a process (the Typer-free form scripts and the watcher's unit run).
    fleet.write("c", "notes/from-c.md", "# From c\n")
    child = run_shardpy("sync", "--json", cwd=fleet.machines["c"])
    assert child.returncode == 0, child.stderr
    assert json.loads(child.stdout)["committed"] == ["notes/from-c.md"]
    fleet.settle()
    assert len({fleet.read(m, "notes/plan.md") for m in MACHINES}) == 1


def test_the_same_key_on_three_machines_ends_the_same_everywhere(fleet: Fleet) -> None:
    fleet.start({"notes/plan.md": NOTE})
    for m in MACHINES:
        fleet.write(m, "notes/plan.md", NOTE.replace("status: draft", f"status: by-{m}"))
        fleet.sync(m, "--no-push")  # each commits and stamps; nobody has seen the others
    ids = {m: git(fleet.machines[m], "config", "shardpy-sync.machine").stdout.strip() for m in MACHINES}
    fleet.settle()
    texts = {fleet.read(m, "notes/plan.md") for m in MACHINES}
    assert len(texts) == 1
    text = texts.pop()
    assert "<<<<<<<" not in text
    # Equal counters (concurrent edits): the highest machine id wins, on every machine.
    winner = max(MACHINES, key=lambda m: ids[m])
    assert _data(text)["status"] == f"by-{winner}"


def test_a_later_edit_wins_whatever_the_clocks_say(fleet: Fleet) -> None:
    fleet.start({"notes/plan.md": NOTE})
    fleet.write("a", "notes/plan.md", NOTE.replace("status: draft", "status: first"))
    fleet.sync("a")
    fleet.sync("c")
    # c saw a's edit and changes the key again; b, which never synced, changes it too.
    later = fleet.read("c", "notes/plan.md").replace("status: first", "status: c-later")
    fleet.write("c", "notes/plan.md", later)
    fleet.write("b", "notes/plan.md", NOTE.replace("status: draft", "status: b-unaware"))
    fleet.sync("c")
    fleet.settle()
    # c's counter (2) is above b's (1): c wins on every machine, whichever machine id is higher.
    for m in MACHINES:
        assert _data(fleet.read(m, "notes/plan.md"))["status"] == "c-later"


def test_a_vault_started_apart_is_never_joined_silently_and_the_hint_joins_it(fleet: Fleet) -> None:
    """A second machine set up by `git init` and given the seed: the histories share no commit.
    Every round failed with a hint about files to move; now it is SYNC_UNRELATED_HISTORIES, and
    the command its hint names joins the two (the driver merges the note both have)."""
    fleet.start({"notes/plan.md": NOTE, "notes/shared.md": "# Shared\n\nfrom a\n"})
    apart = fleet.root / "apart"
    (apart / ".shardmind").mkdir(parents=True)
    (apart / ".shardmind/state.json").write_text(STATE, encoding="utf-8")
    (apart / "notes").mkdir()
    (apart / "notes/shared.md").write_text("# Shared\n\nfrom apart\n", encoding="utf-8")
    git(apart, "init", "--quiet")
    assert run_shardpy("sync", "add-remote", "origin", str(fleet.hub), cwd=apart).returncode == 0
    done = run_shardpy("sync", "--yes", "--json", cwd=apart)
    remote = json.loads(done.stdout)["remotes"][0]
    assert done.returncode == 1 and remote["code"] == "SYNC_UNRELATED_HISTORIES", done.stdout
    assert not (apart / "notes/plan.md").exists() and not (apart / ".git/MERGE_HEAD").exists()
    hint = remote["hint"]
    command = hint[hint.index("`") + 1 : hint.index("`", hint.index("`") + 1)].split()
    assert command[:3] == ["git", "merge", "--allow-unrelated-histories"]
    git(apart, *command[1:], "--no-edit")
    again = run_shardpy("sync", "--json", cwd=apart)
    assert again.returncode == 0 and json.loads(again.stdout)["remotes"][0]["pushed"], again.stdout
    shared = (apart / "notes/shared.md").read_text(encoding="utf-8")
    assert "from a" in shared and "from apart" in shared and (apart / "notes/plan.md").is_file()


def test_a_git_repository_inside_the_vault_is_reported_not_synced_as_an_empty_pointer(fleet: Fleet) -> None:
    """A project cloned into the vault went into the commit as a bare pointer (a gitlink): its
    notes on no other machine, which saw an empty folder, and nothing said. It is left out and
    reported each round; a submodule declared in .gitmodules is the user's choice and kept."""
    fleet.start({"notes/plan.md": NOTE})
    a = fleet.machines["a"]
    inner = a / "notes/project"
    inner.mkdir()
    git(inner, "init", "--quiet")
    (inner / "inner.md").write_text("# Inner\n", encoding="utf-8")
    git(inner, "add", "-A")
    git(inner, "commit", "--quiet", "-m", "inner")
    fleet.write("a", "notes/plan.md", NOTE + "four\n")
    report = fleet.sync("a")
    assert report["nested"] == ["notes/project"] and report["remotes"][0]["pushed"], report
    assert "notes/project" not in git(a, "ls-files", "-s").stdout
    fleet.sync("b")
    assert not (fleet.machines["b"] / "notes/project").exists() and "four" in fleet.read("b", "notes/plan.md")
    # Declared on purpose: a submodule stays one.
    git(a, "-c", "protocol.file.allow=always", "submodule", "add", "--quiet", str(inner), "notes/module")
    report = fleet.sync("a")
    assert report["nested"] == ["notes/project"], report  # the undeclared one, still said
    assert "160000" in git(a, "ls-files", "-s", "notes/module").stdout


def test_an_unreachable_remote_is_reported_and_skipped(fleet: Fleet) -> None:
    fleet.start({"notes/plan.md": NOTE})
    fleet.shardpy("a", "sync", "add-remote", "gone", str(fleet.root / "nowhere.git"))
    fleet.write("a", "notes/plan.md", NOTE + "four\n")
    report = fleet.sync("a")  # exit 0: a machine offline syncs later (its kit asserts the code)
    by_name = {r["name"]: r for r in report["remotes"]}
    assert by_name["gone"]["status"] == "unreachable" and by_name["gone"]["error"]
    assert by_name["gone"]["code"] == "SYNC_REMOTE_UNREACHABLE"
    assert by_name["origin"]["pushed"] is True
    status = fleet.shardpy("a", "status", "--json").json()
    remotes = {r["name"]: r for r in status["git"]["sync"]["remotes"]}
    assert remotes["gone"]["last_error"] and remotes["origin"]["last_ok"]
    short = fleet.shardpy("a", "sync", "--status", "--json").json()
    assert short["remotes"] == status["git"]["sync"]["remotes"]


def test_another_machines_vault_as_a_remote_says_to_sync_through_a_seed(fleet: Fleet) -> None:
    """The seed's peers: a remote that is another machine's clone, its branch checked out. git
    refuses every push into it; the error said "the next round pushes again", which never came
    true. Now it says what to do, and ``--no-push`` takes that vault's work."""
    fleet.start({"notes/plan.md": NOTE})
    fleet.shardpy("b", "sync", "add-remote", "laptop", str(fleet.machines["c"]))
    fleet.write("c", "notes/plan.md", NOTE + "from c\n")
    git(fleet.machines["c"], "commit", "--quiet", "-am", "c")
    fleet.write("b", "notes/other.md", "# Other\n")
    report = fleet.sync("b", exit_code=1)
    by_name = {r["name"]: r for r in report["remotes"]}
    assert by_name["origin"]["pushed"] is True
    assert by_name["laptop"]["merged"] is True and by_name["laptop"]["code"] == "SYNC_REMOTE_CHECKED_OUT"
    assert "init-seed" in by_name["laptop"]["hint"] and "--no-push" in by_name["laptop"]["hint"]
    text = fleet.shardpy("b", "sync", "--remote", "laptop", ok=False)
    assert text.exit_code == 1 and "hint: Sync the machines through a seed" in text.output
    quiet = fleet.sync("b", "--remote", "laptop", "--no-push")
    assert quiet["remotes"][0]["status"] == "ok"
    assert fleet.read("b", "notes/plan.md") == NOTE + "from c\n"


def test_a_rejected_push_fetches_merges_and_retries(fleet: Fleet) -> None:
    fleet.start({"notes/plan.md": NOTE})
    fleet.race_pushes("b", "c", once=True)  # c pushes first, once: b's push is then rejected
    fleet.write("b", "notes/plan.md", NOTE + "four\n")
    report = fleet.sync("b")
    assert report["remotes"][0]["pushed"] is True and report["remotes"][0]["merged"] is True
    assert (fleet.machines["b"] / "notes/race.md").exists()
    fleet.settle()


def test_per_device_and_editor_working_files_are_never_added(fleet: Fleet) -> None:
    """Obsidian's per-device layout, merged between machines, is JSON with conflict markers (and
    Obsidian resets the layout); an editor's swap, backup and lock files are litter on every
    machine. A round adds none of them; one the user tracks already syncs as before."""
    fleet.start({"notes/plan.md": NOTE})
    a = fleet.machines["a"]
    for rel in (".obsidian/workspace.json", "notes/.plan.md.swp", "notes/plan.md~", "notes/.DS_Store"):
        fleet.write("a", rel, "{}\n")
    fleet.write("a", ".obsidian/app.json", "{}\n")  # shared settings: synced
    fleet.write("a", "notes/plan.md", NOTE + "four\n")
    dry = fleet.shardpy("a", "sync", "--dry-run", "--json").json()
    assert dry["changes"] == [".obsidian/app.json", "notes/plan.md"]  # what the commit takes
    report = fleet.sync("a")
    assert report["local_only"] == [
        ".obsidian/workspace.json",
        "notes/.DS_Store",
        "notes/.plan.md.swp",
        "notes/plan.md~",
    ]
    assert report["committed"] == [".obsidian/app.json", "notes/plan.md"]
    tracked = git(a, "ls-files").stdout.split()
    assert ".obsidian/workspace.json" not in tracked and "notes/plan.md~" not in tracked
    assert (a / ".obsidian/workspace.json").is_file()  # left on this machine, untouched
    # Tracked by the user on purpose: theirs, and it syncs.
    git(a, "add", "-f", "notes/plan.md~")
    git(a, "commit", "--quiet", "-m", "keep my backup")
    fleet.write("a", "notes/plan.md~", "changed\n")
    assert fleet.sync("a")["committed"] == ["notes/plan.md~"]


def test_thousands_of_files_left_out_go_to_git_by_stdin(fleet: Fleet) -> None:
    """A .DS_Store in every folder of a big vault: each is a pathspec the commit leaves out, more
    than one command line should carry; they reach git through stdin."""
    from shardpy.sync.round import PATHS_PER_CALL

    fleet.start({"notes/plan.md": NOTE})
    count = PATHS_PER_CALL + 20
    for k in range(count):
        fleet.write("a", f"notes/f{k:04}/.DS_Store", "x")
    fleet.write("a", "notes/plan.md", NOTE + "four\n")
    report = fleet.sync("a")
    assert len(report["local_only"]) == count and report["committed"] == ["notes/plan.md"]
    assert ".DS_Store" not in git(fleet.machines["a"], "ls-files").stdout


def test_json_both_machines_changed_stays_json(fleet: Fleet) -> None:
    """A plugin's data.json or a canvas changed on two machines in the same lines: the merge
    committed conflict markers, which no JSON reader takes (a plugin reset its settings, a canvas
    would not open). Now: the line merge where it is valid JSON, else the merging machine's file
    whole and a conflict in the report; every machine ends with the same valid file."""
    data = ".obsidian/plugins/calendar/data.json"
    canvas = "boards/plan.canvas"
    start = '{\n  "nodes": [\n    {"id": "a"}\n  ],\n  "edges": []\n}\n'
    fleet.start({data: '{\n  "week": 1,\n  "theme": "light",\n  "zoom": 1\n}\n', canvas: start})
    fleet.write("b", data, '{\n  "week": 2,\n  "theme": "light",\n  "zoom": 1\n}\n')
    fleet.write("b", canvas, start.replace('{"id": "a"}', '{"id": "a"},\n    {"id": "b"}'))
    fleet.sync("b")
    fleet.write("c", data, '{\n  "week": 3,\n  "theme": "light",\n  "zoom": 2\n}\n')
    fleet.write("c", canvas, start.replace('{"id": "a"}', '{"id": "a"},\n    {"id": "c"}'))
    report = fleet.sync("c")
    assert sorted(report["remotes"][0]["conflicts"]) == sorted([canvas, data])
    fleet.settle()
    for rel in (data, canvas):
        texts = {m: fleet.read(m, rel) for m in MACHINES}
        assert len(set(texts.values())) == 1, texts
        json.loads(texts["a"])  # valid JSON everywhere, no markers
    assert json.loads(fleet.read("a", data))["week"] == 3  # the merging machine's, whole
    # Lines that merge into valid JSON are merged as always.
    fleet.write("a", data, fleet.read("a", data).replace('"zoom": 2', '"zoom": 5'))
    fleet.sync("a")
    fleet.write("b", data, fleet.read("b", data).replace('"week": 3', '"week": 4'))
    assert fleet.sync("b")["remotes"][0]["conflicts"] == []
    assert json.loads(fleet.read("b", data)) == {"week": 4, "theme": "light", "zoom": 5}


def test_obsidian_settings_changed_on_two_machines_keep_both_changes(fleet: Fleet) -> None:
    """A plugin enabled on each machine (both append to community-plugins.json) and two
    neighbouring settings changed in app.json: touching lines, so the line merge conflicted and the
    merging machine's files were kept whole, the other machine's plugin and setting lost. Merged
    value by value now, written as Obsidian writes them, the same on every machine."""
    plugins, app = ".obsidian/community-plugins.json", ".obsidian/app.json"

    def obsidian(value: object) -> str:
        return json.dumps(value, indent=2)  # JSON.stringify(value, null, 2): no final line break

    fleet.start({plugins: obsidian(["calendar"]), app: obsidian({"showLineNumber": False, "vimMode": False})})
    fleet.write("b", plugins, obsidian(["calendar", "dataview"]))
    fleet.write("b", app, obsidian({"showLineNumber": True, "vimMode": False}))
    fleet.sync("b")
    fleet.write("c", plugins, obsidian(["calendar", "tasks"]))
    fleet.write("c", app, obsidian({"showLineNumber": False, "vimMode": True}))
    remote = fleet.sync("c")["remotes"][0]
    assert remote["merged"] and remote["conflicts"] == [] and remote["kept"] == []
    fleet.settle()
    for m in MACHINES:
        assert sorted(json.loads(fleet.read(m, plugins))) == ["calendar", "dataview", "tasks"]
        assert json.loads(fleet.read(m, app)) == {"showLineNumber": True, "vimMode": True}
    for rel in (plugins, app):
        assert len({fleet.read(m, rel) for m in MACHINES}) == 1
        assert fleet.read("a", rel) == obsidian(json.loads(fleet.read("a", rel)))


def test_a_file_kept_whole_stays_in_status_until_it_is_taken_up(fleet: Fleet) -> None:
    """A JSON file both machines changed where no line merge parses is kept as the merging machine
    has it: no markers for `status` to find, so it was shown once, in the round's report, and
    never again. Now the round records it, and `status` (and `sync --status`) lists it, with the
    command that shows the other machine's version, until the file changes again."""
    data = ".obsidian/app.json"
    fleet.start({data: '{\n  "theme": "light"\n}\n', "notes/plan.md": NOTE})
    fleet.write("b", data, '{\n  "theme": "dark"\n}\n')
    fleet.sync("b")
    fleet.write("c", data, '{\n  "theme": "moonlight"\n}\n')
    fleet.write("c", "notes/plan.md", NOTE + "four\n")  # a note merged by lines, not kept whole
    remote = fleet.sync("c")["remotes"][0]
    assert remote["conflicts"] == [data] and remote["kept"] == [data]
    c = fleet.machines["c"]
    kept = fleet.shardpy("c", "status", "--json").json()["git"]["kept_whole"]
    assert [k["path"] for k in kept] == [data]
    theirs = git(c, "show", f"{kept[0]['commit']}^2:{kept[0]['in_repository']}").stdout
    assert json.loads(theirs) == {"theme": "dark"}
    assert json.loads(fleet.read("c", data)) == {"theme": "moonlight"}
    assert f"kept this machine's {data}" in " ".join(fleet.shardpy("c", "status").stdout.split())
    said = fleet.shardpy("c", "sync", "--status").stdout
    assert f"kept this machine's whole: {data}" in said and f"^2:{data}" in said
    fleet.sync("c")  # a round with nothing to merge leaves the record as it is
    assert [k["path"] for k in fleet.shardpy("c", "status", "--json").json()["git"]["kept_whole"]] == [data]
    # Taken up: the user settles the file by hand; it is no longer listed, and the next merge
    # round drops the record.
    fleet.write("c", data, '{\n  "theme": "dark"\n}\n')
    assert fleet.shardpy("c", "status", "--json").json()["git"]["kept_whole"] == []
    fleet.write("a", "notes/other.md", "# Other\n")
    fleet.sync("a")
    assert fleet.sync("c")["remotes"][0]["merged"] is True
    assert git(c, "config", "--local", "--get-all", "shardpy-sync.kept", ok=False).stdout == ""


def test_machine_local_records_are_never_committed(fleet: Fleet) -> None:
    fleet.start({"notes/plan.md": NOTE})
    a = fleet.machines["a"]
    (a / ".shardmind/local.json").write_text("{}\n", encoding="utf-8")
    (a / ".shardmind/update-check.json").write_text("{}\n", encoding="utf-8")
    git(a, "add", "-f", ".shardmind/local.json")  # tracked by mistake (an old vault did)
    fleet.write("a", "notes/plan.md", NOTE + "four\n")
    fleet.sync("a")
    tracked = git(a, "ls-files").stdout.split()
    assert ".shardmind/local.json" not in tracked and ".shardmind/update-check.json" not in tracked
    assert (a / ".shardmind/local.json").is_file()


def test_setup_needs_consent_and_dry_run_changes_nothing(fleet: Fleet) -> None:
    a = fleet.machines["a"]
    (a / ".shardmind").mkdir(parents=True)
    (a / ".shardmind/state.json").write_text(STATE, encoding="utf-8")
    git(a, "init", "--quiet")
    before = sorted(p.name for p in a.iterdir()), git(a, "config", "--local", "--list").stdout
    plan = fleet.shardpy("a", "sync", "--dry-run", "--json").json()
    assert plan["setup_needed"] is True and plan["changes"] == [".shardmind/state.json"]
    assert (sorted(p.name for p in a.iterdir()), git(a, "config", "--local", "--list").stdout) == before
    refused = fleet.shardpy("a", "sync", "--json", ok=False)
    assert refused.error_code() == "SYNC_SETUP_NEEDED"
    assert git(a, "log", ok=False).returncode != 0  # nothing committed
    fleet.shardpy("a", "sync", "--yes")
    assert "merge.shardpy.driver" in git(a, "config", "--local", "--list").stdout


def _vault_on(fleet: Fleet, name: str, branch: str) -> Path:
    vault = fleet.root / name
    (vault / ".shardmind").mkdir(parents=True)
    (vault / ".shardmind/state.json").write_text(STATE, encoding="utf-8")
    (vault / "notes").mkdir()
    (vault / "notes/one.md").write_text("# One\n", encoding="utf-8")
    git(vault, "init", "--quiet", f"--initial-branch={branch}")
    return vault


def test_a_first_push_of_a_branch_the_remote_does_not_check_out_is_noticed(fleet: Fleet) -> None:
    """A hub made with `main` (a hosting site's default) and a machine whose git says `master`:
    the push goes through, but a clone of the hub checks out nothing, and a machine on `main`
    would never meet this one. The first push says so; later ones do not repeat it."""
    hub = fleet.root / "hub-main.git"
    git(fleet.root, "init", "--quiet", "--bare", "--initial-branch=main", str(hub))
    vault = _vault_on(fleet, "on-master", "master")
    assert fleet.cli.run("sync", "add-remote", "origin", str(hub), cwd=vault).exit_code == 0
    res = fleet.cli.run("sync", "--yes", "--json", cwd=vault)
    (remote,) = res.json()["remotes"]
    assert remote["pushed"] is True and remote["status"] == "ok"
    assert "checks out nothing" in remote["notice"] and "git branch -m master" in remote["notice"]
    clone = git(fleet.root, "clone", str(hub), str(fleet.root / "clone"))
    assert "nonexistent ref" in clone.stderr  # what the notice warned of
    (vault / "notes/one.md").write_text("# One\n\nmore\n", encoding="utf-8")
    again = fleet.cli.run("sync", "--json", cwd=vault).json()
    assert again["remotes"][0]["pushed"] is True and again["remotes"][0]["notice"] is None

    # A hub that already holds `main`: this machine's `master` would never meet it.
    other = _vault_on(fleet, "other", "trunk")
    assert fleet.cli.run("sync", "add-remote", "origin", str(hub), cwd=other).exit_code == 0
    git(hub, "symbolic-ref", "HEAD", "refs/heads/master")
    named = fleet.cli.run("sync", "--yes", cwd=other)
    assert "default branch is 'master', this machine syncs 'trunk'" in named.output
    assert "git branch -m trunk master" in named.output


def test_a_seed_made_in_a_vault_names_its_branch(fleet: Fleet) -> None:
    vault = _vault_on(fleet, "on-master", "master")
    seed = fleet.root / "seed.git"
    assert fleet.cli.run("sync", "init-seed", str(seed), cwd=vault).exit_code == 0
    assert git(seed, "symbolic-ref", "HEAD").stdout.strip() == "refs/heads/master"
    assert fleet.cli.run("sync", "add-remote", "seed", str(seed), cwd=vault).exit_code == 0
    report = fleet.cli.run("sync", "--yes", "--json", cwd=vault).json()
    assert report["remotes"][0]["notice"] is None
    git(fleet.root, "clone", "--quiet", str(seed), str(fleet.root / "second"))
    assert (fleet.root / "second/notes/one.md").read_text(encoding="utf-8") == "# One\n"


def test_a_sha256_vault_gets_a_seed_of_its_format_and_a_mismatch_is_said(fleet: Fleet) -> None:
    """git cannot sync repositories of two object formats. A seed made inside a sha256 vault was
    sha1, and every push to it, or to any sha1 remote, was "unreachable": exit 0, tried for
    ever, nothing ever synced. The seed now takes the vault's format, and a remote of the other
    one is that remote's error."""
    vault = fleet.root / "v256"
    (vault / ".shardmind").mkdir(parents=True)
    (vault / ".shardmind/state.json").write_text(STATE, encoding="utf-8")
    (vault / "notes").mkdir()
    (vault / "notes/one.md").write_text("# One\n", encoding="utf-8")
    git(vault, "init", "--quiet", "--object-format=sha256")
    old = fleet.root / "sha1.git"
    git(fleet.root, "init", "--quiet", "--bare", str(old))
    assert fleet.cli.run("sync", "add-remote", "old", str(old), cwd=vault).exit_code == 0
    res = fleet.cli.run("sync", "--yes", "--json", cwd=vault)
    assert res.exit_code == 1
    (remote,) = res.json()["remotes"]
    assert (remote["status"], remote["code"]) == ("error", "SYNC_OBJECT_FORMAT"), remote
    assert "init-seed" in remote["hint"]

    seed = fleet.root / "seed.git"
    assert fleet.cli.run("sync", "init-seed", str(seed), cwd=vault).exit_code == 0
    assert git(seed, "rev-parse", "--show-object-format").stdout.strip() == "sha256"
    assert fleet.cli.run("sync", "remove-remote", "old", cwd=vault).exit_code == 0
    assert fleet.cli.run("sync", "add-remote", "seed", str(seed), cwd=vault).exit_code == 0
    assert fleet.cli.run("sync", "--json", cwd=vault).json()["remotes"][0]["pushed"] is True
    # A sha1 machine given the sha256 seed: the same error, from the fetch this time.
    fleet.start()
    fleet.shardpy("a", "sync", "add-remote", "wide", str(seed))
    by_name = {r["name"]: r for r in fleet.sync("a", exit_code=1)["remotes"]}
    assert by_name["wide"]["code"] == "SYNC_OBJECT_FORMAT" and by_name["origin"]["status"] == "ok"


def test_remotes_and_seed_commands(fleet: Fleet, tmp_path: Path) -> None:
    fleet.start()
    dup = fleet.shardpy("a", "sync", "add-remote", "origin", str(tmp_path / "x.git"), "--json", ok=False)
    assert dup.error_code() == "SYNC_REMOTE_EXISTS"
    bad = fleet.shardpy("a", "sync", "add-remote", "-x", "y", ok=False)
    assert bad.exit_code != 0
    assert fleet.shardpy("a", "sync", "remove-remote", "nope", "--json", ok=False).error_code() == (
        "SYNC_REMOTE_UNKNOWN"
    )
    seed = fleet.shardpy("a", "sync", "init-seed", str(fleet.hub), "--json").json()
    assert seed["changed"] is False  # converges on re-run
    fleet.shardpy("a", "sync", "remove-remote", "origin")
    assert git(fleet.machines["a"], "remote").stdout.strip() == ""


def test_a_vault_in_a_subfolder_of_the_repository(fleet: Fleet) -> None:
    """The vault is one folder of a larger repository: only its files are committed, and the
    in-process merge writes them at their vault paths."""
    root = fleet.root
    a, b = root / "a", root / "b"
    (a / "vault/.shardmind").mkdir(parents=True)
    (a / "vault/.shardmind/state.json").write_text(STATE, encoding="utf-8")
    (a / "vault/n.md").write_text(NOTE, encoding="utf-8")
    (a / "README").write_text("top\n", encoding="utf-8")
    git(a, "init", "--quiet")
    git(a, "add", "README")
    git(a, "commit", "-qm", "top")
    fleet.cli.run("sync", "init-seed", str(fleet.hub), cwd=a / "vault")
    fleet.cli.run("sync", "add-remote", "origin", str(fleet.hub), cwd=a / "vault")
    assert fleet.cli.run("sync", "--yes", cwd=a / "vault").exit_code == 0
    git(root, "clone", "--quiet", str(fleet.hub), str(b))
    assert fleet.cli.run("sync", "--yes", cwd=b / "vault").exit_code == 0
    (a / "README").write_text("top, edited: not the vault's\n", encoding="utf-8")
    (a / "vault/n.md").write_text(NOTE.replace("one", "one (a)").replace("draft", "done"), encoding="utf-8")
    (b / "vault/n.md").write_text(NOTE.replace("three", "three (b)"), encoding="utf-8")
    for machine in (a, b, a):
        res = fleet.cli.run("sync", "--json", cwd=machine / "vault")
        assert res.exit_code == 0, res.output
    merged = (a / "vault/n.md").read_text(encoding="utf-8")
    assert merged == (b / "vault/n.md").read_text(encoding="utf-8")
    assert "one (a)" in merged and "three (b)" in merged and "status: done" in merged
    assert git(a, "status", "--porcelain").stdout == " M README\n"  # outside the vault: left alone


def test_the_vault_id_stays_on_its_machine(fleet: Fleet) -> None:
    """``.shardmind/vault-id`` names this copy of the vault: the transaction journals bind to it,
    so a journal from another machine (or one a pull brings) is never replayed here. It is a
    machine-local record: never committed, each clone makes its own, and a repository that
    tracked it (older shardpy) stops tracking it with the file kept."""
    fleet.start({"notes/plan.md": NOTE, **{f"notes/{m}.md": NOTE for m in MACHINES}})
    ids = {}
    for m in MACHINES:
        fleet.shardpy(m, "rm", f"notes/{m}.md")  # a transaction: the vault id is made if missing
        fleet.sync(m)
        ids[m] = (fleet.machines[m] / ".shardmind/vault-id").read_text().strip()
        assert ".shardmind/vault-id" not in git(fleet.machines[m], "ls-files").stdout.split()
    assert len(set(ids.values())) == len(MACHINES)
    # A repository an older shardpy set up tracks the id: the next round untracks it, keeps the file.
    a = fleet.machines["a"]
    git(a, "add", "-f", ".shardmind/vault-id")
    git(a, "commit", "-qm", "an older shardpy committed the vault id")
    fleet.write("a", "notes/plan.md", NOTE + "four\n")
    fleet.sync("a")
    assert ".shardmind/vault-id" not in git(a, "ls-files").stdout.split()
    assert (a / ".shardmind/vault-id").read_text().strip() == ids["a"]
    fleet.settle()
    for m in MACHINES:
        assert (fleet.machines[m] / ".shardmind/vault-id").read_text().strip() == ids[m]


def test_branch_and_remotes_where_only_git_can_tell(fleet: Fleet, tmp_path: Path) -> None:
    """A round reads the branch off ``.git/HEAD`` and the remotes off the local config it reads
    anyway (two git commands fewer: issue 30, the driver's cost); where those say nothing, git
    is asked: a detached HEAD is refused as before, a remote set up in an included file is
    still found and synced with."""
    fleet.start({"notes/plan.md": NOTE})
    a = fleet.machines["a"]
    url = git(a, "remote", "get-url", "origin").stdout.strip()
    extra = tmp_path / "remotes.gitconfig"
    extra.write_text(f'[remote "hub"]\n\turl = {url}\n\tfetch = +refs/heads/*:refs/remotes/hub/*\n')
    git(a, "config", "--local", "include.path", str(extra))
    report = fleet.sync("a", "--remote", "hub", "--no-push")
    assert [r["name"] for r in report["remotes"]] == ["hub"]
    assert report["remotes"][0]["status"] == "ok"
    every = fleet.sync("a", "--no-push")  # no remote named: the included one is among them
    assert sorted(r["name"] for r in every["remotes"]) == ["hub", "origin"]
    git(a, "checkout", "-q", "--detach")
    refused = fleet.shardpy("a", "sync", "--json", ok=False)
    assert refused.error_code() == "SYNC_DETACHED"


def test_a_remote_named_like_an_option_runs_nothing(fleet: Fleet, tmp_path: Path) -> None:
    """Remote names come from the repository's config (an included file may set them): one named
    `--upload-pack=COMMAND` made `git fetch` run COMMAND. It is passed after `--` now: git takes
    it as the remote's name and nothing runs; the other remotes sync as before."""
    fleet.start({"notes/plan.md": NOTE})
    a = fleet.machines["a"]
    mark = tmp_path / "ran"
    name = f"--upload-pack=touch {mark}"
    git(a, "config", f"remote.{name}.url", str(fleet.hub))
    fleet.write("a", "notes/plan.md", NOTE.replace("one", "one (a)"))
    report = fleet.shardpy("a", "sync", "--yes", "--json", ok=False).json()
    assert not mark.exists()
    by_name = {r["name"]: r for r in report["remotes"]}
    assert sorted(by_name) == sorted([name, "origin"])
    assert by_name["origin"]["status"] == "ok", report["remotes"]
    assert git(fleet.hub, "log", "-1", "--format=%s", "main").stdout.startswith("sync:")
