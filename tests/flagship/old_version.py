"""agent-vault 0.9.0, derived from the shipped 1.0.0 so that update and adopt
can be proven on the real flagship.

The derivation is the 1.0.0 release read backwards:
- migrations/1.0.0.yaml applied in reverse (the renamed command and the
  renamed brain note go back to their old names, and so does every mention
  and [[link]] of them in the shard);
- the one CLAUDE.md paragraph that 1.0.0 rewrote goes back to its old text;
- the schema loses the value 1.0.0 added (`qmd_enabled`) and its value
  migration, and `.mcp.json.njk` stops depending on it;
- shard.yaml, vault-manifest.json and CHANGELOG.md say 0.9.0, and the
  bootstrap fingerprint is the older one (so an update re-runs bootstrap).

Public helpers (used by the engine's update/adopt tests too):
- make_flagship_0_9_0(dest) -> source root holding shard-template/ (0.9.0),
  an empty migrations/ and the repository's .shardmindignore;
- make_flagship_history(dest) -> a git repository with tag v0.9.0 and tag
  v1.0.0 (HEAD), the 1.0.0 commit being the repository's real shard;
- add_user_notes(vault, count) and edit_claude_md(vault): the user's side of
  the update scenario.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.flagship.shardtools import MIGRATIONS, REPO_ROOT, SHARD_DIRNAME, SHARD_ROOT, load_yaml

OLD_VERSION = "0.9.0"
OLD_RELEASED = "2026-10-15"
OLD_FINGERPRINT = "git-init+qmd-index/1"
TEXT_SUFFIXES = {".md", ".json", ".yaml", ".yml", ".py", ".njk", ".base", ".txt", ""}

# The paragraph 1.0.0 rewrote in CLAUDE.md, and what 0.9.0 said instead.
CLAUDE_PARAGRAPH_1_0_0 = (
    "Search before reading whole files. The vault is bigger than your context and\n"
    "most questions are answered by a passage, not a note."
)
CLAUDE_PARAGRAPH_0_9_0 = (
    "Prefer search to reading. Open a note when a search result points at it,\n"
    "and read the folder's index note before browsing a folder."
)
QMD_ENABLED_BLOCK = re.compile(r"^\{% if qmd_enabled %\}\n|^\{% endif %\}\n", re.MULTILINE)


@dataclass(frozen=True)
class Rename:
    old: str  # 0.9.0 path
    new: str  # 1.0.0 path

    @property
    def old_stem(self) -> str:
        return Path(self.old.rstrip("/")).stem

    @property
    def new_stem(self) -> str:
        return Path(self.new.rstrip("/")).stem


def renames_1_0_0() -> list[Rename]:
    data = load_yaml(MIGRATIONS / "1.0.0.yaml")
    return [Rename(r["from"], r["to"]) for r in data["renames"]]


def _copy_source(dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(
        SHARD_ROOT, dest / SHARD_DIRNAME, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"), symlinks=True
    )
    shutil.copyfile(REPO_ROOT / ".shardmindignore", dest / ".shardmindignore")
    return dest / SHARD_DIRNAME


def _text_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in TEXT_SUFFIXES)


def _replace_in_all(root: Path, pairs: list[tuple[str, str]]) -> None:
    for path in _text_files(root):
        text = path.read_text(encoding="utf-8")
        new = text
        for a, b in pairs:
            new = new.replace(a, b)
        if new != text:
            path.write_text(new, encoding="utf-8")


def _sub_once(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    if text.count(old) != 1:
        raise AssertionError(
            f"{path.name}: expected exactly one {old[:40]!r}… to derive 0.9.0; the shard changed"
        )
    path.write_text(text.replace(old, new), encoding="utf-8")


def _edit_schema(shard: Path) -> None:
    """Remove the value 1.0.0 added and its value migration, by text, so the
    rest of the file (comments, quoting, layout) is the same file 1.0.0 has."""
    path = shard / ".shardmind" / "shard-schema.yaml"
    text = path.read_text(encoding="utf-8")
    start = text.index("\n  qmd_enabled:\n")
    end = text.index("\ngroups:")
    text = text[:start] + text[end:]
    mig = text.index("\nmigrations:\n")
    text = text[: mig + 1] + "migrations: []\n"
    text = text.replace("Four questions", "Three questions")
    path.write_text(text, encoding="utf-8")


def _edit_manifests(shard: Path) -> None:
    shard_yaml = shard / ".shardmind" / "shard.yaml"
    _sub_once(shard_yaml, "\nversion: 1.0.0\n", f"\nversion: {OLD_VERSION}\n")
    text = shard_yaml.read_text(encoding="utf-8")
    text, n = re.subn(r'fingerprint: "[^"]*"', f'fingerprint: "{OLD_FINGERPRINT}"', text)
    assert n == 1
    shard_yaml.write_text(text, encoding="utf-8")

    vm_path = shard / "vault-manifest.json"
    vm = json.loads(vm_path.read_text(encoding="utf-8"))
    vm["version"] = OLD_VERSION
    vm["released"] = OLD_RELEASED
    vm_path.write_text(json.dumps(vm, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")

    changelog = shard / "CHANGELOG.md"
    text = changelog.read_text(encoding="utf-8")
    start = text.index("## 1.0.0")
    end = text.index(f"## {OLD_VERSION}")
    changelog.write_text(text[:start] + text[end:], encoding="utf-8")


def derive_0_9_0(shard: Path) -> None:
    """Turn a copy of the 1.0.0 shard root into 0.9.0, in place."""
    renames = renames_1_0_0()
    # Version bookkeeping first: the changelog's 1.0.0 section names both the
    # old and the new names and must go before the names are swapped back.
    _edit_manifests(shard)
    for r in renames:
        src, dst = shard / r.new, shard / r.old
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.replace(src, dst)
    pairs: list[tuple[str, str]] = []
    for r in renames:
        pairs.append((r.new, r.old))
        pairs.append((r.new_stem, r.old_stem))
    _replace_in_all(shard, pairs)
    # The fingerprints name both releases' paths on purpose: restore them
    # from 1.0.0's record of 0.9.0 after the blanket rename above.
    vm_path = shard / "vault-manifest.json"
    vm = json.loads(vm_path.read_text(encoding="utf-8"))
    recorded = json.loads((SHARD_ROOT / "vault-manifest.json").read_text(encoding="utf-8"))
    vm["version_fingerprints"] = {OLD_VERSION: recorded["version_fingerprints"][OLD_VERSION]}
    vm_path.write_text(json.dumps(vm, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    _sub_once(shard / "CLAUDE.md", CLAUDE_PARAGRAPH_1_0_0, CLAUDE_PARAGRAPH_0_9_0)
    _edit_schema(shard)
    mcp = shard / ".mcp.json.njk"
    text, n = QMD_ENABLED_BLOCK.subn("", mcp.read_text(encoding="utf-8"))
    assert n == 2, "the .mcp.json.njk template changed; update the 0.9.0 derivation"
    mcp.write_text(text, encoding="utf-8")


def make_flagship_0_9_0(dest: Path) -> Path:
    """A source root for agent-vault 0.9.0: shard-template/, migrations/ (empty:
    no file migration leads into 0.9.0) and the repository's .shardmindignore."""
    shard = _copy_source(dest)
    (dest / "migrations").mkdir(exist_ok=True)
    derive_0_9_0(shard)
    return dest


