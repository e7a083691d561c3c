"""The scan by meaning without numpy (issue 29): SimSIMD's distances over int8 rows, and the
nearest rows picked through a sampled threshold must give exactly what a stable sort of every row
gives."""

from __future__ import annotations

import math
import random
from array import array

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from shardpy.index import arrays, hybrid, vectors


def _int8(rows: np.ndarray) -> np.ndarray:
    packed = arrays.int8_rows(rows)
    return np.frombuffer(packed, dtype=np.int8).reshape(rows.shape)


def _matrix(vecs: np.ndarray, files: list[int]) -> vectors.Matrix:
    rows, dim = vecs.shape
    return vectors.Matrix(
        memoryview(array("q", range(100, 100 + rows))),
        memoryview(array("q", files)),
        memoryview(arrays.int8_rows(vecs)).cast("b", [rows, dim]),
    )


def _stable_nearest(dist: list[float], head: int) -> list[int]:
    return sorted(range(len(dist)), key=lambda i: dist[i])[:head]


def _cosine_distances(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    r = rows.astype(np.float64)
    q = query.astype(np.float64)
    norms = np.linalg.norm(r, axis=1) * np.linalg.norm(q)
    out: np.ndarray = 1.0 - np.divide(r @ q, norms, out=np.zeros(len(r)), where=norms > 0)
    return out


# Few distinct values: ties everywhere, at the threshold too.
_VALUES = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, math.inf])


@settings(max_examples=60, deadline=None)
@given(st.lists(_VALUES, min_size=1, max_size=400), st.integers(1, 500), st.integers(0, 3))
def test_the_nearest_rows_are_a_stable_sort_s_head(values: list[float], head: int, copies: int) -> None:
    dist = values * (1 + copies * 10)  # past SORT_ALL_BELOW at times, with repeated blocks
    head = min(head, len(dist))
    assert hybrid._nearest_rows(dist, head) == _stable_nearest(dist, head)


def test_a_large_scan_picks_through_the_threshold_exactly(monkeypatch: object) -> None:
    rng = random.Random(7)
    dist = [round(rng.gauss(1, 0.3), 2) for _ in range(30_000)]  # many ties
    for head in (1, 40, 2000, 29_999):
        assert hybrid._nearest_rows(dist, head) == _stable_nearest(dist, head)
    # A sample that sees only near rows: the threshold is raised until ``head`` rows pass.
    skewed = [0.0 if i % hybrid.SAMPLE_STEP == 0 else 0.5 for i in range(20_000)]
    assert hybrid._nearest_rows(skewed, 3000) == _stable_nearest(skewed, 3000)


