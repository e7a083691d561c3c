"""The scan by meaning without numpy (issue 29): SimSIMD's similarities and the best rows picked
through a sampled threshold must give exactly what a stable sort of every row gives."""

from __future__ import annotations

import math
import random
from array import array

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from shardpy.index import hybrid, vectors


def _matrix(vecs: list[list[float]], files: list[int]) -> vectors.Matrix:
    dim = len(vecs[0])
    flat = array("f", [x for row in vecs for x in row])
    return vectors.Matrix(
        memoryview(array("q", range(100, 100 + len(vecs)))),
        memoryview(array("q", files)),
        memoryview(flat).cast("B").cast("f", [len(vecs), dim]),
    )


def _stable_best(sims: list[float], head: int) -> list[int]:
    return sorted(range(len(sims)), key=lambda i: -sims[i])[:head]


# Few distinct values: ties everywhere, at the threshold too.
_VALUES = st.sampled_from([-1.0, -0.5, 0.0, 0.25, 0.5, 0.75, 1.0, -math.inf])


@settings(max_examples=60, deadline=None)
@given(st.lists(_VALUES, min_size=1, max_size=400), st.integers(1, 500), st.integers(0, 3))
def test_the_best_rows_are_a_stable_sort_s_head(values: list[float], head: int, copies: int) -> None:
    sims = values * (1 + copies * 10)  # past SORT_ALL_BELOW at times, with repeated blocks
    head = min(head, len(sims))
    assert hybrid._best_rows(sims, head) == _stable_best(sims, head)


def test_a_large_scan_picks_through_the_threshold_exactly(monkeypatch: object) -> None:
    rng = random.Random(7)
    sims = [round(rng.gauss(0, 1), 2) for _ in range(30_000)]  # many ties
    for head in (1, 40, 2000, 29_999):
        assert hybrid._best_rows(sims, head) == _stable_best(sims, head)
    # A sample that sees only high values: the threshold is lowered until ``head`` rows pass.
    skewed = [1.0 if i % hybrid.SAMPLE_STEP == 0 else 0.5 for i in range(20_000)]
    assert hybrid._best_rows(skewed, 3000) == _stable_best(skewed, 3000)


def test_similarities_are_numpy_s_dot_products_and_damage_is_unranked() -> None:
    rng = np.random.default_rng(3)
    mat = rng.standard_normal((500, 32)).astype(np.float32)
    mat /= np.linalg.norm(mat, axis=1, keepdims=True)
    q = rng.standard_normal(32).astype(np.float32)
    q /= np.linalg.norm(q)
    got = hybrid._similarities(memoryview(mat.tobytes()).cast("f", [500, 32]), [float(x) for x in q])
    assert np.allclose(got, mat @ q, atol=1e-6)
    mat[7, 3] = np.nan
    got = hybrid._similarities(memoryview(mat.tobytes()).cast("f", [500, 32]), [float(x) for x in q])
    assert got[7] == -math.inf and all(math.isfinite(x) for i, x in enumerate(got) if i != 7)


def test_rank_keeps_each_note_s_best_section_and_the_caller_s_files() -> None:
    rng = random.Random(5)
    dim = 8
    rows = [[rng.uniform(-1, 1) for _ in range(dim)] for _ in range(60)]
    files = [i % 13 for i in range(60)]
    query = [rng.uniform(-1, 1) for _ in range(dim)]
    mat = _matrix(rows, files)
    sims = [float(np.float32(np.dot(np.asarray(r, np.float32), np.asarray(query, np.float32)))) for r in rows]
    want: list[tuple[int, int]] = []
    for i in _stable_best(sims, 60):
        if files[i] not in [f for f, _c in want]:
            want.append((files[i], 100 + i))
    got = hybrid._rank(mat, query, None, 5)
    assert [(f, c) for f, c, _s in got] == want[:5]
    allowed = {2, 3}
    only = hybrid._rank(mat, query, allowed, 5)
    assert [(f, c) for f, c, _s in only] == [w for w in want if w[0] in allowed]
    assert hybrid._rank(vectors.Matrix(memoryview(b""), memoryview(b""), None), query, None, 5) == []
