"""Random arrays (MXNet's ``mx.nd.random``), drawn from :mod:`runtime.random`'s generator."""

import numpy as np

from runtime import random as _random
from runtime._ndarray import NDArray, as_dtype, empty, from_numpy
from runtime.ops._call import F

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


def uniform(low=0.0, high=1.0, shape=None, dtype=None, ctx=None, out=None):
    """Samples from the uniform distribution on [low, high); shape (1,) by default."""
    if not low <= high:
        raise ValueError(f"uniform: low must be <= high (got low={low}, high={high})")
    given = out is not None
    out, d = _target("uniform", shape, dtype, ctx, out, "float32")
    _check_float("uniform", d)
    rng = _random.generator()
    v = rng.random(out.shape, dtype=np.float64 if d == np.float16 else d)
    return _fill(out, v * (high - low) + low, given)


def normal(loc=0.0, scale=1.0, shape=None, dtype=None, ctx=None, out=None):
    """Samples from N(loc, scale**2); shape (1,) by default."""
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


def randn(*shape, loc=0.0, scale=1.0, dtype=None, ctx=None, out=None):
    """Samples from N(loc, scale**2) of the given shape (MXNet's ``randn(*shape,
    **kwargs)``): ``randn(2, 3)`` is ``normal(loc, scale, shape=(2, 3))``; shape (1,) when
    none is given."""
    return normal(loc, scale, shape=shape or None, dtype=dtype, ctx=ctx, out=out)


# -- distributions with parameters: numbers, or NDArrays of per-element parameters ---------------

def _param_values(name, params):
    """The parameters as NumPy arrays of one shape: (batch shape, [arrays]).  NDArray
    parameters must share a shape (MXNet's ``_sample_*``); numbers broadcast to it."""
    shapes = {p.shape for p in params.values() if isinstance(p, NDArray)}
    if len(shapes) > 1:
        raise ValueError(f"{name}: NDArray parameters must share one shape (got "
                         + ", ".join(f"{k} {v.shape}" for k, v in params.items()
                                     if isinstance(v, NDArray)) + ")")
    batch = shapes.pop() if shapes else ()
    values = {}
    for k, v in params.items():
        if isinstance(v, NDArray):
            values[k] = v.asnumpy().astype(np.float64)
        elif isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.number)):
            raise TypeError(f"{name}: {k} must be a number or an NDArray (got {v!r})")
        else:
            values[k] = np.float64(v)
    return batch, values


def _draw(name, params, rules, shape, dtype, ctx, out, sample):
    """Check ``params`` against ``rules`` ({name: (test, text)}), then fill an array of
    shape ``batch + shape`` (``batch``: the NDArray parameters' shape; shape (1,) when both
    are empty, as MXNet) with ``sample(rng, values, size)``; the default dtype is float32,
    or the NDArray parameters' dtype."""
    batch, values = _param_values(name, params)
    for k, (test, text) in rules.items():
        bad = ~test(values[k])
        if np.any(bad):
            got = float(values[k][bad].flat[0] if np.ndim(values[k]) else values[k])
            raise ValueError(f"{name}: {k} must be {text} (got {got!r})")
    shape = () if shape is None else ((shape,) if isinstance(shape, int) else tuple(shape))
    full = batch + shape
    default = next((p.dtype for p in params.values() if isinstance(p, NDArray)), "float32")
    given = out is not None
    out, d = _target(name, full or (1,), dtype, ctx, out, default)
    _check_float(name, d)
    if given and out.shape != (full or (1,)):
        raise ValueError(f"{name}: out must have shape {full or (1,)} (got {out.shape})")
    # parameters of batch shape broadcast over the trailing sample axes
    expand = {k: np.reshape(v, np.shape(v) + (1,) * len(shape)) for k, v in values.items()}
    v = sample(_random.generator(), expand, full or (1,))
    return _fill(out, np.asarray(v), given)


def _positive(v):
    return v > 0


def _nonnegative(v):
    return v >= 0


def exponential(scale=1.0, shape=None, dtype=None, ctx=None, out=None):
    """Samples from the exponential distribution with mean ``scale`` (``1 / lambda``).

    ``scale`` is a number or an NDArray of per-element scales (the result then has shape
    ``scale.shape + shape``, MXNet's ``_sample_exponential``)."""
    return _draw("exponential", {"scale": scale}, {"scale": (_positive, "> 0")}, shape,
                 dtype, ctx, out, lambda rng, p, size: rng.exponential(p["scale"], size))


def gamma(alpha=1.0, beta=1.0, shape=None, dtype=None, ctx=None, out=None):
    """Samples from the gamma distribution with shape ``alpha`` and scale ``beta`` (mean
    ``alpha * beta``); NDArray parameters as :func:`exponential`."""
    return _draw("gamma", {"alpha": alpha, "beta": beta},
                 {"alpha": (_positive, "> 0"), "beta": (_positive, "> 0")}, shape, dtype,
                 ctx, out, lambda rng, p, size: rng.gamma(p["alpha"], p["beta"], size))


