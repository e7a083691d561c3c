"""An obsidian-mind-like shard as a git repository of releases, served over a
loopback GitHub API stub (the one the tests use), plus the raw floor.

The real obsidian-mind tarballs and ShardMind are not available offline, so
this builds the same shape: the bundled flagship shard (notes, ``.njk``
templates, JSON settings, Claude/Codex/Gemini hook scripts, modules) grown
to ~213 files, released as v6.0.0 and v8.3.5 with the kind of differences a
real release has (files edited, added and removed; a new value; a changed
CHANGELOG). Lifecycle hooks are dropped from the manifest so the timings
are the engine's, not a hook's.

``FLOOR_INSTALL`` / ``FLOOR_UPDATE`` are the raw floor: a plain Python child
doing the same I/O (download the tarball, read every entry, write it into
the vault and its copy under ``.shardmind/templates/`` — the merge base
every install keeps — through a temp file and a rename, hash what it
wrote). The update floor rewrites every file of the new release (reading
the old one first), without merging.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.sources.support import ShardRepo, StubGitHub, git  # noqa: E402

REPO = "obsidian-mind/obsidian-mind"
OLD, NEW = "6.0.0", "8.3.5"
TOTAL_FILES = 213

# Extra files an obsidian-mind release carries beyond the flagship's: more
# commands, skills, reference notes, templates and scripts.
_EXTRA_FOLDERS = [
    (".claude/commands", "cmd-{i:02}.md"),
    (".claude/skills/skill-{i:02}", "SKILL.md"),
    ("reference", "Reference {i:02}.md"),
    ("brain/guides", "Guide {i:02}.md"),
    ("templates/extra", "Template {i:02}.md.njk"),
    (".claude/scripts/lib", "helper_{i:02}.py"),
    ("bases/extra", "View {i:02}.base"),
    (".obsidian/snippets", "snippet-{i:02}.json"),
]


def _extra_text(folder: str, name: str, i: int, version: str) -> str:
    if name.endswith(".njk"):
        return (
            "---\ntitle: \"{{ user_name }}'s "
            + name
            + '"\ndate: "{{ install_date }}"\ntags: [template]\n---\n'
            f"# {name}\n\nOrganisation: {{{{ org_name }}}}\n"
            "{% if qmd_enabled %}Search with qmd.{% endif %}\n"
            + "".join(f"- step {k} of template {i}\n" for k in range(25))
        )
    if name.endswith(".py"):
        return f'"""helper {i}."""\n\n' + "".join(f"def f{k}():\n    return {k * i}\n\n" for k in range(20))
    if name.endswith((".json", ".base")):
        return '{\n  "id": ' + str(i) + ',\n  "items": [' + ", ".join(str(k) for k in range(40)) + "]\n}\n"
    lines = [f"---\ntags: [{folder.split('/')[0].strip('.')}]\nstatus: active\n---", f"# {name[:-3]}", ""]
    lines += [f"Paragraph {k} of {name}: what to do, when and why, in a few words." for k in range(40)]
    return "\n".join(lines) + "\n"


def _release_edit(rel: str, text: str, version: str) -> str:
    """What a newer release changes in a file: a line in the middle and one at the end."""
    lines = text.splitlines(keepends=True)
    if len(lines) > 6:
        mid = len(lines) // 2
        lines[mid] = lines[mid].rstrip("\n") + f" (revised in {version})\n"
    lines.append(f"\n<!-- {rel}: changed in {version} -->\n" if rel.endswith(".md") else "\n")
    return "".join(lines)


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _manifest(text: str, version: str) -> str:
    text = re.sub(r"(?m)^version: .*$", f"version: {version}", text)
    text = re.sub(r"(?ms)^hooks:\n(?:[ #].*\n|\n)*", "", text)  # no lifecycle hooks
    return re.sub(r"(?m)^name: .*$", "name: obsidian-mind", text)


def write_release(root: Path, version: str) -> list[str]:
    """The shard at ``version`` in ``root`` (emptied first but for .git); its file list."""
    for child in root.iterdir() if root.exists() else []:
        if child.name != ".git":
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    shutil.copytree(
        ROOT / "shard-template", root, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__")
    )
    side = root / ".shardmind"
    (side / "shard.yaml").write_text(_manifest((side / "shard.yaml").read_text(), version))
    have = sum(1 for p in root.rglob("*") if p.is_file() and ".git" not in p.parts)
    i = 0
    while have < TOTAL_FILES - (0 if version == OLD else 9):
        folder, pattern = _EXTRA_FOLDERS[i % len(_EXTRA_FOLDERS)]
        name = pattern.format(i=i)
        rel = f"{folder.format(i=i)}/{name}"
        _write(root, rel, _extra_text(folder, name, i, version))
        have += 1
        i += 1
    if version != OLD:
        _newer(root, version)
    return sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts
    )


def _newer(root: Path, version: str) -> None:
    """8.3.5 against 6.0.0: ~70 files edited, 14 added, 6 removed, a new value."""
    files = sorted(p for p in root.rglob("*") if p.is_file() and ".shardmind" not in p.parts)
    texty = [
        p for p in files if p.suffix in (".md", ".njk", ".py", ".json", ".base") and p.stat().st_size > 200
    ]
    for p in texty[::2][:70]:
        p.write_text(_release_edit(p.relative_to(root).as_posix(), p.read_text(), version))
    for p in [p for p in files if "extra" in p.parts][:6]:
        p.unlink()
    for i in range(14):
        _write(root, f"brain/new/Practice {i:02}.md", _extra_text("brain", f"Practice {i:02}.md", i, version))
    schema = root / ".shardmind/shard-schema.yaml"
    schema.write_text(
        schema.read_text().replace(
            "\ngroups:",
            "\n  weekly_review:\n    type: boolean\n    default: true\n    message: Weekly review?\n"
            "    group: setup\n\ngroups:",
            1,
        )
    )
    changelog = root / "CHANGELOG.md"
    changelog.write_text(f"# {version}\n\n- sixty notes revised\n\n" + changelog.read_text())


def build_repo(path: Path) -> ShardRepo:
    """A git repository with tags v6.0.0 and v8.3.5."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "--template=", "-b", "main")
    repo = ShardRepo(path)
    for version in (OLD, NEW):
        write_release(path, version)
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", f"release {version}")
        git(path, "tag", f"v{version}")
        repo.commits[version] = git(path, "rev-parse", "HEAD")
    return repo


