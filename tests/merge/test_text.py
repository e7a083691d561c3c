"""merge3: git's rules, git's bytes, plus the both-added rule."""

from __future__ import annotations

import pytest

from shardpy.merge.text import BothAdded, ConflictRegion, MergeStats, merge3
from tests.merge.gitref import GitRef

BASE = "title\n\none\ntwo\nthree\nfour\nfive\nsix\nseven\n"


def test_disjoint_edits_merge_cleanly(gitref: GitRef) -> None:
    user = BASE.replace("two\n", "two (mine)\n")
    shard = BASE.replace("six\n", "six (theirs)\n")
    result = merge3(BASE, user, shard)
    assert result.clean
    assert result.text == "title\n\none\ntwo (mine)\nthree\nfour\nfive\nsix (theirs)\nseven\n"
    assert result.text == gitref.merge_file(BASE, user, shard)[0]
    assert result.stats == MergeStats(unchanged=7, auto_merged=2, conflicted=0, both_added=0)
    assert result.conflicts == [] and result.both_added == []


def test_one_side_unchanged_returns_the_other_verbatim() -> None:
    user = "totally\ndifferent"
    assert merge3(BASE, user, BASE).text == user
    assert merge3(BASE, BASE, user).text == user
    assert merge3(BASE, user, user).text == user


def test_user_deletion_is_honoured_while_shard_edits_elsewhere(gitref: GitRef) -> None:
    user = BASE.replace("two\nthree\n", "")
    shard = BASE.replace("six\n", "SIX\n")
    result = merge3(BASE, user, shard)
    assert result.clean
    assert "two" not in result.text and "three" not in result.text and "SIX\n" in result.text
    assert result.text == gitref.merge_file(BASE, user, shard)[0]


def test_identical_change_on_both_sides_is_clean() -> None:
    changed = BASE.replace("four\n", "FOUR\n")
    result = merge3(BASE, changed, changed.replace("one\n", "ONE\n"))
    assert result.clean
    assert result.text == changed.replace("one\n", "ONE\n")
    assert result.stats.auto_merged == 2


def test_conflict_markers_exactly_as_git(gitref: GitRef) -> None:
    base, user, shard = "a\nb\nc\n", "a\nX\nc\n", "a\nY\nc\n"
    result = merge3(base, user, shard, shard_label="shard 1.2.0")
    assert not result.clean
    assert result.text == "a\n<<<<<<< yours\nX\n=======\nY\n>>>>>>> shard 1.2.0\nc\n"
    assert result.text == gitref.merge_file(base, user, shard, label="shard 1.2.0")[0]
    assert result.conflicts == [
        ConflictRegion(output_line=2, output_end=6, base=("b",), user=("X",), shard=("Y",))
    ]
    assert result.stats == MergeStats(unchanged=2, auto_merged=0, conflicted=2, both_added=0)


def test_diff3_style_shows_the_base(gitref: GitRef) -> None:
    base, user, shard = "a\nb\nc\n", "a\nX\nc\n", "a\nY\nc\n"
    result = merge3(base, user, shard, style="diff3")
    assert result.text == "a\n<<<<<<< yours\nX\n||||||| base\nb\n=======\nY\n>>>>>>> shard\nc\n"
    assert result.text == gitref.merge_file(base, user, shard, style="diff3")[0]


def test_merge_style_refines_conflicts_but_diff3_does_not(gitref: GitRef) -> None:
    base = "h\nold1\nold2\nold3\nt\n"
    user = "h\nsame\nmine\nsame2\nt\n"
    shard = "h\nsame\ntheirs\nsame2\nt\n"
    merged = merge3(base, user, shard)
    assert merged.text == "h\nsame\n<<<<<<< yours\nmine\n=======\ntheirs\n>>>>>>> shard\nsame2\nt\n"
    assert merged.conflicts[0].base == ("old1", "old2", "old3")
    diff3 = merge3(base, user, shard, style="diff3")
    assert "||||||| base\nold1\nold2\nold3\n=======\nsame\ntheirs\nsame2\n" in diff3.text
    for style in ("merge", "diff3"):
        out = merge3(base, user, shard, style=style)  # type: ignore[arg-type]
        assert out.text == gitref.merge_file(base, user, shard, style=style)[0]  # type: ignore[arg-type]


def test_nearby_conflicts_are_joined_like_git(gitref: GitRef) -> None:
    # Conflicts separated by lines without letters or digits become one hunk.
    base = "a\nb\n}\n}\n}\n}\nc\nd\n"
    user = "a\nB1\n}\n}\n}\n}\nC1\nd\n"
    shard = "a\nB2\n}\n}\n}\n}\nC2\nd\n"
    result = merge3(base, user, shard)
    assert len(result.conflicts) == 1
    assert result.text == gitref.merge_file(base, user, shard)[0]


def test_missing_final_newline_clean_cases(gitref: GitRef) -> None:
    base = "a\nb\nc\nd\n"
    cases = [
        ("a\nb\nc\nd\nx", "Z\na\nb\nc\nd\n"),  # user's unterminated last line survives as is
        ("a\nb\nc\nd", "A\nb\nc\nd\n"),
        ("A\nb\nc\nd\n", "a\nb\nc\nd"),
    ]
    for user, shard in cases:
        result = merge3(base, user, shard)
        expected, conflicts = gitref.merge_file(base, user, shard)
        assert conflicts == 0
        assert result.clean and result.text == expected
    assert merge3(base, "a\nb\nc\nd\nx", "Z\na\nb\nc\nd\n").text == "Z\na\nb\nc\nd\nx"
    assert merge3(base, "A\nb\nc\nd\n", "a\nb\nc\nd").text == "A\nb\nc\nd"


