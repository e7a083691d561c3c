"""Semantic versions and the npm-style ranges shard manifests use.

Versions are parsed with the ``semver`` package. ``requires`` ranges in
shard.yaml follow npm's syntax (ShardMind is a Node tool): comparators
(``>=1.2.0 <2``), ``^`` and ``~``, ``x``/``*`` wildcards, hyphen ranges
and ``||``. No maintained Python library evaluates npm ranges, so the
translation to plain comparators is done here, on top of ``semver``.
"""

from __future__ import annotations

import re

import semver

_TAG_RE = re.compile(r"^v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?)$")
# A release tag may leave the patch out (`v5.1`, as real shards tag): it names X.Y.0.
_TWO_PART_TAG_RE = re.compile(r"^v?(\d+)\.(\d+)$")
_PARTIAL_RE = re.compile(
    r"^v?(?P<major>\d+|[xX*])(?:\.(?P<minor>\d+|[xX*]))?(?:\.(?P<patch>\d+|[xX*]))?"
    r"(?:-(?P<pre>[0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$"
)
_COMPARATOR_RE = re.compile(r"^(?P<op><=|>=|<|>|=|\^|~)?\s*(?P<ver>\S+)$")


class RangeError(ValueError):
    """A range string that is not a valid npm-style range."""


def parse_version(text: str) -> semver.Version:
    """Parse ``1.2.3`` / ``v1.2.3`` / ``1.2.3-rc.1``; ValueError otherwise."""
    match = _TAG_RE.match(text.strip())
    if not match:
        raise ValueError(f"not a semantic version: {text!r}")
    return semver.Version.parse(match.group(1))


def is_version(text: str) -> bool:
    try:
        parse_version(text)
    except ValueError:
        return False
    return True


def version_from_tag(tag: str) -> semver.Version | None:
    """The version a release tag names (``v1.2.3``, ``1.2.3``, or two-part
    ``v5.1`` / ``5.1`` for 5.1.0), else None."""
    try:
        return parse_version(tag)
    except ValueError:
        pass
    two = _TWO_PART_TAG_RE.match(tag.strip())
    return semver.Version(int(two.group(1)), int(two.group(2)), 0) if two else None


def is_prerelease(version: semver.Version) -> bool:
    return version.prerelease is not None


def newest(versions: list[semver.Version], *, include_prerelease: bool = False) -> semver.Version | None:
    candidates = [v for v in versions if include_prerelease or not is_prerelease(v)]
    return max(candidates) if candidates else None


# --- ranges ---------------------------------------------------------------

Comparator = tuple[str, semver.Version]


def _partial(text: str) -> tuple[int | None, int | None, int | None, str | None]:
    match = _PARTIAL_RE.match(text)
    if not match:
        raise RangeError(f"not a version in a range: {text!r}")

    def num(name: str) -> int | None:
        raw = match.group(name)
        return None if raw is None or raw in ("x", "X", "*") else int(raw)

    major, minor, patch = num("major"), num("minor"), num("patch")
    if major is None:
        minor = patch = None
    elif minor is None:
        patch = None
    return major, minor, patch, match.group("pre")


def _v(major: int, minor: int, patch: int, pre: str | None = None) -> semver.Version:
    return semver.Version(major, minor, patch, prerelease=pre)


def _expand(op: str, text: str) -> list[Comparator]:
    major, minor, patch, pre = _partial(text)
    if major is None:
        return [(">=", _v(0, 0, 0))] if op in ("", "=", ">=", "^", "~", "<=") else [("<", _v(0, 0, 0))]
    low = _v(major, minor or 0, patch or 0, pre)
    if op == "^":
        if major > 0 or minor is None:
            high = _v(major + 1, 0, 0)
        elif minor > 0 or patch is None:
            high = _v(0, minor + 1, 0)
        else:
            high = _v(0, 0, patch + 1)
        return [(">=", low), ("<", high)]
    if op == "~" or (op in ("", "=") and patch is None):
        high = _v(major + 1, 0, 0) if minor is None else _v(major, minor + 1, 0)
        return [(">=", low), ("<", high)]
    if patch is None:  # partial with an operator: >=1.2 means >=1.2.0, <=1.2 means <1.3.0
        bump = _v(major + 1, 0, 0) if minor is None else _v(major, minor + 1, 0)
        if op == "<=":
            return [("<", bump)]
        if op == ">":
            return [(">=", bump)]
    return [(op or "=", low)]


def _parse_set(text: str) -> list[Comparator]:
    text = text.strip()
    if not text:
        return [(">=", _v(0, 0, 0))]
    hyphen = re.match(r"^(\S+)\s+-\s+(\S+)$", text)
    if hyphen:
        low = _expand(">=", hyphen.group(1))
        high = _expand("<=", hyphen.group(2))
        return low + high
    tokens = re.findall(r"(?:<=|>=|<|>|=|\^|~)?\s*[^\s<>=^~]+", text)
    comparators: list[Comparator] = []
    for token in tokens:
        match = _COMPARATOR_RE.match(token.strip())
        if not match:
            raise RangeError(f"bad comparator {token!r}")
        comparators.extend(_expand(match.group("op") or "", match.group("ver")))
    return comparators


def parse_range(text: str) -> list[list[Comparator]]:
    """Parse an npm range into alternatives (``||``) of comparator sets."""
    if not isinstance(text, str):
        raise RangeError("a range must be a string")
    return [_parse_set(part) for part in text.split("||")]


def _check(op: str, left: semver.Version, right: semver.Version) -> bool:
    cmp = left.compare(right)
    return {
        "<": cmp < 0,
        "<=": cmp <= 0,
        ">": cmp > 0,
        ">=": cmp >= 0,
        "=": cmp == 0,
    }[op]


def satisfies(version: str | semver.Version, range_text: str) -> bool:
    """npm semantics, including: a prerelease satisfies only ranges that name
    a prerelease of the same major.minor.patch."""
    ver = parse_version(version) if isinstance(version, str) else version
    for comparators in parse_range(range_text):
        if not all(_check(op, ver, bound) for op, bound in comparators):
            continue
        if ver.prerelease is None:
            return True
        if any(
            bound.prerelease is not None and bound.finalize_version() == ver.finalize_version()
            for _, bound in comparators
        ):
            return True
    return False