def start_stub(repo: ShardRepo) -> StubGitHub:
    stub = StubGitHub()
    stub.add_repo(REPO, repo)
    # git archive per request would be part of every timing: serve prebuilt bytes.
    archives = {sha: _archive(repo, sha) for sha in repo.commits.values()}
    import tests.sources.support as support

    original = support.git_archive
    support.git_archive = lambda r, sha, prefix: archives.get(sha) or original(r, sha, prefix)  # type: ignore[assignment]
    return stub.start()


def _archive(repo: ShardRepo, sha: str) -> bytes:
    from tests.sources.support import git_archive

    return git_archive(repo, sha, f"obsidian-mind-obsidian-mind-{sha[:7]}")


def user_edits(vault: Path) -> None:
    """What a user does to a vault between releases: edits 10 managed notes
    (some that the release changes too, one on the same line), writes notes
    of their own, deletes one managed file."""
    notes = sorted(p for p in vault.rglob("*.md") if ".shardmind" not in p.parts and p.stat().st_size > 600)
    for k, p in enumerate(notes[:10]):
        text = p.read_text()
        lines = text.splitlines(keepends=True)
        at = 2 if k else len(lines) // 2  # the first edit collides with the release's
        lines.insert(at, f"My own line {k}.\n") if k else lines.__setitem__(at, "my edit of this line\n")
        p.write_text("".join(lines))
    for i in range(30):
        _write(
            vault,
            f"work/active/My Project {i:02}.md",
            f"---\ntags: [project]\n---\n# Project {i}\n\nsee [[Home]]\n",
        )
    gone = vault / "brain/Skills.md"
    if gone.exists():
        gone.unlink()


FLOOR_INSTALL = r"""
import hashlib, io, json, os, sys, tarfile, urllib.request
url, dest = sys.argv[1], sys.argv[2]
data = urllib.request.urlopen(url).read()
os.makedirs(dest, exist_ok=True)
state = {}
with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
    for m in tar:
        if not m.isfile():
            continue
        rel = m.name.split("/", 1)[1]
        body = tar.extractfile(m).read()
        for target in (os.path.join(dest, rel), os.path.join(dest, ".shardmind/templates", rel)):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            tmp = target + ".tmp"
            with open(tmp, "wb") as fh:
                fh.write(body)
            os.replace(tmp, target)
        state[rel] = hashlib.sha256(body).hexdigest()
with open(os.path.join(dest, "state.json"), "w") as fh:
    json.dump(state, fh)
"""

FLOOR_UPDATE = r"""
import hashlib, io, json, os, sys, tarfile, urllib.request
url, dest = sys.argv[1], sys.argv[2]
state = json.load(open(os.path.join(dest, "state.json")))
data = urllib.request.urlopen(url).read()
with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
    for m in tar:
        if not m.isfile():
            continue
        rel = m.name.split("/", 1)[1]
        body = tar.extractfile(m).read()
        target = os.path.join(dest, rel)
        try:
            with open(target, "rb") as fh:
                hashlib.sha256(fh.read()).hexdigest()
        except OSError:
            pass
        for target in (target, os.path.join(dest, ".shardmind/templates", rel)):
            os.makedirs(os.path.dirname(target), exist_ok=True)
            tmp = target + ".tmp"
            with open(tmp, "wb") as fh:
                fh.write(body)
            os.replace(tmp, target)
        state[rel] = hashlib.sha256(body).hexdigest()
with open(os.path.join(dest, "state.json"), "w") as fh:
    json.dump(state, fh)
"""


def tarball_url(stub: StubGitHub, repo: ShardRepo, version: str) -> str:
    return f"{stub.base}/repos/{REPO}/tarball/v{version}"


def floor(script: str, url: str, dest: Path, env: dict[str, str]) -> None:
    subprocess.run([sys.executable, "-c", script, url, str(dest)], check=True, env=env)


def shard_env(stub: StubGitHub, cache: Path, base: dict[str, str]) -> dict[str, str]:
    return {
        **base,
        "SHARDPY_GITHUB_API_BASE": stub.base,
        "SHARDPY_CACHE_DIR": str(cache),
        "NO_COLOR": "1",
    } | {k: v for k, v in os.environ.items() if k.startswith("GIT_") and k not in base}
