"""merge_document: bytes in, bytes out, the user's encoding details preserved."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shardpy.merge.document import diff_stats, is_binary, merge_document, unified_diff
from shardpy.merge.frontmatter import KeyConflict
from shardpy.merge.text import MergeStats, merge3
from tests.merge.gitref import GitRef
from tests.merge.strategies import edited, join, texts

BODY = "# Title\n\nintro\n\n## Part\n\nalpha\nbeta\ngamma\ndelta\n"


def _merge(base: str | bytes, user: str | bytes, shard: str | bytes) -> bytes:
    def b(x: str | bytes) -> bytes:
        return x.encode() if isinstance(x, str) else x

    result = merge_document(b(base), b(user), b(shard), shard_label="shard 2.0.0")
    return result.data


def test_clean_merge_of_plain_notes(gitref: GitRef) -> None:
    user = BODY.replace("intro\n", "intro, edited by me\n")
    shard = BODY.replace("delta\n", "delta\nepsilon\n")
    result = merge_document(BODY.encode(), user.encode(), shard.encode(), shard_label="shard 2.0.0")
    assert result.kind == "clean" and not result.has_conflicts
    assert result.data.decode() == gitref.merge_file(BODY, user, shard)[0]
    assert result.stats == MergeStats(unchanged=9, auto_merged=2, conflicted=0, both_added=0)


def test_conflict_with_markers_and_excerpts() -> None:
    user = BODY.replace("beta\n", "beta (mine)\n")
    shard = BODY.replace("beta\n", "beta (theirs)\n")
    result = merge_document(BODY.encode(), user.encode(), shard.encode(), shard_label="shard 2.0.0")
    assert result.kind == "conflict" and result.has_conflicts
    text = result.data.decode()
    assert "<<<<<<< yours\nbeta (mine)\n=======\nbeta (theirs)\n>>>>>>> shard 2.0.0\n" in text
    (excerpt,) = result.conflict_excerpts(context_lines=1)
    assert excerpt.splitlines() == [
        " 7 | alpha",
        " 8 | <<<<<<< yours",
        " 9 | beta (mine)",
        "10 | =======",
        "11 | beta (theirs)",
        "12 | >>>>>>> shard 2.0.0",
        "13 | gamma",
    ]
    assert result.describe_conflicts(1) == [excerpt]


def test_diff3_style_is_passed_through() -> None:
    result = merge_document(b"a\nb\nc\n", b"a\nX\nc\n", b"a\nY\nc\n", shard_label="s", style="diff3")
    assert b"||||||| base\nb\n" in result.data


def test_binary_files_are_never_merged() -> None:
    for user, shard in ((b"\x89PNG\r\n\x1a\n\0\0", b"png2"), (b"text\n", b"\xff\xfe bad utf-8")):
        result = merge_document(b"base\n", user, shard, shard_label="s")
        assert result.kind == "binary" and result.is_binary
        assert result.data == user
        assert result.conflict_excerpts() == []
    assert is_binary(b"a\0b") and is_binary(b"\xc3") and not is_binary("é".encode())


def test_crlf_user_file_keeps_crlf() -> None:
    user = BODY.replace("intro\n", "intro edited\n").replace("\n", "\r\n")
    shard = BODY.replace("delta\n", "delta\nnew line\n")
    out = _merge(BODY, user, shard)
    assert (
        out
        == BODY.replace("intro\n", "intro edited\n")
        .replace("delta\n", "delta\nnew line\n")
        .replace("\n", "\r\n")
        .encode()
    )


def test_crlf_conflict_markers_use_crlf_too() -> None:
    out = _merge("a\nb\nc\n", "a\r\nX\r\nc\r\n", "a\nY\nc\n")
    assert out == b"a\r\n<<<<<<< yours\r\nX\r\n=======\r\nY\r\n>>>>>>> shard 2.0.0\r\nc\r\n"


def test_mixed_line_endings_keep_each_user_line_as_it_was() -> None:
    base = "one\ntwo\nthree\nfour\nfive\n"
    user = b"one\r\ntwo\nthree\r\nfour\r\nfive\r\n"  # mostly CRLF, one LF line
    shard = "one\ntwo\nthree\nfour\nfive\nsix\n"
    assert _merge(base, user, shard) == b"one\r\ntwo\nthree\r\nfour\r\nfive\r\nsix\r\n"


def test_bom_is_kept_only_when_the_user_has_one() -> None:
    base = "a\nb\nc\nd\n"
    user = "a\nB\nc\nd\n"
    shard = "\ufeffa\nb\nc\nD\n"
    assert _merge(base, "\ufeff" + user, shard) == "\ufeffa\nB\nc\nD\n".encode()
    assert _merge("\ufeff" + base, user, shard) == b"a\nB\nc\nD\n"


def test_emoji_cjk_and_accents_are_byte_exact() -> None:
    base = "Café ☕\n\n日本語のノート\n\n🧠 memory\n\nend\n"
    user = base.replace("日本語のノート", "日本語のノート（編集）")
    shard = base.replace("🧠 memory", "🧠 memory 👩\u200d💻").replace("Café", "Cafe\u0301")
    out = _merge(base, user, shard)
    expected = "Cafe\u0301 ☕\n\n日本語のノート（編集）\n\n🧠 memory 👩\u200d💻\n\nend\n"
    assert out == expected.encode("utf-8")


def test_no_trailing_newline_is_preserved() -> None:
    base = "a\nb\nc\nd"
    assert _merge(base, "A\nb\nc\nd", "a\nb\nc\nD") == b"A\nb\nc\nD"
    assert _merge(base, "a\nb\nc\nd\n", "A\nb\nc\nd") == b"A\nb\nc\nd\n"


FM_BASE = "---\ntitle: Note\ntags:\n  - a\n  - b\nstatus: draft\n---\n" + BODY


def test_frontmatter_changed_on_both_sides_merges_by_key() -> None:
    user = FM_BASE.replace("  - b\n", "  - b\n  - mine\n").replace("intro\n", "intro (mine)\n")
    shard = (
        FM_BASE.replace("  - a\n", "")
        .replace("status: draft", "status: final")
        .replace("delta\n", "delta\nend\n")
    )
    result = merge_document(FM_BASE.encode(), user.encode(), shard.encode(), shard_label="shard 2.0.0")
    assert result.kind == "clean" and not result.has_conflicts
    assert result.data.decode() == (
        "---\ntitle: Note\ntags:\n  - b\n  - mine\nstatus: final\n---\n"
        + BODY.replace("intro\n", "intro (mine)\n").replace("delta\n", "delta\nend\n")
    )
    assert result.frontmatter_fallback is None


def test_frontmatter_key_conflict_is_reported_without_markers() -> None:
    user = FM_BASE.replace("title: Note", "title: Mine")
    shard = FM_BASE.replace("title: Note", "title: Theirs").replace("status: draft", "status: final")
    result = merge_document(FM_BASE.encode(), user.encode(), shard.encode(), shard_label="s")
    assert result.kind == "clean" and result.has_conflicts and not result.conflicts
    assert result.frontmatter_conflicts == [KeyConflict("title", "Note", "Mine", "Theirs")]
    assert result.data.decode().startswith("---\ntitle: Mine\ntags:\n  - a\n  - b\nstatus: final\n---\n")
    assert b"<<<<<<<" not in result.data
    assert result.describe_conflicts() == [result.frontmatter_conflicts[0].describe()]


def test_frontmatter_changed_on_one_side_is_taken_verbatim() -> None:
    # The user's odd formatting and comment survive; the shard's body change merges.
    user = FM_BASE.replace("title: Note\n", "title:    'Note'   # mine\n")
    shard = FM_BASE.replace("gamma\n", "gamma (new)\n")
    assert _merge(FM_BASE, user, shard).decode() == user.replace("gamma\n", "gamma (new)\n")
    # The shard's block verbatim when only the shard changed it, even next to a body edit.
    shard2 = FM_BASE.replace("status: draft\n", "status: draft\nnew: key\n")
    user2 = FM_BASE.replace("---\n# Title\n", "---\n# Title (mine)\n")
    out = _merge(FM_BASE, user2, shard2).decode()
    assert out == shard2.replace("---\n# Title\n", "---\n# Title (mine)\n")


def test_conflict_line_numbers_count_the_frontmatter() -> None:
    user = FM_BASE.replace("status: draft", "status: mine").replace("beta\n", "beta 1\n")
    shard = FM_BASE.replace("tags:\n", "tags:\n  - z\n").replace("beta\n", "beta 2\n")
    result = merge_document(FM_BASE.encode(), user.encode(), shard.encode(), shard_label="s")
    lines = result.data.decode().split("\n")
    (conflict,) = result.conflicts
    assert lines[conflict.output_line - 1] == "<<<<<<< yours"
    assert lines[conflict.output_end - 1] == ">>>>>>> s"


def test_unmergeable_frontmatter_falls_back_to_a_whole_file_merge() -> None:
    user = FM_BASE.replace("status: draft\n", "status: [broken\n")
    shard = FM_BASE.replace("title: Note\n", "title: New\n")
    result = merge_document(FM_BASE.encode(), user.encode(), shard.encode(), shard_label="s")
    assert result.frontmatter_fallback is not None and "not valid YAML" in result.frontmatter_fallback
    assert result.data.decode() == merge3(FM_BASE, user, shard, shard_label="s").text
    removed = merge_document(FM_BASE.encode(), BODY.encode(), shard.encode(), shard_label="s")
    assert removed.frontmatter_fallback is not None


def test_unchanged_frontmatter_means_git_exact_whole_file_merge(gitref: GitRef) -> None:
    user = FM_BASE.replace("intro\n", "intro 1\n")
    shard = FM_BASE.replace("alpha\n", "alpha 2\n")
    assert (
        _merge(FM_BASE, user, shard).decode()
        == gitref.merge_file(FM_BASE, user, shard, label="shard 2.0.0")[0]
    )


def test_diff_stats() -> None:
    assert diff_stats(b"a\nb\nc\n", b"a\nB\nc\nd\n") == (2, 1)
    assert diff_stats(b"", b"x\ny\n") == (2, 0)
    assert diff_stats(b"same\n", b"same\n") == (0, 0)


def test_unified_diff_matches_git(gitref: GitRef) -> None:
    old = "".join(f"line {i}\n" for i in range(30))
    new = (
        old.replace("line 3\n", "line three\n")
        .replace("line 10\n", "")
        .replace("line 25\n", "line 25\nextra\n")
    )
    new = new[:-1]  # and no final newline
    ours = unified_diff(old.encode(), new.encode(), old_label="a/n.md", new_label="b/n.md")
    assert ours.startswith("--- a/n.md\n+++ b/n.md\n@@ ")
    assert ours.split("\n", 2)[2].encode() == gitref.diff(old, new, context=3)
    assert unified_diff(b"x", b"x") == ""
    assert unified_diff(b"\0", b"\1") == "Binary files a and b differ\n"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_unified_diff_agrees_with_git_on_random_edits(gitref: GitRef, data: st.DataObject) -> None:
    base = data.draw(texts(max_lines=25))
    other = data.draw(edited(base, max_edits=6))
    old = join(base, data.draw(st.booleans())).replace("\r", "")
    new = join(other, data.draw(st.booleans())).replace("\r", "")
    context = data.draw(st.integers(0, 3))
    ours = unified_diff(old.encode(), new.encode(), context=context)
    theirs = gitref.diff(old, new, context=context)
    assert (ours.split("\n", 2)[2] if ours else "").encode() == theirs