def test_missing_final_newline_inside_a_conflict(gitref: GitRef) -> None:
    base, user, shard = "a\nb\nc", "a\nb\nX", "a\nb\nY"
    result = merge3(base, user, shard, style="diff3")
    # git ends each side of the hunk with a newline even when the file did not.
    assert result.text == "a\nb\n<<<<<<< yours\nX\n||||||| base\nc\n=======\nY\n>>>>>>> shard\n"
    assert result.text == gitref.merge_file(base, user, shard, style="diff3")[0]
    assert result.conflicts[0].user == ("X",)


def test_crlf_content_gets_crlf_markers_like_git(gitref: GitRef) -> None:
    base, user, shard = "a\r\nb\r\nc\r\n", "a\r\nX\r\nc\r\n", "a\r\nY\r\nc\r\n"
    result = merge3(base, user, shard)
    assert "<<<<<<< yours\r\n" in result.text
    assert result.text == gitref.merge_file(base, user, shard)[0]


def test_unicode_lines_are_compared_exactly(gitref: GitRef) -> None:
    base = "café\n--\n日本語\n🙂\nend\n"
    user = "café\n--\n日本語 edited\n🙂\nend\n"
    shard = "cafe\u0301\n--\n日本語\n🙂\nend\n"  # decomposed é: a different line
    result = merge3(base, user, shard)
    assert result.clean
    assert result.text == "cafe\u0301\n--\n日本語 edited\n🙂\nend\n"
    assert result.text == gitref.merge_file(base, user, shard)[0]


def test_label_is_sanitised_to_one_line() -> None:
    result = merge3("a\n", "b\n", "c\n", shard_label="shard\n1.0")
    assert result.text.endswith(">>>>>>> shard 1.0\n")


def test_unknown_style_is_rejected() -> None:
    with pytest.raises(ValueError, match="style"):
        merge3("a\n", "b\n", "c\n", style="zdiff3")  # type: ignore[arg-type]


# --- both-added ---------------------------------------------------------------


def test_both_added_at_the_same_point_keeps_both_shard_first(gitref: GitRef) -> None:
    base = "# Notes\n\nend\n"
    user = "# Notes\n\nmy idea\nend\n"
    shard = "# Notes\n\nnew template line\nend\n"
    result = merge3(base, user, shard)
    assert result.clean
    assert result.text == "# Notes\n\nnew template line\nmy idea\nend\n"
    assert result.both_added == [
        BothAdded(output_line=3, output_count=2, user=("my idea",), shard=("new template line",))
    ]
    assert result.stats == MergeStats(unchanged=3, auto_merged=0, conflicted=0, both_added=2)
    # git itself calls this a conflict.
    assert gitref.merge_file(base, user, shard)[1] == 1


def test_both_added_shares_common_lines_once() -> None:
    base = "top\nbottom\n"
    user = "top\n## Log\nmine 1\n- \nmine 2\nbottom\n"
    shard = "top\n## Log\ntheirs 1\n- \ntheirs 2\nbottom\n"
    for style in ("merge", "diff3"):
        result = merge3(base, user, shard, style=style)  # type: ignore[arg-type]
        assert result.clean
        assert result.text == "top\n## Log\ntheirs 1\nmine 1\n- \ntheirs 2\nmine 2\nbottom\n"
        assert [b.output_line for b in result.both_added] == [3, 6]
        assert result.text.count("## Log") == 1 and result.text.count("- \n") == 1


def test_both_added_where_one_insertion_extends_the_other() -> None:
    base = "a\nz\n"
    result = merge3(base, "a\nshared\nmine\nz\n", "a\nshared\nz\n")
    assert result.clean
    assert result.text == "a\nshared\nmine\nz\n"


def test_both_added_at_end_without_final_newline() -> None:
    result = merge3("a\n", "a\nmine", "a\ntheirs")
    assert result.clean
    assert result.text == "a\ntheirs\nmine"
    result = merge3("a\n", "a\nmine\n", "a\ntheirs")
    assert result.text == "a\ntheirs\nmine\n"


def test_insertion_next_to_a_change_is_still_a_conflict(gitref: GitRef) -> None:
    # The user inserted before line b while the shard changed b: the base range is not empty.
    base, user, shard = "a\nb\nc\n", "a\nnew\nb\nc\n", "a\nB\nc\n"
    result = merge3(base, user, shard)
    assert not result.clean and result.both_added == []
    assert result.text == gitref.merge_file(base, user, shard)[0]


def test_both_added_next_to_a_real_conflict() -> None:
    base = "a\nb\nc\nd\ne\nf\ng\n"
    user = "a\nU\nc\nd\ne\nf\nmine\ng\n"
    shard = "a\nS\nc\nd\ne\nf\ntheirs\ng\n"
    result = merge3(base, user, shard)
    assert len(result.conflicts) == 1 and len(result.both_added) == 1
    assert result.text.endswith("f\ntheirs\nmine\ng\n")
    assert result.both_added[0].output_line == result.text.split("\n").index("theirs") + 1
