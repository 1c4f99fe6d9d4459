"""Arrow arrays built from their buffers: numpy arrays and the reader's bytes, uncopied.

``pa.array`` converts element by element, and the first conversion of Python objects or
numpy arrays imports pandas; the run-file reader (:mod:`evalwh.measures.direct`) hands back raw
buffers, which these helpers wrap as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa


def numbers(array: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The values of a numeric Arrow array without nulls (or of its chunks), as numpy.

    From the values buffer (read-only, uncopied for one chunk): pyarrow's own ``to_numpy``
    and ``np.asarray`` import pandas on their first call.
    """
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        parts = [numbers(chunk) for chunk in array.chunks]
        if len(parts) == 1:
            return parts[0]
        return np.concatenate(parts) if parts else np.zeros(0, array.type.to_pandas_dtype())
    if array.null_count:
        raise ValueError("numbers() takes arrays without nulls")
    kind = np.dtype(array.type.to_pandas_dtype())
    return np.frombuffer(array.buffers()[1], kind, len(array), array.offset * kind.itemsize)


def int32s(values: np.ndarray) -> pa.Array:
    """An int32 array of ``values`` (no nulls)."""
    import pyarrow as pa

    values = np.ascontiguousarray(values, np.int32)
    return pa.Array.from_buffers(pa.int32(), len(values), [None, pa.py_buffer(values)])


def strings(values: Sequence[str]) -> pa.Array:
    """A string array of ``values`` (no nulls)."""
    import pyarrow as pa

    encoded = [value.encode() for value in values]
    offsets = np.zeros(len(encoded) + 1, np.int32)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    data = pa.py_buffer(b"".join(encoded))
    return pa.Array.from_buffers(pa.string(), len(encoded), [None, pa.py_buffer(offsets), data])


def repeated(value: str, count: int) -> pa.Array:
    """A string array of ``value``, ``count`` times."""
    import pyarrow as pa

    encoded = value.encode()
    offsets = np.arange(count + 1, dtype=np.int32) * len(encoded)
    data = pa.py_buffer(encoded * count)
    return pa.Array.from_buffers(pa.string(), count, [None, pa.py_buffer(offsets), data])
