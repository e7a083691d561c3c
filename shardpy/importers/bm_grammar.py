"""basic-memory's observation and relation grammar (0.24.x rules).

Applied to every inline token outside code, as basic-memory does: paragraphs,
headings and list items of any depth, not only under ``## Observations``.
Used for the counts in the plan, for link resolution and for the round-trip
check; the note body itself is always imported verbatim.
"""

from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass

from shardpy.notes.blocks import InlineBlock, inline_blocks, strip_code_spans
from shardpy.notes.wikilinks import find_wikilinks

_TIME = r"\d{1,3}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?"
_TIMESTAMP_CATEGORY = re.compile(rf"^{_TIME}(?:\s+-\s+{_TIME})?$")
_LINKS_TO_DIRECTIVE = re.compile(r"\s+#bm:links_to\s*$")
_CATEGORY = re.compile(r"^\[([^\[\]()]+)\]\s+(.+)", re.DOTALL)
_EMPTY_CATEGORY = re.compile(r"^\[\]\s+(.+)", re.DOTALL)
_MD_LINK_ONLY = re.compile(r"^\[.*?\]\(.*?\)$", re.DOTALL)
_WIKILINK_ONLY = re.compile(r"^\[\[.*?\]\]$", re.DOTALL)
_TEMPORAL = re.compile(
    r'^@(?:effective\[[^\]\)]*[\]\)]|effective:\S+|occurred:"[^"]*"|occurred:\S+|\d{4}-\d{2}-\d{2}\S*)\s+'
)
_MD_LINK = re.compile(r"\[([^\[\]]*)\]\(\s*(<[^>]*>|[^()\s]+)\s*\)")


@dataclass(frozen=True, slots=True)
class Observation:
    category: str | None
    content: str
    tags: tuple[str, ...]
    context: str | None


@dataclass(frozen=True, slots=True)
class Relation:
    type: str
    target: str
    context: str | None


def _strip_directive(content: str) -> tuple[str, bool]:
    if "#bm:links_to" not in content:
        return content, False
    m = _LINKS_TO_DIRECTIVE.search(content)
    if m is None:
        return content, False
    return content[: m.start()].rstrip(), True


def _category_match(content: str) -> re.Match[str] | None:
    m = _CATEGORY.match(content)
    if m is None:
        return None
    cat = m.group(1).strip()
    if _TIMESTAMP_CATEGORY.match(cat):
        return None
    if len(cat) == 1 and (cat in "xX" or not cat.isalnum()):
        return None
    return m


def parse_observation(raw: str) -> Observation | None:
    """One inline token's text → an observation, or None."""
    parts = _observation_parts(raw)
    if parts is None:
        return None
    category, content, context = parts
    tags: list[str] = []
    for part in content.split() if "#" in content else ():
        if part.startswith("#"):
            if "#" in part[1:]:
                tags.extend(t for t in part.split("#") if t)
            else:
                tags.append(part[1:])
    return Observation(category, content, tuple(tags), context)


def observation_texts(blocks: list[InlineBlock]) -> list[str]:
    """``[category] content (context)`` of each observation in ``blocks`` (what the plan counts)."""
    out: list[str] = []
    for block in blocks:
        if block.in_blockquote:
            continue
        parts = _observation_parts(block.content)
        if parts is not None:
            category, content, context = parts
            out.append(
                f"[{category or ''}] {content} ({context})" if context else f"[{category or ''}] {content}"
            )
    return out


def observation_count(blocks: list[InlineBlock]) -> int:
    """``len(observation_texts(blocks))``, without building the texts (the first pass only counts)."""
    parts = _observation_parts
    return sum(1 for block in blocks if not block.in_blockquote and parts(block.content) is not None)


def _observation_parts(raw: str) -> tuple[str | None, str, str | None] | None:
    """(category, content, context) of an observation, or None (tags are left in the content)."""
    content = raw.strip()
    if not content or (content[0] != "[" and "#" not in content):
        return None  # neither a category nor a tag: the common case, decided early
    content, _ = _strip_directive(content)
    if not content:
        return None
    bracket = content[0] == "["
    if bracket and (
        content.startswith(("[ ]", "[x]", "[-]"))
        or _MD_LINK_ONLY.match(content)
        or _WIKILINK_ONLY.match(content)
    ):
        return None
    m = _category_match(content) if bracket else None
    if m is None and not any(part.startswith("#") for part in content.split()):
        return None
    category, content = _category_split(content, m, bracket)
    context: str | None = None
    if content.endswith(")"):
        at = content.rfind("(")
        if at != -1:
            context = content[at + 1 : -1].strip()
            content = content[:at].strip()
    if not content:
        return None
    return category, content, context