GIT_ENV = {
    "GIT_AUTHOR_NAME": "agent-vault release",
    "GIT_AUTHOR_EMAIL": "release@example.invalid",
    "GIT_COMMITTER_NAME": "agent-vault release",
    "GIT_COMMITTER_EMAIL": "release@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def _git(repo: Path, *args: str, date: str) -> None:
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date, "HOME": str(repo)}
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def make_flagship_history(dest: Path) -> Path:
    """A git repository whose history is the flagship's: v0.9.0, then v1.0.0
    (the repository's real shard) on top. Returns the repository root, with
    HEAD at v1.0.0 — install `<repo>@0.9.0`, then update to the latest tag."""
    make_flagship_0_9_0(dest)
    _git(dest, "init", "-q", "-b", "main", date="2026-10-15T12:00:00Z")
    _git(dest, "add", "-A", date="2026-10-15T12:00:00Z")
    _git(dest, "commit", "-q", "-m", "agent-vault 0.9.0", date="2026-10-15T12:00:00Z")
    _git(dest, "tag", "v0.9.0", date="2026-10-15T12:00:00Z")
    shutil.rmtree(dest / SHARD_DIRNAME)
    shutil.rmtree(dest / "migrations")
    _copy_source(dest)
    shutil.copytree(MIGRATIONS, dest / "migrations")
    _git(dest, "add", "-A", date="2026-11-29T12:00:00Z")
    _git(dest, "commit", "-q", "-m", "agent-vault 1.0.0", date="2026-11-29T12:00:00Z")
    _git(dest, "tag", "v1.0.0", date="2026-11-29T12:00:00Z")
    return dest


# --- the user's side of the scenario ---------------------------------------------------------

USER_CLAUDE_SECTION = (
    "\n### House rules (mine)\n\n"
    "- Quarter format is `YYYY-Qn`.\n"
    "- Meeting notes for the platform team go under work/meetings/platform/.\n"
)

LINK_FORMS = ("[[{name}]]", "[[{name}|the decision log]]", "[[{name}#Decisions]]")


def add_user_notes(vault: Path, count: int = 50, *, linked_name: str = "Decisions Log") -> list[Path]:
    """`count` notes the user wrote, spread over user folders, each linking the
    renamed brain note in one of the three link forms a rename must rewrite."""
    folders = ["work/active", "reference", "thinking", "work/meetings", "work/archive/2026"]
    made: list[Path] = []
    for i in range(count):
        folder = vault / folders[i % len(folders)]
        folder.mkdir(parents=True, exist_ok=True)
        link = LINK_FORMS[i % len(LINK_FORMS)].format(name=linked_name)
        path = folder / f"User Note {i:03d}.md"
        path.write_text(
            "---\n"
            f"date: 2026-10-{(i % 28) + 1:02d}\n"
            f"description: The user's own note number {i}.\n"
            "tags: [mine]\n"
            "status: active\nquarter: 2026-Q4\n"
            "---\n"
            f"# User Note {i:03d}\n\n"
            f"Background in {link}; goals in [[North Star]].\n",
            encoding="utf-8",
        )
        made.append(path)
    return made


def edit_claude_md(vault: Path) -> str:
    """The user's own conventions, added where the manual invites them (the
    end of CLAUDE.md, far from the paragraph 1.0.0 rewrote). Returns the text."""
    path = vault / "CLAUDE.md"
    path.write_text(path.read_text(encoding="utf-8") + USER_CLAUDE_SECTION, encoding="utf-8")
    return USER_CLAUDE_SECTION
