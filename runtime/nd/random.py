"""Random arrays (MXNet's ``mx.nd.random``), drawn from :mod:`runtime.random`'s generator."""

import numpy as np

from runtime import random as _random
from runtime._ndarray import NDArray, as_dtype, empty, from_numpy

_FLOATS = ("float16", "float32", "float64")


def _target(name, shape, dtype, ctx, out, default):
    if out is not None:
        if not isinstance(out, NDArray):
            raise TypeError(f"{name}: out must be an NDArray (got {type(out).__name__})")
        return out, np.dtype(out.dtype)
    d = as_dtype(dtype if dtype is not None else default)
    shape = (1,) if shape is None else shape
    return empty(shape, ctx, d), d      # checks shape and ctx; its memory is never taken


def _check_float(name, d):
    if d.name not in _FLOATS:
        raise TypeError(f"{name}: dtype must be one of {', '.join(_FLOATS)} (got {d})")


def _fill(out, values, given):
    """``values`` written into ``out=`` when the caller ``given`` it, else in a new array
    (``out`` is then _target's unallocated placeholder)."""
    if not given:
        return from_numpy(values.astype(out.dtype, copy=False), out.ctx)
    out[...] = values
    return out


def _per_element(name, names, a, b, shape, dtype, out, draw):
    """MXNet's ``_sample_<name>``: NDArray parameters ``a``, ``b`` of one shape give, per
    element, ``shape`` samples (the result has shape ``a.shape + shape``), drawn by
    ``draw(a, b, size)`` in float64 and cast to ``dtype`` (default: a's dtype)."""
    for n, v in zip(names, (a, b)):
        if not isinstance(v, NDArray):
            raise TypeError(f"{name}: {names[0]} and {names[1]} must both be NDArrays or "
                            f"both numbers (got {n}={type(v).__name__})")
    if a.shape != b.shape:
        raise ValueError(f"{name}: {names[0]} and {names[1]} must have one shape (got "
                         f"{a.shape} and {b.shape})")
    if a.ctx != b.ctx:
        raise ValueError(f"{name}: {names[0]} is on {a.ctx}, {names[1]} on {b.ctx}")
    extra = () if shape is None else (tuple(shape) if isinstance(shape, (tuple, list))
                                      else (shape,))
    given = out is not None
    d = as_dtype(dtype if dtype is not None else a.dtype)
    if not given:
        out = empty(a.shape + extra, a.ctx, d)      # checks the shape
    elif not isinstance(out, NDArray):
        raise TypeError(f"{name}: out must be an NDArray (got {type(out).__name__})")
    elif out.shape != a.shape + extra:
        raise ValueError(f"{name}: out has shape {out.shape}, the samples "
                         f"{a.shape + extra}")
    _check_float(name, np.dtype(out.dtype))
    av = a.asnumpy().astype(np.float64).reshape(a.shape + (1,) * len(extra))
    bv = b.asnumpy().astype(np.float64).reshape(a.shape + (1,) * len(extra))
    return _fill(out, draw(av, bv, a.shape + extra), given)


def _uniform_draw(low, high, size):
    if not np.all(low <= high):
        raise ValueError("uniform: low must be <= high elementwise")
    return _random.generator().random(size) * (high - low) + low


def _normal_draw(loc, scale, size):
    if not np.all(scale >= 0):
        raise ValueError("normal: scale must be >= 0 elementwise")
    return _random.generator().standard_normal(size) * scale + loc


def uniform(low=0.0, high=1.0, shape=None, dtype=None, ctx=None, out=None):
    """Samples from the uniform distribution on [low, high); shape (1,) by default.

    As MXNet: with NDArrays ``low`` and ``high`` (of one shape) each element pair gets
    ``shape`` samples of its own, and the result has shape ``low.shape + shape``
    (MXNet's ``_sample_uniform``), on their context."""
    if isinstance(low, NDArray) or isinstance(high, NDArray):
        return _per_element("uniform", ("low", "high"), low, high, shape, dtype, out,
                            _uniform_draw)
    if not low <= high:
        raise ValueError(f"uniform: low must be <= high (got low={low}, high={high})")
    given = out is not None
    out, d = _target("uniform", shape, dtype, ctx, out, "float32")
    _check_float("uniform", d)
    rng = _random.generator()
    v = rng.random(out.shape, dtype=np.float64 if d == np.float16 else d)
    return _fill(out, v * (high - low) + low, given)


def normal(loc=0.0, scale=1.0, shape=None, dtype=None, ctx=None, out=None):
    """Samples from N(loc, scale**2); shape (1,) by default.  NDArrays ``loc`` and
    ``scale`` draw per element, as ``uniform`` (MXNet's ``_sample_normal``)."""
    if isinstance(loc, NDArray) or isinstance(scale, NDArray):
        return _per_element("normal", ("loc", "scale"), loc, scale, shape, dtype, out,
                            _normal_draw)
    if not scale >= 0:
        raise ValueError(f"normal: scale must be >= 0 (got {scale})")
    given = out is not None
    out, d = _target("normal", shape, dtype, ctx, out, "float32")
    _check_float("normal", d)
    rng = _random.generator()
    v = rng.standard_normal(out.shape, dtype=np.float64 if d == np.float16 else d)
    return _fill(out, v * scale + loc, given)


def randint(low, high, shape=None, dtype=None, ctx=None, out=None):
    """Integers uniform on [low, high); int32 by default, as MXNet."""
    for n, v in (("low", low), ("high", high)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"randint: {n} must be an integer (got {v!r})")
    if not low < high:
        raise ValueError(f"randint: low must be < high (got low={low}, high={high})")
    given = out is not None
    out, d = _target("randint", shape, dtype, ctx, out, "int32")
    if d.kind not in "iu":
        raise TypeError(f"randint: dtype must be an integer type (got {d})")
    info = np.iinfo(d)
    if low < info.min or high - 1 > info.max:
        raise ValueError(f"randint: [low, high) = [{low}, {high}) does not fit {d}")
    return _fill(out, _random.generator().integers(low, high, out.shape, dtype=d), given)


__all__ = ["uniform", "normal", "randint"]