def _category_split(content: str, m: re.Match[str] | None, bracket: bool) -> tuple[str | None, str]:
    """(category, the rest) of an observation whose ``[category]`` matched as ``m`` (a leading
    ``@date`` temporal marker dropped); an empty ``[]`` is dropped, no category."""
    if m is not None:
        content = m.group(2).strip()
        if content[:1] == "@":
            t = _TEMPORAL.match(content)
            if t is not None and t.end() < len(content):
                content = content[t.end() :].strip()
        return m.group(1).strip(), content
    if bracket:
        e = _EMPTY_CATEGORY.match(content)
        if e is not None:
            content = e.group(1).strip()
    return None, content


def normalize_target(target: str) -> str:
    """basic-memory turns ``proj::Note`` into ``proj/Note`` (a reference into another project)."""
    if "::" in target:
        proj, _, rest = target.partition("::")
        return f"{proj.strip()}/{rest.strip()}"
    return target


def _relation_type(content: str) -> str | None:
    before = content.partition("[[")[0].strip()
    if not before:
        return None
    q = before[0]
    if q in "'\"" and len(before) >= 2 and before.endswith(q):
        return before[1:-1].strip() or None
    if any(c.isspace() for c in before):
        return None
    return before


def _single_parenthesized(text: str) -> bool:
    if not text.startswith("("):
        return False
    depth = 0
    for i, c in enumerate(text):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i == len(text) - 1
    return False


def parse_explicit_relation(content: str) -> Relation | None:
    """``type [[Target]] (context)`` inside a list item, or None."""
    content = content.strip()
    if "[[" not in content or "]]" not in content:
        return None
    rel_type = _relation_type(content)
    if rel_type is None:
        return None
    start = content.find("[[")
    end = content.find("]]", start + 2)
    if end == -1:
        return None
    target = normalize_target(content[start + 2 : end].strip())
    if not target:
        return None
    after = content[end + 2 :].strip()
    context: str | None = None
    if after:
        if not _single_parenthesized(after):
            return None
        context = after[1:-1].strip() or None
    return Relation(rel_type, target, context)


def inline_relations(content: str) -> list[Relation]:
    out: list[Relation] = []
    for link in find_wikilinks(content):
        target = normalize_target(link.inner.strip())
        if target:
            out.append(Relation("links_to", target, None))
    return out


def md_link_relations(content: str) -> list[Relation]:
    """Markdown links to local notes (basic-memory 0.24): ``links_to ./decoded/path.md``."""
    out: list[Relation] = []
    if "](" not in content:
        return out
    for m in _MD_LINK.finditer(strip_code_spans(content)):
        url = m.group(2).strip("<>")
        if not is_local_note_url(url):
            continue
        out.append(Relation("links_to", "./" + urllib.parse.unquote(url).removeprefix("./"), None))
    return out


def is_local_note_url(url: str) -> bool:
    lowered = url.lower()
    if not url or url.startswith("#") or url.endswith("/") or "://" in url or lowered.startswith("mailto:"):
        return False
    path = url.split("#", 1)[0]
    return path.lower().endswith((".md", ".markdown"))


def semantics(blocks: list[InlineBlock]) -> tuple[list[Observation], list[Relation]]:
    """Observations and relations of a body, by basic-memory's rules."""
    observations: list[Observation] = []
    relations: list[Relation] = []
    for block in blocks:
        content = block.content
        if not block.in_blockquote:
            obs = parse_observation(content)
            if obs is not None:
                observations.append(obs)
        stripped, forced = _strip_directive(content)
        explicit = (
            parse_explicit_relation(strip_code_spans(stripped))
            if block.in_list_item and not forced and "[[" in content
            else None
        )
        if explicit is not None:
            relations.append(explicit)
        elif "[[" in content:
            relations.extend(inline_relations(stripped))
        if "](" in content:
            relations.extend(md_link_relations(content))
    return observations, relations


def parse_body(body: str) -> tuple[list[Observation], list[Relation]]:
    return semantics(inline_blocks(body))