def test_distances_are_the_cosine_distances_of_the_int8_rows() -> None:
    rng = np.random.default_rng(3)
    mat = rng.standard_normal((500, 32)).astype(np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    mat[9] = 0.0  # a zero row is at distance 1
    q = rng.standard_normal(32).astype(np.float32)
    q /= np.linalg.norm(q)
    got = hybrid._distances(_matrix(mat, [0] * 500).vecs, [float(x) for x in q])  # type: ignore[arg-type]
    q8 = _int8(q.reshape(1, -1))[0]
    assert np.allclose(got, _cosine_distances(_int8(mat), q8), atol=1e-5)
    # What storing int8 costs against the float32 cosine: under a hundredth (docs/SEARCH.md).
    assert np.abs(np.asarray(got) - (1.0 - mat @ q))[np.arange(500) != 9].max() < 0.01
    assert got[9] == 1.0
    # A query with no vector is at distance 1 from every row, as a zero dot product was.
    assert hybrid._distances(_matrix(mat, [0] * 500).vecs, [0.0] * 32) == [1.0] * 500  # type: ignore[arg-type]


def test_int8_rows_scale_each_row_to_127_and_keep_zero_rows() -> None:
    rows = np.array([[0.5, -0.25, 0.125], [0.0, 0.0, 0.0], [-2.0, 1.0, 0.5]], dtype=np.float32)
    assert _int8(rows).tolist() == [[127, -64, 32], [0, 0, 0], [-127, 64, 32]]
    # The query is quantized the same way, without numpy.
    assert list(arrays.int8_vector([0.5, -0.25, 0.125]) or []) == [127, -64, 32]
    assert arrays.int8_vector([0.0, 0.0]) is None and arrays.int8_vector([math.nan, 1.0]) is None


def test_rank_keeps_each_note_s_best_section_and_the_caller_s_files() -> None:
    rng = np.random.default_rng(5)
    dim = 8
    rows = rng.uniform(-1, 1, (60, dim)).astype(np.float32)
    files = [i % 13 for i in range(60)]
    query = [float(x) for x in rng.uniform(-1, 1, dim)]
    mat = _matrix(rows, files)
    q8 = _int8(np.asarray([query], dtype=np.float32))[0]
    dist = [float(x) for x in _cosine_distances(_int8(rows), q8)]
    want: list[tuple[int, int]] = []
    for i in _stable_nearest(dist, 60):
        if files[i] not in [f for f, _c in want]:
            want.append((files[i], 100 + i))
    got = hybrid._rank(mat, query, None, 5)
    assert [(f, c) for f, c, _s in got] == want[:5]
    allowed = {2, 3}
    only = hybrid._rank(mat, query, allowed, 5)
    assert [(f, c) for f, c, _s in only] == [w for w in want if w[0] in allowed]
    assert hybrid._rank(vectors.Matrix(memoryview(b""), memoryview(b""), None), query, None, 5) == []


def _f32(values: list[float]) -> memoryview:
    return memoryview(array("f", values))


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    spread=st.sampled_from([0.001, 0.05, 0.3]),  # ties on one code, a few codes, many codes
    centre=st.sampled_from([0.3, 0.55, 0.99, 1.0, 1.6]),  # below 0.5, across 1.0, near 2.0
    near=st.integers(0, 3000),  # rows nearer than 0.5 (a near-duplicate query)
    far=st.integers(0, 300),  # rows at 2.0 or hidden (inf)
    head=st.integers(1, 9000),
)
def test_the_coded_pick_is_a_stable_sort_s_head(
    seed: int, spread: float, centre: float, near: int, far: int, head: int
) -> None:
    """The pick through the float32 byte code gives what a stable sort of every row gives, or
    declines (None) and the sort of every row answers."""
    rng = random.Random(seed)
    values = [min(2.0, max(0.0, rng.gauss(centre, spread))) for _ in range(9000)]
    for _ in range(near):
        values[rng.randrange(9000)] = rng.uniform(0.0, 0.5)
    for _ in range(far):
        values[rng.randrange(9000)] = rng.choice([2.0, math.inf])
    for _ in range(near // 100):  # the sign bit (SimSIMD gives none, a sort puts them first)
        values[rng.randrange(9000)] = rng.choice([-0.0, -1e-7])
    dist = _f32(values)
    exact = list(array("f", values))  # the float32 values, as the list path sees them
    got = hybrid._coded_nearest(dist, head)
    if got is None:
        return
    assert got == _stable_nearest(exact, head)


def test_the_coded_pick_declines_what_only_a_whole_sort_answers() -> None:
    assert hybrid._coded_nearest(_f32([0.7] * 100), 10) is None  # small: sorted whole
    assert hybrid._coded_nearest(_f32([0.7] * 9000), 9000) is None  # every row asked for
    # Fewer than head rows under 2.0: the rest are hidden (inf), only the whole sort orders them.
    assert hybrid._coded_nearest(_f32([0.7] * 100 + [math.inf] * 9000), 200) is None


def test_rank_through_the_coded_pick_is_the_rank_of_every_row() -> None:
    """A matrix past SORT_ALL_BELOW, with hidden rows: the fast path keeps each note's best section
    exactly as ranking every row does."""
    rng = np.random.default_rng(11)
    n, dim = 9000, 16
    rows = rng.uniform(-1, 1, (n, dim)).astype(np.float32)
    files = [i % 1700 for i in range(n)]
    query = [float(x) for x in rng.uniform(-1, 1, dim)]
    mat = _matrix(rows, files)
    mat.hidden = frozenset(range(0, n, 7))
    q8 = _int8(np.asarray([query], dtype=np.float32))[0]
    dist = [
        math.inf if i in mat.hidden else float(x) for i, x in enumerate(_cosine_distances(_int8(rows), q8))
    ]
    want: list[int] = []
    for i in _stable_nearest(dist, n):
        if files[i] not in [files[w] for w in want]:
            want.append(i)
    for depth in (1, 10, 50):
        assert hybrid._coded_nearest(hybrid._scan(mat.vecs, query), depth * 40) is not None  # taken
        got = hybrid._rank(mat, query, None, depth)
        assert [c - 100 for _f, c, _s in got] == want[:depth]
