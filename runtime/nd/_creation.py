"""Creation functions of ``runtime.nd`` beside ``arange``: :func:`zeros`, :func:`ones`,
:func:`eye` and :func:`linspace` (MXNet's, which take no array input).  Each takes MXNet's
``out=``: the values are written into that array (which must have the shape asked for)
and it is returned."""

import numpy as np

from runtime import _ndarray
from runtime._ndarray import NDArray, as_dtype, from_numpy


def _into(op, out, shape, fill):
    """Write into ``out`` (an NDArray of ``shape``) by ``fill(out)`` and return it."""
    if not isinstance(out, NDArray):
        raise TypeError(f"{op}: out must be an NDArray (got {type(out).__name__})")
    if shape is not None and tuple(out.shape) != tuple(shape):
        raise ValueError(f"{op}: out must have shape {tuple(shape)!r} (got {out.shape!r})")
    fill(out)
    return out


def _as_shape(shape):
    return (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)


def zeros(shape, ctx=None, dtype=None, stype=None, out=None):
    """An array of zeros (MXNet's ``nd.zeros``), float32 unless ``dtype``;
    ``stype='csr'``/``'row_sparse'`` an all-zero sparse array; ``out=``: written there."""
    if out is None:
        return _ndarray.zeros(shape, ctx=ctx, dtype=dtype, stype=stype)

    def fill(o):
        o[:] = 0
    return _into("zeros", out, _as_shape(shape), fill)


def ones(shape, ctx=None, dtype=None, out=None):
    """An array of ones (MXNet's ``nd.ones``), float32 unless ``dtype``; ``out=``:
    written there."""
    if out is None:
        return _ndarray.ones(shape, ctx=ctx, dtype=dtype)

    def fill(o):
        o[:] = 1
    return _into("ones", out, _as_shape(shape), fill)


def _count(op, name, v, minimum=0):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{op}: {name} must be an integer (got {v!r})")
    if v < minimum:
        raise ValueError(f"{op}: {name} must be >= {minimum} (got {v})")
    return int(v)


def _from_host(op, a, ctx, out):
    if out is None:
        return from_numpy(a, ctx)

    def fill(o):
        o[:] = a
    return _into(op, out, a.shape, fill)


def eye(N, M=0, k=0, ctx=None, dtype=None, out=None):
    """A 2-D array with ones on diagonal ``k`` and zeros elsewhere (MXNet's ``nd.eye``):
    ``N`` rows, ``M`` columns (0: ``N``), float32 by default; ``out=``: written there."""
    n = _count("eye", "N", N)
    m = _count("eye", "M", M) or n
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"eye: k must be an integer (got {k!r})")
    return _from_host("eye", np.eye(n, m, int(k), dtype=as_dtype(dtype)), ctx, out)


def linspace(start, stop, num, endpoint=True, ctx=None, dtype=None, out=None):
    """``num`` evenly spaced values from ``start`` to ``stop`` (included when
    ``endpoint``), as MXNet's ``nd.linspace``; float32 by default.  Computed in float64
    and cast (integer dtypes truncate toward zero, as MXNet's cast); ``out=``: written
    there."""
    n = _count("linspace", "num", num)
    for name, v in (("start", start), ("stop", stop)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise TypeError(f"linspace: {name} must be a number (got {v!r})")
        if not np.isfinite(v):
            raise ValueError(f"linspace: {name} must be finite (got {v!r})")
    d = as_dtype(dtype)
    a = np.linspace(float(start), float(stop), n, endpoint=bool(endpoint), dtype=np.float64)
    return _from_host("linspace", a.astype(d), ctx, out)