def poisson(lam=1.0, shape=None, dtype=None, ctx=None, out=None):
    """Samples from the Poisson distribution with rate ``lam``, as floats (MXNet's dtype
    is float32 by default); NDArray parameters as :func:`exponential`."""
    return _draw("poisson", {"lam": lam}, {"lam": (_nonnegative, ">= 0")}, shape, dtype, ctx,
                 out, lambda rng, p, size: rng.poisson(p["lam"], size))


def negative_binomial(k=1, p=1.0, shape=None, dtype=None, ctx=None, out=None):
    """Samples from the negative binomial distribution: the failures before the ``k``-th
    success, each trial succeeding with probability ``p`` (mean ``k (1 - p) / p``), as
    floats; NDArray parameters as :func:`exponential`."""
    return _draw("negative_binomial", {"k": k, "p": p},
                 {"k": (_positive, "> 0"), "p": (lambda v: (v > 0) & (v <= 1), "in (0, 1]")},
                 shape, dtype, ctx, out,
                 lambda rng, q, size: rng.negative_binomial(q["k"], q["p"], size))


def shuffle(data, out=None):
    """A copy of ``data`` with its first axis randomly permuted (MXNet's ``shuffle``);
    ``out=`` may be ``data`` itself."""
    if not isinstance(data, NDArray):
        raise TypeError(f"shuffle: data must be an NDArray (got {type(data).__name__})")
    if data.stype != "default":
        raise TypeError(f"shuffle: data must be dense (got {data.stype})")
    if data.ndim == 0:
        raise ValueError("shuffle: data must have at least 1 dimension (got shape ())")
    perm = _random.generator().permutation(data.shape[0])
    values = data.asnumpy()[perm]
    if out is None:
        return from_numpy(values, data.ctx)
    if not isinstance(out, NDArray) or out.shape != data.shape or out.dtype != data.dtype:
        raise ValueError(f"shuffle: out must be an NDArray of shape {data.shape} and dtype "
                         f"{data.dtype}")
    out[...] = values
    return out


def multinomial(data, shape=None, get_prob=False, out=None, dtype="int32"):
    """Samples category indices from the distributions in the last axis of ``data``
    (MXNet's ``sample_multinomial``).

    Parameters
    ----------
    data : NDArray
        Probabilities, shape ``(..., k)``; each row must be non-negative and sum to 1
        (within 1e-5 relative, as rows of float32 probabilities do).
    shape : int or tuple, optional
        Samples per distribution: the result has shape ``data.shape[:-1] + shape`` ((1,)
        for 1-D data without ``shape``, as MXNet).
    get_prob : bool
        Also return the log-probability of each sample, ``log(data[..., sample])``, made of
        registry operators so that it is differentiable (REINFORCE-style gradients reach
        ``data`` when it is recorded).
    dtype : str
        The samples' dtype (int32 by default, as MXNet).
    """
    if not isinstance(data, NDArray):
        raise TypeError(f"multinomial: data must be an NDArray (got {type(data).__name__})")
    if data.ndim < 1 or data.shape[-1] < 1:
        raise ValueError(f"multinomial: data must have a non-empty last axis (got shape "
                         f"{data.shape})")
    d = as_dtype(dtype)
    if d.kind not in "iu":
        raise TypeError(f"multinomial: dtype must be an integer type (got {d})")
    shape = () if shape is None else ((shape,) if isinstance(shape, int) else tuple(shape))
    p = data.asnumpy().astype(np.float64)
    total = p.sum(axis=-1)
    if np.any(p < 0) or not np.all(np.isfinite(p)) or np.any(np.abs(total - 1) > 1e-5):
        raise ValueError("multinomial: every row of data must be non-negative and sum to 1 "
                         f"(got row sums in [{total.min()}, {total.max()}])")
    rows = p.reshape(-1, p.shape[-1])
    n = int(np.prod(shape)) if shape else 1
    cdf = np.cumsum(rows, axis=1)
    cdf /= cdf[:, -1:]
    u = _random.generator().random((rows.shape[0], n))
    picks = np.minimum((u[:, :, None] >= cdf[:, None, :]).sum(axis=2), p.shape[-1] - 1)
    samples = picks.reshape(data.shape[:-1] + shape or (1,))   # 1-D data, no shape: (1,)
    result = from_numpy(samples.astype(d), data.ctx)
    if out is not None:
        out[...] = result
        result = out
    if not get_prob:
        return result
    return result, _log_prob(data, result, shape)


def _log_prob(data, samples, shape):
    """``log(data[..., samples])`` from registry operators (recorded with ``data``)."""
    probs = data
    if shape:
        lead = data.shape[:-1]
        probs = F.reshape(data, shape=lead + (1,) * len(shape) + data.shape[-1:])
        probs = F.broadcast_to(probs, shape=lead + shape + data.shape[-1:])
    return F.log(F.pick(probs, samples.astype(data.dtype), axis=-1))


__all__ = ["uniform", "normal", "randint", "randn", "exponential", "gamma", "poisson",
           "negative_binomial", "shuffle", "multinomial"]
