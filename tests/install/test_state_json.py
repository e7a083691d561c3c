"""A file record's JSON is its fields without the unset ones (as dataclasses.asdict gave them)."""

from __future__ import annotations

from dataclasses import asdict

from hypothesis import given
from hypothesis import strategies as st

from shardpy.vault.state import FileRecord

maybe_text = st.none() | st.text(max_size=5)
records = st.builds(
    FileRecord,
    template=st.text(max_size=5),
    rendered_hash=st.text(max_size=5),
    ownership=st.sampled_from(["managed", "modified", "volatile"]),
    volatile=st.booleans(),
    iterator_key=maybe_text,
    module=maybe_text,
    content_class=st.text(max_size=5),
    installed_hash=maybe_text,
    link=st.booleans(),
)


@given(records)
def test_record_json_is_its_set_fields(record: FileRecord) -> None:
    expected = {
        k: v
        for k, v in asdict(record).items()
        if v is not None and not (k in ("volatile", "link") and v is False)
    }
    out = record.to_json()
    assert out == expected
    assert list(out) == list(expected)  # the same order too
