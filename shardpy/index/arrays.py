"""The numpy pieces both kinds of folder model share: reading safetensors, batching, normalising;
and the int8 rule of stored vectors (with its plain-Python form for a query).

Its own module so that shardpy/index/embed.py (which loads the BERT backend
lazily) and shardpy/index/embed_bert.py (which uses these) do not import each
other (tests/test_no_cycles.py). numpy is imported when a function runs. A file
these cannot read is a ValueError (embed.load() reports the model unavailable).
"""

from __future__ import annotations

import json
import math
import struct
from array import array
from collections.abc import Sequence
from pathlib import Path

TYPE_CHECKING = False  # no typing at run time: a one-shot search pays for none of it (shardpy/record.py)
if TYPE_CHECKING:
    from typing import Any

    import numpy as np
    from numpy.typing import NDArray

BATCH = 512


def tensors(path: Path) -> dict[str, NDArray[Any]]:
    """The tensors of a safetensors file, memory-mapped (the format is an 8-byte header length, a JSON
    header, then raw little-endian data; read here without the safetensors package)."""
    import numpy as np

    with open(path, "rb") as fh:
        (size,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(size))
    header.pop("__metadata__", None)
    raw = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    kinds = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "BF16": None}
    out: dict[str, NDArray[Any]] = {}
    for name, info in header.items():
        kind = kinds.get(info["dtype"])
        if kind is None:
            raise ValueError(f"{path.name}: tensor {name} has unsupported dtype {info['dtype']}")
        lo, hi = info["data_offsets"]
        out[name] = raw[lo:hi].view(kind).reshape(info["shape"])
    return out


def batch_ids(tok: Any, texts: Sequence[str]) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    import numpy as np

    enc = tok.encode_batch(list(texts), add_special_tokens=tok.shardpy_specials)
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
    return ids, mask


def normalised(x: NDArray[np.float32]) -> NDArray[np.float32]:
    import numpy as np

    norm = np.linalg.norm(x, axis=1, keepdims=True)
    out: NDArray[np.float32] = (x / np.maximum(norm, 1e-9)).astype(np.float32)
    return out


# The one quantization rule of the section vectors, for stored rows (numpy) and for a query (plain
# Python: a search imports no numpy). Each row scaled so that its largest magnitude is 127, rounded
# half to even (cosine similarity ignores a row's scale; a row's error is at most half a step).
def int8_rows(x: NDArray[Any]) -> bytes:
    """The stored form of sections' vectors (a quarter of float32's bytes). A row of zeros stays
    zeros."""
    import numpy as np

    rows = np.asarray(x, dtype=np.float32)
    top = np.abs(rows).max(axis=1, keepdims=True) if rows.size else np.zeros((len(rows), 1), np.float32)
    scale = np.divide(127.0, top, out=np.zeros_like(top), where=top > 0)
    out: bytes = np.clip(np.rint(rows * scale), -127, 127).astype(np.int8).tobytes()
    return out


def int8_vector(values: Sequence[float]) -> array[int] | None:
    """One vector (a query's) by :func:`int8_rows`' rule, without numpy (in double precision, so at
    an exact half it may round one step from a float32 row's); None for a zero or non-finite one."""
    top = max(map(abs, values), default=0.0)
    if not top or not math.isfinite(top):
        return None
    scale = 127.0 / top
    return array("b", [max(-127, min(127, round(x * scale))) for x in values])
