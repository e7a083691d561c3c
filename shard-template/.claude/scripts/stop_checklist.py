"""Stop (Claude Code, Codex) / SessionEnd (Gemini CLI) hook: the wrap-up
checklist, as {"systemMessage": "..."} and nothing else.

All three agents treat this event's stdout as JSON-or-nothing (Codex reports
plain text as a hook failure, Gemini drops it, Claude Code sends it to a
debug log), and systemMessage is the one field all three show the user. So
the script prints exactly one JSON object on every path — bad input, a
missing vault file, a git failure — and never asks the agent to continue.

Beyond the fixed list it names up to five notes changed in this working tree
that link to nothing (orphans are bugs), when git can tell.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True

import contextlib  # noqa: E402
import json  # noqa: E402

FALLBACK = (
    "Wrap-up checklist:\n"
    "- Archive finished projects (work/active/ -> work/archive/YYYY/)\n"
    "- Update the indexes you touched (work/Index.md, brain/Memories.md)\n"
    "- New notes link to an existing note (orphans are bugs)\n"
    "- Durable lessons go to brain/ topic notes, never to an agent's private memory\n"
    "- /wrap-up runs the full review"
)
MAX_ORPHANS = 5


def checklist() -> str:
    import subprocess

    from vaultlib.hookio import read_payload
    from vaultlib.notes import parse_frontmatter, wikilinks
    from vaultlib.qmd import refresh as qmd_refresh
    from vaultlib.vault import (
        installed_modules,
        is_infrastructure,
        load_manifest,
        module_active,
        read_text,
        vault_root,
    )

    payload = read_payload()
    root = vault_root()
    manifest = load_manifest(root)
    modules = installed_modules(root)

    indexes = ["work/Index.md", "brain/Memories.md"]
    if module_active(modules, "org"):
        indexes.append("org/People & Context.md")
    if module_active(modules, "perf"):
        indexes.append("perf/Brag Doc.md")
    lines = [
        "Wrap-up checklist:",
        "- Archive finished projects (work/active/ -> work/archive/YYYY/)",
        f"- Update the indexes you touched ({', '.join(indexes)})",
        "- New notes link to an existing note (orphans are bugs)",
        "- Durable lessons go to brain/ topic notes, never to an agent's private memory",
    ]
    if module_active(modules, "perf"):
        lines.append("- Anything brag-worthy today? Add it to perf/Brag Doc.md with evidence")
    lines.append("- /wrap-up runs the full review")

    orphans: list[str] = []
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=all"],
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            timeout=3,
            stdin=subprocess.DEVNULL,
        )
        changed = done.stdout.splitlines() if done.returncode == 0 else []
    except (OSError, subprocess.SubprocessError):
        changed = []
    for line in changed:
        rel = line[3:].strip().strip('"')
        if " -> " in rel:
            rel = rel.split(" -> ", 1)[1]
        if "D" in line[:2] or not rel.endswith(".md") or rel.startswith("."):
            continue
        if is_infrastructure(manifest, rel):
            continue
        text = read_text(root / rel, limit=262_144)
        if text is None:
            continue
        _, body = parse_frontmatter(text)
        if not any(not link.embed for link in wikilinks(body)):
            orphans.append(rel)
        if len(orphans) >= MAX_ORPHANS:
            break
    if orphans:
        lines.append("Changed notes that link to nothing: " + ", ".join(orphans))
    if payload.get("stop_hook_active") is True:
        # Claude Code is already continuing because of a Stop hook: keep it short.
        lines = [lines[0], *[ln for ln in lines[1:] if ln.startswith("Changed notes")], lines[-1]]
    with contextlib.suppress(Exception):
        qmd_refresh(root, manifest)
    return "\n".join(lines)


def main() -> int:
    message = FALLBACK
    try:
        message = checklist()
    except Exception as exc:
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"[agent-vault] checklist degraded: {exc.__class__.__name__}: {exc}\n")
    finally:
        sys.stdout.write(json.dumps({"systemMessage": message}, ensure_ascii=True) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
