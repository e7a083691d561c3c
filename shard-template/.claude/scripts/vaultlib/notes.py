"""Notes: frontmatter keys, wikilinks, and the checks a written note must pass.

No YAML library (the scripts are stdlib only), so frontmatter is read for
what the checks need: which top-level keys exist and whether they hold a
value. That is enough to say "missing `quarter`" and never enough to
misread a value, because values are not interpreted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from .vault import glob_match

_KEY = re.compile(r"^([^\s#:\-][^:]*?)\s*:(?:\s+(.*)|\s*)$")
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
_TASK = re.compile(r"^\s*[-*+] \[ \] (.+?)\s*$")


@dataclass
class Frontmatter:
    present: bool = False
    closed: bool = True
    keys: dict[str, bool] = field(default_factory=dict)  # key → has a non-empty value

    def missing(self, required: list[str]) -> list[str]:
        return [k for k in required if k not in self.keys]

    def empty(self, required: list[str]) -> list[str]:
        return [k for k in required if k in self.keys and not self.keys[k]]


def parse_frontmatter(text: str) -> tuple[Frontmatter, str]:
    """(frontmatter facts, body). A note without a leading `---` line has none."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return Frontmatter(present=False), text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return Frontmatter(present=True, closed=False), text
    fm = Frontmatter(present=True)
    block = lines[1:end]
    for idx, line in enumerate(block):
        if not line or line[0] in " \t#-":
            continue
        m = _KEY.match(line)
        if not m:
            continue
        key = m.group(1).strip().strip("\"'")
        value = (m.group(2) or "").strip()
        fm.keys[key] = _has_value(value, block[idx + 1 :])
    body = "\n".join(lines[end + 1 :])
    return fm, body


def _has_value(value: str, following: list[str]) -> bool:
    if value in ("", "|", ">", "|-", ">-"):
        # A block list or block scalar on the following indented lines.
        for line in following:
            if not line.strip():
                continue
            return line[0] in " \t-" and line.strip() not in ("-",)
        return False
    return value not in ('""', "''", "[]", "{}", "~", "null")


def strip_code(body: str) -> str:
    """The body without fenced code blocks and inline code (links there are examples)."""
    out: list[str] = []
    fence: str | None = None
    for line in body.splitlines():
        m = _FENCE.match(line)
        if fence is None and m:
            fence = m.group(2)[0] * 3
            continue
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        out.append(_INLINE_CODE.sub("", line))
    return "\n".join(out)


@dataclass(frozen=True)
class Link:
    target: str  # the note or file named, without #heading, ^block or |alias
    raw: str
    embed: bool


def wikilinks(body: str) -> list[Link]:
    links: list[Link] = []
    for m in _WIKILINK.finditer(strip_code(body)):
        raw = m.group(2)
        target = raw.split("|", 1)[0]
        target = re.split(r"[#^]", target, maxsplit=1)[0].strip()
        links.append(Link(target=target, raw=raw, embed=bool(m.group(1))))
    return links


def open_tasks(body: str) -> list[str]:
    return [m.group(1) for m in map(_TASK.match, strip_code(body).splitlines()) if m]


class LinkIndex:
    """What a [[link]] can resolve to, the way Obsidian resolves it: a bare
    name matches any file with that name (".md" optional), a name with a "/"
    matches the end of a path. Case-insensitive, like Obsidian on every OS."""

    def __init__(self, files: list[str]) -> None:
        self._names: set[str] = set()
        self._paths: set[str] = set()
        for rel in files:
            low = rel.lower()
            self._paths.add(low)
            name = PurePosixPath(low).name
            self._names.add(name)
            if name.endswith(".md"):
                self._names.add(name[:-3])
                self._paths.add(low[:-3])

    def resolves(self, target: str) -> bool:
        t = target.strip().lower().lstrip("/")
        if not t:
            return True  # [[#Heading]]: a link into the note itself
        if "/" not in t:
            return t in self._names or f"{t}.md" in self._names
        if t in self._paths or f"{t}.md" in self._paths:
            return True
        suffix = "/" + t
        return any(p.endswith(suffix) or p.endswith(suffix + ".md") for p in self._paths)


def required_keys(rules: dict[str, Any], rel: str) -> dict[str, list[str]]:
    """Note type → required keys, for every rule that applies to `rel`."""
    out: dict[str, list[str]] = {}
    for note_type, rule in rules.items():
        if note_type == "global":
            keys = (
                rule if isinstance(rule, list) else rule.get("required", []) if isinstance(rule, dict) else []
            )
            out["global"] = [k for k in keys if isinstance(k, str)]
            continue
        if isinstance(rule, list):
            continue  # a rule without path_match cannot be told apart from any other note
        if not isinstance(rule, dict):
            continue
        pattern = rule.get("path_match")
        keys = rule.get("required", [])
        if isinstance(pattern, str) and isinstance(keys, list) and glob_match(pattern, rel):
            out[note_type] = [k for k in keys if isinstance(k, str)]
    return out


def check_note(text: str, rel: str, rules: dict[str, Any], index: LinkIndex) -> list[str]:
    """Problems with a written note, each a sentence the agent can act on."""
    problems: list[str] = []
    fm, body = parse_frontmatter(text)
    needed = required_keys(rules, rel)
    if fm.present and not fm.closed:
        problems.append("frontmatter opens with --- but never closes; add the closing --- line")
    elif needed:
        want: list[str] = []
        for keys in needed.values():
            want.extend(k for k in keys if k not in want)
        types = ", ".join(t for t in needed if t != "global") or "every note"
        if not fm.present:
            problems.append(f"no frontmatter; {types} needs: {', '.join(want)}")
        else:
            missing = fm.missing(want)
            empty = fm.empty(want)
            if missing:
                problems.append(f"frontmatter is missing {', '.join(missing)} (required for {types})")
            if empty:
                problems.append(f"frontmatter has empty {', '.join(empty)}; give each a value")
    links = wikilinks(body)
    dangling = sorted({link.target for link in links if not index.resolves(link.target)})
    if dangling:
        shown = ", ".join(f"[[{t}]]" for t in dangling[:8])
        more = f" and {len(dangling) - 8} more" if len(dangling) > 8 else ""
        problems.append(f"links that resolve to no file: {shown}{more} — fix the name or create the note")
    if not any(not link.embed for link in links):
        problems.append("links to no other note; every note links to at least one existing note")
    return problems
