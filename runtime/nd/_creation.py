"""Creation functions of ``runtime.nd`` beside ``arange``: :func:`eye` and :func:`linspace`
(MXNet's ``nd.eye`` and ``nd.linspace``, which take no array input)."""

import numpy as np

from runtime._ndarray import as_dtype, from_numpy


def _count(op, name, v, minimum=0):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{op}: {name} must be an integer (got {v!r})")
    if v < minimum:
        raise ValueError(f"{op}: {name} must be >= {minimum} (got {v})")
    return int(v)


def eye(N, M=0, k=0, ctx=None, dtype=None):
    """A 2-D array with ones on diagonal ``k`` and zeros elsewhere (MXNet's ``nd.eye``):
    ``N`` rows, ``M`` columns (0: ``N``), float32 by default."""
    n = _count("eye", "N", N)
    m = _count("eye", "M", M) or n
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"eye: k must be an integer (got {k!r})")
    return from_numpy(np.eye(n, m, int(k), dtype=as_dtype(dtype)), ctx)


def linspace(start, stop, num, endpoint=True, ctx=None, dtype=None):
    """``num`` evenly spaced values from ``start`` to ``stop`` (included when
    ``endpoint``), as MXNet's ``nd.linspace``; float32 by default.  Computed in float64
    and cast (integer dtypes truncate toward zero, as MXNet's cast)."""
    n = _count("linspace", "num", num)
    for name, v in (("start", start), ("stop", stop)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise TypeError(f"linspace: {name} must be a number (got {v!r})")
        if not np.isfinite(v):
            raise ValueError(f"linspace: {name} must be finite (got {v!r})")
    d = as_dtype(dtype)
    a = np.linspace(float(start), float(stop), n, endpoint=bool(endpoint), dtype=np.float64)
    return from_numpy(a.astype(d), ctx)
