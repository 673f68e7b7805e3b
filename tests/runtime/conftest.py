"""Helpers for the runtime suites."""

import numpy as np

DTYPES = ["float16", "float32", "float64", "uint8", "int8", "int32", "int64", "bool"]


def assert_same(x, ref):
    """``x`` (NDArray) equals the NumPy reference in shape, dtype and values."""
    ref = np.asarray(ref)
    got = x.asnumpy()
    assert x.shape == ref.shape, (x.shape, ref.shape)
    assert np.dtype(x.dtype) == ref.dtype, (x.dtype, ref.dtype)
    np.testing.assert_array_equal(got, ref)
